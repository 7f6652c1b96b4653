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
    let at = super::first_largest(&cc);
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
    let fine = super::first_largest(&data);
    finish(&dims, &coarse, Some(&fine), data[IxDyn(&fine)], src_amp, target_amp, how)
}

/// Axis `a` of `x` contracted with exp(2πi (k − offset) f / (n · upsample)), k < r.
fn contract(x: &ArrayD<Complex64>, a: usize, r: usize, upsample: f64, offset: f64) -> ArrayD<Complex64> {
    let n = x.shape()[a];
    let mut dims = x.shape().to_vec();
    dims[a] = r;
    // The kernel, once for every lane.
    let kernel: Vec<Vec<Complex64>> = (0..r)
        .map(|k| {
            (0..n)
                .map(|j| Complex64::from_polar(1.0, 2.0 * std::f64::consts::PI * (k as f64 - offset) * signed_frequency(j, n) / (n as f64 * upsample)))
                .collect()
        })
        .collect();
    let mut out = ArrayD::zeros(IxDyn(&dims));
    for (mut o, lane) in out.lanes_mut(Axis(a)).into_iter().zip(x.lanes(Axis(a))) {
        for (k, row) in kernel.iter().enumerate() {
            o[k] = lane.iter().zip(row).map(|(v, w)| v * w).sum();
        }
    }
    out
}

/// scikit-image's `cross_correlate_masked(fixed, moving, fixed_mask, moving_mask, mode="full",
/// axes=all, overlap_ratio)` (Padfield 2012): the normalised cross-correlation of the masked
/// images at every overlap, of shape fixed + moving − 1 per axis, clipped to [−1, 1], zero where
/// the denominator is below 1000 ε of its largest value or the overlap below `overlap_ratio` of
/// its largest (ε: f32's, as scikit-image takes it for f32 images).
pub fn cross_correlate_masked(
    fixed: &ArrayD<f64>,
    moving: &ArrayD<f64>,
    fixed_mask: &ArrayD<bool>,
    moving_mask: &ArrayD<bool>,
    overlap_ratio: f64,
) -> ArrayD<f64> {
    masked_parts(fixed, moving, fixed_mask, moving_mask, overlap_ratio).1
}

/// [`cross_correlate_masked`] beside each value's condition, √(Σf² Σm²) over the whole masked
/// images / √(var f · var m) over its overlap: an f32 computation through FFTs rounds each value
/// by about ε log2(n) times it, which a comparison must allow.
pub fn masked_parts(
    fixed: &ArrayD<f64>,
    moving: &ArrayD<f64>,
    fixed_mask: &ArrayD<bool>,
    moving_mask: &ArrayD<bool>,
    overlap_ratio: f64,
) -> (ArrayD<f64>, ArrayD<f64>) {
    let eps = f32::EPSILON as f64;
    let full: Vec<usize> = fixed.shape().iter().zip(moving.shape()).map(|(a, b)| a + b - 1).collect();
    let axes: Vec<usize> = (0..full.len()).collect();
    let masked = |x: &ArrayD<f64>, m: &ArrayD<bool>| ndarray::Zip::from(x).and(m).map_collect(|&v, &k| if k { v } else { 0.0 });
    let flip = |x: &ArrayD<f64>| {
        let mut y = x.clone();
        for a in 0..y.ndim() {
            y.invert_axis(Axis(a));
        }
        y
    };
    let fft = |x: &ArrayD<f64>| {
        let mut padded = ArrayD::<Complex64>::zeros(IxDyn(&full));
        padded.slice_each_axis_mut(|d| ndarray::Slice::from(0..x.shape()[d.axis.index()])).assign(&x.mapv(|v| Complex64::new(v, 0.0)));
        cpu::c2c(&padded, &axes, false, Norm::Backward)
    };
    let ifft = |a: &ArrayD<Complex64>, b: &ArrayD<Complex64>| cpu::c2c(&(a * b), &axes, true, Norm::Backward).mapv(|v| v.re);
    let to_f64 = |m: &ArrayD<bool>| m.mapv(|k| if k { 1.0 } else { 0.0 });
    let f = masked(fixed, fixed_mask);
    let rm = flip(&masked(moving, moving_mask));
    let (f_fft, rm_fft) = (fft(&f), fft(&rm));
    let (fm_fft, rmm_fft) = (fft(&to_f64(fixed_mask)), fft(&flip(&to_f64(moving_mask))));
    let overlap = ifft(&rmm_fft, &fm_fft).mapv(|v| v.round().max(eps));
    let fixed_part = ifft(&rmm_fft, &f_fft);
    let moving_part = ifft(&fm_fft, &rm_fft);
    let numerator = ifft(&rm_fft, &f_fft) - &fixed_part * &moving_part / &overlap;
    let fixed_denom = (ifft(&rmm_fft, &fft(&f.mapv(|v| v * v))) - fixed_part.mapv(|v| v * v) / &overlap).mapv(|v| v.max(0.0));
    let moving_denom = (ifft(&fm_fft, &fft(&rm.mapv(|v| v * v))) - moving_part.mapv(|v| v * v) / &overlap).mapv(|v| v.max(0.0));
    let denom = (&fixed_denom * &moving_denom).mapv(f64::sqrt);
    // Each value's condition: the FFTs' rounding is absolute, in proportion to the images'
    // whole energies; over the value's own variances.
    let energy = (f.iter().map(|v| v * v).sum::<f64>() * rm.iter().map(|v| v * v).sum::<f64>()).sqrt();
    let condition = denom.mapv(|d| if d > 0.0 { energy / d } else { 0.0 });
    let tol = 1e3 * eps * denom.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let threshold = overlap_ratio * overlap.iter().fold(f64::MIN, |m, &v| m.max(v));
    let map = ndarray::Zip::from(&numerator).and(&denom).and(&overlap).map_collect(
        |&n, &d, &o| {
            if d > tol && o >= threshold {
                (n / d).clamp(-1.0, 1.0)
            } else {
                0.0
            }
        },
    );
    (condition, map)
}

/// scikit-image's masked `phase_cross_correlation(reference, moving, reference_mask=..,
/// moving_mask=.., overlap_ratio)`: the shift from the centre of the masked correlation's
/// maxima (all of them, averaged, as scikit-image does); with `upsample_factor` above 1, a
/// unique maximum refined below a sample as the GPU refines it.
pub fn masked_phase_cross_correlation(
    reference: &ArrayD<f64>,
    moving: &ArrayD<f64>,
    reference_mask: &ArrayD<bool>,
    moving_mask: &ArrayD<bool>,
    overlap_ratio: f64,
    upsample_factor: f64,
) -> Vec<f64> {
    let xcorr = cross_correlate_masked(moving, reference, moving_mask, reference_mask, overlap_ratio);
    let shift = super::masked::centre_of_maxima(&xcorr, reference.shape());
    let max = xcorr.iter().fold(f64::MIN, |m, &v| m.max(v));
    let mut maxima = xcorr.iter().enumerate().filter(|(_, &v)| v == max);
    let (Some((flat, _)), None) = (maxima.next(), maxima.next()) else { return shift };
    if upsample_factor <= 1.0 {
        return shift;
    }
    let values = xcorr.as_standard_layout();
    let slots = crate::kernels::peak_neighbours::cpu(values.as_slice().expect("standard layout"), xcorr.shape(), flat);
    let below = super::masked::below_sample(xcorr.shape(), &slots, upsample_factor);
    shift.iter().zip(&below).map(|(s, b)| s - b).collect()
}
