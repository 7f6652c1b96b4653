#!/bin/bash
# One device call: the later merges (one broadcast-multiply kernel in FBP, the split within the
# device memory budget, the masked ratio) against the binary before the house, per family
# (BENCHMARKS.md, "The house"). Carries: .gl, .device/before/lucent, .device/after/lucent.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
date -u
for args in "--filter tomo_fbp" "--filter convolve_fft_same_k31" "--filter register_phase_correlation_u1" "--filter rl_zero"; do
  for which in before after; do
    tag=$(echo $args | tr -dc 'a-z0-9'); timeout 60 .device/$which/lucent bench $args --json --quiet > $OUT/$which-$tag.json 2>/dev/null; echo "$which $args rc=$?"
  done
done
python3 - <<'PY'
import json, os, glob
out = os.environ["OUT"]
res = {}
for f in sorted(glob.glob(out + "/*.json")):
    which = os.path.basename(f).split("-")[0]
    try:
        d = json.load(open(f))
    except Exception:
        continue
    for r in (d["details"]["rows"] if "details" in d else d["rows"]):
        res.setdefault((r["case"], "x".join(map(str, r["shape"]))), {})[which] = r["ms"]
for k, v in res.items():
    if "before" in v and "after" in v:
        print(f"{k[0]:<34} {k[1]:<14} {v['before']:>10.4f} {v['after']:>10.4f} {v['after'] / v['before']:>7.3f}")
PY
