//! Masked registration (Padfield, "Masked object registration in the Fourier domain", 2012;
//! scikit-image's `cross_correlate_masked` and masked `phase_cross_correlation`): the normalised
//! cross-correlation of two images restricted to their masks at every overlap, from six
//! correlations of the masked images, their squares and the masks, each a real transform pair
//! with the product and the output window fused into the inverse (the full correlation's index k
//! is lag k − (moving − 1)); then the element-wise steps (kernels::masked_ncc).

use ndarray::{ArrayD, ArrayViewD};

use crate::error::{Error, Result};
use crate::fft::{plan::smooth_at_least, FftPlan, Fusion, Norm, Product, Transform, Window};
use crate::gpu::Gpu;
use crate::graph::{Buf, Recording};
use crate::kernels::binary::{self, BinaryOp};
use crate::kernels::masked_ncc;
use crate::ops::reduce::{self, Reduction};

/// scikit-image's `cross_correlate_masked(fixed, moving, fixed_mask, moving_mask, mode="full",
/// axes=all, overlap_ratio)`: shape fixed + moving − 1 per axis, values in [−1, 1].
pub fn cross_correlate_masked(gpu: &Gpu, fixed: &ArrayViewD<f32>, moving: &ArrayViewD<f32>, fixed_mask: &ArrayViewD<bool>, moving_mask: &ArrayViewD<bool>, overlap_ratio: f64) -> Result<ArrayD<f32>> {
    check_inputs(fixed, moving, fixed_mask, moving_mask, overlap_ratio)?;
    correlate(gpu, fixed, moving, fixed_mask, moving_mask, overlap_ratio)
}

/// What [`cross_correlate_masked`] refuses: images of 1-4 axes, not empty, finite, of one rank;
/// masks of their images' shapes selecting at least one sample; an overlap ratio in [0, 1].
pub fn check_inputs(fixed: &ArrayViewD<f32>, moving: &ArrayViewD<f32>, fixed_mask: &ArrayViewD<bool>, moving_mask: &ArrayViewD<bool>, overlap_ratio: f64) -> Result<()> {
    check(fixed, fixed_mask, "fixed")?;
    check(moving, moving_mask, "moving")?;
    if fixed.ndim() != moving.ndim() {
        return Err(Error::Shape(format!("images of {} and {} axes", fixed.ndim(), moving.ndim())));
    }
    if !(0.0..=1.0).contains(&overlap_ratio) {
        return Err(Error::Invalid(format!("overlap ratio {overlap_ratio} (0 to 1)")));
    }
    Ok(())
}

/// What [`masked_phase_cross_correlation`] refuses: [`check_inputs`]', images of two shapes, and
/// an image constant where its mask is true (no variance: every normalised correlation is
/// rounding noise, and the shift would be an arbitrary one).
pub fn check_registration(reference: &ArrayViewD<f32>, moving: &ArrayViewD<f32>, reference_mask: &ArrayViewD<bool>, moving_mask: &ArrayViewD<bool>, overlap_ratio: f64) -> Result<()> {
    if reference.shape() != moving.shape() {
        return Err(Error::Shape(format!("the reference {:?} and the moving image {:?} differ", reference.shape(), moving.shape())));
    }
    check_inputs(moving, reference, moving_mask, reference_mask, overlap_ratio)?;
    check_variance(reference, reference_mask, "reference")?;
    check_variance(moving, moving_mask, "moving image")
}

fn check_variance(x: &ArrayViewD<f32>, mask: &ArrayViewD<bool>, what: &str) -> Result<()> {
    let mut masked = x.iter().zip(mask.iter()).filter(|(_, &m)| m).map(|(&v, _)| v);
    match masked.next() {
        Some(first) if masked.all(|v| v == first) => Err(Error::Invalid(format!("the {what} is constant ({first}) where its mask is true: masked registration needs some variance"))),
        _ => Ok(()),
    }
}

/// [`cross_correlate_masked`] of checked inputs.
fn correlate(gpu: &Gpu, fixed: &ArrayViewD<f32>, moving: &ArrayViewD<f32>, fixed_mask: &ArrayViewD<bool>, moving_mask: &ArrayViewD<bool>, overlap_ratio: f64) -> Result<ArrayD<f32>> {
    let (n1, n2) = (fixed.shape().to_vec(), moving.shape().to_vec());
    let full: Vec<usize> = n1.iter().zip(&n2).map(|(a, b)| a + b - 1).collect();
    let padded: Vec<usize> = full.iter().map(|&n| smooth_at_least(n)).collect();
    let axes: Vec<usize> = (0..full.len()).collect();
    let mut rec = Recording::new(gpu);
    // The masked images, their squares and the masks, transformed (plans cached on the GPU).
    let spectra = |rec: &mut Recording, x: &ArrayViewD<f32>, m: &ArrayViewD<bool>| -> Result<[Buf; 3]> {
        let key = format!("masked forward {padded:?} from {:?}", x.shape());
        let plan = gpu.cached(&key, || {
            let plan = FftPlan::fused(gpu, &padded, &axes, Transform::RealForward, Norm::Backward, &Fusion { input: Some(x.shape().to_vec()), ..Fusion::default() })?;
            let bytes = plan.table_bytes();
            Ok((plan, bytes))
        })?;
        let image = rec.upload_once_f32(x)?;
        let mask = rec.upload_once_f32(&m.mapv(|k| if k { 1.0f32 } else { 0.0 }).view())?;
        let masked = binary::record(rec, BinaryOp::Mul, image, mask)?;
        let squares = binary::record(rec, BinaryOp::Mul, masked, masked)?;
        Ok([plan.record(rec, squares)?, plan.record(rec, masked)?, plan.record(rec, mask)?])
    };
    let [f2, f, fm] = spectra(&mut rec, fixed, fixed_mask)?;
    let [g2, g, gm] = spectra(&mut rec, moving, moving_mask)?;
    let mut half = padded.clone();
    *half.last_mut().unwrap() = padded[padded.len() - 1] / 2 + 1;
    let window: Vec<Window> = n2.iter().zip(&full).map(|(&n, &len)| Window { origin: 1 - n as i64, len }).collect();
    let inverse = gpu.cached(&format!("masked inverse {half:?} {window:?}"), || {
        let fusion = Fusion { window: Some(window.clone()), product: Some(Product::MulConj), ..Fusion::default() };
        let plan = FftPlan::fused(gpu, &half, &axes, Transform::RealInverse { len: padded[padded.len() - 1] }, Norm::Backward, &fusion)?;
        let bytes = plan.table_bytes();
        Ok((plan, bytes))
    })?;
    let mut correlate = |x: Buf, y: Buf| inverse.record_with(&mut rec, x, Some(y));
    let (overlap, fixed_part, moving_part) = (correlate(fm, gm)?, correlate(f, gm)?, correlate(fm, g)?);
    let (a, d, e) = (correlate(f, g)?, correlate(f2, gm)?, correlate(fm, g2)?);
    masked_ncc::record(&mut rec, overlap, fixed_part, moving_part, a, d, e)?;
    let largest_denominator = reduce::record(&mut rec, d, Reduction::Max, None)?;
    let largest_overlap = reduce::record(&mut rec, overlap, Reduction::Max, None)?;
    let out = masked_ncc::finish(&mut rec, a, d, overlap, largest_denominator, largest_overlap, overlap_ratio as f32)?;
    let out = rec.download(out);
    rec.run()?.into_f32(out)
}

/// scikit-image's masked `phase_cross_correlation(reference, moving, reference_mask=..,
/// moving_mask=.., overlap_ratio)`: the shift registering `moving` onto `reference` (whole
/// samples; the centre of the correlation's maxima, averaged over ties as scikit-image does).
pub fn masked_phase_cross_correlation(gpu: &Gpu, reference: &ArrayViewD<f32>, moving: &ArrayViewD<f32>, reference_mask: &ArrayViewD<bool>, moving_mask: &ArrayViewD<bool>, overlap_ratio: f64) -> Result<Vec<f64>> {
    check_registration(reference, moving, reference_mask, moving_mask, overlap_ratio)?;
    let xcorr = correlate(gpu, moving, reference, moving_mask, reference_mask, overlap_ratio)?;
    Ok(centre_of_maxima(&xcorr, reference.shape()))
}

/// The shift from a masked correlation of images of `dims`: minus (the mean position of its
/// largest values − dims + 1).
pub(super) fn centre_of_maxima<T: Copy + PartialOrd>(xcorr: &ArrayD<T>, dims: &[usize]) -> Vec<f64> {
    let Some(&max) = xcorr.iter().reduce(|m, v| if v > m { v } else { m }) else { return vec![0.0; dims.len()] };
    let mut centre = vec![0.0; xcorr.ndim()];
    let mut count = 0.0;
    for (flat, &v) in xcorr.iter().enumerate() {
        if v == max {
            super::unravel(flat, xcorr.shape()).iter().zip(&mut centre).for_each(|(&i, c)| *c += i as f64);
            count += 1.0;
        }
    }
    centre.iter().zip(dims).map(|(c, &n)| -(c / count - n as f64 + 1.0)).collect()
}

fn check(x: &ArrayViewD<f32>, mask: &ArrayViewD<bool>, what: &str) -> Result<()> {
    if !(1..=4).contains(&x.ndim()) || x.is_empty() {
        return Err(Error::Shape(format!("the {what} image of shape {:?} (1 to 4 axes, not empty)", x.shape())));
    }
    if mask.shape() != x.shape() {
        return Err(Error::Shape(format!("the {what} mask {:?} and its image {:?} differ", mask.shape(), x.shape())));
    }
    if !mask.iter().any(|&k| k) {
        return Err(Error::Invalid(format!("the {what} mask selects no sample")));
    }
    crate::check::check_finite(x, &format!("the {what} image"))
}
