"""lucent.Array: arrays that stay on the GPU between calls. Elementwise arithmetic and
reductions against numpy, the resident functions against lucent's numpy path (and scipy /
scikit-image where the numpy path is tested against them), the host round trip of the rest,
errors, and device memory over many calls. Every device array here lives on a context whose
buffers are poisoned (NaN) before each run, so a value the GPU never wrote shows."""

import os

import numpy as np
import pytest
import scipy.ndimage as ndi

import lucent
from conftest import rel


@pytest.fixture(scope="module")
def ctx():
    os.environ["LUCENT_POISON"] = "1"
    try:
        return lucent.Context()
    finally:
        del os.environ["LUCENT_POISON"]


def dev(x, ctx):
    return lucent.asarray(x, context=ctx)


def test_asarray_keeps_values_and_reports_its_shape(rng, ctx):
    x = rng.standard_normal((7, 11, 5)).astype("f4")
    a = dev(x, ctx)
    assert isinstance(a, lucent.Array)
    assert (a.shape, a.ndim, a.size, a.dtype, a.nbytes) == ((7, 11, 5), 3, 385, np.float32, 385 * 4)
    assert a.context is ctx
    assert repr(a) == "lucent.Array(shape=(7, 11, 5), dtype=float32)"
    np.testing.assert_array_equal(a.get(), x)
    np.testing.assert_array_equal(np.asarray(a), x)
    assert lucent.asarray(a, context=ctx) is a
    b = a.copy()
    assert b is not a and b._a is not a._a
    np.testing.assert_array_equal(b.get(), x)


def test_asarray_dtypes(rng, ctx):
    u16 = rng.integers(0, 65535, (5, 6)).astype("u2")
    a = dev(u16, ctx)
    assert a.dtype == np.float32
    np.testing.assert_array_equal(a.get(), u16.astype("f4"))
    b = dev(u16 > 30000, ctx)
    assert b.dtype == bool
    np.testing.assert_array_equal(b.get(), u16 > 30000)
    c = dev((rng.standard_normal((3, 4)) + 1j).astype("c8"), ctx)
    assert c.dtype == np.complex64
    if ctx.f64:
        d = dev(rng.standard_normal((3, 4)), ctx)
        assert d.dtype == np.float64
        assert dev(u16.astype("i8"), ctx).dtype == np.float64
    with pytest.raises(ValueError, match="0-d"):
        dev(np.float32(1), ctx)
    with pytest.raises(TypeError, match="holds float32"):
        lucent.asarray(u16, dtype="i4", context=ctx)


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide", "maximum", "minimum",
                                "less", "less_equal", "greater", "greater_equal", "equal", "not_equal"])
def test_elementwise_broadcasts_as_numpy(rng, ctx, op):
    shapes = [((7, 1, 5), (3, 1)), ((13,), (13,)), ((2, 3, 4, 5), (5,)), ((1, 9), (4, 1))]
    f = getattr(np, op)
    for sa, sb in shapes:
        x = rng.standard_normal(sa).astype("f4")
        y = rng.standard_normal(sb).astype("f4") + (3 if op == "divide" else 0)
        if op in ("equal", "not_equal"):  # values that meet
            y = np.where(rng.random(sb) < 0.5, 0.0, y).astype("f4")
            x = np.where(rng.random(sa) < 0.5, 0.0, x).astype("f4")
        got = lucent._lucent.elementwise(op, dev(x, ctx)._a, dev(y, ctx)._a)[0].get()
        want = f(x, y).astype("f4")
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=2e-7, atol=0)


def test_operators_scalars_and_numpy_operands(rng, ctx):
    x = rng.random((6, 7)).astype("f4") + 0.5
    a = dev(x, ctx)
    np.testing.assert_allclose((2 * a + 1).get(), 2 * x + 1, rtol=1e-7)
    np.testing.assert_allclose((1 - a).get(), 1 - x, rtol=1e-7)
    np.testing.assert_allclose((3 / a).get(), 3 / x, rtol=1e-7)
    np.testing.assert_allclose((a / 3).get(), x / np.float32(3), rtol=1e-7)
    np.testing.assert_allclose((a ** 2).get(), x * x, rtol=1e-7)
    np.testing.assert_allclose((a ** 0.5).get(), np.sqrt(x), rtol=1e-7)
    np.testing.assert_allclose(abs(-a).get(), x, rtol=0)
    row = rng.random(7).astype("f4")
    r = x + row
    got = row + a  # numpy defers to the Array (__array_priority__)
    assert isinstance(got, lucent.Array)
    np.testing.assert_allclose(got.get(), r, rtol=1e-7)
    m = (a > 1.0) & (a < 1.3)
    assert m.dtype == bool
    np.testing.assert_array_equal(m.get(), (x > 1.0) & (x < 1.3))
    np.testing.assert_array_equal((~m).get(), ~((x > 1.0) & (x < 1.3)))
    np.testing.assert_array_equal(((a > 1.2) | (a < 0.7)).get(), (x > 1.2) | (x < 0.7))
    assert int((a > 1.0).sum()) == int((x > 1.0).sum())
    with pytest.warns(RuntimeWarning, match="NaN or an infinity"):
        a / 0
    with pytest.raises(ValueError, match="broadcast"):
        a + dev(rng.random(5).astype("f4"), ctx)
    with pytest.raises(TypeError, match="bool"):
        a & a


def test_reductions(rng, ctx):
    x = rng.standard_normal((31, 17, 9)).astype("f4")
    a = dev(x, ctx)
    xd = x.astype("f8")
    assert abs(float(a.sum()) - xd.sum()) <= 1e-6 * np.abs(xd).sum()
    assert abs(float(a.mean()) - xd.mean()) <= 1e-6 * np.abs(xd).mean()
    assert a.max() == x.max() and a.min() == x.min()
    for axis in (0, 1, 2, -1):
        assert rel(a.sum(axis=axis).get(), xd.sum(axis=axis)) < 1e-6
        np.testing.assert_array_equal(a.max(axis=axis).get(), x.max(axis=axis))
    with pytest.raises(np.exceptions.AxisError):
        a.sum(axis=3)


def test_complex_arithmetic(rng, ctx):
    x = (rng.standard_normal((5, 8)) + 1j * rng.standard_normal((5, 8))).astype("c8")
    y = (rng.standard_normal((5, 8)) + 1j * rng.standard_normal((5, 8))).astype("c8")
    a, b = dev(x, ctx), dev(y, ctx)
    assert rel((a * b).get(), x * y) < 1e-6
    assert rel((a - b).get(), x - y) < 1e-7
    with pytest.raises(TypeError, match="complex"):
        a / b


def test_resident_filters_and_resampling_match_the_numpy_path(rng, ctx):
    x = rng.random((13, 22, 17)).astype("f4")
    a = dev(x, ctx)
    cases = [
        (lambda v: lucent.ndimage.gaussian_filter(v, (1.0, 2.5, 0.7), order=(0, 1, 0), mode="nearest"),
         lambda: ndi.gaussian_filter(x, (1.0, 2.5, 0.7), order=(0, 1, 0), mode="nearest")),
        (lambda v: lucent.ndimage.gaussian_laplace(v, 1.5), lambda: ndi.gaussian_laplace(x, 1.5)),
        (lambda v: lucent.ndimage.gaussian_gradient_magnitude(v, 1.2, mode="wrap"),
         lambda: ndi.gaussian_gradient_magnitude(x, 1.2, mode="wrap")),
        (lambda v: lucent.ndimage.uniform_filter(v, (3, 4, 5), mode="mirror"), lambda: ndi.uniform_filter(x, (3, 4, 5), mode="mirror")),
        (lambda v: lucent.ndimage.shift(v, (1.25, -2.5, 0.4), order=3, mode="reflect"),
         lambda: ndi.shift(x, (1.25, -2.5, 0.4), order=3, mode="reflect")),
        (lambda v: lucent.ndimage.zoom(v, (0.5, 1.3, 2.0), order=1), lambda: ndi.zoom(x, (0.5, 1.3, 2.0), order=1)),
        (lambda v: lucent.ndimage.rotate(v, 17.0, axes=(1, 2), order=1), lambda: ndi.rotate(x, 17.0, axes=(1, 2), order=1)),
        (lambda v: lucent.ndimage.affine_transform(v, np.diag([1.1, 0.9, 1.0]) + 0.05, offset=(0.31, -1.13, 2.07), order=3),
         lambda: ndi.affine_transform(x, np.diag([1.1, 0.9, 1.0]) + 0.05, offset=(0.31, -1.13, 2.07), order=3)),
    ]
    for resident, reference in cases:
        got = resident(a)
        assert isinstance(got, lucent.Array)
        want = reference()
        host = resident(x)
        assert got.shape == want.shape
        assert rel(got.get(), want) < 2e-6, rel(got.get(), want)
        assert rel(got.get(), host) < 2e-6


def test_resident_fft(rng, ctx):
    x = rng.standard_normal((6, 15, 22)).astype("f4")
    a = dev(x, ctx)
    f = lucent.fft.rfftn(a)
    assert isinstance(f, lucent.Array) and f.dtype == np.complex64
    assert rel(f.get(), np.fft.rfftn(x)) < 1e-6
    assert rel(lucent.fft.irfftn(f, s=x.shape).get(), x) < 1e-6
    z = dev((x + 1j * x[::-1]).astype("c8"), ctx)
    assert rel(lucent.fft.fftn(z, axes=(0, 2), norm="ortho").get(), np.fft.fftn(x + 1j * x[::-1], axes=(0, 2), norm="ortho")) < 1e-6
    assert rel(lucent.fft.ifft2(z).get(), np.fft.ifft2(x + 1j * x[::-1])) < 1e-6
    # A real Array into a complex transform goes through numpy's conversion (the host path).
    assert rel(lucent.fft.fftn(a).get(), np.fft.fftn(x)) < 1e-6


def test_resident_registration_and_deconvolution(rng, ctx):
    x = ndi.gaussian_filter(rng.random((24, 30, 26)), 2).astype("f4")
    moved = ndi.shift(x, (1.4, -2.7, 0.6), mode="wrap").astype("f4")
    a, m = dev(x, ctx), dev(moved, ctx)
    for up in (1, 10):
        got = lucent.registration.phase_cross_correlation(a, m, upsample_factor=up)
        want = lucent.registration.phase_cross_correlation(x, moved, upsample_factor=up)
        assert isinstance(got[0], np.ndarray)
        np.testing.assert_allclose(got[0], want[0], atol=1e-9)
        np.testing.assert_allclose(got[1:], want[1:], rtol=1e-5, atol=1e-6)
    psf = np.ones((3, 5, 5), "f4") / 75
    for kw in ({}, {"boundary": "periodic", "init": None}, {"accelerate": True, "clip": False}, {"boundary": "extended"}):
        got = lucent.restoration.richardson_lucy(a, psf, 7, **kw)
        want = lucent.restoration.richardson_lucy(x, psf, 7, **kw)
        assert isinstance(got, lucent.Array)
        assert rel(got.get(), want) < 1e-6, kw


def test_other_functions_go_through_the_host(rng, ctx):
    x = rng.random((12, 15)).astype("f4")
    a = dev(x, ctx)
    med = lucent.ndimage.median_filter(a, 3)
    assert isinstance(med, lucent.Array)
    np.testing.assert_array_equal(med.get(), ndi.median_filter(x, 3))
    conv = lucent.signal.fftconvolve(a, np.ones((3, 3), "f4"), mode="same")
    assert isinstance(conv, lucent.Array)
    labels, n = lucent.ndimage.label(a > 0.8)
    want, wn = ndi.label(x > 0.8)
    assert isinstance(labels, np.ndarray) and n == wn  # integer labels stay numpy
    np.testing.assert_array_equal(labels, want)
    total = lucent.ndimage.sum_labels(a, labels, index=[1, 2])
    assert isinstance(total, np.ndarray)
    # Options the resident form does not cover take the host path too.
    out = lucent.ndimage.gaussian_filter(a, 1.0, axes=(1,))
    assert isinstance(out, lucent.Array) and rel(out.get(), ndi.gaussian_filter(x, 1.0, axes=(1,))) < 1e-6


def test_bad_device_input_is_refused(rng, ctx):
    x = rng.random((9, 10)).astype("f4")
    x[3, 4] = np.nan
    with pytest.raises(ValueError, match="NaN or an infinity"):
        lucent.ndimage.gaussian_filter(dev(x, ctx), 1.0)
    with pytest.raises(ValueError, match="NaN or an infinity"):
        lucent.fft.rfftn(dev(x, ctx))
    with pytest.raises(ValueError, match="NaN or an infinity"):
        lucent.restoration.richardson_lucy(dev(x, ctx), np.ones((3, 3), "f4") / 9, 3)
    with pytest.raises(ValueError, match="NaN or an infinity"):
        lucent.registration.phase_cross_correlation(dev(x, ctx), dev(np.ones_like(x), ctx))
    with pytest.raises(TypeError, match="output= cannot be a lucent.Array"):
        lucent.ndimage.gaussian_filter(dev(np.ones((4, 4), "f4"), ctx), 1.0, output=dev(np.ones((4, 4), "f4"), ctx))
    other = lucent.Context()
    with pytest.raises(ValueError, match="different lucent contexts"):
        dev(x, ctx) + lucent.asarray(x, context=other)


def test_device_memory_stays_flat_over_many_calls(rng, ctx):
    a = dev(rng.random((16, 16)).astype("f4"), ctx)
    for i in range(10_000):
        b = a * 1.5 + 0.25 if i % 2 else abs(a - 0.5)
        if i == 999:
            held = ctx.held_bytes()
    assert ctx.held_bytes() == held
    for i in range(300):
        b = lucent.ndimage.gaussian_filter(lucent.ndimage.shift(b, 0.5), 1.0)
        if i == 99:
            held = ctx.held_bytes()
    assert ctx.held_bytes() == held
    del b


def test_indexing_reshape_and_transpose_on_the_device(rng, ctx):
    x = rng.standard_normal((5, 7, 6)).astype("f4")
    a = dev(x, ctx)
    for key in [1, -1, (2, 3), (slice(1, 4), slice(None, None, 2)), (Ellipsis, slice(5, 0, -2)), (slice(None), 3, slice(None, None, -1)),
                (None, 2), (slice(-3, None), Ellipsis, 1), (4, 6, slice(1, 5, 3))]:
        got = a[key]
        assert isinstance(got, lucent.Array), key
        np.testing.assert_array_equal(got.get(), x[key], err_msg=str(key))
    assert a[1, 2, 3] == x[1, 2, 3]
    m = a > 0
    np.testing.assert_array_equal(m[1:3].get(), (x > 0)[1:3])
    np.testing.assert_array_equal(a[x > 0.5].get(), x[x > 0.5])  # boolean index: through the host
    with pytest.raises(IndexError):
        a[5]
    with pytest.raises(IndexError):
        a[0, 0, 0, 0]
    r = a.reshape(35, -1)
    assert r.shape == (35, 6)
    np.testing.assert_array_equal(r.get(), x.reshape(35, 6))
    with pytest.raises(ValueError, match="cannot reshape"):
        a.reshape(4, -1)
    np.testing.assert_array_equal(a.T.get(), x.T)
    np.testing.assert_array_equal(a.transpose(1, 0, 2).get(), x.transpose(1, 0, 2))
