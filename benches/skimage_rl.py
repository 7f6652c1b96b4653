"""scikit-image Richardson-Lucy on the CPU, the baseline of the RL issue: ms per iteration for a
Gaussian PSF of 31 per axis (the rl_zero case of `lucent bench`). Needs scikit-image."""
import time, json, numpy as np, skimage
from skimage.restoration import richardson_lucy
rng = np.random.default_rng(0)
for shape in [(512, 512), (16, 512, 512)]:
    img = rng.random(shape).astype(np.float32) + 0.1
    psf = np.ones((31,) * len(shape), np.float32)
    g = np.exp(-0.5 * sum(((np.indices(psf.shape)[i] - 15) / 3.0) ** 2 for i in range(len(shape))))
    psf = (g / g.sum()).astype(np.float32)
    richardson_lucy(img, psf, num_iter=1, clip=False)
    n = 3
    t = time.perf_counter(); richardson_lucy(img, psf, num_iter=n, clip=False); dt = (time.perf_counter() - t) / n
    print(json.dumps(dict(case="skimage_rl", version=skimage.__version__, shape=shape, psf=psf.shape, ms_per_iter=round(dt * 1e3, 1))))
