"""Tomography on the GPU. :func:`radon`, :func:`backproject`, :func:`fbp` and :func:`mlem`:
parallel beam in ASTRA's 2D geometry: sinograms [angle][detector], angles in radians, the
rotation centre at the detector's middle unless given, stacks of slices batched along a leading
axis (:mod:`lucent.transform` has scikit-image's conventions).

Every ASTRA geometry (fan and cone beam, 3D parallel beam, their ``_vec`` forms, the cylindrical
detector ``cyl_cone_vec``; a 2D geometry with a 3D volume is a stack of 2D problems):
:func:`create_proj_geom` and :func:`create_vol_geom` make ASTRA's dicts (an ASTRA script's own
dicts work too), :func:`forward_project`, :func:`back_project`, :func:`fdk`, :func:`sirt`,
:func:`cgls`, :func:`em`, :func:`sart`, :func:`osem` and :func:`fista` (FISTA-TV) take them,
with data in ASTRA's layout: projections (rows, angles, cols) in 3D, (angles, cols) in 2D;
volumes (slices, rows, cols) or (rows, cols). Volumes and projections beyond one GPU buffer go
in slabs and chunks of views.

>>> import numpy as np, lucent
>>> angles = np.linspace(0, np.pi, 90, endpoint=False)
>>> image = np.zeros((64, 64), "f4"); image[20:40, 25:35] = 1
>>> sinogram = lucent.tomography.radon(image, angles)
>>> sinogram.shape
(90, 64)
"""

from __future__ import annotations

from typing import Any, Literal, Optional

import numpy as np

from . import _lucent
from ._arrays import count, real
from ._context import Context, resolve

Method = Literal["auto", "logpolar", "direct"]
Filter = Literal["ramp", "shepp-logan", "cosine", "hamming", "hann"]

__all__ = ["radon", "backproject", "fbp", "mlem", "create_proj_geom", "create_vol_geom", "forward_project", "back_project",
           "fdk", "sirt", "cgls", "em", "sart", "osem", "fista", "find_offset", "reconstruct", "normalize", "minus_log",
           "remove_outlier", "remove_stripe_based_sorting", "remove_large_stripe", "remove_stripe_fw", "retrieve_phase",
           "find_center_vo"]

Projector = Literal["matched", "astra", "texture"]


def _rays(size: int, angles: Any, detectors: Optional[int], center: Optional[float], method: str) -> tuple:
    a = np.asarray(angles, dtype=np.float64).ravel().tolist()
    return (int(size), a, None if detectors is None else int(detectors), None if center is None else float(center), method)


def _sinogram(sinogram: Any) -> np.ndarray:
    s = real(sinogram, "sinogram")
    if s.ndim not in (2, 3):
        raise ValueError(f"a sinogram has 2 axes (angles, detectors), or 3 for a stack, not {s.ndim}")
    return s


def radon(image: Any, angles: Any, detectors: Optional[int] = None, center: Optional[float] = None,
          method: Method = "auto", *, context: Optional[Context] = None) -> np.ndarray:
    """The forward projection (angles, detectors) of an N × N image, or of a stack (slices, N, N):
    line integrals in pixel units (strip model, or the log-polar method where it applies).

    >>> import numpy as np, lucent
    >>> float(lucent.tomography.radon(np.ones((9, 9), "f4"), [0.0])[0].sum())
    81.0
    """
    x = real(image, "image")
    if x.ndim not in (2, 3) or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"radon takes a square image or a stack of them, not shape {x.shape}")
    return _lucent.radon(resolve(context), x, _rays(x.shape[-1], angles, detectors, center, method))


def backproject(sinogram: Any, angles: Any, size: Optional[int] = None, center: Optional[float] = None,
                method: Method = "auto", *, context: Optional[Context] = None) -> np.ndarray:
    """The back-projection (the adjoint of :func:`radon`) onto a ``size`` × ``size`` image
    (default: the detector count).

    >>> import numpy as np, lucent
    >>> lucent.tomography.backproject(np.ones((4, 16), "f4"), np.arange(4) * np.pi / 4).shape
    (16, 16)
    """
    s = _sinogram(sinogram)
    n = s.shape[-1] if size is None else size
    return _lucent.backproject(resolve(context), s, _rays(n, angles, s.shape[-1], center, method))


def fbp(sinogram: Any, angles: Any, size: Optional[int] = None, center: Optional[float] = None, filter: Filter = "ramp",
        method: Method = "auto", *, context: Optional[Context] = None) -> np.ndarray:
    """Filtered back-projection (angles equally spaced over [0, pi)) with scikit-image's
    filters, onto a ``size`` × ``size`` image (default: the detector count).

    >>> import numpy as np, lucent
    >>> angles = np.linspace(0, np.pi, 120, endpoint=False)
    >>> image = np.zeros((48, 48), "f4"); image[16:32, 16:32] = 1
    >>> recon = lucent.tomography.fbp(lucent.tomography.radon(image, angles), angles)
    >>> bool(abs(recon[24, 24] - 1) < 0.1)
    True
    """
    s = _sinogram(sinogram)
    n = s.shape[-1] if size is None else size
    return _lucent.fbp(resolve(context), s, _rays(n, angles, s.shape[-1], center, method), filter)


def mlem(sinogram: Any, angles: Any, iterations: int = 50, size: Optional[int] = None, center: Optional[float] = None,
         method: Method = "auto", *, context: Optional[Context] = None) -> tuple[np.ndarray, list[float]]:
    """Maximum-likelihood expectation maximisation (the whole loop on the GPU): the
    reconstruction and the Kullback-Leibler divergence after each iteration.

    >>> import numpy as np, lucent
    >>> angles = np.linspace(0, np.pi, 60, endpoint=False)
    >>> image = np.zeros((32, 32), "f4"); image[10:20, 12:22] = 1
    >>> recon, kl = lucent.tomography.mlem(lucent.tomography.radon(image, angles), angles, 20)
    >>> kl[-1] < kl[0]
    True
    """
    s = _sinogram(sinogram)
    n = s.shape[-1] if size is None else size
    return _lucent.mlem(resolve(context), s, _rays(n, angles, s.shape[-1], center, method), count(iterations, "iterations"))


def create_vol_geom(*args: Any) -> dict:
    """ASTRA's ``create_vol_geom``: ``(rows, cols)``, ``(rows, cols, minx, maxx, miny, maxy)``,
    ``(rows, cols, slices)`` or ``(rows, cols, slices, minx, maxx, miny, maxy, minz, maxz)``
    (a single ``n`` is ``(n, n)``); the window defaults to voxels of 1 centred on the origin.

    >>> import numpy as np, lucent
    >>> lucent.tomography.create_vol_geom(4, 6)["option"]["WindowMaxX"]
    3.0
    """
    if len(args) == 1 and not np.isscalar(args[0]):
        args = tuple(args[0])
    if len(args) == 1:
        args = (args[0], args[0])
    counts = [int(a) for a in args[:3 if len(args) in (3, 9) else 2]]
    geom: dict = {"GridRowCount": counts[0], "GridColCount": counts[1]}
    if len(counts) == 3:
        geom["GridSliceCount"] = counts[2]
    window = [float(a) for a in args[len(counts):]]
    if len(window) not in (0, 2 * len(counts)):
        raise ValueError(f"create_vol_geom: {len(args)} arguments (2, 3, 6 or 9)")
    if not window:
        sides = [counts[1], counts[0]] + counts[2:]
        window = [v for n in sides for v in (-n / 2, n / 2)]
    names = ["X", "Y", "Z"][: len(counts)]
    geom["option"] = {f"Window{end}{axis}": window[2 * i + k] for i, axis in enumerate(names) for k, end in enumerate(("Min", "Max"))}
    return geom


def create_proj_geom(type: str, *args: Any) -> dict:
    """ASTRA's ``create_proj_geom``: ``('parallel', width, count, angles)``,
    ``('parallel_vec', count, V)``, ``('fanflat', width, count, angles, source_origin,
    origin_detector)``, ``('fanflat_vec', count, V)``, ``('parallel3d', spacing_x, spacing_y,
    rows, cols, angles)``, ``('parallel3d_vec', rows, cols, V)``, ``('cone', spacing_x,
    spacing_y, rows, cols, angles, source_origin, origin_detector)``, ``('cone_vec', rows, cols,
    V)``, ``('cyl_cone_vec', rows, cols, V)`` (ASTRA 2.4's cylindrical detector: V's 13th number
    the radius; the source on the axis is medical CT's equiangular fan); angles in radians, V
    one row of 6 (2D), 12 or 13 (3D) numbers per projection. A 2D geometry with a 3D volume
    geometry is a stack of 2D problems, one per slice.

    >>> import numpy as np, lucent
    >>> g = lucent.tomography.create_proj_geom("fanflat", 1.0, 64, [0.0, 0.1], 100, 50)
    >>> g["DistanceOriginSource"]
    100.0
    """
    fields = {
        "parallel": ["DetectorWidth", "DetectorCount", "ProjectionAngles"],
        "parallel_vec": ["DetectorCount", "Vectors"],
        "fanflat": ["DetectorWidth", "DetectorCount", "ProjectionAngles", "DistanceOriginSource", "DistanceOriginDetector"],
        "fanflat_vec": ["DetectorCount", "Vectors"],
        "parallel3d": ["DetectorSpacingX", "DetectorSpacingY", "DetectorRowCount", "DetectorColCount", "ProjectionAngles"],
        "parallel3d_vec": ["DetectorRowCount", "DetectorColCount", "Vectors"],
        "cone": ["DetectorSpacingX", "DetectorSpacingY", "DetectorRowCount", "DetectorColCount", "ProjectionAngles",
                 "DistanceOriginSource", "DistanceOriginDetector"],
        "cone_vec": ["DetectorRowCount", "DetectorColCount", "Vectors"],
        "cyl_cone_vec": ["DetectorRowCount", "DetectorColCount", "Vectors"],
    }
    if type not in fields:
        raise ValueError(f"projection geometry type {type!r} (one of {', '.join(fields)})")
    if len(args) != len(fields[type]):
        raise ValueError(f"create_proj_geom({type!r}, ...) takes {len(fields[type])} arguments: {', '.join(fields[type])}")
    geom: dict = {"type": type}
    for name, value in zip(fields[type], args):
        if name in ("ProjectionAngles", "Vectors"):
            geom[name] = np.asarray(value, dtype=np.float64)
        elif name.endswith("Count"):
            geom[name] = int(value)
        else:
            geom[name] = float(value)
    return geom


def _json(geom: Any) -> str:
    """An ASTRA geometry dict as JSON (numpy arrays and scalars as lists and numbers)."""
    import json

    def plain(v: Any) -> Any:
        if isinstance(v, dict):
            return {str(k): plain(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if isinstance(v, np.ndarray):
            return v.astype(np.float64).tolist()
        if isinstance(v, np.generic):
            return v.item()
        return v

    if not isinstance(geom, dict):
        raise TypeError(f"a geometry is an ASTRA dict, not {type(geom).__name__}")
    return json.dumps(plain(geom))


def forward_project(volume: Any, proj_geom: dict, vol_geom: dict, *, context: Optional[Context] = None) -> np.ndarray:
    """The projections of a volume (slices, rows, cols) or image (rows, cols) in any ASTRA
    geometry (as ``astra.create_sino3d_gpu``'s data): Joseph's ray-driven projector, line
    integrals in the volume window's units.

    >>> import numpy as np, lucent
    >>> v = lucent.tomography.create_vol_geom(16, 16, 16)
    >>> g = lucent.tomography.create_proj_geom("parallel3d", 1.0, 1.0, 16, 24, [0.0])
    >>> p = lucent.tomography.forward_project(np.ones((16, 16, 16), "f4"), g, v)
    >>> p.shape, float(p[8, 0, 12])
    ((16, 1, 24), 16.0)
    """
    return _lucent.forward_project(resolve(context), real(volume, "volume"), _json(proj_geom), _json(vol_geom))


def back_project(data: Any, proj_geom: dict, vol_geom: dict, projector: Projector = "matched", *,
                 context: Optional[Context] = None) -> np.ndarray:
    """The back-projection of projections in any ASTRA geometry: ``"matched"``, the exact
    adjoint of :func:`forward_project`, or ``"astra"``, voxel-driven as ASTRA's CUDA
    back-projector (faster, adjoint approximately), or ``"texture"``, that one through the
    texture unit as ASTRA samples (one linear fetch per voxel and view; 8-bit interpolation
    weights on NVIDIA). The solvers take the same names (``"texture"`` projects through the
    texture unit too)."""
    return _lucent.back_project(resolve(context), real(data, "projections"), _json(proj_geom), _json(vol_geom), projector)


def fdk(data: Any, proj_geom: dict, vol_geom: dict, filter: Filter = "ramp", *, context: Optional[Context] = None) -> np.ndarray:
    """FDK of circular cone-beam projections (``cone``) or fan-beam FBP (``fanflat``), with
    Parker's weights when the scan is short of a full turn (ASTRA's ``FDK_CUDA``/``FBP_CUDA``);
    plain FBP for ``parallel`` and ``parallel3d`` views over a half or a full turn.

    >>> import numpy as np, lucent
    >>> v = lucent.tomography.create_vol_geom(32, 32, 32)
    >>> g = lucent.tomography.create_proj_geom("cone", 1.5, 1.5, 40, 48, np.linspace(0, 2 * np.pi, 90, endpoint=False), 100, 50)
    >>> volume, p = lucent.phantom.shepp_logan_3d(v, g)
    >>> x = lucent.tomography.fdk(p, g, v)
    >>> bool(abs(float(x[16, 16, 16]) - float(volume[16, 16, 16])) < 0.05)
    True
    """
    return _lucent.fdk(resolve(context), real(data, "projections"), _json(proj_geom), _json(vol_geom), filter)


def _iterate(algorithm: str, data: Any, proj_geom: dict, vol_geom: dict, iterations: int, projector: str,
             min_constraint: Optional[float] = None, max_constraint: Optional[float] = None, relaxation: float = 1.0,
             reconstruction_mask: Any = None, sinogram_mask: Any = None, initial: Any = None,
             context: Optional[Context] = None, subset_size: int = 20, tv_weight: float = 0.0,
             tv_iterations: int = 20) -> tuple[np.ndarray, list[float]]:
    masks = [None if m is None else real(m, name) for m, name in ((reconstruction_mask, "reconstruction mask"),
                                                                  (sinogram_mask, "sinogram mask"), (initial, "initial"))]
    return _lucent.iterative(resolve(context), algorithm, real(data, "projections"), _json(proj_geom), _json(vol_geom),
                             count(iterations, "iterations"), projector, min_constraint, max_constraint, float(relaxation), *masks,
                             count(subset_size, "subset_size"), float(tv_weight), count(tv_iterations, "tv_iterations"))


def sirt(data: Any, proj_geom: dict, vol_geom: dict, iterations: int = 100, *, min_constraint: Optional[float] = None,
         max_constraint: Optional[float] = None, relaxation: float = 1.0, reconstruction_mask: Any = None,
         sinogram_mask: Any = None, initial: Any = None, projector: Projector = "matched",
         context: Optional[Context] = None) -> tuple[np.ndarray, list[float]]:
    """SIRT (ASTRA's ``SIRT3D_CUDA``/``SIRT_CUDA`` with its options ``MinConstraint``,
    ``MaxConstraint``, ``Relaxation``, masks, a start): the volume and the residual norm
    ‖b − A x‖ of each iterate before its update.

    >>> import numpy as np, lucent
    >>> v = lucent.tomography.create_vol_geom(24, 24)
    >>> g = lucent.tomography.create_proj_geom("fanflat", 1.5, 40, np.linspace(0, 2 * np.pi, 60, endpoint=False), 80, 40)
    >>> x, residuals = lucent.tomography.sirt(lucent.tomography.forward_project(np.ones((24, 24), "f4"), g, v), g, v, 50)
    >>> residuals[-1] < 0.05 * residuals[0]
    True
    """
    return _iterate("sirt", data, proj_geom, vol_geom, iterations, projector, min_constraint, max_constraint, relaxation,
                    reconstruction_mask, sinogram_mask, initial, context)


def cgls(data: Any, proj_geom: dict, vol_geom: dict, iterations: int = 30, *, reconstruction_mask: Any = None,
         sinogram_mask: Any = None, initial: Any = None, projector: Projector = "matched",
         context: Optional[Context] = None) -> tuple[np.ndarray, list[float]]:
    """CGLS (ASTRA's ``CGLS3D_CUDA``/``CGLS_CUDA``): the volume and the residual norm of each
    iterate before its update."""
    return _iterate("cgls", data, proj_geom, vol_geom, iterations, projector, reconstruction_mask=reconstruction_mask,
                    sinogram_mask=sinogram_mask, initial=initial, context=context)


def em(data: Any, proj_geom: dict, vol_geom: dict, iterations: int = 50, *, initial: Any = None,
       projector: Projector = "matched", context: Optional[Context] = None) -> tuple[np.ndarray, list[float]]:
    """MLEM (ASTRA's ``EM_CUDA``) from a constant 1 on counts ≥ 0 in any ASTRA geometry: the
    volume and the residual norm of each iterate before its update."""
    return _iterate("em", data, proj_geom, vol_geom, iterations, projector, initial=initial, context=context)


def sart(data: Any, proj_geom: dict, vol_geom: dict, iterations: int = 10, *, subset_size: int = 20,
         min_constraint: Optional[float] = None, max_constraint: Optional[float] = None, relaxation: float = 1.0,
         reconstruction_mask: Any = None, sinogram_mask: Any = None, initial: Any = None,
         projector: Projector = "matched", context: Optional[Context] = None) -> tuple[np.ndarray, list[float]]:
    """OS-SART (TIGRE's ``OS_SART``, its ``blocksize`` as ``subset_size``): each iteration
    sweeps subsets of ``subset_size`` views (subset k: views k, k + S, ...), updating the volume
    after each as SIRT does with that subset; ``subset_size=1`` is ASTRA's SART. The volume and
    the residual norm of each sweep.

    >>> import numpy as np, lucent
    >>> v = lucent.tomography.create_vol_geom(24, 24)
    >>> g = lucent.tomography.create_proj_geom("fanflat", 1.5, 40, np.linspace(0, 2 * np.pi, 60, endpoint=False), 80, 40)
    >>> x, residuals = lucent.tomography.sart(lucent.tomography.forward_project(np.ones((24, 24), "f4"), g, v), g, v, 5)
    >>> residuals[-1] < 0.05 * residuals[0]
    True
    """
    return _iterate("sart", data, proj_geom, vol_geom, iterations, projector, min_constraint, max_constraint, relaxation,
                    reconstruction_mask, sinogram_mask, initial, context, subset_size)


def osem(data: Any, proj_geom: dict, vol_geom: dict, iterations: int = 10, *, subset_size: int = 20,
         initial: Any = None, projector: Projector = "matched",
         context: Optional[Context] = None) -> tuple[np.ndarray, list[float]]:
    """OSEM (ordered-subsets MLEM, Hudson and Larkin 1994) on counts ≥ 0: each iteration sweeps
    subsets of ``subset_size`` views dealt as :func:`sart` deals them, with MLEM's update per
    subset, from a constant 1 (``subset_size`` of all the views is :func:`em`). The volume and the
    residual norm of each sweep."""
    return _iterate("osem", data, proj_geom, vol_geom, iterations, projector, initial=initial, context=context,
                    subset_size=subset_size)


def fista(data: Any, proj_geom: dict, vol_geom: dict, iterations: int = 50, *, tv_weight: float,
          tv_iterations: int = 20, min_constraint: Optional[float] = None, max_constraint: Optional[float] = None,
          sinogram_mask: Any = None, initial: Any = None, projector: Projector = "matched",
          context: Optional[Context] = None) -> tuple[np.ndarray, list[float]]:
    """FISTA-TV (TIGRE's ``FISTA``): the minimiser of ½‖Ax − b‖² + ``tv_weight`` · TV(x), each
    proximal step ``tv_iterations`` of Chambolle's algorithm (TIGRE's ``tviter``; scikit-image's
    ``denoise_tv_chambolle`` with the weight ``tv_weight / L``), the step 1/L from the power
    method (TIGRE's ``hyper``, found here), bounds applied after each step. ``tv_weight=0`` is
    plain FISTA. The volume and the residual norm of each extrapolated iterate.

    >>> import numpy as np, lucent
    >>> v = lucent.tomography.create_vol_geom(24, 24)
    >>> g = lucent.tomography.create_proj_geom("fanflat", 1.5, 40, np.linspace(0, 2 * np.pi, 60, endpoint=False), 80, 40)
    >>> x, residuals = lucent.tomography.fista(lucent.tomography.forward_project(np.ones((24, 24), "f4"), g, v), g, v, 30, tv_weight=0.1)
    >>> residuals[-1] < 0.05 * residuals[0]
    True
    """
    return _iterate("fista", data, proj_geom, vol_geom, iterations, projector, min_constraint, max_constraint,
                    sinogram_mask=sinogram_mask, initial=initial, context=context, tv_weight=tv_weight,
                    tv_iterations=tv_iterations)


def find_offset(data: Any, proj_geom: dict, radius: float = 16.0, *,
                context: Optional[Context] = None) -> tuple[float, list[tuple[float, float]]]:
    """The detector's offset (columns along its rows; the rotation axis's projection off the
    detector's middle) of circular fan- (``fanflat``) or cone-beam (``cone``) projections, as
    :func:`lucent.tomography`'s parallel ``find-center``: the offset whose fan-beam FBP of the
    mid-plane has the least entropy, within ``radius`` columns; and each tried offset's entropy.
    Reconstruct with the detector moved by it (``cone_vec``: detector centre + offset × u)."""
    return _lucent.find_offset(resolve(context), real(data, "projections"), _json(proj_geom), float(radius))


def _counts(x: Any, name: str) -> Optional[np.ndarray]:
    """Detector values as lucent takes them: uint16 as they are, anything else as float32."""
    if x is None:
        return None
    a = np.asarray(x)
    if a.ndim != 3:
        raise ValueError(f"{name} has 3 axes (count, rows, columns), not {a.ndim}")
    return np.ascontiguousarray(a) if a.dtype == np.uint16 else real(a, name)


def reconstruct(data: Any, flat: Any = None, dark: Any = None, theta: Any = None, *, output: Optional[str] = None,
                center: Optional[float] = None, stripe: Literal["none", "sorting", "large", "fw"] = "none", stripe_size: int = 21,
                stripe_dim: int = 1, outliers: Optional[float] = None, outlier_size: int = 3,
                cutoff: Optional[float] = None, paganin: Optional[dict] = None, filter: Filter = "ramp",
                method: Literal["auto", "logpolar", "gridrec", "direct"] = "auto",
                dtype: Literal["float32", "float16"] = "float32",
                context: Optional[Context] = None) -> tuple[Optional[np.ndarray], dict]:
    """The beamline pipeline, as TomoPy users run it, on the GPU: raw projections to a volume,
    every slice. Outliers replaced (``tomopy.misc.corr.remove_outlier(data, outliers,
    outlier_size)``), flat and dark normalisation (``tomopy.normalize``, ``cutoff``), phase
    retrieval (``paganin``: a dict of ``tomopy.prep.phase.retrieve_phase``'s ``pixel_size`` and
    ``dist`` in cm, ``energy`` in keV, ``alpha``), −log floored at 1e-6, ring removal
    (``stripe="sorting"``: ``tomopy.prep.stripe.remove_stripe_based_sorting(size=stripe_size,
    dim=stripe_dim)``), the rotation centre (``None``: ``tomopy.find_center_vo`` on the middle
    row), then FBP of each row's sinogram (``method``: "auto" the log-polar method where it
    applies, "gridrec" gridding as ``tomopy.recon(algorithm="gridrec")``, "direct"). ``stripe``
    "large" is ``remove_large_stripe(snr=3, size=stripe_size)``, "fw" ``remove_stripe_fw``.
    ``dtype="float16"`` (tomocupy's ``--dtype float16``) writes the volume in half precision:
    half the bytes (to .npy or .tif; |values| up to 65504, else an error).

    ``data`` is an array (angles, rows, columns) of counts (uint16 is sent as it is, half the
    bytes) with ``flat`` and ``dark`` fields (count, rows, columns), or a path: a DXchange HDF5
    file (``/exchange/data``, ``data_white``, ``data_dark``, ``theta``) read band by band, or an
    array file. ``theta`` in radians (default: the file's theta, else equally spaced over
    [0, π)). The volume (rows, columns, columns) is returned, or streamed to ``output`` (.zarr,
    .npy, .tif) and None returned; with the run's report (the centre, bands, time per stage).

    >>> import numpy as np, lucent
    >>> angles = np.linspace(0, np.pi, 60, endpoint=False)
    >>> slab = np.zeros((2, 32, 32), "f4"); slab[:, 10:20, 12:22] = 0.05
    >>> p = lucent.tomography.radon(slab, angles)                 # (rows, angles, cols)
    >>> counts = (1000 * np.exp(-p.transpose(1, 0, 2))).astype(np.uint16)
    >>> volume, report = lucent.tomography.reconstruct(counts, np.full((1, 2, 32), 1000, np.uint16), np.zeros((1, 2, 32), np.uint16), center=15.5)
    >>> volume.shape, report["center"]
    ((2, 32, 32), 15.5)
    """
    import json
    path = None
    if isinstance(data, (str, bytes)) or hasattr(data, "__fspath__"):
        path, data = str(data), None
    arrays = (_counts(data, "data"), _counts(flat, "flat"), _counts(dark, "dark"))
    angles = None if theta is None else np.asarray(theta, dtype=np.float64).ravel().tolist()
    phase = None
    if paganin is not None:
        unknown = set(paganin) - {"pixel_size", "dist", "energy", "alpha"}
        if unknown:
            raise ValueError(f"paganin takes pixel_size, dist, energy and alpha (retrieve_phase's names), not {sorted(unknown)}")
        phase = (float(paganin.get("pixel_size", 1e-4)), float(paganin.get("dist", 50.0)), float(paganin.get("energy", 20.0)),
                 float(paganin.get("alpha", 1e-3)))
    volume, report = _lucent.reconstruct(resolve(context), path, *arrays, angles, None if output is None else str(output),
                                         None if center is None else float(center), stripe, count(stripe_size, "stripe_size"),
                                         count(stripe_dim, "stripe_dim"), None if outliers is None else float(outliers),
                                         count(outlier_size, "outlier_size"), None if cutoff is None else float(cutoff), phase, filter,
                                         method, dtype)
    if volume is not None and dtype == "float16":
        if np.any(np.abs(volume) >= 65520):  # rounds past float16's largest, 65504
            raise ValueError("the volume exceeds half precision (±65504): use float32, or scale the input down")
        volume = volume.astype(np.float16)
    return volume, json.loads(report)


# TomoPy's preprocessing one step at a time, its names and layout: projections ``tomo``
# (angles, rows, columns), a sinogram being ``tomo[:, row, :]``; float32 results.

def _tomo(x: Any, name: str = "tomo") -> np.ndarray:
    a = real(x, name)
    if a.ndim != 3:
        raise ValueError(f"{name} has 3 axes (angles, rows, columns), not {a.ndim}")
    return a


def normalize(arr: Any, flat: Any, dark: Any, cutoff: Optional[float] = None, *, context: Optional[Context] = None) -> np.ndarray:
    """``tomopy.normalize``: (arr − dark) / max(flat − dark, 1e-6) with the flat and dark
    fields' means, clipped above ``cutoff``."""
    return _lucent.normalize(resolve(context), _tomo(arr, "arr"), _tomo(flat, "flat"), _tomo(dark, "dark"),
                             None if cutoff is None else float(cutoff), None)


def minus_log(arr: Any, *, floor: float = 1e-6, context: Optional[Context] = None) -> np.ndarray:
    """``tomopy.minus_log``, −ln, of values floored at ``floor`` (TomoPy's gives inf and NaN
    for zeros and negatives): normalisation with flats of 1 and darks of 0."""
    a = _tomo(arr, "arr")
    ones, zeros = np.ones((1,) + a.shape[1:], "f4"), np.zeros((1,) + a.shape[1:], "f4")
    return _lucent.normalize(resolve(context), a, ones, zeros, None, float(floor))


def remove_outlier(arr: Any, dif: float, size: int = 3, axis: int = 0, *, context: Optional[Context] = None) -> np.ndarray:
    """``tomopy.misc.corr.remove_outlier``: a value ``dif`` or more above the median of its
    size × size neighbourhood within its image (``axis`` 0: each ``arr[i]``) becomes it."""
    if axis != 0:
        raise ValueError(f"axis {axis}: lucent filters each image arr[i] (axis 0)")
    return _lucent.remove_outlier(resolve(context), _tomo(arr, "arr"), float(dif), count(size, "size"))


def remove_stripe_based_sorting(tomo: Any, size: Optional[int] = None, dim: int = 1, *, context: Optional[Context] = None) -> np.ndarray:
    """``tomopy.prep.stripe.remove_stripe_based_sorting`` (Vo et al. 2018): each sinogram's
    columns sorted along the angles, median filtered (``dim`` 1 along the detector, 2 in 2D),
    put back; ``size`` None is TomoPy's default for the column count."""
    return _lucent.remove_stripe_based_sorting(resolve(context), _tomo(tomo), None if size is None else count(size, "size"), count(dim, "dim"))


def remove_large_stripe(tomo: Any, snr: float = 3, size: int = 51, drop_ratio: float = 0.1, norm: bool = True, *,
                        context: Optional[Context] = None) -> np.ndarray:
    """``tomopy.prep.stripe.remove_large_stripe`` (Vo et al. 2018)."""
    return _lucent.remove_large_stripe(resolve(context), _tomo(tomo), float(snr), count(size, "size"), float(drop_ratio), bool(norm))


def remove_stripe_fw(tomo: Any, level: Optional[int] = None, wname: str = "db5", sigma: float = 2, pad: bool = True, *,
                     context: Optional[Context] = None) -> np.ndarray:
    """``tomopy.prep.stripe.remove_stripe_fw`` (Münch et al. 2009): ``level`` levels of the
    2-D wavelet transform (None: ⌈log2⌉ of ``tomo``'s largest axis), each vertical detail
    damped along the angles by 1 − exp(−ŷ²/2σ²); the angles zero-padded by an eighth."""
    if wname != "db5":
        raise ValueError(f"wname {wname!r}: lucent has db5, TomoPy's default")
    return _lucent.remove_stripe_fw(resolve(context), _tomo(tomo), None if level is None else count(level, "level"), float(sigma), bool(pad))


def retrieve_phase(tomo: Any, pixel_size: float = 1e-4, dist: float = 50, energy: float = 20, alpha: float = 1e-3,
                   pad: bool = True, *, context: Optional[Context] = None) -> np.ndarray:
    """``tomopy.prep.phase.retrieve_phase`` (Paganin et al. 2002) of projections of
    transmission: pixel size and distance in cm, energy in keV."""
    return _lucent.retrieve_phase(resolve(context), _tomo(tomo), float(pixel_size), float(dist), float(energy), float(alpha), bool(pad))


def find_center_vo(tomo: Any, ind: Optional[int] = None, smin: float = -50, smax: float = 50, srad: float = 6,
                   step: float = 0.25, ratio: float = 0.5, drop: int = 20) -> float:
    """``tomopy.find_center_vo`` (Vo et al. 2014) on the sinogram ``tomo[:, ind, :]`` (``ind``
    None: the middle row; a 2-D ``tomo`` is the sinogram): TomoPy's search in f64 on the host."""
    a = np.asarray(tomo, dtype=np.float64)
    if a.ndim == 3:
        a = a[:, a.shape[1] // 2 if ind is None else int(ind), :]
    if a.ndim != 2:
        raise ValueError(f"tomo has 3 axes (angles, rows, columns) or 2 (a sinogram), not {a.ndim}")
    return _lucent.find_center_vo(np.ascontiguousarray(a), float(smin), float(smax), float(srad), float(step), float(ratio), count(drop, "drop"))
