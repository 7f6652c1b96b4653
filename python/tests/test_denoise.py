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


def _tv_error(restoration, got, x, weight, eps, channel_axis):
    """The relative error of ``got`` against scikit-image stopped at its own step or one either
    side, per channel (the stopping rule compares energies that float32 and float64 round
    differently; a result at step k is scikit-image's run for k + 1 steps with eps=0)."""
    if channel_axis is not None:
        return max(_tv_error(restoration, np.take(got, c, channel_axis), np.take(x, c, channel_axis), weight, eps, None)
                   for c in range(x.shape[channel_axis]))
    stopped = restoration.denoise_tv_chambolle(x, weight=weight, eps=eps)
    steps = next(n for n in range(1, 201) if np.array_equal(restoration.denoise_tv_chambolle(x, weight=weight, eps=0, max_num_iter=n), stopped))
    return min(rel(got, restoration.denoise_tv_chambolle(x, weight=weight, eps=0, max_num_iter=n)) for n in {max(1, steps - 1), steps, min(200, steps + 1)})


@pytest.mark.parametrize("shape, channel_axis, weight, eps", [((37, 53), None, 0.1, 2e-4), ((9, 11, 13), None, 0.05, 1e-4),
                                                              ((31, 29, 3), -1, 0.2, 2e-4), ((61,), None, 0.3, 2e-4)])
def test_tv_chambolle_is_scikit_images(rng, shape, channel_axis, weight, eps):
    restoration = pytest.importorskip("skimage.restoration")
    x = rng.random(shape)
    if channel_axis is not None:
        x *= 1 + 3 * np.arange(shape[channel_axis])          # channels that stop at other steps
    got = lucent.restoration.denoise_tv_chambolle(x, weight=weight, eps=eps, channel_axis=channel_axis)
    assert got.dtype == np.float32 and _tv_error(restoration, got, x, weight, eps, channel_axis) < 1e-5
    # Unsigned integers scaled as img_as_float scales them.
    counts = (rng.random(shape) * 255).astype(np.uint8)
    got = lucent.restoration.denoise_tv_chambolle(counts, weight=weight)
    assert _tv_error(restoration, got, counts / 255.0, weight, 2e-4, None) < 1e-5


def test_tv_chambolle_refuses_bad_input():
    x = np.ones((8, 8), "f4")
    for kwargs in ({"weight": 0.0}, {"eps": -1.0}, {"max_num_iter": 0}, {"channel_axis": 2}):
        with pytest.raises(ValueError):
            lucent.restoration.denoise_tv_chambolle(x, **kwargs)
    with pytest.raises(ValueError):
        lucent.restoration.denoise_tv_chambolle(np.ones((2, 3, 4, 5), "f4"))
    with pytest.raises(ValueError):
        lucent.restoration.denoise_tv_chambolle(np.array([[1.0, np.nan]], "f4"))
    with pytest.raises(TypeError):
        lucent.restoration.denoise_tv_chambolle(np.ones((4, 4), np.int16))


@pytest.mark.filterwarnings("ignore:image is size")
@pytest.mark.parametrize("shape, channel_axis", [((64, 48), None), ((9, 10, 11), None), ((40, 30, 3), -1), ((3, 40, 30), 0), ((7,), None)])
def test_estimate_sigma_is_scikit_images(rng, shape, channel_axis):
    restoration = pytest.importorskip("skimage.restoration")
    pytest.importorskip("pywt")
    x = rng.normal(0.5, 0.07, shape)
    x[tuple(slice(0, max(1, n // 3)) for n in shape)] = 0.25          # a flat patch: zero details
    for average in (False, True):
        want = restoration.estimate_sigma(x, average_sigmas=average, channel_axis=channel_axis)
        got = lucent.restoration.estimate_sigma(x, average_sigmas=average, channel_axis=channel_axis)
        np.testing.assert_allclose(got, want, rtol=1e-12)
    counts = (rng.random(shape) * 200).astype(np.uint8)
    np.testing.assert_allclose(lucent.restoration.estimate_sigma(counts, channel_axis=channel_axis),
                               restoration.estimate_sigma(counts, channel_axis=channel_axis), rtol=1e-12)
    with pytest.raises(ValueError):
        lucent.restoration.estimate_sigma(np.array([1.0, np.nan, 2.0, 3.0, 4.0, 5.0]))


@pytest.mark.parametrize("shape, channel_axis, kwargs", [
    ((23, 31), None, dict(h=1.0)),
    ((17, 19, 3), -1, dict(patch_size=4, patch_distance=5, h=1.2, sigma=0.1)),
    ((2, 15, 12), 0, dict(patch_size=5, patch_distance=3, h=0.9)),
    ((21, 18), None, dict(two_level=True)),
    ((6, 7, 8), None, dict(patch_size=3, patch_distance=2, h=1.0, sigma=0.05)),
    ((5, 6, 7, 2), -1, dict(patch_size=4, patch_distance=1, h=1.1)),
])
def test_nl_means_is_scikit_images(rng, shape, channel_axis, kwargs):
    # h large enough that no patch distance comes near scikit-image's cutoff of 5 (where float32
    # and float64 could part by one weight of e^-5), except the two-level image's (its distances
    # are either small or far beyond it) at the defaults.
    restoration = pytest.importorskip("skimage.restoration")
    kwargs = dict(kwargs)
    x = rng.random(shape)
    if kwargs.pop("two_level", False):
        x = np.where(x > 0.5, 1.0, 0.0) + 0.01 * x
    want = restoration.denoise_nl_means(x, fast_mode=True, channel_axis=channel_axis, **kwargs)
    got = lucent.restoration.denoise_nl_means(x, channel_axis=channel_axis, **kwargs)
    assert got.dtype == np.float32 and rel(got, want) < 2e-6
    # Unsigned integers scaled as img_as_float scales them.
    counts = (rng.random(shape) * 255).astype(np.uint8)
    kwargs.setdefault("h", 1.0)
    assert rel(lucent.restoration.denoise_nl_means(counts, channel_axis=channel_axis, **kwargs),
               restoration.denoise_nl_means(counts, channel_axis=channel_axis, **kwargs)) < 2e-6


@pytest.mark.parametrize("shape, channel_axis, kwargs", [
    ((15, 13), None, dict(patch_size=5, patch_distance=4, h=1.0)),
    ((9, 8, 3), -1, dict(patch_size=4, patch_distance=3, h=1.2, sigma=0.1)),
    ((6, 7, 5), None, dict(patch_size=3, patch_distance=2, h=1.0, sigma=0.05)),
])
def test_nl_means_slow_mode_is_scikit_images(rng, shape, channel_axis, kwargs):
    # float32 input: scikit-image's slow mode then computes in float32, in the device's order.
    restoration = pytest.importorskip("skimage.restoration")
    x = rng.random(shape).astype(np.float32)
    want = restoration.denoise_nl_means(x, fast_mode=False, channel_axis=channel_axis, **kwargs)
    got = lucent.restoration.denoise_nl_means(x, fast_mode=False, channel_axis=channel_axis, **kwargs)
    assert got.dtype == np.float32 and rel(got, want) < 2e-6


def test_nl_means_refuses_what_it_does_not_do():
    x = np.ones((8, 9), "f4")
    with pytest.raises(ValueError):
        lucent.restoration.denoise_nl_means(x, patch_size=1, fast_mode=False)
    with pytest.raises(ValueError):
        lucent.restoration.denoise_nl_means(np.ones((4, 5, 6, 2), "f4"), fast_mode=False, channel_axis=-1)
    with pytest.raises(ValueError):
        lucent.restoration.denoise_nl_means(np.ones((3, 4, 5, 6), "f4"))
    with pytest.raises(ValueError):
        lucent.restoration.denoise_nl_means(x, h=0.0)


def _psnr(x, truth):
    return 10 * np.log10(np.ptp(truth) ** 2 / np.mean((x - truth) ** 2))


def _phantom(shape):
    grids = np.meshgrid(*[np.arange(n) / n for n in shape], indexing="ij")
    if len(shape) == 3:
        z, y, x = grids
        return (0.2 + 0.5 * (((x - .5) ** 2 / .12 + (y - .45) ** 2 / .08 + (z - .5) ** 2 / .1) < 1)
                + 0.3 * (((x - .4) ** 2 + (y - .6) ** 2 + (z - .45) ** 2) < .02) + 0.2 * x)
    y, x = grids
    return 0.3 + 0.4 * ((abs(x - .4) < .25) & (abs(y - .5) < .2)) + 0.15 * np.sin(20 * x) * np.cos(9 * y)


@pytest.mark.parametrize("shape, sigma", [((27, 25, 23), 0.1), ((97, 79), 0.08), ((21, 19, 6), 0.15)])
def test_bm4d_is_within_a_third_of_a_db_of_bm4d(rng, shape, sigma):
    bm4d = pytest.importorskip("bm4d")
    truth = _phantom(shape)
    noisy = (truth + sigma * rng.standard_normal(shape)).astype("f4")
    want = np.squeeze(bm4d.bm4d(noisy.astype(float), sigma))
    got = lucent.denoise.bm4d(noisy, sigma)
    assert got.shape == noisy.shape and got.dtype == np.float32
    assert _psnr(got, truth) > _psnr(want, truth) - 0.3
    # The first stage alone, and the second on bm4d's own first estimate.
    ht = np.squeeze(bm4d.bm4d(noisy.astype(float), sigma, stage_arg=bm4d.BM4DStages.HARD_THRESHOLDING))
    assert _psnr(lucent.denoise.bm4d(noisy, sigma, stage_arg="hard_thresholding"), truth) > _psnr(ht, truth) - 0.3
    wiener = lucent.denoise.bm4d(noisy, sigma, stage_arg=ht.reshape(noisy.shape).astype("f4"))
    assert _psnr(wiener, truth) > _psnr(want, truth) - 0.3


def _correlated(rng, shape, sigma, taps):
    """White noise of sigma filtered (circularly) by `taps` ({offset: weight}), and its PSD in
    bm4d's convention (N · sigma² · |DFT of the filter|²)."""
    kernel = np.zeros(shape)
    for offset, weight in taps.items():
        kernel[offset] = weight
    spectrum = np.fft.fftn(kernel)
    noise = np.real(np.fft.ifftn(np.fft.fftn(rng.standard_normal(shape)) * spectrum)) * sigma
    return noise, np.prod(shape) * sigma ** 2 * np.abs(spectrum) ** 2


@pytest.mark.parametrize("shape, sigma, taps", [
    ((33, 31, 29), 0.06, {(0, 0, 0): 1.0, (0, 0, 1): 0.6, (0, 1, 0): -0.3, (1, 0, 1): 0.4}),
    ((97, 79), 0.05, {(0, 0): 1.0, (0, 1): 0.7, (1, 0): 0.5}),
])
def test_bm4d_of_correlated_noise_against_bm4d(rng, monkeypatch, shape, sigma, taps):
    bm4d = pytest.importorskip("bm4d")
    monkeypatch.setattr(np, "trapz", np.trapezoid, raising=False)  # bm4d 4.2.5 calls numpy 1's name
    truth = _phantom(shape)
    noise, psd = _correlated(rng, shape, sigma, taps)
    noisy = (truth + noise).astype("f4")
    got = lucent.denoise.bm4d(noisy, psd)
    assert got.shape == noisy.shape and got.dtype == np.float32
    want = np.squeeze(bm4d.bm4d(noisy.astype(float), psd))
    assert _psnr(got, truth) > _psnr(want, truth) - 0.3
    # The PSD is worth having: better than taking the noise as white of its standard deviation.
    assert _psnr(got, truth) > _psnr(lucent.denoise.bm4d(noisy, float(np.std(noise))), truth) + 0.3


def test_bm4d_profile_fields_and_bad_input(rng):
    x = rng.random((24, 24)).astype("f4")
    plain = lucent.denoise.bm4d(x, 0.1)
    wider = lucent.denoise.bm4d(x, 0.1, profile={"search_window_ht": (9, 9, 0), "mu2": 1.0})
    assert not np.array_equal(plain, wider)
    with pytest.raises(ValueError, match="sigma"):
        lucent.denoise.bm4d(x, 0.0)
    with pytest.raises(ValueError, match="PSD"):
        lucent.denoise.bm4d(x, np.ones((24, 23)))
    with pytest.raises(ValueError, match="PSD"):
        lucent.denoise.bm4d(x, -np.ones_like(x))
    with pytest.raises(ValueError, match="PSD"):
        lucent.denoise.bm4d(x, np.zeros_like(x))
    with pytest.raises(ValueError, match="blocks"):
        lucent.denoise.bm4d(x, 0.1, profile={"bs_ht": (9, 9, 1)})
    with pytest.raises(ValueError, match="unknown|bm4d"):
        lucent.denoise.bm4d(x, 0.1, profile={"lambda": 2.0})
    with pytest.raises(ValueError, match="stage_arg"):
        lucent.denoise.bm4d(x, 0.1, stage_arg="wiener_only")
    with pytest.raises(ValueError):
        lucent.denoise.bm4d(rng.random((3, 3)).astype("f4"), 0.1)


@pytest.mark.parametrize("shape, channel_axis", [((37, 29), None), ((13, 16, 11), None), ((21, 18, 3), -1)])
def test_denoise_invariant_is_scikit_images(rng, shape, channel_axis):
    restoration = pytest.importorskip("skimage.restoration")
    x = rng.random(shape).astype("f4")
    kwargs = {"weight": 0.2} if channel_axis is None else {"weight": 0.2, "channel_axis": -1}
    # The same denoiser on both sides: the masking and interpolation are what is compared. TV
    # runs a fixed 50 iterations (eps 0): its stopping rule would turn the interpolations'
    # rounding (1e-7) into a different iteration count now and then (seed 2661342135: 5.5e-4).
    fixed = dict(kwargs, eps=0.0, max_num_iter=50)
    want = restoration.denoise_invariant(x, restoration.denoise_tv_chambolle, stride=3, denoiser_kwargs=fixed)
    got = lucent.restoration.denoise_invariant(x, restoration.denoise_tv_chambolle, stride=3, denoiser_kwargs=fixed)
    assert got.shape == x.shape and np.abs(got - want).max() < 2e-5
    want = restoration.denoise_invariant(x, restoration.denoise_tv_chambolle, stride=3, denoiser_kwargs=kwargs)
    # With lucent's TV (equal to scikit-image's within its stopping rule).
    ours = lucent.restoration.denoise_invariant(x, lucent.restoration.denoise_tv_chambolle, stride=3, denoiser_kwargs=kwargs)
    assert np.abs(ours - want).max() < 1e-3


def test_calibrate_denoiser_is_scikit_images(rng):
    restoration = pytest.importorskip("skimage.restoration")
    x = np.zeros((40, 36), "f4")
    x[10:30, 8:26] = 1
    noisy = (x + 0.3 * rng.standard_normal(x.shape)).astype("f4")
    params = {"weight": [0.02, 0.08, 0.2, 0.5]}
    _, (tested, want) = restoration.calibrate_denoiser(noisy, restoration.denoise_tv_chambolle, params, extra_output=True)
    best, (ours, got) = lucent.restoration.calibrate_denoiser(noisy, lucent.restoration.denoise_tv_chambolle, params,
                                                              extra_output=True)
    assert ours == tested
    assert np.allclose(got, want, rtol=2e-3)
    assert int(np.argmin(got)) == int(np.argmin(want))
    # Over every grid (approximate_loss=False) and with block matching as the denoiser.
    _, (_, full) = lucent.restoration.calibrate_denoiser(noisy, lucent.restoration.denoise_tv_chambolle, params,
                                                         approximate_loss=False, extra_output=True)
    _, (_, full_want) = restoration.calibrate_denoiser(noisy, restoration.denoise_tv_chambolle, params,
                                                       approximate_loss=False, extra_output=True)
    assert np.allclose(full, full_want, rtol=2e-3)
    _, (sigmas, bm_losses) = lucent.restoration.calibrate_denoiser(noisy, lambda im, sigma_psd: lucent.denoise.bm4d(im, sigma_psd),
                                                                   {"sigma_psd": [0.05, 0.3, 1.5]}, extra_output=True)
    assert int(np.argmin(bm_losses)) == 1, bm_losses
    assert best(noisy).shape == noisy.shape


@pytest.mark.parametrize("shape, channel_axis, kwargs", [
    ((29, 23), None, {"weight": 4.0}),
    ((17, 21, 3), -1, {"weight": 2.0, "isotropic": False, "eps": 2e-3}),
    ((3, 19, 14), 0, {"weight": 6.0, "max_num_iter": 30}),
    ((12, 9, 4), None, {"weight": 1.0, "eps": 1e-4}),
])
def test_tv_bregman_is_scikit_images(rng, shape, channel_axis, kwargs):
    restoration = pytest.importorskip("skimage.restoration")
    x = rng.random(shape).astype("f4")
    want = restoration.denoise_tv_bregman(x, channel_axis=channel_axis, **kwargs)
    got = lucent.restoration.denoise_tv_bregman(x, channel_axis=channel_axis, **kwargs)
    assert got.shape == want.shape
    # float32 both sides; the stopping rule may fall a sweep apart (then a sweep's change, ~eps).
    assert np.abs(got - want).max() < max(5 * kwargs.get("eps", 1e-3), 1e-4)


def test_tv_bregman_refuses_bad_input(rng):
    with pytest.raises(ValueError, match="2 × 2"):
        lucent.restoration.denoise_tv_bregman(rng.random((1, 9)).astype("f4"))
    with pytest.raises(ValueError, match="weight"):
        lucent.restoration.denoise_tv_bregman(rng.random((9, 9)).astype("f4"), weight=0.0)
    with pytest.raises(ValueError):
        lucent.restoration.denoise_tv_bregman(rng.random((2, 3, 4, 5)).astype("f4"))
    # scikit-image's img_as_float as the other denoisers apply it: unsigned scaled, signed refused.
    with pytest.raises(TypeError, match="signed integer"):
        lucent.restoration.denoise_tv_bregman(np.ones((9, 9), np.int32))
    u8 = (rng.random((9, 9)) * 255).astype(np.uint8)
    assert np.allclose(lucent.restoration.denoise_tv_bregman(u8), lucent.restoration.denoise_tv_bregman(u8 / 255.0), atol=1e-5)
