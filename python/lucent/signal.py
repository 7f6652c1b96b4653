"""scipy.signal's convolutions on the GPU: :func:`fftconvolve`, :func:`convolve` and
:func:`correlate`, real input of 1-4 axes, modes full, same and valid exactly as scipy's.

float64 input is computed in float32; the result is float32.

>>> import numpy as np, lucent
>>> float(lucent.signal.fftconvolve(np.ones((64, 64), "f4"), np.ones((5, 5), "f4"), mode="same").sum())
98596.0
"""

from __future__ import annotations

from typing import Any, Literal, Optional, Sequence

import numpy as np

from . import _lucent
from ._arrays import axes as _axes, real
from ._context import Context, resolve

Mode = Literal["full", "same", "valid"]
Method = Literal["auto", "direct", "fft"]

__all__ = ["fftconvolve", "convolve", "correlate"]


def _run(in1: Any, in2: Any, mode: str, method: str, correlate: bool, context: Optional[Context]) -> np.ndarray:
    a, b = real(in1, "in1"), real(in2, "in2")
    if a.ndim != b.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    return _lucent.convolve(resolve(context), a, b, mode, method, correlate)


def fftconvolve(in1: Any, in2: Any, mode: Mode = "full", axes: Optional[Sequence[int]] = None, *,
                context: Optional[Context] = None) -> np.ndarray:
    """scipy.signal.fftconvolve(in1, in2, mode, axes): the convolution by FFT, over every axis
    or over ``axes`` (in2 of length 1 along the others).

    >>> import numpy as np, lucent
    >>> lucent.signal.fftconvolve(np.array([1, 2, 3], "f4"), np.array([0, 1, 0.5], "f4"))
    array([0. , 1. , 2.5, 4. , 1.5], dtype=float32)
    """
    a, b = np.asarray(in1), np.asarray(in2)
    if axes is not None and sorted(_axes(axes, a.ndim)) != list(range(a.ndim)):
        # Axes left out are independent lines; where in2 has length 1 along them the
        # convolution over every axis is the same thing (every mode keeps in1's length there).
        listed = set(_axes(axes, a.ndim))
        if b.ndim != a.ndim:
            raise ValueError("in1 and in2 should have the same dimensionality")
        for k in set(range(a.ndim)) - listed:
            if b.shape[k] != 1:
                raise NotImplementedError(f"lucent's fftconvolve over axes {sorted(listed)}: in2 must have length 1 "
                                          f"along axis {k} (broadcasting a longer in2 is not implemented)")
    return _run(in1, in2, mode, "fft", False, context)


def convolve(in1: Any, in2: Any, mode: Mode = "full", method: Method = "auto", *,
             context: Optional[Context] = None) -> np.ndarray:
    """scipy.signal.convolve(in1, in2, mode, method): by FFT or direct sums ("auto" chooses).

    >>> import numpy as np, lucent
    >>> lucent.signal.convolve(np.array([1, 2, 3], "f4"), np.array([1, 1], "f4"), method="direct")
    array([1., 3., 5., 3.], dtype=float32)
    """
    return _run(in1, in2, mode, method, False, context)


def correlate(in1: Any, in2: Any, mode: Mode = "full", method: Method = "auto", *,
              context: Optional[Context] = None) -> np.ndarray:
    """scipy.signal.correlate(in1, in2, mode, method): the cross-correlation.

    >>> import numpy as np, lucent
    >>> lucent.signal.correlate(np.array([1, 2, 3], "f4"), np.array([1, 0], "f4"))
    array([0., 1., 2., 3.], dtype=float32)
    """
    return _run(in1, in2, mode, method, True, context)
