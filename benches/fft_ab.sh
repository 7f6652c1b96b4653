#!/bin/bash
# A/B of FFT builds or knobs on given shapes (by default each axis alone: fft_axis rows), one
# device call, one process per variant running every shape (one copy roof, ~1 s a shape).
# Usage: SHAPES="243x375x100 81x2557x81" [FILTER=fft] [AXES=0,1] benches/fft_ab.sh VARIANT...
# A variant is BIN=path and/or NAME=VALUE settings joined by commas (X=0: the default build).
# Results: $OUT/r.tgz holding N.json, N.err and N.name (N: the variant's position);
# benches/fft_ab_table.py DIR prints them side by side.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
R=/tmp/r; mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt; date -u | tee $R/date.txt
shapes=$(echo ${SHAPES:-243x375x100} | tr ' ' ',')
i=0
for v in "$@"; do
  i=$((i+1)); bin=.device/lucent; envs=""
  for kv in $(echo $v | tr ',' ' '); do case $kv in BIN=*) bin=${kv#BIN=};; *) envs="$envs $kv";; esac; done
  env $envs timeout 300 $bin bench --json --filter ${FILTER:-fft_axis} ${AXES:+--fft-axes $AXES} --fft-shape $shapes > $R/$i.json 2> $R/$i.err
  rc=$?; echo "$v" > $R/$i.name; echo "$v rc=$rc $(date -u +%T)"; tar czf $OUT/r.tgz -C $R .
done
