import warnings

import numpy as np
import pytest
import skimage.transform

import lucent
from conftest import rel


def disk_image(rng, n):
    rows, cols = np.mgrid[:n, :n]
    inside = (rows - n // 2) ** 2 + (cols - n // 2) ** 2 < (n // 3) ** 2
    return (inside * (0.5 + rng.random((n, n)))).astype(np.float32)


# scikit-image rotates bilinearly and sums; lucent integrates each pixel's exact footprint (or
# back-projects with its adjoint): the two discretisations differ by about a percent on random
# pixel values, and the geometry (centre, angles, orientation) must agree for that to hold.
@pytest.mark.parametrize("n", [63, 64])
def test_radon_and_iradon_match_scikit_image(rng, n):
    image = disk_image(rng, n)
    theta = np.sort(rng.uniform(0, 180, 50))
    assert rel(lucent.transform.radon(image, theta), skimage.transform.radon(image, theta)) < 0.01
    assert rel(lucent.transform.radon(image, theta, circle=False), skimage.transform.radon(image, theta, circle=False)) < 0.01
    even = np.linspace(0, 180, 90, endpoint=False)
    sinogram = skimage.transform.radon(image, even)
    for name in ["ramp", "shepp-logan", "cosine", "hamming", "hann", None]:
        assert rel(lucent.transform.iradon(sinogram, even, filter_name=name), skimage.transform.iradon(sinogram, even, filter_name=name)) < 0.02, name
    wide = skimage.transform.radon(image, even, circle=False)
    assert rel(lucent.transform.iradon(wide, even, circle=False), skimage.transform.iradon(wide, even, circle=False)) < 0.02


def test_radon_warns_outside_the_circle():
    with pytest.warns(UserWarning, match="outside the reconstruction circle"):
        lucent.transform.radon(np.ones((16, 16), np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lucent.transform.radon(np.ones((16, 16), np.float32), circle=False)


def test_astra_geometry_functions(rng):
    angles = np.linspace(0, np.pi, 60, endpoint=False)
    stack = np.stack([disk_image(rng, 33) for _ in range(3)])
    sinograms = lucent.tomography.radon(stack, angles)
    assert sinograms.shape == (3, 60, 33)
    assert rel(sinograms[1], lucent.tomography.radon(stack[1], angles)) < 1e-6
    assert np.allclose(sinograms.sum(axis=2), stack.sum(axis=(1, 2))[:, None], rtol=1e-4)
    # back-projection is the adjoint of projection: <Ax, y> = <x, A'y>
    y = rng.random((60, 33)).astype(np.float32)
    lhs = float(np.vdot(lucent.tomography.radon(stack[0], angles).astype(np.float64), y))
    rhs = float(np.vdot(stack[0].astype(np.float64), lucent.tomography.backproject(y, angles, 33)))
    assert abs(lhs - rhs) < 1e-4 * abs(lhs)
    recon = lucent.tomography.fbp(sinograms[0], angles)
    assert rel(recon, stack[0]) < 0.35
    em, kl = lucent.tomography.mlem(sinograms[0], angles, 15)
    assert len(kl) == 15 and kl[-1] < kl[0] and em.min() >= 0


def test_bad_input_raises():
    with pytest.raises(ValueError):
        lucent.transform.radon(np.ones((4, 4, 4)))
    with pytest.raises(ValueError, match="theta"):
        lucent.transform.iradon(np.ones((16, 10)), np.arange(9))
    with pytest.raises(NotImplementedError):
        lucent.transform.iradon(np.ones((16, 10)), interpolation="cubic")
    with pytest.raises(ValueError):
        lucent.tomography.radon(np.ones((8, 9)), [0.0])
    with pytest.raises(ValueError, match="angle"):
        lucent.tomography.radon(np.ones((8, 8)), [np.nan])
    with pytest.raises(ValueError):
        lucent.tomography.fbp(np.ones((4, 8)), np.arange(4), filter="box")


@pytest.mark.parametrize("size", [16, 17])
@pytest.mark.parametrize("theta", [0, 90])
@pytest.mark.parametrize("circle", [False, True])
def test_iradon_centre_is_the_same_from_opposite_angles(size, theta, circle):
    # scikit-image's check_iradon_center: one ray through the middle, reconstructed from θ and
    # θ + 180°. lucent's results are float32: they agree to its precision (scikit-image's own
    # test compares float64 results with allclose's atol of 1e-8), and with scikit-image's.
    length = size if circle else int(np.ceil(np.sqrt(2) * size))
    sinogram = np.zeros((length, 1))
    sinogram[length // 2, 0] = 1.0
    here = lucent.transform.iradon(sinogram, theta=[theta], circle=circle)
    opposite = lucent.transform.iradon(sinogram, theta=[theta + 180], circle=circle)
    peak = np.abs(here).max()
    assert np.abs(here - opposite).max() <= 1e-6 * peak
    assert np.abs(here - skimage.transform.iradon(sinogram, theta=[theta], circle=circle)).max() <= 1e-6 * peak
