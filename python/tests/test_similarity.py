"""lucent.registration.similarity and transform_img against imreg_dft 2.0 on the same pairs (and
similarity_3d / transform_img_3d against imreg_dft on the planes and projections, at the end):
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


def texture_3d(rng, shape):
    """Smoothed noise (σ 1) less its mean, over its spread (the background 0 continues it)."""
    x = ndi.gaussian_filter(rng.random(shape), 1.0)
    return ((x - x.mean()) / x.std()).astype("f4")


def zoom_along(x, axis, zoom):
    """``x`` resampled along ``axis`` about its centre, input = c + (o − c) · zoom (cubic, zeros beyond)."""
    n = x.shape[axis]
    c = (n - 1) / 2
    matrix = np.ones(3)
    matrix[axis] = zoom
    offset = np.zeros(3)
    offset[axis] = c - c * zoom
    return ndi.affine_transform(x.astype(float), matrix, offset, order=3, mode="constant", cval=0.0)


def test_transform_img_3d_is_transform_img_in_the_plane_and_a_zoom_along_the_axis(rng):
    # Each plane across the axis as imreg_dft's transform_img of that plane, the axis zoomed by the
    # plane's zoom about its centre (a square plane: imreg_dft's canvas zooms both sides alike)
    # and shifted: one cubic resampling against scipy's two, on a smooth volume, so they differ by
    # the interpolation error alone.
    for shape, axis in [((20, 72, 72), 0), ((72, 21, 72), 1), ((72, 72, 19), 2)]:
        x = ndi.gaussian_filter(rng.random(shape), 4).astype("f4")
        scale, angle, tvec = 1.1, 37.0, (1.5, -2.0, 2.5)
        got = lucent.registration.transform_img_3d(x, scale, angle, tvec, axis=axis, bgval=0.0, order=3)
        plane = [k for k in range(3) if k != axis]
        side = shape[plane[0]]
        big = round(side * 1.2)
        zoom = (big - 1) / (round(big * scale) - 1)
        want = zoom_along(x, axis, zoom)
        want = ndi.shift(want, [tvec[k] if k == axis else 0 for k in range(3)], order=3, mode="constant")
        want = np.stack([ird.transform_img(np.take(want, i, axis=axis), scale, angle, (tvec[plane[0]], tvec[plane[1]]),
                                           order=3, bgval=0.0) for i in range(shape[axis])], axis=axis)
        c = tuple(slice(n // 3, n - n // 3) for n in shape)
        assert np.abs(got - want)[c].max() < 1e-3 * np.ptp(x), (axis, np.abs(got - want)[c].max() / np.ptp(x))


def test_similarity_3d_recovers_known_transforms_and_agrees_with_imreg_dft_on_the_projections(rng):
    # Thin along the axis, about 128² across it (as tests/it/similarity_3d.rs). The truth: the
    # inverse turn and the zoom the known transform made; the precision: half a log-polar sample
    # in angle and log scale (2 × imreg_dft's Dangle, Dscale, its quarter-sample precision), and
    # 3 × theirs from imreg_dft's own estimate on the projections (imreg_dft errs by up to 0.25
    # sample itself there).
    for shape, axis, scale, angle, tvec in [((29, 128, 128), 0, 1.08, 23.0, (1.5, -2.25, 0.75)),
                                            ((125, 31, 128), 1, 0.93, -67.0, (-0.5, 1.0, 2.0)),
                                            ((128, 123, 27), 2, 1.15, -100.0, (0.0, 0.5, -1.25))]:
        v0 = texture_3d(rng, shape)
        v1 = lucent.registration.transform_img_3d(v0, scale, angle, tvec, axis=axis, bgval=0.0, order=3)
        got = lucent.registration.similarity_3d(v0, v1, axis=axis, numiter=2)
        want = ird.similarity(v0.sum(axis).astype(float), v1.sum(axis).astype(float))
        n = max(s for k, s in enumerate(shape) if k != axis)
        plane = [k for k in range(3) if k != axis]
        bigs = [round(shape[k] * 1.2) for k in plane]
        true_scale = np.sqrt(np.prod([(b - 1) / (round(b * scale) - 1) for b in bigs]))
        d_angle, d_log_scale = 180 / n / 4, np.log(n * 1.1 / 2) / n / 4
        turn = lambda a, b: abs((a - b + 180) % 360 - 180)
        case = f"axis {axis}: truth {true_scale:.5f} {-angle}, imreg_dft {want['scale']:.5f} {want['angle']:.3f}, " \
               f"lucent {got['scale']:.5f} {got['angle']:.3f} {got['tvec']}"
        assert turn(got["angle"], -angle) < 2 * d_angle and turn(got["angle"], want["angle"]) < 3 * d_angle, case
        assert abs(np.log(got["scale"] / true_scale)) < 2 * d_log_scale, case
        assert abs(np.log(got["scale"] / want["scale"])) < 3 * d_log_scale, case
        # Registered, the volume matches the reference in its middle (0.10-0.12 of its spread
        # measured in Rust, a tenth of a sample of this texture's slope).
        c = tuple(slice(s // 4, 3 * s // 4) for s in shape)
        residual = np.sqrt(np.mean((got["timg"][c] - v0[c]) ** 2) / np.mean(v0[c] ** 2))
        assert residual < 0.2, (case, residual)
        assert got["tvec"].shape == (3,) and got["timg"].shape == shape and 0.5 < got["success"] <= 1, case


def test_similarity_3d_refuses_bad_input(rng):
    v = texture_3d(rng, (20, 24, 24))
    with pytest.raises(ValueError, match="3D volumes of one shape"):
        lucent.registration.similarity_3d(v, v[:, :, :23])
    with pytest.raises(ValueError, match="3D volumes of one shape"):
        lucent.registration.similarity_3d(v[0], v[0])
    with pytest.raises(ValueError, match="out of bounds"):
        lucent.registration.similarity_3d(v, v, axis=3)
    with pytest.raises(ValueError, match="at least 16"):
        lucent.registration.similarity_3d(v[:8], v[:8], axis=-2)  # axis 1: an 8 × 24 plane

    b = v.copy()
    b[1, 2, 3] = np.inf
    with pytest.raises(ValueError, match="finite|inf"):
        lucent.registration.similarity_3d(v, b)
    with pytest.raises(NotImplementedError):
        lucent.registration.similarity_3d(v, v, reports=[])
