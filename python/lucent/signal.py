"""scipy.signal's convolutions on the GPU: :func:`fftconvolve`, :func:`convolve` and
:func:`correlate`, real or complex input of 1-4 axes, modes full, same and valid exactly as
scipy's.

Results have scipy's dtypes: :func:`convolve` and :func:`correlate` the inputs' common dtype
(``numpy.result_type``: uint8 with uint8 gives uint8, int16 with float32 float32, integers
rounded to nearest as scipy rounds its FFT result), :func:`fftconvolve` that of the inputs'
transforms (float32 for float32 inputs, float64 when either is float64 or an integer,
complex64 or complex128 for complex input); two 0-d inputs give their product, as scipy.
float64, complex128 and integer results are computed in f64 on devices with it (NVIDIA and AMD
through Vulkan, DX12, lavapipe; whole arrays of one buffer each), elsewhere in float32 with a
warning once per process; integer results are exact while the sums stay within 2**53 (2**24 in
float32).

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
    ctx = resolve(context)
    # Both operands in one working type: float64 where the result is double precision or integer.
    dt = np.dtype(dtype)
    wide = dt.kind in "biu" or dt in (np.float64, np.complex128)

    def run(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        x, y = working(x, "in1", context=ctx if wide else None), working(y, "in2", context=ctx if wide else None)
        kind = np.float64 if wide else np.float32
        return _lucent.convolve(ctx, np.ascontiguousarray(x, kind), np.ascontiguousarray(y, kind), mode, method, correlate)
    if np.iscomplexobj(a) or np.iscomplexobj(b):
        b = np.conj(b) if correlate else b
        re = run(a.real, b.real)
        im = np.zeros_like(re)
        if np.iscomplexobj(b):
            im += run(a.real, b.imag)
            if np.iscomplexobj(a):
                re -= run(a.imag, b.imag)
        if np.iscomplexobj(a):
            im += run(a.imag, b.real)
        return finish(re + 1j * im, None, dtype)
    return finish(run(a, b), None, dtype, "even")


def _scalars(in1: Any, in2: Any, correlate: bool) -> Optional[Any]:
    """scipy's two 0-d inputs: their product (in2's conjugate for a correlation); else None."""
    a, b = np.asarray(in1), np.asarray(in2)
    if a.ndim == b.ndim == 0:
        return a * (np.conj(b) if correlate and np.iscomplexobj(b) else b)
    return None


def fftconvolve(in1: Any, in2: Any, mode: Mode = "full", axes: Optional[Sequence[int]] = None, *,
                context: Optional[Context] = None) -> np.ndarray:
    """scipy.signal.fftconvolve(in1, in2, mode, axes): the convolution by FFT, over every axis
    or over ``axes``, the others broadcast as scipy broadcasts them.

    >>> import numpy as np, lucent
    >>> lucent.signal.fftconvolve(np.array([1, 2, 3], "f4"), np.array([0, 1, 0.5], "f4"))
    array([0. , 1. , 2.5, 4. , 1.5], dtype=float32)
    """
    product = _scalars(in1, in2, False)
    if product is not None:
        return product
    a, b = np.asarray(in1), np.asarray(in2)
    if a.ndim != b.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    dtype = np.result_type(_transform_dtype(a), _transform_dtype(b))
    if axes is not None and sorted(_axes(axes, a.ndim)) != list(range(a.ndim)):
        listed = set(_axes(axes, a.ndim))
        if all(b.shape[k] == 1 for k in set(range(a.ndim)) - listed):
            # in2 of length 1 along the axes left out: the convolution over every axis is the
            # same thing (every mode keeps in1's length there), in one call.
            return _run(a, b, mode, "fft", False, dtype, context)
        return _broadcast(a, b, mode, sorted(listed), dtype, context)
    dtype = np.result_type(_transform_dtype(a), _transform_dtype(b))
    return _run(a, b, mode, "fft", False, dtype, context)


def _broadcast(a: np.ndarray, b: np.ndarray, mode: str, axes: list, dtype: Any, context: Optional[Context]) -> np.ndarray:
    """scipy's fftconvolve over ``axes`` with the other axes broadcast (equal, or 1 in either
    input): the transforms of both inputs along ``axes`` by lucent.fft, their product with
    numpy's broadcasting, the inverse, cut to ``mode`` as scipy cuts it (centred on in1's shape
    for "same", on both inputs' overlap for "valid", in2 and in1 swapped where scipy swaps
    them). Axes of length 1 in either input are left out of the transform, as scipy does."""
    from . import fft as _fft
    for k in range(a.ndim):
        if k not in axes and a.shape[k] != b.shape[k] and 1 not in (a.shape[k], b.shape[k]):
            raise ValueError(f"incompatible shapes for in1 and in2: {a.shape} and {b.shape}")
    if mode not in ("full", "same", "valid"):
        raise ValueError("acceptable mode flags are 'valid', 'same', or 'full'")
    if mode == "valid":
        ok = [a.shape[k] >= b.shape[k] for k in axes]
        if not all(ok):
            if any(ok):
                raise ValueError("For 'valid' mode, one must be at least as large as the other in every dimension")
            a, b = b, a
    axes = [k for k in axes if a.shape[k] != 1 and b.shape[k] != 1]
    s1, s2 = a.shape, b.shape
    shape = [s1[k] + s2[k] - 1 if k in axes else max(s1[k], s2[k]) for k in range(a.ndim)]
    if not axes:
        ret = a * b
    else:
        s = [shape[k] for k in axes]
        if np.iscomplexobj(a) or np.iscomplexobj(b):
            spectra = [_fft.fftn(x, s, axes, context=context) for x in (a, b)]
            ret = _fft.ifftn(spectra[0] * spectra[1], s, axes, context=context)
        else:
            spectra = [_fft.rfftn(x, s, axes, context=context) for x in (a, b)]
            ret = _fft.irfftn(spectra[0] * spectra[1], s, axes, context=context)
    if mode == "same":
        want = s1
    elif mode == "valid":
        want = [s1[k] - s2[k] + 1 if k in axes else ret.shape[k] for k in range(a.ndim)]
    else:
        want = ret.shape
    start = [(n - m) // 2 for n, m in zip(ret.shape, want)]
    ret = ret[tuple(slice(st, st + m) for st, m in zip(start, want))]
    return finish(np.ascontiguousarray(ret), None, dtype)


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
