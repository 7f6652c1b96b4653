"""scipy.ndimage's measurements of labelled regions, with scipy's names, arguments and results
(lucent::ndimage::measurements: f64 on the host, in parallel).

``labels`` (broadcast against ``input``) and ``index`` as scipy: no labels, the whole array; no
index, every element whose label is above 0 as one region; a scalar index, one region and scalar
results; a sequence, one result per index value (an index absent from the labels is an empty
region: sum 0, mean NaN, minimum/maximum 0 and position 0, histogram None, and as scipy's sort
makes it, the median is the lowest value of the lowest label present). Labels
are integers (or floats of integer value); complex input is refused, as scipy's sort-based
measurements refuse it. Minimum and maximum return the input's own values in its dtype.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from . import _lucent

__all__ = ["sum_labels", "sum", "mean", "variance", "standard_deviation", "minimum", "maximum", "median",
           "minimum_position", "maximum_position", "extrema", "center_of_mass", "histogram", "find_objects",
           "labeled_comprehension"]


def _integers(a: np.ndarray, what: str) -> np.ndarray:
    """``a`` as int32 or int64 (what the measurements read), refusing non-integer values."""
    if a.dtype in (np.int32, np.int64):
        return a
    if a.dtype == np.bool_ or np.issubdtype(a.dtype, np.signedinteger) or a.dtype in (np.uint8, np.uint16, np.uint32):
        return a.astype(np.int64)
    if np.issubdtype(a.dtype, np.unsignedinteger) or np.issubdtype(a.dtype, np.floating):
        b = a.astype(np.int64)
        if a.size and not np.array_equal(b, a):
            raise ValueError(f"{what} must be integers (or of integer value) below 2**63")
        return b
    raise TypeError(f"{what} must be an integer array, not {a.dtype}")


def _regions(input: Any, labels: Any, index: Any) -> tuple:
    """(input as given, values read, labels read or None, index list or None, scalar result?)"""
    a = np.asarray(input)
    if np.iscomplexobj(a):
        raise TypeError("Complex type not supported")
    if labels is not None:
        a, lab = np.broadcast_arrays(a, np.asarray(labels))
        lab = np.ascontiguousarray(_integers(lab, "labels"))
    else:
        lab = None
    values = np.ascontiguousarray(a if a.dtype in (np.float32, np.float64) else a.astype(np.float64))
    if lab is None or index is None:
        return a, values, lab, None, True
    if np.isscalar(index):
        return a, values, lab, [int(_integers(np.asarray([index]), "index")[0])], True
    idx = _integers(np.asarray(index), "index")
    return a, values, lab, idx.ravel().tolist(), False


def _shaped(results: list, index: Any, dtype: Any) -> np.ndarray:
    return np.asarray(results, dtype=dtype).reshape(np.shape(index))


def _sum_dtype(a: np.ndarray) -> np.dtype:
    """The dtype numpy's sum gives ``a`` (int64 for bool and signed, uint64 for unsigned)."""
    return np.zeros(0, a.dtype).sum().dtype


def sum_labels(input: Any, labels: Any = None, index: Any = None) -> Any:
    """scipy.ndimage.sum_labels: the sum of the values of each region (float64 per index value;
    numpy's sum dtype for one region).

    >>> import numpy as np, lucent
    >>> lucent.ndimage.sum_labels([1, 2, 3, 4], labels=[1, 1, 2, 2], index=[1, 2]).tolist()
    [3.0, 7.0]
    """
    a, values, lab, idx, scalar = _regions(input, labels, index)
    sums = _lucent.label_moments(values, lab, idx, "sum")
    if scalar:
        return _sum_dtype(a).type(sums[0])
    return _shaped(sums, index, np.float64)


def sum(input: Any, labels: Any = None, index: Any = None) -> Any:
    """scipy.ndimage.sum: another name of `sum_labels`."""
    return sum_labels(input, labels, index)


def _moment(which: str, input: Any, labels: Any, index: Any) -> Any:
    _, values, lab, idx, scalar = _regions(input, labels, index)
    m = _lucent.label_moments(values, lab, idx, which)
    return np.float64(m[0]) if scalar else _shaped(m, index, np.float64)


def mean(input: Any, labels: Any = None, index: Any = None) -> Any:
    """scipy.ndimage.mean: the mean of each region (float64; NaN for an empty one).

    >>> import numpy as np, lucent
    >>> float(lucent.ndimage.mean(np.arange(6.0), labels=[0, 0, 1, 1, 1, 0]))
    3.0
    """
    return _moment("mean", input, labels, index)


def variance(input: Any, labels: Any = None, index: Any = None) -> Any:
    """scipy.ndimage.variance: the population variance of each region (float64)."""
    return _moment("variance", input, labels, index)


def standard_deviation(input: Any, labels: Any = None, index: Any = None) -> Any:
    """scipy.ndimage.standard_deviation: the square root of `variance`."""
    return np.sqrt(variance(input, labels, index))


def _extrema(input: Any, labels: Any, index: Any, function: str) -> tuple:
    """(input, per-region (min, max, min position, max position) or None, scalar?)"""
    a, values, lab, idx, scalar = _regions(input, labels, index)
    found = _lucent.label_extrema(values, lab, idx)
    if scalar and found[0] is None:
        raise ValueError(f"{function}: the region has no elements (zero-size array to reduction operation)")
    return a, found, scalar


def _value_at(a: np.ndarray, position: Optional[list]) -> Any:
    """The input's own element (its dtype, exactly), 0 for an empty region as scipy."""
    return a[tuple(position)] if position is not None else a.dtype.type(0)


def minimum(input: Any, labels: Any = None, index: Any = None) -> Any:
    """scipy.ndimage.minimum: the lowest value of each region, in the input's dtype (0 for an
    index absent from the labels).

    >>> import numpy as np, lucent
    >>> lucent.ndimage.minimum(np.array([5, 2, 7, 1]), labels=[1, 1, 2, 2], index=[1, 2, 3]).tolist()
    [2, 1, 0]
    """
    a, found, scalar = _extrema(input, labels, index, "minimum")
    mins = [_value_at(a, None if e is None else e[2]) for e in found]
    return mins[0] if scalar else _shaped(mins, index, a.dtype)


def maximum(input: Any, labels: Any = None, index: Any = None) -> Any:
    """scipy.ndimage.maximum: the highest value of each region, in the input's dtype."""
    a, found, scalar = _extrema(input, labels, index, "maximum")
    maxs = [_value_at(a, None if e is None else e[3]) for e in found]
    return maxs[0] if scalar else _shaped(maxs, index, a.dtype)


def _positions(a: np.ndarray, found: list, which: int) -> list:
    zero = (np.int64(0),) * a.ndim
    return [zero if e is None else tuple(np.int64(i) for i in e[which]) for e in found]


def minimum_position(input: Any, labels: Any = None, index: Any = None) -> Any:
    """scipy.ndimage.minimum_position: the index (a tuple) of each region's lowest value, the
    first in C order; a list of tuples for a sequence of index values.

    >>> import numpy as np, lucent
    >>> [int(i) for i in lucent.ndimage.minimum_position(np.array([[4, 1], [1, 3]]))]
    [0, 1]
    """
    a, found, scalar = _extrema(input, labels, index, "minimum_position")
    p = _positions(a, found, 2)
    return p[0] if scalar else p


def maximum_position(input: Any, labels: Any = None, index: Any = None) -> Any:
    """scipy.ndimage.maximum_position: the index of each region's highest value (the first)."""
    a, found, scalar = _extrema(input, labels, index, "maximum_position")
    p = _positions(a, found, 3)
    return p[0] if scalar else p


def extrema(input: Any, labels: Any = None, index: Any = None) -> tuple:
    """scipy.ndimage.extrema: (minimums, maximums, minimum positions, maximum positions)."""
    a, found, scalar = _extrema(input, labels, index, "extrema")
    mins = [_value_at(a, None if e is None else e[2]) for e in found]
    maxs = [_value_at(a, None if e is None else e[3]) for e in found]
    lo, hi = _positions(a, found, 2), _positions(a, found, 3)
    if scalar:
        return mins[0], maxs[0], lo[0], hi[0]
    return _shaped(mins, index, a.dtype), _shaped(maxs, index, a.dtype), lo, hi


def median(input: Any, labels: Any = None, index: Any = None) -> Any:
    """scipy.ndimage.median: the median of each region (the mean of the two middle values of an
    even count; the input's float dtype, float64 for integers; NaN for one empty region).

    >>> import numpy as np, lucent
    >>> lucent.ndimage.median(np.array([1.0, 9.0, 2.0, 4.0]), labels=[1, 1, 1, 1], index=[1]).tolist()
    [3.0]
    """
    a, values, lab, idx, scalar = _regions(input, labels, index)
    m = _lucent.label_median(values, lab, idx)
    if not scalar and None in m:
        # scipy's median of an index value absent from the labels is the lowest value of the
        # lowest label present (an artefact of its sort, kept so results compare equal).
        lowest = _lucent.label_extrema(values, lab, [int(lab.min())])[0]
        m = [lowest[0] if v is None else v for v in m]
    m = [np.nan if v is None else v for v in m]
    dtype = a.dtype if np.issubdtype(a.dtype, np.floating) else np.float64
    return np.dtype(dtype).type(m[0]) if scalar else _shaped(m, index, dtype)


def center_of_mass(input: Any, labels: Any = None, index: Any = None) -> Any:
    """scipy.ndimage.center_of_mass: Σ value × index / Σ value along every axis (a tuple per
    region; a list of tuples for a sequence of index values).

    >>> import numpy as np, lucent
    >>> [float(c) for c in lucent.ndimage.center_of_mass(np.array([[0.0, 1.0], [0.0, 3.0]]))]
    [0.75, 1.0]
    """
    a, values, lab, idx, scalar = _regions(input, labels, index)
    c = np.asarray(_lucent.label_center_of_mass(values, lab, idx), dtype=np.float64).reshape(-1, a.ndim)
    if scalar:
        return tuple(c[0])
    # scipy's arrangement: one array per axis shaped like the index, transposed.
    return [tuple(v) for v in np.array([c[:, d].reshape(np.shape(index)) for d in range(a.ndim)]).T]


def histogram(input: Any, min: float, max: float, bins: int, labels: Any = None, index: Any = None) -> Any:
    """scipy.ndimage.histogram: counts in ``bins`` equal bins from ``min`` to ``max`` (the last
    closed on both sides; values outside not counted), per region: an array of int64 counts, or
    an object array of them (None for an index absent from the labels).

    >>> import numpy as np, lucent
    >>> lucent.ndimage.histogram(np.array([0.0, 0.2, 0.5, 1.0]), 0, 1, 2).tolist()
    [2, 2]
    """
    _, values, lab, idx, scalar = _regions(input, labels, index)
    if int(bins) != bins or bins < 1:
        raise ValueError(f"`bins` must be a positive integer, got {bins!r}")
    found = _lucent.label_histogram(values, lab, idx, float(min), float(max), int(bins))
    if scalar:
        return np.asarray(found[0] if found[0] is not None else np.zeros(int(bins)), dtype=np.int64)
    out = np.empty(len(found), dtype=object)
    for i, h in enumerate(found):
        out[i] = None if h is None else np.asarray(h, dtype=np.int64)
    return out.reshape(np.shape(index))


def find_objects(input: Any, max_label: int = 0) -> list:
    """scipy.ndimage.find_objects: for labels 1 .. max_label (0: the largest present), the
    smallest box holding each as a tuple of slices, None for a label absent from the array.

    >>> import numpy as np, lucent
    >>> lucent.ndimage.find_objects(np.array([[0, 1, 1], [2, 0, 1]]))
    [(slice(0, 2, None), slice(1, 3, None)), (slice(1, 2, None), slice(0, 1, None))]
    """
    a = np.asarray(input)
    if np.iscomplexobj(a):
        raise TypeError("Complex type not supported")
    if np.issubdtype(a.dtype, np.floating):
        raise TypeError("find_objects: the labels must be integers")
    boxes = _lucent.find_objects(np.ascontiguousarray(_integers(a, "labels")), int(max(max_label, 0)))
    return [None if b is None else tuple(slice(lo, hi, None) for lo, hi in b) for b in boxes]


def labeled_comprehension(input: Any, labels: Any, index: Any, func: Callable, out_dtype: Any, default: Any,
                          pass_positions: bool = False) -> Any:
    """scipy.ndimage.labeled_comprehension: ``func`` applied to the values of each region (and
    their flat positions with ``pass_positions``), ``default`` for an empty region.

    >>> import numpy as np, lucent
    >>> lucent.ndimage.labeled_comprehension(np.arange(6), [1, 1, 2, 2, 0, 0], [1, 2, 3], np.max, int, -1).tolist()
    [1, 3, -1]
    """
    a = np.asarray(input)
    positions = np.arange(a.size).reshape(a.shape) if pass_positions else None
    if labels is None:
        return func(a, positions) if pass_positions else func(a)
    a, lab = np.broadcast_arrays(a, np.asarray(labels))
    if pass_positions:
        positions = np.broadcast_to(positions, a.shape)
    if index is None:
        mask = lab > 0
        return func(a[mask], positions[mask]) if pass_positions else func(a[mask])
    scalar = np.isscalar(index)
    idx = np.atleast_1d(np.asarray(index))
    # Group the elements by label (a stable sort keeps each region's values in C order).
    order = np.argsort(lab, axis=None, kind="stable")
    sorted_labels = lab.ravel()[order]
    lo = np.searchsorted(sorted_labels, idx.ravel(), side="left")
    hi = np.searchsorted(sorted_labels, idx.ravel(), side="right")
    out = np.empty(idx.size, dtype=out_dtype)
    out[...] = default
    flat = a.ravel()[order]
    flat_positions = positions.ravel()[order] if pass_positions else None
    for i, (l, h) in enumerate(zip(lo, hi)):
        if h > l:
            out[i] = func(flat[l:h], flat_positions[l:h]) if pass_positions else func(flat[l:h])
    out = out.reshape(idx.shape)
    return out[0] if scalar else out
