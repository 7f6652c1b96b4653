#!/usr/bin/env bash
# Issue 24: `lucent convolve --mode same` of a 31³ Gaussian PSF over 1024³ and 2048×2048×1024
# f32 volumes, in core on one GPU, in slabs of rows on one GPU (1024³: a device budget that
# refuses the in-core run) and over every GPU, for each binary named (.device/<name>/lucent).
# Prints one JSON line per run (compute = host array to host array) with the slabs per GPU;
# the traced runs' stderr goes to $OUT. With RL=1, then Richardson-Lucy (20 iterations) of the
# same volumes whole on one GPU, and under a device budget (RL_BUDGET_1024, RL_BUDGET_BIG) in
# tiles on one GPU and in slabs over every GPU, each compared with the whole run. Run from the
# repository root with the Vulkan loader in .gl. Usage: benches/multi_gpu_stream.sh "base new" [big=1]
set -uo pipefail
BINS=${1:-new}; BIG=${2:-1}
R=$PWD; OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi --query-gpu=name,memory.total,pcie.link.gen.max,pcie.link.width.max --format=csv; nproc; free -g | head -2; date -u
cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null
D=/tmp/mgs; mkdir -p $D; cd $D
python3 - $BIG <<'PY'
import sys, numpy as np
rng = np.random.default_rng(1)
shapes = {'v1024': (1024, 1024, 1024)}
if sys.argv[1] == '1': shapes['vbig'] = (2048, 2048, 1024)
for name, shape in shapes.items():
    v = np.lib.format.open_memmap(f'{name}.npy', mode='w+', dtype=np.float32, shape=shape)
    for z in range(0, shape[0], 64):
        v[z:z + 64] = rng.random((min(64, shape[0] - z),) + shape[1:], dtype=np.float32) + 0.1
    v.flush(); del v
i = np.indices((31, 31, 31)) - 15
g = np.exp(-0.5 * (i ** 2).sum(0) / 3.0 ** 2).astype(np.float32)
np.save('psf.npy', g / g.sum())
PY
date -u
run() {  # label, binary name, input, trace(0/1), convolve args... (env via the caller)
  local label=$1 bin=$2 input=$3 trace=$4; shift 4
  LUCENT_TRACE=$trace $R/.device/$bin/lucent convolve $input.npy psf.npy -o o.npy --mode same --json "$@" > a.json 2> a.err
  local rc=$?; rm -f o.npy
  [ "$trace" = 1 ] && cp a.err "$OUT/trace_${bin}_${label// /_}.txt"
  [ $rc = 0 ] || { echo "$label $bin: failed"; tail -3 a.err; return; }
  python3 - "$label" "$bin" a.json <<'PY'
import json, sys
d = json.load(open(sys.argv[3])); x = d.get('details') or {}; sl = x.get('slabs') or {}
by = {}
for p in sl.get('per_slab') or []: by.setdefault(p['worker'], []).append(p)
print(json.dumps(dict(run=sys.argv[1], bin=sys.argv[2], compute_ms=round(d['ms']['compute'], 1), total_ms=round(d['ms']['total'], 1),
      chunks=x.get('chunks'), slabs=sl.get('slabs'), adapters=sl.get('adapters'),
      per_gpu={w: dict(slabs=len(v), ms=[round(p['ms']) for p in v]) for w, v in by.items()})), flush=True)
PY
}
[ "${RL_ONLY:-0}" = 1 ] || for b in $BINS; do
  for rep in 1 2; do run "1024 in core GPU0 r$rep" $b v1024 0 --adapters 0; done
  for rep in 1 2; do LUCENT_DEVICE_MEMORY_BYTES=16000000000 run "1024 slabs GPU0 r$rep" $b v1024 0 --adapters 0; done
  for rep in 1 2; do run "1024 slabs all r$rep" $b v1024 0 --adapters all; done
done
[ "${RL_ONLY:-0}" = 1 ] || for b in $BINS; do [ $b = base ] || run "1024 slabs all traced" $b v1024 1 --adapters all; done
for piece in ${PIECES:-}; do  # other staging pieces (bytes), new binaries only
  for b in $BINS; do
    [ $b = base ] && continue
    LUCENT_STREAM_PIECE_BYTES=$piece LUCENT_DEVICE_MEMORY_BYTES=16000000000 run "1024 slabs GPU0 piece $piece" $b v1024 0 --adapters 0
    LUCENT_STREAM_PIECE_BYTES=$piece run "1024 slabs all piece $piece" $b v1024 0 --adapters all
    [ "$BIG" = 1 ] && LUCENT_STREAM_PIECE_BYTES=$piece run "big slabs all piece $piece" $b vbig 0 --adapters all
  done
done
if [ "$BIG" = 1 ] && [ "${RL_ONLY:-0}" != 1 ]; then
  for b in $BINS; do
    run "big in core GPU0" $b vbig 0 --adapters 0
    [ $b = base ] || LUCENT_DEVICE_MEMORY_BYTES=32000000000 run "big slabs GPU0" $b vbig 0 --adapters 0
    run "big slabs all" $b vbig 0 --adapters all
  done
  for b in $BINS; do [ $b = base ] || run "big slabs all traced" $b vbig 1 --adapters all; done
fi
rl() {  # label, binary name, input, deconvolve args...
  local label=$1 bin=$2 input=$3; shift 3
  $R/.device/$bin/lucent deconvolve $input.npy --psf psf.npy -o "$label.npy" -n 20 --init 0.5 --json "$@" > r.json 2> r.err || { echo "$label: failed"; tail -3 r.err; return; }
  python3 - "$label" r.json <<'PY'
import json, sys
d = json.load(open(sys.argv[2])); x = d.get('details') or {}
kind, rep = x.get('path'), x
keep = {k: rep.get(k) for k in ('tiles', 'window', 'owned', 'halo_rows', 'setup_ms', 'step_ms', 'exchange_ms', 'ms_per_iteration', 'download_ms', 'total_ms', 'chunks') if k in rep}
print(json.dumps(dict(run=sys.argv[1], path=kind, compute_ms=round(d['ms']['compute']), **keep)), flush=True)
PY
}
compare() {  # a.npy b.npy
  python3 -c "import numpy as np, sys; a=np.load(sys.argv[1], mmap_mode='r'); b=np.load(sys.argv[2], mmap_mode='r'); m=max(float(abs(a[i:i+64]-b[i:i+64]).max()) for i in range(0, a.shape[0], 64)); print(sys.argv[2], 'vs', sys.argv[1], 'max |diff| / max', m / float(max(float(a[i:i+64].max()) for i in range(0, a.shape[0], 64))))" "$1" "$2"
}
if [ "${RL:-0}" = 1 ]; then
  b=${BINS##* }
  for v in v1024 $([ "$BIG" = 1 ] && echo vbig); do
    budget=$([ $v = v1024 ] && echo ${RL_BUDGET_1024:-16000000000} || echo ${RL_BUDGET_BIG:-64000000000})
    [ "${RL_WHOLE:-1}" = 1 ] && rl ${v}_whole $b $v --adapters 0
    LUCENT_DEVICE_MEMORY_BYTES=$budget rl ${v}_tiles $b $v --adapters 0
    LUCENT_DEVICE_MEMORY_BYTES=$budget rl ${v}_slabs $b $v --adapters all
    [ "${RL_WHOLE:-1}" = 1 ] && { compare ${v}_whole.npy ${v}_slabs.npy; compare ${v}_whole.npy ${v}_tiles.npy; }
    [ "${RL_WHOLE:-1}" = 1 ] || compare ${v}_tiles.npy ${v}_slabs.npy
    rm -f ${v}_*.npy
  done
fi
date -u
