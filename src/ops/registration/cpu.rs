//! The reference: scikit-image's `phase_cross_correlation` (no masks; space real or fourier) in
//! f64, on the full complex spectra, the upsampled DFT by one tensor contraction per axis as
//! scikit-image's `_upsampled_dft`.

use ndarray::{ArrayD, Axis, IxDyn};
use num_complex::Complex64;

use super::{finish, Normalization, PhaseCorrelation, Registration};
use crate::fft::{cpu, Norm};
use crate::kernels::upsampled_dft::signed_frequency;

/// Space real: two images of one shape.
pub fn phase_cross_correlation(reference: &ArrayD<f64>, moving: &ArrayD<f64>, how: &PhaseCorrelation) -> Registration {
    let axes: Vec<usize> = (0..reference.ndim()).collect();
    let spectrum = |x: &ArrayD<f64>| cpu::c2c(&x.mapv(|v| Complex64::new(v, 0.0)), &axes, false, Norm::Backward);
    phase_cross_correlation_spectra(&spectrum(reference), &spectrum(moving), how)
}

/// Space fourier: the two images' full spectra (fftn).
pub fn phase_cross_correlation_spectra(src: &ArrayD<Complex64>, target: &ArrayD<Complex64>, how: &PhaseCorrelation) -> Registration {
    let dims = src.shape().to_vec();
    let axes: Vec<usize> = (0..dims.len()).collect();
    let mut product = src * &target.mapv(|v| v.conj());
    if how.normalization == Normalization::Phase {
        let floor = 100.0 * f32::EPSILON as f64;
        product.mapv_inplace(|v| v / v.norm().max(floor));
    }
    let cc = cpu::c2c(&product, &axes, true, Norm::Backward);
    let at = first_max(&cc);
    let power = |s: &ArrayD<Complex64>| s.iter().map(|v| v.norm_sqr()).sum::<f64>();
    let (src_amp, target_amp) = (power(src), power(target));
    let coarse: Vec<usize> = at.clone();
    if how.upsample_factor <= 1.0 {
        let n = cc.len() as f64;
        return finish(&dims, &coarse, None, cc[IxDyn(&at)], src_amp / n, target_amp / n, how);
    }
    let (r, offsets) = super::region(&dims, &coarse, how.upsample_factor);
    let mut data = product;
    for a in (0..dims.len()).rev() {
        data = contract(&data, a, r, how.upsample_factor, offsets[a]);
    }
    let fine = first_max(&data);
    finish(&dims, &coarse, Some(&fine), data[IxDyn(&fine)], src_amp, target_amp, how)
}

/// Axis `a` of `x` contracted with exp(2πi (k − offset) f / (n · upsample)), k < r.
fn contract(x: &ArrayD<Complex64>, a: usize, r: usize, upsample: f64, offset: f64) -> ArrayD<Complex64> {
    let n = x.shape()[a];
    let mut dims = x.shape().to_vec();
    dims[a] = r;
    let mut out = ArrayD::zeros(IxDyn(&dims));
    for (mut o, lane) in out.lanes_mut(Axis(a)).into_iter().zip(x.lanes(Axis(a))) {
        for k in 0..r {
            o[k] = (0..n)
                .map(|j| lane[j] * Complex64::from_polar(1.0, 2.0 * std::f64::consts::PI * (k as f64 - offset) * signed_frequency(j, n) / (n as f64 * upsample)))
                .sum();
        }
    }
    out
}

/// The index of the first largest magnitude (row-major), as numpy's argmax.
fn first_max(x: &ArrayD<Complex64>) -> Vec<usize> {
    let mut best = (0usize, f64::MIN);
    for (i, v) in x.iter().enumerate() {
        if v.norm() > best.1 {
            best = (i, v.norm());
        }
    }
    super::unravel(best.0, x.shape())
}
