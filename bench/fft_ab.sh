#!/bin/bash
# A/B of FFT builds or knobs on given shapes, each axis alone (fft_axis rows), one device call.
# Usage: SHAPES="243x375x100 81x2557x81" bench/fft_ab.sh VARIANT...
# A variant is BIN=path and/or NAME=VALUE settings joined by commas (X=0: the default build).
# Results: $OUT/r.tgz holding SHAPE.N.json (N: the variant's position) and N.name.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
R=/tmp/r; mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt; date -u | tee $R/date.txt
for shape in ${SHAPES:-243x375x100}; do
  i=0
  for v in "$@"; do
    i=$((i+1)); bin=.device/lucent; envs=""
    for kv in $(echo $v | tr ',' ' '); do case $kv in BIN=*) bin=${kv#BIN=};; *) envs="$envs $kv";; esac; done
    env $envs timeout 60 $bin bench --json --filter fft_axis --fft-shape $shape > $R/$shape.$i.json 2> $R/$shape.$i.err
    echo "$v" > $R/$i.name
  done
  echo "$shape $(date -u +%T)"; tar czf $OUT/r.tgz -C $R .
done
