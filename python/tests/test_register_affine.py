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
    with pytest.raises(ValueError, match="2D"):
        lucent.registration.register_affine(a[None], a[None])
    with pytest.raises(ValueError, match="shrink factor"):
        lucent.registration.register_affine(a, a, shrink_factors=(2, 1), smoothing_sigmas=(1.0,))
    with pytest.raises(ValueError, match="translation, rigid"):
        lucent.registration.register_affine(a, a, "projective")
