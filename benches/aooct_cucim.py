"""The peer of `lucent bench --filter register_volume`: the same stripe-wise AO-OCT registration
(stripes of 3 B-scans every 16 against the whole reference; each B-scan, in the middle of a zero
sub-volume of 32, against the reference sub-volume every 16 nearest its predicted position) written
with cuCIM's phase_cross_correlation on reference spectra computed once (space="fourier"), as a
user of cuCIM would, on volumes made by `lucent phantom --aooct`. Host volumes to shifts on the host
(transfers included), wall clock, median of 3 after one warm-up run.
Usage: python3 aooct_cucim.py REF.npy MOVING.npy TRUTH.csv"""
import json, sys, time
import numpy as np
import cupy as cp
from cucim.skimage.registration import phase_cross_correlation as pcc

ref, mov = np.load(sys.argv[1]), np.load(sys.argv[2])
truth = np.loadtxt(sys.argv[3], delimiter=",", skiprows=1)[:, [3, 2, 4]]  # dy, dz, dx
S, Z, X = ref.shape
STRIPE, STEP, W, WSTEP = 3, 16, 32, 16

def run():
    r, m = cp.asarray(ref), cp.asarray(mov)
    spectrum = cp.fft.fftn(r)
    centres = list(range(STEP // 2, S, STEP))
    coarse = []
    for c in centres:
        a = min(max(c - STRIPE // 2, 0), S - STRIPE)
        p = cp.zeros_like(m)
        p[a:a + STRIPE] = m[a:a + STRIPE]
        coarse.append(pcc(spectrum, cp.fft.fftn(p), space="fourier")[0])
    coarse = np.array(coarse)
    predicted = np.arange(S) + np.interp(np.arange(S), centres, coarse[:, 0])
    starts = np.minimum(np.maximum(np.round((predicted - W // 2) / WSTEP), 0).astype(int) * WSTEP, S - W)
    out = np.zeros((S, 3))
    for g in np.unique(starts):
        sub = cp.fft.fftn(r[g:g + W])
        for j in np.nonzero(starts == g)[0]:
            p = cp.zeros((W, Z, X), cp.float32)
            p[W // 2] = m[j]
            s = pcc(sub, cp.fft.fftn(p), space="fourier")[0]
            out[j] = (g + W // 2 + s[0] - j, s[1], s[2])
    return out

run()
times, out = [], None
for _ in range(3):
    t = time.perf_counter(); out = run(); times.append((time.perf_counter() - t) * 1e3)
close = int((np.abs(out - truth).max(axis=1) <= 1.0).sum())
print(json.dumps(dict(case="register_volume_aooct cuCIM", shape=list(ref.shape), ms=round(float(np.median(times)), 2), within_one_voxel=close, bscans=S)), flush=True)
