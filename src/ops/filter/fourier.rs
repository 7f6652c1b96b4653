//! scipy.ndimage's Fourier-domain filters of a spectrum (the FFT of an array): `fourier_gaussian`
//! and `fourier_uniform`, separable real factors through the phase-ramp kernel, and
//! `fourier_ellipsoid` (1-3 axes, as scipy) through its own; the frequencies are fourier_shift's
//! (`interpolate::frequencies`), tables computed in f64 on the host.

use ndarray::{ArrayD, IxDyn};
use num_complex::Complex64;
use rayon::prelude::*;

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
    let table = crate::kernels::phase_ramp::upload_factors(rec, flat.iter().map(|&t| Complex64::new(t, 0.0)).collect(), rec.dtype(x))?;
    crate::kernels::phase_ramp::record(rec, x, table)
}

/// The f64 reference of [`record_fourier_filter`] (and fourier_ellipsoid's f64 path: every core).
pub fn fourier_filter_reference(x: &ArrayD<Complex64>, filter: FourierFilter, size: &[f64], real: Option<(usize, usize)>) -> Result<ArrayD<Complex64>> {
    let tables = filter.tables(x.shape(), size, real)?;
    let rank = x.ndim();
    let mut y = x.as_standard_layout().into_owned();
    let dims = x.shape().to_vec();
    let values = y.as_slice_mut().expect("standard layout");
    values.par_iter_mut().enumerate().for_each(|(i, v)| {
        // Element i's index along each axis (row-major).
        let mut at = vec![0; rank];
        let mut rest = i;
        for a in (0..rank).rev() {
            at[a] = rest % dims[a];
            rest /= dims[a];
        }
        let t = (0..rank).map(|a| tables[a][at[a]]);
        *v *= match filter {
            FourierFilter::Ellipsoid => {
                let r = t.map(|t| t * t).sum::<f64>().sqrt();
                match (r == 0.0, rank) {
                    (true, _) => 1.0,
                    (_, 1) => r.sin() / r,
                    (_, 2) => 2.0 * bessel_j1(r) / r,
                    _ => 3.0 * (r.sin() - r * r.cos()) / (r * r * r),
                }
            }
            _ => t.product::<f64>(),
        };
    });
    Ok(y)
}

/// J1(x) to f64's precision (the PSF's A&S form errs by 4e-8): Bessel's integral
/// J1(x) = (1/2π) ∫ cos(τ − x sin τ) dτ over one period by the trapezoidal rule, which for a
/// periodic integrand errs by about J_N(x) with N points: negligible once N exceeds
/// |x| + 12 |x|^(1/3) + 40.
pub fn bessel_j1(x: f64) -> f64 {
    let n = (x.abs() + 12.0 * x.abs().cbrt() + 40.0).ceil() as usize;
    let h = 2.0 * std::f64::consts::PI / n as f64;
    (0..n).map(|j| (j as f64 * h - x * (j as f64 * h).sin()).cos()).sum::<f64>() / n as f64
}

#[cfg(test)]
mod tests {
    #[test]
    fn bessel_j1_to_f64_precision() {
        // Values printed by scipy.special.j1 (1.17).
        for (x, want) in [
            (0.5, 0.24226845767487387),
            (1.0, 0.44005058574493355),
            (3.8317059702075125, -9.335846914555864e-17),
            (10.0, 0.04347274616886141),
            (55.5, -0.10360300589593366),
            (-2.0, -0.5767248077568734),
        ] {
            let got = super::bessel_j1(x);
            assert!((got - want).abs() < 5e-16 * (1.0 + x.abs()), "J1({x}) = {got}, want {want}");
        }
    }
}
