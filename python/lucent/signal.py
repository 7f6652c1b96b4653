"""scipy.signal's convolutions on the GPU: :func:`fftconvolve`, :func:`convolve` and
:func:`correlate`, real or complex input of 1-4 axes, modes full, same and valid exactly as
scipy's.

Results have scipy's dtypes: :func:`convolve` and :func:`correlate` the inputs' common dtype
(``numpy.result_type``: uint8 with uint8 gives uint8, int16 with float32 float32, integers
rounded to nearest as scipy rounds its FFT result), :func:`fftconvolve` that of the inputs'
transforms (float32 for float32 inputs, float64 when either is float64 or an integer,
complex64 or complex128 for complex input); two 0-d inputs give their product, as scipy.
Computed in float32 today (a float64 GPU path for float64 input is coming): float64 results
hold float32's precision, and integer results are exact while the sums stay within 2**24.

>>> import numpy as np, lucent
>>> float(lucent.signal.fftconvolve(np.ones((64, 64), "f4"), np.ones((5, 5), "f4"), mode="same").sum())
98596.0
>>> lucent.signal.convolve(np.array([1, 2, 3], "u1"), np.array([1, 1], "u1"))
array([1, 3, 5, 3], dtype=uint8)
"""

from __future__ import annotations

from typing import Any, Literal, Optional, Sequence

import numpy as np

from . import _lucent
from ._arrays import axes as _axes, finish, working
from ._context import Context, resolve

Mode = Literal["full", "same", "valid"]
Method = Literal["auto", "direct", "fft"]

__all__ = ["fftconvolve", "convolve", "correlate"]


def _transform_dtype(a: np.ndarray) -> np.dtype:
    """The dtype scipy.fft transforms ``a`` in: integers and booleans as float64, float16 as
    float32, the other floats and complex as they are."""
    if a.dtype.kind in "biu":
        return np.dtype(np.float64)
    return np.promote_types(a.dtype, np.float32)


def _run(in1: Any, in2: Any, mode: str, method: str, correlate: bool, dtype: Any, context: Optional[Context]) -> np.ndarray:
    """The convolution (correlation) of two arrays of one rank, in ``dtype``: complex input as
    the real convolutions of its parts (a correlation with in2's conjugate, as scipy's)."""
    a, b = np.asarray(in1), np.asarray(in2)
    if a.ndim != b.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if np.iscomplexobj(a) or np.iscomplexobj(b):
        b = np.conj(b) if correlate else b

        def run(x: np.ndarray, y: np.ndarray) -> np.ndarray:
            return _lucent.convolve(resolve(context), working(x, "in1"), working(y, "in2"), mode, method, correlate)
        re = run(a.real, b.real)
        im = np.zeros_like(re)
        if np.iscomplexobj(b):
            im += run(a.real, b.imag)
            if np.iscomplexobj(a):
                re -= run(a.imag, b.imag)
        if np.iscomplexobj(a):
            im += run(a.imag, b.real)
        return finish(re + 1j * im, None, dtype)
    r = _lucent.convolve(resolve(context), working(a, "in1"), working(b, "in2"), mode, method, correlate)
    return finish(r, None, dtype, "even")


def _scalars(in1: Any, in2: Any, correlate: bool) -> Optional[Any]:
    """scipy's two 0-d inputs: their product (in2's conjugate for a correlation); else None."""
    a, b = np.asarray(in1), np.asarray(in2)
    if a.ndim == b.ndim == 0:
        return a * (np.conj(b) if correlate and np.iscomplexobj(b) else b)
    return None


def fftconvolve(in1: Any, in2: Any, mode: Mode = "full", axes: Optional[Sequence[int]] = None, *,
                context: Optional[Context] = None) -> np.ndarray:
    """scipy.signal.fftconvolve(in1, in2, mode, axes): the convolution by FFT, over every axis
    or over ``axes`` (in2 of length 1 along the others).

    >>> import numpy as np, lucent
    >>> lucent.signal.fftconvolve(np.array([1, 2, 3], "f4"), np.array([0, 1, 0.5], "f4"))
    array([0. , 1. , 2.5, 4. , 1.5], dtype=float32)
    """
    product = _scalars(in1, in2, False)
    if product is not None:
        return product
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
    dtype = np.result_type(_transform_dtype(a), _transform_dtype(b))
    return _run(a, b, mode, "fft", False, dtype, context)


def convolve(in1: Any, in2: Any, mode: Mode = "full", method: Method = "auto", *,
             context: Optional[Context] = None) -> np.ndarray:
    """scipy.signal.convolve(in1, in2, mode, method): by FFT or direct sums ("auto" chooses).

    >>> import numpy as np, lucent
    >>> lucent.signal.convolve(np.array([1, 2, 3], "f4"), np.array([1, 1], "f4"), method="direct")
    array([1., 3., 5., 3.], dtype=float32)
    """
    product = _scalars(in1, in2, False)
    if product is not None:
        return product
    return _run(in1, in2, mode, method, False, np.result_type(np.asarray(in1), np.asarray(in2)), context)


def correlate(in1: Any, in2: Any, mode: Mode = "full", method: Method = "auto", *,
              context: Optional[Context] = None) -> np.ndarray:
    """scipy.signal.correlate(in1, in2, mode, method): the cross-correlation (with in2's
    conjugate).

    >>> import numpy as np, lucent
    >>> lucent.signal.correlate(np.array([1, 2, 3], "f4"), np.array([1, 0], "f4"))
    array([0., 1., 2., 3.], dtype=float32)
    """
    product = _scalars(in1, in2, True)
    if product is not None:
        return product
    return _run(in1, in2, mode, method, True, np.result_type(np.asarray(in1), np.asarray(in2)), context)
