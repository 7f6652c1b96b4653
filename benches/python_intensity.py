"""Intensity-based registration from Python, numpy in and out: lucent.registration.register_affine
against SimpleITK 2.5's ImageRegistrationMethod with the same transform (about the centre),
metric, pyramid (shrink 4/2/1, sigmas 2/1/0 pixels) and linear interpolation, its
regular-step gradient descent run to convergence. Pairs: a smooth random texture and a copy
under a known transform (and, for correlation and mutual information, an intensity change);
2D N² and 3D V³. Wall ms (lucent: median of 3 after a warm-up; SimpleITK: one run after a
warm-up at the 2D size, one run in 3D) and the target registration error (TRE: the mean
distance of sampled points from where the true transform sends them), for each.

    python benches/python_intensity.py [--size N] [--volume V] [--sitk-3d] [--only lucent|sitk]
"""
import json, sys, time
import numpy as np
import lucent

arg = lambda name, default: type(default)(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default
N, V = arg("--size", 512), arg("--volume", 128)
ONLY = arg("--only", "")
try:
    import SimpleITK as sitk
except ImportError:
    sitk = None
if ONLY == "lucent":
    sitk = None


def med(fn, n=3):
    fn()
    ts = []
    for _ in range(n):
        t = time.perf_counter(); fn(); ts.append((time.perf_counter() - t) * 1e3)
    return float(np.median(ts))


def once(fn):
    t = time.perf_counter(); out = fn(); return out, (time.perf_counter() - t) * 1e3


def row(case, **kw):
    print(json.dumps(dict(case=case, **{k: float(f"{v:.4g}") if isinstance(v, float) else v for k, v in kw.items()})), flush=True)


def turn(angle, axis=None):
    c, s = np.cos(angle), np.sin(angle)
    if axis is None:
        return np.array([[c, -s], [s, c]])
    m = np.eye(3)
    i, j = [k for k in range(3) if k != axis]
    m[np.ix_([i, j], [i, j])] = [[c, -s], [s, c]]
    return m


def pair(rng, matrix, shift, dims, pad):
    big = lucent.ndimage.gaussian_filter(rng.random(tuple(n + 2 * pad for n in dims)).astype("f4"), 3)
    fixed = np.ascontiguousarray(big[tuple(slice(pad, pad + n) for n in dims)])
    c = (np.asarray(dims) - 1) / 2
    offset = np.asarray(shift) + c - matrix @ c
    inv = np.linalg.inv(matrix)
    moving = lucent.ndimage.affine_transform(big, inv, offset=pad - inv @ offset, output_shape=dims, order=3)
    return fixed, moving, offset


def sitk_register(fixed, moving, transform, metric):
    F, M = sitk.GetImageFromArray(fixed), sitk.GetImageFromArray(moving)
    d = fixed.ndim
    t = {("rigid", 2): sitk.Euler2DTransform, ("rigid", 3): sitk.Euler3DTransform, ("similarity", 2): sitk.Similarity2DTransform,
         ("similarity", 3): sitk.Similarity3DTransform, ("affine", 2): lambda: sitk.AffineTransform(2),
         ("affine", 3): lambda: sitk.AffineTransform(3)}[(transform, d)]()
    t.SetCenter(tuple((n - 1) / 2 for n in fixed.shape[::-1]))
    R = sitk.ImageRegistrationMethod()
    {"ms": R.SetMetricAsMeanSquares, "ncc": R.SetMetricAsCorrelation, "mi": lambda: R.SetMetricAsMattesMutualInformation(50)}[metric]()
    R.SetOptimizerAsRegularStepGradientDescent(learningRate=2.0, minStep=1e-6, numberOfIterations=1000, gradientMagnitudeTolerance=1e-12)
    R.SetOptimizerScalesFromPhysicalShift(); R.SetInitialTransform(t, inPlace=False)
    R.SetShrinkFactorsPerLevel([4, 2, 1]); R.SetSmoothingSigmasPerLevel([2, 1, 0]); R.SmoothingSigmasAreSpecifiedInPhysicalUnitsOff()
    R.SetInterpolator(sitk.sitkLinear)
    out = R.Execute(F, M)
    return lambda p: np.array([out.TransformPoint(tuple(float(x) for x in q[::-1]))[::-1] for q in p])


def case(name, fixed, moving, matrix, offset, transform, metric, with_sitk, repeat=3):
    dims = fixed.shape
    p = np.stack(np.meshgrid(*[np.arange(n) for n in dims], indexing="ij"), -1).reshape(-1, len(dims)).astype(float)
    p = p[:: max(1, len(p) // 4000)]
    truth = p @ matrix.T + offset
    tre = lambda q: float(np.mean(np.linalg.norm(q - truth, axis=1)))
    kw = {}
    if ONLY != "sitk":
        r = lucent.registration.register_affine(fixed, moving, transform, metric=metric)
        kw.update(lucent_ms=med(lambda: lucent.registration.register_affine(fixed, moving, transform, metric=metric), repeat),
                  lucent_tre=tre(p @ r["matrix"].T + r["offset"]), lucent_steps=r["iterations"])
    if with_sitk and sitk is not None:
        mapper, ms = once(lambda: sitk_register(fixed, moving, transform, metric))
        kw.update(simpleitk_ms=ms, simpleitk_tre=tre(mapper(p)), sitk_threads=sitk.ProcessObject.GetGlobalDefaultNumberOfThreads())
        if "lucent_ms" in kw:
            kw["speedup"] = kw["simpleitk_ms"] / kw["lucent_ms"]
    row(name, **kw)


rng = np.random.default_rng(0)
if sitk is not None:  # SimpleITK's first call pays for its set-up
    f0, m0, _ = pair(rng, np.eye(2), (1, 1), (64, 64), 16)
    sitk_register(f0, m0, "rigid", "ms")
A = turn(0.06) @ np.array([[1.03, 0.05], [-0.02, 0.97]])
fixed, moving, off = pair(rng, A, (3.0, -4.0), (N, N), 32)
case(f"{N}^2 affine, mean squares", fixed, moving, A, off, "affine", "ms", True)
S = 1.04 * turn(0.07)
fixed, moving, off = pair(rng, S, (1.5, -2.25), (N, N), 32)
case(f"{N}^2 similarity, correlation (3 m - 2)", fixed, (3 * moving - 2).astype("f4"), S, off, "similarity", "ncc", True)
R = turn(0.07)
fixed, moving, off = pair(rng, R, (1.5, -2.25), (N, N), 32)
case(f"{N}^2 rigid, Mattes MI (exp(-6 m))", fixed, np.exp(-6 * moving).astype("f4"), R, off, "rigid", "mi", True)
R3 = turn(0.05, 1) @ turn(-0.04, 0)
fixed, moving, off = pair(rng, R3, (1.25, -0.75, 2.0), (V, V, V), 16)
case(f"{V}^3 rigid, mean squares", fixed, moving, R3, off, "rigid", "ms", "--sitk-3d" in sys.argv, 1)
A3 = R3 @ np.array([[1.02, 0.0, 0.03], [0.01, 0.98, 0.0], [0.0, -0.02, 1.01]])
fixed, moving, off = pair(rng, A3, (1.25, -0.75, 2.0), (V, V, V), 16)
case(f"{V}^3 affine, mean squares", fixed, moving, A3, off, "affine", "ms", "--sitk-3d" in sys.argv, 1)
case(f"{V}^3 affine, Mattes MI (exp(-6 m))", fixed, np.exp(-6 * moving).astype("f4"), A3, off, "affine", "mi", "--sitk-3d" in sys.argv, 1)
