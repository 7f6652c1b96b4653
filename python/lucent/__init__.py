"""lucent: GPU imaging without CUDA.

FFT, convolution, filters, interpolation, deconvolution, registration, tomography, denoising
and PSF models on any Vulkan, Metal or DX12 GPU (through wgpu), or on Mesa's lavapipe software
Vulkan, with the signatures and conventions of numpy.fft, scipy.signal, scipy.ndimage and
scikit-image. numpy.fft, scipy.signal and scipy.ndimage return their references' dtypes
(float64 for float64 input, the input's integer type where scipy keeps it). numpy.fft,
scipy.signal's convolutions and scipy.ndimage (filters, morphology, interpolation of orders 0-5,
the Fourier filters, the distance transform) compute float64, complex128 and integer data in
float64 on devices with it (Vulkan on NVIDIA and AMD, DX12, lavapipe; not Metal, where it is
float32 with a warning); everything else computes in float32 (complex64) and converts the
result.

>>> import numpy, lucent
>>> lucent.signal.fftconvolve(numpy.ones((64, 64), 'f4'), numpy.ones((5, 5), 'f4'), mode='same').shape
(64, 64)

Data can stay on the GPU between calls: :func:`asarray` makes a :class:`Array` (as CuPy's
arrays), every function takes it wherever it takes a numpy array and returns its array results
as :class:`Array`; the filters, resampling, FFTs, phase correlation and Richardson-Lucy run on
it without a host copy (:mod:`lucent._device` lists them), elementwise arithmetic and
reductions keep glue between calls on the device, and ``.get()`` copies the values back.

One process-wide :class:`Context` (the GPU, its FFT plans, kernel spectra and pipelines) is
opened on first use and reused by every call; pass ``context=`` to a function, or call
:func:`set_context`, to choose another GPU.
"""

from . import _lucent
from ._context import Context, adapters, context, info, set_context
from . import denoise, feature, fft, io, ndimage, phantom, psf, registration, restoration, signal, tomography, transform
from ._device import Array, asarray
from . import _resident

_resident.install()

__version__ = _lucent.__version__

__all__ = [
    "Array", "Context", "adapters", "asarray", "context", "info", "set_context",
    "denoise", "feature", "fft", "io", "ndimage", "phantom", "psf", "registration", "restoration", "signal", "tomography",
    "transform",
]
