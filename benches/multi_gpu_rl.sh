#!/usr/bin/env bash
# Issue 24 on a machine with several GPUs: tiled Richardson-Lucy (20 iterations, 31³ Gaussian
# PSF) on one GPU and spread over every GPU. A 1024³ volume with a device memory budget that
# sends it to tiles (LUCENT_DEVICE_MEMORY_BYTES), then, with BIG=1, a 1000×2048×2048 volume that
# does not fit one 80 GB GPU in core (both GPUs; ONE=1 also runs it on one GPU). Run from the
# repository root with the release binary at .device/after/lucent (or X) and the Vulkan loader in .gl.
set -uo pipefail
R=$PWD; X=${X:-$R/.device/after/lucent}
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi -L; date -u
D=/tmp/mgrl; mkdir -p $D; cd $D
make() {  # name, shape
  python3 - "$1" "$2" <<'PY'
import sys, numpy as np
shape = tuple(int(d) for d in sys.argv[2].split(','))
rng = np.random.default_rng(1)
v = np.empty(shape, np.float32)
for z in range(0, shape[0], 64):
    v[z:z + 64] = rng.random((min(64, shape[0] - z),) + shape[1:], dtype=np.float32) + 0.1
np.save(sys.argv[1], v)
i = np.indices((31, 31, 31)) - 15
g = np.exp(-0.5 * (i ** 2).sum(0) / 3.0 ** 2).astype(np.float32)
np.save('psf.npy', g / g.sum())
PY
}
show() {  # label, json
  python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[2])); x = d.get('details') or {}
per = {}
for w, ms in zip(x.get('tile_worker') or [], x.get('tile_ms') or []): per.setdefault(w, []).append(round(ms))
print(json.dumps(dict(label=sys.argv[1], ms=d['ms'], path=x.get('path'), tiles=x.get('tiles'), window=x.get('window'), adapters=x.get('adapters'), tile_ms_per_gpu=per, host_peak_gb=(d.get('host_peak_bytes') or 0) / 1e9)), flush=True)
PY
}
make v1024.npy 1024,1024,1024
for budget in 8000000000; do
  for a in 0 all; do
    LUCENT_DEVICE_MEMORY_BYTES=$budget $X deconvolve v1024.npy --psf psf.npy -o r.npy -n 20 --init 0.5 --adapters $a --json > t.json 2> t.err && show "1024³ tiles (budget $budget), adapters $a" t.json || tail -3 t.err
  done
done
cp r.npy r_all.npy
LUCENT_DEVICE_MEMORY_BYTES=8000000000 $X deconvolve v1024.npy --psf psf.npy -o r.npy -n 20 --init 0.5 --adapters 0 --json > /dev/null 2>&1
python3 -c "import numpy as np; a=np.load('r.npy'); b=np.load('r_all.npy'); print('one GPU vs all, max rel diff', float(abs(a-b).max()/abs(a).max()))"
rm -f v1024.npy r.npy r_all.npy
[ "${BIG:-0}" = 1 ] || exit 0
make vbig.npy 1000,2048,2048
for a in all $([ "${ONE:-0}" = 1 ] && echo 0); do
  $X deconvolve vbig.npy --psf psf.npy -o r.npy -n 20 --init 0.5 --adapters $a --json > b.json 2> b.err && show "1000×2048² adapters $a" b.json || tail -3 b.err
done
