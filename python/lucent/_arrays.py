"""Argument conversion shared by the modules: dtypes, axes, per-axis values, outputs."""

from __future__ import annotations

import numbers
from typing import Any, Optional, Sequence

import numpy as np


def real(x: Any, name: str) -> np.ndarray:
    """``x`` as a C-ordered float32 array (no copy when it already is one); integers and other
    floats are converted as scipy converts them, complex input is refused."""
    a = np.asarray(x)
    if np.iscomplexobj(a):
        raise TypeError(f"{name} must be real, not {a.dtype}")
    if a.dtype == object:
        raise TypeError(f"{name} must be numeric, not object")
    return np.ascontiguousarray(_with_axes(a, name), dtype=np.float32)


def complex64(x: Any, name: str = "a") -> np.ndarray:
    return np.ascontiguousarray(_with_axes(np.asarray(x), name), dtype=np.complex64)


def mask(x: Any, name: str = "mask") -> np.ndarray:
    return np.ascontiguousarray(_with_axes(np.asarray(x), name), dtype=bool)


def _with_axes(a: np.ndarray, name: str) -> np.ndarray:
    # ndarray's 0-d arrays would reach lucent as one element of one axis: refuse them here.
    if a.ndim == 0:
        raise ValueError(f"{name} is a 0-d array (a scalar); lucent takes arrays of 1 to 4 axes")
    return a


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


def finish(result: np.ndarray, output: Any = None) -> np.ndarray:
    """scipy.ndimage's ``output``: None (the float32 result), a dtype, or an array written in place."""
    if output is None:
        return result
    if isinstance(output, np.ndarray):
        if output.shape != result.shape:
            raise ValueError(f"output has shape {output.shape}, the result {result.shape}")
        output[...] = result
        return output
    return result.astype(output)


def unsupported(name: str, value: Any, default: Any, function: str) -> None:
    """Refuses an argument of the replaced function that lucent does not implement."""
    if value is not default and value != default:
        raise NotImplementedError(f"lucent's {function} takes only {name}={default!r}, not {value!r}")
