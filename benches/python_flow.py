"""Optical flow from Python: lucent.registration.optical_flow_tvl1 / optical_flow_ilk against
cuCIM's (CuPy, the same GPU) and scikit-image's (CPU), the same pairs: a smooth random image and
the same under a shift and a smooth deformation, 2D N² and 3D V³. Wall ms, median of 3 after a
warm-up: numpy in and out for lucent and scikit-image; cuCIM host to host (cupy.asarray in,
.get() out) and on device arrays (synchronised); the largest difference from scikit-image's
field where scikit-image ran.

    python benches/python_flow.py [--sizes 512,1024] [--volume 128] [--skimage-max 512]
"""
import json, sys, time
import numpy as np
import scipy.ndimage as ndi
import lucent

arg = lambda name, default: sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default
SIZES = [int(s) for s in arg("--sizes", "512,1024").split(",")]
V = int(arg("--volume", "128"))
SK_MAX = int(arg("--skimage-max", "512"))
try:
    import cupy as cp
    from cucim.skimage import registration as cureg
except ImportError:
    cp = cureg = None
try:
    from skimage import registration as skreg
except ImportError:
    skreg = None


def med(fn, n=3):
    fn()
    ts = []
    for _ in range(n):
        t = time.perf_counter(); fn(); ts.append((time.perf_counter() - t) * 1e3)
    return float(np.median(ts))


def row(case, **kw):
    print(json.dumps(dict(case=case, **{k: float(f"{v:.4g}") if isinstance(v, float) else v for k, v in kw.items()})), flush=True)


def pair(shape, rng):
    ref = ndi.gaussian_filter(rng.random(shape), 2).astype("f4")
    g = np.meshgrid(*[np.arange(n, dtype=float) for n in shape], indexing="ij")
    bend = [s + 0.8 * np.sin(2 * np.pi * x / n) for s, x, n in zip((1.3, -0.7, 0.4), g, shape)]
    mov = ndi.map_coordinates(ref, [x - b for x, b in zip(g, bend)], order=3, mode="nearest").astype("f4")
    return ref, mov


rng = np.random.default_rng(0)
cases = [(n, n) for n in SIZES] + [(V, V, V)]
for shape in cases:
    ref, mov = pair(shape, rng)
    for method in ("tvl1", "ilk"):
        ours = getattr(lucent.registration, f"optical_flow_{method}")
        kw = dict(lucent_ms=med(lambda: ours(ref, mov)))
        if skreg is not None and max(shape) <= SK_MAX:
            theirs = getattr(skreg, f"optical_flow_{method}")
            want = theirs(ref, mov)
            kw.update(skimage_ms=med(lambda: theirs(ref, mov), 1), max_diff_vs_skimage=float(np.abs(ours(ref, mov) - want).max()))
        if cureg is not None:
            cu = getattr(cureg, f"optical_flow_{method}")
            kw["cucim_host_ms"] = med(lambda: cu(cp.asarray(ref), cp.asarray(mov)).get())
            r, m = cp.asarray(ref), cp.asarray(mov)
            def device():
                cu(r, m); cp.cuda.Device().synchronize()
            kw["cucim_device_ms"] = med(device)
            kw["ratio_vs_cucim_host"] = kw["lucent_ms"] / kw["cucim_host_ms"]
        row(f"optical_flow_{method} {'x'.join(map(str, shape))}", **kw)
