"""cuFFT (CuPy) timings of one Richardson-Lucy iteration for the shapes of
`lucent bench --filter rl`, same GPU, same run: the same iteration as lucent's
(src/ops/deconvolve/gpu.rs), on resident arrays, with the OTF computed once:

    B = irfftn(rfftn(E) * H);  R = O / (B + eps) (0 where O == 0);
    C = irfftn(rfftn(R) * conj(H));  E *= C

`rl_periodic`: circular, arrays of the image's own shape (as cufft_reference.py's RL case).
`rl_zero`: zero-padded linear convolution with a PSF of 31 per axis (capped by the image), on
arrays padded to the lengths lucent picks (n + m//2 rounded up to 2^a 3^b 5^c 7^d, even on the
last axis), the image and estimate at the corner, zero elsewhere.
Median of CUDA-event timings after warm-up; one JSON line per case, then a table.
Needs python3 with cupy on a CUDA machine."""
import json
import cupy as cp
import numpy as np

EPS = np.float32(1e-12)
PSF_EDGE = 31


def bench(fn, reps=20, warm=3):
    for _ in range(warm):
        fn()
    cp.cuda.Device().synchronize()
    s, e = cp.cuda.Event(), cp.cuda.Event()
    ts = []
    for _ in range(reps):
        s.record(); fn(); e.record(); e.synchronize()
        ts.append(cp.cuda.get_elapsed_time(s, e))
    return float(np.median(ts))


def smooth_at_least(n):
    """Smallest 2^a 3^b 5^c 7^d >= n (lucent::fft::plan::smooth_at_least)."""
    best = 1 << max(0, (n - 1).bit_length())
    p7 = 1
    while p7 < best:
        p5 = p7
        while p5 < best:
            p3 = p5
            while p3 < best:
                x = p3
                while x < n:
                    x *= 2
                best = min(best, x)
                p3 *= 3
            p5 *= 5
        p7 *= 7
    return best


def padded_len(n, m, last):
    """lucent::ops::deconvolve::padded_len for the zero boundary."""
    need = n + m // 2
    return 2 * smooth_at_least((need + 1) // 2) if last else smooth_at_least(need)


def wrapped_psf(psf, shape):
    """The PSF's element (m-1)//2 on the origin, the rest wrapped around (Geometry::wrap_psf)."""
    out = cp.zeros(shape, cp.float32)
    out[tuple(slice(0, m) for m in psf.shape)] = psf
    return cp.roll(out, [-((m - 1) // 2) for m in psf.shape], axis=tuple(range(psf.ndim)))


def gaussian(dims):
    grids = np.meshgrid(*[np.arange(m) - (m - 1) // 2 for m in dims], indexing="ij")
    p = np.exp(-sum(g.astype(np.float64) ** 2 for g in grids) / 8.0)
    return cp.asarray(p / p.sum(), dtype=cp.float32)


def iteration_case(case, image, psf, shape):
    """Times one iteration on arrays of `shape` (the image at the corner)."""
    O = cp.zeros(shape, cp.float32)
    O[tuple(slice(0, n) for n in image.shape)] = image
    E = O.copy()
    H = cp.fft.rfftn(wrapped_psf(psf, shape))
    mempool = cp.get_default_memory_pool()

    def rl():
        B = cp.fft.irfftn(cp.fft.rfftn(E) * H, s=shape)
        R = cp.where(O == 0, cp.float32(0), O / (B + EPS))
        C = cp.fft.irfftn(cp.fft.rfftn(R) * cp.conj(H), s=shape)
        E[...] = E * C

    ms = bench(rl)
    row = dict(case=case, shape=list(image.shape), padded=list(shape), ms=round(ms, 4),
               pool_bytes=int(mempool.total_bytes()))
    print(json.dumps(row), flush=True)
    del O, E, H
    mempool.free_all_blocks()
    cp.fft.config.get_plan_cache().clear()
    return row


rows = []
rng = cp.random.default_rng(1)
for dims in [(512, 512), (16, 512, 512), (64, 512, 512), (256, 256, 256)]:
    image = rng.random(dims, dtype=cp.float32) + cp.float32(0.5)
    psf_dims = tuple(min(d, PSF_EDGE) for d in dims)
    psf = gaussian(psf_dims)
    rows.append(iteration_case("rl_periodic", image, psf, dims))
    zero = tuple(padded_len(n, m, k == len(dims) - 1) for k, (n, m) in enumerate(zip(dims, psf_dims)))
    rows.append(iteration_case("rl_zero", image, psf, zero))
    del image
    cp.get_default_memory_pool().free_all_blocks()

print("\n%-12s %-14s %-14s %10s %10s" % ("case", "shape", "padded", "ms", "pool MiB"))
for r in rows:
    print("%-12s %-14s %-14s %10.3f %10.0f" % (r["case"], "x".join(map(str, r["shape"])),
                                               "x".join(map(str, r["padded"])), r["ms"], r["pool_bytes"] / 2**20))
