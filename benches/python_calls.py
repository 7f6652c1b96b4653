"""The Python package's call overhead and lucent.restoration.richardson_lucy against cuCIM's.

    python benches/python_calls.py            # lucent through Python (and the native call under it)
    python benches/python_calls.py --cucim    # and cuCIM's richardson_lucy on the same GPU

The cases are those of `cargo bench --bench timings -- api_calls` (the Rust one-call API): run
both in the same call for the overhead. Host arrays in and out for lucent, median ms of repeated
calls after two warm-ups. cuCIM is timed both ways: device arrays in and out with CUDA events (as
benches' cucim_reference.py), and host to host (upload, deconvolve, download). Prints one JSON
object per case."""

import json
import sys
import time

import numpy as np

import lucent
from lucent import _lucent


def median_ms(fn, reps):
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


rng = np.random.default_rng(0)
ctx = lucent.context()
row("adapter", name=ctx.info()["adapter"]["name"])
small = (rng.random((64, 64)) + 1j * rng.random((64, 64))).astype(np.complex64)
row("fftn 64x64 c64", python_ms=median_ms(lambda: lucent.fft.fftn(small), 200),
    native_ms=median_ms(lambda: _lucent.fftn(ctx, small, [0, 1], "backward"), 200))
image = rng.random((256, 256), dtype=np.float32)
row("gaussian_filter 256x256 sigma 2", python_ms=median_ms(lambda: lucent.ndimage.gaussian_filter(image, 2.0), 100),
    native_ms=median_ms(lambda: _lucent.gaussian_filter(ctx, image, [2.0, 2.0], "reflect", 0.0), 100))
a, k = rng.random((512, 512), dtype=np.float32), rng.random((15, 15), dtype=np.float32)
row("fftconvolve 512x512 * 15x15 same", python_ms=median_ms(lambda: lucent.signal.fftconvolve(a, k, "same"), 50),
    native_ms=median_ms(lambda: _lucent.convolve(ctx, a, k, "same", "fft", False), 50))
volume = rng.random((256, 256, 256), dtype=np.float32)
psf = np.full((31, 31, 31), 1 / 31 ** 3, np.float32)
lucent_rl = median_ms(lambda: lucent.restoration.richardson_lucy(volume, psf, 10), 5)
row("richardson_lucy 256^3 psf 31^3 10 it", python_ms=lucent_rl)

if "--cucim" in sys.argv:
    import cupy as cp
    from cucim.skimage.restoration import richardson_lucy

    dv, dp = cp.asarray(volume), cp.asarray(psf)
    s, e = cp.cuda.Event(), cp.cuda.Event()

    def device_ms():
        s.record()
        richardson_lucy(dv, dp, num_iter=10)
        e.record()
        e.synchronize()
        return cp.cuda.get_elapsed_time(s, e)

    device_ms()
    device_ms()
    on_device = float(np.median([device_ms() for _ in range(5)]))
    host = median_ms(lambda: richardson_lucy(cp.asarray(volume), cp.asarray(psf), num_iter=10).get(), 5)
    ours = lucent.restoration.richardson_lucy(volume, psf, 10, clip=False)
    theirs = richardson_lucy(dv, dp, num_iter=10, clip=False).get()
    err = float(np.linalg.norm(ours - theirs) / np.linalg.norm(theirs))
    row("cucim richardson_lucy 256^3 psf 31^3 10 it", device_ms=on_device, host_to_host_ms=host, lucent_ms=lucent_rl,
        relative_l2_lucent_vs_cucim=err)
