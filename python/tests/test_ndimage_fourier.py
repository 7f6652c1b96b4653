import numpy as np
import pytest
import scipy.ndimage as ndi

import lucent

SHAPES = [(17,), (6, 9), (5, 6, 7), (3, 4, 5, 6)]
FILTERS = {"fourier_gaussian": [1.3, 0.7, 2.1, 0.5], "fourier_uniform": [3.5, 2.0, 4.25, 1.5],
           "fourier_ellipsoid": [4.1, 2.3, 5.0], "fourier_shift": [1.3, -0.7, 2.1, 40.5]}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["c8", "c16", "f4", "f8", "i2"])
@pytest.mark.parametrize("name", list(FILTERS))
def test_fourier_filters_match_scipy(rng, shape, dtype, name):
    # Full spectra and half spectra (n ≥ 0 along the last axis and along the first), scipy's
    # result dtypes; complex128, float64 and integers computed in f64, the others in float32.
    if name == "fourier_ellipsoid" and len(shape) > 3:
        with pytest.raises(NotImplementedError):
            lucent.ndimage.fourier_ellipsoid(np.ones(shape), 1.0)
        return
    x = rng.standard_normal(shape) * 10
    if dtype[0] == "c":
        x = x + 1j * rng.standard_normal(shape)
    x = x.astype(dtype)
    values = FILTERS[name][:len(shape)]
    tol = 2e-6 if dtype in ("c8", "f4") else 1e-12
    for n, axis in ((-1, -1), (2 * shape[-1] - 1, -1), (2 * shape[0] - 2, 0)):
        want = getattr(ndi, name)(x, values, n=n, axis=axis)
        got = getattr(lucent.ndimage, name)(x, values, n=n, axis=axis)
        assert got.dtype == want.dtype
        assert np.abs(got - want).max() <= tol * np.abs(want).max(), (n, axis)
    scalar = getattr(lucent.ndimage, name)(x, 2.5)
    assert np.abs(scalar - getattr(ndi, name)(x, 2.5)).max() <= tol * np.abs(scalar).max()


def test_fourier_gaussian_equals_a_periodic_gaussian_filter(rng):
    # ifftn(fourier_gaussian(fftn(x))) is x filtered by a Gaussian with wrap-around.
    x = rng.random((32, 27))
    y = np.fft.ifftn(lucent.ndimage.fourier_gaussian(np.fft.fftn(x), [2.0, 1.5])).real
    assert np.abs(y - ndi.gaussian_filter(x, [2.0, 1.5], mode="wrap", truncate=8)).max() < 1e-5


def test_fourier_filters_refuse_bad_arguments():
    x = np.ones((4, 6), complex)
    with pytest.raises(ValueError, match="half spectrum"):
        lucent.ndimage.fourier_uniform(x, 2.0, n=20)
    with pytest.raises(ValueError):
        lucent.ndimage.fourier_gaussian(x, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="non-finite|finite"):
        lucent.ndimage.fourier_gaussian(x, np.inf)
    with pytest.raises(ValueError, match="axis"):
        lucent.ndimage.fourier_ellipsoid(x, 1.0, axis=2)
