import numpy as np
import pytest
import scipy.signal
import skimage.restoration

import lucent
from conftest import rel


def blurred_pair(rng, shape, psf_shape):
    x = rng.random(shape)
    psf = rng.random(psf_shape) + 0.1
    psf /= psf.sum()
    return np.clip(scipy.signal.fftconvolve(x, psf, "same"), 0, None), psf


@pytest.mark.parametrize("shape,psf_shape", [((37, 29), (5, 7)), ((11, 17, 13), (3, 5, 1)), ((61,), (9,))])
def test_richardson_lucy_matches_scikit_image(rng, shape, psf_shape):
    image, psf = blurred_pair(rng, shape, psf_shape)
    psf *= 1.3  # scikit-image does not normalise the PSF, and neither does lucent's default here
    for clip in (True, False):
        expected = skimage.restoration.richardson_lucy(image, psf, num_iter=12, clip=clip)
        got = lucent.restoration.richardson_lucy(image, psf, num_iter=12, clip=clip)
        assert got.dtype == np.float32
        assert rel(got, expected) < 1e-4, clip
    expected = skimage.restoration.richardson_lucy(image, psf, num_iter=8, filter_epsilon=0.3)
    assert rel(lucent.restoration.richardson_lucy(image, psf, num_iter=8, filter_epsilon=0.3), expected) < 1e-4


def test_noisy_data_below_zero_is_deconvolved_as_scikit_image_does():
    # scikit-image's own test_richardson_lucy, its data as it builds them (the camera, a 5x5 box,
    # noise from RandomState(0)), which dip below 0: its richardson_lucy runs on them as they are
    # (lucent clipped them to 0 by default before: 9% of the elements differed beyond 1e-3).
    # Where the blurred estimate nears 0 beside negative data the update amplifies rounding, in
    # any float32 computation: lucent may leave no more elements beyond scikit-image's rtol 1e-3
    # than scikit-image's own float32 run does (251 of 262144; lucent 225). Fresh random sparse
    # images were tried instead: their errors have a heavy tail in float32, scikit-image's too
    # (over 150 draws: median 2e-7, worst 6e-3 for scikit-image's float32, 3e-2 for lucent).
    from skimage import data, util
    image = scipy.signal.convolve2d(util.img_as_float(data.camera()), np.ones((5, 5)) / 25, "same")
    image += 0.1 * image.std() * np.random.RandomState(0).standard_normal(image.shape)
    psf = np.ones((5, 5)) / 25
    assert image.min() < 0
    expected = skimage.restoration.richardson_lucy(image, psf, num_iter=5)
    single = skimage.restoration.richardson_lucy(image.astype(np.float32), psf.astype(np.float32), num_iter=5)
    got = lucent.restoration.richardson_lucy(image, psf, num_iter=5)
    beyond = lambda x: int((~np.isclose(x, expected, rtol=1e-3, atol=0)).sum())
    assert beyond(got) <= max(1.5 * beyond(single), 10), (beyond(got), beyond(single))
    clipped = skimage.restoration.richardson_lucy(np.clip(image, 0, None), psf, num_iter=5)
    assert rel(lucent.restoration.richardson_lucy(image, psf, num_iter=5, clip_negative=True), clipped) < 1e-4


def test_even_psfs_use_the_exact_adjoint(rng):
    # scikit-image convolves with the flipped PSF in 'same' mode, one sample off the adjoint of
    # its own blur for even lengths; lucent uses the adjoint: an f64 reference of that.
    image, psf = blurred_pair(rng, (11, 17, 13), (3, 5, 4))

    def crop(full, starts):
        return full[tuple(slice(c, c + n) for c, n in zip(starts, image.shape))]

    def blur(e):
        return crop(scipy.signal.fftconvolve(e, psf, "full"), [(m - 1) // 2 for m in psf.shape])

    def adjoint(y):
        return crop(scipy.signal.fftconvolve(y, psf[::-1, ::-1, ::-1], "full"), [m - 1 - (m - 1) // 2 for m in psf.shape])

    estimate = np.full(image.shape, 0.5)
    for _ in range(12):
        estimate *= adjoint(image / (blur(estimate) + 1e-12))
    assert rel(lucent.restoration.richardson_lucy(image, psf, 12, clip=False), estimate) < 1e-4


def test_lucent_options(rng):
    image, psf = blurred_pair(rng, (40, 36), (7, 7))
    plain = lucent.restoration.richardson_lucy(image, psf, 20, clip=False, init=None, normalize_psf=True)
    for kw in [dict(tv=0.002), dict(accelerate=True), dict(boundary="extended"), dict(boundary="periodic")]:
        other = lucent.restoration.richardson_lucy(image, psf, 20, clip=False, init=None, normalize_psf=True, **kw)
        assert other.shape == plain.shape and np.all(np.isfinite(other))
        assert rel(other, plain) > 1e-6, kw  # the option changed the run
    stopped = lucent.restoration.richardson_lucy(image, psf, 500, clip=False, stop=(1e-2, 1))
    assert np.all(np.isfinite(stopped))
    # one PSF in every region: whole-image RL, to the default guard bands' approximation (exact
    # guards give round-off: tests/it/deconvolve_tiles.rs)
    grid = lucent.restoration.richardson_lucy_grid(image, np.stack([np.stack([psf, psf])] * 2), 10, clip=False)
    assert rel(grid, lucent.restoration.richardson_lucy(image, psf, 10, clip=False)) < 1e-2


def test_negative_values_are_taken_or_clipped():
    # As scikit-image takes them by default; clipped on request. (The Rust API and the CLI
    # refuse them unless asked: RlOptions::allow_negative, --clip-negative.)
    image = np.full((16, 16), 0.5, np.float32)
    image[3, 4] = -1e-9
    psf = np.ones((3, 3), np.float32) / 9
    for clip_negative in (False, True):
        got = lucent.restoration.richardson_lucy(image, psf, 3, clip_negative=clip_negative)
        expected = skimage.restoration.richardson_lucy(np.clip(image, 0, None) if clip_negative else image, psf, 3)
        assert np.all(np.isfinite(got)) and rel(got, expected) < 1e-4, clip_negative


def test_bad_input_raises():
    image = np.ones((16, 16), np.float32)
    with pytest.raises(ValueError):
        lucent.restoration.richardson_lucy(image, np.zeros((3, 3)), 3)
    with pytest.raises(ValueError):
        lucent.restoration.richardson_lucy(image, np.ones((3, 3, 3, 3, 3)), 3)
    with pytest.raises(ValueError, match="non-finite"):
        lucent.restoration.richardson_lucy(np.full((8, 8), np.nan), np.ones((3, 3)), 3)
    with pytest.raises(ValueError, match="boundary"):
        lucent.restoration.richardson_lucy(image, np.ones((3, 3)), 3, boundary="mirror")


@pytest.mark.parametrize("shape,psf_shape,balance", [((37, 29), (5, 7), 0.05), ((11, 17, 13), (3, 4, 2), 0.1), ((61,), (9,), 0.01), ((24, 20), (6, 6), 0.5)])
def test_wiener_matches_scikit_image(rng, shape, psf_shape, balance):
    image, psf = blurred_pair(rng, shape, psf_shape)
    image += 0.01 * rng.standard_normal(shape)
    for clip in (True, False):
        expected = skimage.restoration.wiener(image.astype(np.float64), psf.astype(np.float64), balance, clip=clip)
        got = lucent.restoration.wiener(image, psf, balance, clip=clip)
        assert got.dtype == np.float32 and got.shape == shape
        assert rel(got, expected) < 1e-5, (clip, rel(got, expected))
    # is_real only names the half of a spectrum that is not given here.
    assert np.array_equal(lucent.restoration.wiener(image, psf, balance, is_real=False), lucent.restoration.wiener(image, psf, balance))


def test_wiener_refuses_what_it_does_not_implement(rng):
    image, psf = blurred_pair(rng, (16, 16), (3, 3))
    with pytest.raises(NotImplementedError):
        lucent.restoration.wiener(image, psf, 0.1, reg=np.ones((3, 3)))
    with pytest.raises(NotImplementedError):
        lucent.restoration.wiener(image, np.fft.rfftn(psf, image.shape, axes=(0, 1)), 0.1)
    for bad in ({"balance": -1.0}, {"balance": float("nan")}):
        with pytest.raises(ValueError):
            lucent.restoration.wiener(image, psf, **bad)
    with pytest.raises(ValueError):
        lucent.restoration.wiener(image, np.ones((17, 3)), 0.1)


def test_richardson_lucy_with_a_model_psf(rng):
    # psf_model: the model at the image's scale (odd, at most 65), divided by its sum: the same
    # as making it with lucent.psf.make_psf and passing it.
    optics = dict(dxy=0.1, NA=1.1, ni=1.33, ni0=1.33, ns=1.33, wvl=0.52, model="scalar")
    x3 = rng.random((12, 30, 27)).astype("f4") + 0.1
    got = lucent.restoration.richardson_lucy(x3, psf_model=dict(optics, dz=0.2), num_iter=4)
    psf = lucent.psf.make_psf(11, 27, dz=0.2, **optics)
    want = lucent.restoration.richardson_lucy(x3, psf / psf.sum(dtype=np.float64), num_iter=4)
    assert rel(got, want) < 1e-6
    x2 = x3[0]
    got = lucent.restoration.richardson_lucy(x2, psf_model=dict(optics, pz=2.0), num_iter=4)
    psf = lucent.psf.make_psf([2.0], 27, pz=2.0, **optics)[0]
    assert rel(got, lucent.restoration.richardson_lucy(x2, psf / psf.sum(dtype=np.float64), num_iter=4)) < 1e-6
    with pytest.raises(TypeError, match="not both or neither"):
        lucent.restoration.richardson_lucy(x2, np.ones((3, 3)), psf_model=optics)
    with pytest.raises(ValueError, match="dz"):
        lucent.restoration.richardson_lucy(x3, psf_model=optics)
    with pytest.raises(ValueError, match="follows from the image"):
        lucent.restoration.richardson_lucy(x2, psf_model=dict(optics, nx=9))


def test_blind_richardson_lucy_recovers_a_psf(rng):
    # Beads and blobs on a faint background blurred by a Gaussian (sigma 1.5), started from one
    # twice as wide: the PSF comes back most of the way (measured 0.26-0.40 of the start's error
    # from 10 to 80 iterations; beads alone on black give 0.65, their PSF drifting sharp: the
    # trivial solution), sums to 1, keeps its box; the image is restored.
    x = np.full((64, 64), 0.02)
    idx = rng.integers(6, 58, (2, 40))
    x[idx[0], idx[1]] += rng.uniform(1, 3, 40)
    yy, xx = np.mgrid[:64, :64]
    for cy, cx in rng.uniform(15, 50, (3, 2)):
        x += 0.3 * np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 32)
    g = lambda s: np.exp(-((np.arange(13) - 6.0) ** 2) / (2 * s * s))
    true_psf = np.outer(g(1.5), g(1.5)); true_psf /= true_psf.sum()
    wide = np.outer(g(3.0), g(3.0)); wide /= wide.sum()
    blurred = scipy.signal.fftconvolve(x, true_psf, mode="same").clip(0)
    restored, psf = lucent.restoration.blind_richardson_lucy(blurred, wide, 30)
    assert psf.shape == (13, 13) and restored.shape == x.shape and psf.dtype == np.float32
    assert abs(float(psf.sum()) - 1) < 1e-5 and psf.min() >= 0
    assert np.linalg.norm(psf - true_psf) < 0.5 * np.linalg.norm(wide - true_psf)
    assert rel(restored, x) < rel(lucent.restoration.richardson_lucy(blurred, wide, 30, clip=False, init=None), x)
    with pytest.raises(ValueError, match="zero or periodic"):
        lucent.restoration.blind_richardson_lucy(blurred, wide, 5, boundary="extended")


def test_unsupervised_wiener_follows_scikit_images_law():
    # scikit-image's docstring case on a 128² crop of the camera: 5x5 box blur, noise at 10% of
    # the image's deviation. The draws differ (lucent's generator), so the posterior mean and
    # the chains are compared in law: lucent against scikit-image no farther than scikit-image
    # against itself with another seed (measured 0.066 vs 0.068), the chains' means after the
    # burn-in within 2% (noise) and 5% (prior) of scikit-image's (its two seeds: 0.4%, 0.5%).
    from scipy.signal import convolve2d
    import skimage.data
    img = skimage.data.camera()[100:228, 150:278].astype(float) / 255
    psf = np.ones((5, 5)) / 25
    img = convolve2d(img, psf, "same") + 0.1 * img.std() * np.random.default_rng(0).standard_normal(img.shape)
    s1, c1 = skimage.restoration.unsupervised_wiener(img, psf, rng=1)
    s2, _ = skimage.restoration.unsupervised_wiener(img, psf, rng=2)
    got, chains = lucent.restoration.unsupervised_wiener(img, psf, rng=3)
    assert got.dtype == np.float32 and got.shape == img.shape
    assert rel(got, s1) < 1.5 * rel(s2, s1) + 0.01
    for key, tol in [("noise", 0.02), ("prior", 0.05)]:
        want = np.mean(c1[key][16:])
        assert abs(np.mean(chains[key][16:]) / want - 1) < tol, (key, np.mean(chains[key][16:]), want)
    assert 31 < len(chains["noise"]) == len(chains["prior"]) <= 201
    again, again_chains = lucent.restoration.unsupervised_wiener(img, psf, rng=3)
    assert np.array_equal(again, got) and again_chains == chains
    short, c = lucent.restoration.unsupervised_wiener(img, psf, user_params={"max_num_iter": 20, "burnin": 5, "min_num_iter": 30})
    assert len(c["noise"]) == 21
    with pytest.raises(NotImplementedError):
        lucent.restoration.unsupervised_wiener(img, psf, reg=np.ones((3, 3)))
    with pytest.raises(NotImplementedError):
        lucent.restoration.unsupervised_wiener(img, psf, user_params={"callback": print})
