"""The peer of `lucent deconvolve` on volumes beyond one buffer binding: cuCIM's
richardson_lucy (scikit-image on CuPy) in core on the same GPU, host array to host array, timed
in three parts (upload, GPU work, download), then compared with lucent's result.
Usage: big_volume_cucim.py vol.npy psf.npy iterations lucent_result.npy
Needs cupy and cucim (wheels cucim-cu13, lazy-loader installed with --no-deps)."""
import json, sys, time
import numpy as np
import cupy as cp

vol_path, psf_path, n, lucent_path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
try:
    from cucim.skimage.restoration import richardson_lucy
    peer = "cucim.skimage.restoration.richardson_lucy"
except Exception as err:  # the same algorithm written out, if cuCIM will not import
    print(json.dumps(dict(case="cucim import", error=str(err)[:300])), flush=True)
    from cupyx.scipy.signal import fftconvolve

    def richardson_lucy(image, psf, num_iter, clip=False):
        est = cp.full(image.shape, 0.5, dtype=cp.float32)
        mirror = cp.ascontiguousarray(psf[::-1, ::-1, ::-1])
        for _ in range(num_iter):
            conv = fftconvolve(est, psf, mode="same") + 1e-12
            est *= fftconvolve(image / conv, mirror, mode="same")
        return est
    peer = "cupyx fftconvolve RL (skimage's loop)"

vol = np.load(vol_path)
psf = np.load(psf_path)
psf = psf / psf.sum()
# Warm-up on a small volume: CuPy's plans and kernels compiled outside the timing.
small = cp.asarray(vol[:64, :64, :64])
richardson_lucy(small, cp.asarray(psf), num_iter=2, clip=False)
cp.cuda.Device().synchronize()
del small
cp.get_default_memory_pool().free_all_blocks()

t0 = time.perf_counter()
g, p = cp.asarray(vol), cp.asarray(psf)
cp.cuda.Device().synchronize()
t1 = time.perf_counter()
r = richardson_lucy(g, p, num_iter=n, clip=False)
cp.cuda.Device().synchronize()
t2 = time.perf_counter()
out = cp.asnumpy(r)
t3 = time.perf_counter()
ours = np.load(lucent_path)
diff = float(np.max(np.abs(ours.astype(np.float64) - out)) / np.max(np.abs(out)))
print(json.dumps(dict(case="peer rl", peer=peer, shape=list(vol.shape), psf=list(psf.shape), iterations=n,
                      upload_s=round(t1 - t0, 3), gpu_s=round(t2 - t1, 3), download_s=round(t3 - t2, 3),
                      host_to_host_s=round(t3 - t0, 3), max_rel_diff_vs_lucent=diff,
                      peak_gib=round(cp.get_default_memory_pool().total_bytes() / 2**30, 2))), flush=True)
