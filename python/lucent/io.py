"""Files through lucent's own readers and writers (the Rust ``lucent::io``), chosen by
extension: ``.npy`` (any numeric dtype in), ``.tif``/``.tiff`` (a multi-page file is a 3D stack,
pages along the first axis), ``.png`` (grayscale), and Zarr arrays or OME-Zarr images (a path
with a component ending in ``.zarr``: ``store.zarr`` is the store's image, its finest level, or
``store.zarr/0`` one array). Data comes back as float32, or complex64 for complex ``.npy``,
converted but never rescaled; writes go to a temporary file renamed over the target, so a
failed write leaves nothing half-written.

>>> import os, tempfile, numpy as np, lucent.io
>>> path = os.path.join(tempfile.mkdtemp(), "x.tif")
>>> lucent.io.write(path, np.arange(6, dtype="u2").reshape(2, 3))
>>> lucent.io.read(path)
array([[0., 1., 2.],
       [3., 4., 5.]], dtype=float32)
"""

from __future__ import annotations

import json
import os
from typing import Any, Optional, Sequence

import numpy as np

from . import _lucent

__all__ = ["read", "read_ome", "write"]


def read(path: "str | os.PathLike") -> np.ndarray:
    """The whole file as float32 (complex64 for complex ``.npy``), within the host memory budget
    (``LUCENT_HOST_BUDGET_BYTES``); an unreadable, truncated or unknown file is an OSError that
    names it."""
    return _lucent.read(os.fspath(path))


def read_ome(path: "str | os.PathLike") -> dict:
    """The physical metadata of the OME-Zarr image (or of the image holding the array) at
    ``path``: ``{"axes": names or None, "scale": list or None, "translate": list or None,
    "name": str or None}`` from its finest level's coordinate transformations.

    >>> import os, tempfile, numpy as np, lucent.io
    >>> path = os.path.join(tempfile.mkdtemp(), "x.zarr")
    >>> lucent.io.write(path, np.ones((2, 3), "f4"), scale=(0.5, 0.25), translate=(1, 0))
    >>> lucent.io.read_ome(path)
    {'axes': ['y', 'x'], 'scale': [0.5, 0.25], 'translate': [1.0, 0.0], 'name': None}
    """
    ome = json.loads(_lucent.read_ome(os.fspath(path)))
    transforms = {t.get("type"): t.get(t.get("type")) for t in ome["transforms"] or []}
    axes = ome["axes"]
    return {"axes": None if axes is None else [a.get("name") if isinstance(a, dict) else a for a in axes],
            "scale": transforms.get("scale"), "translate": transforms.get("translation"), "name": ome["name"]}


def write(path: "str | os.PathLike", data: Any, *, scale: Optional[Sequence[float]] = None,
          translate: Optional[Sequence[float]] = None, axes: Optional[Sequence[str]] = None,
          name: Optional[str] = None) -> None:
    """Writes ``data`` as lucent writes: float32 (``.npy``, ``.tif`` of 2 or 3 axes, OME-Zarr
    0.5), complex64 (``.npy`` only), or an 8-bit ``.png`` preview of a 2D array scaled min..max.
    ``scale``, ``translate`` (one value per axis), ``axes`` (names) and ``name`` are an
    OME-Zarr image's metadata: only a ``.zarr`` output holds them."""
    a = np.asarray(data)
    a = np.ascontiguousarray(a, np.complex64 if np.iscomplexobj(a) else np.float32)
    target = os.fspath(path)
    meta = {"scale": scale, "translate": translate, "axes": axes, "name": name}
    given = [k for k, v in meta.items() if v is not None]
    if not given:
        return _lucent.write(target, a)
    if not any(part.lower().endswith(".zarr") for part in os.path.normpath(target).split(os.sep)):
        raise ValueError(f"{target}: only a .zarr output holds {', '.join(given)}")
    for key in ("scale", "translate", "axes"):
        if meta[key] is not None and len(meta[key]) != a.ndim:
            raise ValueError(f"{key} has {len(meta[key])} values for an array of {a.ndim} axes")
    transforms = [{"type": "scale", "scale": [float(v) for v in (scale if scale is not None else [1.0] * a.ndim)]}]
    if translate is not None:
        transforms.append({"type": "translation", "translation": [float(v) for v in translate]})
    kinds = {"t": "time", "c": "channel"}
    ome = {"transforms": transforms, "name": name,
           "axes": None if axes is None else [{"name": str(n), "type": kinds.get(str(n), "space")} for n in axes]}
    _lucent.write(target, a, json.dumps(ome))
