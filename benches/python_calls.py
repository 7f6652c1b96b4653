"""The Python package's call overhead and lucent.restoration.richardson_lucy against cuCIM's.

    python benches/python_calls.py            # lucent through Python (and the native call under it)
    python benches/python_calls.py --cucim    # and cuCIM's richardson_lucy on the same GPU
    python benches/python_calls.py --families # one call per family against CuPy/cupyx/cuCIM
    python benches/python_calls.py --resident # separable filters on device arrays against cupyx

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


def overhead():
    """The call overhead: Python against the native call under it."""
    global volume, psf, lucent_rl
    row("adapter", name=ctx.info()["adapter"]["name"])
    small = (rng.random((64, 64)) + 1j * rng.random((64, 64))).astype(np.complex64)
    row("fftn 64x64 c64", python_ms=median_ms(lambda: lucent.fft.fftn(small), 200),
        native_ms=median_ms(lambda: _lucent.fftn(ctx, small, [0, 1], "backward"), 200))
    image = rng.random((256, 256), dtype=np.float32)
    row("gaussian_filter 256x256 sigma 2", python_ms=median_ms(lambda: lucent.ndimage.gaussian_filter(image, 2.0), 100),
        native_ms=median_ms(lambda: _lucent.gaussian_filter(ctx, image, [2.0, 2.0], [0, 0], None, 4.0, "reflect", 0.0, "filter"), 100))
    a, k = rng.random((512, 512), dtype=np.float32), rng.random((15, 15), dtype=np.float32)
    row("fftconvolve 512x512 * 15x15 same", python_ms=median_ms(lambda: lucent.signal.fftconvolve(a, k, "same"), 50),
        native_ms=median_ms(lambda: _lucent.convolve(ctx, a, k, "same", "fft", False), 50))
    volume = rng.random((256, 256, 256), dtype=np.float32)
    psf = np.full((31, 31, 31), 1 / 31 ** 3, np.float32)
    lucent_rl = median_ms(lambda: lucent.restoration.richardson_lucy(volume, psf, 10), 5)
    row("richardson_lucy 256^3 psf 31^3 10 it", python_ms=lucent_rl)



def device_ms(fn, reps=9):
    """The median GPU time of ``fn`` on CuPy arrays (CUDA events), after two warm-ups."""
    import cupy as cp
    s, e = cp.cuda.Event(), cp.cuda.Event()
    fn()
    fn()
    ts = []
    for _ in range(reps):
        s.record()
        fn()
        e.record()
        e.synchronize()
        ts.append(cp.cuda.get_elapsed_time(s, e))
    return float(np.median(ts))


def families():
    """Each family's one-call as users make it, numpy in and numpy out, lucent against the peer
    called the same way (cp.asarray in, .get() out) in the same process; the peer's GPU work on
    device arrays (CUDA events) beside. Float32 throughout; the results compared."""
    import cupy as cp
    from cupyx.scipy import ndimage as cnd, signal as csig
    from cucim.skimage import feature as cfeat, registration as creg, restoration as crest

    def get(y):
        return tuple(v.get() if hasattr(v, "get") else np.asarray(v) for v in y) if isinstance(y, tuple) else y.get()

    v256 = rng.random((256, 256, 256), dtype=np.float32)
    c256 = (v256 + 1j * rng.random(v256.shape, dtype=np.float32)).astype(np.complex64)
    img = rng.random((2048, 2048), dtype=np.float32)
    k31 = rng.random((31, 31, 31), dtype=np.float32)
    psf15 = np.full((15, 15, 15), 1 / 15**3, np.float32)
    moved = np.roll(v256, (3, -5, 7), axis=(0, 1, 2))
    mask = v256 > 0.3
    cases = [
        ("fft.fftn 256^3 complex64", (c256,), lucent.fft.fftn, cp.fft.fftn),
        ("signal.fftconvolve 256^3 * 31^3 same", (v256, k31), lambda a, b: lucent.signal.fftconvolve(a, b, "same"),
         lambda a, b: csig.fftconvolve(a, b, "same")),
        ("ndimage.gaussian_filter 256^3 sigma 2", (v256,), lambda a: lucent.ndimage.gaussian_filter(a, 2.0),
         lambda a: cnd.gaussian_filter(a, 2.0)),
        ("ndimage.median_filter 256^3 size 3", (v256,), lambda a: lucent.ndimage.median_filter(a, 3),
         lambda a: cnd.median_filter(a, 3)),
        ("ndimage.shift 256^3 order 3", (v256,), lambda a: lucent.ndimage.shift(a, (1.3, -2.7, 0.4)),
         lambda a: cnd.shift(a, (1.3, -2.7, 0.4))),
        ("ndimage.zoom 128^3 x2 order 3", (v256[:128, :128, :128].copy(),), lambda a: lucent.ndimage.zoom(a, 2.0),
         lambda a: cnd.zoom(a, 2.0)),
        ("ndimage.distance_transform_edt 256^3", (mask,), lucent.ndimage.distance_transform_edt, cnd.distance_transform_edt),
        ("ndimage.label 256^3", (mask,), lambda m: lucent.ndimage.label(m)[0], lambda m: cnd.label(m)[0]),
        ("registration.phase_cross_correlation 256^3 upsample 10", (v256, moved),
         lambda a, b: lucent.registration.phase_cross_correlation(a, b, upsample_factor=10)[0],
         lambda a, b: creg.phase_cross_correlation(a, b, upsample_factor=10)[0]),
        ("feature.match_template 2048^2 / 64^2 pad_input", (img, img[1000:1064, 900:964].copy()),
         lambda a, t: lucent.feature.match_template(a, t, pad_input=True), lambda a, t: cfeat.match_template(a, t, pad_input=True)),
        ("restoration.richardson_lucy 256^3 / 15^3, 10 it", (v256, psf15),
         lambda a, p: lucent.restoration.richardson_lucy(a, p, 10), lambda a, p: crest.richardson_lucy(a, p, num_iter=10)),
        ("restoration.denoise_tv_chambolle 2048^2 weight 0.1", (img,), lambda a: lucent.restoration.denoise_tv_chambolle(a, 0.1),
         lambda a: crest.denoise_tv_chambolle(a, 0.1)),
    ]
    row("adapter", name=ctx.info()["adapter"]["name"])
    only = [a for a in sys.argv[1:] if not a.startswith("--")]
    for name, args, ours, theirs in cases:
        if only and not any(o in name for o in only):
            continue
        ms = median_ms(lambda: ours(*args), 9)
        peer = median_ms(lambda: get(theirs(*(cp.asarray(a) for a in args))), 9)
        dev = [cp.asarray(a) for a in args]
        on_device = device_ms(lambda: theirs(*dev))
        a, b = np.asarray(ours(*args), np.float64), np.asarray(get(theirs(*dev)), np.float64)
        err = float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))
        row(name, lucent_ms=ms, peer_host_to_host_ms=peer, ratio=ms / peer, peer_device_ms=on_device, relative_l2=err)


def resident():
    """Separable filters of a 512³ float32 volume on device arrays: lucent.Array in and out (the
    wall time of the call and a sum read back, which waits for the work) against cupyx on CuPy
    arrays (CUDA events), median of 9 after two warm-ups; results compared."""
    import cupy as cp
    from cupyx.scipy import ndimage as cnd
    row("adapter", name=ctx.info()["adapter"]["name"])
    v = rng.random((512, 512, 512), dtype=np.float32)
    dv, cv = lucent.asarray(v), cp.asarray(v)
    cases = [("gaussian_filter 512^3 sigma 2", lambda m, x: m.gaussian_filter(x, 2.0)),
             ("gaussian_gradient_magnitude 512^3 sigma 2", lambda m, x: m.gaussian_gradient_magnitude(x, 2.0)),
             ("uniform_filter 512^3 size 5", lambda m, x: m.uniform_filter(x, 5))]
    for name, f in cases:
        ms = median_ms(lambda: f(lucent.ndimage, dv).sum(), 9)
        peer = device_ms(lambda: f(cnd, cv))
        a, b = f(lucent.ndimage, dv).get().astype(np.float64), f(cnd, cv).get().astype(np.float64)
        row(name, lucent_resident_ms=ms, cupyx_device_ms=peer, ratio=ms / peer, relative_l2=float(np.linalg.norm(a - b) / np.linalg.norm(b)))


if "--families" in sys.argv:
    families()
    sys.exit()
if "--resident" in sys.argv:
    resident()
    sys.exit()
overhead()

if "--cucim" in sys.argv:
    import cupy as cp
    from cucim.skimage.restoration import richardson_lucy

    dv, dp = cp.asarray(volume), cp.asarray(psf)
    on_device = device_ms(lambda: richardson_lucy(dv, dp, num_iter=10), 5)
    host = median_ms(lambda: richardson_lucy(cp.asarray(volume), cp.asarray(psf), num_iter=10).get(), 5)
    ours = lucent.restoration.richardson_lucy(volume, psf, 10, clip=False)
    theirs = richardson_lucy(dv, dp, num_iter=10, clip=False).get()
    err = float(np.linalg.norm(ours - theirs) / np.linalg.norm(theirs))
    row("cucim richardson_lucy 256^3 psf 31^3 10 it", device_ms=on_device, host_to_host_ms=host, lucent_ms=lucent_rl,
        relative_l2_lucent_vs_cucim=err)
