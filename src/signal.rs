//! scipy.signal on the GPU: [`fftconvolve`], [`convolve`] and [`correlate`] of host arrays of
//! 1-4 axes, modes full, same and valid as scipy defines them.
//!
//! Each call decides how to run: direct sums or FFT ([`Method::Auto`] by a cost model), the
//! whole FFT convolution on the device when it fits, else split along axis 0 into independent
//! parts ([`crate::ops::convolve::split`]). Kernel spectra and plans are cached on the `Gpu`, so
//! convolving many images with one kernel transforms the kernel once. The `record_*` forms add
//! the same work to a [`crate::Recording`] of device arrays, for pipelines.
//!
//! ```no_run
//! use ndarray::Array2;
//! let gpu = lucent::Gpu::new()?;
//! let image = Array2::<f32>::ones((480, 640));
//! let kernel = Array2::<f32>::from_elem((9, 9), 1.0 / 81.0);
//! let blurred = lucent::signal::fftconvolve(&gpu, &image, &kernel, lucent::signal::Mode::Same)?;
//! assert_eq!(blurred.dim(), (480, 640));
//! # Ok::<(), lucent::Error>(())
//! ```

use std::slice;

use ndarray::{Array, ArrayBase, ArrayD, ArrayViewD, Data, Dimension};

use crate::error::Result;
use crate::gpu::{narrowed, with_dim, Gpu, Real};
use crate::ops::convolve::host;

pub use crate::ops::convolve::bank::FilterBank;
pub use crate::ops::convolve::host::{convolve as convolve_on, HostRun, Signal};
pub use crate::ops::convolve::split::{convolve_split, convolve_split_with_progress, PartTiming, SplitOptions, SplitReport};
pub use crate::ops::convolve::{
    fftconvolve as record_fftconvolve, fftcorrelate as record_fftcorrelate, signal_convolve as record_convolve, signal_correlate as record_correlate, Method,
    Mode,
};
pub use crate::placement::Progress;
// The cost model of `Method::Auto` (picoseconds), which `lucent bench` calibrates.
pub use crate::ops::convolve::{Geometry, KernelSpectrum, DIRECT_PS_PER_OUTPUT, DIRECT_TILED_PS_PER_TAP, DIRECT_WINDOW_PS_PER_TAP};

/// The CPU references (f64), with the semantics of the GPU functions: what `--device cpu` runs
/// and what the tests compare against.
pub mod cpu {
    pub use crate::ops::convolve::cpu::{fft_signal, full_convolution, signal_convolve as convolve, signal_correlate as correlate};
}

/// scipy.signal.fftconvolve(in1, in2, mode). f64 data is computed in f64 where the device has
/// `SHADER_F64` (whole arrays: one buffer each), else in f32 and converted.
pub fn fftconvolve<T, S1, S2, D>(gpu: &Gpu, in1: &ArrayBase<S1, D>, in2: &ArrayBase<S2, D>, mode: Mode) -> Result<Array<T, D>>
where
    T: Real,
    S1: Data<Elem = T>,
    S2: Data<Elem = T>,
    D: Dimension,
{
    with_dim(run(gpu, &in1.view().into_dyn(), &in2.view().into_dyn(), mode, Method::Fft, false)?)
}

/// scipy.signal.convolve(in1, in2, mode, method) (f64 as [`fftconvolve`]).
pub fn convolve<T, S1, S2, D>(gpu: &Gpu, in1: &ArrayBase<S1, D>, in2: &ArrayBase<S2, D>, mode: Mode, method: Method) -> Result<Array<T, D>>
where
    T: Real,
    S1: Data<Elem = T>,
    S2: Data<Elem = T>,
    D: Dimension,
{
    with_dim(run(gpu, &in1.view().into_dyn(), &in2.view().into_dyn(), mode, method, false)?)
}

/// scipy.signal.correlate(in1, in2, mode, method) (f64 as [`fftconvolve`]).
pub fn correlate<T, S1, S2, D>(gpu: &Gpu, in1: &ArrayBase<S1, D>, in2: &ArrayBase<S2, D>, mode: Mode, method: Method) -> Result<Array<T, D>>
where
    T: Real,
    S1: Data<Elem = T>,
    S2: Data<Elem = T>,
    D: Dimension,
{
    with_dim(run(gpu, &in1.view().into_dyn(), &in2.view().into_dyn(), mode, method, true)?)
}

fn run<T: Real>(gpu: &Gpu, a: &ArrayViewD<T>, k: &ArrayViewD<T>, mode: Mode, method: Method, correlate: bool) -> Result<ArrayD<T>> {
    let op = host::Signal { mode, method, correlate };
    let f32_run = |a: &ArrayViewD<f32>, k: &ArrayViewD<f32>| host::convolve(slice::from_ref(gpu), a, k, op, &SplitOptions::default(), &|_| {}).map(|r| r.0);
    if let (Some(a), Some(k)) = (T::f32_view(a.view()), T::f32_view(k.view())) {
        return Ok(T::from_f32s(f32_run(&a, &k)?));
    }
    if gpu.narrows::<T>() {
        return Ok(T::from_f32s(f32_run(&narrowed(a).view(), &narrowed(k).view())?));
    }
    host::convolve_whole(gpu, a, k, op)
}
