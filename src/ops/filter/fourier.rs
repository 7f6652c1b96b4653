//! scipy.ndimage's Fourier-domain filters of a spectrum (the FFT of an array): `fourier_gaussian`
//! and `fourier_uniform`, separable real factors through the phase-ramp kernel, and
//! `fourier_ellipsoid` (1-3 axes, as scipy) through its own; the frequencies are fourier_shift's
//! (`interpolate::frequencies`), tables computed in f64 on the host.

use ndarray::{ArrayD, IxDyn};
use num_complex::{Complex32, Complex64};

use crate::error::{Error, Result};
use crate::graph::{Buf, Recording};
use crate::ops::interpolate::frequencies;

/// Which transfer function multiplies the spectrum (each with one size per axis).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FourierFilter {
    /// exp(−2π² σ² f²) per axis: a Gaussian filter of standard deviation σ.
    Gaussian,
    /// sinc(size · f) per axis: a box of `size` samples.
    Uniform,
    /// The transform of an ellipsoid of diameters `size` (a box in 1-D, a disc in 2-D).
    Ellipsoid,
}

impl FourierFilter {
    fn name(self) -> &'static str {
        match self {
            FourierFilter::Gaussian => "fourier_gaussian",
            FourierFilter::Uniform => "fourier_uniform",
            FourierFilter::Ellipsoid => "fourier_ellipsoid",
        }
    }

    /// Per axis, for every sample: the separable factor, or for the ellipsoid π · size · f.
    fn tables(self, dims: &[usize], size: &[f64], real: Option<(usize, usize)>) -> Result<Vec<Vec<f64>>> {
        let name = self.name();
        let size = super::super::per_axis(size, dims.len(), name)?;
        if size.iter().any(|s| !s.is_finite()) {
            return Err(Error::NonFinite(format!("{name}: size {size:?}")));
        }
        if self == FourierFilter::Ellipsoid && !(1..=3).contains(&dims.len()) {
            return Err(Error::Invalid(format!("{name}: a spectrum of {} axes (1, 2 or 3, as scipy)", dims.len())));
        }
        let pi = std::f64::consts::PI;
        let factor = |s: f64, f: f64| match self {
            FourierFilter::Gaussian => (-2.0 * pi * pi * s * s * f * f).exp(),
            FourierFilter::Uniform if s * f == 0.0 => 1.0,
            FourierFilter::Uniform => (pi * s * f).sin() / (pi * s * f),
            FourierFilter::Ellipsoid => pi * s * f,
        };
        Ok(frequencies(dims, real, name)?.iter().zip(&size).map(|(f, &s)| f.iter().map(|&f| factor(s, f)).collect()).collect())
    }
}

/// A complex spectrum `x` times the filter's transfer function, `size` one value or one per
/// axis (σ for the Gaussian); `real` = (axis, n) when `x` is a real transform's half spectrum
/// along `axis` of a length-n signal (scipy's `n ≥ 0`).
pub fn record_fourier_filter(rec: &mut Recording, x: Buf, filter: FourierFilter, size: &[f64], real: Option<(usize, usize)>) -> Result<Buf> {
    let tables = filter.tables(rec.dims(x), size, real)?;
    let flat: Vec<f64> = tables.concat();
    let one_axis = |v: Vec<f32>| ArrayD::from_shape_vec(IxDyn(&[v.len()]), v).expect("one axis");
    if filter == FourierFilter::Ellipsoid {
        let table = rec.upload_f32(&one_axis(flat.iter().map(|&t| t as f32).collect()).view())?;
        return crate::kernels::fourier_ellipsoid::record(rec, x, table);
    }
    let complex: Vec<Complex32> = flat.iter().map(|&t| Complex32::new(t as f32, 0.0)).collect();
    let table = rec.upload_c32(&ArrayD::from_shape_vec(IxDyn(&[complex.len()]), complex).expect("one axis").view())?;
    crate::kernels::phase_ramp::record(rec, x, table)
}

/// The f64 reference of [`record_fourier_filter`].
pub fn fourier_filter_reference(x: &ArrayD<Complex64>, filter: FourierFilter, size: &[f64], real: Option<(usize, usize)>) -> Result<ArrayD<Complex64>> {
    let tables = filter.tables(x.shape(), size, real)?;
    let rank = x.ndim();
    let mut y = x.clone();
    for (at, v) in y.indexed_iter_mut() {
        let t = (0..rank).map(|a| tables[a][at[a]]);
        *v *= match filter {
            FourierFilter::Ellipsoid => {
                let r = t.map(|t| t * t).sum::<f64>().sqrt();
                match (r == 0.0, rank) {
                    (true, _) => 1.0,
                    (_, 1) => r.sin() / r,
                    (_, 2) => 2.0 * crate::ops::psf::cpu::bessel_j1(r) / r,
                    _ => 3.0 * (r.sin() - r * r.cos()) / (r * r * r),
                }
            }
            _ => t.product::<f64>(),
        };
    }
    Ok(y)
}
