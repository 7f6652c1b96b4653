"""skimage.registration's phase correlation on the GPU: whole-sample and sub-sample shifts
(upsampled DFT), images or their spectra, and masked registration (Padfield), 1-4 axes.

>>> import numpy as np, lucent
>>> a = np.random.rand(64, 48).astype("f4")
>>> b = np.roll(a, (3, -5), axis=(0, 1))
>>> lucent.registration.phase_cross_correlation(a, b)[0]
array([-3.,  5.])
"""

from __future__ import annotations

from typing import Any, Literal, Optional

import numpy as np

from . import _lucent
from ._arrays import complex64, mask, real, unsupported
from ._context import Context, resolve

__all__ = ["phase_cross_correlation", "cross_correlate_masked"]


def phase_cross_correlation(reference_image: Any, moving_image: Any, *, upsample_factor: float = 1,
                            space: Literal["real", "fourier"] = "real", disambiguate: bool = False,
                            reference_mask: Any = None, moving_mask: Any = None, overlap_ratio: float = 0.3,
                            normalization: Optional[Literal["phase"]] = "phase",
                            context: Optional[Context] = None) -> tuple[np.ndarray, float, float]:
    """skimage.registration.phase_cross_correlation: the shift that registers ``moving_image``
    onto ``reference_image``, the normalised RMS error and the global phase difference.

    With masks (Padfield's masked normalised cross-correlation) the error and phase difference
    are NaN, as scikit-image's; ``upsample_factor`` above 1 then refines the shift below a
    sample, which scikit-image does not do. ``upsample_factor`` is a whole number (1 to 10000):
    a fraction misplaces the refinement's grid, and scikit-image's shifts are wrong for it too.

    >>> import numpy as np, lucent
    >>> a = np.random.rand(32, 32).astype("f4")
    >>> shift, error, phase = lucent.registration.phase_cross_correlation(a, np.roll(a, 2, axis=1))
    >>> shift
    array([ 0., -2.])
    """
    unsupported("disambiguate", disambiguate, False, "phase_cross_correlation")
    ctx = resolve(context)
    if reference_mask is not None or moving_mask is not None:
        if space != "real":
            raise ValueError("masked registration takes images in real space")
        ref, mov = real(reference_image, "reference_image"), real(moving_image, "moving_image")
        rm = mask(reference_mask if reference_mask is not None else np.ones(ref.shape, bool))
        mm = mask(moving_mask if moving_mask is not None else rm)
        shift = _lucent.masked_phase_cross_correlation(ctx, ref, mov, rm, mm, float(overlap_ratio), float(upsample_factor))
        return np.array(shift), np.nan, np.nan
    norm = "none" if normalization is None else normalization
    if space == "real":
        r = _lucent.phase_cross_correlation(ctx, real(reference_image, "reference_image"), real(moving_image, "moving_image"),
                                            float(upsample_factor), norm)
    elif space == "fourier":
        r = _lucent.phase_cross_correlation_spectra(ctx, complex64(reference_image), complex64(moving_image),
                                                    float(upsample_factor), norm)
    else:
        raise ValueError('space argument must be "real" of "fourier"')
    shift, error, phasediff = r
    return np.array(shift), np.nan if error is None else error, np.nan if phasediff is None else phasediff


def cross_correlate_masked(arr1: Any, arr2: Any, m1: Any, m2: Any, mode: Literal["full"] = "full", axes: Any = None,
                           overlap_ratio: float = 0.3, *, context: Optional[Context] = None) -> np.ndarray:
    """skimage.registration's cross_correlate_masked (Padfield's masked normalised
    cross-correlation) at every overlap of ``arr1`` and ``arr2`` (full mode, every axis).

    >>> import numpy as np, lucent
    >>> a = np.random.rand(12, 10)
    >>> lucent.registration.cross_correlate_masked(a, a, a > 0.1, a > 0.1).shape
    (23, 19)
    """
    unsupported("mode", mode, "full", "cross_correlate_masked")
    a, b = real(arr1, "arr1"), real(arr2, "arr2")
    if axes is not None and sorted(int(x) % a.ndim for x in axes) != list(range(a.ndim)):
        raise NotImplementedError("lucent's cross_correlate_masked correlates over every axis")
    return _lucent.cross_correlate_masked(resolve(context), a, b, mask(m1), mask(m2), float(overlap_ratio))
