#!/bin/bash
# Final FFT figures of one GPU (BENCHMARKS.md runs 7 and 8): FFT test binaries, the FFT suite (per-pass times on stderr,
# fft_axis rows), cuFFT on the same shapes; with SWEEP=1 the full accuracy sweep after.
# Carries: .device/lucent, .device/t/{fft,fft_loops} (cargo test --release --no-run), .device/t/timings (the bench binary of
# benches/timings.rs: cargo bench --bench timings --no-run), .device/cufft_bench.py.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PYTHONUNBUFFERED=1
R=/tmp/r; mkdir -p $R
save() { tar czf $OUT/r.tgz -C $R .; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $R/gpu.txt
date -u | tee $R/date.txt
for t in fft_loops fft; do timeout 100 .device/t/$t --skip cli_ > $R/test_$t.txt 2>&1; echo "test $t rc=$? $(date -u +%T)"; grep -E "test result|FAILED" $R/test_$t.txt | tail -4; done; save
LUCENT_BENCH_PASSES=1 timeout 150 .device/lucent bench --json --filter fft > $R/fft.json 2> $R/fft.err; echo "fft rc=$? $(date -u +%T)"; save
timeout 60 python3 .device/cufft_bench.py > $R/cufft.json 2>&1; echo "cufft rc=$? $(date -u +%T)"; save
if [ -n "$SWEEP" ]; then timeout 420 .device/t/timings fft_sweep > $R/sweep.txt 2>&1; echo "sweep rc=$? $(date -u +%T)"; tail -3 $R/sweep.txt; save; fi
