"""skimage.transform's radon and iradon on the GPU, in scikit-image's conventions: angles in
degrees, sinograms (detector, angle), the rotation centre at index N // 2, ``circle``.

lucent projects with the strip model (a pixel's exact footprint) where scikit-image sums a
bilinearly rotated image, and back-projects with its exact adjoint where scikit-image
interpolates linearly: results agree to the difference of the two discretisations (about a
percent), not to rounding. For even sizes the image is padded by one row and column so that
the centre falls where scikit-image puts it.

>>> import numpy as np, lucent
>>> image = np.zeros((64, 64), "f4"); image[24:40, 28:36] = 1
>>> lucent.transform.radon(image, np.arange(0, 180, 2)).shape
(64, 90)
"""

from __future__ import annotations

import warnings
from typing import Any, Literal, Optional

import numpy as np

from . import _lucent
from ._arrays import real, unsupported
from ._context import Context, resolve

__all__ = ["radon", "iradon"]


def _odd(x: np.ndarray) -> np.ndarray:
    """An even N × N image with a zero row and column appended, so its middle pixel is N // 2."""
    n = x.shape[-1]
    return x if n % 2 else np.pad(x, [(0, 1), (0, 1)])


def radon(image: Any, theta: Any = None, circle: bool = True, *, preserve_range: bool = False,
          context: Optional[Context] = None) -> np.ndarray:
    """skimage.transform.radon: the sinogram (detector, angle) of a 2D image at ``theta``
    degrees (default 0 to 179). With ``circle`` the image is taken as zero outside its
    inscribed circle and the detector is as wide as the image; otherwise as its diagonal.

    >>> import numpy as np, lucent
    >>> lucent.transform.radon(np.ones((20, 20), "f4"), [0, 45], circle=False).shape
    (29, 2)
    """
    x = real(image, "image")
    if x.ndim != 2:
        raise ValueError("The input image must be 2-D")
    theta = np.arange(180) if theta is None else np.asarray(theta, dtype=np.float64).ravel()
    if circle:
        m = min(x.shape)
        r = m // 2
        rows, cols = np.ogrid[: x.shape[0], : x.shape[1]]
        outside = (rows - x.shape[0] // 2) ** 2 + (cols - x.shape[1] // 2) ** 2 > r ** 2
        if np.any(x[outside]):
            warnings.warn("Radon transform: image must be zero outside the reconstruction circle", stacklevel=2)
        start = [int(np.ceil((s - m) / 2)) for s in x.shape]
        square = x[start[0]:start[0] + m, start[1]:start[1] + m]
    else:
        diagonal = np.sqrt(2) * max(x.shape)
        pad = [int(np.ceil(diagonal - s)) for s in x.shape]
        before = [(s + p) // 2 - s // 2 for s, p in zip(x.shape, pad)]
        square = np.pad(x, [(b, p - b) for b, p in zip(before, pad)])
    n = square.shape[0]
    sinogram = _lucent.radon(resolve(context), np.ascontiguousarray(_odd(square)),
                             (n | 1, np.deg2rad(theta).tolist(), n, float(n // 2), "auto"))
    return np.ascontiguousarray(sinogram.T)


def iradon(radon_image: Any, theta: Any = None, output_size: Optional[int] = None,
           filter_name: Optional[Literal["ramp", "shepp-logan", "cosine", "hamming", "hann"]] = "ramp",
           interpolation: Literal["linear"] = "linear", circle: bool = True, preserve_range: bool = True, *,
           context: Optional[Context] = None) -> np.ndarray:
    """skimage.transform.iradon: filtered back-projection of a sinogram (detector, angle) taken
    at ``theta`` degrees (default: equally spaced over 180), scaled as scikit-image's
    (pi / (2 × angles), which lucent's FBP already has); ``filter_name`` None back-projects without a filter.

    >>> import numpy as np, lucent
    >>> image = np.zeros((48, 48), "f4"); image[16:32, 18:30] = 1
    >>> theta = np.linspace(0, 180, 120, endpoint=False)
    >>> recon = lucent.transform.iradon(lucent.transform.radon(image, theta), theta)
    >>> bool(abs(recon[24, 24] - 1) < 0.1)
    True
    """
    unsupported("interpolation", interpolation, "linear", "iradon")
    s = real(radon_image, "radon_image")
    if s.ndim != 2:
        raise ValueError("The input image must be 2-D")
    detectors, count = s.shape
    theta = np.linspace(0, 180, count, endpoint=False) if theta is None else np.asarray(theta, np.float64).ravel()
    if len(theta) != count:
        raise ValueError("The given ``theta`` does not match the number of projections in ``radon_image``.")
    if output_size is None:
        output_size = detectors if circle else int(np.floor(np.sqrt(detectors ** 2 / 2.0)))
    n = int(output_size)
    sinogram = np.ascontiguousarray(s.T)
    # The output's middle pixel n // 2 sits on the detector's index detectors // 2.
    rays = (n | 1, np.deg2rad(theta).tolist(), detectors, float(detectors // 2), "auto")
    ctx = resolve(context)
    if filter_name is None:
        image = _lucent.backproject(ctx, sinogram, rays) * np.float32(np.pi / (2 * count))
    else:
        image = _lucent.fbp(ctx, sinogram, rays, filter_name)
    image = np.ascontiguousarray(image[:n, :n])
    if circle:
        r = n // 2
        rows, cols = np.ogrid[:n, :n]
        image[(rows - r) ** 2 + (cols - r) ** 2 > r ** 2] = 0
    return image

