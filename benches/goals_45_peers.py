"""Peers of issue 45's single-GPU rows in the same call: cuFFT c2c (CuPy), cupyx prefilter /
shift / affine order 3 at 512³, cuCIM phase_cross_correlation 512³ (CUDA events, median)."""
import json, sys
import numpy as np
import cupy as cp
from cupyx.scipy import ndimage as cnd

def bench(fn, reps=10, warm=2):
    for _ in range(warm):
        fn()
    cp.cuda.Device().synchronize()
    s, e = cp.cuda.Event(), cp.cuda.Event(); ts = []
    for _ in range(reps):
        s.record(); fn(); e.record(); e.synchronize(); ts.append(cp.cuda.get_elapsed_time(s, e))
    return float(np.median(ts))

def row(case, shape, ms):
    print(json.dumps(dict(case=case, shape=list(shape), ms=round(ms, 4))), flush=True)

rng = cp.random.default_rng(0)
for n in (128, 256, 512):
    xc = rng.random((n, n, n), dtype=cp.float32).astype(cp.complex64)
    row("cufft fftn c2c fwd", xc.shape, bench(lambda: cp.fft.fftn(xc), reps=20))
    del xc
shape = (512, 512, 512)
x = rng.random(shape, dtype=cp.float32)
row("cupyx spline_filter order3 mirror", shape, bench(lambda: cnd.spline_filter(x, 3, output=cp.float32, mode="mirror")))
row("cupyx shift order3 (1.3,-2.7,0.4)", shape, bench(lambda: cnd.shift(x, (1.3, -2.7, 0.4), order=3, mode="mirror")))
m = cp.asarray(np.array([[0.98, 0.17, 0.0], [-0.17, 0.98, 0.05], [0.0, -0.04, 1.01]]), cp.float32)
row("cupyx affine_transform order3", shape, bench(lambda: cnd.affine_transform(x, m, offset=(2.0, -3.0, 1.5), order=3, mode="constant")))
row("cupy cumsum axis0 (256 MiB)", (64, 1024, 1024), bench(lambda: cp.cumsum(x.reshape(-1)[: 64 << 20].reshape(64, 1024, 1024), axis=0)))
try:
    from cucim.skimage.registration import phase_cross_correlation
except Exception as err:
    print(json.dumps(dict(case="cucim", error=str(err)[:200]))); sys.exit(0)
ref = x; mov = cp.roll(ref, (3, -5, 7), axis=(0, 1, 2)); R = cp.fft.fftn(ref)
for up in (1, 10):
    row(f"cucim phase_cross_correlation upsample{up}", shape, bench(lambda: phase_cross_correlation(ref, mov, upsample_factor=up)))
row("cucim phase_cross_correlation space fourier", shape, bench(lambda: phase_cross_correlation(R, cp.fft.fftn(mov), space="fourier")))
