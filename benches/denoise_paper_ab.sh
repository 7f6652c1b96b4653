#!/usr/bin/env bash
# BENCHMARKS run 52 calls 8-9: the paper-size denoising bench by two release binaries carried in .device/new/ (lucent_old: before the change, lucent: after), old / new / old / new in one call. Carries .device/new (stripped binaries: two fit the 64 MiB carry) and .gl.
set -uo pipefail
R=$PWD; OUT=${OUT:-/tmp/out}; mkdir -p $OUT; S=/tmp/res; mkdir -p $S
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LUCENT_ADAPTER=0
nvidia-smi --query-gpu=name --format=csv,noheader; date -u
for b in lucent_old lucent lucent_old lucent; do
  timeout 200 .device/new/$b bench --filter denoise_paper 2>&1 | grep "^denoise_paper_4d_auto " | sed "s/^/$b: /"
done
date -u
