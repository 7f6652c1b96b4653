#!/bin/bash
# One device call: info, the whole bench suite, cuFFT references, the FFT accuracy sweep.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv,noheader | tee $OUT/gpu.txt
.device/lucent info > $OUT/info.txt 2>&1
date -u > $OUT/date.txt
.device/lucent bench --json --quiet > $OUT/bench.json 2> $OUT/bench.err; echo "bench rc=$?"
python3 .device/cufft_bench.py > $OUT/cufft.json 2>&1; echo "cufft rc=$?"
python3 .device/rl_reference.py > $OUT/rl_ref.json 2>&1; echo "rl ref rc=$?"
# .device/timings is the bench binary of benches/timings.rs (cargo bench --bench timings --no-run)
timeout 200 .device/timings fft_sweep > $OUT/sweep.txt 2>&1; echo "sweep rc=$?"
tail -15 $OUT/sweep.txt
python3 - <<'PY'
import json, os
d = json.load(open(os.environ["OUT"] + "/bench.json"))
for r in d["details"]["rows"]:
    print("%-22s %-16s %6d MiB %9.4f ms %8.0f GB/s %5.1f%%" % (r["case"], "x".join(map(str, r["shape"])), r["mib"], r["ms"], r["gb_per_s"], r["percent_of_copy"]))
PY
