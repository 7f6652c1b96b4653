"""skimage.feature's template matching on the GPU (1-4 axes).

>>> import numpy as np, lucent
>>> image = np.random.rand(40, 50).astype("f4")
>>> result = lucent.feature.match_template(image, image[10:20, 5:17])
>>> np.unravel_index(np.argmax(result), result.shape)
(np.int64(10), np.int64(5))
"""

from __future__ import annotations

from typing import Any, Literal, Optional

import numpy as np

from . import _lucent
from ._arrays import real
from ._context import Context, resolve

__all__ = ["match_template"]


def match_template(image: Any, template: Any, pad_input: bool = False,
                   mode: Literal["constant", "edge", "reflect", "symmetric", "wrap"] = "constant",
                   constant_values: float = 0, *, context: Optional[Context] = None) -> np.ndarray:
    """skimage.feature.match_template: the normalised cross-correlation of ``template`` with
    every window of ``image``, in [-1, 1] (0 on flat windows); ``pad_input`` pads the image by
    numpy.pad's ``mode`` so the result has the image's shape.

    >>> import numpy as np, lucent
    >>> lucent.feature.match_template(np.random.rand(20, 20), np.random.rand(5, 4)).shape
    (16, 17)
    """
    i, t = real(image, "image"), real(template, "template")
    if i.ndim != t.ndim:
        raise ValueError("Dimensionality of template must be less than or equal to the dimensionality of image.")
    return _lucent.match_template(resolve(context), i, t, bool(pad_input), mode, float(constant_values))
