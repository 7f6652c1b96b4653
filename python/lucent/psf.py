"""psfmodels' widefield point spread function models on the GPU: the vectorial model of Aguet et
al. 2009, Gibson and Lanni's scalar model (with the aberration a refractive-index mismatch
brings with depth) and a Gaussian approximation, with psfmodels 0.3.3's signature, defaults,
units (µm) and numerics. The result is float32 (psfmodels' is float64).

>>> import numpy as np, lucent
>>> psf = lucent.psf.make_psf(9, 17, dxy=0.1, dz=0.2, NA=1.1, ni=1.33, ni0=1.33, ns=1.33, wvl=0.52)
>>> psf.shape, psf.dtype
((9, 17, 17), dtype('float32'))
"""

from __future__ import annotations

import numbers
import warnings
from typing import Literal, Optional, Sequence, Union

import numpy as np

from . import _lucent
from ._arrays import count
from ._context import Context, resolve

__all__ = ["make_psf", "confocal_psf"]


def make_psf(z: Union[int, Sequence[float]] = 51, nx: int = 51, *, dxy: float = 0.05, dz: float = 0.05,
             pz: float = 0.0, NA: float = 1.4, wvl: float = 0.6, ns: float = 1.47, ni: float = 1.515,
             ni0: float = 1.515, tg: float = 170, tg0: float = 170, ng: float = 1.515, ng0: float = 1.515,
             ti0: float = 150.0, oversample_factor: int = 3, normalize: bool = True,
             model: Literal["vectorial", "scalar", "gaussian"] = "vectorial",
             context: Optional[Context] = None) -> np.ndarray:
    """psfmodels.make_psf: the PSF of a point source ``pz`` µm above the coverslip, shape
    (planes, nx, nx), float32 (psfmodels returns float64; the two agree to about 1e-5 relative
    L2 error).

    ``z`` is a count of planes ``dz`` apart centred on ``pz``, or a sequence of the planes'
    positions in µm relative to the coverslip (``dz`` is then ignored, with psfmodels' warning
    when it is not the default). ``nx`` pixels of ``dxy`` µm along y and x (odd sizes put the
    source on a pixel; even ones centre as psfmodels does). ``NA``: the objective's numerical
    aperture; ``wvl``: the emission wavelength; refractive indices of the sample ``ns``, the
    immersion medium ``ni`` (its design value ``ni0``) and the coverslip ``ng`` (``ng0``);
    coverslip thicknesses ``tg`` (``tg0``) and the working distance ``ti0``, all in µm.
    ``oversample_factor`` sub-pixels per pixel along each axis are summed (pixel integration;
    psfmodels' 0, the unintegrated grid, is not offered). ``normalize`` divides by the largest
    value. ``model``: "vectorial" (Aguet et al. 2009), "scalar" (Gibson-Lanni) or "gaussian"
    (Zhang et al. 2007, which ignores ``pz`` as psfmodels' does, with its warning).

    Bad values (NA not below ``ni``, ``dxy`` not positive, negative ``pz``, ...) raise
    ValueError.

    >>> import numpy as np, lucent
    >>> psf = lucent.psf.make_psf([0.0, 0.5, 1.0], 15, pz=0.5, model="scalar")
    >>> [int(i) for i in np.unravel_index(np.argmax(psf), psf.shape)]
    [1, 7, 7]
    """
    planes, spacing, flip, options = _request(z, nx, dxy, dz, pz, NA, wvl, ns, ni, ni0, tg, tg0, ng, ng0, ti0,
                                              oversample_factor, normalize, model)
    psf = _lucent.make_psf(resolve(context), planes, spacing, options)
    return np.ascontiguousarray(psf[::-1]) if flip else psf


def _request(z, nx, dxy, dz, pz, NA, wvl, ns, ni, ni0, tg, tg0, ng, ng0, ti0, oversample_factor, normalize, model):
    """make_psf's arguments as the extension takes them: the planes (a count or positions), their
    spacing, whether psfmodels would list them top down, and the options by name."""
    flip = False
    if isinstance(z, (numbers.Integral, np.integer)) and not isinstance(z, bool):
        planes: Union[int, list[float]] = count(z, "z")
        spacing = float(dz)
        # psfmodels' numpy.linspace runs from the top plane down for a negative dz.
        flip = spacing < 0
        spacing = abs(spacing)
    elif isinstance(z, (numbers.Number, str, bytes)) or np.ndim(z) == 0:
        raise TypeError(f"z must be a count of planes (int) or a sequence of positions in µm, not {z!r}")
    else:
        if dz != 0.05:
            warnings.warn("dz is ignored when providing a sequence for `z`.", stacklevel=3)
        zv = np.asarray(z, dtype=np.float64)
        if zv.ndim != 1:
            raise ValueError(f"z as positions must be a 1-d sequence, not shape {zv.shape}")
        planes, spacing = zv.tolist(), 0.05
    if model == "gaussian" and pz != 0:
        warnings.warn("pz != 0 currently does nothing for the gaussian approximation.", stacklevel=3)
    options = {"nx": count(nx, "nx"), "dxy": float(dxy), "pz": float(pz), "NA": float(NA), "wvl": float(wvl),
               "ns": float(ns), "ni": float(ni), "ni0": float(ni0), "tg": float(tg), "tg0": float(tg0),
               "ng": float(ng), "ng0": float(ng0), "ti0": float(ti0),
               "oversample_factor": count(oversample_factor, "oversample_factor"), "normalize": bool(normalize),
               "model": str(model)}
    return planes, spacing, flip, options


def confocal_psf(z: Union[int, Sequence[float]] = 51, nx: int = 51, *, pinhole_au: float = 1.0, dxy: float = 0.05,
                 dz: float = 0.05, pz: float = 0.0, NA: float = 1.4, ex_wvl: float = 0.6, em_wvl: float = 0.6,
                 ns: float = 1.47, ni: float = 1.515, ni0: float = 1.515, tg: float = 170, tg0: float = 170,
                 ng: float = 1.515, ng0: float = 1.515, ti0: float = 150.0, oversample_factor: int = 3,
                 normalize: bool = True, model: Literal["vectorial", "scalar", "gaussian"] = "vectorial",
                 pinhole_irrelevance_threshold: float = 50, context: Optional[Context] = None) -> np.ndarray:
    """psfmodels.confocal_psf: the excitation PSF (at ``ex_wvl``) times the emission PSF (at
    ``em_wvl``) convolved in each plane with the pinhole, a top hat of radius ``pinhole_au`` ×
    0.61 ``em_wvl`` / ``NA`` (``pinhole_au`` the pinhole's diameter in Airy units); both models
    as :func:`make_psf` makes them (``normalize``: each divided by its largest value; the product
    is not normalised again, as psfmodels'). At or beyond ``pinhole_irrelevance_threshold`` AU the
    excitation PSF alone. float32.

    >>> import numpy as np, lucent
    >>> kw = dict(dxy=0.05, NA=1.2, ni=1.33, ni0=1.33, ns=1.33, model="scalar")
    >>> wide = lucent.psf.make_psf(11, 33, wvl=0.52, **kw)
    >>> conf = lucent.psf.confocal_psf(11, 33, pinhole_au=1.0, ex_wvl=0.488, em_wvl=0.52, **kw)
    >>> falloff = lambda p: round(float(p[5, 16, 19] / p[5, 16, 16]), 2)  # 0.15 µm off the axis
    >>> falloff(conf), falloff(wide)
    (0.2, 0.27)
    """
    planes, spacing, flip, options = _request(z, nx, dxy, dz, pz, NA, ex_wvl, ns, ni, ni0, tg, tg0, ng, ng0, ti0,
                                              oversample_factor, normalize, model)
    del options["wvl"]
    confocal = (float(ex_wvl), float(em_wvl), float(pinhole_au), float(pinhole_irrelevance_threshold))
    psf = _lucent.confocal_psf(resolve(context), planes, spacing, options, confocal)
    return np.ascontiguousarray(psf[::-1]) if flip else psf
