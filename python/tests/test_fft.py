import os
import subprocess
import sys

import numpy as np
import pytest

import lucent
from conftest import rel

SHAPES = [(17,), (13, 30), (5, 7, 11), (3, 4, 5, 6), (1, 9)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_complex_transforms_match_numpy(rng, shape, norm):
    x = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
    y = lucent.fft.fftn(x, norm=norm)
    assert y.dtype == np.complex64
    assert rel(y, np.fft.fftn(x.astype(np.complex128), norm=norm)) < 1e-5
    assert rel(lucent.fft.ifftn(x, norm=norm), np.fft.ifftn(x.astype(np.complex128), norm=norm)) < 1e-5


@pytest.mark.parametrize("shape", SHAPES)
def test_real_transforms_match_numpy(rng, shape):
    x = rng.standard_normal(shape)  # float64: complex128 as numpy's, computed in f64
    y = lucent.fft.rfftn(x)
    assert y.dtype == np.complex128 and lucent.fft.irfftn(y).dtype == np.float64
    assert rel(y, np.fft.rfftn(x)) < 1e-13
    assert rel(lucent.fft.irfftn(y, s=shape), x) < 1e-13
    assert lucent.fft.irfftn(y).shape[-1] == 2 * (shape[-1] // 2)


def test_axes_and_s_crop_and_pad_as_numpy(rng):
    x = rng.standard_normal((6, 10, 7)).astype(np.float32)
    for s, axes in [((8, 5), (0, 2)), ((4,), (2,)), ((12, 3), (-1, 0)), (None, (1,)), (None, (-1, -3)), (None, (2, 0, 1))]:
        assert rel(lucent.fft.fftn(x, s, axes), np.fft.fftn(x.astype(np.float64), s, axes)) < 1e-5, (s, axes)
        assert rel(lucent.fft.rfftn(x, s, axes), np.fft.rfftn(x.astype(np.float64), s, axes)) < 1e-5, (s, axes)
    spectrum = np.fft.rfftn(x, axes=(0, 2))
    for s in [(6, 7), (5, 12), (9, 4)]:
        expected = np.fft.irfftn(spectrum, s, axes=(0, 2))
        assert rel(lucent.fft.irfftn(spectrum, s, axes=(0, 2)), expected) < 1e-5, s
    spectrum = np.fft.rfftn(x, axes=(2, 0))  # numpy halves the last axis named, here axis 0
    assert rel(lucent.fft.irfftn(spectrum, (7, 6), axes=(2, 0)), np.fft.irfftn(spectrum, (7, 6), axes=(2, 0))) < 1e-5


def test_one_and_two_axis_forms(rng):
    x = rng.standard_normal((5, 12)).astype(np.float32)
    assert rel(lucent.fft.fft(x, 9, axis=0), np.fft.fft(x, 9, axis=0)) < 1e-5
    assert rel(lucent.fft.ifft(x, axis=0), np.fft.ifft(x, axis=0)) < 1e-5
    assert rel(lucent.fft.rfft(x, 7), np.fft.rfft(x, 7)) < 1e-5
    assert rel(lucent.fft.irfft(np.fft.rfft(x), 12), x) < 1e-5
    assert rel(lucent.fft.fft2(x), np.fft.fft2(x)) < 1e-5
    assert rel(lucent.fft.ifft2(x), np.fft.ifft2(x)) < 1e-5
    assert rel(lucent.fft.rfft2(x), np.fft.rfft2(x)) < 1e-5
    assert rel(lucent.fft.irfft2(np.fft.rfft2(x), x.shape), x) < 1e-5


def test_non_contiguous_input(rng):
    x = rng.standard_normal((20, 30)).astype(np.float32)[::2, 1::3].T
    assert rel(lucent.fft.fftn(x), np.fft.fftn(x)) < 1e-5


def test_bad_input_raises():
    with pytest.raises(ValueError, match="non-finite"):
        lucent.fft.fftn(np.array([1.0, np.nan, 2.0], np.float32))
    with pytest.raises(ValueError):
        lucent.fft.fftn(np.zeros((2,) * 5, np.complex64))
    with pytest.raises(ValueError):
        lucent.fft.fftn(np.zeros((3, 4)), axes=(0, 0))
    with pytest.raises(ValueError):
        lucent.fft.fftn(np.zeros((3, 4)), axes=(2,))
    with pytest.raises(ValueError):
        lucent.fft.fftn(np.zeros((3, 4)), s=(0, 4))
    with pytest.raises(ValueError):
        lucent.fft.fftn(np.zeros((0, 4)))
    with pytest.raises(ValueError):
        lucent.fft.irfftn(np.zeros(1, np.complex64))
    with pytest.raises(ValueError, match="norm"):
        lucent.fft.fftn(np.zeros(4), norm="sideways")
    with pytest.raises(TypeError):
        lucent.fft.rfftn(np.zeros(4, np.complex64))


def test_numpy2_s_minus_one_and_out(rng):
    x = rng.standard_normal((6, 9)).astype("f4")
    kw = dict(axes=(0, 1))
    np.testing.assert_allclose(lucent.fft.fftn(x, s=(-1, 12), **kw), np.fft.fftn(x, s=(-1, 12), **kw), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(lucent.fft.rfftn(x, s=(4, -1), **kw), np.fft.rfftn(x, s=(4, -1), **kw), rtol=1e-4, atol=1e-4)
    h = np.fft.rfftn(x).astype("c8")
    for s in ((-1, -1), (-1, 9)):
        np.testing.assert_allclose(lucent.fft.irfftn(h, s=s, **kw), np.fft.irfftn(h, s=s, **kw), rtol=1e-4, atol=1e-4)
    out = np.zeros((6, 9), "c8")
    r = lucent.fft.fft2(x, out=out)
    assert r is out and np.allclose(out, np.fft.fft2(x), atol=1e-4)
    out1 = np.zeros(9, "c8")
    assert lucent.fft.fft(x[0], None, -1, None, out1) is out1
    with pytest.raises(ValueError, match="out"):
        lucent.fft.fft(x[0], out=np.zeros(3, "c8"))


# Double precision: complex128 and float64 computed in f64 (float32 would err by ~1e-7), every
# kind of plan (radices, split exchange, four-step, Rader, Bluestein, real along and across
# lines), s and axes, the norms.
@pytest.mark.parametrize("shape,axes", [((77, 144), None), ((3, 4096), (1,)), ((8192,), None), ((2, 257), (1,)),
                                        ((97, 3), (0,)), ((40009,), None), ((5, 6, 7), (0, 2)), ((2, 3, 4, 5), None)])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_double_precision_transforms_match_numpy(rng, shape, axes, norm):
    x = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    y = lucent.fft.fftn(x, axes=axes, norm=norm)
    assert y.dtype == np.complex128
    assert rel(y, np.fft.fftn(x, axes=axes, norm=norm)) < 1e-13
    assert rel(lucent.fft.ifftn(x, axes=axes, norm=norm), np.fft.ifftn(x, axes=axes, norm=norm)) < 1e-13
    r = x.real
    h = lucent.fft.rfftn(r, axes=axes, norm=norm)
    assert h.dtype == np.complex128 and rel(h, np.fft.rfftn(r, axes=axes, norm=norm)) < 1e-13
    n = [shape[a] for a in (axes or range(len(shape)))]
    back = lucent.fft.irfftn(h, n, axes=axes, norm=norm)
    assert back.dtype == np.float64 and rel(back, r) < 1e-13


def test_double_precision_integers_s_and_out(rng):
    x = rng.integers(-1000, 1000, (12, 33))
    assert rel(lucent.fft.fft(x, 50), np.fft.fft(x, 50)) < 1e-13
    assert rel(lucent.fft.rfft2(x, (-1, 40)), np.fft.rfft2(x, (-1, 40))) < 1e-13
    out = np.empty((12, 33), np.complex128)
    assert lucent.fft.fftn(x.astype(np.float64), out=out) is out and rel(out, np.fft.fftn(x)) < 1e-13
    assert rel(lucent.fft.irfft(np.fft.rfft(x), 33), np.fft.irfft(np.fft.rfft(x), 33)) < 1e-13


def test_double_precision_without_float64_is_float32_and_says_so():
    # As on Metal: complex128 returned, float32's precision, one warning per process.
    code = """
import warnings, numpy as np, lucent
assert not lucent.context().f64
x = np.random.default_rng(2).standard_normal((20, 30))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    y = lucent.fft.fftn(x)
    z = lucent.fft.irfftn(lucent.fft.rfftn(x), x.shape)
assert y.dtype == np.complex128 and z.dtype == np.float64
assert len([w for w in caught if "float64" in str(w.message)]) == 1, [str(w.message) for w in caught]
err = np.abs(y - np.fft.fftn(x)).max() / np.abs(np.fft.fftn(x)).max()
assert 1e-10 < err < 1e-5, err
"""
    env = {**os.environ, "LUCENT_NO_F64": "1"}
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
