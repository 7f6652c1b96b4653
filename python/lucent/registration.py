"""skimage.registration's phase correlation on the GPU: whole-sample and sub-sample shifts
(upsampled DFT), images or their spectra, and masked registration (Padfield), 1-4 axes.

>>> import numpy as np, lucent
>>> a = np.random.rand(64, 48).astype("f4")
>>> b = np.roll(a, (3, -5), axis=(0, 1))
>>> lucent.registration.phase_cross_correlation(a, b)[0]
array([-3.,  5.])
"""

from __future__ import annotations

from typing import Any, Literal, Optional, Sequence

import numpy as np

from . import _lucent
from ._arrays import axis as _axis, complex64, count, mask, real, unsupported
from ._context import Context, resolve

__all__ = ["phase_cross_correlation", "cross_correlate_masked", "similarity", "transform_img", "similarity_3d",
           "transform_img_3d", "register_stack", "transform_stack", "StackReg", "register_affine", "itk_transform",
           "read_itk_transform", "optical_flow_ilk", "optical_flow_tvl1"]


def phase_cross_correlation(reference_image: Any, moving_image: Any, *, upsample_factor: float = 1,
                            space: Literal["real", "fourier"] = "real", disambiguate: bool = False,
                            reference_mask: Any = None, moving_mask: Any = None, overlap_ratio: float = 0.3,
                            normalization: Optional[Literal["phase"]] = "phase",
                            context: Optional[Context] = None) -> tuple[np.ndarray, float, float]:
    """skimage.registration.phase_cross_correlation: the shift that registers ``moving_image``
    onto ``reference_image``, the normalised RMS error and the global phase difference.

    With masks (Padfield's masked normalised cross-correlation) the error and phase difference
    are NaN, as scikit-image's; ``upsample_factor`` above 1 then refines the shift below a
    sample, which scikit-image does not do. ``upsample_factor`` is a whole number (1 to 10000):
    a fraction misplaces the refinement's grid, and scikit-image's shifts are wrong for it too.

    >>> import numpy as np, lucent
    >>> a = np.random.rand(32, 32).astype("f4")
    >>> shift, error, phase = lucent.registration.phase_cross_correlation(a, np.roll(a, 2, axis=1))
    >>> shift
    array([ 0., -2.])
    """
    unsupported("disambiguate", disambiguate, False, "phase_cross_correlation")
    ctx = resolve(context)
    if reference_mask is not None or moving_mask is not None:
        if space != "real":
            raise ValueError("masked registration takes images in real space")
        ref, mov = real(reference_image, "reference_image"), real(moving_image, "moving_image")
        rm = mask(reference_mask if reference_mask is not None else np.ones(ref.shape, bool))
        mm = mask(moving_mask if moving_mask is not None else rm)
        shift = _lucent.masked_phase_cross_correlation(ctx, ref, mov, rm, mm, float(overlap_ratio), float(upsample_factor))
        return np.array(shift), np.nan, np.nan
    norm = "none" if normalization is None else normalization
    if space == "real":
        r = _lucent.phase_cross_correlation(ctx, real(reference_image, "reference_image"), real(moving_image, "moving_image"),
                                            float(upsample_factor), norm)
    elif space == "fourier":
        r = _lucent.phase_cross_correlation_spectra(ctx, complex64(reference_image), complex64(moving_image),
                                                    float(upsample_factor), norm)
    else:
        raise ValueError('space argument must be "real" of "fourier"')
    shift, error, phasediff = r
    return np.array(shift), np.nan if error is None else error, np.nan if phasediff is None else phasediff


def cross_correlate_masked(arr1: Any, arr2: Any, m1: Any, m2: Any, mode: Literal["full"] = "full", axes: Any = None,
                           overlap_ratio: float = 0.3, *, context: Optional[Context] = None) -> np.ndarray:
    """skimage.registration's cross_correlate_masked (Padfield's masked normalised
    cross-correlation) at every overlap of ``arr1`` and ``arr2`` (full mode, every axis).

    >>> import numpy as np, lucent
    >>> a = np.random.rand(12, 10)
    >>> lucent.registration.cross_correlate_masked(a, a, a > 0.1, a > 0.1).shape
    (23, 19)
    """
    unsupported("mode", mode, "full", "cross_correlate_masked")
    a, b = real(arr1, "arr1"), real(arr2, "arr2")
    if axes is not None and sorted(int(x) % a.ndim for x in axes) != list(range(a.ndim)):
        raise NotImplementedError("lucent's cross_correlate_masked correlates over every axis")
    return _lucent.cross_correlate_masked(resolve(context), a, b, mask(m1), mask(m2), float(overlap_ratio))


def similarity(im0: Any, im1: Any, numiter: int = 1, order: int = 3, constraints: Optional[dict] = None,
               filter_pcorr: int = 0, exponent: Any = "inf", reports: Any = None, *, upsample_factor: float = 20,
               context: Optional[Context] = None) -> dict:
    """imreg_dft.similarity: the scale, angle (degrees) and translation ``tvec`` (rows, columns)
    that register ``im1`` onto ``im0`` (2D images of one shape, each side ≥ 16), by the
    Fourier-Mellin method: log-polar magnitude spectra phase-correlated for angle and scale, then
    the translation and the 180° ambiguity by phase correlation. ``transform_img(im1, scale,
    angle, tvec)`` (or ``res["timg"]``) is ``im1`` registered. Scales 0.5 to 2, any angle.

    Sub-sample peaks come from the upsampled DFT (``upsample_factor``: 1/20 of a sample by
    default) where imreg_dft takes a centre of mass. ``success`` is 1 minus the translation
    correlation's normalised RMS error (skimage's measure; imreg_dft's own is another number on
    the same "higher is better" scale). ``timg`` is ``im1`` transformed with the background
    beyond its edges, without imreg_dft's blending of that border. ``constraints``,
    ``filter_pcorr``, ``exponent`` and ``reports`` other than their defaults raise
    NotImplementedError.

    >>> import numpy as np, lucent
    >>> rng = np.random.default_rng(0)
    >>> im0 = lucent.ndimage.gaussian_filter(rng.random((160, 160)).astype("f4"), 1.5)
    >>> im1 = lucent.registration.transform_img(im0, 1.1, 20.0, (3, -2), order=3)
    >>> r = lucent.registration.similarity(im1, im0)
    >>> round(r["scale"], 2), round(r["angle"])
    (1.1, 20)
    """
    _imreg_defaults_only("similarity", constraints, filter_pcorr, exponent, reports)
    ctx = resolve(context)
    a, b = real(im0, "im0"), real(im1, "im1")
    scale, angle, tvec, error, bgval = _lucent.similarity(ctx, a, b, count(numiter, "numiter"), count(order, "order"),
                                                          float(upsample_factor))
    timg = _lucent.transform_similarity(ctx, b, scale, angle, tvec, bgval, count(order, "order"))
    return {"scale": scale, "angle": angle, "tvec": np.array(tvec), "success": 1.0 - error, "timg": timg}


def _imreg_defaults_only(name: str, constraints: Any, filter_pcorr: Any, exponent: Any, reports: Any) -> None:
    """imreg_dft's options lucent does not implement: NotImplementedError unless at their defaults."""
    unsupported("constraints", constraints, None, name)
    unsupported("filter_pcorr", filter_pcorr, 0, name)
    unsupported("exponent", exponent, "inf", name)
    unsupported("reports", reports, None, name)


def transform_img(img: Any, scale: float = 1.0, angle: float = 0.0, tvec: Any = (0, 0), mode: str = "constant",
                  bgval: Optional[float] = None, order: int = 1, *, context: Optional[Context] = None) -> np.ndarray:
    """imreg_dft.transform_img: ``img`` (2D) zoomed by ``scale`` about its centre, turned by
    ``angle`` degrees (scipy.ndimage.rotate's sense) and shifted by ``tvec`` (rows, columns),
    imreg_dft's grid (a 1.2× larger canvas, scipy's zoom and rotate, the centre cut back) in one
    resampling of spline ``order``; ``bgval`` beyond the image (None: the median of its border,
    as imreg_dft). Only mode "constant".

    >>> import numpy as np, lucent
    >>> x = np.zeros((32, 32), "f4"); x[10:20, 12:16] = 1
    >>> y = lucent.registration.transform_img(x, tvec=(2, 0), bgval=0)
    >>> bool(np.allclose(y[12:22, 12:16], 1))
    True
    """
    unsupported("mode", mode, "constant", "transform_img")
    a = real(img, "img")
    if a.ndim != 2:
        raise ValueError(f"transform_img takes a 2D image, got {a.ndim} axes")
    t = [float(v) for v in np.broadcast_to(np.asarray(tvec, float), (2,))]
    bg = float(np.asarray(_lucent_border(a)) if bgval is None else bgval)
    return _lucent.transform_similarity(resolve(context), a, float(scale), float(angle), tuple(t), bg, count(order, "order"))


def similarity_3d(im0: Any, im1: Any, axis: int = 0, numiter: int = 1, order: int = 3, constraints: Optional[dict] = None,
                  filter_pcorr: int = 0, exponent: Any = "inf", reports: Any = None, *, upsample_factor: float = 20,
                  context: Optional[Context] = None) -> dict:
    """:func:`similarity` for volumes that differ by a turn about ``axis``, an isotropic scale and
    a 3D translation (a sample turned on a rotation stage): the scale, the angle (degrees, the
    sense of ``similarity`` on the projections along ``axis``, rows and columns the other two
    axes in order) and ``tvec`` (one shift per axis) that register ``im1`` onto ``im0`` (3D, one
    shape, at least 16 × 16 across ``axis``; negative axes count from the last). The angle and scale come from the Fourier-Mellin
    method on the sums along ``axis``, the translation from a 3D cross-correlation of ``im1``
    turned and scaled back. ``transform_img_3d(im1, scale, angle, tvec, axis)`` (or
    ``res["timg"]``) is ``im1`` registered. ``success`` as in :func:`similarity`. ``numiter=2``
    halved the worst angle error on 128² planes of smoothed noise (to a third of a log-polar
    sample, 180° / 128 / 3).

    >>> import numpy as np, lucent
    >>> rng = np.random.default_rng(0)
    >>> v0 = lucent.ndimage.gaussian_filter(rng.random((24, 80, 80)).astype("f4"), 2) - 0.5
    >>> v1 = lucent.registration.transform_img_3d(v0, 1.05, 30.0, (1, 2, -3), axis=0, bgval=0, order=3)
    >>> r = lucent.registration.similarity_3d(v0, v1)
    >>> round(r["angle"])
    -30
    """
    _imreg_defaults_only("similarity_3d", constraints, filter_pcorr, exponent, reports)
    ctx = resolve(context)
    a, b = real(im0, "im0"), real(im1, "im1")
    ax, k = _axis(axis, 3), count(order, "order")
    scale, angle, tvec, success, bgval = _lucent.similarity_3d(ctx, a, b, ax, count(numiter, "numiter"), k, float(upsample_factor))
    timg = _lucent.transform_similarity_3d(ctx, b, ax, scale, angle, tvec, bgval, k)
    return {"scale": scale, "angle": angle, "tvec": np.array(tvec), "success": success, "timg": timg}


def transform_img_3d(img: Any, scale: float = 1.0, angle: float = 0.0, tvec: Any = (0, 0, 0), axis: int = 0,
                     mode: str = "constant", bgval: Optional[float] = None, order: int = 1, *,
                     context: Optional[Context] = None) -> np.ndarray:
    """:func:`transform_img` of a volume about ``axis``: in the plane of the other two axes (in
    order) :func:`transform_img`'s zoom, turn and shift, along ``axis`` the same zoom about its
    centre and ``tvec``'s shift, in one resampling of spline ``order``; ``bgval`` beyond the
    volume (None: the median of its faces). Only mode "constant".

    >>> import numpy as np, lucent
    >>> x = np.zeros((20, 32, 32), "f4"); x[5:9, 10:20, 12:16] = 1
    >>> y = lucent.registration.transform_img_3d(x, tvec=(1, 2, 0), bgval=0)
    >>> bool(np.allclose(y[6:10, 12:22, 12:16], 1))
    True
    """
    unsupported("mode", mode, "constant", "transform_img_3d")
    a = real(img, "img")
    if a.ndim != 3:
        raise ValueError(f"transform_img_3d takes a 3D volume, got {a.ndim} axes")
    t = tuple(float(v) for v in np.broadcast_to(np.asarray(tvec, float), (3,)))
    bg = float(_faces_median(a) if bgval is None else bgval)
    return _lucent.transform_similarity_3d(resolve(context), a, _axis(axis, 3), float(scale), float(angle), t, bg,
                                           count(order, "order"))


def _faces_median(a: np.ndarray) -> float:
    """The median of the volume's six faces (lucent's similarity_3d background; shared edges twice)."""
    faces = [np.take(a, i, axis=k).ravel() for k in range(3) for i in (0, -1)]
    return float(np.median(np.concatenate(faces)))


def _lucent_border(a: np.ndarray) -> float:
    """imreg_dft's get_borderval(img) (radius max(1, min side // 20))."""
    radius = max(1, min(a.shape) // 20)
    m = np.zeros(a.shape, bool)
    m[:, :radius] = True
    m[:, -radius:] = True
    m[radius, :] = True  # imreg_dft's row `radius` (it means the top band)
    m[-radius:, :] = True
    return float(np.median(a[m]))


_TRANSFORMS = {2: "translation", 3: "rigid_body", 4: "scaled_rotation", 6: "affine", "translation": "translation",
               "rigid_body": "rigid_body", "scaled_rotation": "scaled_rotation", "affine": "affine"}


def _frames_first(img: Any, axis: int) -> np.ndarray:
    a = real(img, "img")
    if a.ndim != 3:
        raise ValueError("Stack must have three dimensions")
    return np.ascontiguousarray(np.moveaxis(a, axis, 0))


def register_stack(img: Any, transformation: Any = "translation", reference: str = "previous", n_frames: int = 1,
                   axis: int = 0, moving_average: int = 1, *, upsample_factor: float = 100,
                   context: Optional[Context] = None) -> np.ndarray:
    """pystackreg's ``StackReg(transformation).register_stack(img, reference, n_frames, axis)``:
    one 3 × 3 matrix per frame (pystackreg's form: the reference's homogeneous (x, y) mapped to
    the frame's). ``transformation``: "translation", "rigid_body", "scaled_rotation" or "affine"
    (or pystackreg's constants 2, 3, 4, 6); ``reference``: "previous" (matrices chained), "first" (the
    mean of the first ``n_frames``; frame 0 keeps the identity) or "mean" (for small motion:
    a frame correlates with each frame's copy in the mean, its own at zero shift). Translations by
    phase correlation, rotations and scales by the Fourier-Mellin method (:func:`similarity`,
    frames of at least 16 × 16), sub-sample peaks to 1/``upsample_factor``; affine transforms by
    :func:`register_affine` (mean squares) from the scaled rotation found so. Accuracy (textured
    frames): translations within a few hundredths of a sample, turns within a quarter of a
    log-polar angle sample (180° / (4 × the larger side)); pystackreg's TurboReg refines small
    motions to a thousandth of a sample but loses turns beyond about 10°, which this does not.
    pystackreg's bilinear transform and ``moving_average`` above 1 raise NotImplementedError.

    >>> import numpy as np, lucent
    >>> base = lucent.ndimage.gaussian_filter(np.random.default_rng(0).random((128, 128)).astype("f4"), 1.5)
    >>> stack = np.stack([base, lucent.ndimage.shift(base, (1.5, -2.0), mode="nearest")])
    >>> lucent.registration.register_stack(stack, reference="first")[1].round(1)
    array([[ 1. ,  0. , -2. ],
           [ 0. ,  1. ,  1.5],
           [ 0. ,  0. ,  1. ]])
    """
    if transformation not in _TRANSFORMS:
        raise NotImplementedError(f"register_stack: transformation {transformation!r} (lucent finds translation, "
                                  "rigid_body, scaled_rotation and affine; not bilinear)")
    unsupported("moving_average", moving_average, 1, "register_stack")
    x = _frames_first(img, axis)
    tmats = _lucent.register_stack(resolve(context), x, _TRANSFORMS[transformation], str(reference), count(n_frames, "n_frames"),
                                   float(upsample_factor))
    return np.array(tmats, dtype=np.float64).reshape(-1, 3, 3)


def transform_stack(img: Any, tmats: Any, axis: int = 0, *, order: int = 3, context: Optional[Context] = None) -> np.ndarray:
    """pystackreg's ``transform_stack(img, axis, tmats)``: each frame resampled (cubic spline by
    default, zeros beyond it) so that it lies on the reference, the frames along ``axis``."""
    x = _frames_first(img, axis)
    t = np.asarray(tmats, dtype=np.float64)
    if t.shape != (x.shape[0], 3, 3):
        raise ValueError(f"transform_stack: tmats of shape {t.shape} for {x.shape[0]} frames (needs ({x.shape[0]}, 3, 3))")
    y = _lucent.transform_stack(resolve(context), x, [m.tolist() for m in t], count(order, "order"))
    return np.moveaxis(y, 0, axis)


class StackReg:
    """pystackreg's ``StackReg`` for the transformations lucent finds: ``StackReg(StackReg.RIGID_BODY)``,
    then ``register_stack``, ``transform_stack`` and ``register_transform_stack`` with
    pystackreg's arguments (see :func:`register_stack`)."""

    TRANSLATION, RIGID_BODY, SCALED_ROTATION, AFFINE, BILINEAR = 2, 3, 4, 6, 8

    def __init__(self, transformation: int, *, upsample_factor: float = 100, context: Optional[Context] = None):
        if transformation not in _TRANSFORMS:
            raise NotImplementedError(f"StackReg({transformation}): lucent finds TRANSLATION, RIGID_BODY, SCALED_ROTATION and AFFINE")
        self._transformation, self._up, self._ctx, self._tmats = transformation, upsample_factor, context, None

    def register_stack(self, img: Any, reference: str = "previous", n_frames: int = 1, axis: int = 0,
                       moving_average: int = 1, **_: Any) -> np.ndarray:
        self._tmats = register_stack(img, self._transformation, reference, n_frames, axis, moving_average,
                                     upsample_factor=self._up, context=self._ctx)
        return self._tmats

    def transform_stack(self, img: Any, axis: int = 0, tmats: Any = None) -> np.ndarray:
        if tmats is None and self._tmats is None:
            raise Exception("Register first")
        return transform_stack(img, self._tmats if tmats is None else tmats, axis, context=self._ctx)

    def register_transform_stack(self, img: Any, reference: str = "previous", n_frames: int = 1, axis: int = 0,
                                 moving_average: int = 1, **kw: Any) -> np.ndarray:
        self.register_stack(img, reference, n_frames, axis, moving_average, **kw)
        return self.transform_stack(img, axis)


def register_affine(fixed: Any, moving: Any, transform: str = "affine", *, metric: str = "ms", bins: int = 50,
                    fixed_mask: Any = None, moving_mask: Any = None, optimizer: str = "auto", learning_rate: float = 1.0,
                    min_step: float = 1e-3, relaxation: float = 0.5, shrink_factors: Sequence[int] = (4, 2, 1),
                    smoothing_sigmas: Sequence[float] = (2.0, 1.0, 0.0), iterations: int = 100, tolerance: float = 1e-4,
                    initial: Any = None, context: Optional[Context] = None) -> dict:
    """Intensity-based registration of 2D or 3D images, as SimpleITK's ImageRegistrationMethod.

    ``transform``: "translation", "rigid", "similarity" or "affine" (turns and scales about the
    fixed image's centre). ``metric``: "ms" (mean squares), "ncc" (SimpleITK's Correlation) or
    "mi" (Mattes mutual information with ``bins`` histogram bins, for different contrasts or
    modalities). ``fixed_mask`` / ``moving_mask``: the metric counts the fixed image's points
    where its mask is true that map where the moving mask is true (bands without data, other
    organs). A pyramid of ``shrink_factors`` and ``smoothing_sigmas`` (pixels of the full
    image; SimpleITK's names); at each level ``optimizer`` "lm" (Levenberg-Marquardt, mean
    squares only), "lbfgs", or "regular_step" (SimpleITK's regular-step gradient descent:
    ``learning_rate`` and ``min_step`` in pixels of motion, ``relaxation``); "auto" is "lm" for
    mean squares and "lbfgs" otherwise. A level ends when a step moves no corner by
    ``tolerance`` pixels or after ``iterations`` steps; a translation is fitted first at the
    coarsest level. ``initial``: a starting (matrix, offset), a homogeneous matrix, or
    "similarity" (2D: the Fourier-Mellin estimate of :func:`similarity`, which reaches any turn and
    scales 0.5-2, for motion beyond the pyramid's reach).

    Returns ``matrix`` and ``offset`` in scipy.ndimage.affine_transform's convention (fixed
    indices → moving: ``affine_transform(moving, matrix, offset)`` is the moving image
    registered), the final ``metric`` (mean square; −NCC²; −MI) and the ``iterations`` taken.
    :func:`itk_transform` writes the result as an ITK transform file.

    >>> import numpy as np, lucent
    >>> big = lucent.ndimage.gaussian_filter(np.random.default_rng(0).random((192, 192)).astype("f4"), 3)
    >>> fixed = big[32:160, 32:160]
    >>> moving = lucent.ndimage.affine_transform(big, [[0.98, -0.05], [0.03, 1.02]], offset=(33.0, 30.5),
    ...                                          output_shape=(128, 128), order=3)
    >>> r = lucent.registration.register_affine(fixed, moving)
    >>> np.round(np.linalg.inv(r["matrix"]), 2)
    array([[ 0.98, -0.05],
           [ 0.03,  1.02]])
    >>> r = lucent.registration.register_affine(fixed, 1 - moving ** 2, metric="mi")
    >>> np.round(np.linalg.inv(r["matrix"]), 2)
    array([[ 0.98, -0.05],
           [ 0.03,  1.02]])
    """
    a, b = real(fixed, "fixed"), real(moving, "moving")
    d = a.ndim
    start = None
    start_similarity = isinstance(initial, str) and initial == "similarity"
    if initial is not None and not start_similarity:
        if isinstance(initial, str):
            raise ValueError(f"initial: (matrix, offset), a homogeneous matrix or 'similarity', got {initial!r}")
        if isinstance(initial, tuple):
            m, off = np.asarray(initial[0], float), np.asarray(initial[1], float)
        else:
            h = np.asarray(initial, float)
            if h.shape != (d + 1, d + 1):
                raise ValueError(f"initial: (matrix, offset) or a {d + 1} x {d + 1} homogeneous matrix, got shape {h.shape}")
            m, off = h[:d, :d], h[:d, d]
        start = (m.tolist(), off.tolist())
    masks = (None if fixed_mask is None else mask(fixed_mask, "fixed_mask"),
             None if moving_mask is None else mask(moving_mask, "moving_mask"))
    matrix, offset, value, steps = _lucent.register_affine(
        resolve(context), a, b, str(transform), str(metric), count(bins, "bins"), str(optimizer),
        (float(learning_rate), float(min_step), float(relaxation)), masks,
        [count(f, "shrink factor") for f in shrink_factors], [float(s) for s in smoothing_sigmas],
        count(iterations, "iterations"), float(tolerance), start, start_similarity)
    return {"matrix": np.array(matrix), "offset": np.array(offset), "metric": value, "iterations": steps}


def itk_transform(matrix: Any, offset: Any) -> str:
    """The text of an ITK transform file ("#Insight Transform File V1.0", an AffineTransform)
    for a map in scipy.ndimage.affine_transform's convention (2D or 3D): what SimpleITK's
    ``ReadTransform`` reads, over ITK's physical points (x, y[, z]) = the indices reversed for an
    image of unit spacing at the origin. Write it to a ``.tfm`` file.

    >>> import lucent
    >>> print(lucent.registration.itk_transform([[1.0, 0.0], [0.0, 2.0]], [3.0, 4.0]))
    #Insight Transform File V1.0
    #Transform 0
    Transform: AffineTransform_double_2_2
    Parameters: 2 0 0 1 4 3
    FixedParameters: 0 0
    <BLANKLINE>
    """
    return _lucent.itk_transform(np.asarray(matrix, float).tolist(), np.asarray(offset, float).tolist())


def read_itk_transform(text: str) -> tuple[np.ndarray, np.ndarray]:
    """(matrix, offset) of an ITK transform file's text holding one 2D or 3D AffineTransform
    (its centre taken into account), in scipy.ndimage.affine_transform's convention: the
    inverse of :func:`itk_transform`."""
    matrix, offset = _lucent.parse_itk_transform(str(text))
    return np.array(matrix), np.array(offset)


def _flow_images(reference_image: Any, moving_image: Any, dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    """scikit-image's checks of optical flow's inputs, the images as lucent takes them."""
    if np.dtype(dtype).char not in "efdg":
        raise ValueError("Only floating point data type are valid for optical flow")
    a, b = real(reference_image, "reference_image"), real(moving_image, "moving_image")
    if a.shape != b.shape:
        raise ValueError("Input images should have the same shape")
    return a, b


def optical_flow_ilk(reference_image: Any, moving_image: Any, *, radius: int = 7, num_warp: int = 10,
                     gaussian: bool = False, prefilter: bool = False, dtype: Any = np.float32,
                     context: Optional[Context] = None) -> np.ndarray:
    """skimage.registration.optical_flow_ilk: the flow (ndim, *shape) by iterative Lucas-Kanade
    over scikit-image's pyramid, 2D or 3D, such that sampling ``moving_image`` at the grid plus
    the flow gives ``reference_image``. ``radius``: the window (uniform of 2 radius + 1, or with
    ``gaussian`` a Gaussian of σ (2 radius + 1) / 4); ``num_warp`` warps per level;
    ``prefilter``: a 3-wide median of the flow before each warp. Computed in float32 on the GPU
    (``dtype`` float64 converts the result).

    >>> import numpy as np, lucent
    >>> ref = lucent.ndimage.gaussian_filter(np.random.default_rng(0).random((64, 80)).astype("f4"), 2)
    >>> mov = lucent.ndimage.shift(ref, (1.0, -0.5), mode="nearest")
    >>> flow = lucent.registration.optical_flow_ilk(ref, mov)
    >>> np.round(flow[:, 32, 40], 1)
    array([ 1. , -0.5], dtype=float32)
    """
    a, b = _flow_images(reference_image, moving_image, dtype)
    flow = _lucent.optical_flow_ilk(resolve(context), a, b, count(radius, "radius"), count(num_warp, "num_warp"),
                                    bool(gaussian), bool(prefilter))
    return flow.astype(dtype, copy=False)


def optical_flow_tvl1(reference_image: Any, moving_image: Any, *, attachment: float = 15, tightness: float = 0.3,
                      num_warp: int = 5, num_iter: int = 10, tol: float = 1e-4, prefilter: bool = False,
                      dtype: Any = np.float32, context: Optional[Context] = None) -> np.ndarray:
    """skimage.registration.optical_flow_tvl1: the flow (ndim, *shape) by TV-L1 (Zach et al.,
    Wedel et al.; scikit-image's primal-dual scheme, its pyramid and warps), 2D or 3D, such that
    sampling ``moving_image`` at the grid plus the flow gives ``reference_image``. A level's warps
    stop when the flow's squared change over a warp falls below ``tol`` per point, as
    scikit-image's. Computed in float32 on the GPU (``dtype`` float64 converts the result).

    >>> import numpy as np, lucent
    >>> ref = lucent.ndimage.gaussian_filter(np.random.default_rng(0).random((64, 80)).astype("f4"), 2)
    >>> mov = lucent.ndimage.shift(ref, (1.0, -0.5), mode="nearest")
    >>> flow = lucent.registration.optical_flow_tvl1(ref, mov)
    >>> np.round(flow[:, 32, 40], 1)
    array([ 1. , -0.5], dtype=float32)
    """
    a, b = _flow_images(reference_image, moving_image, dtype)
    flow = _lucent.optical_flow_tvl1(resolve(context), a, b, float(attachment), float(tightness),
                                     count(num_warp, "num_warp"), count(num_iter, "num_iter"), float(tol), bool(prefilter))
    return flow.astype(dtype, copy=False)
