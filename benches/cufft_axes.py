"""cuFFT on single axes, to set beside `lucent bench --filter fft_axis --fft-axes 0`:
python3 benches/cufft_axes.py SHAPE... (e.g. 375x243x100 729x12352). Each shape's axis 0 (its
columns, lines S = prod(shape[1:]) apart) is transformed alone, c2c forward, out of place, by
one cuFFT plan over the strided layout (cufftPlanMany: istride = ostride = S, idist = odist = 1,
batch S; no transposition: CuPy's own fft of a leading axis transposes around a contiguous
plan), and timed like lucent's copy roof: median of CUDA-event timings of back-to-back
repetitions. A device copy of 256 MiB gives the roof of the same run. One JSON line per case."""
import ctypes, json, sys
import cupy as cp
import cupy.cuda.cufft  # loads libcufft into the process
import numpy as np


def libcufft():
    for line in open("/proc/self/maps"):
        path = line.split()[-1]
        if "libcufft.so" in path:
            return ctypes.CDLL(path)
    raise SystemExit("libcufft is not loaded")


cufft = libcufft()
CUFFT_C2C, CUFFT_FORWARD = 0x29, -1


def check(status, what):
    if status != 0:
        raise SystemExit(f"{what} failed: cufftResult {status}")


def timed(fn, reps):
    for _ in range(3):
        fn()
    cp.cuda.Device().synchronize()
    s, e = cp.cuda.Event(), cp.cuda.Event()
    ts = []
    for _ in range(7):
        s.record()
        for _ in range(reps):
            fn()
        e.record()
        e.synchronize()
        ts.append(cp.cuda.get_elapsed_time(s, e) / reps)
    return float(np.median(ts))


shapes = [tuple(int(d) for d in a.split("x")) for a in sys.argv[1:]]
rng = cp.random.default_rng(1)
big = cp.zeros(1 << 25, dtype=cp.complex64)
dst = cp.empty_like(big)
copy_ms = timed(lambda: cp.copyto(dst, big), 20)
roof = 2 * big.nbytes / (copy_ms * 1e6)
print(json.dumps(dict(case="cupy_copy", mib=big.nbytes >> 20, ms=round(copy_ms, 4), gb_per_s=round(roof, 1))), flush=True)
del big, dst
stream = cp.cuda.get_current_stream().ptr
for dims in shapes:
    n, cols = dims[0], int(np.prod(dims[1:]))
    x = (rng.random(dims, dtype=cp.float32) - 0.5 + 1j * (rng.random(dims, dtype=cp.float32) - 0.5)).astype(cp.complex64)
    y = cp.full(dims, cp.nan, dtype=cp.complex64)
    plan = ctypes.c_int()
    nn = (ctypes.c_int * 1)(n)
    check(cufft.cufftPlanMany(ctypes.byref(plan), 1, nn, nn, cols, 1, nn, cols, 1, CUFFT_C2C, cols), "cufftPlanMany")
    check(cufft.cufftSetStream(plan, ctypes.c_void_p(stream)), "cufftSetStream")
    run = lambda: check(cufft.cufftExecC2C(plan, ctypes.c_void_p(x.data.ptr), ctypes.c_void_p(y.data.ptr), CUFFT_FORWARD), "cufftExecC2C")
    ms = timed(run, max(2, (1 << 31) // x.nbytes))
    # The transform timed is the one wanted: all of y written, a few columns against numpy.
    written = bool(cp.isfinite(y).all())
    ref = np.fft.fft(cp.asnumpy(x.reshape(n, cols)[:, :7]).astype(np.complex128), axis=0)
    err = float(np.linalg.norm(cp.asnumpy(y.reshape(n, cols)[:, :7]) - ref) / np.linalg.norm(ref))
    check(cufft.cufftDestroy(plan), "cufftDestroy")
    gbs = 2 * x.nbytes / (ms * 1e6)
    print(json.dumps(dict(case="cufft_axis0", shape=list(dims), ms=round(ms, 4), gb_per_s=round(gbs, 1),
                          percent_of_copy=round(100 * gbs / roof, 1), written=written, rel_l2=err)), flush=True)
    del x, y
    cp.get_default_memory_pool().free_all_blocks()
