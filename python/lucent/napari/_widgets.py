"""The widgets: deconvolve, denoise, register, tomography and resample, each a form with Run and
Cancel. The work runs on a worker thread (napari.qt.threading.create_worker) a step at a time,
with napari's progress bar; Cancel takes effect between steps: one step is one call of lucent
(deconvolve and tomography: per plane or time point of the layer's first axis where the
operation covers fewer axes than the layer has, else the whole layer; register: per plane of a
stack; denoise and resample: the whole layer). Bad input is a one-line notification, never a traceback.
Results are new layers with the input's scale and translate, adjusted where the grid changes.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Optional

import napari
import numpy as np
from magicgui.types import Undefined
from magicgui.widgets import CheckBox, ComboBox, Container, FileEdit, FloatSpinBox, LineEdit, PushButton, SpinBox
from napari.layers import Image
from napari.qt.threading import create_worker
from napari.utils.notifications import show_error, show_info

from .. import denoise, io, ndimage, registration, restoration, tomography

# What a run yields after each step and returns at its end: layer data tuples.
Steps = Iterator[None]
Layers = list


def _pixels(layer: Optional[Image], what: str) -> np.ndarray:
    """A layer's data as a numpy array, or a one-line reason why not."""
    if layer is None:
        raise ValueError(f"choose the {what} layer")
    if layer.rgb:
        raise ValueError(f"{layer.name} is RGB: lucent takes one value per pixel")
    if layer.multiscale:
        raise ValueError(f"{layer.name} is multiscale: open its finest level as an image")
    return np.asarray(layer.data)


def _like(layer: Image, name: str, **kwargs: Any) -> dict:
    """A new layer's keywords: named after its input, on the input's grid."""
    return {"name": f"{layer.name} {name}", "scale": tuple(layer.scale), "translate": tuple(layer.translate), **kwargs}


def _per_plane(x: np.ndarray, ndim: int, call: Callable[[np.ndarray], np.ndarray]) -> Steps:
    """``call`` on each index of ``x``'s first axis when ``x`` has more than ``ndim`` axes (a step
    each), else on ``x`` (one step); returns the results stacked."""
    if x.ndim <= ndim:
        result = call(x)
        yield
        return result
    planes = []
    for plane in x:
        planes.append(call(plane))
        yield
    return np.stack(planes)


def _steps(x: np.ndarray, ndim: int) -> int:
    return x.shape[0] if x.ndim > ndim else 1


def _layers(viewer: Any, label: str, nullable: bool = False) -> ComboBox:
    """A choice of the viewer's image layers (kept current by _Operation as layers come and go)."""
    return ComboBox(label=label, nullable=nullable, value=None if nullable else Undefined,
                    choices=lambda _: [(layer.name, layer) for layer in viewer.layers if isinstance(layer, Image)])


class _Operation(Container):
    """A form, Run and Cancel. Subclasses give the fields and ``plan``: checked on the main
    thread (a ValueError or OSError is shown as a notification), it returns the number of steps
    and the generator that runs them on the worker thread and returns the new layers."""

    title = ""

    def __init__(self, viewer: "napari.viewer.Viewer", fields: list) -> None:
        self._viewer = viewer
        self._run = PushButton(text="Run")
        self._cancel = PushButton(text="Cancel", enabled=False)
        super().__init__(widgets=[*fields, self._run, self._cancel])
        self._run.changed.connect(self.run)
        self._cancel.changed.connect(self.cancel)
        self.worker: Any = None
        for event in (viewer.layers.events.inserted, viewer.layers.events.removed, viewer.layers.events.moved):
            event.connect(self.reset_choices)

    def plan(self) -> tuple[int, Callable[[], Steps]]:
        raise NotImplementedError

    def run(self, *_: Any) -> Any:
        """Starts the run and returns its worker (None when the input was refused or a run is
        already going)."""
        if self.worker is not None:
            return None
        try:
            total, steps = self.plan()
        except (ValueError, OSError) as e:
            show_error(f"lucent {self.title}: {e}")
            return None
        worker = create_worker(steps, _progress={"total": total, "desc": f"lucent {self.title}"}, _ignore_errors=True)
        worker.returned.connect(self._add)
        worker.errored.connect(lambda e: show_error(f"lucent {self.title}: {e}"))
        worker.aborted.connect(lambda: show_info(f"lucent {self.title}: cancelled, no layer added"))
        worker.finished.connect(self._finished)
        self.worker = worker
        self._run.enabled, self._cancel.enabled = False, True
        worker.start()
        return worker

    def cancel(self, *_: Any) -> None:
        """Asks the run to stop after its current step."""
        if self.worker is not None:
            self.worker.quit()

    def _add(self, layers: Layers) -> None:
        for data, kwargs in layers:
            self._viewer.add_image(data, **kwargs)

    def _finished(self) -> None:
        self.worker = None
        self._run.enabled, self._cancel.enabled = True, False


class Deconvolve(_Operation):
    """Richardson-Lucy deconvolution (lucent.restoration.richardson_lucy) by a PSF from a layer
    or a file (.npy, .tif, .zarr), normalised to sum 1 unless unticked. A PSF of fewer axes than
    the image deconvolves each plane of the first axis as one step; else the whole image is one
    step. The estimate is not clipped to [-1, 1] (scikit-image's ``clip``) unless ticked."""

    title = "deconvolve"

    def __init__(self, viewer: "napari.viewer.Viewer") -> None:
        self.image = _layers(viewer, "image")
        self.psf = _layers(viewer, "PSF layer", nullable=True)
        self.psf_file = FileEdit(label="or PSF file", mode="r", filter="*.npy *.tif *.tiff", value="")
        self.iterations = SpinBox(label="iterations", min=1, max=10000, value=30)
        self.boundary = ComboBox(label="boundary", choices=["zero", "periodic", "extended"], value="zero")
        self.tv = FloatSpinBox(label="TV lambda (0: none)", min=0.0, max=1.0, step=0.001, value=0.0)
        self.normalize_psf = CheckBox(label="normalise the PSF", value=True)
        self.clip = CheckBox(label="clip to [-1, 1]", value=False)
        super().__init__(viewer, [self.image, self.psf, self.psf_file, self.iterations, self.boundary, self.tv,
                                  self.normalize_psf, self.clip])

    def _psf(self) -> np.ndarray:
        if self.psf.value is not None:
            return _pixels(self.psf.value, "PSF")
        path = str(self.psf_file.value)
        if path in ("", "."):
            raise ValueError("choose a PSF layer or a PSF file")
        return io.read(path)

    def plan(self) -> tuple[int, Callable[[], Steps]]:
        layer = self.image.value
        x, psf = _pixels(layer, "image"), self._psf()
        if psf.ndim > x.ndim:
            raise ValueError(f"the PSF has {psf.ndim} axes, the image {x.ndim}: at most as many")
        options = {"num_iter": self.iterations.value, "boundary": self.boundary.value, "clip": self.clip.value,
                   "tv": self.tv.value or None, "normalize_psf": self.normalize_psf.value}

        def steps() -> Steps:
            result = yield from _per_plane(x, psf.ndim, lambda plane: restoration.richardson_lucy(plane, psf, **options))
            return [(result, _like(layer, "deconvolved"))]

        return _steps(x, psf.ndim), steps


class Denoise(_Operation):
    """Adaptive filtering (lucent.denoise.adaptive_filter) over the layer's last 2, 3 or 4 axes
    together (time included), leading axes a batch. One step: the filter's magnitude mapping is
    relative to the largest tensor norm over the whole layer, so a part alone would come out
    differently; Cancel only keeps the result from being added. ``sigma`` is that mapping's
    noise level (lucent's default 0.25)."""

    title = "denoise"

    def __init__(self, viewer: "napari.viewer.Viewer") -> None:
        self.image = _layers(viewer, "image")
        self.dims = ComboBox(label="axes together", choices=[2, 3, 4], value=3)
        self.sigma = FloatSpinBox(label="sigma", min=0.001, max=10.0, step=0.05, value=0.25)
        super().__init__(viewer, [self.image, self.dims, self.sigma])

    def plan(self) -> tuple[int, Callable[[], Steps]]:
        layer = self.image.value
        x, dims = _pixels(layer, "image"), self.dims.value
        if x.ndim < dims:
            raise ValueError(f"{layer.name} has {x.ndim} axes: denoise over at most {x.ndim}")
        sigma = self.sigma.value

        def steps() -> Steps:
            result = denoise.adaptive_filter(x, dims=dims, sigma=sigma)
            yield
            return [(result, _like(layer, "denoised"))]

        return 1, steps


class Register(_Operation):
    """Rigid translation by phase correlation (lucent.registration.phase_cross_correlation),
    applied with lucent.ndimage.shift: each plane of a stack onto its reference plane (a step
    per plane), or a moving layer onto a reference layer of the same shape (one step). The
    shifts (per plane, in the axes' order) are in the new layer's metadata["shifts"]."""

    title = "register"

    def __init__(self, viewer: "napari.viewer.Viewer") -> None:
        self.mode = ComboBox(label="mode", choices=["stack", "two layers"], value="stack")
        self.image = _layers(viewer, "stack / moving")
        self.reference = _layers(viewer, "reference layer")
        self.plane = SpinBox(label="reference plane", min=0, max=1_000_000, value=0)
        self.upsample = SpinBox(label="upsample factor", min=1, max=1000, value=10)
        self.order = ComboBox(label="spline order", choices=[0, 1, 3], value=3)
        super().__init__(viewer, [self.mode, self.image, self.reference, self.plane, self.upsample, self.order])

    def plan(self) -> tuple[int, Callable[[], Steps]]:
        layer, upsample, order = self.image.value, self.upsample.value, self.order.value
        x = _pixels(layer, "stack or moving")

        def onto(reference: np.ndarray, moving: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            shift = registration.phase_cross_correlation(reference, moving, upsample_factor=upsample)[0]
            return ndimage.shift(moving, shift, order=order), shift

        if self.mode.value == "stack":
            if x.ndim < 3:
                raise ValueError(f"{layer.name} has {x.ndim} axes: a stack has 3 or 4 (planes first)")
            if self.plane.value >= x.shape[0]:
                raise ValueError(f"reference plane {self.plane.value}: {layer.name} has {x.shape[0]} planes")
            reference = x[self.plane.value]

            def steps() -> Steps:
                planes, shifts = [], []
                for plane in x:
                    registered, shift = onto(reference, plane)
                    planes.append(registered)
                    shifts.append(shift)
                    yield
                return [(np.stack(planes), _like(layer, "registered", metadata={"shifts": np.array(shifts)}))]

            return x.shape[0], steps
        ref_layer = self.reference.value
        reference = _pixels(ref_layer, "reference")
        if reference.shape != x.shape:
            raise ValueError(f"the reference's shape {reference.shape} differs from the moving layer's {x.shape}")

        def steps_two() -> Steps:
            registered, shift = onto(reference, x)
            yield
            # On the reference's grid, named after the moving layer.
            kwargs = {**_like(ref_layer, "registered"), "name": f"{layer.name} registered", "metadata": {"shifts": shift[None]}}
            return [(registered, kwargs)]

        return 1, steps_two


class Tomography(_Operation):
    """Parallel-beam reconstruction of a sinogram layer [angle, detector] (or a stack of them,
    a step per slice) by filtered back-projection or MLEM (lucent.tomography.fbp, mlem), the
    angles equally spaced over 180° or 360°, onto a square image as wide as the detector. The
    image's pixel is the detector's (its scale along the last axis)."""

    title = "tomography"

    def __init__(self, viewer: "napari.viewer.Viewer") -> None:
        self.sinogram = _layers(viewer, "sinogram")
        self.span = ComboBox(label="angles over", choices=["180°", "360°"], value="180°")
        self.method = ComboBox(label="method", choices=["fbp", "mlem"], value="fbp")
        self.filter = ComboBox(label="FBP filter", choices=["ramp", "shepp-logan", "cosine", "hamming", "hann"], value="ramp")
        self.iterations = SpinBox(label="MLEM iterations", min=1, max=10000, value=50)
        super().__init__(viewer, [self.sinogram, self.span, self.method, self.filter, self.iterations])

    def plan(self) -> tuple[int, Callable[[], Steps]]:
        layer = self.sinogram.value
        s = _pixels(layer, "sinogram")
        if s.ndim not in (2, 3):
            raise ValueError(f"{layer.name} has {s.ndim} axes: a sinogram has 2 (angles, detectors), a stack 3")
        span = np.pi if self.span.value == "180°" else 2 * np.pi
        angles = np.linspace(0, span, s.shape[-2], endpoint=False)
        method, filter_, iterations = self.method.value, self.filter.value, self.iterations.value

        def one(sinogram: np.ndarray) -> np.ndarray:
            if method == "fbp":
                return tomography.fbp(sinogram, angles, filter=filter_)
            return tomography.mlem(sinogram, angles, iterations)[0]

        lead = s.ndim - 2
        pixel, origin = layer.scale[-1], layer.translate[-1]
        grid = {"scale": (*layer.scale[:lead], pixel, pixel), "translate": (*layer.translate[:lead], origin, origin)}

        def steps() -> Steps:
            result = yield from _per_plane(s, 2, one)
            return [(result, {**_like(layer, method), **grid})]

        return _steps(s, 2), steps


class Resample(_Operation):
    """Zoom (lucent.ndimage.zoom, one factor or one per axis, corners aligned as scipy's) or
    rotation (lucent.ndimage.rotate, degrees, in the plane of two axes; the output grows to hold
    the input). One step: Cancel only keeps the result from being added. The new layer's scale
    keeps the physical size (a zoom by 2 halves the scale); a rotation keeps the centre and
    needs square pixels in its plane."""

    title = "resample"

    _planes = {"y, x (last two)": (-1, -2), "z, x": (-1, -3), "z, y": (-2, -3)}

    def __init__(self, viewer: "napari.viewer.Viewer") -> None:
        self.image = _layers(viewer, "image")
        self.operation = ComboBox(label="operation", choices=["zoom", "rotate"], value="zoom")
        self.zoom = LineEdit(label="zoom (one, or per axis)", value="2")
        self.angle = FloatSpinBox(label="angle (°)", min=-360.0, max=360.0, step=1.0, value=30.0)
        self.plane = ComboBox(label="rotation plane", choices=list(self._planes), value="y, x (last two)")
        self.order = ComboBox(label="spline order", choices=[0, 1, 3], value=3)
        super().__init__(viewer, [self.image, self.operation, self.zoom, self.angle, self.plane, self.order])

    def plan(self) -> tuple[int, Callable[[], Steps]]:
        layer, order = self.image.value, self.order.value
        x = _pixels(layer, "image")
        scale, translate = np.array(layer.scale, float), np.array(layer.translate, float)
        if self.operation.value == "zoom":
            try:
                factors = [float(v) for v in str(self.zoom.value).replace(",", " ").split()]
            except ValueError:
                raise ValueError(f"zoom '{self.zoom.value}': one number, or one per axis") from None
            if len(factors) not in (1, x.ndim) or min(factors, default=0) <= 0:
                raise ValueError(f"zoom '{self.zoom.value}': one positive factor, or {x.ndim} (one per axis)")
            zoom = factors[0] if len(factors) == 1 else factors

            def call() -> tuple[np.ndarray, dict]:
                y = ndimage.zoom(x, zoom, order=order)
                n, m = np.array(x.shape), np.array(y.shape)
                # Corners aligned: output sample j is input sample j (n - 1) / (m - 1).
                step = np.where(m > 1, (n - 1) / np.maximum(m - 1, 1), n)
                return y, {"scale": tuple(scale * step)}
        else:
            if x.ndim < 2 or (x.ndim == 2 and self.plane.value != "y, x (last two)"):
                raise ValueError(f"{layer.name} has {x.ndim} axes: no {self.plane.value} plane")
            axes = [a % x.ndim for a in self._planes[self.plane.value]]
            if not np.isclose(scale[axes[0]], scale[axes[1]]):
                raise ValueError(f"the pixels are not square in the rotation plane (scale {scale[axes[1]]:g}, "
                                 f"{scale[axes[0]]:g}): zoom to square pixels first")
            angle = self.angle.value

            def call() -> tuple[np.ndarray, dict]:
                y = ndimage.rotate(x, angle, axes=axes, order=order)
                # The centre stays where it was.
                shift = (np.array(x.shape) - np.array(y.shape)) / 2 * scale
                return y, {"translate": tuple(translate + shift)}

        done = {"zoom": "zoomed", "rotate": "rotated"}[self.operation.value]

        def steps() -> Steps:
            y, grid = call()
            yield
            return [(y, {**_like(layer, done), **grid})]

        return 1, steps
