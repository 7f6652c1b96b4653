"""skimage.restoration's Richardson-Lucy and Wiener-Hunt deconvolution on the GPU, with lucent's options as
extra keywords (boundaries, total-variation regularisation, acceleration, a stopping rule,
spatially varying PSFs); and the adaptive denoising of :mod:`lucent.denoise`.

Computed in float32 (float64 input too); the result is float32.

>>> import numpy as np, lucent
>>> image = np.random.rand(32, 48).astype("f4")
>>> psf = np.ones((5, 5), "f4") / 25
>>> lucent.restoration.richardson_lucy(image, psf, num_iter=10).shape
(32, 48)
"""

from __future__ import annotations

from typing import Any, Literal, Optional

import numpy as np

from . import _lucent
from ._arrays import count, real
from ._context import Context, resolve

Boundary = Literal["zero", "periodic", "extended"]

__all__ = ["richardson_lucy", "richardson_lucy_grid", "wiener"]


def _options(init: Optional[float], normalize_psf: bool, filter_epsilon: Optional[float], boundary: str,
             tv: Optional[float], accelerate: bool, stop: Optional[tuple], eps: float, clip_negative: bool) -> dict:
    # Negative values go into the update as scikit-image lets them, unless clipped.
    o = {"normalize_psf": bool(normalize_psf), "boundary": boundary, "accelerate": bool(accelerate), "eps": float(eps),
         "clip_negative": bool(clip_negative), "allow_negative": not clip_negative}
    if init is not None:
        o["init"] = float(init)
    # scikit-image tests `if filter_epsilon:`, so 0 means none.
    if filter_epsilon:
        o["filter_epsilon"] = float(filter_epsilon)
    if tv is not None:
        o["tv"] = float(tv)
    if stop is not None:
        tolerance, every = stop
        o["stop"] = (float(tolerance), int(every))
    return o


def richardson_lucy(image: Any, psf: Any, num_iter: int = 50, clip: bool = True, filter_epsilon: Optional[float] = None,
                    *, init: Optional[float] = 0.5, normalize_psf: bool = False, boundary: Boundary = "zero",
                    tv: Optional[float] = None, accelerate: bool = False, stop: Optional[tuple[float, int]] = None,
                    eps: float = 1e-12, clip_negative: bool = False, context: Optional[Context] = None) -> np.ndarray:
    """skimage.restoration.richardson_lucy: ``num_iter`` Richardson-Lucy iterations from a
    constant 0.5, clipped to [-1, 1] at the end when ``clip``.

    lucent's keywords: ``init`` (the first estimate's constant; None starts from the image),
    ``normalize_psf`` (divide the PSF by its sum), ``boundary`` ("zero": scipy's 'same'
    convolution, "periodic", or "extended": Bertero-Boccacci's object beyond the image),
    ``tv`` (Richardson-Lucy-TV's lambda, 0.001 to 0.01 typical), ``accelerate`` (Biggs-Andrews),
    ``stop=(tolerance, every)`` (end when the relative change falls below tolerance, checked
    every ``every`` iterations), ``eps`` (added to the blurred estimate), ``clip_negative``
    (True: negative image values, such as noise or an FFT's round-off, are clipped to 0;
    False, the default: they go into the update as scikit-image lets them). A PSF of fewer axes
    than the image deconvolves every slice along the leading axes. For PSFs of even length the
    update correlates with the PSF (the exact adjoint of the blur), where scikit-image convolves
    with the flipped PSF in 'same' mode, one sample off; for odd lengths the two agree.

    >>> import numpy as np, lucent
    >>> x = np.zeros((17, 19), "f4"); x[8, 9] = 1
    >>> psf = np.ones((3, 3), "f4") / 9
    >>> blurred = lucent.signal.fftconvolve(x, psf, mode="same")
    >>> bool(lucent.restoration.richardson_lucy(blurred, psf, 30)[8, 9] > 0.5)
    True
    """
    o = _options(init, normalize_psf, filter_epsilon, boundary, tv, accelerate, stop, eps, clip_negative)
    return _lucent.richardson_lucy(resolve(context), real(image, "image"), real(psf, "psf"), count(num_iter, "num_iter"), False, bool(clip), o)[0]


def richardson_lucy_grid(image: Any, psfs: Any, num_iter: int = 50, clip: bool = True,
                         filter_epsilon: Optional[float] = None, *, init: Optional[float] = 0.5, normalize_psf: bool = False,
                         boundary: Boundary = "zero", tv: Optional[float] = None, accelerate: bool = False,
                         stop: Optional[tuple[float, int]] = None, eps: float = 1e-12, clip_negative: bool = False,
                         context: Optional[Context] = None) -> np.ndarray:
    """:func:`richardson_lucy` with a spatially varying PSF: ``psfs`` has one PSF per region of
    a regular grid over the image's last axes, shape (grid rows, grid columns, *psf shape); each
    region is deconvolved in tiles with its own PSF and the tiles are blended.

    >>> import numpy as np, lucent
    >>> image = np.random.rand(40, 40).astype("f4")
    >>> psfs = np.ones((2, 2, 3, 3), "f4") / 9
    >>> lucent.restoration.richardson_lucy_grid(image, psfs, 5).shape
    (40, 40)
    """
    o = _options(init, normalize_psf, filter_epsilon, boundary, tv, accelerate, stop, eps, clip_negative)
    return _lucent.richardson_lucy(resolve(context), real(image, "image"), real(psfs, "psfs"), count(num_iter, "num_iter"), True, bool(clip), o)[0]


def wiener(image: Any, psf: Any, balance: float, reg: Any = None, is_real: bool = True, clip: bool = True, *,
           context: Optional[Context] = None) -> np.ndarray:
    """skimage.restoration.wiener: Wiener-Hunt deconvolution with the Laplacian regulariser,
    ``conj(H) / (|H|² + balance |L|²)`` on the image's spectrum (circular), ``psf`` an impulse
    response of the image's axes (element m // 2 of each axis is its centre; not normalised),
    the result clipped to [-1, 1] when ``clip``.

    ``reg`` (another regulariser) and ``psf`` given as a transfer function are not implemented;
    ``is_real`` only says which half of the spectrum such inputs would be given over, so with an
    impulse response either value gives the same result.

    >>> import numpy as np, lucent
    >>> x = np.zeros((16, 16), "f4"); x[8, 8] = 1
    >>> psf = np.ones((3, 3), "f4") / 9
    >>> blurred = lucent.signal.fftconvolve(x, psf, mode="same")
    >>> restored = lucent.restoration.wiener(blurred, psf, 1e-4)
    >>> bool(restored[8, 8] > 0.7 > 3 * blurred[8, 8])  # the point sharpened back (skimage: 0.742)
    True
    """
    if reg is not None:
        raise NotImplementedError("wiener: reg (a regulariser other than the Laplacian) is not implemented")
    psf = np.asarray(psf)
    if np.iscomplexobj(psf):
        raise NotImplementedError("wiener: a PSF given as a transfer function (complex) is not implemented; give the impulse response")
    return _lucent.wiener(resolve(context), real(image, "image"), real(psf, "psf"), float(balance), bool(clip))
