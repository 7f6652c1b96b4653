#!/usr/bin/env bash
# Issue 21 on the GPU machine: lucent bench --filter tomo of each build named (.device/NAME/lucent)
# and ASTRA 2.5's timings (../shared/bench/astra_reference.py, as .device/astra_reference.py) in one
# call, then benches/tomo_astra.py (geometry and FBP accuracy against ASTRA) with the last build.
# ASTRA comes from ../shared/bench/astra_cuda13.sh DIR, packed as .device/astra.tar.xz.
set -uo pipefail
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p /tmp/astra && tar -xJf .device/astra.tar.xz -C /tmp/astra
export PYTHONPATH=/tmp/astra LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib
nvidia-smi -L; date -u
for b in "$@"; do echo "== lucent $b"; timeout 400 .device/$b/lucent bench --filter tomo 2>&1 | grep -v "^case\|^device"; done
echo "== ASTRA"; timeout 400 python3 .device/astra_reference.py
last=${@: -1}
echo "== geometry and accuracy"; timeout 300 python3 benches/tomo_astra.py .device/$last/lucent
