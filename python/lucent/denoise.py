"""True 4D adaptive filtering (Eklund, Andersson and Knutsson 2011) on the GPU: a structure
tensor from monomial filters, a control tensor that smooths along structures and keeps edges,
over 2, 3 or 4 axes together (time included), by FFT or direct sums, in slabs for large series.

>>> import numpy as np, lucent
>>> noisy = np.random.rand(8, 24, 24).astype("f4")
>>> lucent.denoise.adaptive_filter(noisy).shape
(8, 24, 24)
"""

from __future__ import annotations

from typing import Any, Literal, Optional

import numpy as np

from . import _lucent
from ._arrays import real
from ._context import Context, resolve

__all__ = ["adaptive_filter"]


def adaptive_filter(x: Any, *, dims: Optional[int] = None, sigma: Optional[float] = None, alpha: Optional[float] = None,
                    beta: Optional[float] = None, isotropy_alpha: Optional[float] = None,
                    isotropy_beta: Optional[float] = None, gamma0: Optional[float] = None,
                    lowpass: Optional[float] = None, tensor_sigma: Optional[float] = None,
                    control_sigma: Optional[float] = None, structure_taps: Optional[int] = None,
                    reconstruction_taps: Optional[int] = None, downsample: Optional[bool] = None,
                    method: Literal["auto", "fft", "spatial"] = "auto", slab_len: Optional[int] = None,
                    context: Optional[Context] = None) -> np.ndarray:
    """Adaptive filtering of ``x`` over its last ``dims`` axes (default: every axis, at most 4;
    leading axes are a batch). Options left None keep lucent's defaults (``lucent denoise
    --help`` lists them): ``sigma`` (the noise level of the magnitude mapping, relative to the
    largest tensor norm; 0.25), ``alpha`` and ``beta`` (its shape; 0.2, 2), ``isotropy_alpha``
    and ``isotropy_beta`` (0.5, 2), ``gamma0`` (1), ``lowpass`` (the cutoff of the tensor
    lowpass), ``tensor_sigma`` (0.7), ``control_sigma`` (1), ``structure_taps`` (7),
    ``reconstruction_taps`` (11), ``downsample`` (the structure tensor at half resolution; True),
    ``method`` and ``slab_len``.

    >>> import numpy as np, lucent
    >>> flat = np.full((6, 16, 16), 0.5, "f4")
    >>> bool(np.allclose(lucent.denoise.adaptive_filter(flat), flat, atol=1e-5))
    True
    """
    options = {"dims": dims, "sigma": sigma, "alpha": alpha, "beta": beta, "isotropy_alpha": isotropy_alpha,
               "isotropy_beta": isotropy_beta, "gamma0": gamma0, "lowpass": lowpass, "tensor_sigma": tensor_sigma,
               "control_sigma": control_sigma, "structure_taps": structure_taps,
               "reconstruction_taps": reconstruction_taps, "downsample": downsample, "method": method,
               "slab_len": slab_len}
    set_ = {k: v for k, v in options.items() if v is not None}
    return _lucent.adaptive_filter(resolve(context), real(x, "x"), set_)
