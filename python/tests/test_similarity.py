"""lucent.registration.similarity and transform_img against imreg_dft 2.0 on the same pairs:
textured images (smoothed noise plus white noise), transformed by imreg_dft's own transform_img
over angles of ±180° and scales 0.8-1.25. Angle and scale must lie within imreg_dft's own stated
precision of the truth (its `Dangle`, `Dscale`: a quarter of a log-polar sample, 0.18° and
~0.5% at 256²) and within twice that of imreg_dft's estimates; the translation is judged by how
well it registers (imreg_dft's sub-sample step, a centre of mass over 5 × 5 samples, errs by 0.3
sample on a pure shift: see the pure-shift test): no translation within half a sample of
lucent's registers better, for the angle and scale it found."""

import numpy as np
import pytest
import scipy.ndimage as ndi

import lucent

import imreg_dft as ird  # noqa: E402  (a test dependency: python[test])


def specimen(rng, n=256):
    x = ndi.gaussian_filter(rng.random((n, n)), 1.5)
    return (x + 0.02 * rng.standard_normal((n, n))).astype("f4")


def residual(im0, im1, r):
    """RMS of the registered image against the reference over the central half, over the
    reference's spread there."""
    n = im0.shape[0]
    c = slice(n // 4, 3 * n // 4)
    back = ird.transform_img(im1.astype(float), r["scale"], r["angle"], r["tvec"], order=3)
    return float(np.sqrt(np.mean((back[c, c] - im0[c, c]) ** 2)) / np.std(im0[c, c]))


def test_similarity_agrees_with_imreg_dft(rng):
    im0 = specimen(rng)
    for _ in range(4):
        scale = float(np.exp(rng.uniform(np.log(0.8), np.log(1.25))))
        angle = float(rng.uniform(-180, 180))
        tvec = rng.uniform(-8, 8, 2)
        im1 = ird.transform_img(im0.astype(float), scale, angle, tvec, order=3)
        want = ird.similarity(im0.astype(float), im1)
        got = lucent.registration.similarity(im0, im1.astype("f4"))
        # The truth: the inverse of the zoom scipy made (corners aligned on the 1.2x canvas) and
        # of the turn.
        big = round(im0.shape[0] * 1.2)
        true_scale, true_angle = (big - 1) / (round(big * scale) - 1), -angle
        d_angle, d_scale = want["Dangle"], want["Dscale"]
        case = f"scale {scale:.4f} angle {angle:.2f} tvec {tvec}: truth {true_scale:.5f} {true_angle:.3f}, imreg_dft " \
               f"{want['scale']:.5f} {want['angle']:.3f} {want['tvec']}, lucent {got['scale']:.5f} {got['angle']:.3f} {got['tvec']}"
        turn = lambda a, b: abs((a - b + 180) % 360 - 180)
        assert turn(got["angle"], true_angle) <= d_angle and turn(got["angle"], want["angle"]) <= 2 * d_angle, case
        assert abs(got["scale"] - true_scale) <= d_scale and abs(got["scale"] - want["scale"]) <= 2 * d_scale, case
        # The translation: as good as any within half a sample of it, for the angle and scale
        # lucent found (imreg_dft's own translation is judged the same way in its pure-shift test).
        near = min(residual(im0, im1, dict(got, tvec=got["tvec"] + (dy, dx)))
                   for dy in (-0.5, -0.25, 0, 0.25, 0.5) for dx in (-0.5, -0.25, 0, 0.25, 0.5))
        assert residual(im0, im1, got) <= near * 1.02 + 1e-3, case
        assert got["timg"].shape == im0.shape and got["timg"].dtype == np.float32
        assert 0 < got["success"] <= 1


def test_transform_img_matches_imreg_dft(rng):
    # A smooth image, so that one cubic resampling (lucent) and imreg_dft's three (zoom, rotate,
    # shift) differ by their interpolation error alone: a wrong grid would differ by the
    # image's slope times the offset.
    x = ndi.gaussian_filter(rng.random((96, 112)), 4).astype("f4")
    c = (slice(36, 60), slice(44, 68))  # inside the image whatever the turn (no edge effects)
    for scale, angle, tvec in [(1.0, 0.0, (2.5, -1.25)), (1.17, 33.0, (0.0, 0.0)), (0.83, -121.0, (-3.0, 4.5)), (1.05, 180.0, (1, 1))]:
        got = lucent.registration.transform_img(x, scale, angle, tvec, order=3, bgval=0.3)
        want = ird.transform_img(x.astype(float), scale, angle, tvec, order=3, bgval=0.3)
        assert np.abs(got - want)[c].max() < 1e-3 * np.ptp(x), (scale, angle, tvec)


def test_a_pure_shift_is_found_to_a_twentieth_of_a_sample(rng):
    im0 = specimen(rng)
    im1 = ndi.shift(im0, (0.3, -0.7), order=3, mode="nearest")
    got = lucent.registration.similarity(im0, im1)
    np.testing.assert_allclose(got["tvec"], [-0.3, 0.7], atol=0.06)
    assert abs(got["angle"]) < 0.05 and abs(got["scale"] - 1) < 1e-3
    imreg = ird.similarity(im0.astype(float), im1.astype(float))["tvec"]
    assert np.abs(imreg - [-0.3, 0.7]).max() > 0.1  # why the translation is judged by residuals


def test_bad_input_is_refused(rng):
    a = specimen(rng, 32)
    with pytest.raises(ValueError, match="one shape"):
        lucent.registration.similarity(a, a[:31])
    with pytest.raises(ValueError, match="at least 16"):
        lucent.registration.similarity(a[:12, :12], a[:12, :12])
    b = a.copy()
    b[3, 3] = np.nan
    with pytest.raises(ValueError, match="finite|NaN"):
        lucent.registration.similarity(a, b)
    with pytest.raises(NotImplementedError):
        lucent.registration.similarity(a, a, constraints={"angle": [0, 10]})
