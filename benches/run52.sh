#!/usr/bin/env bash
# BENCHMARKS run 52 (issue 45, 2026-11-30): scan, MLEM, the paper-size denoising host to host and file to file. Carries .device/new/lucent (release CLI) and .gl.
set -uo pipefail
R=$PWD; OUT=${OUT:-/tmp/out}; mkdir -p $OUT; X=$R/.device/new/lucent; S=/tmp/res; mkdir -p $S
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LUCENT_ADAPTER=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
save() { tar czf $OUT/r.tgz -C $S .; }
timeout 60 $X bench --filter scan > $S/scan.txt 2>&1; echo "scan rc=$?"; grep -v "^lucent" $S/scan.txt | tail -8
for i in 1 2; do timeout 60 $X bench --filter tomo_em100_logpolar --max-mib 1 --min-mib 1 2>&1 | grep "^tomo_em100" | head -1; done
save
LUCENT_TRACE=1 timeout 200 $X bench --filter denoise_paper > $S/paper.txt 2>&1; echo "paper rc=$?"; grep "denoise" $S/paper.txt | grep -v "^lucent.trace gpu" | head -6
save
D=/tmp/p; mkdir -p $D; cd $D
t=$(date +%s%N); $X phantom --series moving-edge --size 20,445,512,512 -o clean.npy --noisy noisy.npy --sigma 0.25 > /dev/null 2>$S/phantom.err; echo "phantom rc=$? $(( ($(date +%s%N) - t) / 1000000 )) ms"; rm -f clean.npy
sync; t=$(date +%s%N); $X denoise noisy.npy -o out.npy --dims 4 --json > $S/f2f.json 2> $S/f2f.err; echo "denoise rc=$? wall $(( ($(date +%s%N) - t) / 1000000 )) ms"
python3 -c "
import json; d=json.load(open('$S/f2f.json')); print(json.dumps(d['ms'])); print(json.dumps(d.get('details')))"
rm -f out.npy; sync
t=$(date +%s%N); $X denoise noisy.npy -o out.npy --dims 4 --json > $S/f2f2.json 2> $S/f2f2.err; echo "denoise again rc=$? wall $(( ($(date +%s%N) - t) / 1000000 )) ms"
python3 -c "
import json; d=json.load(open('$S/f2f2.json')); print(json.dumps(d['ms'])); print(json.dumps(d.get('details')))"
save; date -u
