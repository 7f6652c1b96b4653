"""skimage.restoration's Richardson-Lucy and Wiener-Hunt deconvolution on the GPU, with lucent's options as
extra keywords (boundaries, total-variation regularisation, acceleration, a stopping rule,
spatially varying PSFs, a model PSF instead of a measured one), blind Richardson-Lucy; and the
adaptive denoising of :mod:`lucent.denoise`.

Computed in float32 (float64 input too); the result is float32.

>>> import numpy as np, lucent
>>> image = np.random.rand(32, 48).astype("f4")
>>> psf = np.ones((5, 5), "f4") / 25
>>> lucent.restoration.richardson_lucy(image, psf, num_iter=10).shape
(32, 48)
"""

from __future__ import annotations

from typing import Any, Literal, Optional

import numpy as np

from . import _lucent
from ._arrays import axis, count, real
from ._context import Context, resolve

Boundary = Literal["zero", "periodic", "extended"]

__all__ = ["richardson_lucy", "richardson_lucy_grid", "blind_richardson_lucy", "wiener", "unsupervised_wiener", "denoise_tv_chambolle",
           "denoise_nl_means", "estimate_sigma", "denoise_tv_bregman", "denoise_invariant", "calibrate_denoiser"]


def _as_float(image: Any, what: str, preserve_range: Optional[bool] = None) -> np.ndarray:
    """scikit-image's ``img_as_float`` as its denoisers apply it: unsigned integers scaled to
    [0, 1], booleans as 0 and 1, floats as they are; signed integers refused (their scale is the
    caller's to choose). ``preserve_range`` (where the function has it) keeps integers as they
    are."""
    a = np.asarray(image)
    if preserve_range:
        return a
    if a.dtype.kind == "u":
        return a / np.iinfo(a.dtype).max
    if a.dtype.kind == "i":
        hint = ", or give preserve_range=True" if preserve_range is not None else ""
        raise TypeError(f"{what}: convert signed integer images with skimage.img_as_float first{hint}")
    if a.dtype.kind == "b":
        return a.astype(np.float32)
    return a


def _options(init: Optional[float], normalize_psf: bool, filter_epsilon: Optional[float], boundary: str,
             tv: Optional[float], accelerate: bool, stop: Optional[tuple], eps: float, clip_negative: bool) -> dict:
    # Negative values go into the update as scikit-image lets them, unless clipped.
    o = {"normalize_psf": bool(normalize_psf), "boundary": boundary, "accelerate": bool(accelerate), "eps": float(eps),
         "clip_negative": bool(clip_negative), "allow_negative": not clip_negative}
    if init is not None:
        o["init"] = float(init)
    # scikit-image tests `if filter_epsilon:`, so 0 means none.
    if filter_epsilon:
        o["filter_epsilon"] = float(filter_epsilon)
    if tv is not None:
        o["tv"] = float(tv)
    if stop is not None:
        tolerance, every = stop
        o["stop"] = (float(tolerance), int(every))
    return o


def _model_psf(shape: tuple, psf_model: dict, context: Optional[Context]) -> np.ndarray:
    """The model PSF (lucent.psf.make_psf's keywords in ``psf_model``; ``dxy``, and ``dz`` for a
    3D image, required) at the size lucent deconvolve --psf-model makes it, summing to 1."""
    from .psf import make_psf
    o = dict(psf_model)
    for key in ("z", "nx", "normalize"):
        if key in o:
            raise ValueError(f"psf_model: '{key}' follows from the image's shape")
    if "dxy" not in o or (len(shape) == 3) != ("dz" in o):
        raise ValueError("psf_model needs 'dxy' (the pixel size, µm) and, for a 3D image only, 'dz' (its step)")
    nz, nx = _lucent.psf_size_for_image([int(n) for n in shape])
    if len(shape) == 2:
        # The focal plane: the source's own plane, as lucent deconvolve --psf-model.
        psf = make_psf([float(o.get("pz", 0.0))], nx, context=context, **o)[0]
    else:
        psf = make_psf(nz, nx, context=context, **o)
    return psf / psf.sum(dtype=np.float64)


def _psf(image: np.ndarray, psf: Any, psf_model: Optional[dict], context: Optional[Context]) -> np.ndarray:
    if (psf is None) == (psf_model is None):
        raise TypeError("give psf (an array) or psf_model (lucent.psf.make_psf's keywords), not both or neither")
    return real(psf, "psf") if psf_model is None else np.ascontiguousarray(_model_psf(image.shape, psf_model, context), "f4")


def richardson_lucy(image: Any, psf: Any = None, num_iter: int = 50, clip: bool = True, filter_epsilon: Optional[float] = None,
                    *, psf_model: Optional[dict] = None, init: Optional[float] = 0.5, normalize_psf: bool = False,
                    boundary: Boundary = "zero", tv: Optional[float] = None, accelerate: bool = False,
                    stop: Optional[tuple[float, int]] = None, eps: float = 1e-12, clip_negative: bool = False,
                    context: Optional[Context] = None) -> np.ndarray:
    """skimage.restoration.richardson_lucy: ``num_iter`` Richardson-Lucy iterations from a
    constant 0.5, clipped to [-1, 1] at the end when ``clip``.

    lucent's keywords: ``init`` (the first estimate's constant; None starts from the image),
    ``normalize_psf`` (divide the PSF by its sum), ``boundary`` ("zero": scipy's 'same'
    convolution, "periodic", or "extended": Bertero-Boccacci's object beyond the image),
    ``tv`` (Richardson-Lucy-TV's lambda, 0.001 to 0.01 typical), ``accelerate`` (Biggs-Andrews),
    ``stop=(tolerance, every)`` (end when the relative change falls below tolerance, checked
    every ``every`` iterations), ``eps`` (added to the blurred estimate), ``clip_negative``
    (True: negative image values, such as noise or an FFT's round-off, are clipped to 0;
    False, the default: they go into the update as scikit-image lets them). A PSF of fewer axes
    than the image deconvolves every slice along the leading axes. For PSFs of even length the
    update correlates with the PSF (the exact adjoint of the blur), where scikit-image convolves
    with the flipped PSF in 'same' mode, one sample off; for odd lengths the two agree.

    No measured PSF: ``psf_model`` instead of ``psf``, a dict of :func:`lucent.psf.make_psf`'s
    keywords (``dxy`` and for a 3D image ``dz`` required; ``NA``, ``wvl``, ``ni``, ``ns``,
    ``pz``, ``model``, ...): the model is made at the image's scale (odd, at most 65 planes and
    pixels; 2D: the focal plane) and divided by its sum.

    >>> import numpy as np, lucent
    >>> x = np.zeros((17, 19), "f4"); x[8, 9] = 1
    >>> psf = np.ones((3, 3), "f4") / 9
    >>> blurred = lucent.signal.fftconvolve(x, psf, mode="same")
    >>> bool(lucent.restoration.richardson_lucy(blurred, psf, 30)[8, 9] > 0.5)
    True
    """
    o = _options(init, normalize_psf, filter_epsilon, boundary, tv, accelerate, stop, eps, clip_negative)
    x = real(image, "image")
    h = _psf(x, psf, psf_model, context)
    return _lucent.richardson_lucy(resolve(context), x, h, count(num_iter, "num_iter"), False, bool(clip), o)[0]


def blind_richardson_lucy(image: Any, psf: Any = None, num_iter: int = 50, *, psf_model: Optional[dict] = None,
                          psf_iter: int = 1, psf_prior: float = 0.0, clip: bool = False,
                          filter_epsilon: Optional[float] = None, init: Optional[float] = None,
                          boundary: Literal["zero", "periodic"] = "zero", eps: float = 1e-12, clip_negative: bool = False,
                          context: Optional[Context] = None) -> tuple[np.ndarray, np.ndarray]:
    """Blind Richardson-Lucy (Fish et al. 1995, as MATLAB's ``deconvblind``): the image and its
    PSF restored together from a starting PSF (``psf``, or ``psf_model`` as in
    :func:`richardson_lucy`). Each of ``num_iter`` iterations updates the object once with the
    current PSF, then the PSF ``psf_iter`` times with the current object; the PSF stays within the
    starting PSF's box, non-negative and of sum 1, and with ``psf_prior`` λ > 0 is pulled
    towards the start after each update (h = (h + λ h₀)/(1 + λ)). Starts from the image (``init``:
    a constant instead); ``clip`` clips the image to [-1, 1]. Returns (image, psf), float32.

    As with every blind method, many iterations on a sparse object (beads on black) drift
    towards the trivial solution, a sharp PSF and the image itself: stop early (tens of
    iterations), or hold the PSF near a model with ``psf_prior``.

    >>> import numpy as np, lucent
    >>> x = np.full((40, 40), 0.02, "f4"); x[10::9, 12::8] = 1; x[15:25, 5:15] += 0.3
    >>> true_psf = np.exp(-((np.arange(9) - 4.0) ** 2) / 4)[:, None] * np.exp(-((np.arange(9) - 4.0) ** 2) / 4)
    >>> blurred = lucent.signal.fftconvolve(x, true_psf / true_psf.sum(), mode="same")
    >>> wide = np.exp(-((np.arange(9) - 4.0) ** 2) / 16)[:, None] * np.exp(-((np.arange(9) - 4.0) ** 2) / 16)
    >>> restored, psf = lucent.restoration.blind_richardson_lucy(blurred, wide, 30)
    >>> err = lambda p: float(np.linalg.norm(p - true_psf / true_psf.sum()))
    >>> err(psf) < 0.5 * err(wide / wide.sum())
    True
    """
    if boundary not in ("zero", "periodic"):
        raise ValueError(f"boundary '{boundary}' (blind Richardson-Lucy takes zero or periodic)")
    o = _options(init, True, filter_epsilon, boundary, None, False, None, eps, clip_negative)
    if init is None:
        o.pop("init", None)
    x = real(image, "image")
    h = _psf(x, psf, psf_model, context)
    estimate, recovered = _lucent.blind_richardson_lucy(resolve(context), x, h, count(num_iter, "num_iter"),
                                                         count(psf_iter, "psf_iter"), float(psf_prior), o)
    if clip:
        np.clip(estimate, -1, 1, out=estimate)
    return estimate, recovered


def richardson_lucy_grid(image: Any, psfs: Any, num_iter: int = 50, clip: bool = True,
                         filter_epsilon: Optional[float] = None, *, init: Optional[float] = 0.5, normalize_psf: bool = False,
                         boundary: Boundary = "zero", tv: Optional[float] = None, accelerate: bool = False,
                         stop: Optional[tuple[float, int]] = None, eps: float = 1e-12, clip_negative: bool = False,
                         context: Optional[Context] = None) -> np.ndarray:
    """:func:`richardson_lucy` with a spatially varying PSF: ``psfs`` has one PSF per region of
    a regular grid over the image's last axes, shape (grid rows, grid columns, *psf shape); each
    region is deconvolved in tiles with its own PSF and the tiles are blended.

    >>> import numpy as np, lucent
    >>> image = np.random.rand(40, 40).astype("f4")
    >>> psfs = np.ones((2, 2, 3, 3), "f4") / 9
    >>> lucent.restoration.richardson_lucy_grid(image, psfs, 5).shape
    (40, 40)
    """
    o = _options(init, normalize_psf, filter_epsilon, boundary, tv, accelerate, stop, eps, clip_negative)
    return _lucent.richardson_lucy(resolve(context), real(image, "image"), real(psfs, "psfs"), count(num_iter, "num_iter"), True, bool(clip), o)[0]


def wiener(image: Any, psf: Any, balance: float, reg: Any = None, is_real: bool = True, clip: bool = True, *,
           context: Optional[Context] = None) -> np.ndarray:
    """skimage.restoration.wiener: Wiener-Hunt deconvolution with the Laplacian regulariser,
    ``conj(H) / (|H|² + balance |L|²)`` on the image's spectrum (circular), ``psf`` an impulse
    response of the image's axes (element m // 2 of each axis is its centre; not normalised),
    the result clipped to [-1, 1] when ``clip``.

    ``reg`` (another regulariser) and ``psf`` given as a transfer function are not implemented;
    ``is_real`` only says which half of the spectrum such inputs would be given over, so with an
    impulse response either value gives the same result.

    >>> import numpy as np, lucent
    >>> x = np.zeros((16, 16), "f4"); x[8, 8] = 1
    >>> psf = np.ones((3, 3), "f4") / 9
    >>> blurred = lucent.signal.fftconvolve(x, psf, mode="same")
    >>> restored = lucent.restoration.wiener(blurred, psf, 1e-4)
    >>> bool(restored[8, 8] > 0.7 > 3 * blurred[8, 8])  # the point sharpened back (skimage: 0.742)
    True
    """
    if reg is not None:
        raise NotImplementedError("wiener: reg (a regulariser other than the Laplacian) is not implemented")
    psf = np.asarray(psf)
    if np.iscomplexobj(psf):
        raise NotImplementedError("wiener: a PSF given as a transfer function (complex) is not implemented; give the impulse response")
    return _lucent.wiener(resolve(context), real(image, "image"), real(psf, "psf"), float(balance), bool(clip))


def unsupervised_wiener(image: Any, psf: Any, reg: Any = None, user_params: Optional[dict] = None, is_real: bool = True,
                        clip: bool = True, *, rng: Any = None, context: Optional[Context] = None) -> tuple[np.ndarray, dict]:
    """skimage.restoration.unsupervised_wiener: Wiener-Hunt deconvolution with the regularisation
    and the noise estimated by a Gibbs sampler (Orieux et al. 2010), the posterior mean of the
    object's samples returned with the chains ``{'noise': [...], 'prior': [...]}``.
    ``user_params`` as scikit-image's (``threshold`` 1e-4, ``max_num_iter`` 200, ``min_num_iter``
    30, ``burnin`` 15); ``rng`` an int seed or a numpy Generator (one number drawn from it seeds
    lucent's own generator), None for a fresh seed.

    The random draws are lucent's (on the GPU), not numpy's: for a given ``rng`` the chains and
    the estimate are not scikit-image's draw for draw but follow the same law (the test suite
    compares them with scikit-image's own spread between seeds). In 2D the computation is
    scikit-image's; 3D images are transformed over every axis (scikit-image mixes 2D transforms
    of the last two axes with N-D transfer functions there). ``reg``, a ``callback`` (the samples
    stay on the device) and a PSF given as a transfer function are not implemented.

    >>> import numpy as np, lucent
    >>> x = np.zeros((32, 32), "f4"); x[8:24, 12:20] = 1
    >>> psf = np.ones((3, 3), "f4") / 9
    >>> blurred = lucent.signal.fftconvolve(x, psf, mode="same") + 0.01 * np.random.default_rng(0).standard_normal(x.shape)
    >>> restored, chains = lucent.restoration.unsupervised_wiener(blurred, psf, rng=1)
    >>> restored.shape, len(chains["noise"]) == len(chains["prior"]) > 30
    ((32, 32), True)
    """
    if reg is not None:
        raise NotImplementedError("unsupervised_wiener: reg (a regulariser other than the Laplacian) is not implemented")
    psf = np.asarray(psf)
    if np.iscomplexobj(psf):
        raise NotImplementedError("unsupervised_wiener: a PSF given as a transfer function (complex) is not implemented")
    params = {"threshold": 1e-4, "max_num_iter": 200, "min_num_iter": 30, "burnin": 15, "callback": None}
    params.update(user_params or {})
    unknown = set(params) - {"threshold", "max_num_iter", "min_num_iter", "burnin", "callback"}
    if unknown:
        raise ValueError(f"unsupervised_wiener: unknown user_params {sorted(unknown)}")
    if params["callback"] is not None:
        raise NotImplementedError("unsupervised_wiener: a callback is not implemented (the samples stay on the device)")
    if isinstance(rng, np.random.Generator):
        seed = int(rng.integers(2**63))
    elif rng is None:
        seed = int(np.random.default_rng().integers(2**63))
    else:
        seed = count(rng, "rng")
    x, noise, prior = _lucent.unsupervised_wiener(resolve(context), real(image, "image"), real(psf, "psf"),
                                                  float(params["threshold"]), count(params["max_num_iter"], "max_num_iter"),
                                                  count(params["min_num_iter"], "min_num_iter"),
                                                  count(params["burnin"], "burnin"), bool(clip), seed)
    return x, {"noise": noise, "prior": prior}


def denoise_tv_chambolle(image: Any, weight: float = 0.1, eps: float = 2.0e-4, max_num_iter: int = 200, *,
                         channel_axis: Optional[int] = None, context: Optional[Context] = None) -> np.ndarray:
    """skimage.restoration.denoise_tv_chambolle: total-variation denoising by Chambolle's
    projection algorithm, the minimiser of ½‖u − image‖² + weight · TV(u) over every axis (1 to
    3) but ``channel_axis`` (each channel on its own), stopping when the energy changes by less
    than ``eps`` times its first value, or after ``max_num_iter`` steps; the rule is kept on the
    device. Unsigned integer images are scaled to [0, 1] first, as ``img_as_float`` does.

    >>> import numpy as np, lucent
    >>> x = np.zeros((32, 32), "f4"); x[8:24, 8:24] = 1
    >>> noisy = x + 0.2 * np.random.default_rng(0).standard_normal(x.shape).astype("f4")
    >>> denoised = lucent.restoration.denoise_tv_chambolle(noisy, weight=0.2)
    >>> bool(np.abs(denoised - x).mean() < 0.5 * np.abs(noisy - x).mean())
    True
    """
    a = _as_float(image, "denoise_tv_chambolle")
    if channel_axis is not None:
        channel_axis = axis(channel_axis, a.ndim)
    return _lucent.denoise_tv_chambolle(resolve(context), real(a, "image"), float(weight), float(eps),
                                        count(max_num_iter, "max_num_iter"), channel_axis)


def estimate_sigma(image: Any, average_sigmas: bool = False, *, channel_axis: Optional[int] = None) -> Any:
    """skimage.restoration.estimate_sigma: the standard deviation of Gaussian noise from the
    finest diagonal wavelet detail (PyWavelets' ``dwtn(image, "db2")``):
    median(|detail|) / Φ⁻¹(0.75), exactly zero details left out; per channel (a list, or their
    mean with ``average_sigmas``) when ``channel_axis`` is given. In float64 on the host, values
    as they are (integers are not rescaled, as in scikit-image).

    >>> import numpy as np, lucent
    >>> noise = np.random.default_rng(0).normal(0, 0.1, (256, 256))
    >>> round(lucent.restoration.estimate_sigma(noise), 2)
    0.1
    """
    a = np.asarray(image)
    if a.dtype == object or a.dtype.kind not in "biuf":
        raise TypeError(f"estimate_sigma takes a real image, not {a.dtype}")
    if channel_axis is not None:
        channel_axis = axis(channel_axis, a.ndim)
        sigmas = [estimate_sigma(np.take(a, c, axis=channel_axis)) for c in range(a.shape[channel_axis])]
        return float(np.mean(sigmas)) if average_sigmas else sigmas
    if a.ndim and a.shape[-1] <= 4:
        import warnings
        warnings.warn(f"image is size {a.shape[-1]} on the last axis, but channel_axis is None. If this is a color "
                      "image, please set channel_axis=-1 for proper noise estimation.", stacklevel=2)
    return _lucent.estimate_sigma(np.ascontiguousarray(a, dtype=np.float64))


def denoise_nl_means(image: Any, patch_size: int = 7, patch_distance: int = 11, h: float = 0.1, fast_mode: bool = True,
                     sigma: float = 0.0, *, preserve_range: bool = False, channel_axis: Optional[int] = None,
                     context: Optional[Context] = None) -> np.ndarray:
    """skimage.restoration.denoise_nl_means with scikit-image's arithmetic: each pixel the mean
    of the pixels within ``patch_distance`` weighted by exp(−distance) of their ``patch_size``
    patches (less 2σ² per pixel with ``sigma``, normalised by ``h``² and the patch's size,
    weights 0 beyond a distance of 5), the image padded by reflection; in the fast mode (the
    default; Darbon et al. 2008, Froment 2014) uniform patches, with ``fast_mode=False``
    Gaussian-weighted ones. 2-D images and 3-D volumes, grey or with ``channel_axis`` (the
    channels share the weights; volumes with channels in fast mode only, as in scikit-image);
    4-D images are not implemented yet. Unsigned integer images are scaled to [0, 1] first
    unless ``preserve_range``.

    >>> import numpy as np, lucent
    >>> x = np.zeros((40, 40), "f4"); x[10:30, 10:30] = 1
    >>> noisy = x + 0.3 * np.random.default_rng(0).standard_normal(x.shape).astype("f4")
    >>> denoised = lucent.restoration.denoise_nl_means(noisy, patch_size=5, patch_distance=6, h=0.3)
    >>> bool(np.abs(denoised - x).mean() < 0.5 * np.abs(noisy - x).mean())
    True
    """
    a = _as_float(image, "denoise_nl_means", bool(preserve_range))
    if channel_axis is not None:
        channel_axis = axis(channel_axis, a.ndim)
    return _lucent.denoise_nl_means(resolve(context), real(a, "image"), count(patch_size, "patch_size"),
                                    count(patch_distance, "patch_distance"), float(h), bool(fast_mode), float(sigma),
                                    channel_axis)


def denoise_tv_bregman(image: Any, weight: float = 5.0, max_num_iter: int = 100, eps: float = 1e-3,
                       isotropic: bool = True, *, channel_axis: Optional[int] = None,
                       context: Optional[Context] = None) -> np.ndarray:
    """skimage.restoration.denoise_tv_bregman: split-Bregman total variation (Goldstein and Osher
    2009) by scikit-image's Gauss-Seidel sweeps in its raster order (anti-diagonal by anti-
    diagonal on the GPU, so the result is its result, in float32), until the root mean square
    change of a sweep is at most ``eps`` or ``max_num_iter`` sweeps. An image whose third axis,
    if any, is solved together, or with ``channel_axis`` each channel on its own (starting, as
    in scikit-image, from the previous channel's result). Squeezed as scikit-image returns it.

    >>> import numpy as np, lucent
    >>> x = np.zeros((32, 32), "f4"); x[8:24, 8:24] = 1
    >>> noisy = x + 0.3 * np.random.default_rng(0).standard_normal(x.shape).astype("f4")
    >>> denoised = lucent.restoration.denoise_tv_bregman(noisy, weight=4.0)
    >>> bool(np.abs(denoised - x).mean() < 0.5 * np.abs(noisy - x).mean())
    True
    """
    a = _as_float(image, "denoise_tv_bregman")
    if channel_axis is not None:
        channel_axis = axis(channel_axis, a.ndim)
    y = _lucent.denoise_tv_bregman(resolve(context), real(a, "image"), float(weight), count(max_num_iter, "max_num_iter"),
                                   float(eps), bool(isotropic), channel_axis)
    return np.squeeze(y)


def _interpolate_image(image: np.ndarray, multichannel: bool, context: Optional[Context]) -> np.ndarray:
    """Each pixel the mean of its face neighbours (scikit-image's ``_interpolate_image``: a
    cross without its centre, numpy's 'mirror' edges), by lucent.ndimage.convolve."""
    from .ndimage import convolve

    spatial = image.ndim - 1 if multichannel else image.ndim
    cross = np.zeros((3,) * spatial, np.float32)
    for a in range(spatial):
        index = [1] * spatial
        for k in (0, 2):
            index[a] = k
            cross[tuple(index)] = 1
    cross /= cross.sum()
    if not multichannel:
        return convolve(image, cross, mode="mirror", context=context)
    return np.stack([convolve(image[..., c], cross, mode="mirror", context=context) for c in range(image.shape[-1])], axis=-1)


def _grid_slice(shape: tuple, offset: int, stride: int) -> tuple:
    phases = np.unravel_index(offset, (stride,) * len(shape))
    return tuple(slice(p, None, stride) for p in phases)


def denoise_invariant(image: Any, denoise_function: Any, *, stride: int = 4, masks: Any = None,
                      denoiser_kwargs: Optional[dict] = None, context: Optional[Context] = None) -> np.ndarray:
    """skimage.restoration.denoise_invariant: the J-invariant version of ``denoise_function``
    (Batson and Royer 2019, Noise2Self): for each of the stride^ndim interleaved grids (or each of
    ``masks``), the grid's pixels replaced by their neighbours' mean, denoised, and the grid's
    results kept, so no prediction uses its own pixel. ``denoise_function`` is any callable of
    an image (lucent's denoisers run on the GPU); the interpolation runs on the GPU too, in
    float32. ``channel_axis`` in ``denoiser_kwargs`` marks the last axis as channels.

    >>> import numpy as np, lucent
    >>> x = np.random.default_rng(0).random((24, 24)).astype("f4")
    >>> lucent.restoration.denoise_invariant(x, lucent.restoration.denoise_tv_chambolle).shape
    (24, 24)
    """
    image = np.asarray(_as_float(image, "denoise_invariant"), np.float32)
    kwargs = dict(denoiser_kwargs or {})
    multichannel = kwargs.get("channel_axis") is not None
    spatial = image.ndim - 1 if multichannel else image.ndim
    interp = _interpolate_image(image, multichannel, context)
    output = np.zeros_like(image)
    if masks is None:
        masks = (_grid_slice(image.shape[:spatial], offset, count(stride, "stride")) for offset in range(stride ** spatial))
    for mask in masks:
        masked = image.copy()
        masked[mask] = interp[mask]
        output[mask] = np.asarray(denoise_function(masked, **kwargs))[mask]
    return output


def calibrate_denoiser(image: Any, denoise_function: Any, denoise_parameters: dict, *, stride: int = 4,
                       approximate_loss: bool = True, extra_output: bool = False,
                       context: Optional[Context] = None) -> Any:
    """skimage.restoration.calibrate_denoiser: the J-invariant ``denoise_function`` with the
    parameters (every combination of ``denoise_parameters``' lists) whose self-supervised loss,
    the mean squared difference between the noisy image and its J-invariant denoising, is
    least (with ``approximate_loss``, on the middle grid alone, as scikit-image). Returns the
    calibrated function (a functools.partial of :func:`denoise_invariant`), and with
    ``extra_output`` also (the parameters tested, their losses).

    >>> import numpy as np, lucent
    >>> rng = np.random.default_rng(0)
    >>> x = np.zeros((32, 32), "f4"); x[8:24, 8:24] = 1
    >>> noisy = (x + 0.3 * rng.standard_normal(x.shape)).astype("f4")
    >>> best, (tested, losses) = lucent.restoration.calibrate_denoiser(
    ...     noisy, lucent.restoration.denoise_tv_chambolle, {"weight": [0.01, 0.1, 0.3]}, extra_output=True)
    >>> len(tested), best(noisy).shape
    (3, (32, 32))
    """
    import functools
    import itertools

    image = np.asarray(_as_float(image, "calibrate_denoiser"), np.float32)
    keys = list(denoise_parameters.keys())
    tested = [dict(zip(keys, values)) for values in itertools.product(*denoise_parameters.values())]
    losses = []
    for kwargs in tested:
        multichannel = kwargs.get("channel_axis") is not None
        if approximate_loss:
            spatial = image.ndim - 1 if multichannel else image.ndim
            mask = _grid_slice(image.shape[:spatial], stride ** spatial // 2, stride)
            denoised = denoise_invariant(image, denoise_function, masks=[mask], denoiser_kwargs=kwargs, context=context)
            losses.append(float(np.mean((image[mask].astype(np.float64) - denoised[mask]) ** 2)))
        else:
            denoised = denoise_invariant(image, denoise_function, stride=stride, denoiser_kwargs=kwargs, context=context)
            losses.append(float(np.mean((image.astype(np.float64) - denoised) ** 2)))
    best = functools.partial(denoise_invariant, denoise_function=denoise_function, stride=stride,
                             denoiser_kwargs=tested[int(np.argmin(losses))], context=context)
    return (best, (tested, losses)) if extra_output else best
