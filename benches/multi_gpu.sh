#!/usr/bin/env bash
# Issue 24 on a machine with several GPUs: `lucent convolve --mode same` of a 31³ Gaussian PSF
# over 256³ and 1024³ f32 volumes: in core on one GPU; in slabs of rows on one GPU (a device
# memory budget of about half the in-core run's) and over every GPU (`--adapters all`); split in
# frequency into P parts on one GPU and on every GPU. Prints each run's stages and its slab or
# split report per worker. Run from the
# repository root with the release binary at .device/after/lucent and the Vulkan loader in .gl.
# Usage: benches/multi_gpu.sh [edges="256 1024"] [parts="8"]
set -uo pipefail
EDGES=${1:-256 1024}; PARTS=${2:-8}
R=$PWD; X=$R/.device/after/lucent
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi -L; date -u
$X info 2>&1 | grep -iE "adapter|name" | head -8
D=/tmp/mg; mkdir -p $D; cd $D
python3 - $EDGES <<'PY'
import sys, numpy as np
rng = np.random.default_rng(1)
for e in map(int, sys.argv[1:]):
    v = np.empty((e, e, e), np.float32)
    for z in range(0, e, 64):
        v[z:z + 64] = rng.random((min(64, e - z), e, e), dtype=np.float32) + 0.1
    np.save(f'v{e}.npy', v)
i = np.indices((31, 31, 31)) - 15
g = np.exp(-0.5 * (i ** 2).sum(0) / 3.0 ** 2).astype(np.float32)
np.save('psf.npy', g / g.sum())
PY
show() {  # label, json file
  python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[2])); x = d.get('details') or {}; s = x.get('split') or {}; sl = x.get('slabs') or {}
per = s.get('per_part') or sl.get('per_slab') or []
by = {}
for p in per: by.setdefault(p['worker'], []).append(p)
out = dict(label=sys.argv[1], compute_ms=round(d['ms']['compute'], 1), total_ms=round(d['ms']['total'], 1), chunks=x.get('chunks'),
           parts=s.get('parts'), computed=s.get('computed_parts'), in_flight=s.get('in_flight'), prepare_ms=s.get('prepare_ms'),
           recombine_ms=s.get('recombine_ms'), split_total_ms=s.get('total_ms'), slabs=sl.get('slabs'), slabs_total_ms=sl.get('total_ms'),
           adapters=s.get('adapters') or sl.get('adapters'),
           per_worker={w: dict(parts=len(v), ms=round(sum(p['ms'] for p in v), 1), gpu_ms=round(sum(p.get('gpu_ms') or 0 for p in v), 1)) for w, v in by.items()})
print(json.dumps(out), flush=True)
PY
}
for e in $EDGES; do
  # A device budget of about half the in-core run's: slabs on one GPU.
  half=$(( e * e * e * 27 / 2 ))
  for rep in 1 2; do
    $X convolve v$e.npy psf.npy -o o.npy --mode same --json > a.json 2> a.err && show "$e in core, 1 GPU, run $rep" a.json || tail -3 a.err
    LUCENT_DEVICE_MEMORY_BYTES=$half $X convolve v$e.npy psf.npy -o o.npy --mode same --json > a.json 2> a.err && show "$e slabs, GPU 0 (budget $half), run $rep" a.json || tail -3 a.err
    $X convolve v$e.npy psf.npy -o o.npy --mode same --adapters all --json > a.json 2> a.err && show "$e slabs, all GPUs, run $rep" a.json || tail -3 a.err
  done
  for p in $PARTS; do
    $X convolve v$e.npy psf.npy -o o.npy --mode same --adapters 0 --parts $p --json > a.json 2> a.err && show "$e split P=$p, GPU 0" a.json || tail -3 a.err
    $X convolve v$e.npy psf.npy -o o.npy --mode same --adapters all --parts $p --json > a.json 2> a.err && show "$e split P=$p, all GPUs" a.json || tail -3 a.err
  done
  rm -f o.npy
done
