"""Registration beyond translation from Python, numpy in and out, against the CPU references on
the same pairs: similarity (imreg_dft 2.0), stack registration (pystackreg 0.2.8: translation
and rigid body, reference "first") and intensity-based affine registration (SimpleITK 2.5:
MeanSquares, regular-step gradient descent converged, pyramid 4/2/1 with sigmas 2/1/0). Wall ms,
median of 3 after a warm-up; the target registration error (TRE: mean distance of the image's
points from where the true transform sends them) where a truth exists.

    python benches/python_registration.py [--size N]
"""
import json, sys, time
import numpy as np
import lucent

N = int(sys.argv[sys.argv.index("--size") + 1]) if "--size" in sys.argv else 512


def med(fn, n=3):
    fn()
    ts = []
    for _ in range(n):
        t = time.perf_counter(); fn(); ts.append((time.perf_counter() - t) * 1e3)
    return float(np.median(ts))


def row(case, **kw):
    print(json.dumps(dict(case=case, **{k: float(f"{v:.4g}") if isinstance(v, float) else v for k, v in kw.items()})), flush=True)


rng = np.random.default_rng(0)
big = lucent.ndimage.gaussian_filter(rng.random((N + 64, N + 64)).astype("f4"), 3)
fixed = np.ascontiguousarray(big[32:32 + N, 32:32 + N])
A = np.array([[0.97, -0.08], [0.06, 1.04]]); t = np.array([3.0, -4.0])
inv = np.linalg.inv(A)
moving = lucent.ndimage.affine_transform(big, inv, offset=32 - inv @ t, output_shape=(N, N), order=3)
grid = np.stack(np.meshgrid(np.arange(N), np.arange(N), indexing="ij"), -1).reshape(-1, 2).astype(float)[::97]
truth = grid @ A.T + t
tre = lambda q: float(np.mean(np.linalg.norm(q - truth, axis=1)))

r = lucent.registration.register_affine(fixed, moving)
lucent_ms = med(lambda: lucent.registration.register_affine(fixed, moving))
try:
    import SimpleITK as sitk
except ImportError:  # measured on another machine (the 2-core CI machine's CPU is the reference)
    sitk = None
def sitk_affine():
    F, M = sitk.GetImageFromArray(fixed), sitk.GetImageFromArray(moving)
    tr = sitk.AffineTransform(2); tr.SetCenter(((N - 1) / 2, (N - 1) / 2))
    R = sitk.ImageRegistrationMethod(); R.SetMetricAsMeanSquares()
    R.SetOptimizerAsRegularStepGradientDescent(learningRate=4.0, minStep=1e-6, numberOfIterations=1000, gradientMagnitudeTolerance=1e-12)
    R.SetOptimizerScalesFromPhysicalShift(); R.SetInitialTransform(tr, inPlace=False)
    R.SetShrinkFactorsPerLevel([4, 2, 1]); R.SetSmoothingSigmasPerLevel([2, 1, 0]); R.SmoothingSigmasAreSpecifiedInPhysicalUnitsOff()
    R.SetInterpolator(sitk.sitkLinear)
    return R.Execute(F, M)
theirs = {}
if sitk is not None:
    out = sitk_affine()
    theirs = dict(simpleitk_ms=med(sitk_affine), simpleitk_tre=tre(np.array([out.TransformPoint((c, rr))[::-1] for rr, c in grid])),
                  sitk_threads=sitk.ProcessObject.GetGlobalDefaultNumberOfThreads())
row(f"register_affine {N}^2 (affine, mean squares)", lucent_ms=lucent_ms, lucent_tre=tre(grid @ r["matrix"].T + r["offset"]), **theirs)

from pystackreg import StackReg
frames = np.stack([lucent.ndimage.rotate(lucent.ndimage.shift(fixed, s, mode="nearest"), a, reshape=False, order=3, mode="nearest")
                   for a, s in [(0, (0, 0)), (3, (1.5, -2)), (-6, (-2, 0.5)), (8, (0.5, 3))]]).astype("f4")
for kind, const in [("translation", StackReg.TRANSLATION), ("rigid_body", StackReg.RIGID_BODY)]:
    ours = med(lambda: lucent.registration.register_stack(frames, kind, "first"))
    theirs = med(lambda: StackReg(const).register_stack(frames, reference="first"), 1)
    row(f"register_stack 4 x {N}^2 ({kind}, reference first)", lucent_ms=ours, pystackreg_ms=theirs)
