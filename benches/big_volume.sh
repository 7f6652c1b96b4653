#!/usr/bin/env bash
# Issue 18 on the GPU machine: Richardson-Lucy of a 1024³ f32 volume (4 GiB, beyond one
# binding) with a 31³ Gaussian PSF, 20 iterations from 0.5, lucent file to file (--json: read,
# compute = host to host, write; chunks; GPU ms per iteration) against cuCIM in core, same GPU,
# same call; `lucent convolve --mode same` and `lucent filter --gaussian 2` against cupyx; the
# disk's write speed with and without fsync; and lucent's RL iteration at 256³ (the 64× baseline). Run from the repository
# root with the release binary at .device/after/lucent and the wheels in .whl.
# Usage: benches/big_volume.sh [edge=1024] [iterations=20]; SHAPE=Z,Y,X for another shape.
set -uo pipefail
EDGE=${1:-1024}; N=${2:-20}; SHAPE=${SHAPE:-$EDGE,$EDGE,$EDGE}
R=$PWD; X=$R/.device/after/lucent
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
nvidia-smi -L; date -u
D=/tmp/bv; mkdir -p $D; cd $D
[ -f vol.npy ] && [ "$(python3 -c 'import numpy as np; print(",".join(map(str, np.load("vol.npy", mmap_mode="r").shape)))')" = "$SHAPE" ] || python3 - $SHAPE <<'PY'
import sys, numpy as np
shape = tuple(int(d) for d in sys.argv[1].split(','))
rng = np.random.default_rng(1)
v = np.empty(shape, np.float32)
for z in range(0, shape[0], 64):
    v[z:z + 64] = rng.random((min(64, shape[0] - z),) + shape[1:], dtype=np.float32) + 0.1
np.save('vol.npy', v)
i = np.indices((31, 31, 31)) - 15
g = np.exp(-0.5 * (i ** 2).sum(0) / 3.0 ** 2).astype(np.float32)
np.save('psf.npy', g / g.sum())
PY
ls -la $D
for run in $(seq 1 ${RUNS:-2}); do
  t=$(date +%s%N)
  $X deconvolve vol.npy --psf psf.npy -o r.npy -n $N --init 0.5 --json > rl$run.json 2> rl$run.err
  echo "== lucent deconvolve $SHAPE run $run: rc=$? wall $(( ($(date +%s%N) - t) / 1000000 )) ms"
  cat rl$run.json | python3 -c "import json,sys; d=json.load(sys.stdin); x=d['details']; print(json.dumps(dict(ms=d['ms'], host_peak_gb=(d.get('host_peak_bytes') or 0)/1e9, chunks=x.get('chunks'), path=x.get('path'), setup_ms=x.get('setup_ms'), iterate_ms=x.get('iterate_ms'), gpu_ms_per_iteration=x.get('gpu_ms_per_iteration'), download_ms=x.get('download_ms'), peak_gib=x.get('peak_bytes',0)/2**30, padded=(x.get('geometry') or {}).get('padded'))))" || tail -5 rl$run.err
  grep VmHWM /proc/self/status > /dev/null
done
[ "${TRACE:-1}" = 1 ] && LUCENT_TRACE=1 /usr/bin/time -v $X deconvolve vol.npy --psf psf.npy -o r2.npy -n 2 --init 0.5 --quiet 2> time.txt; grep -E "Maximum resident|Elapsed|lucent.trace (rl|write_buffer|wait|compile:|freed)" time.txt
[ "${PEER:-1}" = 1 ] || rm -f r.npy r2.npy  # room on the disk for the next output
for run in $(seq 1 ${RUNS:-2}); do
  $X convolve vol.npy psf.npy -o c.npy --mode same --json > cv$run.json 2> cv$run.err
  echo "== lucent convolve same $SHAPE ⊛ 31³ run $run: rc=$?"
  python3 -c "import json,sys; d=json.load(open('cv$run.json')); print(json.dumps(dict(ms=d['ms'], details=d.get('details'))))" || tail -3 cv$run.err
done
[ "${PEER:-1}" = 1 ] || rm -f c.npy
$X filter vol.npy -o g.npy --gaussian 2 --json > gf.json 2> gf.err
echo "== lucent filter --gaussian 2 $SHAPE: rc=$?"
python3 -c "import json,sys; d=json.load(open('gf.json')); print(json.dumps(dict(ms=d['ms'], host_peak_gb=(d.get('host_peak_bytes') or 0)/1e9, details=d.get('details'))))" || tail -3 gf.err
[ "${PEER:-1}" = 1 ] || rm -f g.npy
# The disk's own limits: 4 GiB written through the page cache, without and with fsync.
for sync in "" conv=fsync; do echo "== dd 4 GiB $sync: $(dd if=/dev/zero of=dd.bin bs=16M count=256 $sync 2>&1 | tail -1)"; rm -f dd.bin; done
$X bench --filter io --json 2>/dev/null | python3 -c "import json,sys; [print(json.dumps(r)) for r in json.load(sys.stdin)['details']['rows']]"
[ "${PEER:-1}" = 1 ] || exit 0
PYTHONUNBUFFERED=1 python3 - <<'PY'
import json, time, numpy as np, cupy as cp
from cupyx.scipy.signal import fftconvolve
v, k = np.load('vol.npy'), np.load('psf.npy')
fftconvolve(cp.asarray(v[:64, :64, :64]), cp.asarray(k), mode='same'); cp.cuda.Device().synchronize()
t0 = time.perf_counter(); g, h = cp.asarray(v), cp.asarray(k); cp.cuda.Device().synchronize(); t1 = time.perf_counter()
r = fftconvolve(g, h, mode='same'); cp.cuda.Device().synchronize(); t2 = time.perf_counter()
out = cp.asnumpy(r); t3 = time.perf_counter()
ours = np.load('c.npy')
print(json.dumps(dict(case="peer convolve same", peer="cupyx.scipy.signal.fftconvolve", upload_s=round(t1 - t0, 3), gpu_s=round(t2 - t1, 3), download_s=round(t3 - t2, 3), host_to_host_s=round(t3 - t0, 3), max_rel_diff_vs_lucent=float(np.max(np.abs(ours - out)) / np.max(np.abs(out))))), flush=True)
del g, h, r; cp.get_default_memory_pool().free_all_blocks()
PY
PYTHONUNBUFFERED=1 python3 - <<'PY'
import json, time, numpy as np, cupy as cp
from cupyx.scipy.ndimage import gaussian_filter
v = np.load('vol.npy')
gaussian_filter(cp.asarray(v[:64, :64, :64]), 2.0, mode='reflect'); cp.cuda.Device().synchronize()
t0 = time.perf_counter(); g = cp.asarray(v); cp.cuda.Device().synchronize(); t1 = time.perf_counter()
r = gaussian_filter(g, 2.0, mode='reflect'); cp.cuda.Device().synchronize(); t2 = time.perf_counter()
out = cp.asnumpy(r); t3 = time.perf_counter()
ours = np.load('g.npy')
print(json.dumps(dict(case="peer gaussian_filter 2", peer="cupyx.scipy.ndimage.gaussian_filter", upload_s=round(t1 - t0, 3), gpu_s=round(t2 - t1, 3), download_s=round(t3 - t2, 3), host_to_host_s=round(t3 - t0, 3), max_rel_diff_vs_lucent=float(np.max(np.abs(ours - out)) / np.max(np.abs(out))))), flush=True)
del g, r; cp.get_default_memory_pool().free_all_blocks()
PY
PYTHONUNBUFFERED=1 python3 $R/benches/big_volume_cucim.py vol.npy psf.npy $N r.npy
cd $R
$X bench --filter rl_zero --json 2>/dev/null | grep -E '256, ?256, ?256|"shape":\[256,256,256\]' | head -3
cp $D/*.json $OUT/ 2>/dev/null; true
