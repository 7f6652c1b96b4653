"""lucent.registration.register_affine (mean squares, pyramid, Levenberg-Marquardt) against the
truth and against SimpleITK 2.5 (ImageRegistrationMethod, MeanSquares, regular-step gradient
descent, the same pyramid) on synthetic pairs with a known transform: lucent's target
registration error (the mean distance of the image's points from where the true transform
sends them) must be no worse than SimpleITK's, and small."""

import numpy as np
import pytest
import SimpleITK as sitk

import lucent


def pair(rng, matrix, offset, n=128):
    """A textured fixed image (a crop of a larger one, so no band is empty) and the moving image
    with moving(q) = fixed(p) for q = matrix @ p + offset (rows, columns)."""
    big = lucent.ndimage.gaussian_filter(rng.random((n + 64, n + 64)).astype("f4"), 3)
    fixed = np.ascontiguousarray(big[32:32 + n, 32:32 + n])
    inv = np.linalg.inv(matrix)
    moving = lucent.ndimage.affine_transform(big, inv, offset=32 - inv @ np.asarray(offset), output_shape=(n, n), order=3)
    return fixed, moving


def tre(mapper, matrix, offset, n=128):
    p = np.stack(np.meshgrid(np.arange(n), np.arange(n), indexing="ij"), -1).reshape(-1, 2).astype(float)
    truth = p @ np.asarray(matrix).T + offset
    return float(np.mean(np.linalg.norm(mapper(p) - truth, axis=1)))


def simpleitk(fixed, moving, kind):
    F, M = sitk.GetImageFromArray(fixed), sitk.GetImageFromArray(moving)
    t = {"affine": sitk.AffineTransform(2), "rigid": sitk.Euler2DTransform(), "translation": sitk.TranslationTransform(2)}[kind]
    if kind != "translation":
        t.SetCenter(((fixed.shape[1] - 1) / 2, (fixed.shape[0] - 1) / 2))
    R = sitk.ImageRegistrationMethod()
    R.SetMetricAsMeanSquares()
    # (With the default gradient tolerance it stops after one step on these pairs.)
    R.SetOptimizerAsRegularStepGradientDescent(learningRate=4.0, minStep=1e-6, numberOfIterations=1000, gradientMagnitudeTolerance=1e-12)
    R.SetOptimizerScalesFromPhysicalShift()
    R.SetInitialTransform(t, inPlace=False)
    R.SetShrinkFactorsPerLevel([4, 2, 1])
    R.SetSmoothingSigmasPerLevel([2, 1, 0])
    R.SmoothingSigmasAreSpecifiedInPhysicalUnitsOff()
    R.SetInterpolator(sitk.sitkLinear)
    out = R.Execute(F, M)
    # SimpleITK's points are (x, y) = (column, row).
    return lambda p: np.array([out.TransformPoint((float(c), float(r)))[::-1] for r, c in p])


@pytest.mark.parametrize("kind, matrix, offset", [
    ("translation", np.eye(2), (2.3, -3.6)),
    ("rigid", [[np.cos(0.06), -np.sin(0.06)], [np.sin(0.06), np.cos(0.06)]], (1.0, 2.5)),
    ("affine", [[0.97, -0.08], [0.06, 1.04]], (3.0, -4.0)),
])
def test_register_affine_against_the_truth_and_simpleitk(rng, kind, matrix, offset):
    matrix = np.asarray(matrix)
    if kind == "rigid":  # about the centre, as the rigid transform turns
        c = np.array([63.5, 63.5])
        offset = np.asarray(offset) + c - matrix @ c
    fixed, moving = pair(rng, matrix, offset)
    r = lucent.registration.register_affine(fixed, moving, kind)
    ours = tre(lambda p: p @ r["matrix"].T + r["offset"], matrix, offset)
    theirs = tre(simpleitk(fixed, moving, kind), matrix, offset)
    assert ours < 0.02, (kind, ours, r)
    # Where SimpleITK converged (its regular-step descent sometimes leaves a rigid pair 30 px
    # off), lucent is no worse.
    if theirs < 0.05:
        assert ours <= theirs + 0.002, (kind, ours, theirs)


def test_register_affine_refuses_bad_input(rng):
    a = rng.random((32, 32)).astype("f4")
    with pytest.raises(ValueError, match="2D or two 3D"):
        lucent.registration.register_affine(a[None, None], a[None, None])
    with pytest.raises(ValueError, match="shrink factor"):
        lucent.registration.register_affine(a, a, shrink_factors=(2, 1), smoothing_sigmas=(1.0,))
    with pytest.raises(ValueError, match="translation, rigid"):
        lucent.registration.register_affine(a, a, "projective")


def pair_nd(rng, matrix, offset, dims, pad=24):
    """pair() in any dimension and shape: fixed a crop of a larger texture, moving(A p + t) = fixed(p)."""
    big = lucent.ndimage.gaussian_filter(rng.random(tuple(n + 2 * pad for n in dims)).astype("f4"), 2.5)
    fixed = np.ascontiguousarray(big[tuple(slice(pad, pad + n) for n in dims)])
    inv = np.linalg.inv(matrix)
    moving = lucent.ndimage.affine_transform(big, inv, offset=pad - inv @ np.asarray(offset), output_shape=dims, order=3)
    return fixed, moving


def tre_nd(mapper, matrix, offset, dims):
    p = np.stack(np.meshgrid(*[np.arange(n) for n in dims], indexing="ij"), -1).reshape(-1, len(dims)).astype(float)
    truth = p @ np.asarray(matrix).T + offset
    return float(np.mean(np.linalg.norm(mapper(p) - truth, axis=1)))


def simpleitk_nd(fixed, moving, transform, metric, fixed_mask=None, learning_rate=2.0):
    """SimpleITK 2.5 with the same transform (about the centre), metric and pyramid."""
    F, M = sitk.GetImageFromArray(fixed), sitk.GetImageFromArray(moving)
    d = fixed.ndim
    t = {("rigid", 2): sitk.Euler2DTransform(), ("rigid", 3): sitk.Euler3DTransform(),
         ("similarity", 2): sitk.Similarity2DTransform(), ("affine", d): sitk.AffineTransform(d)}[(transform, d)]
    t.SetCenter(tuple((n - 1) / 2 for n in fixed.shape[::-1]))
    R = sitk.ImageRegistrationMethod()
    if metric == "ncc":
        R.SetMetricAsCorrelation()
    elif metric == "mi":
        R.SetMetricAsMattesMutualInformation(numberOfHistogramBins=50)
    else:
        R.SetMetricAsMeanSquares()
    if fixed_mask is not None:
        R.SetMetricFixedMask(sitk.GetImageFromArray(fixed_mask.astype(np.uint8)))
    R.SetOptimizerAsRegularStepGradientDescent(learningRate=learning_rate, minStep=1e-6, numberOfIterations=1000,
                                               gradientMagnitudeTolerance=1e-12)
    R.SetOptimizerScalesFromPhysicalShift()
    R.SetInitialTransform(t, inPlace=False)
    R.SetShrinkFactorsPerLevel([4, 2, 1])
    R.SetSmoothingSigmasPerLevel([2, 1, 0])
    R.SmoothingSigmasAreSpecifiedInPhysicalUnitsOff()
    R.SetInterpolator(sitk.sitkLinear)
    out = R.Execute(F, M)
    return lambda p: np.array([out.TransformPoint(tuple(float(x) for x in q[::-1]))[::-1] for q in p])


def turn(angle, axis=None):
    c, s = np.cos(angle), np.sin(angle)
    if axis is None:
        return np.array([[c, -s], [s, c]])
    m = np.eye(3)
    i, j = [k for k in range(3) if k != axis]
    m[np.ix_([i, j], [i, j])] = [[c, -s], [s, c]]
    return m


def about_centre(matrix, shift, dims):
    c = (np.asarray(dims) - 1) / 2
    return np.asarray(shift) + c - matrix @ c


@pytest.mark.parametrize("transform, metric, change", [
    ("similarity", "ncc", lambda x: 3 * x - 2),
    ("rigid", "mi", lambda x: np.exp(-6 * x)),
    ("affine", "mi", lambda x: 1 - x ** 2),
])
def test_metrics_for_changed_intensities_against_simpleitk(rng, transform, metric, change):
    dims = (101, 117)
    matrix = turn(0.07) * (1.04 if transform == "similarity" else 1.0)
    if transform == "affine":
        matrix = matrix @ np.array([[1.03, 0.04], [0.0, 0.97]])
    offset = about_centre(matrix, (1.5, -2.25), dims)
    fixed, moving = pair_nd(rng, matrix, offset, dims)
    moving = change(moving).astype("f4")
    r = lucent.registration.register_affine(fixed, moving, transform, metric=metric)
    ours = tre_nd(lambda p: p @ r["matrix"].T + r["offset"], matrix, offset, dims)
    theirs = tre_nd(simpleitk_nd(fixed, moving, transform, metric), matrix, offset, dims)
    assert ours < 0.05, (transform, metric, ours, theirs, r)
    # Where SimpleITK converged, lucent is no worse.
    if theirs < 0.1:
        assert ours <= theirs + 0.005, (transform, metric, ours, theirs)


@pytest.mark.parametrize("transform", ["rigid", "affine"])
def test_volumes_against_simpleitk(rng, transform):
    dims = (41, 46, 51)
    matrix = turn(0.06, axis=1) @ turn(-0.04, axis=0)
    if transform == "affine":
        matrix = matrix @ np.array([[1.02, 0.0, 0.03], [0.01, 0.98, 0.0], [0.0, -0.02, 1.01]])
    offset = about_centre(matrix, (1.25, -0.75, 2.0), dims)
    fixed, moving = pair_nd(rng, matrix, offset, dims, pad=14)
    r = lucent.registration.register_affine(fixed, moving, transform)
    ours = tre_nd(lambda p: p @ r["matrix"].T + r["offset"], matrix, offset, dims)
    theirs = tre_nd(simpleitk_nd(fixed, moving, transform, "ms"), matrix, offset, dims)
    assert ours < 0.05, (transform, ours, theirs, r)
    if theirs < 0.1:
        assert ours <= theirs + 0.005, (transform, ours, theirs)


def test_fixed_mask_against_simpleitk(rng):
    dims = (96, 108)
    matrix, offset = turn(0.05), None
    offset = about_centre(matrix, (2.0, 1.0), dims)
    fixed, moving = pair_nd(rng, matrix, offset, dims)
    # A bright band without data in the fixed image, masked out.
    fixed[:, :15] = 1.0
    fixed_mask = np.ones(dims, bool)
    fixed_mask[:, :15] = False
    r = lucent.registration.register_affine(fixed, moving, "rigid", fixed_mask=fixed_mask)
    ours = tre_nd(lambda p: p @ r["matrix"].T + r["offset"], matrix, offset, dims)
    theirs = tre_nd(simpleitk_nd(fixed, moving, "rigid", "ms", fixed_mask=fixed_mask), matrix, offset, dims)
    assert ours < 0.05, (ours, theirs, r)
    if theirs < 0.1:
        assert ours <= theirs + 0.005, (ours, theirs)


def test_itk_transform_files_are_what_simpleitk_reads_and_writes(tmp_path, rng):
    for d in (2, 3):
        matrix = np.eye(d) + 0.05 * rng.standard_normal((d, d))
        offset = rng.standard_normal(d) * 3
        path = tmp_path / f"t{d}.tfm"
        path.write_text(lucent.registration.itk_transform(matrix, offset))
        t = sitk.ReadTransform(str(path))
        p = rng.random((20, d)) * 50
        ours = p @ matrix.T + offset
        theirs = np.array([t.TransformPoint(tuple(q[::-1]))[::-1] for q in p])
        np.testing.assert_allclose(theirs, ours, rtol=0, atol=1e-9)
        # SimpleITK's own file, about a centre, read back.
        a = sitk.AffineTransform(d)
        a.SetMatrix(tuple(np.eye(d).ravel() + 0.03 * rng.standard_normal(d * d)))
        a.SetTranslation(tuple(rng.standard_normal(d)))
        a.SetCenter(tuple(rng.random(d) * 30))
        sitk.WriteTransform(a, str(path))
        m, off = lucent.registration.read_itk_transform(path.read_text())
        mine = p @ m.T + off
        theirs = np.array([a.TransformPoint(tuple(q[::-1]))[::-1] for q in p])
        np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-9)
    with pytest.raises(ValueError, match="Euler"):
        sitk.WriteTransform(sitk.Euler2DTransform(), str(tmp_path / "e.tfm"))
        lucent.registration.read_itk_transform((tmp_path / "e.tfm").read_text())


def test_register_affine_refuses_bad_options(rng):
    a = rng.random((32, 32)).astype("f4")
    with pytest.raises(ValueError, match="metric"):
        lucent.registration.register_affine(a, a, metric="cc")
    with pytest.raises(ValueError, match="mean squares only"):
        lucent.registration.register_affine(a, a, metric="mi", optimizer="lm")
    with pytest.raises(ValueError, match="mask's shape"):
        lucent.registration.register_affine(a, a, fixed_mask=np.ones((32, 31), bool))
    with pytest.raises(ValueError, match="3 x 3"):
        lucent.registration.register_affine(a, a, initial=np.eye(4))


def test_a_similarity_start_reaches_large_turns(rng):
    """A 70° turn and 1.15× scale is beyond the pyramid's reach from the identity; from the
    Fourier-Mellin estimate (which needs structure: the Shepp-Logan phantom under a texture)
    the affine fit lands on the truth."""
    n, pad = 160, 48
    big = (lucent.phantom.shepp_logan(n + 2 * pad)
           + 0.3 * lucent.ndimage.gaussian_filter(rng.random((n + 2 * pad,) * 2).astype("f4"), 2)).astype("f4")
    fixed = np.ascontiguousarray(big[pad:pad + n, pad:pad + n])
    matrix = 1.15 * turn(np.radians(70)) @ np.array([[1.02, 0.03], [0.0, 0.98]])
    offset = about_centre(matrix, (2.0, -3.0), (n, n))
    inv = np.linalg.inv(matrix)
    moving = lucent.ndimage.affine_transform(big, inv, offset=pad - inv @ offset, output_shape=(n, n), order=3)
    found = lambda r: tre_nd(lambda p: p @ r["matrix"].T + r["offset"], matrix, offset, (n, n))
    assert found(lucent.registration.register_affine(fixed, moving)) > 1.0  # lost from the identity
    r = lucent.registration.register_affine(fixed, moving, initial="similarity")
    assert found(r) < 0.05, r
    with pytest.raises(ValueError, match="similarity"):
        lucent.registration.register_affine(fixed, moving, initial="sim")
