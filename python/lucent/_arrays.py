"""Argument conversion shared by the modules: the working array, the result's dtype, axes,
per-axis values, outputs.

Two helpers hold the dtype rules, so that every function follows them the same way:

* :func:`working` (:func:`complex_working` for complex data) — the array lucent computes on, in
  C order: float32, or float64 where the function computes in f64 (chosen here, and only here).
* :func:`finish` — a computed result in scipy's result dtype (``output``: None for the dtype
  scipy gives by default, a dtype, or an array written in place), converted as scipy converts
  its double results: truncated toward zero (a C cast) for the filters, rounded to nearest
  (halves away from zero) and clipped to the type's range for the interpolation functions.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any, Literal, Optional, Sequence

import numpy as np

Rounding = Literal["truncate", "nearest", "even", "cast"]


def working(x: Any, name: str, *, exact: bool = False, context: Any = None) -> np.ndarray:
    """``x`` as the array lucent computes on, in C order (no copy when it already is one):
    float32, or float64 for float64, integer and boolean input where the function computes in
    float64 (it passes its ``context``: the native call takes float64 and computes in f64 on
    devices with it, in float32 elsewhere, with a warning once per process). Complex, object
    and 0-d input is refused (the functions that take a 0-d array as scipy does handle it
    before). ``exact``: the function returns input values (rank filters, grey morphology), so
    integers the computation cannot hold (beyond 2**53 in float64, 2**24 in float32) are
    refused rather than returned changed."""
    a = np.asarray(x)
    if np.iscomplexobj(a):
        raise TypeError(f"{name} must be real, not {a.dtype}")
    if a.dtype == object:
        raise TypeError(f"{name} must be numeric, not object")
    _with_axes(a, name)
    wide = context is not None and (a.dtype == np.float64 or a.dtype.kind in "biu")
    in_f64 = wide and _computes_f64(context)
    bits = 53 if in_f64 else 24
    limit = 2 ** bits
    if exact and a.dtype.kind in "iu" and a.dtype.itemsize >= 4 and a.size:
        lo, hi = int(a.min()), int(a.max())
        if max(-lo, hi) > limit:
            raise ValueError(f"{name}: {a.dtype} values from {lo} to {hi} cannot be selected exactly (lucent computes "
                             f"in {'float64' if in_f64 else 'float32'} here, exact for |values| <= 2**{bits})")
    return np.ascontiguousarray(a, dtype=np.float64 if wide else np.float32)


def weights(x: Any, name: str = "weights") -> np.ndarray:
    """Filter weights or structure values as float64 (the native calls send them in the data's
    type)."""
    a = np.asarray(x)
    if a.dtype == object:
        raise TypeError(f"{name} must be numeric, not object")
    return np.ascontiguousarray(a, dtype=np.float64)


_WARNED_F32 = False


def _computes_f64(context: Any) -> bool:
    """Whether ``context``'s device computes float64 in f64; warns once per process when not."""
    global _WARNED_F32
    if context.f64:
        return True
    if not _WARNED_F32:
        _WARNED_F32 = True
        warnings.warn(f"{context.info()['adapter']['name']} has no float64 (SHADER_F64, e.g. Metal): lucent computes "
                      "float64 and integer data in float32 there and returns scipy's dtypes", RuntimeWarning, stacklevel=4)
    return False


def real(x: Any, name: str) -> np.ndarray:
    """``x`` as a C-ordered float32 array (:func:`working`), for the modules whose results are
    float32 whatever the input."""
    return working(x, name)


def complex64(x: Any, name: str = "a") -> np.ndarray:
    return np.ascontiguousarray(_with_axes(np.asarray(x), name), dtype=np.complex64)


def complex_working(x: Any, name: str, context: Any) -> np.ndarray:
    """``x`` as the complex array lucent computes on, in C order: complex128 for complex128,
    float64, integer and boolean input (computed in f64 on devices with it, else in float32 with
    a warning once per process, as :func:`working`), else complex64."""
    a = _with_axes(np.asarray(x), name)
    if a.dtype == object:
        raise TypeError(f"{name} must be numeric, not object")
    wide = a.dtype in (np.complex128, np.float64) or a.dtype.kind in "biu"
    if wide:
        _computes_f64(context)
    return np.ascontiguousarray(a, dtype=np.complex128 if wide else np.complex64)


def mask(x: Any, name: str = "mask") -> np.ndarray:
    return np.ascontiguousarray(_with_axes(np.asarray(x), name), dtype=bool)


def nonzero(a: np.ndarray) -> np.ndarray:
    """The non-zero elements of ``a`` (an array of at least one axis) as a contiguous bool mask:
    ``a`` itself where it is one already (a volume's mask is not copied)."""
    return a if a.dtype == np.bool_ and a.flags.c_contiguous else np.ascontiguousarray(a != 0)


def _with_axes(a: np.ndarray, name: str) -> np.ndarray:
    # ndarray's 0-d arrays would reach lucent as one element of one axis: refuse them here.
    if a.ndim == 0:
        raise ValueError(f"{name} is a 0-d array (a scalar); lucent takes arrays of 1 to 4 axes")
    return a


def result_dtype(output: Any, like: Any, complex_result: bool = False) -> np.dtype:
    """The dtype of scipy.ndimage's ``output`` (its ``_ni_support._get_output``): ``like`` (the
    input's dtype, or the function's own default) when None, else the dtype given or the
    array's. A complex result needs a complex dtype: a dtype given as a type or np.dtype is
    promoted (with scipy's warning), one given as a string or an array is refused."""
    if output is None:
        dt = np.dtype(like)
        return np.promote_types(dt, np.complex64) if complex_result and dt.kind != "c" else dt
    if isinstance(output, np.ndarray):
        dt = output.dtype
        if complex_result and dt.kind != "c":
            raise RuntimeError("output must have complex dtype")
        return dt
    if isinstance(output, str):
        dt = np.dtype(output)
        if complex_result and dt.kind != "c":
            raise RuntimeError("output must have complex dtype")
        if not issubclass(dt.type, np.number):
            raise RuntimeError("output must have numeric dtype")
        return dt
    dt = np.dtype(output)
    if complex_result and dt.kind != "c":
        warnings.warn("promoting specified output dtype to complex", stacklevel=4)
        dt = np.promote_types(dt, np.complex64)
    return dt


def convert(values: Any, dtype: Any, rounding: Rounding = "truncate") -> np.ndarray:
    """Computed values in ``dtype`` as scipy.ndimage writes its double results:

    * "truncate" — the filters' C cast: toward zero, wrapping around the integer type's range
      (-10 → 246 in uint8); a boolean result is that cast's byte, non-zero or not (0.7 → False).
    * "nearest" — the interpolation functions': to nearest with halves away from zero, clipped
      to the type's range (unsigned: negatives to 0); booleans as "truncate".
    * "even" — scipy.signal's: to nearest, halves to even (numpy's round), then numpy's cast (a
      boolean: non-zero or not).
    * "cast" — numpy's cast (scipy's copies of the input: ``output[...] = input``).
    Float and complex dtypes take the values as they are (rounded to the dtype's precision)."""
    r = np.asarray(values)
    dt = np.dtype(dtype)
    if dt.kind in "fc" or r.dtype.kind not in "fc" or rounding in ("cast", "even"):
        if r.dtype.kind == "c" and dt.kind != "c":
            r = r.real
        if rounding == "even" and dt.kind not in "fc" and r.dtype.kind == "f":
            r = np.rint(r)
        with np.errstate(invalid="ignore", over="ignore"):
            return r.astype(dt, copy=False)
    t = r.real.astype(np.float64, copy=False)
    with np.errstate(invalid="ignore", over="ignore"):
        if dt == np.bool_:
            return t.astype(np.uint8) != 0
        if rounding == "truncate":
            # numpy casts out-of-range doubles to uint32 unlike C (through int64, wrapping).
            return t.astype(np.int64).astype(dt) if dt == np.uint32 else t.astype(dt)
        # scipy's CASE_INTERP_OUT_UINT / _INT (ni_interpolation.c): t + 0.5 (unsigned: 0 when
        # not positive, NaN included), t - 0.5 below zero, clipped to the range, then cast.
        info = np.iinfo(dt)
        t = np.where(t > 0, t + 0.5, 0.0 if dt.kind == "u" else t - 0.5)
        high, low = t > float(info.max), t < float(info.min)
        out = np.where(high | low, 0.0, t).astype(dt)
        # The clip's bound, cast: the type's maximum, except uint64's (2**64 as a double, cast
        # to 0 by scipy's x86-64 build).
        out[high] = 0 if dt == np.uint64 else info.max
        out[low] = info.min
        return out


def finish(result: Any, output: Any = None, like: Any = None, rounding: Rounding = "truncate") -> np.ndarray:
    """A computed result as scipy returns it: in :func:`result_dtype` (``like``: the dtype
    scipy gives when ``output`` is None, by default the result's own), converted with
    ``rounding`` (:func:`convert`), or written into ``output`` when it is an array (then
    returned)."""
    r = np.asarray(result)
    dt = result_dtype(output, r.dtype if like is None else like, r.dtype.kind == "c")
    if isinstance(output, np.ndarray):
        if output.shape != r.shape:
            raise RuntimeError(f"output shape not correct: output has shape {output.shape}, the result {r.shape}")
        output[...] = convert(r, dt, rounding)
        return output
    return convert(r, dt, rounding)


def count(n: Any, name: str) -> int:
    """A non-negative whole number of something (iterations, samples), as a ValueError otherwise."""
    if isinstance(n, bool) or not isinstance(n, (numbers.Integral, np.integer)) or n < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {n!r}")
    return int(n)


def axis(a: int, ndim: int) -> int:
    """A (possibly negative) axis as its index, numpy's AxisError (a ValueError) when out of range."""
    if not -ndim <= a < ndim:
        raise np.exceptions.AxisError(a, ndim)
    return a % ndim


def axes(value: Optional[Sequence[int]], ndim: int) -> list[int]:
    if value is None:
        return list(range(ndim))
    out = [axis(int(a), ndim) for a in np.atleast_1d(value)]
    if len(set(out)) != len(out):
        raise ValueError(f"repeated axes {list(value)}")
    return out


def per_axis(value: Any, ndim: int, name: str) -> list:
    """One value for every axis, or one per axis."""
    if isinstance(value, numbers.Number):
        return [value] * ndim
    values = list(value)
    if len(values) != ndim:
        raise ValueError(f"{name} has {len(values)} values for {ndim} axes")
    return values


def on_axes(value: Any, over: Optional[Sequence[int]], ndim: int, name: str, rest: Any) -> list:
    """scipy's per-axis value with ``axes``: one value, or one per axis of ``over`` (default every
    axis), spread over all ``ndim`` axes with ``rest`` on the others."""
    chosen = axes(over, ndim)
    out = [rest] * ndim
    for a, v in zip(chosen, per_axis(value, len(chosen), name)):
        out[a] = v
    return out


def unsupported(name: str, value: Any, default: Any, function: str) -> None:
    """Refuses an argument of the replaced function that lucent does not implement."""
    if value is not default and value != default:
        raise NotImplementedError(f"lucent's {function} takes only {name}={default!r}, not {value!r}")
