"""lucent: GPU imaging without CUDA.

FFT, convolution, filters, interpolation, deconvolution, registration, tomography, denoising
and PSF models on any Vulkan, Metal or DX12 GPU (through wgpu), or on Mesa's lavapipe software
Vulkan, with the signatures and conventions of numpy.fft, scipy.signal, scipy.ndimage and
scikit-image. Every computation runs in float32 (complex64): float64 input is computed in
float32 and the result is float32.

>>> import numpy, lucent
>>> lucent.signal.fftconvolve(numpy.ones((64, 64), 'f4'), numpy.ones((5, 5), 'f4'), mode='same').shape
(64, 64)

One process-wide :class:`Context` (the GPU, its FFT plans, kernel spectra and pipelines) is
opened on first use and reused by every call; pass ``context=`` to a function, or call
:func:`set_context`, to choose another GPU.
"""

from . import _lucent
from ._context import Context, adapters, context, info, set_context
from . import denoise, feature, fft, ndimage, psf, registration, restoration, signal, tomography, transform

__version__ = _lucent.__version__

__all__ = [
    "Context", "adapters", "context", "info", "set_context",
    "denoise", "feature", "fft", "ndimage", "psf", "registration", "restoration", "signal", "tomography",
    "transform",
]
