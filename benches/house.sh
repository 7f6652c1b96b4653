#!/bin/bash
# One device call: `lucent bench` on the headline families (FFT, RL, convolution, interpolation,
# registration, tomography) with the binary before the restructuring of the house and after it,
# interleaved per family, on the same GPU (BENCHMARKS.md, "The house").
# Carries: .gl (the Vulkan loader), .device/before/lucent, .device/after/lucent.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $OUT/gpu.txt
date -u | tee $OUT/date.txt
i=0
for args in "--fft-shape 512x512x512 --filter fft" "--filter rl" "--filter convolve_fft_same" "--filter interp_shift" "--filter register_phase" "--filter tomo_fbp"; do
    i=$((i + 1))
    for which in before after; do
        start=$(date +%s)
        timeout 40 .device/$which/lucent bench $args --json --quiet > $OUT/$which$i.json 2>> $OUT/$which.err
        echo "$which [$args]: rc=$? in $(( $(date +%s) - start )) s"
    done
done
python3 - <<'PY'
import json, os
out = os.environ["OUT"]
def rows(name):
    try:
        d = json.load(open(f"{out}/{name}.json"))
    except Exception:
        return {}
    rs = d["details"]["rows"] if "details" in d else d["rows"]
    return {(r["case"], "x".join(map(str, r["shape"]))): r["ms"] for r in rs}
print(f"{'case':<34} {'shape':<16} {'before ms':>10} {'after ms':>10} {'after/before':>12}")
for i in range(1, 7):
    b, a = rows(f"before{i}"), rows(f"after{i}")
    for key in b:
        if key in a:
            print(f"{key[0]:<34} {key[1]:<16} {b[key]:>10.4f} {a[key]:>10.4f} {a[key] / b[key]:>12.3f}")
PY
