"""Where a Python one-call's time goes: each call three times with the library's trace on.

    LUCENT_TRACE=1 LUCENT_PROFILE=1 python benches/python_trace.py [name ...] 2> trace.txt

Each call is preceded by a `--- name call i` line and followed by `=== name ms` on stderr, the
library's trace lines (uploads, compiles, waits, read-backs, per-kernel GPU times) between.
numpy's own copies of the same sizes close the list: this host's cost of fresh pages."""
import numpy as np, lucent, time, sys
from lucent import _lucent
rng = np.random.default_rng(0)
v = rng.random((256, 256, 256), dtype=np.float32); mask = v > 0.3
img = rng.random((2048, 2048), dtype=np.float32); t = img[1000:1064, 900:964].copy()
small = v[:128, :128, :128].copy()
ctx = lucent.context()
cases = [("match_template", lambda: lucent.feature.match_template(img, t, pad_input=True)),
         ("label", lambda: lucent.ndimage.label(mask)),
         ("label native", lambda: _lucent.label(ctx, mask, lucent.ndimage.generate_binary_structure(3, 1))),
         ("edt", lambda: lucent.ndimage.distance_transform_edt(mask)),
         ("zoom", lambda: lucent.ndimage.zoom(small, 2.0)),
         ("median", lambda: lucent.ndimage.median_filter(v, 3)),
         ("gaussian", lambda: lucent.ndimage.gaussian_filter(v, 2.0)),
         ("mask astype f4", lambda: mask.astype(np.float32)),
         ("v astype f8", lambda: v.astype(np.float64)),
         ("v copy", lambda: v.copy())]
only = sys.argv[1:]
for name, f in cases:
    if only and name not in only:
        continue
    for i in range(3):
        print(f"--- {name} call {i}", file=sys.stderr, flush=True)
        a = time.perf_counter(); f(); print(f"=== {name} {1e3*(time.perf_counter()-a):.2f} ms", file=sys.stderr, flush=True)
