"""Side-by-side table of a benches/fft_ab.sh run: python3 benches/fft_ab_table.py DIR (r.tgz unpacked).
Each row: case, shape, then each variant's ms (% of its copy roof) and the first's time over
its own (above 1: faster than the first)."""
import glob, json, os, sys

d = sys.argv[1]
runs = sorted(int(os.path.basename(f)[:-5]) for f in glob.glob(os.path.join(d, "*.json")))
names = [open(os.path.join(d, f"{i}.name")).read().strip() for i in runs]
reports = [json.load(open(os.path.join(d, f"{i}.json"))) for i in runs]
rows = [r.get("details", r)["rows"] for r in reports]  # (reports before the one --json shape: top level)
print("| case | shape | " + " | ".join(names) + " |")
print("|---|---|" + "---:|" * len(names))
for same in zip(*rows):
    first = same[0]
    assert all((r["case"], r["shape"]) == (first["case"], first["shape"]) for r in same)
    cells = [f"{r['ms']:.4f} ({r['percent_of_copy']:.0f}%)" + ("" if k == 0 else f" {first['ms'] / r['ms']:.2f}×") for k, r in enumerate(same)]
    print(f"| {first['case']} | {'×'.join(map(str, first['shape']))} | " + " | ".join(cells) + " |")
