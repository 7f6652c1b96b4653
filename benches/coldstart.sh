#!/usr/bin/env bash
# Cold start and many files (BENCHMARKS.md run 10): two builds of lucent carried as
# .device/before/lucent and .device/after/lucent with the Vulkan loader's .debs in .gl/, run on the
# GPU machine from the repository root; then the FFT and convolution suites of both.
set -uo pipefail
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u
R=$PWD; B=$R/.device/before/lucent; A=$R/.device/after/lucent
D=/tmp/cs; mkdir -p $D; cd $D
python3 - <<'PY'
import numpy as np
rng = np.random.default_rng(1)
np.save('v.npy', rng.random((256, 256, 256), dtype=np.float32))
k = rng.random((31, 31, 31), dtype=np.float32); np.save('k.npy', k / k.sum())
for i in range(8):
    np.save(f'f{i}.npy', rng.random((256, 256, 256), dtype=np.float32))
np.save('img.npy', rng.random((64, 256, 256), dtype=np.float32) + 0.1)
np.save('psf.npy', rng.random((9, 15, 15), dtype=np.float32))
PY
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
run() { local label=$1; shift; local t=$(date +%s%N); "$@" > out.json 2> err.txt; echo "== $label: wall $(ms $t) ms rc=$?"; grep -o '"ms":{[^}]*}' out.json; grep -o '"setup[_a-z]*":[0-9.]*' out.json | head -2; }
for v in before after; do
  rm -rf ~/.cache/nvidia ~/.nv /tmp/lc
  X=$R/.device/$v/lucent
  for i in 1 2 3; do run "$v convolve 256^3 * 31^3 run $i" env LUCENT_CACHE_DIR=/tmp/lc $X convolve v.npy k.npy -o o.npy --mode same --json; done
  for i in 1 2; do run "$v deconvolve 64x256x256, 30 it, run $i" env LUCENT_CACHE_DIR=/tmp/lc $X deconvolve img.npy --psf psf.npy -o r.npy -n 30 --json; done
  for i in 1 2; do run "$v rfftn 256^3 run $i" env LUCENT_CACHE_DIR=/tmp/lc $X fft v.npy -o s.npy --real --json; done
  t=$(date +%s%N); for i in 0 1 2 3 4 5 6 7; do LUCENT_CACHE_DIR=/tmp/lc $X convolve f$i.npy k.npy -o o$i.npy --mode same --quiet; done; echo "== $v 8 files, 8 processes: wall $(ms $t) ms"
done
mkdir -p od; t=$(date +%s%N); LUCENT_CACHE_DIR=/tmp/lc $A convolve f0.npy f1.npy f2.npy f3.npy f4.npy f5.npy f6.npy f7.npy k.npy -o od/ --mode same --json | grep -o '"ms":{[^}]*}'; echo "== after 8 files, one process: wall $(ms $t) ms"
rm -rf ~/.cache/nvidia ~/.nv; run "after convolve, driver cache off, lucent cache warm" env __GL_SHADER_DISK_CACHE=0 LUCENT_CACHE_DIR=/tmp/lc $A convolve v.npy k.npy -o o.npy --mode same --json
run "after convolve, both caches off" env __GL_SHADER_DISK_CACHE=0 LUCENT_CACHE_DIR= $A convolve v.npy k.npy -o o.npy --mode same --json
cd $R
for v in before after; do
  echo "== bench $v"; timeout 150 .device/$v/lucent bench --json --filter fft > $OUT/fft_$v.json 2>/dev/null; echo rc=$?
  timeout 75 .device/$v/lucent bench --json --filter convolve > $OUT/conv_$v.json 2>/dev/null; echo rc=$?
done
