#!/usr/bin/env bash
# Issue 45 (BENCHMARKS run 51, call 2): RL slabs exchange, cold start, the single-GPU goal rows and their peers (benches/goals_45_peers.py). Carries .device/new/lucent, .gl, .whl (cucim-cu13, lazy-loader).
set -uo pipefail
R=$PWD; OUT=${OUT:-/tmp/out}; mkdir -p $OUT; X=$R/.device/new/lucent; S=/tmp/res; mkdir -p $S
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
save() { tar czf $OUT/r.tgz -C $S .; }
pip install -q --no-deps --target /tmp/cu .whl/*.whl > /dev/null 2>&1; export PYTHONPATH=/tmp/cu
D=/dev/shm/f; mkdir -p $D; cd $D
python3 - <<'PY'
import numpy as np
rng = np.random.default_rng(1)
v = np.lib.format.open_memmap('v1024.npy', mode='w+', dtype=np.float32, shape=(1024, 1024, 1024))
for z in range(0, 1024, 64):
    v[z:z + 64] = rng.random((64, 1024, 1024), dtype=np.float32) + 0.1
v.flush(); del v
i = np.indices((31, 31, 31)) - 15
g = np.exp(-0.5 * (i ** 2).sum(0) / 3.0 ** 2).astype(np.float32)
np.save('psf.npy', g / g.sum())
np.save('v.npy', rng.random((256, 256, 256), dtype=np.float32))
k = rng.random((31, 31, 31), dtype=np.float32); np.save('k.npy', k / k.sum())
PY
LUCENT_TRACE=1 LUCENT_DEVICE_MEMORY_BYTES=16000000000 timeout 60 $X deconvolve v1024.npy --psf psf.npy -o r.npy -n 20 --init 0.5 --json --adapters all > $S/rl_slabs.json 2> $S/rl_slabs.err; echo "rl slabs rc=$?"
python3 -c "
import json; d=json.load(open('$S/rl_slabs.json')); x=d['details']
print(json.dumps(dict(ms=d['ms'], **{k: x.get(k) for k in ('owned','setup_ms','step_ms','exchange_ms','ms_per_iteration','download_ms','total_ms')})))"
rm -f r.npy v1024.npy; save; date -u
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
for i in 1 2 3; do t=$(date +%s%N); LUCENT_TRACE=$([ $i = 3 ] && echo 1 || echo 0) LUCENT_CACHE_DIR=/tmp/lc $X convolve v.npy k.npy -o o.npy --mode same --json --adapter 0 > $S/cold$i.json 2> $S/cold$i.err; echo "cold $i: wall $(ms $t) ms $(grep -o '"ms":{[^}]*}' $S/cold$i.json)"; done
save; cd $R
export LUCENT_ADAPTER=0
timeout 40 $X bench --json --filter scan > $S/scan.json 2> $S/scan.err; echo "scan rc=$?"; save
timeout 60 $X bench --json --fft-shape 128x128x128,256x256x256,512x512x512 > $S/fft.json 2> $S/fft.err; echo "fft rc=$?"; save
timeout 60 $X bench --json --filter interp > $S/interp.json 2> $S/interp.err; echo "interp rc=$?"; save
timeout 60 $X bench --json --filter register > $S/register.json 2> $S/register.err; echo "register rc=$?"; save
timeout 60 python3 benches/goals_45_peers.py > $S/peers.json 2> $S/peers.err; echo "peers rc=$?"; cat $S/peers.json; tail -2 $S/peers.err; save
timeout 70 $X bench --json --filter tomo_em > $S/tomo.json 2> $S/tomo.err; echo "tomo rc=$?"; save
date -u
