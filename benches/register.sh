#!/usr/bin/env bash
# Issue 20: lucent bench --filter register of each build named (.device/NAME/lucent), the
# registration rows of ../shared/bench/cucim_reference.py (its first 23 lines and lines 38-57,
# as .device/cucim_register.py; cuCIM wheels from .whl/ installed --no-deps), the hand-fused
# CuPy phase correlation of ../shared/bench/cufft_reference.py (lines 1-24 and 52-61, as
# .device/cufft_poc.py), and stripe-wise AO-OCT registration written with cuCIM
# (benches/aooct_cucim.py) on a 512³ pair from the last build's `lucent phantom --aooct`, in one
# call on the GPU machine.
set -uo pipefail
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
pip install -q --no-deps --target /tmp/cucim .whl/*.whl 2>&1 | tail -1
nvidia-smi -L; date -u
for b in "$@"; do echo "== lucent $b"; timeout 400 .device/$b/lucent bench --filter register 2>&1 | tail -14; done
echo "== cuCIM"; PYTHONPATH=/tmp/cucim timeout 300 python3 .device/cucim_register.py
echo "== CuPy fused"; timeout 200 python3 .device/cufft_poc.py
last=${@: -1}
echo "== AO-OCT 512³ pair ($last phantom), lucent register-volume, then cuCIM"
mkdir -p /tmp/aooct && .device/$last/lucent phantom --aooct --size 512,512,512 --seed 7 -o /tmp/aooct/ref.npy --moving /tmp/aooct/mov.npy --truth /tmp/aooct/truth.csv
.device/$last/lucent register-volume /tmp/aooct/ref.npy /tmp/aooct/mov.npy -o /tmp/aooct/shifts.csv --json | python3 -c "import json,sys; d=json.load(sys.stdin); print({k: d['details']['volumes'][0][k] for k in ('ok','spike','interpolated','ms')}, 'total', d['ms']['total'])"
python3 -c "
import numpy as np
t=np.loadtxt('/tmp/aooct/truth.csv',delimiter=',',skiprows=1)[:,2:5]; s=np.loadtxt('/tmp/aooct/shifts.csv',delimiter=',',skiprows=1,usecols=(1,2,3))
print('lucent CLI: B-scans within 1 voxel', int((np.abs(s-t).max(1)<=1).sum()), 'of', len(t))"
PYTHONPATH=/tmp/cucim timeout 300 python3 benches/aooct_cucim.py /tmp/aooct/ref.npy /tmp/aooct/mov.npy /tmp/aooct/truth.csv
