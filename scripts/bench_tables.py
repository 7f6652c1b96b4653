#!/usr/bin/env python3
"""Markdown tables for BENCHMARKS.md from one device run:
`lucent bench --json` output and the JSON lines of .device/cufft_bench.py (and, if given, of
.device/rl_reference.py). Usage: bench_tables.py bench.json cufft.json [rl_ref.json]"""
import json, sys

bench = json.load(open(sys.argv[1]))
rows = bench.get("details", bench)["rows"]  # (reports before the one --json shape: top level)
# Both suites list the same (shape, axes) cases in the same order; a shape can appear twice
# (4096×4096 as a batch of lines and as a 2D transform), so cases are matched by position.
cufft = []
for line in open(sys.argv[2]):
    try:
        d = json.loads(line)
    except ValueError:
        continue
    if d.get("case") == "cufft":
        cufft.append(d)

def shape(r):
    return "×".join(map(str, r["shape"]))

print("### Primitives (bandwidth against the vec4 copy kernel of the same run)\n")
print("| case | MiB | ms | GB/s | % of copy |\n|---|---:|---:|---:|---:|")
for r in rows:
    if not r["case"].startswith(("fft", "conv", "rl", "filter")):
        print(f"| {r['case']} | {r['mib']} | {r['ms']:.4f} | {r['gb_per_s']:.0f} | {r['percent_of_copy']:.1f}% |")

print("\n### FFT against cuFFT (CuPy), same GPU, same run\n")
print("| shape | lucent c2c ms | cuFFT c2c ms | ratio | lucent rfftn+irfftn ms | cuFFT ms | ratio | c2c GB/s (% copy) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
fft_rows = [r for r in rows if r["case"].startswith("fft")]
cases_in_order = []
for r in fft_rows:
    if r["case"] == "fft_c2c":
        cases_in_order.append({})
    cases_in_order[-1][r["case"]] = r
for i, cases in enumerate(cases_in_order):
    s = tuple(cases["fft_c2c"]["shape"])
    ref = cufft[i] if i < len(cufft) else {}
    assert not ref or tuple(ref["shape"]) == s, (s, ref)
    c, rt = cases.get("fft_c2c"), cases.get("fft_real_round_trip")
    def ratio(ours, theirs):
        return f"{ours / theirs:.2f}" if ours and theirs else "–"
    cm = c["ms"] if c else None
    rm = rt["ms"] if rt else None
    axes = ",".join(map(str, ref.get("axes", [])))
    print(f"| {'×'.join(map(str, s))} (axes {axes}) | {cm or '–':.4} | {ref.get('c2c_ms', '–')} | {ratio(cm, ref.get('c2c_ms'))} | "
          f"{rm or '–':.4} | {ref.get('real_round_trip_ms', '–')} | {ratio(rm, ref.get('real_round_trip_ms'))} | "
          f"{c['gb_per_s']:.0f} ({c['percent_of_copy']:.0f}%) |" if c else f"| {'×'.join(map(str, s))} | – |")

others = [r for r in rows if r["case"].startswith(("conv", "rl", "filter"))]
if others:
    print("\n### Convolution and Richardson-Lucy\n")
    print("| case | shape | ms |\n|---|---|---:|")
    for r in others:
        print(f"| {r['case']} | {shape(r)} | {r['ms']:.4f} |")
if len(sys.argv) > 3:
    print("\n### Reference pipelines (CuPy/cuFFT), same run\n")
    for line in open(sys.argv[3]):
        try:
            print("-", json.dumps(json.loads(line)))
        except ValueError:
            pass
