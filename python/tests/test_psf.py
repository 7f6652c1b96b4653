import warnings

import numpy as np
import psfmodels
import pytest

import lucent
from conftest import rel

# The immersion media (ni = ni0) with objectives across their range of NA, and a sample index
# that differs from the immersion's, so a source above the coverslip (pz) is aberrated.
IMMERSION = {
    "water": (1.33, [0.8, 1.2], 1.36),
    "silicone": (1.406, [0.95, 1.35], 1.33),
    "oil": (1.515, [1.1, 1.49], 1.33),
}
TOLERANCE = 1e-4  # relative L2 error against psfmodels (float64); lucent's pupil integrals are f32


def both(*args, **kwargs):
    """lucent's PSF and psfmodels' for the same arguments."""
    ours = lucent.psf.make_psf(*args, **kwargs)
    theirs = psfmodels.make_psf(*args, **kwargs)
    assert ours.dtype == np.float32 and theirs.dtype == np.float64
    assert ours.shape == theirs.shape
    return ours, theirs


@pytest.mark.parametrize("model", ["vectorial", "scalar", "gaussian"])
@pytest.mark.parametrize("medium", sorted(IMMERSION))
@pytest.mark.parametrize("pz", [0.0, 5.0, 30.0])
def test_models_match_psfmodels(model, medium, pz):
    ni, apertures, ns = IMMERSION[medium]
    for NA in apertures:
        kwargs = dict(dxy=0.08, dz=0.25, pz=pz, NA=NA, wvl=0.55, ns=ns, ni=ni, ni0=ni, model=model)
        z = 7
        if model == "gaussian" and pz > 0:
            # psfmodels' Gaussian ignores pz (its mean stays at the coverslip) and warns; planes
            # centred on pz = 30 µm would all underflow to 0 there. Take planes around 0 instead.
            z = [-0.6, -0.3, 0.0, 0.3, 0.6]
            kwargs.pop("dz")
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "pz != 0 currently does nothing")
            ours, theirs = both(z, 25, **kwargs)
        assert rel(ours, theirs) <= TOLERANCE, (NA, rel(ours, theirs))
        assert ours.max() == 1.0


@pytest.mark.parametrize("model", ["vectorial", "scalar", "gaussian"])
@pytest.mark.parametrize("nx", [15, 16])
@pytest.mark.parametrize("oversample_factor", [1, 2, 3])
@pytest.mark.parametrize("normalize", [True, False])
def test_sampling_and_scale_match_psfmodels(model, nx, oversample_factor, normalize):
    kwargs = dict(dxy=0.1, pz=2.0, NA=1.3, ni=1.406, ni0=1.406, ns=1.38, wvl=0.6, model=model,
                  oversample_factor=oversample_factor, normalize=normalize)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "pz != 0 currently does nothing")
        for z in [5, [1.4, 1.8, 2.0, 2.1, 2.5, 3.3], np.array([2.0])]:
            ours, theirs = both(z, nx, **kwargs)
            assert rel(ours, theirs) <= TOLERANCE, (z, rel(ours, theirs))
        # the count form with another spacing, and a negative one (the planes from the top down)
        for dz in [0.15, -0.15]:
            ours, theirs = both(4, nx, dz=dz, **kwargs)
            assert rel(ours, theirs) <= TOLERANCE, (dz, rel(ours, theirs))


def test_defaults_match_psfmodels():
    # psfmodels' defaults (1.4 NA oil, ns 1.47, 0.6 µm) on fewer planes and pixels
    ours, theirs = both(9, 33, dz=0.1)
    assert ours.shape == (9, 33, 33)
    assert rel(ours, theirs) <= TOLERANCE
    assert np.unravel_index(np.argmax(ours), ours.shape) == (4, 16, 16)


def test_warnings_as_psfmodels():
    with pytest.warns(UserWarning, match="dz is ignored"):
        lucent.psf.make_psf([0.0, 0.1], 9, dz=0.1)
    with pytest.warns(UserWarning, match="pz != 0 currently does nothing"):
        lucent.psf.make_psf(3, 9, pz=1.0, model="gaussian")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lucent.psf.make_psf([0.0, 0.1], 9)
        lucent.psf.make_psf(3, 9, dz=0.1, pz=1.0)


@pytest.mark.parametrize("kwargs", [
    dict(NA=1.4, ni=1.33, ni0=1.33),  # NA >= ni
    dict(NA=1.515),
    dict(dxy=0.0),
    dict(dxy=-0.05),
    dict(pz=-1.0),
])
def test_bad_input_raises_as_psfmodels(kwargs):
    with pytest.raises(ValueError):
        lucent.psf.make_psf(3, 9, **kwargs)
    with pytest.raises(ValueError):
        psfmodels.make_psf(3, 9, **kwargs)


def test_bad_input_raises():
    with pytest.raises(ValueError, match="oversample_factor"):
        lucent.psf.make_psf(3, 9, oversample_factor=0)
    with pytest.raises(ValueError, match="model"):
        lucent.psf.make_psf(3, 9, model="confocal")
    with pytest.raises(ValueError):
        lucent.psf.make_psf(3, 0)
    with pytest.raises(ValueError):
        lucent.psf.make_psf(-1, 9)
    with pytest.raises(ValueError):
        lucent.psf.make_psf([], 9)
    with pytest.raises(ValueError):
        lucent.psf.make_psf([0.0, np.nan], 9)
    with pytest.raises(ValueError):
        lucent.psf.make_psf(3, 9, wvl=np.inf)
    with pytest.raises(ValueError):
        lucent.psf.make_psf(np.zeros((2, 2)), 9)
    with pytest.raises(TypeError):
        lucent.psf.make_psf(3.5, 9)


@pytest.mark.parametrize("nx", [15, 14])
@pytest.mark.parametrize("model", ["scalar", "vectorial"])
def test_confocal_psf_equals_psfmodels(nx, model):
    kw = dict(dxy=0.08, dz=0.25, NA=1.2, ns=1.33, ni=1.33, ni0=1.33, ex_wvl=0.488, em_wvl=0.52, model=model)
    for au in (0.5, 1.0, 2.5):
        want = psfmodels.confocal_psf(7, nx, pinhole_au=au, **kw)
        got = lucent.psf.confocal_psf(7, nx, pinhole_au=au, **kw)
        assert got.shape == want.shape and got.dtype == np.float32
        assert rel(got, want) < 1e-4, au
    # Past the threshold: the excitation PSF alone.
    assert rel(lucent.psf.confocal_psf(7, nx, pinhole_au=60, **kw), psfmodels.confocal_psf(7, nx, pinhole_au=60, **kw)) < 1e-4
    with pytest.raises(ValueError, match="pinhole_au"):
        lucent.psf.confocal_psf(7, nx, pinhole_au=-1, **kw)
