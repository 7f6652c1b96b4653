"""Parallel-beam tomography on the GPU in ASTRA's 2D geometry: sinograms [angle][detector],
angles in radians, the rotation centre at the detector's middle unless given, stacks of slices
batched along a leading axis. :mod:`lucent.transform` has scikit-image's conventions.

>>> import numpy as np, lucent
>>> angles = np.linspace(0, np.pi, 90, endpoint=False)
>>> image = np.zeros((64, 64), "f4"); image[20:40, 25:35] = 1
>>> sinogram = lucent.tomography.radon(image, angles)
>>> sinogram.shape
(90, 64)
"""

from __future__ import annotations

from typing import Any, Literal, Optional

import numpy as np

from . import _lucent
from ._arrays import count, real
from ._context import Context, resolve

Method = Literal["auto", "logpolar", "direct"]
Filter = Literal["ramp", "shepp-logan", "cosine", "hamming", "hann"]

__all__ = ["radon", "backproject", "fbp", "mlem"]


def _rays(size: int, angles: Any, detectors: Optional[int], center: Optional[float], method: str) -> tuple:
    a = np.asarray(angles, dtype=np.float64).ravel().tolist()
    return (int(size), a, None if detectors is None else int(detectors), None if center is None else float(center), method)


def _sinogram(sinogram: Any) -> np.ndarray:
    s = real(sinogram, "sinogram")
    if s.ndim not in (2, 3):
        raise ValueError(f"a sinogram has 2 axes (angles, detectors), or 3 for a stack, not {s.ndim}")
    return s


def radon(image: Any, angles: Any, detectors: Optional[int] = None, center: Optional[float] = None,
          method: Method = "auto", *, context: Optional[Context] = None) -> np.ndarray:
    """The forward projection (angles, detectors) of an N × N image, or of a stack (slices, N, N):
    line integrals in pixel units (strip model, or the log-polar method where it applies).

    >>> import numpy as np, lucent
    >>> float(lucent.tomography.radon(np.ones((9, 9), "f4"), [0.0])[0].sum())
    81.0
    """
    x = real(image, "image")
    if x.ndim not in (2, 3) or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"radon takes a square image or a stack of them, not shape {x.shape}")
    return _lucent.radon(resolve(context), x, _rays(x.shape[-1], angles, detectors, center, method))


def backproject(sinogram: Any, angles: Any, size: Optional[int] = None, center: Optional[float] = None,
                method: Method = "auto", *, context: Optional[Context] = None) -> np.ndarray:
    """The back-projection (the adjoint of :func:`radon`) onto a ``size`` × ``size`` image
    (default: the detector count).

    >>> import numpy as np, lucent
    >>> lucent.tomography.backproject(np.ones((4, 16), "f4"), np.arange(4) * np.pi / 4).shape
    (16, 16)
    """
    s = _sinogram(sinogram)
    n = s.shape[-1] if size is None else size
    return _lucent.backproject(resolve(context), s, _rays(n, angles, s.shape[-1], center, method))


def fbp(sinogram: Any, angles: Any, size: Optional[int] = None, center: Optional[float] = None, filter: Filter = "ramp",
        method: Method = "auto", *, context: Optional[Context] = None) -> np.ndarray:
    """Filtered back-projection (angles equally spaced over [0, pi)) with scikit-image's
    filters, onto a ``size`` × ``size`` image (default: the detector count).

    >>> import numpy as np, lucent
    >>> angles = np.linspace(0, np.pi, 120, endpoint=False)
    >>> image = np.zeros((48, 48), "f4"); image[16:32, 16:32] = 1
    >>> recon = lucent.tomography.fbp(lucent.tomography.radon(image, angles), angles)
    >>> bool(abs(recon[24, 24] - 1) < 0.1)
    True
    """
    s = _sinogram(sinogram)
    n = s.shape[-1] if size is None else size
    return _lucent.fbp(resolve(context), s, _rays(n, angles, s.shape[-1], center, method), filter)


def mlem(sinogram: Any, angles: Any, iterations: int = 50, size: Optional[int] = None, center: Optional[float] = None,
         method: Method = "auto", *, context: Optional[Context] = None) -> tuple[np.ndarray, list[float]]:
    """Maximum-likelihood expectation maximisation (the whole loop on the GPU): the
    reconstruction and the Kullback-Leibler divergence after each iteration.

    >>> import numpy as np, lucent
    >>> angles = np.linspace(0, np.pi, 60, endpoint=False)
    >>> image = np.zeros((32, 32), "f4"); image[10:20, 12:22] = 1
    >>> recon, kl = lucent.tomography.mlem(lucent.tomography.radon(image, angles), angles, 20)
    >>> kl[-1] < kl[0]
    True
    """
    s = _sinogram(sinogram)
    n = s.shape[-1] if size is None else size
    return _lucent.mlem(resolve(context), s, _rays(n, angles, s.shape[-1], center, method), count(iterations, "iterations"))
