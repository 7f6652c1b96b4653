#!/usr/bin/env bash
# Issue 45 on 2 GPUs (BENCHMARKS run 51, call 1): RL slabs under equal and unequal budgets, the convolution on one and two GPUs. Carries .device/new/lucent and .gl.
set -uo pipefail
R=$PWD; OUT=${OUT:-/tmp/out}; mkdir -p $OUT; X=$R/.device/new/lucent
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader; nproc; date -u
D=/dev/shm/mg; mkdir -p $D; cd $D
python3 - <<'PY'
import numpy as np
rng = np.random.default_rng(1)
shape = (1024, 1024, 1024)
v = np.lib.format.open_memmap('v1024.npy', mode='w+', dtype=np.float32, shape=shape)
for z in range(0, shape[0], 64):
    v[z:z + 64] = rng.random((64,) + shape[1:], dtype=np.float32) + 0.1
v.flush(); del v
i = np.indices((31, 31, 31)) - 15
g = np.exp(-0.5 * (i ** 2).sum(0) / 3.0 ** 2).astype(np.float32)
np.save('psf.npy', g / g.sum())
PY
date -u
rl() {  # label, "ENV=.. ENV=..", args...
  local label=$1 envs=$2; shift 2
  env $envs $X deconvolve v1024.npy --psf psf.npy -o "r_$label.npy" -n 20 --init 0.5 --json "$@" > r.json 2> "$OUT/rl_$label.err" || { echo "$label: failed"; tail -3 "$OUT/rl_$label.err"; return; }
  python3 - "$label" r.json <<'PY'
import json, sys
d = json.load(open(sys.argv[2])); x = d.get('details') or {}
keep = {k: x.get(k) for k in ('path', 'tiles', 'owned', 'held', 'adapters', 'setup_ms', 'step_ms', 'exchange_ms', 'ms_per_iteration', 'download_ms', 'total_ms', 'chunks') if k in x}
print(json.dumps(dict(run=sys.argv[1], ms=d['ms'], **keep)), flush=True)
PY
}
cv() {  # label, "ENV=..", args...
  local label=$1 envs=$2; shift 2
  env $envs $X convolve v1024.npy psf.npy -o o.npy --mode same --json "$@" > a.json 2> "$OUT/cv_$label.err" || { echo "$label: failed"; tail -3 "$OUT/cv_$label.err"; return; }
  rm -f o.npy
  python3 - "$label" a.json <<'PY'
import json, sys
d = json.load(open(sys.argv[2])); x = d.get('details') or {}; sl = x.get('slabs') or {}
by = {}
for p in sl.get('per_slab') or []: by.setdefault(p['worker'], []).append(p)
print(json.dumps(dict(run=sys.argv[1], compute_ms=round(d['ms']['compute'], 1), ms=d['ms'], slabs=sl.get('slabs'), adapters=sl.get('adapters'),
      per_gpu={w: dict(slabs=len(v), ms=[round(p['ms']) for p in v]) for w, v in by.items()})), flush=True)
PY
}
rl whole "LUCENT_TRACE=0" --adapters 0
rl slabs_equal "LUCENT_TRACE=1 LUCENT_DEVICE_MEMORY_BYTES=16000000000" --adapters all
rl slabs_unequal "LUCENT_DEVICE_MEMORY_BYTES=16000000000,9000000000" --adapters all
rl tiles_one "LUCENT_DEVICE_MEMORY_BYTES=16000000000" --adapters 0
python3 -c "
import numpy as np
w = np.load('r_whole.npy', mmap_mode='r')
for n in ('slabs_equal', 'slabs_unequal', 'tiles_one'):
    try:
        a = np.load(f'r_{n}.npy', mmap_mode='r'); m = 0.0
        for z in range(0, 1024, 128): m = max(m, float(np.abs(a[z:z+128] - w[z:z+128]).max()))
        print(n, 'max abs diff to whole', m, 'max', float(w[::8, ::8, ::8].max()))
    except Exception as e: print(n, e)
"
rm -f r_*.npy
date -u
for rep in 1 2; do cv one_r$rep "LUCENT_TRACE=0" --adapters 0; cv two_r$rep "LUCENT_TRACE=0" --adapters all; done
cv two_traced "LUCENT_TRACE=1" --adapters all
cv two_unequal "LUCENT_DEVICE_MEMORY_BYTES=,4000000000" --adapters all
date -u
