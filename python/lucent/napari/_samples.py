"""The sample data contributions: lucent.phantom's objects at small sizes (they make in a
second or so on two cores)."""

from __future__ import annotations

import numpy as np

from .. import phantom


def shepp_logan() -> list:
    return [(phantom.shepp_logan(128), {"name": "Shepp-Logan phantom"}, "image")]


def shepp_logan_sinogram() -> list:
    """180 angles over [0, pi), the tomography widget's default."""
    angles = np.linspace(0, np.pi, 180, endpoint=False)
    return [(phantom.shepp_logan_sinogram(128, angles), {"name": "Shepp-Logan sinogram"}, "image")]


def aooct() -> list:
    reference, moving, _ = phantom.aooct((32, 48, 64), 1)
    return [(reference, {"name": "AO-OCT reference"}, "image"), (moving[0], {"name": "AO-OCT moving"}, "image")]


def moving_edge() -> list:
    clean, noisy = phantom.moving_edge((8, 16, 32, 32))
    return [(clean, {"name": "moving edge", "visible": False}, "image"), (noisy, {"name": "moving edge (noisy)"}, "image")]


def widefield_specimen() -> list:
    truth, observed, psf, voxel = phantom.widefield_specimen((20, 64, 64))
    return [(truth, {"name": "specimen (truth)", "scale": voxel, "visible": False}, "image"),
            (observed, {"name": "specimen (blurred)", "scale": voxel}, "image"),
            (psf, {"name": "PSF", "scale": voxel, "visible": False}, "image")]
