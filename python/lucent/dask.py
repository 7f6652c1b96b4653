"""lucent on Dask arrays: each chunk computed by lucent with the halo the operation needs, so
a volume larger than one machine, or than one GPU, runs chunk by chunk on a cluster.

Each worker process opens its own lucent context (its GPU) on first use; :func:`assign_gpus`
gives every worker of a ``dask.distributed`` client its own adapter on multi-GPU hosts. Halos:
the filters' reach for :func:`gaussian_filter`, :func:`uniform_filter` and :func:`fftconvolve`
(so the chunked result equals the whole-array one to round-off; results in scipy's dtypes) and tiled
Richardson-Lucy's guard and blend widths for :func:`richardson_lucy` (the result within the tiled run's
tolerance of the whole-array one). At the array's own edges each operation applies its usual
boundary, as on the whole array.

>>> import dask.array as da, numpy as np, lucent.dask
>>> volume = da.from_array(np.random.rand(16, 64, 64).astype("f4"), chunks=(16, 32, 32))
>>> lucent.dask.gaussian_filter(volume, 2.0).compute().shape
(16, 64, 64)
"""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import numpy as np

import dask.array as da

from . import _lucent, ndimage, restoration, signal
from ._arrays import on_axes

__all__ = ["richardson_lucy", "gaussian_filter", "uniform_filter", "fftconvolve", "assign_gpus"]


def _edges(mode: str) -> str:
    """How the halos of chunks on the array's edges are filled: wrapped around for the periodic
    modes, else not at all (each chunk there applies ``mode`` itself, as the whole array would)."""
    return "periodic" if mode in ("wrap", "grid-wrap") else "none"


def _chunked(image: Any, depth: Sequence[int], block, boundary: str = "none", dtype: Any = np.float32) -> da.Array:
    """``block`` over the chunks with halos of ``depth``; ``dtype`` its results' (scipy's rules:
    the input's for the ndimage filters)."""
    x = da.asarray(image)
    return x.map_overlap(block, depth=dict(enumerate(int(d) for d in depth)), boundary=boundary, dtype=dtype,
                         meta=np.empty((0,) * x.ndim, dtype))


def richardson_lucy(image: Any, psf: Any, num_iter: int = 50, clip: bool = True, filter_epsilon: Optional[float] = None,
                    *, halo: Optional[Sequence[int]] = None, **options: Any) -> da.Array:
    """:func:`lucent.restoration.richardson_lucy` chunk by chunk, each chunk with a halo around
    it, options as the one-call function's. With ``boundary="periodic"`` the halos wrap around
    the array.

    ``halo`` (per PSF axis) defaults to what tiled Richardson-Lucy discards around a tile, its
    guard band plus its blend width: m + r · iterations^(1/4) for a PSF of m elements and radius
    r (never more than the exact reach, iterations × (m - 1)). The result is within tiled RL's
    tolerance of whole-array RL (1e-3, tests/test_dask.py). Chunks much larger than the halo
    keep its cost small.

    >>> import dask.array as da, numpy as np, lucent.dask
    >>> image = da.from_array(np.random.rand(48, 40).astype("f4"), chunks=24)
    >>> lucent.dask.richardson_lucy(image, np.ones((5, 5), "f4") / 25, 10).compute().shape
    (48, 40)
    """
    x = da.asarray(image)
    h = np.ascontiguousarray(psf, dtype=np.float32)
    lead = x.ndim - h.ndim
    if lead < 0:
        raise ValueError(f"a PSF of {h.ndim} axes for an image of {x.ndim}")
    if halo is None:
        halo = [_lucent.rl_halo(m, int(num_iter)) for m in h.shape]
    elif len(halo) != h.ndim:
        raise ValueError(f"halo has {len(halo)} values for a PSF of {h.ndim} axes")
    depth = [0] * lead + [int(g) for g in halo]
    periodic = options.get("boundary") == "periodic"
    if periodic:
        options = {**options, "boundary": "zero"}  # the halo carries the wrap-around

    def block(chunk: np.ndarray) -> np.ndarray:
        return restoration.richardson_lucy(chunk, h, num_iter, clip, filter_epsilon, **options)

    return _chunked(x, depth, block, "periodic" if periodic else "none")


def gaussian_filter(input: Any, sigma: Any, mode: str = "reflect", cval: float = 0.0, truncate: float = 4.0, *,
                    axes: Optional[Sequence[int]] = None) -> da.Array:
    """:func:`lucent.ndimage.gaussian_filter` chunk by chunk, halos of the kernel's radius.

    >>> import dask.array as da, numpy as np, lucent.dask
    >>> lucent.dask.gaussian_filter(da.ones((40, 40), chunks=20, dtype="f4"), 1.5).sum().compute().round()
    np.float32(1600.0)
    """
    x = da.asarray(input)
    sigmas = [float(s) for s in on_axes(sigma, axes, x.ndim, "sigma", 0.0)]
    depth = [_lucent.filter_halo(sigma=s) for s in sigmas]
    return _chunked(x, depth, lambda c: ndimage.gaussian_filter(c, sigmas, mode=mode, cval=cval, truncate=truncate), _edges(mode),
                    x.dtype)


def uniform_filter(input: Any, size: Any = 3, mode: str = "reflect", cval: float = 0.0, *,
                   axes: Optional[Sequence[int]] = None) -> da.Array:
    """:func:`lucent.ndimage.uniform_filter` chunk by chunk, halos of half the box.

    >>> import dask.array as da, lucent.dask
    >>> lucent.dask.uniform_filter(da.ones((30, 30), chunks=10, dtype="f4"), 5).mean().compute().round(4)
    np.float32(1.0)
    """
    x = da.asarray(input)
    sizes = [int(s) for s in on_axes(size, axes, x.ndim, "size", 1)]
    return _chunked(x, [_lucent.filter_halo(size=s) for s in sizes], lambda c: ndimage.uniform_filter(c, sizes, mode=mode, cval=cval), _edges(mode),
                    x.dtype)


def fftconvolve(in1: Any, in2: Any, mode: str = "same") -> da.Array:
    """:func:`lucent.signal.fftconvolve` of a Dask array with a kernel in memory, chunk by chunk
    (mode "same": the output has the input's chunks).

    >>> import dask.array as da, numpy as np, lucent.dask
    >>> lucent.dask.fftconvolve(da.ones((32, 32), chunks=16, dtype="f4"), np.ones((3, 3), "f4")).compute()[0, :3].round(4)
    array([4., 6., 6.], dtype=float32)
    """
    if mode != "same":
        raise NotImplementedError("lucent.dask.fftconvolve computes mode 'same' (the output chunked as the input)")
    kernel = np.ascontiguousarray(in2, dtype=np.float32)
    x = da.asarray(in1)
    if kernel.ndim != x.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    dtype = np.result_type(signal._transform_dtype(np.empty(0, x.dtype)), np.float32)
    return _chunked(x, [m // 2 for m in kernel.shape], lambda c: signal.fftconvolve(c, kernel, "same"), "none", dtype)


def assign_gpus(client: Any, adapters: Optional[Sequence[str]] = None) -> dict[str, str]:
    """Gives each worker of a ``dask.distributed`` client its own lucent context: worker i (in
    address order) takes ``adapters[i % len(adapters)]`` (default: the indices of the adapters
    the first worker sees). Returns {worker address: adapter}.

    >>> # client = distributed.Client(cluster); lucent.dask.assign_gpus(client)
    """
    workers = sorted(client.scheduler_info()["workers"])
    if adapters is None:
        listed = client.run(lambda: len(__import__("lucent").adapters()), workers=workers[:1])
        adapters = [str(i) for i in range(max(1, next(iter(listed.values()))))]
    chosen = {w: str(adapters[i % len(adapters)]) for i, w in enumerate(workers)}
    for w, adapter in chosen.items():
        client.run(_use_adapter, adapter, workers=[w])
    return chosen


def _use_adapter(adapter: str) -> str:
    import lucent

    lucent.set_context(lucent.Context(adapter=adapter))
    return lucent.context().info()["adapter"]["name"]
