"""Block matching of correlated noise (a PSD, bm4d's sigma_psd) and of the same noise taken as
white of its standard deviation: lucent from Python, numpy in and out (warm, three calls timed),
or the bm4d package (CPU), on the same data: a 64³ phantom and a 512² image with white noise
filtered by a short kernel ("taps") or a Gaussian of sd 1 sample (strongly correlated), PSD in
bm4d's convention (N · σ² · |DFT of the filter|²). Same seeds either way.

    python3 benches/bm4d_psd.py lucent      # on the GPU machine
    python3 benches/bm4d_psd.py bm4d        # pip install bm4d==4.2.5, on the CPU machine
"""
import sys
import time

import numpy as np


def psnr(x, t):
    return 10 * np.log10(np.ptp(t) ** 2 / np.mean((x - t) ** 2))


def phantom3(shape):
    z, y, x = np.meshgrid(*[np.arange(n) / n for n in shape], indexing="ij")
    inside = (x - .5) ** 2 / .12 + (y - .45) ** 2 / .08 + (z - .5) ** 2 / .1 < 1
    ball = (x - .4) ** 2 + (y - .6) ** 2 + (z - .45) ** 2 < .02
    return .2 + .5 * inside + .3 * ball + .2 * x


def image2(shape):
    y, x = np.meshgrid(*[np.arange(n) / n for n in shape], indexing="ij")
    return 0.3 + 0.4 * ((abs(x - .4) < .25) & (abs(y - .5) < .2)) + 0.15 * np.sin(20 * x) * np.cos(9 * y) \
        + 0.2 * ((x - .7) ** 2 + (y - .3) ** 2 < .03)


def kernels(ndim):
    g = np.exp(-np.arange(-2, 3) ** 2 / 2.0)
    if ndim == 3:
        taps = np.zeros((3, 3, 3))
        taps[1, 1, 1], taps[1, 1, 2], taps[1, 2, 1], taps[2, 1, 2] = 1, .6, -.3, .4
        gauss = g[:, None, None] * g[None, :, None] * g[None, None, :]
    else:
        taps = np.zeros((3, 3))
        taps[1, 1], taps[1, 2], taps[2, 1] = 1, .7, .5
        gauss = g[:, None] * g[None, :]
    return {"taps": taps, "gauss": gauss / np.sqrt((gauss ** 2).sum())}


def cases():
    for shape, clean, sigma in [((64, 64, 64), phantom3((64, 64, 64)), 0.08), ((512, 512), image2((512, 512)), 0.06)]:
        for name, k in kernels(len(shape)).items():
            rng = np.random.default_rng(7)
            spectrum = np.fft.fftn(k, shape)
            noise = np.real(np.fft.ifftn(np.fft.fftn(rng.standard_normal(shape)) * spectrum)) * sigma
            psd = (np.prod(shape) * sigma ** 2 * np.abs(spectrum) ** 2).astype(np.float32)
            yield f"{len(shape)}-D {name}", clean, (clean + noise).astype(np.float32), psd, float(np.std(noise))


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else "lucent"
    if which == "lucent":
        import lucent
        for name, clean, noisy, psd, std in cases():
            for label, noise in [("psd", psd), ("white std", std)]:
                lucent.denoise.bm4d(noisy, noise)
                ts = []
                for _ in range(3):
                    a = time.perf_counter()
                    y = lucent.denoise.bm4d(noisy, noise)
                    ts.append(time.perf_counter() - a)
                print(name, label, "host to host ms", [round(1e3 * v, 1) for v in ts], "psnr", round(psnr(y, clean), 3), flush=True)
    else:
        if not hasattr(np, "trapz"):
            np.trapz = np.trapezoid  # bm4d 4.2.5 calls numpy 1's name
        import bm4d
        for name, clean, noisy, psd, std in cases():
            a = time.perf_counter()
            y = np.squeeze(bm4d.bm4d(noisy.astype(float), psd.astype(float)))
            t = time.perf_counter() - a
            w = np.squeeze(bm4d.bm4d(noisy.astype(float), std))
            print(name, f"bm4d psd {t:.2f} s psnr {psnr(y, clean):.3f}; white std psnr {psnr(w, clean):.3f}; noisy {psnr(noisy, clean):.3f}", flush=True)


if __name__ == "__main__":
    main()
