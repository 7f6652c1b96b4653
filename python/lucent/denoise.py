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

__all__ = ["adaptive_filter", "bm4d"]


def bm4d(z: Any, sigma_psd: Any, profile: Any = "np", stage_arg: Any = "all", *,
         context: Optional[Context] = None) -> np.ndarray:
    """bm4d.bm4d (bm4d 4.2.5's names): block-matching collaborative filtering of an image (BM3D,
    8 × 8 blocks), a volume (BM4D, 4³ blocks) or a series of volumes (t, z, y, x; groups gather
    blocks from ``search_window_time`` time points either side, 1 by default, 0 for bm4d frame by
    frame) on the GPU, of white noise of standard deviation ``sigma_psd`` (a number) or of
    correlated noise of power spectral density ``sigma_psd`` (an array of ``z``'s shape, or one
    time point's for a series; bm4d's convention: DC first, white noise of σ is ``z.size`` · σ²
    everywhere: thresholds and Wiener shrinkage from each coefficient's exact variance).
    ``profile`` "np" (lucent's profile for the shape, chosen as bm4d
    chooses) or a mapping of profile fields to change (``bs_ht``, ``step_ht``,
    ``max_stack_size_ht``, ``search_window_ht``, ``tau_match``, ``lambda_thr``, ``beta``, the
    ``_wiener`` twins, ``mu2``, ``search_window_time``); ``stage_arg`` "all",
    "hard_thresholding" (bm4d's ``BM4DStages`` names, lower case) or a first estimate to Wiener-
    filter with. lucent's Wiener stage departs from bm4d's published profile where that lost
    PSNR here (4³ DCT blocks and μ² 0.7 for volumes, μ² 1 for images).

    >>> import numpy as np, lucent
    >>> x = np.zeros((40, 40), "f4"); x[10:30, 10:30] = 1
    >>> noisy = x + 0.2 * np.random.default_rng(0).standard_normal(x.shape).astype("f4")
    >>> denoised = lucent.denoise.bm4d(noisy, 0.2)
    >>> bool(np.abs(denoised - x).mean() < 0.3 * np.abs(noisy - x).mean())
    True
    """
    fields = {} if isinstance(profile, str) and profile == "np" else profile
    if isinstance(fields, str) or not hasattr(fields, "items"):
        raise ValueError(f"bm4d: profile {profile!r}: 'np' or a mapping of bm4d profile fields")
    sigma = np.asarray(sigma_psd, dtype=float)
    # bm4d takes a one-element array as a standard deviation too.
    white = sigma.size == 1 and sigma.ndim <= 1
    s, psd = (float(sigma.reshape(())), None) if white else (0.0, real(sigma, "sigma_psd"))
    if isinstance(stage_arg, str):
        return _lucent.bm4d(resolve(context), real(z, "z"), s, psd, stage_arg, None, dict(fields))
    return _lucent.bm4d(resolve(context), real(z, "z"), s, psd, "wiener", real(stage_arg, "stage_arg"), dict(fields))


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
