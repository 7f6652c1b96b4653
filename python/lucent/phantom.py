"""Synthetic objects with known truth (the Rust ``lucent::phantom``, the arrays ``lucent
phantom`` and ``lucent demo`` write): Toft's modified Shepp-Logan phantom and its exact
sinogram, an AO-OCT series under eye motion, the 4D moving edge and a blurred widefield
specimen. Every one is deterministic from its seed; defaults are small so they make fast.

>>> import lucent.phantom
>>> lucent.phantom.shepp_logan(64).shape
(64, 64)
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from . import _lucent

__all__ = ["shepp_logan", "shepp_logan_sinogram", "aooct", "moving_edge", "widefield_specimen"]


def _shape(shape: Sequence[int], rank: int, name: str) -> list:
    s = [int(n) for n in shape]
    if len(s) != rank or min(s) < 0:
        raise ValueError(f"{name}: shape {tuple(shape)}, {rank} lengths, none negative")
    return s


def shepp_logan(n: int = 128) -> np.ndarray:
    """Toft's modified Shepp-Logan phantom, ``n`` × ``n`` float32 in [0, 1] (MATLAB's
    ``phantom('Modified Shepp-Logan')``)."""
    return _lucent.shepp_logan_image(int(n))


def shepp_logan_3d(vol_geom: Any, proj_geom: Any = None, *, sub: int = 2) -> Any:
    """The 3D modified Shepp-Logan phantom (Schabel's ten ellipsoids, values in [0, 1]) in an
    ASTRA volume geometry (:func:`lucent.tomography.create_vol_geom`, or a side ``n`` for n³
    voxels), each voxel averaged over ``sub``³ points; its radius is half the smaller of the
    window's x and y extents. With an ASTRA 3D projection geometry, returns ``(volume, projections)``: the exact
    line integrals (rows, angles, cols) of every pixel's central ray.

    >>> import numpy as np, lucent
    >>> v = lucent.tomography.create_vol_geom(32, 32, 32)
    >>> g = lucent.tomography.create_proj_geom("cone", 1.5, 1.5, 40, 48, np.linspace(0, 2 * np.pi, 60, endpoint=False), 100, 50)
    >>> volume, projections = lucent.phantom.shepp_logan_3d(v, g)
    >>> volume.shape, projections.shape
    ((32, 32, 32), (40, 60, 48))
    """
    from .tomography import _json, create_vol_geom
    v = create_vol_geom(int(vol_geom), int(vol_geom), int(vol_geom)) if np.isscalar(vol_geom) else vol_geom
    volume, projections = _lucent.shepp_logan_3d(_json(v), None if proj_geom is None else _json(proj_geom), int(sub))
    return volume if proj_geom is None else (volume, projections)


def shepp_logan_sinogram(n: int = 128, angles: Any = None, detectors: Optional[int] = None,
                         center: Optional[float] = None) -> np.ndarray:
    """The phantom's exact parallel-beam sinogram [angle][detector] (line integrals in pixel
    units, lucent.tomography's geometry), ``angles`` in radians (default: 180 over [0, pi)),
    ``detectors`` (default ``n``) centred on ``center``.

    >>> import numpy as np, lucent
    >>> angles = np.linspace(0, np.pi, 90, endpoint=False)
    >>> s = lucent.phantom.shepp_logan_sinogram(64, angles)
    >>> recon = lucent.tomography.fbp(s, angles)
    >>> bool(np.abs(recon - lucent.phantom.shepp_logan(64)).mean() < 0.05)
    True
    """
    a = np.linspace(0, np.pi, 180, endpoint=False) if angles is None else np.asarray(angles, np.float64).ravel()
    return _lucent.shepp_logan_sinogram(int(n), [float(v) for v in a], detectors, center)


def aooct(shape: Sequence[int] = (32, 48, 64), count: int = 2, *, drift: float = 2.5, tremor: float = 0.15,
          axial: float = 1.5, saccades: int = 1, saccade: float = 6.0,
          seed: int = 1) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
    """One retina imaged by AO-OCT: the reference volume (slow, depth, fast) without motion,
    ``count`` volumes under eye motion (drift, tremor, axial motion and micro-saccades, in
    voxels) and the truth: each B-scan's shift that registers it onto the reference, shape
    (count, slow, 3) in (slow, depth, fast) order."""
    s = _shape(shape, 3, "aooct")
    return _lucent.aooct_series(s, int(count), (float(drift), float(tremor), float(axial), int(saccades), float(saccade)),
                                int(seed))


def moving_edge(shape: Sequence[int] = (8, 16, 32, 32), speed: float = 0.5, sigma: float = 0.25,
                seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """The 4D (t, z, y, x) moving edge for denoising (an intensity ramp along x, a step moving
    along y by ``speed`` voxels per frame, a thin tube along z; values in [0, 2.5]) and it plus
    Gaussian noise of standard deviation ``sigma``."""
    return _lucent.moving_edge(_shape(shape, 4, "moving_edge"), float(speed), float(sigma), int(seed))


def widefield_specimen(shape: Sequence[int] = (20, 64, 64),
                       seed: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple]:
    """Beads and filaments (photons per voxel) imaged by a widefield microscope as ``lucent
    demo`` does: the truth, the observed image (blurred by the vectorial PSF of a 1.1 NA water
    objective at 0.52 µm, zero boundary, then Poisson counts), that PSF (17 × 25 × 25, summing
    to 1) and the voxel (z, y, x) in µm. The shape is at least the PSF's along every axis."""
    truth, observed, psf, voxel = _lucent.widefield_specimen(_shape(shape, 3, "widefield_specimen"), int(seed))
    return truth, observed, psf, tuple(voxel)
