"""cupyx.scipy.signal.fftconvolve (cuFFT through CuPy) and scipy.signal.fftconvolve (CPU) on the
shapes of `lucent bench --filter convolve_fft`: 'same' mode, arrays already on the device for CuPy.
Prints one JSON line per case. Needs python3 with cupy (scipy optional)."""
import json, time
import cupy as cp
import numpy as np
from cupyx.scipy.signal import fftconvolve as gpu_fftconvolve

def bench(fn, reps=10, warm=3):
    for _ in range(warm):
        fn()
    cp.cuda.Device().synchronize()
    s, e = cp.cuda.Event(), cp.cuda.Event()
    ts = []
    for _ in range(reps):
        s.record(); fn(); e.record(); e.synchronize()
        ts.append(cp.cuda.get_elapsed_time(s, e))
    return float(np.median(ts))

try:
    from scipy.signal import fftconvolve as cpu_fftconvolve
except ImportError:
    cpu_fftconvolve = None
rng = np.random.default_rng(3)
for dims, edge in [((256, 256, 256), 31), ((512, 512, 512), 31), ((4096, 4096), 63)]:
    x = rng.random(dims, dtype=np.float32)
    k = rng.random((edge,) * len(dims), dtype=np.float32)
    xd, kd = cp.asarray(x), cp.asarray(k)
    ms = bench(lambda: gpu_fftconvolve(xd, kd, mode="same"))
    row = dict(case="cupyx_fftconvolve_same", shape=list(dims), kernel=edge, ms=round(ms, 4))
    if cpu_fftconvolve is not None and np.prod(dims) <= 256 ** 3:
        t = time.perf_counter(); cpu_fftconvolve(x, k, mode="same"); row["scipy_cpu_ms"] = round(1e3 * (time.perf_counter() - t), 1)
    print(json.dumps(row), flush=True)
    del xd, kd
    cp.get_default_memory_pool().free_all_blocks()
