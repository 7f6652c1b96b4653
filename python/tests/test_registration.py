import numpy as np
import pytest
import scipy.ndimage as ndi
import skimage.feature
import skimage.registration

import lucent
from conftest import rel


@pytest.mark.parametrize("shape", [(64, 45), (19, 24, 21), (101,)])
@pytest.mark.parametrize("upsample", [1, 10])
def test_phase_cross_correlation_matches_scikit_image(rng, shape, upsample):
    reference = ndi.gaussian_filter(rng.random(shape), 1.5)
    true = rng.uniform(-4, 4, len(shape))
    moving = ndi.shift(reference, true, mode="wrap")
    expected = skimage.registration.phase_cross_correlation(reference, moving, upsample_factor=upsample)
    got = lucent.registration.phase_cross_correlation(reference, moving, upsample_factor=upsample)
    assert np.allclose(got[0], expected[0], atol=1.01 / upsample)
    assert abs(got[1] - expected[1]) < 1e-3
    spectra = lucent.registration.phase_cross_correlation(np.fft.fftn(reference), np.fft.fftn(moving), space="fourier",
                                                          upsample_factor=upsample, normalization=None)
    expected = skimage.registration.phase_cross_correlation(np.fft.fftn(reference), np.fft.fftn(moving), space="fourier",
                                                            upsample_factor=upsample, normalization=None)
    assert np.allclose(spectra[0], expected[0], atol=1.01 / upsample)


def test_masked_registration_matches_scikit_image(rng):
    reference = ndi.gaussian_filter(rng.random((48, 40)), 1.0)
    moving = np.roll(reference, (5, -3), axis=(0, 1))
    rmask = np.ones(reference.shape, bool)
    rmask[:8] = False
    mmask = rng.random(moving.shape) > 0.1
    expected = skimage.registration.phase_cross_correlation(reference, moving, reference_mask=rmask, moving_mask=mmask)
    got = lucent.registration.phase_cross_correlation(reference, moving, reference_mask=rmask, moving_mask=mmask)
    assert np.array_equal(got[0], expected[0]) and np.isnan(got[1]) and np.isnan(got[2])


def test_cross_correlate_masked_matches_scikit_image(rng):
    from skimage.registration._masked_phase_cross_correlation import cross_correlate_masked
    a, b = rng.random((21, 17)), rng.random((21, 17))
    ma, mb = rng.random(a.shape) > 0.2, rng.random(b.shape) > 0.3
    expected = cross_correlate_masked(a, b, ma, mb)
    assert rel(lucent.registration.cross_correlate_masked(a, b, ma, mb), expected) < 1e-4


@pytest.mark.parametrize("pad_input", [False, True])
@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap"])
def test_match_template_matches_scikit_image(rng, pad_input, mode):
    image = rng.random((37, 41))
    template = image[5:14, 20:31] + 0.1 * rng.random((9, 11))
    expected = skimage.feature.match_template(image, template, pad_input=pad_input, mode=mode)
    assert rel(lucent.feature.match_template(image, template, pad_input=pad_input, mode=mode), expected) < 1e-4
    volume = rng.random((13, 15, 12))
    expected = skimage.feature.match_template(volume, volume[2:7, 3:9, 4:8], pad_input=pad_input, mode=mode)
    assert rel(lucent.feature.match_template(volume, volume[2:7, 3:9, 4:8], pad_input=pad_input, mode=mode), expected) < 1e-4


def test_bad_input_raises():
    with pytest.raises(ValueError):
        lucent.registration.phase_cross_correlation(np.ones((8, 8)), np.ones((8, 9)))
    with pytest.raises(ValueError):
        lucent.registration.phase_cross_correlation(np.ones((8, 8)), np.ones((8, 8)), upsample_factor=0.5)
    # A fractional factor misplaces the refinement's grid (scikit-image returns wrong shifts):
    # refused, with masks too.
    a = np.random.default_rng(3).random((32, 32))
    for masks in [{}, {"reference_mask": np.ones((32, 32), bool), "moving_mask": np.ones((32, 32), bool)}]:
        with pytest.raises(ValueError, match="whole number"):
            lucent.registration.phase_cross_correlation(a, np.roll(a, (-3, 5), axis=(0, 1)), upsample_factor=1.5, **masks)
    with pytest.raises(NotImplementedError):
        lucent.registration.phase_cross_correlation(np.ones((8, 8)), np.ones((8, 8)), disambiguate=True)
    with pytest.raises(ValueError):
        lucent.feature.match_template(np.ones((8, 8)), np.ones((9, 3)))
    with pytest.raises(ValueError):
        lucent.feature.match_template(np.ones((8, 8)), np.ones((3, 3)), mode="edge", constant_values=2)
