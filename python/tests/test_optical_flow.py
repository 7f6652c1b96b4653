"""lucent.registration.optical_flow_ilk and optical_flow_tvl1 against scikit-image 0.26's on the
same inputs: smooth random images moved by a shift and a smooth deformation, 2D and 3D, awkward
shapes, the defaults and each option. Both compute in float32. ILK: measured differences ~1e-6
of a sample (rounding through ten warps and the pyramid), asserted at 5e-5 for 99.9% of points:
at a few points the window's gradients are nearly rank-deficient (at the edges, where the warp
repeats the border) and the float32 solutions of those local systems (LAPACK's LU in
scikit-image, Cramer's rule here) differ by up to a sample (3 points of 400 000 in one of 24
random 3D cases). TV-L1: its
attachment step branches on |rho| ≤ attachment × tightness × |g|², and a point at the threshold
can take the other branch under float32 rounding, which its iterations spread to neighbours:
measured at most 1.9e-4 of a sample (99% of points within 1.8e-5), asserted at 1e-3 and 5e-5."""

import numpy as np
import pytest
import scipy.ndimage as ndi
from skimage.registration import optical_flow_ilk, optical_flow_tvl1

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
    d = np.abs(ours - theirs)
    assert np.mean(d <= 5e-5) >= 0.999 and np.median(d) <= 2e-6, (d.max(), np.mean(d <= 5e-5))


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


@pytest.mark.parametrize("shape, options", [
    ((67, 91), {}),
    ((130, 97), dict(attachment=5, tightness=0.5)),
    ((150, 141), dict(prefilter=True, num_warp=3)),
    ((41, 190), dict(num_iter=3, tol=1e-2)),
    ((37, 45, 41), dict(num_iter=5)),
    ((23, 66, 70), dict(prefilter=True, num_warp=2)),
])
def test_tvl1_equals_scikit_image(rng, shape, options):
    ref, mov = moved(rng, shape, (1.3, -0.7, 0.4)[:len(shape)])
    ours = lucent.registration.optical_flow_tvl1(ref, mov, **options)
    theirs = optical_flow_tvl1(ref, mov, **options)
    assert ours.shape == theirs.shape == (len(shape),) + shape and ours.dtype == np.float32
    d = np.abs(ours - theirs)
    assert d.max() <= 1e-3 and np.percentile(d, 99) <= 5e-5, (d.max(), np.percentile(d, 99))


def test_tvl1_refusals(rng):
    ref, mov = moved(rng, (40, 44), (0.5, 0.5))
    with pytest.raises(ValueError, match="tightness"):
        lucent.registration.optical_flow_tvl1(ref, mov, tightness=0)
    with pytest.raises(ValueError, match="same shape"):
        lucent.registration.optical_flow_tvl1(ref, mov[:-1])
