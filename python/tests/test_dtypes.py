"""Result dtypes and values as scipy's and numpy's, for a function of every family and the
input dtypes scipy takes (uint8, uint16, int16, int32, float32, float64, bool), with scipy
itself as the reference.

How close the values are:

* selection filters and morphology return input values: equal (float64 input: within float32's
  rounding, lucent computing in float32 today);
* float results: within float32's precision (relative L2 1e-5, as the other tests);
* integer results of linear filters and interpolation: within 1 (modulo the type's range where
  scipy's cast wraps around), and equal at most elements. scipy sums in double and then
  truncates (filters) or rounds (interpolation): where its double lands within float32's error
  of an integer (or of a half), the last bit decides, and float32 decides otherwise (for
  values near 65535 or 10**5 float32's error is about 0.01-0.1, so up to a fifth may differ);
* boolean results of linear filters: scipy's cast to a byte keeps |value| >= 1 only, decided by
  the last bit where a value is 1 exactly (an all-true neighbourhood): equal almost everywhere;
* the compositions that scipy squares or adds up in the integer type after truncating
  (gaussian_gradient_magnitude), and spline_filter's passes into an integer output (gain
  above 1): equal almost everywhere (one flipped truncation, rare, can move the result by
  more than 1).
"""
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.ndimage as ndi
import scipy.signal

import lucent
from conftest import rel

DTYPES = ["u1", "u2", "i2", "i4", "f4", "f8", "?"]
SHAPES = [(29,), (13, 17), (5, 7, 9)]


def data(rng, shape, dtype, limit=10 ** 5):
    """Random values filling most of an integer type's range (within ±``limit``: for int32,
    sums of a few taps then stay where float32 is within 1), normal floats, coin-flip
    booleans."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) > 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = max(int(info.min), -limit), min(int(info.max), limit)
        return rng.integers(lo, hi, shape, endpoint=True).astype(dt)
    return (rng.standard_normal(shape) * 10).astype(dt)


def same(got, want, kind, within=1):
    """``got`` as scipy's ``want``: dtype and shape, values as the module docstring says
    (``kind``: "exact", "linear" or "composed"; integer results of linear filters ``within``
    that many units)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind in "fc":
        if kind == "exact" and want.dtype.itemsize <= 4:
            assert np.array_equal(got, want)
        else:
            assert rel(got, want) <= (1e-7 if kind == "exact" else 1e-5)
        return
    if kind == "exact":
        assert np.array_equal(got, want)
        return
    equal = np.mean(got == want)
    if want.dtype != np.bool_ and kind == "linear":
        span = 1 << (8 * want.dtype.itemsize)
        d = (got.astype(np.int64) - want.astype(np.int64)) % span
        assert np.minimum(d, span - d).max() <= within
    assert equal >= (0.75 if kind == "linear" else 0.97), equal  # no systematic bias


LINEAR = {
    "correlate": lambda lib, x, w: lib.correlate(x, w),
    "correlate1d": lambda lib, x, w: lib.correlate1d(x, [0.3, -1.7, 2.25, 0.5], axis=0, mode="wrap"),
    "gaussian_filter order 1": lambda lib, x, w: lib.gaussian_filter(x, 1.3, order=1, mode="nearest"),
    "uniform_filter": lambda lib, x, w: lib.uniform_filter(x, 3, mode="constant", cval=2.5),
    "sobel": lambda lib, x, w: lib.sobel(x, axis=0),
    "laplace": lambda lib, x, w: lib.laplace(x, mode="mirror"),
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", LINEAR)
def test_linear_filters_keep_the_input_dtype(rng, name, dtype, shape):
    x = data(rng, shape, dtype)
    w = rng.standard_normal((3, 2, 3)[:len(shape)])
    # uniform_filter's passes each truncate into the integer type (as scipy's): where its running
    # sum and lucent's weighted one round to either side of a whole number the pass differs by
    # one, and the next pass (a mean: weights summing to 1) carries that one besides its own.
    within = x.ndim if name == "uniform_filter" else 1
    same(LINEAR[name](lucent.ndimage, x, w), LINEAR[name](ndi, x, w), "linear", within)


@pytest.mark.filterwarnings("ignore:invalid value encountered in sqrt")  # a wrapped-around sum, both sides
@pytest.mark.parametrize("shape", SHAPES[1:])
@pytest.mark.parametrize("dtype", DTYPES)
def test_gaussian_gradient_magnitude_keeps_the_input_dtype(rng, dtype, shape):
    # scipy's composition in the result's dtype: the integer derivatives squared and added in
    # it (wrapping around), the square root truncated. A derivative truncated the other way
    # moves a wrapped square anywhere: values within ±3000, where float32's error flips few.
    x = data(rng, shape, dtype, limit=3000)
    same(lucent.ndimage.gaussian_gradient_magnitude(x, 1.1), ndi.gaussian_gradient_magnitude(x, 1.1), "composed")
    same(lucent.ndimage.gaussian_laplace(x, 0.9), ndi.gaussian_laplace(x, 0.9), "composed")


SELECTION = {
    "median_filter": lambda lib, x: lib.median_filter(x, size=3),
    "minimum_filter": lambda lib, x: lib.minimum_filter(x, size=(3, 2, 4)[:x.ndim], mode="constant", cval=7),
    "rank_filter": lambda lib, x: lib.rank_filter(x, -2, footprint=np.ones((3, 1, 2)[:x.ndim], bool)),
    "grey_opening": lambda lib, x: lib.grey_opening(x, size=(3, 2, 2)[:x.ndim]),
    "morphological_gradient": lambda lib, x: lib.morphological_gradient(x, size=3),
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", SELECTION)
def test_selection_filters_and_morphology_are_exact(rng, name, dtype, shape):
    if name == "morphological_gradient" and dtype == "?":
        pytest.skip("scipy subtracts booleans, which numpy refuses")
    x = data(rng, shape, dtype)
    same(SELECTION[name](lucent.ndimage, x), SELECTION[name](ndi, x), "exact")


def test_grey_morphology_with_a_structure_truncates_as_scipy(rng):
    # scipy adds the first footprint element's structure value as a double, the others' truncated
    # to the input's type (in that type: unsigned sums below 0 or above the maximum wrap around
    # in scipy, not in lucent; int16 values here keep the sums in range).
    x = data(rng, (17, 13), "i2", limit=1000)
    s = rng.random((3, 2)) * 5 - 1
    for name in ("grey_erosion", "grey_dilation", "white_tophat", "black_tophat", "morphological_laplace"):
        got = getattr(lucent.ndimage, name)(x, structure=s)
        same(got, getattr(ndi, name)(x, structure=s), "linear")  # input ∓ a float structure, truncated


SAMPLERS = {
    "map_coordinates": lambda lib, x, o, c: lib.map_coordinates(x, c, order=o, mode="nearest"),
    "affine_transform": lambda lib, x, o, c: lib.affine_transform(x, np.eye(x.ndim) * 0.93 + 0.05, 0.37, order=o,
                                                                  mode="mirror"),
    "shift": lambda lib, x, o, c: lib.shift(x, [0.31, -1.27, 0.6][:x.ndim], order=o, mode="mirror"),
    "zoom": lambda lib, x, o, c: lib.zoom(x, [1.37, 0.71, 1.13][:x.ndim], order=o),
    "rotate": lambda lib, x, o, c: lib.rotate(x, 23.0, order=o, mode="nearest") if x.ndim > 1 else lib.shift(x, 0.4, order=o),
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", SAMPLERS)
def test_interpolation_keeps_the_input_dtype_rounding_to_nearest(rng, name, dtype, shape):
    x = data(rng, shape, dtype)
    c = np.stack([rng.uniform(-1, n, (6, 5)) for n in shape])
    for order in ((0, 1, 2, 3, 4, 5) if name == "shift" else (1, 3)):
        if order == 0:  # away from ties, where the coordinates' last bit picks the sample
            c = np.round(c) + rng.uniform(-0.4, 0.4, c.shape)
        same(SAMPLERS[name](lucent.ndimage, x, order, c), SAMPLERS[name](ndi, x, order, c), "linear")


@pytest.mark.filterwarnings("ignore:promoting specified output dtype")  # scipy's, for complex input
@pytest.mark.parametrize("dtype", DTYPES + ["c8"])
def test_spline_filter_is_float64_and_distances_too(rng, dtype):
    x = data(rng, (11, 14), dtype) if dtype != "c8" else (rng.standard_normal((11, 14)) + 1j).astype("c8")
    same(lucent.ndimage.spline_filter(x), ndi.spline_filter(x), "linear")
    same(lucent.ndimage.spline_filter1d(x, 4, axis=0), ndi.spline_filter1d(x, 4, axis=0), "linear")
    if dtype != "c8":  # int16 results pass by pass, as scipy's: a pass truncated the other way moves
        x = data(rng, (11, 14), dtype, limit=3000)  # the next by up to its gain, about 1.7
        # Booleans: runs of ones put the first pass on whole numbers to within 1e-16 (either
        # side in f64, scipy's and lucent's alike), so its truncation is a coin flip there (1% of
        # draws had over 3% of elements one unit apart): within one unit.
        same(lucent.ndimage.spline_filter(x, output=np.int16), ndi.spline_filter(x, output=np.int16), "linear" if dtype == "?" else "composed")
        z = data(rng, (9, 10, 7), dtype)
        z.flat[3] = 0
        same(lucent.ndimage.distance_transform_edt(z), ndi.distance_transform_edt(z), "float")


def test_output_as_a_dtype_or_an_array(rng):
    x = data(rng, (15, 19), "f8")
    u = data(rng, (15, 19), "u1")
    for dtype in (np.uint8, np.int16, np.float32, "i4", bool):
        same(lucent.ndimage.gaussian_filter(x, 1.5, output=dtype), ndi.gaussian_filter(x, 1.5, output=dtype), "linear")
        same(lucent.ndimage.shift(x, 0.3, output=dtype), ndi.shift(x, 0.3, output=dtype), "linear")
        same(lucent.ndimage.median_filter(x, 3, output=dtype), ndi.median_filter(x, 3, output=dtype), "linear")
    for dtype in ("i2", "f4", "u2"):
        got, want = np.full(u.shape, 99, dtype), np.full(u.shape, 99, dtype)
        assert lucent.ndimage.correlate(u, -np.ones((3, 3)) / 7, output=got) is got
        ndi.correlate(u, -np.ones((3, 3)) / 7, output=want)
        same(got, want, "linear")
        got, want = np.zeros((4, 5), dtype), np.zeros((4, 5), dtype)
        c = rng.uniform(0, 12, (2, 4, 5))
        lucent.ndimage.map_coordinates(u, c, got, order=1)
        ndi.map_coordinates(u, c, want, order=1)
        same(got, want, "linear")
    with pytest.raises(RuntimeError, match="output shape"):
        lucent.ndimage.uniform_filter(u, output=np.zeros((3, 3)))


def test_integer_conversions_are_scipys_at_the_edges():
    # The C cast of the filters (toward zero, wrapping around) and the interpolation's rounding
    # (halves away from zero, clipped), on values past every type's range.
    from lucent._arrays import convert

    v = np.array([-1e10, -3e9, -70000.7, -300.5, -2.5, -1.5, -0.7, -0.5, 0.5, 0.7, 1.5, 2.5, 255.5, 256.7,
                  40000.6, 70000.2, 3e9, 5e9, 1e19, 2e19, np.nan, np.inf, -np.inf])
    with np.errstate(invalid="ignore"):
        for dtype in ("u1", "i1", "u2", "i2", "i4", "u4", "i8", "u8", np.bool_):
            assert np.array_equal(convert(v, dtype, "truncate"), ndi.correlate1d(v, [1.0], output=dtype)), dtype
            assert np.array_equal(convert(v, dtype, "nearest"), ndi.shift(v, 0, order=0, output=dtype)), dtype


@pytest.mark.parametrize("dtype", ["c8", "c16"])
def test_complex_input_keeps_its_precision(rng, dtype):
    x = (rng.standard_normal((9, 8)) + 1j * rng.standard_normal((9, 8))).astype(dtype)
    for f in (lambda lib: lib.gaussian_filter(x, 1.0), lambda lib: lib.sobel(x), lambda lib: lib.laplace(x),
              lambda lib: lib.gaussian_gradient_magnitude(x, 1.0), lambda lib: lib.zoom(x, 1.5, order=1),
              lambda lib: lib.correlate(x.real.astype("i2"), np.ones((2, 2), dtype))):
        same(f(lucent.ndimage), f(ndi), "linear")


def test_zero_dimensional_input_as_scipy():
    for value in (np.float64(3.7), np.array(200, np.uint8), np.array(-5, np.int16), np.array(True)):
        for f in (lambda lib: lib.gaussian_filter(value, 1.5), lambda lib: lib.uniform_filter(value, 3),
                  lambda lib: lib.median_filter(value, 3), lambda lib: lib.minimum_filter(value, 3),
                  lambda lib: lib.percentile_filter(value, 30, 3), lambda lib: lib.laplace(value),
                  lambda lib: lib.gaussian_laplace(value, 1.0), lambda lib: lib.gaussian_gradient_magnitude(value, 1.0),
                  lambda lib: lib.spline_filter(value), lambda lib: lib.correlate(value, np.array(0.75)),
                  lambda lib: lib.grey_erosion(value, structure=np.array(1.5)), lambda lib: lib.grey_opening(value, 3),
                  lambda lib: lib.binary_erosion(value), lambda lib: lib.gaussian_filter(value, 1, output=np.int32)):
            same(f(lucent.ndimage), f(ndi), "exact")
    for lib in (lucent.ndimage, ndi):
        labels, n = lib.label(np.array(4.0))
        assert labels.dtype == np.int32 and labels.shape == () and int(labels) == n == 1
        assert np.array_equal(lib.distance_transform_edt(np.array(0)), [0.0])
        with pytest.raises(RuntimeError, match="rank must be > 0"):
            lib.shift(np.float64(1.0), 0.5)
        with pytest.raises(RuntimeError, match="rank must be > 0"):
            lib.map_coordinates(np.float64(1.0), np.zeros((0,)))
        with pytest.raises(ValueError, match="at least 2D"):
            lib.rotate(np.ones(5), 10)
        with pytest.raises(np.exceptions.AxisError):
            lib.gaussian_filter1d(np.float64(1.0), 1.0)
        with pytest.raises(np.exceptions.AxisError):
            lib.sobel(np.float64(1.0))


def _selections(x):
    return (lambda: lucent.ndimage.median_filter(x, 3), lambda: lucent.ndimage.minimum_filter(x, 3),
            lambda: lucent.ndimage.grey_erosion(x, size=(2, 2)), lambda: lucent.ndimage.rank_filter(x, 1, 3),
            lambda: lucent.ndimage.maximum_filter1d(x, 3))


def test_selection_of_large_integers_is_exact_in_float64(rng):
    # Devices with float64 (lavapipe, NVIDIA/AMD Vulkan) select integers exactly up to 2**53:
    # int32/uint32 and most int64 values come back as scipy's; beyond 2**53, lucent refuses
    # rather than return other values.
    assert lucent.context().f64, "the test adapter computes float64"
    for dtype in ("i4", "u4", "i8", "u8"):
        x = rng.integers(0, 1000, (9, 10)).astype(dtype)
        x[3, 4] = 2 ** 24 + 1
        x[5, 6] = np.iinfo(dtype).max if dtype in ("i4", "u4") else 2 ** 40 + 3
        for ours, theirs in zip(_selections(x), (lambda: ndi.median_filter(x, 3), lambda: ndi.minimum_filter(x, 3),
                                                 lambda: ndi.grey_erosion(x, size=(2, 2)), lambda: ndi.rank_filter(x, 1, 3),
                                                 lambda: ndi.maximum_filter1d(x, 3))):
            same(ours(), theirs(), "exact")
        if dtype in ("i8", "u8"):
            x[3, 4] = 2 ** 53 + 1
            for f in _selections(x):
                with pytest.raises(ValueError, match=r"2\*\*53"):
                    f()
    y = rng.integers(-2 ** 24, 2 ** 24, (9, 10), endpoint=True).astype("i4")
    same(lucent.ndimage.median_filter(y, 3), ndi.median_filter(y, 3), "exact")


def test_without_float64_computes_in_float32_and_says_so():
    # As on Metal (LUCENT_NO_F64 leaves the adapter's f64 unused): float64 data computed in
    # float32, scipy's dtype returned, one warning per process; selections of integers float32
    # cannot hold refused.
    code = """
import warnings, numpy as np, scipy.ndimage as ndi, lucent
assert not lucent.context().f64
x = np.random.default_rng(1).random((20, 30))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    a = lucent.ndimage.gaussian_filter(x, 2)
    b = lucent.ndimage.uniform_filter(x, 3)
assert a.dtype == b.dtype == np.float64
assert [str(w.message) for w in caught if "float64" in str(w.message)].__len__() == 1, [str(w.message) for w in caught]
err = np.abs(a - ndi.gaussian_filter(x, 2)).max()
assert 1e-9 < err < 1e-5, err  # float32's error, not float64's
y = np.arange(90, dtype="i4").reshape(9, 10)
y[3, 4] = 2 ** 24 + 1
try:
    lucent.ndimage.median_filter(y, 3)
except ValueError as e:
    assert "2**24" in str(e), e
else:
    raise AssertionError("not refused")
"""
    env = {**os.environ, "LUCENT_NO_F64": "1"}
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]


def test_float64_is_computed_in_float64(rng):
    # Errors at float64's level against scipy (float32 would err by ~1e-7).
    x = rng.random((23, 31))
    for ours, theirs in ((lucent.ndimage.gaussian_filter(x, 1.7), ndi.gaussian_filter(x, 1.7)),
                         (lucent.ndimage.gaussian_gradient_magnitude(x, 1.1, mode="wrap"), ndi.gaussian_gradient_magnitude(x, 1.1, mode="wrap")),
                         (lucent.ndimage.correlate(x, rng.random((4, 5)), mode="mirror"), None),
                         (lucent.ndimage.uniform_filter(x, (3, 6), mode="nearest"), ndi.uniform_filter(x, (3, 6), mode="nearest")),
                         (lucent.ndimage.sobel(x, 0), ndi.sobel(x, 0))):
        if theirs is None:
            continue
        assert ours.dtype == np.float64
        assert np.abs(ours - theirs).max() <= 1e-12 * np.abs(theirs).max()
    w = rng.random((4, 5))
    assert np.abs(lucent.ndimage.correlate(x, w, mode="mirror") - ndi.correlate(x, w, mode="mirror")).max() < 1e-12
    assert np.abs(lucent.ndimage.median_filter(x, 3) - ndi.median_filter(x, 3)).max() == 0


def test_float64_interpolation_is_computed_in_float64(rng):
    # The prefilter and the samplers of every order in f64: scipy's values to ~1e-12 (float32
    # errs by ~1e-6 here); the affine maps' coefficients reach the GPU to ~2^-48.
    x = rng.random((17, 23))
    coords = rng.random((2, 40)) * [[16], [22]]
    cases = [
        ("spline_filter 4", lucent.ndimage.spline_filter(x, 4), ndi.spline_filter(x, 4)),
        ("map_coordinates 3", lucent.ndimage.map_coordinates(x, coords, order=3, mode="mirror"),
         ndi.map_coordinates(x, coords, order=3, mode="mirror")),
        ("map_coordinates 5", lucent.ndimage.map_coordinates(x, coords, order=5, mode="reflect"),
         ndi.map_coordinates(x, coords, order=5, mode="reflect")),
        ("shift 2", lucent.ndimage.shift(x, (0.3, -1.7), order=2, mode="nearest"), ndi.shift(x, (0.3, -1.7), order=2, mode="nearest")),
        ("rotate 3", lucent.ndimage.rotate(x, 17, order=3, mode="grid-wrap"), ndi.rotate(x, 17, order=3, mode="grid-wrap")),
        ("zoom 5", lucent.ndimage.zoom(x, 1.3, order=5, mode="mirror"), ndi.zoom(x, 1.3, order=5, mode="mirror")),
        ("affine 1", lucent.ndimage.affine_transform(x, [[0.9, 0.2], [-0.1, 1.1]], order=1, mode="reflect"),
         ndi.affine_transform(x, [[0.9, 0.2], [-0.1, 1.1]], order=1, mode="reflect")),
    ]
    for name, ours, theirs in cases:
        assert ours.dtype == np.float64, name
        err = np.abs(ours - theirs).max() / np.abs(theirs).max()
        assert err < 1e-10, f"{name}: {err:.2e}"


SIGNAL_DTYPES = ["u1", "i2", "f4", "f8", "c8"]


@pytest.mark.parametrize("d1", SIGNAL_DTYPES)
@pytest.mark.parametrize("d2", SIGNAL_DTYPES + ["?"])
def test_signal_convolutions_keep_scipys_dtype(rng, d1, d2):
    def make(shape, dtype):
        if dtype == "c8":
            return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
        if dtype in ("u1", "i2"):  # small integers: the sums stay exact in float32
            return rng.integers(0, 12, shape).astype(dtype)
        return data(rng, shape, dtype)
    a, b = make((13, 10), d1), make((4, 3), d2)
    same(lucent.signal.fftconvolve(a, b), scipy.signal.fftconvolve(a, b), "linear")
    for mode in ("full", "same", "valid"):
        for method in ("direct", "fft"):
            same(lucent.signal.convolve(a, b, mode, method), scipy.signal.convolve(a, b, mode, method), "linear")
            same(lucent.signal.correlate(a, b, mode, method), scipy.signal.correlate(a, b, mode, method), "linear")
    for lib in (lucent.signal, scipy.signal):  # two 0-d inputs: their product
        assert lib.convolve(np.array(3, "u1"), np.array(100, "u1")) == 44


@pytest.mark.parametrize("dtype", ["?", "u1", "i2", "i4", "f4", "f8", "c8", "c16"])
def test_fft_keeps_numpys_dtype(rng, dtype):
    shape = (7, 10)
    x = data(rng, shape, dtype) if dtype[0] != "c" else (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    for name in ("fftn", "ifftn", "fft2", "fft"):
        same(getattr(lucent.fft, name)(x), getattr(np.fft, name)(x), "linear")
    if dtype[0] != "c":
        same(lucent.fft.rfftn(x), np.fft.rfftn(x), "linear")
        same(lucent.fft.rfft(x, axis=0), np.fft.rfft(x, axis=0), "linear")
    same(lucent.fft.irfftn(x, (7, 9), (0, 1)), np.fft.irfftn(x, (7, 9), (0, 1)), "linear")
    same(lucent.fft.irfft(x), np.fft.irfft(x), "linear")


def test_float64_distances_are_computed_in_float64(rng):
    # scipy's float64 distances, with a spacing float32 cannot hold, to ~1e-15 (float32 errs by
    # ~1e-7 here), for boolean, integer and float input alike.
    x = rng.random((19, 23)) > 0.2
    x[0, 0] = False
    want = ndi.distance_transform_edt(x, sampling=(0.3, 1.7))
    for a in (x, x.astype(np.uint8), x.astype(np.float32)):
        got = lucent.ndimage.distance_transform_edt(a, sampling=(0.3, 1.7))
        assert got.dtype == np.float64
        assert np.abs(got - want).max() <= 1e-13 * want.max()
