"""The napari plugin (lucent/napari.yaml), headless: the manifest, each widget against the
library call it makes, the layers' scale and translate, the reader and writer, the samples, and
a screenshot of the viewer (saved to $LUCENT_ARTIFACTS or target/artifacts/napari.png).

Widget results are compared with the library's own call on the whole layer by relative L2
error: where the widget runs plane by plane (its cancel steps) the GPU does the same arithmetic
on smaller batches, so float32 rounding (eps 6e-8, growing with the FFT passes and iterations)
is the only difference; 1e-5 leaves room for that and catches any real change.
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

try:  # never a silent skip: the test extra installs these
    import napari  # noqa: F401
    import pytestqt  # noqa: F401
except ImportError as e:
    raise ImportError(f"the napari plugin's tests need napari, a Qt binding and pytest-qt: pip install './python[test]' ({e})") from e

import lucent  # noqa: E402
import lucent.io  # noqa: E402
import lucent.phantom  # noqa: E402
from lucent.napari import _widgets  # noqa: E402

from conftest import rel  # noqa: E402

ROUNDING = 1e-5
WAIT_MS = 120_000


def run(widget, qtbot):
    """Runs the widget and waits for its worker to end; returns the layers it added."""
    before = len(widget._viewer.layers)
    worker = widget.run()
    assert worker is not None, "the run was refused"
    qtbot.waitUntil(lambda: widget.worker is None, timeout=WAIT_MS)
    return list(widget._viewer.layers)[before:]


def last_notification():
    from napari.utils.notifications import notification_manager
    return str(notification_manager.records[-1].message)


def image(viewer, data, name, scale=None, translate=None):
    ndim = np.ndim(data)
    return viewer.add_image(data, name=name, scale=scale or (1,) * ndim, translate=translate or (0,) * ndim)


def test_import_lucent_imports_no_gui():
    code = "import lucent, lucent.io, lucent.phantom, sys; print(sorted(m for m in ('napari', 'magicgui', 'qtpy', 'PyQt5', 'PyQt6', 'PySide2', 'PySide6') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_manifest_validates_and_is_installed():
    import npe2
    path = Path(lucent.__file__).parent / "napari.yaml"
    manifest = npe2.PluginManifest.from_file(path)
    manifest.validate_imports()
    assert npe2.PluginManifest.from_distribution("lucent").name == "lucent"
    widgets = {w.display_name for w in manifest.contributions.widgets}
    assert widgets == {"Deconvolve", "Denoise", "Register", "Tomography", "Resample"}


def test_deconvolve_a_layer_by_a_psf_layer(make_napari_viewer, qtbot, rng):
    viewer = make_napari_viewer()
    x = rng.random((40, 48)).astype("f4")
    psf = rng.random((5, 5)).astype("f4")
    layer = image(viewer, x, "cells", scale=(0.5, 0.25), translate=(3, -2))
    image(viewer, psf, "psf")
    w = _widgets.Deconvolve(viewer)
    w.image.value, w.psf.value, w.iterations.value, w.boundary.value, w.tv.value = layer, viewer.layers["psf"], 7, "periodic", 0.002
    [out] = run(w, qtbot)
    expected = lucent.restoration.richardson_lucy(x, psf, 7, clip=False, boundary="periodic", tv=0.002, normalize_psf=True)
    assert rel(out.data, expected) < ROUNDING
    assert out.name == "cells deconvolved"
    np.testing.assert_array_equal(out.scale, layer.scale)
    np.testing.assert_array_equal(out.translate, layer.translate)


def test_deconvolve_a_stack_plane_by_plane_by_a_psf_file(make_napari_viewer, qtbot, rng, tmp_path):
    viewer = make_napari_viewer()
    x = rng.random((3, 24, 20)).astype("f4")
    psf = rng.random((3, 5)).astype("f4")
    lucent.io.write(tmp_path / "psf.tif", psf)
    w = _widgets.Deconvolve(viewer)
    w.image.value = image(viewer, x, "stack")
    w.psf_file.value, w.iterations.value = tmp_path / "psf.tif", 5
    [out] = run(w, qtbot)
    # A 2D PSF deconvolves each plane: the library's one call on the stack does the same.
    expected = lucent.restoration.richardson_lucy(x, psf, 5, clip=False, normalize_psf=True)
    assert rel(out.data, expected) < ROUNDING


def test_bad_input_is_one_line_and_runs_nothing(make_napari_viewer):
    viewer = make_napari_viewer()
    w = _widgets.Deconvolve(viewer)
    w.image.value = image(viewer, np.ones((8, 8), "f4"), "flat")
    assert w.run() is None
    assert last_notification() == "lucent deconvolve: choose a PSF layer or a PSF file"
    d = _widgets.Denoise(viewer)
    d.image.value, d.dims.value = viewer.layers["flat"], 4
    assert d.run() is None
    assert last_notification() == "lucent denoise: flat has 2 axes: denoise over at most 2"
    assert len(viewer.layers) == 1


def test_denoise_over_three_of_four_axes(make_napari_viewer, qtbot, rng):
    viewer = make_napari_viewer()
    clean, noisy = lucent.phantom.moving_edge((3, 6, 16, 16), sigma=0.3, seed=int(rng.integers(1 << 30)))
    layer = image(viewer, noisy, "noisy", scale=(1, 2, 0.5, 0.5), translate=(0, 1, 2, 3))
    w = _widgets.Denoise(viewer)
    w.image.value, w.dims.value, w.sigma.value = layer, 3, 0.3
    [out] = run(w, qtbot)
    expected = lucent.denoise.adaptive_filter(noisy, dims=3, sigma=0.3)
    assert rel(out.data, expected) < ROUNDING
    np.testing.assert_array_equal(out.scale, layer.scale)
    np.testing.assert_array_equal(out.translate, layer.translate)


def test_register_a_stack_and_two_layers(make_napari_viewer, qtbot, rng):
    viewer = make_napari_viewer()
    base = lucent.ndimage.gaussian_filter(rng.random((32, 32)).astype("f4"), 1.5)
    stack = np.stack([np.roll(base, s, axis=(0, 1)) for s in [(0, 0), (2, -3), (-1, 4)]])
    layer = image(viewer, stack, "stack", scale=(1, 0.2, 0.2), translate=(0, 5, 5))
    w = _widgets.Register(viewer)
    w.image.value, w.plane.value, w.upsample.value, w.order.value = layer, 0, 4, 1
    [out] = run(w, qtbot)
    for plane, registered, shift in zip(stack, out.data, out.metadata["shifts"]):
        expected_shift = lucent.registration.phase_cross_correlation(stack[0], plane, upsample_factor=4)[0]
        np.testing.assert_array_equal(shift, expected_shift)
        assert rel(registered, lucent.ndimage.shift(plane, expected_shift, order=1)) < ROUNDING
    np.testing.assert_allclose(out.metadata["shifts"], [[0, 0], [-2, 3], [1, -4]], atol=0.25)
    np.testing.assert_array_equal(out.scale, layer.scale)

    reference = image(viewer, stack[0], "reference", scale=(0.2, 0.2), translate=(5, 5))
    moving = image(viewer, stack[1], "moving")
    w.mode.value, w.reference.value, w.image.value = "two layers", reference, moving
    [out] = run(w, qtbot)
    shift = lucent.registration.phase_cross_correlation(stack[0], stack[1], upsample_factor=4)[0]
    assert rel(out.data, lucent.ndimage.shift(stack[1], shift, order=1)) < ROUNDING
    assert out.name == "moving registered"
    np.testing.assert_array_equal(out.translate, reference.translate)


def test_tomography_fbp_and_mlem(make_napari_viewer, qtbot):
    viewer = make_napari_viewer()
    angles = np.linspace(0, np.pi, 40, endpoint=False)
    sinogram = lucent.phantom.shepp_logan_sinogram(32, angles)
    layer = image(viewer, sinogram, "sinogram", scale=(4.5, 0.1), translate=(0, -1.6))
    w = _widgets.Tomography(viewer)
    w.sinogram.value, w.filter.value = layer, "hann"
    [out] = run(w, qtbot)
    assert rel(out.data, lucent.tomography.fbp(sinogram, angles, filter="hann")) < ROUNDING
    np.testing.assert_array_equal(out.scale, (0.1, 0.1))
    np.testing.assert_array_equal(out.translate, (-1.6, -1.6))
    w.method.value, w.iterations.value = "mlem", 5
    [out] = run(w, qtbot)
    assert rel(out.data, lucent.tomography.mlem(sinogram, angles, 5)[0]) < ROUNDING


def test_resample_zoom_and_rotate(make_napari_viewer, qtbot, rng):
    viewer = make_napari_viewer()
    x = rng.random((9, 12)).astype("f4")
    layer = image(viewer, x, "x", scale=(0.5, 0.5), translate=(1, 2))
    w = _widgets.Resample(viewer)
    w.image.value, w.zoom.value, w.order.value = layer, "2, 3", 1
    [out] = run(w, qtbot)
    assert rel(out.data, lucent.ndimage.zoom(x, (2, 3), order=1)) < ROUNDING
    # Corners aligned: 9 samples become 18 over the same extent, 12 become 36.
    np.testing.assert_allclose(out.scale, (0.5 * 8 / 17, 0.5 * 11 / 35))
    np.testing.assert_array_equal(out.translate, layer.translate)

    w.operation.value, w.angle.value, w.order.value = "rotate", 90, 3
    [out] = run(w, qtbot)
    assert rel(out.data, lucent.ndimage.rotate(x, 90, axes=(1, 0), order=3)) < ROUNDING
    assert out.data.shape == (12, 9)
    # The centre stays put: (1 + 4 * 0.5, 2 + 5.5 * 0.5) before and after.
    np.testing.assert_allclose(np.array(out.translate) + (np.array(out.data.shape) - 1) / 2 * 0.5, (3, 4.75))

    layer.scale = (0.5, 0.25)
    assert w.run() is None
    assert "not square" in last_notification()


def test_cancel_stops_between_planes(make_napari_viewer, qtbot, rng):
    viewer = make_napari_viewer()
    stack = rng.random((12, 32, 32)).astype("f4")
    w = _widgets.Register(viewer)
    w.image.value = image(viewer, stack, "stack")
    steps = []
    worker = w.run()
    worker.yielded.connect(lambda _: steps.append(1))
    aborted = []
    worker.aborted.connect(lambda: aborted.append(True))
    w.cancel()
    qtbot.waitUntil(lambda: w.worker is None, timeout=WAIT_MS)
    assert aborted and len(viewer.layers) == 1
    assert "cancelled" in last_notification()


@pytest.mark.parametrize("name", ["x.npy", "x.tif", "x.zarr"])
def test_reader_and_writer_round_trip(make_napari_viewer, tmp_path, rng, name):
    viewer = make_napari_viewer()
    data = rng.random((3, 10, 14)).astype("f4")
    layer = image(viewer, data, "x", scale=(2, 0.5, 0.25), translate=(1, 0, -3))
    path = str(tmp_path / name)
    assert viewer.layers.save(path, selected=False, plugin="lucent") == [path]
    [back] = viewer.open(path, plugin="lucent")
    np.testing.assert_array_equal(back.data, data)
    if name.endswith(".zarr"):
        np.testing.assert_array_equal(back.scale, layer.scale)
        np.testing.assert_array_equal(back.translate, layer.translate)


def test_reader_declines_other_files():
    from lucent.napari._io import get_reader
    assert get_reader("image.png") is None
    assert get_reader(["a.npy", "b.czi"]) is None
    assert get_reader(["a.npy", "b.tif"]) is not None


@pytest.mark.parametrize("key,shapes", [
    ("shepp-logan", [(128, 128)]),
    ("shepp-logan-sinogram", [(180, 128)]),
    ("aooct", [(32, 48, 64)] * 2),
    ("moving-edge", [(8, 16, 32, 32)] * 2),
    ("widefield-specimen", [(20, 64, 64), (20, 64, 64), (17, 25, 25)]),
])
def test_samples_open(make_napari_viewer, key, shapes):
    viewer = make_napari_viewer()
    viewer.open_sample("lucent", key)
    assert [layer.data.shape for layer in viewer.layers] == shapes
    assert all(np.isfinite(layer.data).all() and layer.data.max() > 0 for layer in viewer.layers)


def test_specimen_is_blurred_and_counted():
    truth, observed, psf, voxel = lucent.phantom.widefield_specimen((18, 32, 32), seed=3)
    assert voxel == (0.25, 0.1, 0.1) and abs(float(psf.sum()) - 1) < 1e-5
    # Poisson counts of the truth blurred by the PSF (zero boundary): whole numbers about it.
    blurred = lucent.signal.fftconvolve(truth.astype("f8"), psf.astype("f8"), mode="same")
    assert np.array_equal(observed, np.round(observed)) and observed.min() >= 0
    assert rel(observed, blurred) < 3 / np.sqrt(max(blurred.mean(), 1))


def test_screenshot(make_napari_viewer, qtbot):
    """The plugin at work, saved for the README (docs/images/napari.png is one such)."""
    viewer = make_napari_viewer()
    viewer.open_sample("lucent", "shepp-logan-sinogram")
    w = _widgets.Tomography(viewer)
    viewer.window.add_dock_widget(w, name="lucent: Tomography")
    w.sinogram.value, w.filter.value = viewer.layers[0], "hann"
    run(w, qtbot)
    viewer.grid.enabled = True
    viewer.window._qt_window.resize(1400, 720)  # the offscreen window's default leaves the canvas no room
    viewer.reset_view()
    path = Path(os.environ.get("LUCENT_ARTIFACTS", Path(__file__).parents[2] / "target" / "artifacts")) / "napari.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    shot = viewer.screenshot(str(path), canvas_only=False)
    assert shot.ndim == 3 and shot[..., :3].std() > 0 and path.stat().st_size > 0
