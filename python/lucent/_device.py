"""Arrays that stay on the GPU between calls: :class:`Array` and :func:`asarray`.

Every function of lucent's modules takes an :class:`Array` wherever it takes a numpy array, and
then returns its array results as :class:`Array` on the same context (numpy in, numpy out stays
as it was). The functions below run on the device without a host copy ("resident"); any other
call, or a resident one with options they do not cover (``output=``, ``axes=``, per-axis modes,
``s=``), copies the arrays to the host, calls the numpy path and uploads the result: correct,
with the round trip the resident form saves.

Resident: ``ndimage.gaussian_filter``, ``gaussian_laplace``, ``gaussian_gradient_magnitude``,
``uniform_filter``, ``shift``, ``zoom``, ``rotate``, ``affine_transform``; ``fft.fftn``,
``ifftn``, ``rfftn``, ``irfftn`` (and ``fft2``/``ifft2``/``rfft2``/``irfft2``);
``registration.phase_cross_correlation`` (real space, no masks); ``restoration.richardson_lucy``.

Results that are measurements, not images (shifts, region statistics, labels counts), and
integer arrays (labels) stay numpy.
"""

from __future__ import annotations

import functools
import numbers
import warnings
from typing import Any, Callable, Optional

import numpy as np

from . import _lucent
from ._context import Context, resolve

_WIDE = {np.dtype("float64"): True, np.dtype("complex128"): True}


class Array:
    """An array in GPU memory (one device buffer), as CuPy's ``cupy.ndarray``: float32,
    float64, complex64, complex128 or bool (held as 0/1 in float32).

    ``+ - * /``, comparisons (bool arrays), ``& | ~`` of bool arrays, ``abs``, ``-x``,
    ``x ** 2`` and ``x ** 0.5`` run on the device with numpy's broadcasting; Python numbers and
    numpy arrays mix in (uploaded). ``sum``, ``mean``, ``min`` and ``max`` reduce on the device
    (float32 and bool; float64 through numpy). ``get()`` (or ``numpy.asarray(x)``) copies the
    values back. Freed when the last reference goes.

    >>> import numpy as np, lucent
    >>> x = lucent.asarray(np.arange(6, dtype="f4").reshape(2, 3))
    >>> x
    lucent.Array(shape=(2, 3), dtype=float32)
    >>> y = (x * 2 + 1) / x.max()
    >>> y.get()
    array([[0.2, 0.6, 1. ],
           [1.4, 1.8, 2.2]], dtype=float32)
    >>> float((x > 2).sum())
    3.0
    """

    __array_priority__ = 100  # numpy defers `ndarray op Array` to Array's reflected methods
    __slots__ = ("_a", "_ctx", "_bool")
    __hash__ = None  # type: ignore[assignment]  # == is elementwise

    def __init__(self, native: Any, context: Context, is_bool: bool = False):
        # Made by asarray and by lucent's functions, not by hand.
        self._a, self._ctx, self._bool = native, context, bool(is_bool)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._a.shape)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(bool) if self._bool else np.dtype(self._a.dtype)

    @property
    def ndim(self) -> int:
        return len(self._a.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self._a.shape))

    @property
    def nbytes(self) -> int:
        """Bytes the array holds on the device."""
        return int(self._a.nbytes)

    @property
    def context(self) -> Context:
        """The :class:`lucent.Context` (GPU) it lives on."""
        return self._ctx

    def get(self) -> np.ndarray:
        """The values as a new numpy array."""
        v = self._a.get()
        return v != 0 if self._bool else v

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        v = self.get()
        return v if dtype is None else v.astype(dtype, copy=False)

    def copy(self) -> "Array":
        """A copy on the same device."""
        if self.dtype.kind == "c":
            return asarray(self.get(), context=self._ctx)
        return self._binary("multiply", 1)

    def astype(self, dtype: Any) -> "Array":
        """The values in ``dtype`` (converted through the host unless it is the same)."""
        if np.dtype(dtype) == self.dtype:
            return self
        return asarray(self.get().astype(dtype), context=self._ctx)

    def __getitem__(self, key: Any) -> Any:
        """numpy's basic indexing (integers, slices with steps, ``...``, ``None``) on the device;
        boolean and integer-array indexing go through the host. Indexing every axis with an
        integer gives a numpy scalar."""
        keys = key if isinstance(key, tuple) else (key,)
        if not all(k is None or k is Ellipsis or isinstance(k, (slice, numbers.Integral)) for k in keys) or self._bool:
            picked = self.get()[_to_host(key)]
            return asarray(picked, context=self._ctx) if np.ndim(picked) else picked
        if sum(k is Ellipsis for k in keys) > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        named = sum(k is not None and k is not Ellipsis for k in keys)
        if named > self.ndim:
            raise IndexError(f"too many indices for array: array is {self.ndim}-dimensional, but {named} were indexed")
        at = keys.index(Ellipsis) if Ellipsis in keys else len(keys)
        keys = keys[:at] + (slice(None),) * (self.ndim - named) + keys[at + 1:]
        axes, dims, d = [], [], 0
        for k in keys:
            if k is None:
                dims.append(1)
                continue
            n = self.shape[d]
            if isinstance(k, slice):
                start, stop, step = k.indices(n)
                count = len(range(start, stop, step))
                if count == 0:
                    raise IndexError(f"the index {key!r} selects no elements; a lucent.Array holds at least one")
                axes.append((start, step, count))
                dims.append(count)
            else:
                i = int(k)
                if not -n <= i < n:
                    raise IndexError(f"index {i} is out of bounds for axis {d} with size {n}")
                axes.append((i % n, 1, 1))
            d += 1
        if not dims:
            return self.get()[key]
        if len(dims) > 4:
            raise IndexError(f"a lucent.Array has 1 to 4 axes; this index gives {len(dims)}")
        return Array(_lucent.slice_device(self._a, axes, dims), self._ctx, self._bool)

    def reshape(self, *shape: Any) -> "Array":
        """The same values with another shape (one dimension may be -1), 1 to 4 axes; no copy."""
        dims = list(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else list(shape)
        dims = [int(n) for n in dims]
        if dims.count(-1) > 1:
            raise ValueError("can only specify one unknown dimension")
        if -1 in dims:
            known = int(np.prod([n for n in dims if n != -1]))
            dims[dims.index(-1)] = self.size // known if known and self.size % known == 0 else -1
        if any(n < 1 for n in dims) or int(np.prod(dims)) != self.size:
            raise ValueError(f"cannot reshape array of size {self.size} into shape {tuple(shape[0]) if len(shape) == 1 else shape}")
        return Array(_lucent.reshape_device(self._a, dims), self._ctx, self._bool)

    def transpose(self, *axes: Any) -> "Array":
        """numpy.transpose (the axes reversed by default), a copy on the device."""
        order = list(axes[0]) if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else list(axes)
        order = order or list(range(self.ndim))[::-1]
        if sorted(int(a) % self.ndim for a in order) != list(range(self.ndim)) or len(order) != self.ndim:
            raise ValueError("axes don't match array")
        return Array(_lucent.transpose_device(self._a, [int(a) % self.ndim for a in order]), self._ctx, self._bool)

    @property
    def T(self) -> "Array":
        return self.transpose()

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        return f"lucent.Array(shape={self.shape}, dtype={self.dtype})"

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError("The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()")
        return bool(self.get().reshape(()))

    # -- elementwise, on the device --------------------------------------------------------

    def _operand(self, other: Any) -> Optional["Array"]:
        """``other`` as an Array of this one's type on its context (numbers and numpy arrays
        uploaded), or None for what cannot take part (then Python tries the reflected form)."""
        if isinstance(other, Array):
            if other._ctx is not self._ctx:
                raise ValueError("the two arrays live on different lucent contexts (GPUs): move one with lucent.asarray(a, context=...)")
            return other
        if isinstance(other, (numbers.Number, np.number, np.bool_)):
            return Array(_lucent.upload(self._ctx, np.full(1, other, self._a.dtype)), self._ctx)
        if isinstance(other, np.ndarray):
            return Array(_lucent.upload(self._ctx, np.ascontiguousarray(other, self._a.dtype)), self._ctx)
        return None

    def _binary(self, op: str, other: Any, reflected: bool = False, boolean: bool = False) -> Any:
        o = self._operand(other)
        if o is None:
            return NotImplemented
        x, y = (o, self) if reflected else (self, o)
        native, bad = _lucent.elementwise(op, x._a, y._a)
        if bad:
            warnings.warn(f"lucent.Array {op}: the result holds NaN or an infinity (overflow, division by zero, or "
                          "non-finite input)", RuntimeWarning, stacklevel=3)
        return Array(native, self._ctx, boolean)

    def __add__(self, o): return self._binary("add", o)
    def __radd__(self, o): return self._binary("add", o, True)
    def __sub__(self, o): return self._binary("subtract", o)
    def __rsub__(self, o): return self._binary("subtract", o, True)
    def __mul__(self, o): return self._binary("multiply", o)
    def __rmul__(self, o): return self._binary("multiply", o, True)
    def __truediv__(self, o): return self._binary("divide", o)
    def __rtruediv__(self, o): return self._binary("divide", o, True)
    def __lt__(self, o): return self._binary("less", o, boolean=True)
    def __le__(self, o): return self._binary("less_equal", o, boolean=True)
    def __gt__(self, o): return self._binary("greater", o, boolean=True)
    def __ge__(self, o): return self._binary("greater_equal", o, boolean=True)
    def __eq__(self, o): return self._binary("equal", o, boolean=True)  # type: ignore[override]
    def __ne__(self, o): return self._binary("not_equal", o, boolean=True)  # type: ignore[override]

    def _logical(self, op: str, o: Any) -> Any:
        if not (self._bool and isinstance(o, Array) and o._bool):
            raise TypeError(f"lucent.Array {op} takes two bool arrays (comparisons' results)")
        return self._binary("multiply" if op == "&" else "maximum", o, boolean=True)

    def __and__(self, o): return self._logical("&", o)
    def __or__(self, o): return self._logical("|", o)

    def __invert__(self) -> "Array":
        if not self._bool:
            raise TypeError("~ takes a bool lucent.Array")
        return self._binary("subtract", 1, reflected=True, boolean=True)

    def _unary(self, op: str) -> "Array":
        if self._a.dtype == "float32" or (self._a.dtype == "float64" and op not in ("exp", "log")):
            return Array(_lucent.unary_op(op, self._a), self._ctx)
        return asarray(getattr(np, op)(self.get()), context=self._ctx)

    def __neg__(self): return self._unary("negative") if self.dtype.kind != "c" else self * -1
    def __pos__(self): return self
    def __abs__(self): return self._unary("absolute")

    def __pow__(self, p: Any) -> "Array":
        if isinstance(p, numbers.Number) and not isinstance(p, bool):
            if p == 2:
                return self * self
            if p == 0.5:
                return self._unary("sqrt")
            if p == 1:
                return self
        return asarray(np.power(self.get(), p.get() if isinstance(p, Array) else p), context=self._ctx)

    # -- reductions ------------------------------------------------------------------------

    def _reduce(self, op: str, axis: Optional[int]) -> Any:
        if axis is not None:
            axis = int(axis) % self.ndim if -self.ndim <= int(axis) < self.ndim else int(axis)
            if not 0 <= axis < self.ndim:
                raise np.exceptions.AxisError(axis, self.ndim)
        if self._a.dtype != "float32":
            host = getattr(self.get(), op)(axis=axis)
            return host if axis is None else asarray(host, context=self._ctx)
        r = _lucent.reduction(op, self._a, axis)
        if axis is None:
            return np.float32(r.get()[0])
        return Array(r, self._ctx)

    def sum(self, axis: Optional[int] = None) -> Any:
        """numpy's sum (compensated on the device): a numpy scalar, or an Array along ``axis``."""
        return self._reduce("sum", axis)

    def mean(self, axis: Optional[int] = None) -> Any:
        return self._reduce("mean", axis)

    def max(self, axis: Optional[int] = None) -> Any:
        return self._reduce("max", axis)

    def min(self, axis: Optional[int] = None) -> Any:
        return self._reduce("min", axis)

    def any(self) -> bool:
        return bool((self != 0).max()) if self.size else False

    def all(self) -> bool:
        return bool((self != 0).min()) if self.size else True


def asarray(a: Any, dtype: Any = None, *, context: Optional[Context] = None) -> Array:
    """``a`` on the GPU as a :class:`lucent.Array` (an Array already on ``context`` is returned
    as it is). float32, complex64 and bool stay; float64 and complex128 stay on devices with f64
    (else float32/complex64, with a warning once); integers become float32 (16 bits and fewer)
    or float64 (wider; float32 where the device has no f64, exact to 2**24). ``dtype`` asks for
    one of float32, float64, complex64, complex128.

    >>> import numpy as np, lucent
    >>> lucent.asarray(np.ones((3, 4), "u2")).dtype
    dtype('float32')
    """
    if isinstance(a, Array) and (context is None or context is a._ctx):
        return a if dtype is None else a.astype(dtype)
    ctx = resolve(context)
    host = a.get() if isinstance(a, Array) else np.asarray(a)
    if host.dtype == object:
        raise TypeError("lucent.asarray takes numeric arrays, not object")
    if host.ndim == 0:
        raise ValueError("lucent.asarray takes arrays of 1 to 4 axes, not a 0-d array (a scalar)")
    is_bool = host.dtype == bool and dtype is None
    if dtype is not None:
        want = np.dtype(dtype)
        if want not in (np.float32, np.float64, np.complex64, np.complex128):
            raise TypeError(f"a lucent.Array holds float32, float64, complex64 or complex128, not {want}")
    elif is_bool:
        want = np.dtype("f4")
    elif host.dtype.kind in "iu":
        want = np.dtype("f4") if host.dtype.itemsize <= 2 else np.dtype("f8")
    elif host.dtype.kind == "c":
        want = np.dtype("c16") if host.dtype == np.complex128 else np.dtype("c8")
    else:
        want = np.dtype("f8") if host.dtype == np.float64 else np.dtype("f4")
    if want in _WIDE and not ctx.f64:
        from ._arrays import _computes_f64
        _computes_f64(ctx)
        want = np.dtype("c8") if want.kind == "c" else np.dtype("f4")
    return Array(_lucent.upload(ctx, np.ascontiguousarray(host, want)), ctx, is_bool)


# -- every function takes Arrays -----------------------------------------------------------

def _arrays_in(args: tuple, kwargs: dict) -> Optional[Array]:
    """The first Array among the arguments (and in lists or tuples of them)."""
    for v in (*args, *kwargs.values()):
        if isinstance(v, Array):
            return v
        if isinstance(v, (list, tuple)):
            for w in v:
                if isinstance(w, Array):
                    return w
    return None


def _to_host(v: Any) -> Any:
    if isinstance(v, Array):
        return v.get()
    if isinstance(v, list):
        return [_to_host(w) for w in v]
    if isinstance(v, tuple):
        return tuple(_to_host(w) for w in v)
    return v


def _to_device(v: Any, ctx: Context) -> Any:
    if isinstance(v, np.ndarray) and v.ndim >= 1 and v.dtype.kind in "fcb":
        return asarray(v, context=ctx)
    if isinstance(v, tuple):
        return tuple(_to_device(w, ctx) for w in v)
    if isinstance(v, list):
        return [_to_device(w, ctx) for w in v]
    return v


def device_aware(func: Callable, resident: Optional[Callable] = None, host_results: bool = False) -> Callable:
    """``func`` taking :class:`Array` arguments: ``resident`` first (it returns NotImplemented
    for what it does not cover), else through the host, array results uploaded back (kept on
    the host with ``host_results``)."""

    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        first = _arrays_in(args, kwargs)
        if first is None:
            return func(*args, **kwargs)
        for name in ("output", "out"):
            if isinstance(kwargs.get(name), Array):
                raise TypeError(f"{func.__name__}: {name}= cannot be a lucent.Array (device arrays are not written in place); "
                                "use the returned array")
        if resident is not None:
            r = resident(*args, **kwargs)
            if r is not NotImplemented:
                return r
        result = func(*_to_host(args), **{k: _to_host(v) for k, v in kwargs.items()})
        return result if host_results else _to_device(result, first._ctx)

    return call


def install(module: Any, resident: dict[str, Callable], host_results: frozenset = frozenset()) -> None:
    """Makes every function in ``module.__all__`` take Arrays (``resident`` by name)."""
    for name in module.__all__:
        f = getattr(module, name)
        if callable(f) and not isinstance(f, type):
            setattr(module, name, device_aware(f, resident.get(name), name in host_results))
