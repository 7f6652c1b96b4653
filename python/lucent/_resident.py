"""The resident forms of lucent's functions (see :mod:`lucent._device`): each takes the
function's own arguments, returns NotImplemented for the options it does not cover (the call
then goes through the host), and otherwise runs on the device without a host copy."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from . import _lucent
from ._arrays import per_axis, real
from ._device import Array

NO = NotImplemented


def _real(x: Any) -> Optional[Array]:
    """``x`` when it is a real (float32/float64, not bool) Array."""
    return x if isinstance(x, Array) and not x._bool and x.dtype.kind == "f" else None


def _axis_values(v: Any, ndim: int, kind: type) -> list:
    return [kind(u) for u in np.broadcast_to(np.asarray(v), (ndim,))] if np.ndim(v) == 0 else [kind(u) for u in v]


# -- ndimage ---------------------------------------------------------------------------------

def _gaussian(which: str):
    def run(input: Any, sigma: Any, order: Any = 0, output: Any = None, mode: str = "reflect", cval: float = 0.0,
            truncate: float = 4.0, *, radius: Any = None, axes: Any = None, context: Any = None) -> Any:
        x = _real(input)
        if x is None or output is not None or axes is not None or not isinstance(mode, str):
            return NO
        from .ndimage import _mode
        nd = x.ndim
        sigmas = _axis_values(sigma, nd, float)
        orders = _axis_values(order, nd, int) if which == "filter" else [0] * nd
        if any(o < 0 for o in orders):
            raise ValueError("order must be non-negative")
        radii = None if radius is None else _axis_values(radius, nd, int)
        if radii is not None and any(r < 0 for r in radii):
            raise ValueError("Radius must be a nonnegative integer.")
        y = _lucent.gaussian_filter_device(x._a, sigmas, orders, radii, float(truncate), _mode(mode), float(cval), which)
        return Array(y, x._ctx)

    if which == "filter":
        return run

    def derivative(input: Any, sigma: Any, output: Any = None, mode: str = "reflect", cval: float = 0.0, *,
                   truncate: float = 4.0, radius: Any = None, axes: Any = None, context: Any = None) -> Any:
        return run(input, sigma, 0, output, mode, cval, truncate, radius=radius, axes=axes, context=context)

    return derivative


def uniform_filter(input: Any, size: Any = 3, output: Any = None, mode: str = "reflect", cval: float = 0.0,
                   origin: Any = 0, *, axes: Any = None, context: Any = None) -> Any:
    x = _real(input)
    if x is None or output is not None or axes is not None or not isinstance(mode, str) or np.any(np.asarray(origin) != 0):
        return NO
    from .ndimage import _mode
    sizes = _axis_values(size, x.ndim, int)
    return Array(_lucent.uniform_filter_device(x._a, sizes, _mode(mode), float(cval)), x._ctx)


def _sampling(kind: str):
    def run(input: Any, *args: Any, output: Any = None, order: int = 3, mode: str = "constant", cval: float = 0.0,
            prefilter: bool = True, sampler: str = "auto", context: Any = None, **kw: Any) -> Any:
        x = _real(input)
        if x is None or output is not None or args:
            return NO
        from .ndimage import _how
        how = _how(order, mode, cval, prefilter, sampler)
        if kind == "shift":
            y = _lucent.resample_device(x._a, "shift", [float(v) for v in per_axis(kw.pop("shift"), x.ndim, "shift")], how)
        elif kind == "zoom":
            z = [float(v) for v in per_axis(kw.pop("zoom"), x.ndim, "zoom")]
            y = _lucent.resample_device(x._a, "zoom", z, how, grid_mode=bool(kw.pop("grid_mode", False)))
        elif kind == "rotate":
            axes = tuple(int(a) for a in kw.pop("axes", (1, 0)))
            y = _lucent.resample_device(x._a, "rotate", [], how, angle=float(kw.pop("angle")), axes=list(axes),
                                        reshape=bool(kw.pop("reshape", True)))
        else:
            m = np.asarray(kw.pop("matrix"), dtype=np.float64)
            if m.ndim != 2 or m.shape != (x.ndim, x.ndim):
                return NO  # diagonal, homogeneous and rank-changing forms: the host path's rules
            offset = [float(v) for v in per_axis(kw.pop("offset", 0.0), x.ndim, "offset")]
            shape = kw.pop("output_shape", None)
            y = _lucent.resample_device(x._a, "affine_transform", offset, how, matrix=m,
                                        output_shape=None if shape is None else [int(n) for n in shape])
        if kw:
            return NO
        return Array(y, x._ctx)

    # The positional forms scipy documents: shift(input, shift), zoom(input, zoom),
    # rotate(input, angle, axes, reshape), affine_transform(input, matrix, offset, output_shape).
    names = {"shift": ["shift"], "zoom": ["zoom"], "rotate": ["angle", "axes", "reshape"],
             "affine_transform": ["matrix", "offset", "output_shape"]}[kind]

    def call(input: Any, *args: Any, **kw: Any) -> Any:
        if len(args) > len(names):
            return NO
        for name, v in zip(names, args):
            kw[name] = v
        if names[0] not in kw:
            return NO  # the host path says what is missing
        return run(input, **kw)

    return call


# -- fft -------------------------------------------------------------------------------------

def _fft(kind: str, default_axes: Any = None):
    def run(a: Any, s: Any = None, axes: Any = default_axes, norm: Any = None, out: Any = None, *, context: Any = None) -> Any:
        if not isinstance(a, Array) or a._bool or out is not None:
            return NO
        complex_in = a.dtype.kind == "c"
        if complex_in != (kind != "rfftn"):
            return NO  # real input to a complex transform: numpy's conversion, through the host
        ax = None if axes is None else [int(v) % a.ndim if -a.ndim <= int(v) < a.ndim else int(v) for v in axes]
        length = None
        if s is not None:
            if kind != "irfftn" or len(s) != len(ax if ax is not None else range(a.ndim)):
                return NO
            if list(s)[:-1] != [a.shape[k] for k in (ax if ax is not None else range(a.ndim))][:-1]:
                return NO
            length = int(list(s)[-1])
        return Array(_lucent.fft_device(a._a, kind, ax, norm or "backward", length), a._ctx)

    return run


# -- registration, restoration ---------------------------------------------------------------

def phase_cross_correlation(reference_image: Any, moving_image: Any, *, upsample_factor: float = 1,
                            space: str = "real", disambiguate: bool = False, reference_mask: Any = None,
                            moving_mask: Any = None, overlap_ratio: float = 0.3, normalization: Any = "phase",
                            context: Any = None) -> Any:
    r, m = _real(reference_image), _real(moving_image)
    if (r is None or m is None or r.dtype != np.float32 or m.dtype != np.float32 or space != "real" or disambiguate
            or reference_mask is not None or moving_mask is not None):
        return NO
    shift, error, phasediff = _lucent.phase_cross_correlation_device(
        r._a, m._a, float(upsample_factor), "none" if normalization is None else normalization)
    return np.array(shift), np.nan if error is None else error, np.nan if phasediff is None else phasediff


def richardson_lucy(image: Any, psf: Any = None, num_iter: int = 50, clip: bool = True, filter_epsilon: Any = None,
                    *, psf_model: Any = None, init: Any = 0.5, normalize_psf: bool = False, boundary: str = "zero",
                    tv: Any = None, accelerate: bool = False, stop: Any = None, eps: float = 1e-12,
                    clip_negative: bool = False, context: Any = None) -> Any:
    x = _real(image)
    if x is None or x.dtype != np.float32 or psf_model is not None:
        return NO
    from ._arrays import count
    from .restoration import _options
    o = _options(init, normalize_psf, filter_epsilon, boundary, tv, accelerate, stop, eps, clip_negative)
    h = real(psf.get() if isinstance(psf, Array) else psf, "psf")
    return Array(_lucent.richardson_lucy_device(x._a, h, count(num_iter, "num_iter"), bool(clip), o), x._ctx)


def install() -> None:
    """Every module's functions take Arrays, these run resident."""
    from . import _device, denoise, feature, fft, io, ndimage, phantom, psf, registration, restoration, signal, tomography, transform
    measurements = frozenset(n for n in ndimage.__all__ if n in (
        "sum_labels", "sum", "mean", "variance", "standard_deviation", "minimum", "maximum", "median", "minimum_position",
        "maximum_position", "extrema", "center_of_mass", "histogram", "find_objects", "labeled_comprehension", "value_indices"))
    _device.install(ndimage, {
        "gaussian_filter": _gaussian("filter"), "gaussian_laplace": _gaussian("laplace"),
        "gaussian_gradient_magnitude": _gaussian("magnitude"), "uniform_filter": uniform_filter,
        "shift": _sampling("shift"), "zoom": _sampling("zoom"), "rotate": _sampling("rotate"),
        "affine_transform": _sampling("affine_transform"),
    }, measurements)
    two = (-2, -1)
    _device.install(fft, {
        "fftn": _fft("fftn"), "ifftn": _fft("ifftn"), "rfftn": _fft("rfftn"), "irfftn": _fft("irfftn"),
        "fft2": _fft("fftn", two), "ifft2": _fft("ifftn", two), "rfft2": _fft("rfftn", two), "irfft2": _fft("irfftn", two),
    })
    _device.install(registration, {"phase_cross_correlation": phase_cross_correlation}, frozenset(registration.__all__))
    _device.install(restoration, {"richardson_lucy": richardson_lucy})
    _device.install(io, {}, frozenset({"read_ome"}))
    for module in (denoise, feature, phantom, psf, signal, tomography, transform):
        _device.install(module, {})
