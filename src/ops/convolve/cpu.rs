//! CPU references of scipy.signal's convolution with the GPU path's semantics: direct sums in
//! f64, and an FFT version on rustfft for the CLI's CPU fallback. Arguments are expected valid
//! except where a `Result` says otherwise.

use ndarray::{ArrayD, Axis, IxDyn, Slice, Zip};
use num_complex::Complex;
use rustfft::FftNum;

use super::{Geometry, Mode};
use crate::error::Result;
use crate::fft::{self, Norm};

/// The full linear convolution by direct sums: `out[i + j] += a[i] · k[j]`.
pub fn full_convolution(a: &ArrayD<f64>, k: &ArrayD<f64>) -> ArrayD<f64> {
    let dims: Vec<usize> = a.shape().iter().zip(k.shape()).map(|(n, m)| n + m - 1).collect();
    let mut out = ArrayD::zeros(IxDyn(&dims));
    for (i, &v) in a.indexed_iter() {
        let mut window = out.slice_each_axis_mut(|ax| Slice::from(i[ax.axis.0]..i[ax.axis.0] + k.shape()[ax.axis.0]));
        window.scaled_add(v, k);
    }
    out
}

/// scipy.signal.convolve(a, k, mode): the full convolution cropped to the mode's window.
pub fn signal_convolve(a: &ArrayD<f64>, k: &ArrayD<f64>, mode: Mode) -> Result<ArrayD<f64>> {
    let g = Geometry::new(a.shape(), k.shape(), mode)?;
    let full = full_convolution(a, k);
    Ok(full.slice_each_axis(|ax| Slice::from(g.start[ax.axis.0]..g.start[ax.axis.0] + g.out[ax.axis.0])).to_owned())
}

/// scipy.signal.correlate(a, k, mode): the convolution with the kernel reversed.
pub fn signal_correlate(a: &ArrayD<f64>, k: &ArrayD<f64>, mode: Mode) -> Result<ArrayD<f64>> {
    signal_convolve(a, &reverse(k), mode)
}

/// The FFT path of the GPU on rustfft, in `T` (the CLI's CPU fallback): pad to the geometry's
/// lengths, real transforms, (conjugate) product, crop with wrap-around.
pub fn fft_signal<T: FftNum>(a: &ArrayD<T>, k: &ArrayD<T>, mode: Mode, correlate: bool) -> Result<ArrayD<T>> {
    let g = Geometry::new(a.shape(), k.shape(), mode)?;
    let axes: Vec<usize> = (0..g.padded.len()).collect();
    let spectrum = |x: &ArrayD<T>| {
        let mut padded = ArrayD::from_elem(IxDyn(&g.padded), T::zero());
        padded.slice_each_axis_mut(|ax| Slice::from(0..x.shape()[ax.axis.0])).assign(x);
        fft::cpu::r2c(&padded, &axes, Norm::Backward)
    };
    let (mut fa, fk) = (spectrum(a), spectrum(k));
    Zip::from(&mut fa).and(&fk).for_each(|x, &y: &Complex<T>| *x = *x * if correlate { y.conj() } else { y });
    let full = fft::cpu::c2r(&fa, &axes, *g.padded.last().unwrap(), Norm::Backward);
    let origin: Vec<i64> = if correlate { g.window_origin() } else { g.start.iter().map(|&s| s as i64).collect() };
    Ok(ArrayD::from_shape_fn(IxDyn(&g.out), |o| {
        let src: Vec<usize> = (0..g.out.len()).map(|d| (origin[d] + o[d] as i64).rem_euclid(g.padded[d] as i64) as usize).collect();
        full[IxDyn(&src)]
    }))
}

// ---------------------------------------------------------------------------------------------
// Helpers

/// Reversed along every axis.
pub fn reverse<T: Clone>(x: &ArrayD<T>) -> ArrayD<T> {
    let mut v = x.view();
    for a in 0..v.ndim() {
        v.invert_axis(Axis(a));
    }
    v.as_standard_layout().into_owned()
}
