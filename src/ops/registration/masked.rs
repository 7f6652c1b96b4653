//! Masked registration (Padfield, "Masked object registration in the Fourier domain", 2012;
//! scikit-image's `cross_correlate_masked` and masked `phase_cross_correlation`): the normalised
//! cross-correlation of two images restricted to their masks at every overlap, from six
//! correlations of the masked images, their squares and the masks, each a real transform pair
//! with the product and the output window fused into the inverse (the full correlation's index k
//! is lag k − (moving − 1)); then the element-wise steps (kernels::masked_ncc).

use ndarray::{ArrayD, ArrayViewD};

use crate::error::{Error, Result};
use crate::fft::{plan::smooth_at_least, FftPlan, Fusion, Norm, Product, Transform, Window};
use crate::gpu::{Dtype, Gpu, GpuArray};
use crate::graph::{Buf, Recording};
use crate::kernels::binary::{self, BinaryOp};
use crate::kernels::{count_equal, fill, masked_ncc, masked_ncc_finish, peak_neighbours, select};
use crate::ops::reduce::{self, Reduction};

/// scikit-image's `cross_correlate_masked(fixed, moving, fixed_mask, moving_mask, mode="full",
/// axes=all, overlap_ratio)`: shape fixed + moving − 1 per axis, values in [−1, 1].
pub fn cross_correlate_masked(
    gpu: &Gpu,
    fixed: &ArrayViewD<f32>,
    moving: &ArrayViewD<f32>,
    fixed_mask: &ArrayViewD<bool>,
    moving_mask: &ArrayViewD<bool>,
    overlap_ratio: f64,
) -> Result<ArrayD<f32>> {
    check_inputs(fixed, moving, fixed_mask, moving_mask, overlap_ratio)?;
    correlate(gpu, fixed, moving, fixed_mask, moving_mask, overlap_ratio)
}

/// What [`cross_correlate_masked`] refuses: images of 1-4 axes, not empty, finite, of one rank;
/// masks of their images' shapes selecting at least one sample; an overlap ratio in [0, 1].
pub fn check_inputs(
    fixed: &ArrayViewD<f32>,
    moving: &ArrayViewD<f32>,
    fixed_mask: &ArrayViewD<bool>,
    moving_mask: &ArrayViewD<bool>,
    overlap_ratio: f64,
) -> Result<()> {
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
pub fn check_registration(
    reference: &ArrayViewD<f32>,
    moving: &ArrayViewD<f32>,
    reference_mask: &ArrayViewD<bool>,
    moving_mask: &ArrayViewD<bool>,
    overlap_ratio: f64,
) -> Result<()> {
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
        Some(first) if masked.all(|v| v == first) => {
            Err(Error::Invalid(format!("the {what} is constant ({first}) where its mask is true: masked registration needs some variance")))
        }
        _ => Ok(()),
    }
}

/// [`cross_correlate_masked`] of checked inputs.
fn correlate(
    gpu: &Gpu,
    fixed: &ArrayViewD<f32>,
    moving: &ArrayViewD<f32>,
    fixed_mask: &ArrayViewD<bool>,
    moving_mask: &ArrayViewD<bool>,
    overlap_ratio: f64,
) -> Result<ArrayD<f32>> {
    let mut rec = Recording::new(gpu);
    let mut upload =
        |x: &ArrayViewD<f32>, m: &ArrayViewD<bool>| -> Result<(Buf, Buf)> { Ok((rec.upload_once_f32(x)?, rec.upload_once_f32(&as_weights(m).view())?)) };
    let ((x, xm), (y, ym)) = (upload(fixed, fixed_mask)?, upload(moving, moving_mask)?);
    let out = record_cross_correlate_masked(&mut rec, x, y, xm, ym, overlap_ratio)?;
    let out = rec.download(out);
    rec.run()?.into_f32(out)
}

/// A mask as the f32 weights the device path takes: 1 where true, else 0.
pub fn as_weights(mask: &ArrayViewD<bool>) -> ArrayD<f32> {
    mask.mapv(|k| if k { 1.0 } else { 0.0 })
}

/// [`cross_correlate_masked`] recorded into a pipeline: images (f32) and their masks as f32
/// weights of exactly 0 or 1 ([`as_weights`]), of one rank, on the device. Unchecked beyond
/// shapes (see [`masked_phase_cross_correlation_resident`] for the checks on the device).
pub fn record_cross_correlate_masked(rec: &mut Recording, fixed: Buf, moving: Buf, fixed_mask: Buf, moving_mask: Buf, overlap_ratio: f64) -> Result<Buf> {
    rec.expect_same_shape(fixed, fixed_mask, "the fixed image and its mask")?;
    rec.expect_same_shape(moving, moving_mask, "the moving image and its mask")?;
    let (n1, n2) = (rec.dims(fixed).to_vec(), rec.dims(moving).to_vec());
    if n1.len() != n2.len() || !(1..=4).contains(&n1.len()) {
        return Err(Error::Shape(format!("masked correlation of {n1:?} and {n2:?} (one rank, 1 to 4 axes)")));
    }
    if !(0.0..=1.0).contains(&overlap_ratio) {
        return Err(Error::Invalid(format!("overlap ratio {overlap_ratio} (0 to 1)")));
    }
    let gpu = rec.gpu();
    let full: Vec<usize> = n1.iter().zip(&n2).map(|(a, b)| a + b - 1).collect();
    let padded: Vec<usize> = full.iter().map(|&n| smooth_at_least(n)).collect();
    let axes: Vec<usize> = (0..full.len()).collect();
    // The masked images, their squares and the masks, transformed (plans cached on the GPU).
    let spectra = |rec: &mut Recording, image: Buf, mask: Buf| -> Result<[Buf; 3]> {
        let dims = rec.dims(image).to_vec();
        let plan = gpu.cached(&format!("masked forward {padded:?} from {dims:?}"), || {
            let plan = FftPlan::fused(gpu, &padded, &axes, Transform::RealForward, Norm::Backward, &Fusion { input: Some(dims.clone()), ..Fusion::default() })?;
            let bytes = plan.table_bytes();
            Ok((plan, bytes))
        })?;
        let masked = binary::record(rec, BinaryOp::Mul, image, mask)?;
        let squares = binary::record(rec, BinaryOp::Mul, masked, masked)?;
        Ok([plan.record(rec, squares)?, plan.record(rec, masked)?, plan.record(rec, mask)?])
    };
    let [f2, f, fm] = spectra(rec, fixed, fixed_mask)?;
    let [g2, g, gm] = spectra(rec, moving, moving_mask)?;
    let mut half = padded.clone();
    *half.last_mut().unwrap() = padded[padded.len() - 1] / 2 + 1;
    let window: Vec<Window> = n2.iter().zip(&full).map(|(&n, &len)| Window { origin: 1 - n as i64, len }).collect();
    let inverse = gpu.cached(&format!("masked inverse {half:?} {window:?}"), || {
        let fusion = Fusion { window: Some(window.clone()), product: Some(Product::MulConj), ..Fusion::default() };
        let plan = FftPlan::fused(gpu, &half, &axes, Transform::RealInverse { len: padded[padded.len() - 1] }, Norm::Backward, &fusion)?;
        let bytes = plan.table_bytes();
        Ok((plan, bytes))
    })?;
    let mut correlate = |x: Buf, y: Buf| inverse.record_with(rec, x, Some(y));
    let (overlap, fixed_part, moving_part) = (correlate(fm, gm)?, correlate(f, gm)?, correlate(fm, g)?);
    let (a, d, e) = (correlate(f, g)?, correlate(f2, gm)?, correlate(fm, g2)?);
    masked_ncc::record(rec, overlap, fixed_part, moving_part, a, d, e)?;
    let largest_denominator = reduce::record(rec, d, Reduction::Max, None)?;
    let largest_overlap = reduce::record(rec, overlap, Reduction::Max, None)?;
    masked_ncc_finish::record(rec, a, d, overlap, largest_denominator, largest_overlap, f32_at_most(overlap_ratio))
}

/// The largest f32 not above `x` (≥ 0). The overlap counts are whole numbers and scikit-image
/// compares them with `overlap_ratio × largest` in f64: 0.3 rounded to the nearest f32 is above
/// 0.3, so a count exactly at the threshold (60 of 200) fell below it on the GPU and was zeroed.
fn f32_at_most(x: f64) -> f32 {
    let y = x as f32;
    if f64::from(y) > x && y > 0.0 {
        f32::from_bits(y.to_bits() - 1)
    } else {
        y
    }
}

/// scikit-image's masked `phase_cross_correlation(reference, moving, reference_mask=..,
/// moving_mask=.., overlap_ratio)`: the shift registering `moving` onto `reference` (whole
/// samples; the centre of the correlation's maxima, averaged over ties as scikit-image does);
/// with `upsample_factor` above 1, a unique maximum refined below a sample by a parabola through
/// it and its neighbours along each axis, rounded to 1/upsample_factor.
pub fn masked_phase_cross_correlation(
    gpu: &Gpu,
    reference: &ArrayViewD<f32>,
    moving: &ArrayViewD<f32>,
    reference_mask: &ArrayViewD<bool>,
    moving_mask: &ArrayViewD<bool>,
    overlap_ratio: f64,
    upsample_factor: f64,
) -> Result<Vec<f64>> {
    // Shapes here; the contents (finite, masks not empty, variance) on the device.
    if reference.shape() != moving.shape() {
        return Err(Error::Shape(format!("the reference {:?} and the moving image {:?} differ", reference.shape(), moving.shape())));
    }
    check_shape(reference, reference_mask, "reference")?;
    check_shape(moving, moving_mask, "moving")?;
    let upload = |x: &ArrayViewD<f32>| GpuArray::upload_f32(gpu, x);
    // Normalised cross-correlation does not change under scaling; its sums of squares of values
    // near f32's limits would overflow.
    let in_range = crate::check::in_safe_range;
    let (r, m) = (upload(&in_range(reference).0.view())?, upload(&in_range(moving).0.view())?);
    let (rm, mm) = (upload(&as_weights(reference_mask).view())?, upload(&as_weights(moving_mask).view())?);
    masked_phase_cross_correlation_resident(gpu, &r, &m, &rm, &mm, overlap_ratio, upsample_factor)
}

/// [`masked_phase_cross_correlation`] of images and masks already on the device (f32; masks as
/// weights of exactly 0 or 1, [`as_weights`]), in one submission: the maximum found there, and
/// the map read back only where it is not unique. The checks run on the device too: each image
/// finite, each mask selecting a sample, each image not constant inside its mask.
pub fn masked_phase_cross_correlation_resident(
    gpu: &Gpu,
    reference: &GpuArray,
    moving: &GpuArray,
    reference_mask: &GpuArray,
    moving_mask: &GpuArray,
    overlap_ratio: f64,
    upsample_factor: f64,
) -> Result<Vec<f64>> {
    super::check_upsample_factor(upsample_factor)?;
    let dims = reference.shape().dims().to_vec();
    for (x, what) in [(moving, "the moving image"), (reference_mask, "the reference mask"), (moving_mask, "the moving mask")] {
        if x.shape().dims() != dims.as_slice() || x.dtype() != Dtype::F32 {
            return Err(Error::Shape(format!("{what} {:?} {:?} and the reference {dims:?} F32 differ", x.shape().dims(), x.dtype())));
        }
    }
    if reference.dtype() != Dtype::F32 || reference.shape().is_empty() {
        return Err(Error::Shape(format!("the reference {dims:?} {:?} (f32, not empty)", reference.dtype())));
    }
    let mut rec = Recording::new(gpu);
    let (r, m, rm, mm) = (rec.input(reference), rec.input(moving), rec.input(reference_mask), rec.input(moving_mask));
    let map = record_cross_correlate_masked(&mut rec, m, r, mm, rm, overlap_ratio)?;
    let index = reduce::record(&mut rec, map, Reduction::ArgMax, None)?;
    let ties = count_equal::record(&mut rec, map, index)?;
    let refine = (upsample_factor > 1.0).then(|| -> Result<_> {
        let slots = rec.temp(&[peak_neighbours::slots(dims.len())], Dtype::F32)?;
        peak_neighbours::record_into(&mut rec, map, index, slots, 0)?;
        Ok(rec.download(slots))
    });
    let refine = refine.transpose()?;
    let (index, ties, kept) = (rec.download(index), rec.download(ties), rec.output(map));
    let checks = [record_checks(&mut rec, r, rm)?, record_checks(&mut rec, m, mm)?].map(|c| c.map(|b| rec.download(b)));
    let results = rec.run()?;
    for (c, what) in checks.iter().zip(["reference", "moving image"]) {
        let [power, selected, lowest, highest] = c.each_ref().map(|&d| results.f32(d).map(|v| v.iter().next().copied().unwrap_or(f32::NAN)));
        let (power, selected, lowest, highest) = (power?, selected?, lowest?, highest?);
        if !power.is_finite() {
            return Err(Error::NonFinite(format!("the {what}, or its sum of squares overflows f32 (scale it)")));
        }
        if selected.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
            return Err(Error::Invalid(format!("the {what}'s mask selects no sample")));
        }
        if lowest == highest {
            return Err(Error::Invalid(format!("the {what} is constant ({lowest}) where its mask is true: masked registration needs some variance")));
        }
    }
    let count = results.u32(ties)?.iter().next().copied().unwrap_or(0);
    let full: Vec<usize> = dims.iter().map(|&n| 2 * n - 1).collect();
    if count == 1 {
        let at = super::unravel(results.u32(index)?.iter().next().copied().unwrap_or(0) as usize, &full);
        let below = match refine {
            Some(slots) => below_sample(&full, &results.f32(slots)?.iter().map(|&x| x as f64).collect::<Vec<_>>(), upsample_factor),
            None => vec![0.0; dims.len()],
        };
        return Ok(at.iter().zip(&dims).zip(&below).map(|((&i, &n), &d)| n as f64 - 1.0 - i as f64 - d).collect());
    }
    // Ties (or no count): scikit-image averages the positions of every maximum.
    let xcorr = results.array(kept).download_f32(gpu)?;
    Ok(centre_of_maxima(&xcorr, &dims))
}

/// The position of a unique maximum below a sample along each axis of a map of `full`, from
/// [`peak_neighbours`]' values there: a parabola's vertex, rounded to 1/upsample.
pub(super) fn below_sample(full: &[usize], slots: &[f64], upsample: f64) -> Vec<f64> {
    (0..full.len())
        .map(|a| {
            let along = if full[a] >= 3 { super::parabola(slots[2 + 2 * a], slots[1], slots[3 + 2 * a]) } else { 0.0 };
            (along * upsample).round() / upsample
        })
        .collect()
}

/// Σ x², Σ mask, and x's least and largest value inside the mask (one element each).
fn record_checks(rec: &mut Recording, x: Buf, mask: Buf) -> Result<[Buf; 4]> {
    let power = reduce::record(rec, x, Reduction::SumSquares, None)?;
    let selected = reduce::record(rec, mask, Reduction::Sum, None)?;
    let mut inside = |outside: f32, op: Reduction| -> Result<Buf> {
        let fallback = rec.temp_like(x, Dtype::F32)?;
        fill::record(rec, fallback, outside);
        let chosen = select::record(rec, mask, x, fallback)?;
        reduce::record(rec, chosen, op, None)
    };
    let (lowest, highest) = (inside(f32::INFINITY, Reduction::Min)?, inside(f32::NEG_INFINITY, Reduction::Max)?);
    Ok([power, selected, lowest, highest])
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
    check_shape(x, mask, what)?;
    if !mask.iter().any(|&k| k) {
        return Err(Error::Invalid(format!("the {what} mask selects no sample")));
    }
    crate::check::check_finite(x, &format!("the {what} image"))
}

/// An image of 1-4 axes, not empty, and its mask of its shape.
fn check_shape(x: &ArrayViewD<f32>, mask: &ArrayViewD<bool>, what: &str) -> Result<()> {
    if !(1..=4).contains(&x.ndim()) || x.is_empty() {
        return Err(Error::Shape(format!("the {what} image of shape {:?} (1 to 4 axes, not empty)", x.shape())));
    }
    if mask.shape() != x.shape() {
        return Err(Error::Shape(format!("the {what} mask {:?} and its image {:?} differ", mask.shape(), x.shape())));
    }
    Ok(())
}
