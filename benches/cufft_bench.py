"""cuFFT (CuPy) timings for the shapes of `lucent bench --filter fft`, same GPU, same run.
Median of CUDA-event timings after warm-up. Prints one JSON line per case."""
import json, sys
import cupy as cp
import numpy as np

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

cases = []
for n in [64, 1024, 16384]:
    cases.append((((1 << 20) // n, n), (1,)))
for n in [1, 8, 64, 256, 1024, 4096, 16384]:
    cases.append((((1 << 24) // n, n), (1,)))
for dims in [(512, 512), (2048, 2048), (4096, 4096), (8192, 8192), (64,)*3, (128,)*3, (256,)*3, (512,)*3,
             (16, 512, 512), (20, 64, 128, 128), (243, 375, 100), (100, 375, 243), (257, 257, 64), (509, 509)]:
    k = len(dims)
    cases.append((dims, tuple(range(max(0, k - 3), k))))
rng = cp.random.default_rng(1)
for dims, axes in cases:
    x = rng.random(dims, dtype=cp.float32) - 0.5
    xc = (x + 1j * (rng.random(dims, dtype=cp.float32) - 0.5)).astype(cp.complex64)
    c2c = bench(lambda: cp.fft.fftn(xc, axes=axes))
    s = [dims[a] for a in axes]
    rt = bench(lambda: cp.fft.irfftn(cp.fft.rfftn(x, axes=axes), s=s, axes=axes))
    print(json.dumps(dict(case="cufft", shape=list(dims), axes=list(axes), c2c_ms=round(c2c, 4), real_round_trip_ms=round(rt, 4))), flush=True)
    del x, xc
    cp.get_default_memory_pool().free_all_blocks()

# cuFFT accuracy on 1D lines against numpy in float64, inputs uniform in ±0.5.
rs = np.random.default_rng(7)
for n in [64, 1000, 1024, 4096, 257, 509, 1021, 4093, 2039, 1 << 16, 1 << 20]:
    batch = max(1, (1 << 16) // n)
    x = (rs.random((batch, n)) - 0.5 + 1j * (rs.random((batch, n)) - 0.5)).astype(np.complex64)
    ref = np.fft.fft(x.astype(np.complex128), axis=1)
    got = cp.asnumpy(cp.fft.fft(cp.asarray(x), axis=1)).astype(np.complex128)
    l2 = np.linalg.norm(got - ref) / np.linalg.norm(ref)
    mx = np.abs(got - ref).max() / np.abs(ref).max()
    print(json.dumps(dict(case="cufft_accuracy", n=n, rel_l2=float(l2), rel_max=float(mx))), flush=True)
