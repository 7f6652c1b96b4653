"""scipy.ndimage on the GPU, every name of scipy.ndimage 1.17 with its arguments, defaults and
results: filters (correlate, convolve and their 1D forms, the Gaussian filters and derivatives,
sobel, prewitt, laplace, uniform, minimum, maximum, rank, median and percentile filters),
Fourier filters, interpolation (B-spline orders 0 to 5), morphology (binary and grey, hole
filling, the exact Euclidean distance transform), labels and measurements; ``origin``, ``axes``
and complex input as scipy takes them; arrays of 1-4 axes. ``deskew`` for stage-scanned
light-sheet stacks (pycudadecon's deskewGPU). What lucent cannot do (a Python function per
window, chamfer distances, watershed_ift) raises NotImplementedError saying so.

Results have scipy's dtypes: ``output=None`` gives the input's dtype (uint8 in, uint8 out;
float64 in, float64 out; complex64 and complex128 kept), ``output`` (a dtype, or an array
written in place) another, and integer results are converted as scipy converts its double
results: truncated toward zero (a C cast, wrapping around the type's range) by the filters,
rounded to nearest (halves away from zero) and clipped to the type's range by the
interpolation functions. As scipy: spline_filter's default result is float64, the distance
transform's float64, label's int32, binary morphology's bool, the Fourier filters' as scipy's
``fourier_*``. A 0-d input is taken where scipy takes it (a filter over no axes).
Precision: the spatial filters (correlate, convolve and their 1D forms, the Gaussian, uniform
and derivative filters, sobel, prewitt, laplace, rank, median, percentile, minimum and maximum
filters, grey morphology) and interpolation (spline_filter, map_coordinates, affine_transform,
shift, zoom, rotate with the buffer sampler) compute float64, integer and boolean input in
float64 on devices with it (``lucent.context().f64``: Vulkan on NVIDIA and AMD, DX12,
lavapipe), float32 input in float32; the distance transform computes its float64 distances in
float64 there whatever the input's type. On devices without it (Metal) they compute in
float32, return scipy's dtype and warn once per process. The selection filters refuse integers
the computation cannot hold exactly (beyond ±2**53 in float64, ±2**24 in float32) rather than
return them changed. The Fourier filters compute complex128, float64 and integer input in f64
there too (fourier_ellipsoid's complex128 on the host: its sin, cos and J1 need f64 functions
WGSL lacks), complex64 and float32 in float32. The measurements of labelled regions are
computed in float64 on the host.

Interpolation takes lucent's ``sampler``: "buffer" (exact), "texture" (orders 0, 1 and 3:
hardware linear filtering, faster in places, weights rounded to a few bits) or "auto" (the
buffer).

>>> import numpy as np, lucent
>>> x = np.random.rand(40, 31).astype("f4")
>>> import scipy.ndimage
>>> bool(np.allclose(lucent.ndimage.gaussian_filter(x, 2), scipy.ndimage.gaussian_filter(x, 2), atol=1e-5))
True
>>> lucent.ndimage.uniform_filter(np.array([0, 0, 10, 0, 0], "u1"))  # 10/3 truncated, as scipy
array([0, 3, 3, 3, 0], dtype=uint8)
>>> lucent.ndimage.shift(np.array([0, 10, 0, 0], "u1"), 0.25, order=1)  # 7.5 and 2.5 rounded, as scipy
array([0, 8, 3, 0], dtype=uint8)
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Literal, Optional, Sequence, Union

import numpy as np

from . import _lucent
from ._arrays import axis as _axis, complex_working, convert, finish, nonzero, on_axes, per_axis, result_dtype, unsupported, working
from ._arrays import weights as _float64
from ._context import Context, resolve
from ._measurements import (center_of_mass, extrema, find_objects, histogram, labeled_comprehension, maximum,
                            maximum_position, mean, median, minimum, minimum_position, standard_deviation, sum,
                            sum_labels, variance)

Sampler = Literal["auto", "buffer", "texture"]

__all__ = ["correlate", "convolve", "correlate1d", "convolve1d", "gaussian_filter", "gaussian_filter1d",
           "gaussian_laplace", "gaussian_gradient_magnitude", "generic_gradient_magnitude", "generic_laplace", "sobel", "prewitt", "laplace", "uniform_filter", "minimum_filter", "maximum_filter",
           "minimum_filter1d", "maximum_filter1d", "grey_erosion", "grey_dilation", "grey_opening", "grey_closing",
           "morphological_gradient", "white_tophat", "black_tophat", "binary_erosion", "binary_dilation",
           "binary_opening", "binary_closing", "binary_fill_holes", "binary_hit_or_miss", "binary_propagation",
           "morphological_laplace", "value_indices", "generic_filter", "generic_filter1d", "vectorized_filter",
           "distance_transform_bf", "distance_transform_cdt", "watershed_ift", "uniform_filter1d", "geometric_transform", "generate_binary_structure", "iterate_structure",
           "distance_transform_edt", "label", "rank_filter", "median_filter", "percentile_filter",
           "spline_filter", "spline_filter1d", "map_coordinates", "affine_transform", "shift", "zoom", "rotate",
           "fourier_shift", "fourier_gaussian", "fourier_uniform", "fourier_ellipsoid", "deskew", "sum_labels", "sum", "mean", "variance", "standard_deviation", "minimum",
           "maximum", "median", "minimum_position", "maximum_position", "extrema", "center_of_mass", "histogram",
           "find_objects", "labeled_comprehension"]

def _complex_by_parts(function: Callable) -> Callable:
    """scipy's complex input for a filter or sampler linear in its input: the real and imaginary
    parts (with cval's) through ``function`` separately, the result complex64 for complex64
    input, complex128 for complex128 (or where the function's real result is float64, as
    spline_filter's)."""
    signature = inspect.signature(function)

    @functools.wraps(function)
    def by_parts(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        a = np.asarray(bound.arguments["input"])
        if not np.iscomplexobj(a):
            return function(*args, **kwargs)
        bound.apply_defaults()
        output, c = bound.arguments["output"], complex(bound.arguments.get("cval", 0.0))
        parts = []
        for part, cval in ((a.real, c.real), (a.imag, c.imag)):
            bound.arguments.update(input=np.ascontiguousarray(part), output=None)
            if "cval" in bound.arguments:
                bound.arguments["cval"] = cval
            parts.append(np.asarray(function(*bound.args, **bound.kwargs)))
        dtype = np.promote_types(parts[0].dtype, np.complex64)
        return finish((parts[0] + 1j * parts[1]).astype(dtype), output)

    return by_parts


def _complex_weights(x: np.ndarray, w: np.ndarray, cval: Any, output: Any, conjugate: bool,
                     run: Callable[[np.ndarray, np.ndarray, float, Any], np.ndarray]) -> np.ndarray:
    """A correlation or convolution with complex input or weights as scipy computes it (the
    correlation with the weights' conjugate): four (or two) real ones, ``run(x part, w part,
    cval part, dtype)``, each in the real dtype of scipy's complex result."""
    w = np.conj(w) if conjugate else w
    c = complex(cval)
    dtype = np.promote_types(x.dtype, np.complex64)
    part = np.finfo(dtype).dtype
    re = run(x.real, w.real, c.real, part)
    im = np.zeros_like(re)
    if np.iscomplexobj(x):
        im += run(x.imag, w.real, c.imag, part)
    if np.iscomplexobj(w):
        im += run(x.real, w.imag, c.real, part)
        if np.iscomplexobj(x):
            re -= run(x.imag, w.imag, c.imag, part)
    return finish((re + 1j * im).astype(dtype), output)


def _scalar_identity(like: Any = None) -> Callable:
    """scipy's 0-d input to a filter: a filter over no axes, the input itself in the result's
    dtype (``like``: the default, else the input's), copied as scipy copies it (numpy's cast)."""
    def decorate(function: Callable) -> Callable:
        signature = inspect.signature(function)

        @functools.wraps(function)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs)
            a = np.asarray(bound.arguments["input"])
            if a.ndim != 0:
                return function(*args, **kwargs)
            return finish(a, bound.arguments.get("output"), a.dtype if like is None else like, "cast")
        return wrapped
    return decorate


def _passes(input: np.ndarray, output: Any, like: Any,
            steps: Sequence[Callable[[np.ndarray], np.ndarray]], context: Any = None) -> np.ndarray:
    """A separable filter with an integer or boolean result as scipy computes it: each pass
    along one axis written into the result's dtype (truncated) before the next pass reads it.
    ``steps``: one function per pass, of the working array, giving the pass's float result
    (``context``: the steps compute float64, as :func:`working` takes it). Booleans travel between passes as their bytes (uint8), as scipy reads them back."""
    a = np.asarray(input)
    if not steps:
        return finish(a, output, like, "cast")
    dt = result_dtype(output, like)
    carry = np.dtype(np.uint8) if dt == np.bool_ else dt
    for step in steps:
        a = convert(step(working(a, "input", context=context)), carry)
    return finish(a, output, like)


def _integer_result(output: Any, like: Any) -> bool:
    """Whether scipy's result is of integers or booleans (then computed pass by pass, as scipy)."""
    return result_dtype(output, like).kind not in "fc"


# scipy's filter modes that are other names of the five lucent implements.
_ALIASES = {"grid-constant": "constant", "grid-mirror": "reflect", "grid-wrap": "wrap"}


def _mode(mode: Any) -> str:
    if not isinstance(mode, str):
        raise NotImplementedError("lucent's filters take one mode for every axis")
    return _ALIASES.get(mode, mode)


def _weights(input: Any, weights: Any, output: Any, mode: str, cval: float, origin: Any, flip: bool,
             context: Optional[Context], axes: Any = None) -> np.ndarray:
    a, wa = np.asarray(input), np.asarray(weights)
    if np.iscomplexobj(a) or np.iscomplexobj(wa):
        return _complex_weights(a, wa, cval, output, not flip,
                                lambda x, w, c, o: _weights(x, w, o, mode, c, origin, flip, context, axes))
    if a.ndim == 0:
        # scipy's filter over no axes: the input times the (0-d) weights.
        if wa.ndim != 0:
            raise RuntimeError("filter weights array has incorrect shape.")
        return finish(np.float64(a) * np.float64(wa), output, a.dtype)
    ctx = resolve(context)
    x = working(a, "input", context=ctx)
    listed = _listed_axes(axes, x.ndim)
    w = _float64(_over_axes(wa, listed, x.ndim, "weights") if axes is not None else wa)
    if w.ndim != x.ndim:
        raise RuntimeError(f"weights.ndim ({w.ndim}) must match len(axes) ({x.ndim})")
    origins = _origins(origin, x.ndim, axes)
    r = _lucent.correlate(ctx, x, w, _mode(mode), cval, flip, origins)
    return finish(r, output, a.dtype)


def correlate(input: Any, weights: Any, output: Any = None, mode: str = "reflect", cval: float = 0.0, origin: Any = 0, *,
              axes: Optional[Sequence[int]] = None, context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.correlate: the correlation with ``weights`` (the input's rank).

    >>> import numpy as np, lucent
    >>> lucent.ndimage.correlate(np.arange(5, dtype="f4"), np.array([1, 0, 0], "f4"))
    array([0., 0., 1., 2., 3.], dtype=float32)
    """
    return _weights(input, weights, output, mode, cval, origin, False, context, axes)


def convolve(input: Any, weights: Any, output: Any = None, mode: str = "reflect", cval: float = 0.0, origin: Any = 0, *,
             axes: Optional[Sequence[int]] = None, context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.convolve: the convolution with ``weights`` (the input's rank).

    >>> import numpy as np, lucent
    >>> lucent.ndimage.convolve(np.arange(5, dtype="f4"), np.array([1, 0, 0], "f4"))
    array([1., 2., 3., 4., 4.], dtype=float32)
    """
    return _weights(input, weights, output, mode, cval, origin, True, context, axes)


def _one_axis(input: Any, weights: Any, axis: int, output: Any, mode: str, cval: float, origin: int, flip: bool,
              context: Optional[Context]) -> np.ndarray:
    a, wa = np.asarray(input), np.asarray(weights)
    if np.iscomplexobj(a) or np.iscomplexobj(wa):
        return _complex_weights(a, wa, cval, output, not flip,
                                lambda x, w, c, o: _one_axis(x, w, axis, o, mode, c, origin, flip, context))
    ax = _axis(axis, a.ndim)
    ctx = resolve(context)
    x = working(a, "input", context=ctx)
    w = _float64(weights) if wa.ndim else wa
    if w.ndim != 1:
        raise ValueError("weights must be one-dimensional")
    r = _lucent.correlate1d(ctx, x, w.tolist(), ax, _mode(mode), cval, flip, int(origin))
    return finish(r, output, a.dtype)


def correlate1d(input: Any, weights: Any, axis: int = -1, output: Any = None, mode: str = "reflect", cval: float = 0.0,
                origin: int = 0, *, context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.correlate1d: the correlation along one axis.

    >>> import numpy as np, lucent
    >>> lucent.ndimage.correlate1d(np.arange(4, dtype="f4"), [1, 1, 1], mode="constant")
    array([1., 3., 6., 5.], dtype=float32)
    """
    return _one_axis(input, weights, axis, output, mode, cval, origin, False, context)


def convolve1d(input: Any, weights: Any, axis: int = -1, output: Any = None, mode: str = "reflect", cval: float = 0.0,
               origin: int = 0, *, context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.convolve1d: the convolution along one axis.

    >>> import numpy as np, lucent
    >>> lucent.ndimage.convolve1d(np.arange(4, dtype="f4"), [1, 0, 0], mode="constant")
    array([1., 2., 3., 0.], dtype=float32)
    """
    return _one_axis(input, weights, axis, output, mode, cval, origin, True, context)


def _gaussian(input: Any, sigma: Any, order: Any, output: Any, mode: str, cval: float, truncate: float, radius: Any,
              axes: Optional[Sequence[int]], which: str, context: Optional[Context]) -> np.ndarray:
    a = np.asarray(input)
    sigmas = [float(s) for s in on_axes(sigma, axes, a.ndim, "sigma", 0.0)]
    orders = [int(o) for o in on_axes(order, axes, a.ndim, "order", 0)]
    if any(o < 0 for o in orders):
        raise ValueError("order must be non-negative")
    radii = None if radius is None else [int(r) for r in on_axes(radius, axes, a.ndim, "radius", 0)]
    if radii is not None and any(r < 0 for r in radii):
        raise ValueError("Radius must be a nonnegative integer.")

    def run(x: np.ndarray, only: Optional[int] = None) -> np.ndarray:
        # ``only``: one axis's pass (the others' sigma 0: untouched).
        def keep(v: list, rest: Any) -> list:
            return v if only is None else [v[k] if k == only else rest for k in range(a.ndim)]
        r = None if radii is None else keep(radii, 0)
        return _lucent.gaussian_filter(resolve(context), x, keep(sigmas, 0.0), keep(orders, 0), r, float(truncate),
                                       _mode(mode), cval, which)

    if which == "filter" and _integer_result(output, a.dtype):
        # scipy's passes, one per axis of sigma above 1e-15, in the order of ``axes``.
        passes = [k for k in _listed_axes(axes, a.ndim) if sigmas[k] > 1e-15]
        return _passes(a, output, a.dtype, [functools.partial(run, only=k) for k in passes], resolve(context))
    return finish(run(working(a, "input", context=resolve(context))), output, a.dtype)


@_scalar_identity()
@_complex_by_parts
def gaussian_filter(input: Any, sigma: Any, order: Any = 0, output: Any = None, mode: str = "reflect", cval: float = 0.0,
                    truncate: float = 4.0, *, radius: Any = None, axes: Optional[Sequence[int]] = None,
                    context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.gaussian_filter: ``sigma`` one value or one per axis (of ``axes``);
    ``order`` 0-3 per axis (derivatives of the Gaussian, scipy's kernels); the kernel's radius
    ⌊truncate·sigma + 0.5⌋ unless ``radius`` is given.

    >>> import numpy as np, lucent
    >>> lucent.ndimage.gaussian_filter(np.ones((9, 9), "f4"), 1.5).mean().round(5)
    np.float32(1.0)
    >>> ramp = np.tile(np.arange(8, dtype="f4"), (5, 1))  # slope 1: the truncated kernel's 0.9994, as scipy's
    >>> lucent.ndimage.gaussian_filter(ramp, 1.0, order=(0, 1), mode="nearest")[2, 3:5].round(4)
    array([0.9994, 0.9994], dtype=float32)
    """
    return _gaussian(input, sigma, order, output, mode, cval, truncate, radius, axes, "filter", context)


@_complex_by_parts
def gaussian_filter1d(input: Any, sigma: float, axis: int = -1, order: int = 0, output: Any = None, mode: str = "reflect",
                      cval: float = 0.0, truncate: float = 4.0, *, radius: Optional[int] = None,
                      context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.gaussian_filter1d: the Gaussian (or its ``order``-th derivative) along one
    axis.

    >>> import numpy as np, lucent
    >>> lucent.ndimage.gaussian_filter1d(np.arange(16, dtype="f4") ** 2, 1.0, order=2)[6:9].round(3)
    array([1.996, 1.995, 1.994], dtype=float32)
    """
    a = np.asarray(input)
    return _gaussian(a, sigma, order, output, mode, cval, truncate, radius, [_axis(axis, a.ndim)], "filter", context)


@_scalar_identity()
def gaussian_laplace(input: Any, sigma: Any, output: Any = None, mode: str = "reflect", cval: float = 0.0, *,
                     truncate: float = 4.0, radius: Any = None, axes: Optional[Sequence[int]] = None,
                     context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.gaussian_laplace: the sum over axes of the Gaussian's second derivative
    along each (``truncate`` and ``radius`` as gaussian_filter takes them).

    >>> import numpy as np, lucent
    >>> x = np.zeros((9, 9), "f4"); x[4, 4] = 1
    >>> bool(lucent.ndimage.gaussian_laplace(x, 1.0)[4, 4] < 0)
    True
    """
    if axes is not None or _composed(input, output):
        return _gaussian_on_axes(input, sigma, 2, output, mode, cval, truncate, radius, axes, context)
    return _gaussian(input, sigma, 0, output, mode, cval, truncate, radius, None, "laplace", context)


@_scalar_identity()
def gaussian_gradient_magnitude(input: Any, sigma: Any, output: Any = None, mode: str = "reflect", cval: float = 0.0, *,
                                truncate: float = 4.0, radius: Any = None, axes: Optional[Sequence[int]] = None,
                                context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.gaussian_gradient_magnitude: √Σ (the Gaussian's first derivative along each
    axis)².

    >>> import numpy as np, lucent
    >>> ramp = np.tile(np.arange(8, dtype="f4"), (6, 1))
    >>> lucent.ndimage.gaussian_gradient_magnitude(ramp, 1.0, mode="nearest")[3, 3:5].round(4)
    array([0.9994, 0.9994], dtype=float32)
    """
    if axes is not None or _composed(input, output):
        return _gaussian_on_axes(input, sigma, 1, output, mode, cval, truncate, radius, axes, context)
    return _gaussian(input, sigma, 0, output, mode, cval, truncate, radius, None, "magnitude", context)


def _composed(input: Any, output: Any) -> bool:
    """Whether laplace, gaussian_laplace or gaussian_gradient_magnitude is computed as scipy
    composes it (generic_laplace, generic_gradient_magnitude: one derivative per axis written
    into the result's dtype, then added up in it) rather than in one GPU pass: for an integer
    or boolean result, where those steps round, and for complex input."""
    a = np.asarray(input)
    return np.iscomplexobj(a) or _integer_result(output, a.dtype)


def _gaussian_on_axes(input: Any, sigma: Any, order: int, output: Any, mode: Any, cval: float, truncate: float,
                      radius: Any, axes: Any, context: Optional[Context]) -> np.ndarray:
    """gaussian_laplace (order 2) or gaussian_gradient_magnitude (order 1) over some axes, as
    scipy composes them: the Gaussian's derivative along each listed axis; the Laplacian's σ 0
    along the other axes, the gradient's σ smoothing every axis (scipy passes it on whole)."""
    a = np.asarray(input)
    listed = _listed_axes(axes, a.ndim)
    if order == 1:
        sigmas = [float(s) for s in per_axis(sigma, a.ndim, "sigma")]
    else:
        sigmas = [0.0] * a.ndim
        for k, s in zip(listed, per_axis(sigma, len(listed), "sigma")):
            sigmas[k] = float(s)

    def derivative(i: Any, axis: int, out: Any, m: Any, c: float) -> np.ndarray:
        orders = [0] * a.ndim
        orders[axis] = order
        return gaussian_filter(i, sigmas, orders, out, m, c, truncate, radius=radius, context=context)

    compose = generic_laplace if order == 2 else generic_gradient_magnitude
    return compose(a, derivative, output, mode, cval, axes=listed)


def _edge(which: str, input: Any, axis: int, output: Any, mode: str, cval: float,
          context: Optional[Context]) -> np.ndarray:
    """sobel or prewitt: scipy's [-1, 0, 1] along ``axis``, then the smoothing along each other
    axis (pass by pass for an integer result, as scipy)."""
    a = np.asarray(input)
    ax = _axis(int(axis), a.ndim)
    if not _integer_result(output, a.dtype):
        return finish(_lucent.edge_filter(resolve(context), working(a, "input", context=resolve(context)), which, ax, _mode(mode), cval), output,
                      a.dtype)
    smooth = [1.0, 2.0, 1.0] if which == "sobel" else [1.0, 1.0, 1.0]

    def step(weights: list, k: int) -> Callable[[np.ndarray], np.ndarray]:
        return lambda x: _lucent.correlate1d(resolve(context), x, weights, k, _mode(mode), cval, False, 0)
    steps = [step([-1.0, 0.0, 1.0], ax)] + [step(smooth, k) for k in range(a.ndim) if k != ax]
    return _passes(a, output, a.dtype, steps, resolve(context))


@_complex_by_parts
def sobel(input: Any, axis: int = -1, output: Any = None, mode: str = "reflect", cval: float = 0.0, *,
          context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.sobel: [-1, 0, 1] along ``axis``, [1, 2, 1] along the others.

    >>> import numpy as np, lucent
    >>> lucent.ndimage.sobel(np.tile(np.arange(5, dtype="f4"), (4, 1)), axis=1)[1, 1:4]
    array([8., 8., 8.], dtype=float32)
    """
    return _edge("sobel", input, axis, output, mode, cval, context)


@_complex_by_parts
def prewitt(input: Any, axis: int = -1, output: Any = None, mode: str = "reflect", cval: float = 0.0, *,
            context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.prewitt: [-1, 0, 1] along ``axis``, [1, 1, 1] along the others.

    >>> import numpy as np, lucent
    >>> lucent.ndimage.prewitt(np.tile(np.arange(5, dtype="f4"), (4, 1)), axis=1)[1, 1:4]
    array([6., 6., 6.], dtype=float32)
    """
    return _edge("prewitt", input, axis, output, mode, cval, context)


@_scalar_identity()
def laplace(input: Any, output: Any = None, mode: str = "reflect", cval: float = 0.0, *, axes: Optional[Sequence[int]] = None,
            context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.laplace: the sum over axes of [1, -2, 1] along each.

    >>> import numpy as np, lucent
    >>> lucent.ndimage.laplace(np.arange(6, dtype="f4") ** 2)[1:5]
    array([2., 2., 2., 2.], dtype=float32)
    """
    a = np.asarray(input)
    if axes is not None or _composed(a, output):
        second = lambda i, axis, out, m, c: correlate1d(i, [1, -2, 1], axis, out, m, c, context=context)  # noqa: E731
        return generic_laplace(a, second, output, mode, cval, axes=axes)
    return finish(_lucent.edge_filter(resolve(context), working(a, "input", context=resolve(context)), "laplace", 0, _mode(mode), cval), output,
                  a.dtype)


def generic_gradient_magnitude(input: Any, derivative: Any, output: Any = None, mode: Any = "reflect",
                               cval: float = 0.0, extra_arguments: Sequence = (), extra_keywords: Optional[dict] = None,
                               *, axes: Optional[Sequence[int]] = None) -> np.ndarray:
    """scipy.ndimage.generic_gradient_magnitude: sqrt(Σ derivative(input, axis, ...)²) over the
    axes, with ``derivative(input, axis, output, mode, cval, *extra_arguments,
    **extra_keywords)`` as scipy calls it (lucent's sobel or prewitt run on the GPU).

    >>> import numpy as np, lucent
    >>> x = np.zeros((5, 5), "f4"); x[:, 3:] = 1
    >>> lucent.ndimage.generic_gradient_magnitude(x, lucent.ndimage.sobel)[2].tolist()
    [0.0, 0.0, 4.0, 4.0, 0.0]
    """
    return _generic(input, derivative, output, mode, cval, extra_arguments, extra_keywords, axes, True)


def generic_laplace(input: Any, derivative2: Any, output: Any = None, mode: Any = "reflect", cval: float = 0.0,
                    extra_arguments: Sequence = (), extra_keywords: Optional[dict] = None, *,
                    axes: Optional[Sequence[int]] = None) -> np.ndarray:
    """scipy.ndimage.generic_laplace: Σ derivative2(input, axis, ...) over the axes, called as
    scipy calls it."""
    return _generic(input, derivative2, output, mode, cval, extra_arguments, extra_keywords, axes, False)


def _generic(input: Any, derivative: Any, output: Any, mode: Any, cval: float, extra_arguments: Sequence,
             extra_keywords: Optional[dict], axes: Optional[Sequence[int]], magnitude: bool) -> np.ndarray:
    # scipy's composition: the first axis into the output, the others added to it.
    a = np.asarray(input)
    axes = list(range(a.ndim)) if axes is None else [_axis(int(ax), a.ndim) for ax in axes]
    modes = list(mode) if isinstance(mode, (list, tuple)) else [mode] * len(axes)
    if len(modes) != len(axes):
        raise RuntimeError("sequence argument must have length equal to input rank")
    kw = extra_keywords or {}
    out = output if isinstance(output, np.ndarray) else np.zeros(a.shape, result_dtype(output, a.dtype))
    if not axes:
        out[...] = a
        return out
    derivative(a, axes[0], out, modes[0], cval, *extra_arguments, **kw)  # writes the output
    if magnitude:
        np.multiply(out, out, out)
    for ax, m in zip(axes[1:], modes[1:]):
        d = np.asarray(derivative(a, ax, out.dtype, m, cval, *extra_arguments, **kw))
        out += d * d if magnitude else d
    if magnitude:
        np.sqrt(out, out, casting="unsafe")
    return out


@_scalar_identity()
@_complex_by_parts
def uniform_filter(input: Any, size: Any = 3, output: Any = None, mode: str = "reflect", cval: float = 0.0, origin: Any = 0,
                   *, axes: Optional[Sequence[int]] = None, context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.uniform_filter: the mean over a box of ``size`` (one value or one per axis).

    >>> import numpy as np, lucent
    >>> lucent.ndimage.uniform_filter(np.array([0, 0, 3, 0, 0], "f4"))
    array([0., 1., 1., 1., 0.], dtype=float32)
    """
    a = np.asarray(input)
    listed = _listed_axes(axes, a.ndim)
    sizes = [int(n) for n in per_axis(size, len(listed), "size")]
    origins = [int(o) for o in per_axis(origin, len(listed), "origin")]
    # scipy's passes: one per axis of size above 1, in the order of ``axes``.
    passes = [(k, n, o) for k, n, o in zip(listed, sizes, origins) if n > 1]
    if any(o for _, _, o in passes) or _integer_result(output, a.dtype):
        def step(k: int, n: int, o: int) -> Callable[[np.ndarray], np.ndarray]:
            if o:  # a moved box: the mean as a correlation with the origin's weights
                return lambda x: _lucent.correlate1d(resolve(context), x, [1.0 / n] * n, k, _mode(mode), cval, False, o)
            box = [n if j == k else 1 for j in range(a.ndim)]
            return lambda x: _lucent.uniform_filter(resolve(context), x, box, _mode(mode), cval)
        return _passes(a, output, a.dtype, [step(*p) for p in passes], resolve(context))
    box = [1] * a.ndim
    for k, n, _ in passes:
        box[k] = n
    r = _lucent.uniform_filter(resolve(context), working(a, "input", context=resolve(context)), box, _mode(mode), cval)
    return finish(r, output, a.dtype)


@_complex_by_parts
def uniform_filter1d(input: Any, size: int, axis: int = -1, output: Any = None, mode: str = "reflect", cval: float = 0.0,
                     origin: int = 0, *, context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.uniform_filter1d: the mean over ``size`` samples along ``axis``."""
    a = np.asarray(input)
    ax = _axis(axis, a.ndim)
    if int(size) < 1:
        raise RuntimeError("incorrect filter size")
    return uniform_filter(a, int(size), output, mode, cval, int(origin), axes=[ax], context=context)


def geometric_transform(input: Any, mapping: Any, output_shape: Optional[Sequence[int]] = None, output: Any = None,
                        order: int = 3, mode: str = "constant", cval: float = 0.0, prefilter: bool = True,
                        extra_arguments: Sequence = (), extra_keywords: Optional[dict] = None, *,
                        sampler: Sampler = "auto", context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.geometric_transform: ``mapping(output index, *extra_arguments,
    **extra_keywords)`` gives the input coordinates of each output element (called once per
    element on the host, as scipy calls it), then `map_coordinates` samples them on the GPU.

    >>> import numpy as np, lucent
    >>> lucent.ndimage.geometric_transform(np.arange(5, dtype="f4"), lambda i: (i[0] + 0.5,), order=1)
    array([0.5, 1.5, 2.5, 3.5, 0. ], dtype=float32)
    """
    a = np.asarray(input)
    shape = tuple(a.shape if output_shape is None else output_shape)
    kw = extra_keywords or {}
    coords = np.empty((a.ndim,) + shape, dtype=np.float64)
    for index in np.ndindex(*shape):
        c = mapping(index, *extra_arguments, **kw)
        if len(c) != a.ndim:
            raise RuntimeError("mapping must return a sequence of input coordinates, one per input axis")
        coords[(slice(None),) + index] = c
    return map_coordinates(a, coords, output, order, mode, cval, prefilter, sampler=sampler, context=context)


def _in_float64(context: Optional[Context], sampler: Any) -> Optional[Context]:
    """The context for :func:`working` where interpolation computes float64 data in float64:
    the buffer sampler's (the texture sampler reads f32 textures)."""
    return None if sampler == "texture" else resolve(context)


def _order(order: Any, lowest: int = 0) -> int:
    """scipy's spline orders (0-5; spline_filter 2-5), refused as scipy refuses them."""
    o = int(order)
    if not lowest <= o <= 5:
        raise RuntimeError(f"spline order {order} not supported (orders {lowest} to 5)")
    return o


def _spline(input: Any, order: int, axis: Optional[int], output: Any, mode: str,
            context: Optional[Context]) -> np.ndarray:
    a = np.asarray(input)
    order = _order(order, 0 if axis is not None else 2)
    ax = None if axis is None else _axis(axis, a.ndim)
    if order in (0, 1):
        return finish(a, output, np.float64, "cast")

    def run(x: np.ndarray, k: Optional[int] = ax) -> np.ndarray:
        return _lucent.spline_filter(resolve(context), x, order, k, mode)
    if ax is None and _integer_result(output, np.float64):
        # scipy's passes, one per axis, each written into the integer output.
        return _passes(a, output, np.float64, [functools.partial(run, k=k) for k in range(a.ndim)], resolve(context))
    return finish(run(working(a, "input", context=resolve(context))), output, np.float64)


@_scalar_identity(like=np.float64)
@_complex_by_parts
def spline_filter(input: Any, order: int = 3, output: Any = None, mode: str = "mirror", *,
                  context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.spline_filter: the B-spline coefficients of ``input`` (orders 2 to 5, as
    scipy). The result is float64 (complex128 for complex input), as scipy's, unless ``output``
    says otherwise.

    >>> import numpy as np, lucent
    >>> lucent.ndimage.spline_filter(np.ones((4, 5), "f4")).round(5).max()
    np.float64(1.0)
    """
    return _spline(input, order, None, output, mode, context)


@_complex_by_parts
def spline_filter1d(input: Any, order: int = 3, axis: int = -1, output: Any = None, mode: str = "mirror", *,
                    context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.spline_filter1d: :func:`spline_filter` along one axis (orders 0 and 1
    return the input); float64 unless ``output`` says otherwise.

    >>> import numpy as np, lucent
    >>> lucent.ndimage.spline_filter1d(np.ones(6, "f4")).round(5)
    array([1., 1., 1., 1., 1., 1.])
    """
    return _spline(input, order, axis, output, mode, context)


def _how(order: int, mode: str, cval: float, prefilter: bool, sampler: str) -> tuple:
    return (_order(order), mode, float(cval), bool(prefilter), sampler)


def _sampled(input: Any) -> np.ndarray:
    """The input of an interpolation function, refused as scipy refuses a 0-d one."""
    a = np.asarray(input)
    if a.ndim == 0:
        raise RuntimeError("input and output rank must be > 0")
    return a


def _sample(a: np.ndarray, r: np.ndarray, output: Any) -> np.ndarray:
    """An interpolation's result in scipy's dtype: the input's unless ``output`` says otherwise,
    integers rounded to nearest and clipped, as scipy's interpolation functions write them."""
    return finish(r, output, a.dtype, "nearest")


@_complex_by_parts
def map_coordinates(input: Any, coordinates: Any, output: Any = None, order: int = 3, mode: str = "constant",
                    cval: float = 0.0, prefilter: bool = True, *, sampler: Sampler = "auto",
                    context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.map_coordinates: ``input`` sampled at ``coordinates`` (shape (input.ndim, ...)).

    >>> import numpy as np, lucent
    >>> lucent.ndimage.map_coordinates(np.arange(5, dtype="f4"), [[0.5, 2.25]], order=1)
    array([0.5 , 2.25], dtype=float32)
    """
    a = _sampled(input)
    wide = _in_float64(context, sampler)
    c = np.ascontiguousarray(working(coordinates, "coordinates", context=wide), dtype=np.float64)
    how = _how(order, mode, cval, prefilter, sampler)
    return _sample(a, _lucent.map_coordinates(resolve(context), working(a, "input", context=wide), c, how), output)


@_complex_by_parts
def affine_transform(input: Any, matrix: Any, offset: Any = 0.0, output_shape: Optional[Sequence[int]] = None,
                     output: Any = None, order: int = 3, mode: str = "constant", cval: float = 0.0, prefilter: bool = True,
                     *, sampler: Sampler = "auto", context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.affine_transform: output point o reads the input at matrix @ o + offset
    (``matrix`` a diagonal, ndim × ndim, ndim × (ndim + 1) or homogeneous).

    >>> import numpy as np, lucent
    >>> lucent.ndimage.affine_transform(np.arange(4, dtype="f4"), [1.0], offset=1, order=1)
    array([1., 2., 3., 0.], dtype=float32)
    """
    a = _sampled(input)
    x = working(a, "input", context=_in_float64(context, sampler))
    m = np.ascontiguousarray(matrix, dtype=np.float64)
    d = x.ndim
    if m.shape == (d + 1, d + 1) and not np.array_equal(m[d], np.eye(d + 1)[d]):
        raise ValueError(f"Expected homogeneous transformation matrix with shape {m.shape} for image shape {x.shape}, "
                         f"but bottom row was not equal to {[0] * d + [1]}")
    shape = None if output_shape is None else [int(n) for n in output_shape]
    if m.ndim == 2 and m.shape[0] in (d, d + 1) and m.shape[1] not in (d, d + 1):
        # scipy's matrix of ndim rows and as many columns as the output has axes (a rank change):
        # every output element's input coordinates, then map_coordinates.
        if shape is None or m.shape[1] not in (len(shape), len(shape) + 1):
            raise RuntimeError("affine matrix has wrong number of columns")
        off = np.asarray([float(v) for v in per_axis(offset, d, "offset")])
        if m.shape[1] == len(shape) + 1:
            m, off = m[:d, :-1], m[:d, -1]
        grid = np.indices(shape, dtype=np.float64).reshape(len(shape), -1)
        coords = (m[:d] @ grid + off[:, None]).reshape((d,) + tuple(shape))
        return map_coordinates(a, coords, output, order, mode, cval, prefilter, sampler=sampler, context=context)
    off = [float(v) for v in per_axis(offset, d, "offset")]
    r = _lucent.affine_transform(resolve(context), x, m, off, shape, _how(order, mode, cval, prefilter, sampler))
    return _sample(a, r, output)


@_complex_by_parts
def shift(input: Any, shift: Any, output: Any = None, order: int = 3, mode: str = "constant", cval: float = 0.0,
          prefilter: bool = True, *, sampler: Sampler = "auto", context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.shift: ``input`` moved by ``shift`` (one value or one per axis).

    >>> import numpy as np, lucent
    >>> lucent.ndimage.shift(np.arange(4, dtype="f4"), 1, order=1)
    array([0., 0., 1., 2.], dtype=float32)
    """
    a = _sampled(input)
    s = [float(v) for v in per_axis(shift, a.ndim, "shift")]
    r = _lucent.shift(resolve(context), working(a, "input", context=_in_float64(context, sampler)), s,
                      _how(order, mode, cval, prefilter, sampler))
    return _sample(a, r, output)


@_complex_by_parts
def zoom(input: Any, zoom: Any, output: Any = None, order: int = 3, mode: str = "constant", cval: float = 0.0,
         prefilter: bool = True, *, grid_mode: bool = False, sampler: Sampler = "auto",
         context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.zoom: resampled by ``zoom`` (one factor or one per axis), round(n × factor)
    samples per axis, the corners' samples aligned, or with ``grid_mode`` the pixels' outer edges
    (warning, as scipy, that "grid-constant" and "grid-wrap" suit it better than "constant" and
    "wrap").

    >>> import numpy as np, lucent
    >>> lucent.ndimage.zoom(np.array([0, 1], "f4"), 2, order=1)
    array([0.        , 0.33333334, 0.6666667 , 1.        ], dtype=float32)
    >>> lucent.ndimage.zoom(np.array([0, 1], "f4"), 2, order=1, grid_mode=True, mode="grid-wrap")
    array([0.25, 0.25, 0.75, 0.75], dtype=float32)
    """
    a = _sampled(input)
    z = [float(v) for v in per_axis(zoom, a.ndim, "zoom")]
    suggest = {"constant": "grid-constant", "wrap": "grid-wrap"}.get(mode) if grid_mode else None
    if suggest is not None:
        import warnings
        warnings.warn(f"It is recommended to use mode = {suggest} instead of {mode} when grid_mode is True.", stacklevel=2)
    how = _how(order, mode, cval, prefilter, sampler)
    r = _lucent.zoom(resolve(context), working(a, "input", context=_in_float64(context, sampler)), z, bool(grid_mode), how)
    return _sample(a, r, output)


@_complex_by_parts
def rotate(input: Any, angle: float, axes: Sequence[int] = (1, 0), reshape: bool = True, output: Any = None, order: int = 3,
           mode: str = "constant", cval: float = 0.0, prefilter: bool = True, *, sampler: Sampler = "auto",
           context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.rotate: rotated by ``angle`` degrees in the plane of ``axes``; with
    ``reshape`` the output grows to hold the whole input.

    >>> import numpy as np, lucent
    >>> lucent.ndimage.rotate(np.eye(3, dtype="f4"), 90, order=0)
    array([[0., 0., 1.],
           [0., 1., 0.],
           [1., 0., 0.]], dtype=float32)
    """
    a = np.asarray(input)
    if a.ndim < 2:
        raise ValueError("input array should be at least 2D")
    if len(axes) != 2:
        raise ValueError("axes should contain exactly two values")
    r = _lucent.rotate(resolve(context), working(a, "input", context=_in_float64(context, sampler)), float(angle),
                       [int(axes[0]), int(axes[1])], bool(reshape),
                       _how(order, mode, cval, prefilter, sampler))
    return _sample(a, r, output)


def _fourier(which: str, input: Any, values: Any, n: int, axis: int, output: Any, name: str,
             context: Optional[Context]) -> np.ndarray:
    """A spectrum times a Fourier filter's transfer function, in scipy's result dtype: the
    input's for complex64/complex128 (and float32 but for fourier_shift), else complex128 for
    fourier_shift and float64 for the others (real input gives the real part)."""
    a = np.asarray(input)
    ctx = resolve(context)
    x = complex_working(a, "input", ctx)
    v = [float(s) for s in per_axis(values, x.ndim, name)]
    r = _lucent.fourier_filter(ctx, x, which, v, None if n < 0 else int(n), int(axis))
    keep = (np.complex64, np.complex128) if which == "shift" else (np.complex64, np.complex128, np.float32)
    dtype = a.dtype if a.dtype in keep else np.dtype(np.complex128 if which == "shift" else np.float64)
    value = convert(r, dtype, "cast")
    if isinstance(output, np.ndarray):  # scipy's _get_output_fourier: any of its dtypes, the real part kept
        output[...] = convert(value, output.dtype, "cast")
        return output
    return value if output is None else convert(value, output, "cast")


def fourier_shift(input: Any, shift: Any, n: int = -1, axis: int = -1, output: Any = None, *,
                  context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.fourier_shift: a spectrum multiplied by the phase ramp of ``shift``
    (n ≥ 0: a real transform's half spectrum along ``axis`` of a length-n signal); complex64 or
    complex128 as scipy (complex128 computed in f64 where the device has it).

    >>> import numpy as np, lucent
    >>> x = np.arange(4, dtype="f4")
    >>> np.fft.ifft(lucent.ndimage.fourier_shift(np.fft.fft(x), 1)).real.round(4)
    array([3., 0., 1., 2.], dtype=float32)
    """
    return _fourier("shift", input, shift, n, axis, output, "shift", context)


def fourier_gaussian(input: Any, sigma: Any, n: int = -1, axis: int = -1, output: Any = None, *,
                     context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.fourier_gaussian: a spectrum times exp(−2π² σ² f²) along each axis (the
    transform of a Gaussian filter; ``n`` and ``axis`` as fourier_shift's).

    >>> import numpy as np, lucent
    >>> x = np.zeros(8); x[4] = 1
    >>> y = np.fft.ifft(lucent.ndimage.fourier_gaussian(np.fft.fft(x), 1.0)).real
    >>> bool(abs(y.sum() - 1) < 1e-6), int(y.argmax())
    (True, 4)
    """
    return _fourier("gaussian", input, sigma, n, axis, output, "sigma", context)


def fourier_uniform(input: Any, size: Any, n: int = -1, axis: int = -1, output: Any = None, *,
                    context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.fourier_uniform: a spectrum times sinc(size · f) along each axis (the
    transform of a box of ``size`` samples)."""
    return _fourier("uniform", input, size, n, axis, output, "size", context)


def fourier_ellipsoid(input: Any, size: Any, n: int = -1, axis: int = -1, output: Any = None, *,
                      context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.fourier_ellipsoid: a spectrum of 1-3 axes times the transform of an
    ellipsoid of diameters ``size`` (a box in 1-D, a disc in 2-D, a ball in 3-D)."""
    a = np.asarray(input)
    if a.ndim > 3:
        raise NotImplementedError("Only 1d, 2d and 3d inputs are supported")
    return _fourier("ellipsoid", a, size, n, axis, output, "size", context)


def deskew(im: Any, dxdata: float = 0.1, dzdata: float = 0.5, angle: float = 31.5, width: int = 0, shift: float = 0,
           pad_val: Optional[float] = None, *, rotate: bool = False, order: int = 1, mode: str = "constant",
           context: Optional[Context] = None) -> np.ndarray:
    """pycudadecon's ``deskewGPU`` (same arguments and defaults, lengths in µm) on any GPU: a
    stage-scanned light-sheet stack (planes, rows, columns) with each plane moved along x by
    ``dzdata·cos(angle)/dxdata`` pixels per plane, the output ``nx + ⌊nz·dzdata·|cos(angle)|/dxdata⌋``
    wide unless ``width`` is given, ``shift`` moving its centre, ``pad_val`` outside the stack
    (``None``: the median of the last plane, as pycudadecon). Returned in the input's dtype, as
    pycudadecon does.

    With ``rotate=True`` the stack in coverslip coordinates instead: (Z, Y, X) with isotropic
    voxels of ``dxdata``, height Z from the camera's first column, X along the stage from the
    stack's first sample, in one interpolation from the raw stack. ``order`` 1 (linear, as
    pycudadecon), 3 (cubic B-spline) or another of scipy's 0-5; the result equals ``scipy.ndimage.affine_transform`` with
    the same map (lucent.ndimage.deskew's Rust documentation gives it).

    >>> import numpy as np, lucent
    >>> raw = np.zeros((4, 1, 6), "f4"); raw[:, 0, 2] = 1
    >>> d = lucent.ndimage.deskew(raw, dxdata=0.1, dzdata=0.2, angle=60, pad_val=0)
    >>> d.shape, [int(np.argmax(d[k, 0])) for k in range(4)]
    ((4, 1, 10), [2, 3, 4, 5])
    """
    x = np.asarray(im)
    if x.ndim != 3:
        raise ValueError(f"deskew takes a stack of 3 axes (planes, rows, columns), got shape {x.shape}")
    if pad_val is None:
        pad_val = float(np.median(x[-1]))
    r = _lucent.deskew(resolve(context), working(x, "im"), float(angle), float(dzdata), float(dxdata), int(width),
                       float(shift), bool(rotate), _how(order, mode, pad_val, True, "buffer"))
    return finish(r, None, x.dtype, "cast")


# ---------------------------------------------------------------------------------------------
# Rank filters and morphology

def _listed_axes(axes: Any, ndim: int) -> tuple:
    """scipy's ``axes`` (None: every axis) as distinct non-negative axes, in the order given."""
    if axes is None:
        return tuple(range(ndim))
    listed = tuple(_axis(int(a), ndim) for a in (axes if isinstance(axes, (list, tuple, np.ndarray)) else [axes]))
    if len(set(listed)) != len(listed):
        raise ValueError("axes must be unique")
    return listed


def _over_axes(array: np.ndarray, listed: tuple, ndim: int, name: str) -> np.ndarray:
    """A footprint, structure or weights of len(axes) dimensions given the input's rank: length
    1 along the other axes (scipy's _expand_footprint; its dimensions follow the axes sorted)."""
    if len(listed) == ndim:
        return array
    if array.ndim != len(listed):
        raise RuntimeError(f"{name}.ndim ({array.ndim}) must match len(axes) ({len(listed)})")
    return np.expand_dims(array, tuple(a for a in range(ndim) if a not in listed))


def _footprint(size: Any, footprint: Any, structure: Any, ndim: int, function: str, axes: Any = None,
               sizes_as_listed: bool = False) -> tuple:
    """scipy's (size | footprint | structure) as a boolean footprint and the structure's values,
    over ``axes`` (length 1 along the others). ``size`` follows the axes sorted, as a footprint's
    dimensions do, or with ``sizes_as_listed`` the axes as given (scipy's separable minimum and
    maximum filters)."""
    listed = _listed_axes(axes, ndim)
    values = None
    if structure is not None:
        values = np.asarray(structure, dtype=np.float64)
        if footprint is None:
            footprint = np.ones(values.shape, bool)
        values = np.ascontiguousarray(_over_axes(values, listed, ndim, "structure"))
    if footprint is None:
        if size is None:
            raise RuntimeError("no footprint or filter size provided")
        sizes = [int(s) for s in per_axis(size, len(listed), "size")]
        if sizes_as_listed:
            sizes = [dict(zip(listed, sizes))[a] for a in sorted(listed)]
        footprint = np.ones(sizes, bool)
    footprint = np.ascontiguousarray(_over_axes(np.asarray(footprint, dtype=bool), listed, ndim, "footprint"))
    if footprint.ndim != ndim:
        raise RuntimeError(f"{function}: the footprint array has {footprint.ndim} axes, the input {ndim}")
    if not footprint.any():
        raise ValueError("All-zero footprint is not supported.")
    return footprint, values


def _origins(origin: Any, ndim: int, axes: Any = None) -> list:
    """scipy's ``origin``, one per listed axis, 0 along the others."""
    listed = _listed_axes(axes, ndim)
    origins = [0] * ndim
    for a, o in zip(listed, per_axis(origin, len(listed), "origin")):
        origins[a] = int(o)
    return origins


def _extreme(which: str, input: Any, size: Any, footprint: Any, structure: Any, output: Any, mode: str, cval: float,
             origin: Any, context: Optional[Context], axes: Any = None) -> np.ndarray:
    a = np.asarray(input)
    if a.ndim == 0 and not np.iscomplexobj(a):
        # scipy's filter over no axes: the element itself, less (erosion) or plus (dilation) a 0-d structure.
        if structure is None:
            return finish(a, output, a.dtype)
        value = float(np.asarray(structure, dtype=np.float64))
        return finish(np.float64(a) + (value if which == "dilation" else -value), output, a.dtype)
    x = working(a, "input", exact=True, context=resolve(context))
    fp, values = _footprint(size, footprint, structure, x.ndim, which, axes, sizes_as_listed=True)
    origins = _origins(origin, x.ndim, axes)
    integer = a.dtype.kind in "biu"
    if integer and (values is not None or not fp.all()):
        # scipy's point by point filter (any but a flat box) reads cval in the input's type.
        cval = float(convert(np.float64(cval), a.dtype))

    def run(fp: np.ndarray, values: Optional[np.ndarray]) -> np.ndarray:
        return _lucent.footprint_filter(resolve(context), x, which, fp, values, origins, _mode(mode), cval)
    if values is None or not integer:
        return finish(run(fp, values), output, a.dtype)
    # scipy with a structure on integer input: its first footprint element (in C order; the
    # reflected footprint's for a dilation, so the last) adds the structure's value as a double,
    # the others that value truncated to the input's type, added in that type (wrapping around
    # where the sum leaves the type's range: that lucent does not reproduce).
    on = np.flatnonzero(fp)
    first = np.zeros_like(fp)
    first.flat[on[-1] if which == "dilation" else on[0]] = True
    r = run(first, values)
    if len(on) > 1:
        rest = run(np.ascontiguousarray(fp & ~first), np.trunc(values))
        r = np.maximum(r, rest) if which in ("dilation", "maximum") else np.minimum(r, rest)
    return finish(r, output, a.dtype)


def minimum_filter(input: Any, size: Any = None, footprint: Any = None, output: Any = None, mode: str = "reflect",
                   cval: float = 0.0, origin: Any = 0, *, axes: Optional[Sequence[int]] = None,
                   context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.minimum_filter: the minimum over ``size`` (a box) or ``footprint``.

    >>> import numpy as np, lucent
    >>> lucent.ndimage.minimum_filter(np.array([3, 1, 4, 1, 5, 9, 2], "f4"), size=3)
    array([1., 1., 1., 1., 1., 2., 2.], dtype=float32)
    """
    return _extreme("minimum", input, size, footprint, None, output, mode, cval, origin, context, axes)


def maximum_filter(input: Any, size: Any = None, footprint: Any = None, output: Any = None, mode: str = "reflect",
                   cval: float = 0.0, origin: Any = 0, *, axes: Optional[Sequence[int]] = None,
                   context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.maximum_filter: the maximum over ``size`` (a box) or ``footprint``.

    >>> import numpy as np, lucent
    >>> lucent.ndimage.maximum_filter(np.array([3, 1, 4, 1, 5, 9, 2], "f4"), size=3)
    array([3., 4., 4., 5., 9., 9., 9.], dtype=float32)
    """
    return _extreme("maximum", input, size, footprint, None, output, mode, cval, origin, context, axes)


def _one_axis_box(x: np.ndarray, size: int, axis: int) -> np.ndarray:
    shape = [1] * x.ndim
    shape[_axis(axis, x.ndim)] = int(size)
    return np.ones(shape, bool)


def _extreme1d(which: str, input: Any, size: int, axis: int, output: Any, mode: str, cval: float, origin: int,
               context: Optional[Context]) -> np.ndarray:
    a = np.asarray(input)
    ax = _axis(axis, a.ndim)
    if int(size) < 1:
        raise RuntimeError("incorrect filter size")
    origins = [0] * a.ndim
    origins[ax] = int(origin)
    return _extreme(which, a, None, _one_axis_box(a, size, ax), None, output, mode, cval, origins, context)


def minimum_filter1d(input: Any, size: int, axis: int = -1, output: Any = None, mode: str = "reflect", cval: float = 0.0,
                     origin: int = 0, *, context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.minimum_filter1d: the minimum over ``size`` samples along ``axis``."""
    return _extreme1d("minimum", input, size, axis, output, mode, cval, origin, context)


def maximum_filter1d(input: Any, size: int, axis: int = -1, output: Any = None, mode: str = "reflect", cval: float = 0.0,
                     origin: int = 0, *, context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.maximum_filter1d: the maximum over ``size`` samples along ``axis``."""
    return _extreme1d("maximum", input, size, axis, output, mode, cval, origin, context)


def grey_erosion(input: Any, size: Any = None, footprint: Any = None, structure: Any = None, output: Any = None,
                 mode: str = "reflect", cval: float = 0.0, origin: Any = 0, *, axes: Optional[Sequence[int]] = None,
                 context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.grey_erosion: the minimum of input − structure over the footprint (flat
    without a structure).

    >>> import numpy as np, lucent
    >>> lucent.ndimage.grey_erosion(np.array([[5, 3, 8], [2, 7, 6], [9, 4, 1]], "f4"), size=(1, 3))
    array([[3., 3., 3.],
           [2., 2., 6.],
           [4., 1., 1.]], dtype=float32)
    """
    return _extreme("erosion", input, size, footprint, structure, output, mode, cval, origin, context, axes)


def grey_dilation(input: Any, size: Any = None, footprint: Any = None, structure: Any = None, output: Any = None,
                  mode: str = "reflect", cval: float = 0.0, origin: Any = 0, *, axes: Optional[Sequence[int]] = None,
                  context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.grey_dilation: the maximum of input + structure over the reflected footprint.

    >>> import numpy as np, lucent
    >>> lucent.ndimage.grey_dilation(np.array([0, 0, 5, 0, 0], "f4"), size=3)
    array([0., 5., 5., 5., 0.], dtype=float32)
    """
    return _extreme("dilation", input, size, footprint, structure, output, mode, cval, origin, context, axes)


def grey_opening(input: Any, size: Any = None, footprint: Any = None, structure: Any = None, output: Any = None,
                 mode: str = "reflect", cval: float = 0.0, origin: Any = 0, *, context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.grey_opening: grey erosion, then grey dilation."""
    tmp = grey_erosion(input, size, footprint, structure, None, mode, cval, origin, context=context)
    return grey_dilation(tmp, size, footprint, structure, output, mode, cval, origin, context=context)


def grey_closing(input: Any, size: Any = None, footprint: Any = None, structure: Any = None, output: Any = None,
                 mode: str = "reflect", cval: float = 0.0, origin: Any = 0, *, context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.grey_closing: grey dilation, then grey erosion."""
    tmp = grey_dilation(input, size, footprint, structure, None, mode, cval, origin, context=context)
    return grey_erosion(tmp, size, footprint, structure, output, mode, cval, origin, context=context)


def morphological_gradient(input: Any, size: Any = None, footprint: Any = None, structure: Any = None, output: Any = None,
                           mode: str = "reflect", cval: float = 0.0, origin: Any = 0, *,
                           context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.morphological_gradient: grey dilation minus grey erosion (in the input's
    dtype, as scipy subtracts them; ``output`` only as an array, as scipy)."""
    tmp = grey_dilation(input, size, footprint, structure, None, mode, cval, origin, context=context)
    if isinstance(output, np.ndarray):
        grey_erosion(input, size, footprint, structure, output, mode, cval, origin, context=context)
        return np.subtract(tmp, output, output)
    return tmp - grey_erosion(input, size, footprint, structure, None, mode, cval, origin, context=context)


def white_tophat(input: Any, size: Any = None, footprint: Any = None, structure: Any = None, output: Any = None,
                 mode: str = "reflect", cval: float = 0.0, origin: Any = 0, *, context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.white_tophat: the input minus its grey opening (in the result's dtype, as
    scipy subtracts them; exclusive or for booleans)."""
    return _tophat(grey_erosion, grey_dilation, True, input, size, footprint, structure, output, mode, cval, origin, context)


def black_tophat(input: Any, size: Any = None, footprint: Any = None, structure: Any = None, output: Any = None,
                 mode: str = "reflect", cval: float = 0.0, origin: Any = 0, *, context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.black_tophat: the grey closing minus the input (in the result's dtype, as
    scipy subtracts them; exclusive or for booleans)."""
    return _tophat(grey_dilation, grey_erosion, False, input, size, footprint, structure, output, mode, cval, origin, context)


def _tophat(first: Callable, second: Callable, input_first: bool, input: Any, size: Any, footprint: Any, structure: Any,
            output: Any, mode: str, cval: float, origin: Any, context: Optional[Context]) -> np.ndarray:
    """A tophat as scipy computes it: ``second`` of ``first`` (an opening or a closing) into
    ``output``, then the input minus it (``input_first``) or it minus the input, in the result's
    dtype (exclusive or for booleans)."""
    a = np.asarray(input)
    tmp = first(a, size, footprint, structure, None, mode, cval, origin, context=context)
    tmp = second(tmp, size, footprint, structure, output, mode, cval, origin, context=context)
    if a.dtype == np.bool_ and tmp.dtype == np.bool_:
        return np.bitwise_xor(a, tmp, out=tmp)
    return np.subtract(a, tmp, out=tmp) if input_first else np.subtract(tmp, a, out=tmp)


def generate_binary_structure(rank: int, connectivity: int) -> np.ndarray:
    """scipy.ndimage.generate_binary_structure: the elements of a 3^rank cube within
    ``connectivity`` city-block steps of its centre.

    >>> import lucent
    >>> lucent.ndimage.generate_binary_structure(2, 1).astype(int)
    array([[0, 1, 0],
           [1, 1, 1],
           [0, 1, 0]])
    """
    if connectivity < 1:
        connectivity = 1
    if rank < 1:
        return np.array(True)
    grid = np.indices([3] * rank)
    return np.abs(grid - 1).sum(axis=0) <= connectivity


def _binary(which: str, input: Any, structure: Any, iterations: int, mask: Any, output: Any, border_value: Any,
            origin: Any, brute_force: bool, context: Optional[Context], axes: Any = None) -> np.ndarray:
    a = np.asarray(input)
    if np.iscomplexobj(a):
        raise TypeError("Complex type not supported")
    listed = _listed_axes(axes, a.ndim)
    s = generate_binary_structure(len(listed), 1) if structure is None else np.asarray(structure) != 0
    if a.ndim == 0 and s.ndim == 0:
        # scipy's 0-d input: one element, no neighbours; computed as an array of one.
        m = None if mask is None else np.reshape(mask, 1)
        r = _binary(which, np.reshape(a != 0, 1), s.reshape(1), iterations, m, None, border_value, 0, brute_force,
                    context)
        return finish(r.reshape(()), output, np.bool_)
    x = nonzero(a)
    if axes is None and s.ndim != x.ndim:
        raise RuntimeError("structure and input must have same dimensionality")
    s = np.ascontiguousarray(_over_axes(s, listed, x.ndim, "structure"))
    m = None if mask is None else np.ascontiguousarray(np.asarray(mask) != 0)
    iterations = int(iterations)
    r = _lucent.binary_morphology(resolve(context), x, which, s, max(iterations, 0), bool(border_value),
                                  _origins(origin, x.ndim, axes), m)
    return finish(r, output, np.bool_)


def binary_erosion(input: Any, structure: Any = None, iterations: int = 1, mask: Any = None, output: Any = None,
                   border_value: Any = 0, origin: Any = 0, brute_force: bool = False, *, axes: Optional[Sequence[int]] = None,
                   context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.binary_erosion: true where the structure (default: the cross of
    connectivity 1), placed there, covers only true elements (``border_value`` outside);
    ``iterations`` times (below 1: until nothing changes), only where ``mask`` is true.

    >>> import numpy as np, lucent
    >>> x = np.zeros((5, 5), bool); x[1:4, 1:4] = True
    >>> lucent.ndimage.binary_erosion(x).astype(int)[1:4, 1:4]
    array([[0, 0, 0],
           [0, 1, 0],
           [0, 0, 0]])
    """
    return _binary("erosion", input, structure, iterations, mask, output, border_value, origin, brute_force, context, axes)


def binary_dilation(input: Any, structure: Any = None, iterations: int = 1, mask: Any = None, output: Any = None,
                    border_value: Any = 0, origin: Any = 0, brute_force: bool = False, *, axes: Optional[Sequence[int]] = None,
                    context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.binary_dilation: true where the reflected structure, placed there, covers a
    true element; ``iterations`` times (below 1: until nothing changes), only where ``mask`` is
    true.

    >>> import numpy as np, lucent
    >>> x = np.zeros((5, 5), bool); x[2, 2] = True
    >>> int(lucent.ndimage.binary_dilation(x).sum())
    5
    """
    return _binary("dilation", input, structure, iterations, mask, output, border_value, origin, brute_force, context, axes)


def binary_opening(input: Any, structure: Any = None, iterations: int = 1, output: Any = None, origin: Any = 0,
                   mask: Any = None, border_value: Any = 0, brute_force: bool = False, *,
                   axes: Optional[Sequence[int]] = None, context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.binary_opening: ``iterations`` erosions, then as many dilations."""
    return _binary("opening", input, structure, iterations, mask, output, border_value, origin, brute_force, context, axes)


def binary_closing(input: Any, structure: Any = None, iterations: int = 1, output: Any = None, origin: Any = 0,
                   mask: Any = None, border_value: Any = 0, brute_force: bool = False, *,
                   axes: Optional[Sequence[int]] = None, context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.binary_closing: ``iterations`` dilations, then as many erosions."""
    return _binary("closing", input, structure, iterations, mask, output, border_value, origin, brute_force, context, axes)


def binary_fill_holes(input: Any, structure: Any = None, output: Any = None, origin: Any = 0, *,
                      axes: Optional[Sequence[int]] = None, context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.binary_fill_holes: the input with every background region that the
    structure's neighbourhood (default: connectivity 1) does not join to the array's edge set
    true.

    >>> import numpy as np, lucent
    >>> x = np.ones((5, 5), bool); x[2, 2] = False; x[0, 2] = False
    >>> lucent.ndimage.binary_fill_holes(x).astype(int)[:3, 2].tolist()
    [0, 1, 1]
    """
    return _binary("fill_holes", input, structure, 1, None, output, 0, origin, False, context, axes)


def binary_hit_or_miss(input: Any, structure1: Any = None, structure2: Any = None, output: Any = None, origin1: Any = 0,
                       origin2: Any = None, *, axes: Optional[Sequence[int]] = None,
                       context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.binary_hit_or_miss: where ``structure1`` fits the foreground and
    ``structure2`` (default: its complement) the background: erosion of the input by the first
    and of its complement (border 1) by the second."""
    x = np.asarray(input) != 0
    s1 = generate_binary_structure(len(_listed_axes(axes, x.ndim)), 1) if structure1 is None else np.asarray(structure1) != 0
    s2 = np.logical_not(s1) if structure2 is None else np.asarray(structure2) != 0
    hit = binary_erosion(x, s1, origin=origin1, axes=axes, context=context)
    miss = binary_erosion(~x, s2, border_value=1, origin=origin1 if origin2 is None else origin2, axes=axes,
                          context=context)
    return finish(hit & miss, output, np.bool_)


def binary_propagation(input: Any, structure: Any = None, mask: Any = None, output: Any = None, border_value: Any = 0,
                       origin: Any = 0, *, axes: Optional[Sequence[int]] = None,
                       context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.binary_propagation: dilation repeated until stable, only where ``mask``
    is true (the reconstruction of the mask's regions from the input's seeds)."""
    return binary_dilation(input, structure, -1, mask, output, border_value, origin, axes=axes, context=context)


def morphological_laplace(input: Any, size: Any = None, footprint: Any = None, structure: Any = None, output: Any = None,
                          mode: str = "reflect", cval: float = 0.0, origin: Any = 0, *,
                          context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.morphological_laplace: grey dilation plus grey erosion minus twice the
    input (in the input's dtype, as scipy adds them; ``output`` only as an array, as scipy)."""
    a = np.asarray(input)
    tmp1 = grey_dilation(a, size, footprint, structure, None, mode, cval, origin, context=context)
    if isinstance(output, np.ndarray):
        grey_erosion(a, size, footprint, structure, output, mode, cval, origin, context=context)
        np.add(tmp1, output, output)
        np.subtract(output, a, output)
        return np.subtract(output, a, output)
    tmp2 = grey_erosion(a, size, footprint, structure, None, mode, cval, origin, context=context)
    np.add(tmp1, tmp2, tmp2)
    np.subtract(tmp2, a, tmp2)
    np.subtract(tmp2, a, tmp2)
    return tmp2


def value_indices(arr: Any, *, ignore_value: Any = None) -> dict:
    """scipy.ndimage.value_indices: for every distinct value of an integer array, the indices
    of its elements (a tuple of arrays, one per axis, in C order), skipping ``ignore_value``.

    >>> import numpy as np, lucent
    >>> {int(k): [i.tolist() for i in v] for k, v in lucent.ndimage.value_indices(np.array([[1, 0], [1, 2]])).items()}
    {0: [[0], [1]], 1: [[0, 1], [0, 0]], 2: [[1], [1]]}
    """
    a = np.asarray(arr)
    if not (np.issubdtype(a.dtype, np.integer) or a.dtype == np.bool_):
        raise ValueError("Parameter 'arr' must be an integer array")
    flat = a.ravel()
    order = np.argsort(flat, kind="stable")
    values, starts = np.unique(flat[order], return_index=True)
    ends = np.append(starts[1:], flat.size)
    out = {}
    for v, lo, hi in zip(values, starts, ends):
        if ignore_value is not None and v == ignore_value:
            continue
        out[v] = np.unravel_index(order[lo:hi], a.shape)
    return out


def _python_per_element(name: str) -> Any:
    def refused(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"lucent.ndimage.{name} runs a Python function per element or window, which a "
                                  f"GPU cannot; call scipy.ndimage.{name}")
    refused.__name__ = name
    refused.__doc__ = f"scipy.ndimage.{name}: not supported (a Python function per element); raises NotImplementedError."
    return refused


generic_filter = _python_per_element("generic_filter")
generic_filter1d = _python_per_element("generic_filter1d")
vectorized_filter = _python_per_element("vectorized_filter")


def distance_transform_bf(input: Any, metric: str = "euclidean", sampling: Any = None, return_distances: bool = True,
                          return_indices: bool = False, distances: Any = None, indices: Any = None, *,
                          context: Optional[Context] = None) -> Any:
    """scipy.ndimage.distance_transform_bf: the Euclidean metric is `distance_transform_edt`'s
    exact result; taxicab and chessboard are not implemented."""
    if metric != "euclidean":
        raise NotImplementedError(f"distance_transform_bf: metric {metric!r} is not implemented (euclidean is)")
    return distance_transform_edt(input, sampling, return_distances, return_indices, distances, indices, context=context)


def distance_transform_cdt(input: Any, metric: Any = "chessboard", return_distances: bool = True,
                           return_indices: bool = False, distances: Any = None, indices: Any = None) -> Any:
    """scipy.ndimage.distance_transform_cdt: not implemented (chamfer distances); raises
    NotImplementedError — `distance_transform_edt` gives exact Euclidean distances."""
    raise NotImplementedError("distance_transform_cdt (chamfer distances) is not implemented; "
                              "distance_transform_edt gives exact Euclidean distances")


def watershed_ift(input: Any, markers: Any, structure: Any = None, output: Any = None) -> Any:
    """scipy.ndimage.watershed_ift: not implemented; raises NotImplementedError."""
    raise NotImplementedError("watershed_ift is not implemented (scikit-image's watershed is the usual choice)")


def iterate_structure(structure: Any, iterations: int, origin: Any = None, *, context: Optional[Context] = None) -> Any:
    """scipy.ndimage.iterate_structure: the structure dilated by itself ``iterations`` − 1 times
    (and the origin scaled with it when one is given).

    >>> import lucent
    >>> lucent.ndimage.iterate_structure(lucent.ndimage.generate_binary_structure(2, 1), 2).astype(int)
    array([[0, 0, 1, 0, 0],
           [0, 1, 1, 1, 0],
           [1, 1, 1, 1, 1],
           [0, 1, 1, 1, 0],
           [0, 0, 1, 0, 0]])
    """
    structure = np.asarray(structure)
    if iterations < 2:
        out = structure.copy()
    else:
        ni = iterations - 1
        shape = [ii + ni * (ii - 1) for ii in structure.shape]
        pos = [ni * (structure.shape[ii] // 2) for ii in range(len(shape))]
        slc = tuple(slice(pos[ii], pos[ii] + structure.shape[ii], None) for ii in range(len(shape)))
        out = np.zeros(shape, bool)
        out[slc] = structure != 0
        out = binary_dilation(out, structure, iterations=ni, context=context)
    if origin is None:
        return out
    origin = per_axis(origin, structure.ndim, "origin")
    return out, [iterations * o for o in origin]


def distance_transform_edt(input: Any, sampling: Any = None, return_distances: bool = True, return_indices: bool = False,
                           distances: Any = None, indices: Any = None, *, context: Optional[Context] = None) -> Any:
    """scipy.ndimage.distance_transform_edt: the exact Euclidean distance of every non-zero
    element to the nearest zero (``sampling``: the spacing of each axis), float64 as scipy's,
    and with ``return_indices`` the feature transform: the int32 coordinates of each element's
    nearest zero, shape (ndim, ...) (where zeros lie at the same distance lucent may name
    another of them than scipy). ``distances`` and ``indices`` arrays are written in place and
    then not returned, as scipy does. An input without a zero element is refused.

    >>> import numpy as np, lucent
    >>> x = np.ones((3, 5)); x[1, 0] = 0
    >>> lucent.ndimage.distance_transform_edt(x)[1]
    array([0., 1., 2., 3., 4.])
    >>> lucent.ndimage.distance_transform_edt(x, return_indices=True)[1][:, 2, 4]
    array([1, 0], dtype=int32)
    """
    dt_inplace, ft_inplace = isinstance(distances, np.ndarray), isinstance(indices, np.ndarray)
    errors = []
    if not return_distances and not return_indices:
        errors.append("at least one of return_distances/return_indices must be True")
    if dt_inplace and not return_distances:
        errors.append("return_distances must be True if distances is supplied")
    if ft_inplace and not return_indices:
        errors.append("return_indices must be True if indices is supplied")
    if errors:
        raise RuntimeError(", ".join(errors))
    a = np.atleast_1d(np.asarray(input))  # scipy's: a 0-d input is an array of one
    x = nonzero(a)  # bytes travel; the device widens them
    w = [] if sampling is None else [float(s) for s in per_axis(sampling, x.ndim, "sampling")]
    if ft_inplace:
        if indices.shape != (a.ndim,) + a.shape:
            raise RuntimeError("indices array has wrong shape")
        if indices.dtype.type != np.int32:
            raise RuntimeError("indices array must be int32")
    if dt_inplace:
        if distances.shape != a.shape:
            raise RuntimeError("distances array has wrong shape")
        if distances.dtype.type != np.float64:
            raise RuntimeError("distances array must be float64")
    if return_indices:
        dt, ft = _lucent.distance_transform_edt_indices(resolve(context), x, w)
    else:
        dt, ft = _lucent.distance_transform_edt(resolve(context), x, w), None
    result = []
    if return_distances:
        if dt_inplace:
            finish(dt, distances)
        else:
            result.append(finish(dt, None, np.float64))
    if return_indices:
        if ft_inplace:
            indices[...] = ft
        else:
            result.append(ft)
    return tuple(result) if len(result) == 2 else (result[0] if result else None)


def label(input: Any, structure: Any = None, output: Any = None, *, context: Optional[Context] = None) -> Any:
    """scipy.ndimage.label: connected components of the non-zero elements (``structure``: the
    neighbourhood, 3 along every axis and symmetric; default connectivity 1), numbered from 1 in
    raster order as scipy numbers them; returns (labels as int32, count), or the count when
    ``output`` is an array (written in place).

    >>> import numpy as np, lucent
    >>> labels, n = lucent.ndimage.label(np.array([[1, 1, 0, 0], [0, 0, 0, 1], [1, 0, 1, 1]]))
    >>> n, labels.tolist()
    (3, [[1, 1, 0, 0], [0, 0, 0, 2], [3, 0, 2, 2]])
    """
    a = np.asarray(input)
    if np.iscomplexobj(a):
        raise TypeError("Complex type not supported")
    x = np.asarray(a != 0) if a.ndim == 0 else nonzero(a)
    s = generate_binary_structure(x.ndim, 1) if structure is None else np.ascontiguousarray(np.asarray(structure) != 0)
    if s.ndim != x.ndim:
        raise RuntimeError("structure and input must have equal rank")
    if any(n != 3 for n in s.shape):
        raise ValueError("structure dimensions must be equal to 3")
    if x.ndim == 0:  # scipy's 0-d input: one element, its own region when non-zero
        labels, n = x.astype(np.int32), int(x)
    else:
        labels, n = _lucent.label(resolve(context), x, s)
    if isinstance(output, np.ndarray):
        if output.shape != labels.shape:
            raise ValueError("output shape not correct")
        output[...] = labels
        return n
    return (labels if output is None else labels.astype(output)), n


def _rank(rank_of, input: Any, size: Any, footprint: Any, output: Any, mode: str, cval: float, origin: Any,
          axes: Optional[Sequence[int]], function: str, context: Optional[Context]) -> np.ndarray:
    a = np.asarray(input)
    if a.ndim == 0 and not np.iscomplexobj(a):
        return finish(a, output, a.dtype)  # scipy's filter over no axes: the element itself
    x = working(a, "input", exact=True, context=resolve(context))
    fp, _ = _footprint(size, footprint, None, x.ndim, function, axes)
    rank = rank_of(int(fp.sum()))
    if a.dtype.kind in "biu":
        # scipy reads cval in the input's type (1-D: in int64; ranks 0 and last: the minimum or
        # maximum filter, the flat box's in double).
        last = rank in (0, -1, int(fp.sum()) - 1, -int(fp.sum()))
        if not last or not fp.all():
            cval = float(np.trunc(cval) if a.ndim == 1 and not last else convert(np.float64(cval), a.dtype))
    r = _lucent.rank_filter(resolve(context), x, rank, fp, _origins(origin, x.ndim, axes), _mode(mode), cval)
    return finish(r, output, a.dtype)


def rank_filter(input: Any, rank: int, size: Any = None, footprint: Any = None, output: Any = None, mode: str = "reflect",
                cval: float = 0.0, origin: Any = 0, *, axes: Optional[Sequence[int]] = None,
                context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.rank_filter: the ``rank``-th smallest (negative: from the largest) over
    ``size`` (a box) or ``footprint``; footprints of up to 343 elements (7³).

    >>> import numpy as np, lucent
    >>> lucent.ndimage.rank_filter(np.array([3, 1, 4, 1, 5, 9, 2], "f4"), 1, size=3)
    array([3., 3., 1., 4., 5., 5., 2.], dtype=float32)
    """
    return _rank(lambda taps: int(rank), input, size, footprint, output, mode, cval, origin, axes, "rank_filter", context)


def median_filter(input: Any, size: Any = None, footprint: Any = None, output: Any = None, mode: str = "reflect",
                  cval: float = 0.0, origin: Any = 0, *, axes: Optional[Sequence[int]] = None,
                  context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.median_filter: the median over ``size`` (a box) or ``footprint`` (the element
    of rank taps // 2, as scipy); footprints of up to 343 elements (7³).

    >>> import numpy as np, lucent
    >>> lucent.ndimage.median_filter(np.array([3, 1, 4, 1, 5, 9, 2], "f4"), size=3)
    array([3., 3., 1., 4., 5., 5., 2.], dtype=float32)
    """
    return _rank(lambda taps: taps // 2, input, size, footprint, output, mode, cval, origin, axes, "median_filter", context)


def percentile_filter(input: Any, percentile: float, size: Any = None, footprint: Any = None, output: Any = None,
                      mode: str = "reflect", cval: float = 0.0, origin: Any = 0, *, axes: Optional[Sequence[int]] = None,
                      context: Optional[Context] = None) -> np.ndarray:
    """scipy.ndimage.percentile_filter: the element at ``percentile`` (negative: 100 + it) of the
    sorted window, scipy's rank int(taps · percentile / 100).

    >>> import numpy as np, lucent
    >>> lucent.ndimage.percentile_filter(np.array([3, 1, 4, 1, 5, 9, 2], "f4"), 20, size=5)
    array([1., 1., 1., 1., 2., 2., 2.], dtype=float32)
    """
    p = float(percentile)
    if p < 0.0:
        p += 100.0
    if p < 0.0 or p > 100.0:
        raise RuntimeError("invalid percentile")

    def rank_of(taps: int) -> int:
        return taps - 1 if p == 100.0 else int(float(taps) * p / 100.0)
    return _rank(rank_of, input, size, footprint, output, mode, cval, origin, axes, "percentile_filter", context)
