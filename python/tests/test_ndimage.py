import warnings

import numpy as np
import pytest
import scipy.ndimage as ndi

import lucent
from conftest import rel

MODES = ["reflect", "constant", "nearest", "mirror", "wrap"]
SHAPES = [(29,), (19, 23), (7, 11, 13), (3, 5, 6, 7)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mode", MODES)
def test_filters_match_scipy(rng, shape, mode):
    x = rng.standard_normal(shape)
    cval = 0.75 if mode == "constant" else 0.0
    w = rng.standard_normal(tuple(min(3 + i, n) for i, n in enumerate(shape)))
    assert rel(lucent.ndimage.correlate(x, w, mode=mode, cval=cval), ndi.correlate(x, w, mode=mode, cval=cval)) < 1e-5
    assert rel(lucent.ndimage.convolve(x, w, mode=mode, cval=cval), ndi.convolve(x, w, mode=mode, cval=cval)) < 1e-5
    w1 = rng.standard_normal(4)
    assert rel(lucent.ndimage.correlate1d(x, w1, 0, mode=mode, cval=cval), ndi.correlate1d(x, w1, 0, mode=mode, cval=cval)) < 1e-5
    assert rel(lucent.ndimage.convolve1d(x, w1, -1, mode=mode, cval=cval), ndi.convolve1d(x, w1, -1, mode=mode, cval=cval)) < 1e-5
    sigma = [0.8 + 0.5 * i for i in range(len(shape))]
    assert rel(lucent.ndimage.gaussian_filter(x, sigma, mode=mode, cval=cval), ndi.gaussian_filter(x, sigma, mode=mode, cval=cval)) < 1e-5
    assert rel(lucent.ndimage.uniform_filter(x, 4, mode=mode, cval=cval), ndi.uniform_filter(x, 4, mode=mode, cval=cval)) < 1e-5


def test_filter_axes_and_aliases(rng):
    x = rng.standard_normal((9, 14, 11))
    assert rel(lucent.ndimage.gaussian_filter(x, (1.5, 2.5), axes=(0, 2)), ndi.gaussian_filter(x, (1.5, 2.5), axes=(0, 2))) < 1e-5
    assert rel(lucent.ndimage.uniform_filter(x, 5, axes=(-1,)), ndi.uniform_filter(x, 5, axes=(-1,))) < 1e-5
    assert rel(lucent.ndimage.gaussian_filter(x, 2, mode="grid-wrap"), ndi.gaussian_filter(x, 2, mode="grid-wrap")) < 1e-5
    assert rel(lucent.ndimage.gaussian_filter(x, 0), x) < 1e-7


def test_output_argument(rng):
    x = rng.standard_normal((12, 10)).astype(np.float32)
    out = np.full(x.shape, np.nan)
    r = lucent.ndimage.gaussian_filter(x, 1.2, output=out)
    assert r is out and rel(out, ndi.gaussian_filter(x, 1.2)) < 1e-5
    assert lucent.ndimage.gaussian_filter(x, 1.2, output=np.float64).dtype == np.float64
    assert lucent.ndimage.gaussian_filter(x.astype(np.float64), 1.2).dtype == np.float64  # scipy's: the input's
    with pytest.raises(RuntimeError, match="output shape"):
        lucent.ndimage.gaussian_filter(x, 1.2, output=np.zeros((3, 3)))


@pytest.mark.parametrize("order", [0, 1, 2, 3, 4, 5])
@pytest.mark.parametrize("mode", ["constant", "nearest", "mirror", "reflect", "wrap", "grid-wrap", "grid-constant"])
def test_interpolation_matches_scipy(rng, order, mode):
    x = rng.random((17, 22))
    tol = 1e-5 if order else 0  # nearest: the same samples
    coords = np.stack([rng.uniform(-3, 20, (5, 7)), rng.uniform(-3, 25, (5, 7))])
    if order == 0:  # away from ties, where rounding decides
        coords = np.round(coords) + rng.uniform(-0.4, 0.4, coords.shape)
    kw = dict(order=order, mode=mode, cval=0.5, sampler="buffer")
    skw = dict(order=order, mode=mode, cval=0.5)
    assert rel(lucent.ndimage.map_coordinates(x, coords, **kw), ndi.map_coordinates(x, coords, **skw)) <= max(tol, 1e-6)
    m = np.array([[0.91 + 1 / 97, 0.23 + 1 / 89], [-0.17 - 1 / 83, 1.07 + 1 / 79]])  # no output lands on an edge or a tie, where f32 coordinates decide
    assert rel(lucent.ndimage.affine_transform(x, m, (1.37 + 1 / 73, -2.11 - 1 / 71), (15, 25), **kw),
               ndi.affine_transform(x, m, (1.37 + 1 / 73, -2.11 - 1 / 71), (15, 25), **skw)) < 1e-5
    if order:
        assert rel(lucent.ndimage.shift(x, (2.3, -1.7), **kw), ndi.shift(x, (2.3, -1.7), **skw)) < 1e-5
        assert rel(lucent.ndimage.zoom(x, (1.7, 0.6), **kw), ndi.zoom(x, (1.7, 0.6), **skw)) < 1e-5
        with warnings.catch_warnings():  # scipy's advice on constant and wrap with grid_mode, both sides
            warnings.simplefilter("ignore")
            assert rel(lucent.ndimage.zoom(x, (1.7, 0.6), grid_mode=True, **kw), ndi.zoom(x, (1.7, 0.6), grid_mode=True, **skw)) < 1e-5
        assert rel(lucent.ndimage.rotate(x, 33.0, **kw), ndi.rotate(x, 33.0, **skw)) < 1e-5
        assert rel(lucent.ndimage.rotate(x, -20.0, reshape=False, **kw), ndi.rotate(x, -20.0, reshape=False, **skw)) < 1e-5


def test_three_axes_and_spline_filter(rng):
    x = rng.random((9, 12, 10))
    assert rel(lucent.ndimage.spline_filter(x), ndi.spline_filter(x)) < 1e-5
    assert rel(lucent.ndimage.spline_filter1d(x, axis=1, mode="wrap"), ndi.spline_filter1d(x, axis=1, mode="wrap")) < 1e-5
    for order in [2, 3, 4, 5]:
        for mode in ["mirror", "reflect", "nearest", "grid-wrap", "constant"]:
            assert rel(lucent.ndimage.spline_filter(x, order, mode=mode), ndi.spline_filter(x, order, mode=mode)) < 1e-5, (order, mode)
            assert rel(lucent.ndimage.spline_filter1d(x, order, axis=-1, mode=mode), ndi.spline_filter1d(x, order, axis=-1, mode=mode)) < 1e-5, (order, mode)
    for order in [0, 1]:
        assert np.array_equal(lucent.ndimage.spline_filter1d(x, order), ndi.spline_filter1d(x, order))
    assert rel(lucent.ndimage.zoom(x, 1.3, order=5), ndi.zoom(x, 1.3, order=5)) < 1e-5
    assert rel(lucent.ndimage.rotate(x, 25, axes=(0, 2)), ndi.rotate(x, 25, axes=(0, 2))) < 1e-5
    assert rel(lucent.ndimage.zoom(x, 1.3), ndi.zoom(x, 1.3)) < 1e-5
    coeffs = ndi.spline_filter(x)
    assert rel(lucent.ndimage.shift(coeffs, 0.4, prefilter=False), ndi.shift(coeffs, 0.4, prefilter=False)) < 1e-5


def test_texture_sampler_is_close(rng):
    x = rng.random((20, 24))
    got = lucent.ndimage.rotate(x, 17, sampler="texture")
    assert rel(got, ndi.rotate(x, 17)) < 1e-2


def test_fourier_shift(rng):
    x = rng.standard_normal((12, 9))
    assert rel(lucent.ndimage.fourier_shift(np.fft.fftn(x), (1.5, -2.25)), ndi.fourier_shift(np.fft.fftn(x), (1.5, -2.25))) < 1e-5
    half = np.fft.rfft(x, axis=0)
    assert rel(lucent.ndimage.fourier_shift(half, 0.7, n=12, axis=0), ndi.fourier_shift(half, 0.7, n=12, axis=0)) < 1e-5


def test_unsupported_and_bad_arguments_raise():
    x = np.ones((6, 7), np.float32)
    for call in [lambda: lucent.ndimage.gaussian_filter(x, 1, mode=["reflect", "wrap"])]:
        with pytest.raises(NotImplementedError):
            call()
    # scipy's spline orders: 0-5, spline_filter 2-5; RuntimeError as scipy raises.
    for order in [6, -1]:
        for call in [lambda: lucent.ndimage.map_coordinates(x, np.zeros((2, 3)), order=order),
                     lambda: lucent.ndimage.shift(x, 1, order=order), lambda: lucent.ndimage.zoom(x, 2, order=order),
                     lambda: lucent.ndimage.rotate(x, 5, order=order),
                     lambda: lucent.ndimage.affine_transform(x, [1, 1], order=order),
                     lambda: lucent.ndimage.spline_filter(x, order=order),
                     lambda: lucent.ndimage.spline_filter1d(x, order=order)]:
            with pytest.raises(RuntimeError, match="spline order"):
                call()
    with pytest.raises(RuntimeError, match="spline order"):
        lucent.ndimage.spline_filter(x, order=1)
    with pytest.raises(ValueError, match="texture sampler reads orders 0, 1 and 3"):
        lucent.ndimage.shift(x, 0.5, order=2, sampler="texture")
    with pytest.warns(UserWarning, match="grid-constant"):
        lucent.ndimage.zoom(x, 2, grid_mode=True)
    with pytest.raises(ValueError):
        lucent.ndimage.gaussian_filter(x, 1, mode="sideways")
    with pytest.raises(ValueError):
        lucent.ndimage.gaussian_filter(x, (1, 2, 3))
    with pytest.raises(ValueError, match="non-finite"):
        lucent.ndimage.gaussian_filter(np.array([1.0, np.nan]), 1)
    with pytest.raises(ValueError):
        lucent.ndimage.map_coordinates(x, np.zeros((3, 4)))
    with pytest.raises(RuntimeError, match="must match"):  # scipy's error
        lucent.ndimage.correlate(x, np.ones(3))
    with pytest.raises(ValueError):
        lucent.ndimage.gaussian_filter(x, 1, mode="reflect", cval=1)


@pytest.mark.parametrize("mode", ["constant", "nearest", "mirror", "reflect", "wrap", "grid-constant", "grid-wrap", "grid-mirror"])
def test_spline_coefficients_are_sampled_as_scipy_samples_them(rng, mode):
    # prefilter=False: the input is spline coefficients, sampled even where the map moves by
    # whole samples (scipy's test_shift09 and test_affine_transform09 at order 3; lucent copied
    # the coefficients there).
    data = np.array([[4, 1, 3, 2], [7, 6, 8, 5], [3, 5, 3, 6]], float)
    coefficients = ndi.spline_filter(data, order=3)
    if mode == "constant":
        got = lucent.ndimage.shift(coefficients, [1, 1], order=3, prefilter=False)
        np.testing.assert_allclose(got, [[0, 0, 0, 0], [0, 4, 1, 3], [0, 7, 6, 8]], atol=1e-5)
        got = lucent.ndimage.affine_transform(coefficients, [1, 1], [-1, -1], order=3, prefilter=False)
        np.testing.assert_allclose(got, [[0, 0, 0, 0], [0, 4, 1, 3], [0, 7, 6, 8]], atol=1e-5)
    x = rng.random((13, 11))
    for shift in ([1, 1], [0.3, -2], [2, 0]):
        want = ndi.shift(x, shift, order=3, prefilter=False, mode=mode)
        assert np.abs(lucent.ndimage.shift(x, shift, order=3, prefilter=False, mode=mode) - want).max() < 1e-5, shift


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mode", MODES)
def test_derivative_filters_match_scipy(rng, shape, mode):
    x = rng.standard_normal(shape)
    cval = 0.75 if mode == "constant" else 0.0
    kw = dict(mode=mode, cval=cval)
    d = len(shape)
    sigma = [0.8 + 0.45 * i for i in range(d)]
    order = [(i + 1) % 4 for i in range(d)]
    tol = 1e-5
    assert rel(lucent.ndimage.gaussian_filter(x, sigma, order=order, **kw), ndi.gaussian_filter(x, sigma, order=order, **kw)) < tol
    assert rel(lucent.ndimage.gaussian_filter(x, 1.3, order=1, truncate=2.5, **kw), ndi.gaussian_filter(x, 1.3, order=1, truncate=2.5, **kw)) < tol
    assert rel(lucent.ndimage.gaussian_filter(x, 2.0, order=2, radius=3, **kw), ndi.gaussian_filter(x, 2.0, order=2, radius=3, **kw)) < tol
    assert rel(lucent.ndimage.gaussian_filter1d(x, 1.7, axis=0, order=3, **kw), ndi.gaussian_filter1d(x, 1.7, axis=0, order=3, **kw)) < tol
    assert rel(lucent.ndimage.gaussian_laplace(x, sigma, **kw), ndi.gaussian_laplace(x, sigma, **kw)) < tol
    assert rel(lucent.ndimage.gaussian_gradient_magnitude(x, sigma, **kw), ndi.gaussian_gradient_magnitude(x, sigma, **kw)) < tol
    for axis in range(-d, d):
        assert rel(lucent.ndimage.sobel(x, axis, **kw), ndi.sobel(x, axis, **kw)) < tol
        assert rel(lucent.ndimage.prewitt(x, axis, **kw), ndi.prewitt(x, axis, **kw)) < tol
    assert rel(lucent.ndimage.laplace(x, **kw), ndi.laplace(x, **kw)) < tol


def test_derivative_filters_with_axes_and_long_kernels(rng):
    x = rng.standard_normal((9, 14, 11))
    got = lucent.ndimage.gaussian_filter(x, (1.5, 2.0), order=(1, 2), axes=(0, 2))
    assert rel(got, ndi.gaussian_filter(x, (1.5, 2.0), order=(1, 2), axes=(0, 2))) < 1e-5
    # A derivative kernel far longer than its axis, folded onto it.
    for mode in MODES:
        assert rel(lucent.ndimage.gaussian_filter1d(x, 12.0, axis=0, order=1, mode=mode), ndi.gaussian_filter1d(x, 12.0, axis=0, order=1, mode=mode)) < 1e-5
    with pytest.raises(ValueError, match="order"):
        lucent.ndimage.gaussian_filter(x, 1.0, order=4)
    with pytest.raises(ValueError):
        lucent.ndimage.sobel(x, axis=3)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mode", MODES)
def test_rank_filters_and_grey_morphology_match_scipy(rng, shape, mode):
    # Minima and maxima are selections: equal to scipy bit for bit (the input in float32).
    x = rng.standard_normal(shape).astype("f4")
    cval = 0.75 if mode == "constant" else 0.0
    kw = dict(mode=mode, cval=cval)
    d = len(shape)
    fp = rng.random(tuple(min(2 + i, n) for i, n in enumerate(shape))) > 0.3
    fp.flat[0] = True
    origin = [-(m // 2) if i % 2 else (m - 1) // 2 for i, m in enumerate(fp.shape)]
    size = [3 + (i % 2) for i in range(d)]
    for lu, sp in [(lucent.ndimage.minimum_filter, ndi.minimum_filter), (lucent.ndimage.maximum_filter, ndi.maximum_filter)]:
        assert np.array_equal(lu(x, size=size, **kw), sp(x, size=size, **kw))
        assert np.array_equal(lu(x, footprint=fp, origin=origin, **kw), sp(x, footprint=fp, origin=origin, **kw))
    for lu, sp in [(lucent.ndimage.grey_erosion, ndi.grey_erosion), (lucent.ndimage.grey_dilation, ndi.grey_dilation),
                   (lucent.ndimage.grey_opening, ndi.grey_opening), (lucent.ndimage.grey_closing, ndi.grey_closing),
                   (lucent.ndimage.morphological_gradient, ndi.morphological_gradient),
                   (lucent.ndimage.white_tophat, ndi.white_tophat), (lucent.ndimage.black_tophat, ndi.black_tophat)]:
        assert np.array_equal(lu(x, size=size, **kw), sp(x, size=size, **kw)), lu.__name__
        assert np.array_equal(lu(x, footprint=fp, **kw), sp(x, footprint=fp, **kw)), lu.__name__
    structure = rng.random(fp.shape).astype("f4")
    for lu, sp in [(lucent.ndimage.grey_erosion, ndi.grey_erosion), (lucent.ndimage.grey_dilation, ndi.grey_dilation)]:
        assert np.allclose(lu(x, structure=structure, **kw), sp(x, structure=structure, **kw), atol=1e-6, rtol=0), lu.__name__
    axis = -1
    assert np.array_equal(lucent.ndimage.minimum_filter1d(x, 4, axis, **kw), ndi.minimum_filter1d(x, 4, axis, **kw))
    assert np.array_equal(lucent.ndimage.maximum_filter1d(x, 5, 0, origin=1, **kw), ndi.maximum_filter1d(x, 5, 0, origin=1, **kw))


@pytest.mark.parametrize("shape", [(31,), (19, 23), (7, 11, 13), (3, 5, 6, 7)])
def test_binary_morphology_matches_scipy(rng, shape):
    x = rng.random(shape) > 0.4
    d = len(shape)
    mask = rng.random(shape) > 0.2
    structures = [None, ndi.generate_binary_structure(d, d), rng.random(tuple(min(2 + i % 2, n) for i, n in enumerate(shape))) > 0.3]
    for s in structures:
        if s is not None:
            s.flat[0] = True
            # With its centre in, erosion and dilation are monotone and iterations=0 (until
            # nothing changes) ends: without it scipy's own loop could oscillate forever (a CI
            # run hung there on one seed).
            s[tuple(n // 2 for n in s.shape)] = True
        for f in ["binary_erosion", "binary_dilation", "binary_opening", "binary_closing"]:
            lu, sp = getattr(lucent.ndimage, f), getattr(ndi, f)
            for kw in [{}, {"iterations": 2}, {"border_value": 1}, {"iterations": 0}, {"mask": mask, "iterations": 2}]:
                assert np.array_equal(lu(x, s, **kw), sp(x, s, **kw)), (f, kw, None if s is None else s.shape)
    if d <= 3:
        s = ndi.generate_binary_structure(d, 1)
        for o in ([0] * d, [1] + [0] * (d - 1), [-1] * d):
            assert np.array_equal(lucent.ndimage.binary_erosion(x, s, origin=o), ndi.binary_erosion(x, s, origin=o)), o
            assert np.array_equal(lucent.ndimage.binary_dilation(x, s, origin=o), ndi.binary_dilation(x, s, origin=o)), o
    for rank in range(1, 5):
        for c in range(0, rank + 2):
            assert np.array_equal(lucent.ndimage.generate_binary_structure(rank, c), ndi.generate_binary_structure(rank, c))
    s = ndi.generate_binary_structure(2, 1)
    assert np.array_equal(lucent.ndimage.iterate_structure(s, 3), ndi.iterate_structure(s, 3))
    with pytest.raises(ValueError, match="origin"):
        lucent.ndimage.binary_erosion(x, ndi.generate_binary_structure(d, 1), origin=2)


@pytest.mark.parametrize("shape", [(53,), (31, 29), (9, 17, 12), (4, 6, 5, 7)])
def test_distance_transform_edt_matches_scipy(rng, shape):
    for density in (0.01, 0.3):
        x = rng.random(shape) > density
        x.flat[rng.integers(x.size)] = False
        sampling = [0.5 + 0.4 * i for i in range(len(shape))]
        for s in (None, sampling):
            got = lucent.ndimage.distance_transform_edt(x, sampling=s)
            want = ndi.distance_transform_edt(x, sampling=s)
            assert got.dtype == want.dtype == np.float64
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="no zero"):
        lucent.ndimage.distance_transform_edt(np.ones(shape))


@pytest.mark.parametrize("shape", [(101,), (37, 41), (9, 13, 12), (4, 6, 5, 7)])
def test_label_matches_scipy(rng, shape):
    for density in (0.3, 0.5, 0.7):
        x = rng.random(shape) < density
        for connectivity in range(1, len(shape) + 1):
            s = ndi.generate_binary_structure(len(shape), connectivity)
            got, n = lucent.ndimage.label(x, s)
            want, m = ndi.label(x, s)
            assert n == m and got.dtype == want.dtype and np.array_equal(got, want), (density, connectivity)
    with pytest.raises(ValueError):
        lucent.ndimage.label(x, np.ones([2] * len(shape)))


def test_scipy_drop_in_script(rng):
    # The segmentation script through lucent.ndimage and scipy.ndimage, every
    # intermediate compared: smooth, threshold, open, label, measure, distance map.
    img = rng.random((64, 80))
    img[16:40, 20:50] += 1.5
    img[45:60, 60:75] += 1.0
    smooth_lu = lucent.ndimage.gaussian_filter(img.astype("f4"), 2.0)
    smooth_sp = ndi.gaussian_filter(img.astype("f4"), 2.0)
    assert rel(smooth_lu, smooth_sp) < 1e-5
    # Thresholds of f32 results agree but for values within rounding of the threshold.
    assert ((smooth_lu > 0.9) == (smooth_sp > 0.9)).mean() > 0.999
    mask = smooth_sp > 0.9  # from here on the same input to both
    opened_lu = lucent.ndimage.binary_opening(mask, iterations=2)
    opened_sp = ndi.binary_opening(mask, iterations=2)
    assert np.array_equal(opened_lu, opened_sp)
    labels_lu, n_lu = lucent.ndimage.label(opened_sp)
    labels_sp, n_sp = ndi.label(opened_sp)
    assert n_lu == n_sp and np.array_equal(labels_lu, labels_sp)
    sizes = np.bincount(labels_sp.ravel())[1:]
    assert np.array_equal(np.bincount(labels_lu.ravel())[1:], sizes) and len(sizes) >= 2
    # Measurements of the regions, on the smoothed image.
    index = np.arange(1, n_sp + 1)
    for name in ("sum_labels", "mean", "standard_deviation", "median", "center_of_mass"):
        got = np.asarray(getattr(lucent.ndimage, name)(smooth_sp, labels_sp, index))
        np.testing.assert_allclose(got, np.asarray(getattr(ndi, name)(smooth_sp, labels_sp, index)), rtol=1e-5)
    assert np.array_equal(lucent.ndimage.sum_labels(np.ones_like(img), labels_sp, index), sizes)
    for got, want in zip(lucent.ndimage.extrema(smooth_sp, labels_sp, index), ndi.extrema(smooth_sp, labels_sp, index)):
        assert np.array_equal(got, want)
    assert lucent.ndimage.find_objects(labels_sp) == ndi.find_objects(labels_sp)
    assert np.array_equal(lucent.ndimage.histogram(smooth_sp, 0.9, 2.5, 8, labels_sp),
                          ndi.histogram(smooth_sp, 0.9, 2.5, 8, labels_sp))
    edt_lu = lucent.ndimage.distance_transform_edt(opened_sp)
    edt_sp = ndi.distance_transform_edt(opened_sp)
    np.testing.assert_allclose(edt_lu, edt_sp, rtol=1e-6, atol=1e-6)
    grad_lu = lucent.ndimage.gaussian_gradient_magnitude(img, 1.5)
    assert rel(grad_lu, ndi.gaussian_gradient_magnitude(img, 1.5)) < 1e-5


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mode", MODES)
def test_rank_median_percentile_match_scipy(rng, shape, mode):
    # Selections: bit for bit with scipy (float32 input).
    x = rng.standard_normal(shape).astype("f4")
    kw = dict(mode=mode, cval=0.75 if mode == "constant" else 0.0)
    fp = rng.random(tuple(min(3, n) for n in shape)) > 0.3
    fp.flat[0] = True
    taps = int(fp.sum())
    assert np.array_equal(lucent.ndimage.median_filter(x, size=3, **kw), ndi.median_filter(x, size=3, **kw))
    assert np.array_equal(lucent.ndimage.median_filter(x, footprint=fp, **kw), ndi.median_filter(x, footprint=fp, **kw))
    for rank in {r for r in (0, 1, taps // 3, -1) if -taps <= r < taps}:  # a random footprint may hold one element
        assert np.array_equal(lucent.ndimage.rank_filter(x, rank, footprint=fp, **kw), ndi.rank_filter(x, rank, footprint=fp, **kw)), rank
    for p in (10, 50.0, 75, 100, -20):
        assert np.array_equal(lucent.ndimage.percentile_filter(x, p, footprint=fp, **kw), ndi.percentile_filter(x, p, footprint=fp, **kw)), p
    origin = [1 if fp.shape[i] > 2 else 0 for i in range(x.ndim)]
    assert np.array_equal(lucent.ndimage.median_filter(x, footprint=fp, origin=origin, **kw), ndi.median_filter(x, footprint=fp, origin=origin, **kw))


@pytest.mark.parametrize("shape", [(47,), (13, 18), (6, 9, 11)])
def test_feature_transform_as_scipy(rng, shape):
    # return_indices: scipy's indices where the nearest zero is unique; where zeros tie, another
    # zero at the same distance. In-place outputs and argument errors as scipy's.
    x = rng.random(shape) > 0.15
    x.flat[0] = False
    sampling = [0.5, 1.3, 2.0][:len(shape)]
    for s in (None, sampling):
        d, i = lucent.ndimage.distance_transform_edt(x, sampling=s, return_indices=True)
        want_d, want_i = ndi.distance_transform_edt(x, sampling=s, return_indices=True)
        assert i.dtype == want_i.dtype == np.int32 and i.shape == want_i.shape
        np.testing.assert_allclose(d, want_d, rtol=1e-12, atol=1e-12)
        assert not x[tuple(i)].any()  # every named element is a zero
        w = np.ones(len(shape)) if s is None else np.asarray(s)
        to = np.sqrt((((i - np.indices(shape)) * w.reshape((-1,) + (1,) * len(shape))) ** 2).sum(0))
        np.testing.assert_allclose(to, want_d, rtol=1e-12, atol=1e-12)
        assert (i == want_i).all(0).mean() > 0.9  # ties aside, scipy's own zeros
    only_i = lucent.ndimage.distance_transform_edt(x, return_distances=False, return_indices=True)
    assert only_i.shape == (len(shape),) + shape
    dist, ind = np.zeros(shape), np.zeros((len(shape),) + shape, np.int32)
    assert lucent.ndimage.distance_transform_edt(x, return_indices=True, distances=dist, indices=ind) is None
    np.testing.assert_allclose(dist, ndi.distance_transform_edt(x), rtol=1e-12)
    assert not x[tuple(ind)].any()
    for kwargs in ({"return_distances": False}, {"indices": ind}, {"indices": np.zeros(shape, np.int32), "return_indices": True},
                   {"indices": ind.astype(np.int64), "return_indices": True}):
        for lib in (lucent.ndimage, ndi):
            with pytest.raises(RuntimeError):
                lib.distance_transform_edt(x, **kwargs)
