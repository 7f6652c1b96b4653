"""numpy.fft on the GPU: the same functions, arguments and conventions (axes, s with -1 for
the input's length, norm, out).

Results have numpy's dtypes: complex128 for float64, integer and boolean input (float64 from
the inverse real transforms), complex64 for float32 and float16 (float32; numpy 2 keeps single
precision), complex64 and complex128 kept. Double precision results are computed in f64 on
devices with it (NVIDIA and AMD through Vulkan, DX12, lavapipe), elsewhere (Metal) in f32 with
a warning once per process. Any length (mixed radix, Rader, Bluestein); up to 4 axes.

>>> import numpy as np, lucent
>>> x = np.random.rand(30, 17).astype("f4")
>>> bool(np.allclose(lucent.fft.fftn(x), np.fft.fftn(x), atol=1e-4))
True
>>> lucent.fft.fft(np.arange(4)).dtype, lucent.fft.irfft(np.ones(3, "c8")).dtype
(dtype('complex128'), dtype('float32'))
"""

from __future__ import annotations

from typing import Any, Literal, Optional, Sequence

import numpy as np
from numpy.fft import fftfreq, fftshift, ifftshift, rfftfreq

from . import _lucent
from ._arrays import axes as _axes, complex_working, finish, working
from ._context import Context, resolve

Norm = Optional[Literal["backward", "ortho", "forward"]]

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift"]


def _transformed(ndim: int, s: Optional[Sequence[int]], axes: Optional[Sequence[int]]) -> list[int]:
    """numpy's axes of (s, axes): ``axes``, else the last len(s) axes, else every axis."""
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError("s and axes must have the same length")
    if axes is None:
        axes = range(ndim) if s is None else range(ndim - len(s), ndim)
    return _axes(list(axes), ndim)


def _shape(a: np.ndarray, s: Optional[Sequence[int]], axes: Optional[Sequence[int]]) -> tuple[np.ndarray, list[int]]:
    """numpy's (s, axes): the axes transformed, and ``a`` cropped or zero-padded to ``s`` on them
    (-1 in ``s``: the input's length, as numpy 2)."""
    axes = _transformed(a.ndim, s, axes)
    if s is None:
        return a, axes
    return _fit(a, _sizes(a, s, axes), axes), axes


def _sizes(a: np.ndarray, s: Sequence[int], axes: list[int]) -> list[int]:
    return [a.shape[ax] if int(n) == -1 else int(n) for n, ax in zip(s, axes)]


def _complex_dtype(a: Any) -> np.dtype:
    """numpy.fft's result dtype for ``a``: complex128 for integers and booleans, else the
    complex type of ``a``'s precision (complex64 for float16 and float32)."""
    dt = np.asarray(a).dtype
    if dt.kind in "biu":
        return np.dtype(np.complex128)
    return np.promote_types(dt, np.complex64)


def _real_dtype(a: Any) -> np.dtype:
    """numpy.fft's irfft dtype for ``a``: the real type of :func:`_complex_dtype`."""
    return np.finfo(_complex_dtype(a)).dtype


def _placed(result: np.ndarray, out: Any, dtype: Any) -> np.ndarray:
    """numpy's ``out``: the result (in ``dtype``, numpy's) written into it (shape checked), else
    the result."""
    result = finish(result, None, dtype)
    if out is None:
        return result
    if not isinstance(out, np.ndarray) or out.shape != result.shape:
        raise ValueError(f"out must be an array of shape {result.shape}")
    out[...] = result
    return out


def _fit(a: np.ndarray, s: list[int], axes: list[int]) -> np.ndarray:
    for n, ax in zip(s, axes):
        if int(n) < 1:
            raise ValueError(f"invalid number of data points ({n}) specified")
        if n < a.shape[ax]:
            a = a[(slice(None),) * ax + (slice(0, n),)]
        elif n > a.shape[ax]:
            pad = [(0, 0)] * a.ndim
            pad[ax] = (0, n - a.shape[ax])
            a = np.pad(a, pad)
    return np.ascontiguousarray(a)


def _half_axis_last(x: np.ndarray, axes: list[int]) -> tuple[np.ndarray, list[int], Optional[int]]:
    """lucent halves the highest transformed axis, numpy the last one named: ``x`` with numpy's
    half axis moved to the end when it is not the highest, the axes renumbered, and where it
    came from (None: not moved)."""
    half = axes[-1]
    if half == max(axes):
        return x, axes, None
    moved = np.ascontiguousarray(np.moveaxis(x, half, -1))
    order = [a for a in range(x.ndim) if a != half] + [half]
    return moved, [order.index(a) for a in axes], half


def _half_axis_back(y: np.ndarray, half: Optional[int]) -> np.ndarray:
    return y if half is None else np.ascontiguousarray(np.moveaxis(y, -1, half))


def fftn(a: Any, s: Optional[Sequence[int]] = None, axes: Optional[Sequence[int]] = None, norm: Norm = None,
         out: Any = None, *,
         context: Optional[Context] = None) -> np.ndarray:
    """numpy.fft.fftn: the N-dimensional discrete Fourier transform (complex64 for float32 and
    complex64 input, complex128 for float64, integers and complex128, as numpy).

    >>> import numpy as np, lucent
    >>> lucent.fft.fftn(np.ones((4, 6), "f4"))[0, 0]
    np.complex64(24+0j)
    """
    ctx = resolve(context)
    x, ax = _shape(complex_working(a, "a", ctx), s, axes)
    return _placed(_lucent.fftn(ctx, x, ax, norm or "backward"), out, _complex_dtype(a))


def ifftn(a: Any, s: Optional[Sequence[int]] = None, axes: Optional[Sequence[int]] = None, norm: Norm = None,
          out: Any = None, *,
          context: Optional[Context] = None) -> np.ndarray:
    """numpy.fft.ifftn: the inverse of :func:`fftn` (scaled by 1/n with norm "backward").

    >>> import numpy as np, lucent
    >>> x = np.random.rand(5, 7).astype("f4")
    >>> bool(np.allclose(lucent.fft.ifftn(lucent.fft.fftn(x)).real, x, atol=1e-5))
    True
    """
    ctx = resolve(context)
    x, ax = _shape(complex_working(a, "a", ctx), s, axes)
    return _placed(_lucent.ifftn(ctx, x, ax, norm or "backward"), out, _complex_dtype(a))


def rfftn(a: Any, s: Optional[Sequence[int]] = None, axes: Optional[Sequence[int]] = None, norm: Norm = None,
          out: Any = None, *,
          context: Optional[Context] = None) -> np.ndarray:
    """numpy.fft.rfftn: the transform of real input, n/2 + 1 values along the last axis transformed.

    >>> import numpy as np, lucent
    >>> lucent.fft.rfftn(np.zeros((8, 10), "f4")).shape
    (8, 6)
    """
    ctx = resolve(context)
    x, ax = _shape(working(a, "a", context=ctx), s, axes)
    x, ax, half = _half_axis_last(x, ax)
    return _placed(_half_axis_back(_lucent.rfftn(ctx, x, ax, norm or "backward"), half), out, _complex_dtype(a))


def irfftn(a: Any, s: Optional[Sequence[int]] = None, axes: Optional[Sequence[int]] = None, norm: Norm = None,
           out: Any = None, *,
           context: Optional[Context] = None) -> np.ndarray:
    """numpy.fft.irfftn: the inverse of :func:`rfftn`, real (float32 for complex64 input, float64
    for complex128, as numpy); the last axis transformed has
    ``s[-1]`` values (default 2(m - 1) for m input values).

    >>> import numpy as np, lucent
    >>> x = np.random.rand(6, 9).astype("f4")
    >>> bool(np.allclose(lucent.fft.irfftn(lucent.fft.rfftn(x), x.shape), x, atol=1e-5))
    True
    """
    dtype = _real_dtype(a)
    ctx = resolve(context)
    x = complex_working(a, "a", ctx)
    ax = _transformed(x.ndim, s, axes)
    if s is None:
        length = 2 * (x.shape[ax[-1]] - 1)
        if length < 1:
            raise ValueError(f"invalid number of data points ({length}) specified")
    else:
        sizes = _sizes(x, list(s[:-1]), ax[:-1])
        length = x.shape[ax[-1]] if int(s[-1]) == -1 else int(s[-1])  # numpy 2: -1 is the input's length
        x = _fit(x, sizes + [length // 2 + 1], ax)
    x, ax, half = _half_axis_last(x, ax)
    r = _lucent.irfftn(ctx, x, ax, length, norm or "backward")
    return _placed(_half_axis_back(r, half), out, dtype)


def fft(a: Any, n: Optional[int] = None, axis: int = -1, norm: Norm = None, out: Any = None, *,
        context: Optional[Context] = None) -> np.ndarray:
    """numpy.fft.fft along one axis.

    >>> import numpy as np, lucent
    >>> lucent.fft.fft(np.arange(4, dtype="f4"))
    array([ 6.+0.j, -2.+2.j, -2.+0.j, -2.-2.j], dtype=complex64)
    """
    return fftn(a, None if n is None else [n], [axis], norm, out, context=context)


def ifft(a: Any, n: Optional[int] = None, axis: int = -1, norm: Norm = None, out: Any = None, *,
         context: Optional[Context] = None) -> np.ndarray:
    """numpy.fft.ifft along one axis.

    >>> import numpy as np, lucent
    >>> lucent.fft.ifft(np.ones(4, "f4")).real
    array([1., 0., 0., 0.], dtype=float32)
    """
    return ifftn(a, None if n is None else [n], [axis], norm, out, context=context)


def rfft(a: Any, n: Optional[int] = None, axis: int = -1, norm: Norm = None, out: Any = None, *,
         context: Optional[Context] = None) -> np.ndarray:
    """numpy.fft.rfft along one axis.

    >>> import numpy as np, lucent
    >>> lucent.fft.rfft(np.ones(6, "f4")).shape
    (4,)
    """
    return rfftn(a, None if n is None else [n], [axis], norm, out, context=context)


def irfft(a: Any, n: Optional[int] = None, axis: int = -1, norm: Norm = None, out: Any = None, *,
          context: Optional[Context] = None) -> np.ndarray:
    """numpy.fft.irfft along one axis.

    >>> import numpy as np, lucent
    >>> lucent.fft.irfft(np.ones(4, "c8"), 6).shape
    (6,)
    """
    return irfftn(a, None if n is None else [n], [axis], norm, out, context=context)


def fft2(a: Any, s: Optional[Sequence[int]] = None, axes: Sequence[int] = (-2, -1), norm: Norm = None,
         out: Any = None, *,
         context: Optional[Context] = None) -> np.ndarray:
    """numpy.fft.fft2: :func:`fftn` over the last two axes.

    >>> import numpy as np, lucent
    >>> lucent.fft.fft2(np.ones((3, 4, 5), "f4")).shape
    (3, 4, 5)
    """
    return fftn(a, s, axes, norm, out, context=context)


def ifft2(a: Any, s: Optional[Sequence[int]] = None, axes: Sequence[int] = (-2, -1), norm: Norm = None,
          out: Any = None, *,
          context: Optional[Context] = None) -> np.ndarray:
    """numpy.fft.ifft2: :func:`ifftn` over the last two axes.

    >>> import numpy as np, lucent
    >>> lucent.fft.ifft2(np.ones((4, 5), "c8"))[0, 0]
    np.complex64(1+0j)
    """
    return ifftn(a, s, axes, norm, out, context=context)


def rfft2(a: Any, s: Optional[Sequence[int]] = None, axes: Sequence[int] = (-2, -1), norm: Norm = None,
          out: Any = None, *,
          context: Optional[Context] = None) -> np.ndarray:
    """numpy.fft.rfft2: :func:`rfftn` over the last two axes.

    >>> import numpy as np, lucent
    >>> lucent.fft.rfft2(np.ones((4, 5), "f4")).shape
    (4, 3)
    """
    return rfftn(a, s, axes, norm, out, context=context)


def irfft2(a: Any, s: Optional[Sequence[int]] = None, axes: Sequence[int] = (-2, -1), norm: Norm = None,
           out: Any = None, *,
           context: Optional[Context] = None) -> np.ndarray:
    """numpy.fft.irfft2: :func:`irfftn` over the last two axes.

    >>> import numpy as np, lucent
    >>> lucent.fft.irfft2(np.ones((4, 3), "c8"), (4, 5)).shape
    (4, 5)
    """
    return irfftn(a, s, axes, norm, out, context=context)
