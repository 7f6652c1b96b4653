"""The reader and writer contributions: lucent.io (lucent's own readers) behind napari's
reader and writer hooks. An OME-Zarr image's scale and translate become the layer's, and a
layer written to ``.zarr`` keeps its own."""

from __future__ import annotations

import os
from typing import Any, Callable, Optional

import numpy as np

from .. import io

_EXTENSIONS = (".npy", ".tif", ".tiff", ".zarr")


def _is_zarr(path: str) -> bool:
    return any(part.lower().endswith(".zarr") for part in os.path.normpath(path).split(os.sep))


def get_reader(path: Any) -> Optional[Callable]:
    """The reader for a ``.npy``, ``.tif``/``.tiff`` or ``.zarr`` path (one path, or a list of
    them, each read as its own layer), else None so that napari asks another plugin."""
    paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    if not paths or not all(_is_zarr(os.fspath(p)) or os.fspath(p).lower().endswith(_EXTENSIONS) for p in paths):
        return None
    return read_layers


def read_layers(path: Any) -> list:
    """Layer data tuples, one image layer per path; complex data comes as its magnitude (napari
    shows real images), named so."""
    paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    layers = []
    for p in map(os.fspath, paths):
        data = io.read(p)
        name = os.path.basename(os.path.normpath(p))
        meta: dict = {"name": name}
        if np.iscomplexobj(data):
            data, meta["name"] = np.abs(data), f"|{name}|"
        if _is_zarr(p):
            ome = io.read_ome(p)
            meta.update({k: ome[k] for k in ("scale", "translate") if ome[k] is not None})
            if ome["axes"] is not None:
                meta["axis_labels"] = ome["axes"]
            if ome["name"]:
                meta["name"] = ome["name"]
        layers.append((data, meta, "image"))
    return layers


def write_image(path: str, data: Any, meta: dict) -> list:
    """Writes one image layer by lucent.io; a ``.zarr`` output keeps the layer's scale and
    translate as OME-Zarr coordinate transformations, other formats hold the values only."""
    if _is_zarr(path):
        io.write(path, data, scale=meta.get("scale"), translate=meta.get("translate"), name=meta.get("name"))
    else:
        io.write(path, data)
    return [path]
