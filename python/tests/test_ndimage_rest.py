"""The rest of scipy.ndimage: hole filling, hit-or-miss, propagation, the generic derivative
compositions, value_indices, geometric_transform, and the module's whole name list."""
import numpy as np
import pytest
import scipy.ndimage as ndi

import lucent

SHAPES = [(40,), (23, 31), (9, 11, 13), (4, 5, 6, 7)]


@pytest.mark.parametrize("shape", SHAPES)
def test_binary_fill_holes_matches_scipy(rng, shape):
    x = rng.random(shape) > 0.45
    d = len(shape)
    for s in (None, ndi.generate_binary_structure(d, d), ndi.generate_binary_structure(d, 1)):
        assert np.array_equal(lucent.ndimage.binary_fill_holes(x, s), ndi.binary_fill_holes(x, s))
    # Structures that are not connectivities (asymmetric, even, off-centre): scipy's dilation.
    asym = rng.random((3,) * d) > 0.5
    asym.flat[asym.size // 2] = True
    for s, origin in ((asym, 0), (asym, 1), (np.ones((2,) + (3,) * (d - 1), bool), 0)):
        assert np.array_equal(lucent.ndimage.binary_fill_holes(x, s, origin=origin),
                              ndi.binary_fill_holes(x, s, origin=origin))


def test_hit_or_miss_propagation_morphological_laplace(rng):
    x = rng.random((23, 31)) > 0.5
    s1 = rng.random((3, 3)) > 0.5
    for o1, o2 in ((0, None), ((0, 1), None), (0, (-1, 0))):
        assert np.array_equal(lucent.ndimage.binary_hit_or_miss(x, s1, None, origin1=o1, origin2=o2),
                              ndi.binary_hit_or_miss(x, s1, None, origin1=o1, origin2=o2))
    assert np.array_equal(lucent.ndimage.binary_hit_or_miss(x), ndi.binary_hit_or_miss(x))
    seed = x & (rng.random(x.shape) > 0.95)
    assert np.array_equal(lucent.ndimage.binary_propagation(seed, mask=x), ndi.binary_propagation(seed, mask=x))
    f = (rng.random((19, 22)) * 100).astype("f4")
    np.testing.assert_allclose(lucent.ndimage.morphological_laplace(f, size=3), ndi.morphological_laplace(f, size=3),
                               rtol=1e-6, atol=1e-4)


def test_generic_derivative_compositions_and_uniform_filter1d(rng):
    f = (rng.random((19, 22, 7)) * 100).astype("f4")
    np.testing.assert_allclose(lucent.ndimage.generic_gradient_magnitude(f, lucent.ndimage.sobel),
                               ndi.generic_gradient_magnitude(f, ndi.sobel), rtol=1e-5, atol=1e-3)

    def d2(lib):
        return lambda i, axis, output, mode, cval, w: lib.correlate1d(i, w, axis, output, mode, cval)

    got = lucent.ndimage.generic_laplace(f, d2(lucent.ndimage), mode=["wrap", "nearest", "reflect"],
                                         extra_arguments=([1, -2, 1],))
    want = ndi.generic_laplace(f, d2(ndi), mode=["wrap", "nearest", "reflect"], extra_arguments=([1, -2, 1],))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(lucent.ndimage.uniform_filter1d(f, 5, axis=1), ndi.uniform_filter1d(f, 5, axis=1),
                               rtol=1e-5, atol=1e-4)


def test_value_indices_and_geometric_transform(rng):
    labels = rng.integers(-1, 4, (7, 9, 5))
    for ignore in (None, 2):
        got, want = lucent.ndimage.value_indices(labels, ignore_value=ignore), ndi.value_indices(labels, ignore_value=ignore)
        assert got.keys() == want.keys()
        for k in want:
            assert all(np.array_equal(a, b) for a, b in zip(got[k], want[k]))
    f = rng.random((12, 15)).astype("f4")

    def mapping(i, a, b=0.0):
        return i[0] * a + 0.3, i[1] * 1.1 - b

    for order in (0, 1, 3):
        got = lucent.ndimage.geometric_transform(f, mapping, (10, 14), order=order, extra_arguments=(0.73,),
                                                 extra_keywords={"b": 0.5})
        want = ndi.geometric_transform(f, mapping, (10, 14), order=order, extra_arguments=(0.73,), extra_keywords={"b": 0.5})
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_every_scipy_ndimage_name_exists_and_the_unsupported_ones_say_why():
    missing = [n for n in ndi.__all__ if not hasattr(lucent.ndimage, n)]
    assert not missing, missing
    x = np.ones((5, 5))
    for name, call in (("generic_filter", lambda: lucent.ndimage.generic_filter(x, np.mean, 3)),
                       ("generic_filter1d", lambda: lucent.ndimage.generic_filter1d(x, np.mean, 3)),
                       ("vectorized_filter", lambda: lucent.ndimage.vectorized_filter(x, np.mean, size=3)),
                       ("distance_transform_cdt", lambda: lucent.ndimage.distance_transform_cdt(x)),
                       ("taxicab", lambda: lucent.ndimage.distance_transform_bf(x, "taxicab")),
                       ("watershed_ift", lambda: lucent.ndimage.watershed_ift(x.astype("u1"), x.astype(int)))):
        with pytest.raises(NotImplementedError, match=name):
            call()
    x[2, 2] = 0
    np.testing.assert_allclose(lucent.ndimage.distance_transform_bf(x), ndi.distance_transform_bf(x), rtol=1e-6)


@pytest.mark.parametrize("shape", SHAPES)
def test_linear_filters_take_scipys_origin(rng, shape):
    # correlate/convolve (odd and even weights), their 1-D forms and uniform_filter with every
    # valid origin at the extremes; an invalid one refused as scipy refuses it.
    x = rng.standard_normal(shape).astype("f4")
    d = len(shape)
    for wshape in ((3,) * d, tuple(2 + (a % 3) for a in range(d))):
        w = rng.standard_normal(wshape).astype("f4")
        for origin in ([-(n // 2) for n in wshape], [(n - 1) // 2 for n in wshape]):
            for name in ("correlate", "convolve"):
                got = getattr(lucent.ndimage, name)(x, w, mode="nearest", origin=origin)
                want = getattr(ndi, name)(x, w, mode="nearest", origin=origin)
                assert np.abs(got - want).max() <= 1e-5 * (1 + np.abs(want).max()), (name, wshape, origin)
    for name in ("correlate1d", "convolve1d"):
        for n, origin in ((4, -2), (4, 1), (5, 2), (5, -1)):
            w = rng.standard_normal(n)
            got = getattr(lucent.ndimage, name)(x, w, axis=-1, mode="wrap", origin=origin)
            want = getattr(ndi, name)(x, w, axis=-1, mode="wrap", origin=origin)
            assert np.abs(got - want).max() <= 1e-5 * (1 + np.abs(want).max()), (name, n, origin)
    got = lucent.ndimage.uniform_filter(x, 3, mode="reflect", origin=[1] + [-1] * (d - 1))
    want = ndi.uniform_filter(x, 3, mode="reflect", origin=[1] + [-1] * (d - 1))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="origin"):
        lucent.ndimage.correlate(x, np.ones((3,) * d, "f4"), origin=2)


def test_complex_input_and_weights_as_scipy(rng):
    # Linear filters and samplers of complex input (and complex weights: scipy correlates with
    # their conjugate, convolves with them as they are) by their real and imaginary parts.
    shape = (9, 11)
    x = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype("c8")
    xr = rng.standard_normal(shape).astype("f4")
    w = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))

    def check(got, want):
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max()

    for name in ("correlate", "convolve"):
        for xx, ww in ((x, w), (x, w.real), (xr, w), (x.astype("c16"), w)):
            cval = 0.5 + 0.25j if np.iscomplexobj(xx) else 0.5
            kw = dict(mode="constant", cval=cval, origin=[1, -1])
            check(getattr(lucent.ndimage, name)(xx, ww, **kw), getattr(ndi, name)(xx, ww, **kw))
        one = getattr(lucent.ndimage, name + "1d")(x, w[0], axis=0, mode="wrap")
        check(one, getattr(ndi, name + "1d")(x, w[0], axis=0, mode="wrap"))
    check(lucent.ndimage.gaussian_filter(x, 1.5), ndi.gaussian_filter(x, 1.5))
    check(lucent.ndimage.gaussian_filter1d(x, 1.5, order=1), ndi.gaussian_filter1d(x, 1.5, order=1))
    check(lucent.ndimage.uniform_filter(x, 3, mode="constant", cval=1 + 1j), ndi.uniform_filter(x, 3, mode="constant", cval=1 + 1j))
    check(lucent.ndimage.zoom(x, 1.7, order=3), ndi.zoom(x, 1.7, order=3))
    check(lucent.ndimage.shift(x, (0.3, -1.2), order=5, cval=2 - 1j), ndi.shift(x, (0.3, -1.2), order=5, cval=2 - 1j))
    check(lucent.ndimage.rotate(x, 17, order=1), ndi.rotate(x, 17, order=1))
    m = [[0.9, 0.1], [-0.1, 1.1]]
    check(lucent.ndimage.affine_transform(x, m, order=3), ndi.affine_transform(x, m, order=3))
    c = rng.random((2, 5, 6)) * 8
    check(lucent.ndimage.map_coordinates(x, c, order=2), ndi.map_coordinates(x, c, order=2))


def test_axes_as_scipy(rng):
    # Weights, footprints and structures over some axes (length 1 along the others), origins
    # given per listed axis, in scipy's order (unsorted axes included).
    x = rng.standard_normal((6, 7, 8)).astype("f4")
    m = rng.random((6, 7, 8)) > 0.4
    w = rng.standard_normal((3, 4)).astype("f4")
    for axes, origin in (((0, 2), 0), ((2, 0), (1, -1)), ((1,), 1), ((-1, -3), (0, 1))):
        k = len(axes)
        ww = w if k == 2 else w[0]
        for name in ("correlate", "convolve"):
            got = getattr(lucent.ndimage, name)(x, ww, mode="wrap", origin=origin, axes=axes)
            want = getattr(ndi, name)(x, ww, mode="wrap", origin=origin, axes=axes)
            assert np.abs(got - want).max() <= 1e-5 * (1 + np.abs(want).max()), (name, axes)
        size = (3, 2)[:k]
        for name in ("minimum_filter", "maximum_filter", "median_filter"):
            # scipy's sizes follow the axes as listed (minimum, maximum) or sorted (median): an
            # origin valid for one may be invalid for the other, refused by both.
            kw = dict(size=size, mode="nearest", origin=origin, axes=axes)
            try:
                want = getattr(ndi, name)(x, **kw)
            except ValueError:
                with pytest.raises(ValueError, match="origin"):
                    getattr(lucent.ndimage, name)(x, **kw)
                continue
            assert np.array_equal(getattr(lucent.ndimage, name)(x, **kw), want), (name, axes)
        structure = rng.random((3, 3)[:k]).astype("f4")
        got = lucent.ndimage.grey_erosion(x, structure=structure, axes=axes, origin=origin)
        assert np.array_equal(got, ndi.grey_erosion(x, structure=structure, axes=axes, origin=origin)), axes
        s = ndi.generate_binary_structure(k, 1)
        for name in ("binary_erosion", "binary_dilation", "binary_opening", "binary_closing"):
            got = getattr(lucent.ndimage, name)(m, s, origin=origin, axes=axes)
            assert np.array_equal(got, getattr(ndi, name)(m, s, origin=origin, axes=axes)), (name, axes)
        assert np.array_equal(lucent.ndimage.binary_fill_holes(m, axes=axes), ndi.binary_fill_holes(m, axes=axes)), axes
    for axes in ((0, 2), (1,)):
        for name, args in (("laplace", ()), ("gaussian_laplace", (1.5,)), ("gaussian_gradient_magnitude", (1.25,))):
            got = getattr(lucent.ndimage, name)(x, *args, axes=axes)
            want = getattr(ndi, name)(x, *args, axes=axes)
            assert np.abs(got - want).max() <= 1e-5 * (1 + np.abs(want).max()), (name, axes)
    with pytest.raises(RuntimeError, match="must match"):
        lucent.ndimage.correlate(x, w, axes=(0,))


def test_fftconvolve_over_some_axes(rng):
    import scipy.signal
    x = rng.standard_normal((5, 9, 8)).astype("f4")
    k = rng.standard_normal((1, 4, 3)).astype("f4")
    for mode in ("full", "same", "valid"):
        got = lucent.signal.fftconvolve(x, k, mode=mode, axes=(1, 2))
        want = scipy.signal.fftconvolve(x, k, mode=mode, axes=(1, 2))
        assert got.shape == want.shape and np.abs(got - want).max() <= 1e-5 * np.abs(want).max(), mode
    # The other axes broadcast as scipy's: equal lengths pair slice with slice, a length 1 in
    # either input spreads over the other's; real and complex, every mode, in2 larger ("valid"
    # swaps), float64 kept.
    cases = [((5, 9, 8), (5, 4, 3), (1, 2)), ((1, 9, 8), (4, 4, 3), (1, 2)), ((6, 9, 1), (6, 3, 4), (1,)),
             ((3, 7), (3, 11), (1,)), ((4, 6, 5), (1, 6, 5), (0,))]
    for s1, s2, axes in cases:
        for complex_input in (False, True):
            a = rng.standard_normal(s1) + (1j * rng.standard_normal(s1) if complex_input else 0)
            b = rng.standard_normal(s2)
            for mode in ("full", "same", "valid"):
                want = scipy.signal.fftconvolve(a, b, mode=mode, axes=axes)
                got = lucent.signal.fftconvolve(a, b, mode=mode, axes=axes)
                assert got.shape == want.shape and got.dtype == want.dtype, (s1, s2, axes, mode)
                assert np.abs(got - want).max() <= 1e-5 * (1 + np.abs(want).max()), (s1, s2, axes, mode)
    with pytest.raises(ValueError, match="incompatible shapes"):
        lucent.signal.fftconvolve(x, rng.standard_normal((4, 4, 3)), axes=(1, 2))


def test_affine_transform_rank_change_and_homogeneous_check(rng):
    x = rng.random((5, 6, 7)).astype("f4")
    m = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.25]])
    for order in (1, 3):
        got = lucent.ndimage.affine_transform(x, m, offset=[0.3, 0.1, 1.0], output_shape=(4, 5), order=order)
        want = ndi.affine_transform(x, m, offset=[0.3, 0.1, 1.0], output_shape=(4, 5), order=order)
        assert got.shape == want.shape and np.abs(got - want).max() < 1e-5
    with pytest.raises(RuntimeError, match="columns"):
        lucent.ndimage.affine_transform(x, m)
    bad = np.eye(4)
    bad[3, 0] = 0.5
    with pytest.raises(ValueError, match="bottom row"):
        lucent.ndimage.affine_transform(x, bad)
