"""BM4D (pip install bm4d; CPU) on a 4D series, each time frame denoised as a 3D volume with the
true noise level, against lucent's results on the same data: PSNR (peak = the clean series'
range) and time of each.

    lucent phantom --series moving-edge -o clean.npy --noisy noisy.npy --sigma 0.25
    lucent denoise noisy.npy -o lucent4d.npy --dims 4
    python3 benches/bm4d_reference.py clean.npy noisy.npy --sigma 0.25 --lucent lucent4d.npy
"""
import argparse
import json
import os
import time

import numpy as np


def psnr(x, truth):
    peak = float(truth.max() - truth.min())
    mse = float(np.mean((x.astype(np.float64) - truth) ** 2))
    return 10.0 * np.log10(peak * peak / mse)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("clean")
    p.add_argument("noisy")
    p.add_argument("--sigma", type=float, required=True)
    p.add_argument("--lucent", nargs="*", default=[])
    p.add_argument("--frames", type=int, default=None, help="denoise only the first N frames (BM4D is slow)")
    args = p.parse_args()
    clean = np.load(args.clean).astype(np.float64)
    noisy = np.load(args.noisy).astype(np.float64)
    frames = noisy.shape[0] if args.frames is None else min(args.frames, noisy.shape[0])
    report = {"shape": list(noisy.shape), "cpus": os.cpu_count(), "noisy_psnr": psnr(noisy, clean)}
    for path in args.lucent:
        report[os.path.basename(path)] = psnr(np.load(path), clean)
    import bm4d

    started = time.perf_counter()
    out = np.stack([bm4d.bm4d(noisy[t], sigma_psd=args.sigma) for t in range(frames)])
    seconds = time.perf_counter() - started
    voxels = out.size
    report["bm4d"] = {"frames": frames, "psnr": psnr(out, clean[:frames]), "noisy_psnr_same_frames": psnr(noisy[:frames], clean[:frames]), "s": seconds, "voxels_per_s": voxels / seconds}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
