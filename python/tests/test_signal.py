import numpy as np
import pytest
import scipy.signal

import lucent
from conftest import rel

PAIRS = [((31,), (7,)), ((23, 17), (5, 4)), ((9, 13, 11), (3, 5, 2)), ((5, 6, 7, 4), (2, 3, 3, 2)), ((6, 4), (9, 2))]


@pytest.mark.parametrize("a_shape,b_shape", PAIRS)
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolutions_match_scipy(rng, a_shape, b_shape, mode):
    a, b = rng.standard_normal(a_shape), rng.standard_normal(b_shape)
    if mode == "valid" and any(m > n for n, m in zip(a_shape, b_shape)) and any(m < n for n, m in zip(a_shape, b_shape)):
        with pytest.raises(ValueError):
            scipy.signal.fftconvolve(a, b, mode)
        with pytest.raises(ValueError):
            lucent.signal.fftconvolve(a, b, mode)
        return
    expected = scipy.signal.fftconvolve(a, b, mode)
    got = lucent.signal.fftconvolve(a, b, mode)
    assert got.dtype == expected.dtype == np.float64
    assert rel(got, expected) < 1e-12  # float64 computed in f64
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    for method in ["direct", "fft", "auto"]:
        assert rel(lucent.signal.convolve(a, b, mode, method), expected) < 1e-12, method
        assert rel(lucent.signal.correlate(a, b, mode, method), scipy.signal.correlate(a, b, mode, "direct")) < 1e-12, method
        got32 = lucent.signal.convolve(a32, b32, mode, method)
        assert got32.dtype == np.float32 and rel(got32, expected) < 1e-5, method
    c = a + 1j * rng.standard_normal(a_shape)
    assert rel(lucent.signal.correlate(c, b, mode), scipy.signal.correlate(c, b, mode)) < 1e-12


def test_integer_input_keeps_scipys_dtype():
    a = np.arange(12, dtype=np.int16).reshape(3, 4)
    b = np.ones((2, 2), np.uint8)
    for method in ["direct", "fft"]:
        got, want = lucent.signal.convolve(a, b, method=method), scipy.signal.convolve(a, b, method=method)
        assert got.dtype == want.dtype == np.int16 and np.array_equal(got, want)
    assert lucent.signal.fftconvolve(a, b).dtype == np.float64


def test_readme_example():
    total = lucent.signal.fftconvolve(np.ones((64, 64), "f4"), np.ones((5, 5), "f4"), mode="same").sum()
    assert total == scipy.signal.fftconvolve(np.ones((64, 64)), np.ones((5, 5)), mode="same").round().sum()


def test_bad_input_raises():
    with pytest.raises(ValueError, match="dimensionality"):
        lucent.signal.fftconvolve(np.ones((3, 3)), np.ones(3))
    with pytest.raises(ValueError):
        lucent.signal.fftconvolve(np.ones((3, 3)), np.ones((3, 3)), mode="middle")
    with pytest.raises(ValueError):
        lucent.signal.convolve(np.ones((3, 3)), np.ones((3, 3)), method="fast")
    with pytest.raises(ValueError):
        lucent.signal.fftconvolve(np.ones((0, 3)), np.ones((1, 1)))
    with pytest.raises(ValueError, match="non-finite"):
        lucent.signal.fftconvolve(np.array([1.0, np.inf]), np.ones(1))
    with pytest.raises(ValueError, match="incompatible shapes"):
        lucent.signal.fftconvolve(np.ones((3, 3)), np.ones((2, 3)), axes=[1])  # 3 and 2 along axis 0
