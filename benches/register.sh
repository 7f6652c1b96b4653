#!/usr/bin/env bash
# Issue 20: lucent bench --filter register of each build named (.device/NAME/lucent), the
# registration rows of ../shared/bench/cucim_reference.py (its first 22 lines and lines 38-53,
# as .device/cucim_register.py; cuCIM wheels from .whl/ installed --no-deps) and the hand-fused
# CuPy phase correlation of ../shared/bench/cufft_reference.py (lines 1-24 and 52-61, as
# .device/cufft_poc.py), in one call on the GPU machine.
set -uo pipefail
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
pip install -q --no-deps --target /tmp/cucim .whl/*.whl 2>&1 | tail -1
nvidia-smi -L; date -u
for b in "$@"; do echo "== lucent $b"; timeout 300 .device/$b/lucent bench --filter register 2>&1 | tail -12; done
echo "== cuCIM"; PYTHONPATH=/tmp/cucim timeout 300 python3 .device/cucim_register.py
echo "== CuPy fused"; timeout 200 python3 .device/cufft_poc.py
