#!/usr/bin/env bash
# Issue 19: lucent bench --filter interp of each build named (.device/NAME/lucent) and the
# interpolation part of ../shared/bench/cucim_reference.py (its first 37 lines, copied to
# .device/cucim_interp.py) in one call on the GPU machine.
set -uo pipefail
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi -L; date -u
for b in "$@"; do echo "== lucent $b"; timeout 200 .device/$b/lucent bench --filter interp 2>&1 | tail -40; done
echo "== cupyx"; timeout 200 python3 .device/cucim_interp.py
