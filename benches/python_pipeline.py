"""A four-step pipeline from Python, host arrays against device-resident arrays against cuCIM:
register (phase_cross_correlation, upsample 10) → shift (order 3) → deconvolve (Richardson-Lucy,
10 iterations, PSF 15³) → gaussian_filter (sigma 1), on a 256³ volume.

    python benches/python_pipeline.py [--cucim] [--size N]

- lucent host: numpy arrays into every call and out of it (five round trips).
- lucent resident: lucent.asarray once, every step on lucent.Array, the result left on the
  device (a sum read back ends the timing, so the GPU work is done); and with .get() at the end.
- cuCIM: cucim.skimage (registration, restoration) and cupyx.scipy.ndimage on CuPy device
  arrays, wall time with the device synchronised (the same sum read back).

Median wall ms of 5 runs after two warm-ups; the results' relative differences are printed too.
Prints one JSON object per case."""

import json
import sys
import time

import numpy as np

import lucent

N = int(sys.argv[sys.argv.index("--size") + 1]) if "--size" in sys.argv else 256


def median_ms(fn, reps=5):
    fn()
    fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t) * 1e3)
    return float(np.median(ts))


def row(case, **kw):
    print(json.dumps(dict(case=case, **{k: float(f"{v:.4g}") if isinstance(v, float) else v for k, v in kw.items()})), flush=True)


def rel(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


rng = np.random.default_rng(0)
# A specimen: smoothed noise, positive, and the same shifted by a sub-voxel amount.
base = rng.random((N, N, N), dtype=np.float32)
z = np.fft.rfftfreq(N)[None, None, :] ** 2 + np.fft.fftfreq(N)[:, None, None] ** 2 + np.fft.fftfreq(N)[None, :, None] ** 2
spectrum = np.fft.rfftn(base) * np.exp(-z / (2 * 0.05 ** 2))
reference = np.fft.irfftn(spectrum, s=base.shape, axes=(0, 1, 2)).astype(np.float32)
reference -= reference.min()
moving = np.fft.irfftn(spectrum * np.exp(-2j * np.pi * (np.fft.fftfreq(N)[:, None, None] * 3.4 + np.fft.fftfreq(N)[None, :, None] * -5.2
                                                           + np.fft.rfftfreq(N)[None, None, :] * 1.7)), s=base.shape, axes=(0, 1, 2)).astype(np.float32)
moving -= moving.min()
g = np.exp(-0.5 * (np.arange(15) - 7.0) ** 2 / 2.0 ** 2)
psf = (g[:, None, None] * g[None, :, None] * g[None, None, :]).astype(np.float32)
psf /= psf.sum()
ctx = lucent.context()
row("adapter", name=ctx.info()["adapter"]["name"], size=N)


def pipeline(ref, mov, nd, reg, rst):
    shift, _, _ = reg.phase_cross_correlation(ref, mov, upsample_factor=10)
    shift = [float(s) for s in shift]  # cuCIM may return a device array
    aligned = nd.shift(mov, shift, order=3)
    restored = rst.richardson_lucy(aligned, psf, 10)
    return nd.gaussian_filter(restored, 1.0), shift


host = lambda: pipeline(reference, moving, lucent.ndimage, lucent.registration, lucent.restoration)
dref, dmov = lucent.asarray(reference), lucent.asarray(moving)
resident = lambda: pipeline(dref, dmov, lucent.ndimage, lucent.registration, lucent.restoration)
h, shift_h = host()
r, shift_r = resident()
row("shifts found", host=list(shift_h), resident=list(shift_r), true=[-3.4, 5.2, -1.7])
row(f"pipeline {N}^3 lucent host arrays", ms=median_ms(lambda: host()[0]))
row(f"pipeline {N}^3 lucent resident (result on the device)", ms=median_ms(lambda: resident()[0].sum()),
    rel_to_host=rel(r.get(), h))
row(f"pipeline {N}^3 lucent resident (from host arrays, .get() at the end)",
    ms=median_ms(lambda: pipeline(lucent.asarray(reference), lucent.asarray(moving), lucent.ndimage, lucent.registration, lucent.restoration)[0].get()))

if "--cucim" in sys.argv:
    import cupy as cp
    from cupyx.scipy import ndimage as cnd
    from cucim.skimage import registration as creg, restoration as crst
    cref, cmov = cp.asarray(reference), cp.asarray(moving)

    class CuRst:
        @staticmethod
        def richardson_lucy(x, p, n):
            return crst.richardson_lucy(x, cp.asarray(p), num_iter=n)

    device = lambda: pipeline(cref, cmov, cnd, creg, CuRst)
    c, shift_c = device()
    row("shifts found by cuCIM", shifts=[float(v) for v in shift_c])
    sync = lambda: float(device()[0].sum())
    row(f"pipeline {N}^3 cuCIM/cupyx device arrays", ms=median_ms(sync), lucent_rel_to_cucim=rel(r.get(), cp.asnumpy(c)))
    row(f"pipeline {N}^3 cuCIM/cupyx host arrays (upload, .get() at the end)",
        ms=median_ms(lambda: cp.asnumpy(pipeline(cp.asarray(reference), cp.asarray(moving), cnd, creg, CuRst)[0])))
