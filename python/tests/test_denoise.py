import numpy as np
import pytest

import lucent
from conftest import rel


def test_options_reach_the_filter(rng):
    x = rng.random((6, 20, 18)).astype(np.float32)
    default = lucent.denoise.adaptive_filter(x)
    assert default.shape == x.shape and default.dtype == np.float32
    assert rel(default, x) > 1e-3  # it filtered
    assert rel(lucent.denoise.adaptive_filter(x, sigma=0.5), default) > 1e-4
    assert rel(lucent.denoise.adaptive_filter(x, method="fft"), lucent.denoise.adaptive_filter(x, method="spatial")) < 1e-4
    # dims=2 filters each slice (a batch shares one largest tensor norm, so compare one slice)
    assert rel(lucent.denoise.adaptive_filter(x[:1], dims=2)[0], lucent.denoise.adaptive_filter(x[0])) < 1e-5
    assert rel(lucent.denoise.adaptive_filter(x, dims=2), default) > 1e-3


def test_constant_data_comes_back(rng):
    flat = np.full((5, 12, 14), 0.3, np.float32)
    assert np.allclose(lucent.denoise.adaptive_filter(flat), flat, atol=1e-5)


def test_bad_input_raises():
    x = np.ones((6, 8, 8), np.float32)
    with pytest.raises(ValueError):
        lucent.denoise.adaptive_filter(x, dims=5)
    with pytest.raises(ValueError):
        lucent.denoise.adaptive_filter(x, sigma=-1)
    with pytest.raises(ValueError, match="method"):
        lucent.denoise.adaptive_filter(x, method="magic")
    with pytest.raises(ValueError, match="non-finite|NaN"):
        lucent.denoise.adaptive_filter(np.full((8, 8), np.nan, np.float32))
