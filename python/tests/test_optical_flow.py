"""lucent.registration.optical_flow_ilk against scikit-image 0.26's on the same inputs: smooth
random images moved by a known shift or a smooth deformation, 2D and 3D, awkward shapes, the
defaults and each option. Both compute in float32; measured differences are ~1e-6 of a sample
(float32 rounding through ten warps and the pyramid), asserted at 5e-5."""

import numpy as np
import pytest
import scipy.ndimage as ndi
from skimage.registration import optical_flow_ilk

import lucent


def moved(rng, shape, shift):
    ref = ndi.gaussian_filter(rng.random(shape), 2).astype("f4")
    # A shift plus a smooth deformation (so the flow is not constant).
    grid = np.meshgrid(*[np.arange(n, dtype=float) for n in shape], indexing="ij")
    bend = [s + 0.8 * np.sin(2 * np.pi * g / n) for s, g, n in zip(shift, grid, shape)]
    mov = ndi.map_coordinates(ref, [g - b for g, b in zip(grid, bend)], order=3, mode="nearest").astype("f4")
    return ref, mov


@pytest.mark.parametrize("shape, options", [
    ((67, 91), {}),
    ((130, 97), dict(gaussian=True, radius=4)),
    ((150, 141), dict(prefilter=True, num_warp=3)),
    ((33, 200), dict(radius=2, num_warp=1)),
    ((37, 45, 41), dict(radius=3)),
    ((29, 70, 66), dict(gaussian=True, prefilter=True, num_warp=2)),
])
def test_ilk_equals_scikit_image(rng, shape, options):
    ref, mov = moved(rng, shape, (1.3, -0.7, 0.4)[:len(shape)])
    ours = lucent.registration.optical_flow_ilk(ref, mov, **options)
    theirs = optical_flow_ilk(ref, mov, **options)
    assert ours.shape == theirs.shape == (len(shape),) + shape and ours.dtype == np.float32
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=5e-5)


def test_ilk_dtype_and_refusals(rng):
    ref, mov = moved(rng, (40, 44), (0.5, 0.5))
    assert lucent.registration.optical_flow_ilk(ref, mov, dtype=np.float64).dtype == np.float64
    with pytest.raises(ValueError, match="same shape"):
        lucent.registration.optical_flow_ilk(ref, mov[:, :-1])
    with pytest.raises(ValueError, match="floating point"):
        lucent.registration.optical_flow_ilk(ref, mov, dtype=np.int32)
    with pytest.raises(ValueError, match="2D or 3D"):
        lucent.registration.optical_flow_ilk(ref[0], mov[0])
    bad = ref.copy()
    bad[3, 4] = np.nan
    with pytest.raises(ValueError, match="finite|NaN"):
        lucent.registration.optical_flow_ilk(bad, mov)
