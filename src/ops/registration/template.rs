//! Template matching with scikit-image's conventions (`skimage.feature.match_template`): Lewis's
//! fast normalised cross-correlation, the response at each position the correlation
//! coefficient of the template with the image window there. The correlation of the image with
//! the template is an FFT (or direct, by the cost model) correlation of the image less its mean
//! with the template less its own (which leaves the coefficient unchanged and keeps f32
//! accurate); the windows' sums of values and squares are direct sums along each axis in
//! double-single arithmetic, so the variance s2 - s1²/V keeps its digits even where a window
//! is nearly flat. The response is clipped to [-1, 1]; a flat window or template gives 0, as
//! scikit-image. What f32 still bounds is the correlation itself: on a window whose contrast is
//! tiny against the data's spread, its rounding (a few ε of Σ|x - mean|·|t - mean(t)|) over the
//! denominator (tests/it/template.rs checks that bound; elsewhere the response is within 1e-4 of
//! scikit-image's f64 result).
//! Without `pad_input` a response element is the window at its top-left corner (shape image -
//! template + 1); with it the image is padded as numpy.pad does (`mode`, `constant_values`) and
//! the element is the window centred on it (the image's shape).

use ndarray::{ArrayD, ArrayViewD, IxDyn};

use crate::check::check_finite;
use crate::error::{Error, Result};
use crate::gpu::{Gpu, Shape};
use crate::graph::{Buf, Recording};
use crate::kernels::boundary::Boundary;
use crate::kernels::unary::{self, UnaryOp};
use crate::kernels::{template_ncc, window_sum};
use crate::ops::convolve::{self, Method, Mode};
use crate::ops::layout;

/// numpy.pad's modes that `pad_input` takes (scikit-image's `mode`, with `constant_values`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PadMode {
    Constant(f32),
    Edge,
    /// Mirrored about the edge element, not repeating it (scipy.ndimage's `mirror`).
    Reflect,
    /// Mirrored about the edge, repeating the edge element (scipy.ndimage's `reflect`).
    Symmetric,
    Wrap,
}

impl PadMode {
    pub const NAMES: [&'static str; 5] = ["constant", "edge", "reflect", "symmetric", "wrap"];

    /// numpy's name of the mode; `constant_values` only with "constant" (finite).
    pub fn parse(name: &str, constant_values: f32) -> Result<PadMode> {
        if !constant_values.is_finite() {
            return Err(Error::Invalid(format!("constant_values must be finite, got {constant_values}")));
        }
        match name {
            "constant" => Ok(PadMode::Constant(constant_values)),
            _ if constant_values != 0.0 => Err(Error::Invalid(format!("constant_values {constant_values} is only used with mode constant, not {name}"))),
            "edge" => Ok(PadMode::Edge),
            "reflect" => Ok(PadMode::Reflect),
            "symmetric" => Ok(PadMode::Symmetric),
            "wrap" => Ok(PadMode::Wrap),
            other => Err(Error::Invalid(format!("pad mode `{other}` (one of {})", PadMode::NAMES.join(", ")))),
        }
    }

    /// The same padding of data from which `shift` was subtracted.
    pub fn boundary(self, shift: f32) -> Boundary {
        match self {
            PadMode::Constant(c) => Boundary::Constant(c - shift),
            PadMode::Edge => Boundary::Nearest,
            PadMode::Reflect => Boundary::Mirror,
            PadMode::Symmetric => Boundary::Reflect,
            PadMode::Wrap => Boundary::Wrap,
        }
    }
}

/// scikit-image's `pad_input`, `mode` and `constant_values`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TemplateMatch {
    pub pad_input: bool,
    pub mode: PadMode,
}

impl Default for TemplateMatch {
    fn default() -> TemplateMatch {
        TemplateMatch { pad_input: false, mode: PadMode::Constant(0.0) }
    }
}

/// Shapes of one rank (1 to 4 axes; scikit-image takes 2 and 3), the template no larger than the
/// image along any axis.
pub fn check_shapes(image: &[usize], template: &[usize]) -> Result<()> {
    Shape::new(image)?;
    Shape::new(template)?;
    if image.len() != template.len() {
        return Err(Error::Shape(format!("a template of shape {template:?} for an image of shape {image:?}: give both the same axes")));
    }
    if image.iter().zip(template).any(|(n, m)| m > n) {
        return Err(Error::Shape(format!("the template {template:?} is larger than the image {image:?} along some axis")));
    }
    Ok(())
}

/// The response's shape.
pub fn output_dims(image: &[usize], template: &[usize], pad_input: bool) -> Vec<usize> {
    match pad_input {
        true => image.to_vec(),
        false => image.iter().zip(template).map(|(n, m)| n - m + 1).collect(),
    }
}

/// How far (in the image's largest |x - mean|) a padding constant may lie from the image's mean:
/// the windows' sums run along the padded lines in double-single arithmetic (about 2^-48 of
/// the padding's square), which must stay below 1e-5 of a window's variance.
const FARTHEST_PADDING: f64 = 16384.0;

/// The response of a device image (f32) to a host template (finite); `mean` is subtracted from
/// the image first (its mean: any value is exact in real arithmetic, the mean keeps f32 so), and
/// `spread` is the image's largest |x - mean| (a bound will do). A padding constant further than
/// 64 spreads from the mean has the correlation summed directly, window by window: through an
/// FFT, the padding's magnitude would set the rounding of the windows inside the image too; one
/// further than [`FARTHEST_PADDING`] spreads is refused (a constant of 1e8 beside values near 1
/// gave false perfect matches).
pub fn record_match_template(rec: &mut Recording, image: Buf, template: &ArrayViewD<f32>, how: &TemplateMatch, mean: f32, spread: f32) -> Result<Buf> {
    let dims = rec.dims(image).to_vec();
    check_shapes(&dims, template.shape())?;
    check_finite(template, "the template")?;
    let m = template.shape().to_vec();
    let mut q = unary::record(rec, UnaryOp::Offset(-mean), image)?;
    if how.pad_input {
        let pads: Vec<(usize, usize)> = m.iter().map(|&m| (m / 2, m - 1 - m / 2)).collect();
        q = layout::pad(rec, q, &pads, how.mode.boundary(mean))?;
    }
    let volume = template.len();
    let template_mean = template.iter().map(|&v| v as f64).sum::<f64>() / volume as f64;
    let centred = template.mapv(|v| (v as f64 - template_mean) as f32);
    let tssd: f64 = template.iter().map(|&v| (v as f64 - template_mean).powi(2)).sum();
    let method = match how.mode {
        PadMode::Constant(c) if how.pad_input => {
            let far = (c as f64 - mean as f64).abs() / spread as f64;
            if far > FARTHEST_PADDING {
                return Err(Error::Invalid(format!(
                    "constant_values {c} lies {far:.3e} times the image's spread from its mean (at most {FARTHEST_PADDING}): in f32 the windows beside the padding would lose their variance; pad the image yourself or give a nearer constant"
                )));
            }
            if far > 64.0 {
                Method::Direct
            } else {
                Method::Auto
            }
        }
        _ => Method::Auto,
    };
    let numerator = convolve::signal_correlate(rec, q, &centred.view(), Mode::Valid, method)?;
    let s1 = window_sums(rec, window_sum::Input::Values(q), &m)?;
    let s2 = window_sums(rec, window_sum::Input::Squares(q), &m)?;
    // The pairs' rounding relative to V·s2 (about 48 bits, a few per summed axis): below it a
    // window is flat.
    let flat = 16.0 * m.iter().sum::<usize>() as f32 * f32::EPSILON * f32::EPSILON;
    template_ncc::record(rec, numerator, s1, s2, volume, tssd as f32, flat)
}

/// Sums (double-single pairs) over every window of shape `m` lying inside the input (the
/// 'valid' positions), one axis after another.
fn window_sums(rec: &mut Recording, input: window_sum::Input, m: &[usize]) -> Result<(Buf, Buf)> {
    let last = m.len() - 1;
    let mut sums = window_sum::record(rec, input, 0, m[0])?;
    for (d, &len) in m.iter().enumerate().skip(1) {
        let pairs = window_sum::Input::Pairs(sums.0, sums.1);
        sums = if d == last { along_last_axis(rec, pairs, len)? } else { window_sum::record(rec, pairs, d, len)? };
    }
    Ok(sums)
}

/// Window sums along the last axis through a copy with the last two axes swapped: summed along
/// the second-to-last axis, consecutive threads read consecutive addresses (along the last
/// axis each would slide over its own run of a row, scattering a warp's loads).
fn along_last_axis(rec: &mut Recording, pairs: window_sum::Input, m: usize) -> Result<(Buf, Buf)> {
    let window_sum::Input::Pairs(hi, lo) = pairs else { unreachable!("later passes sum pairs") };
    let rank = rec.dims(hi).len();
    let mut swap: Vec<usize> = (0..rank).collect();
    swap.swap(rank - 2, rank - 1);
    let (hi, lo) = (layout::permute(rec, hi, &swap)?, layout::permute(rec, lo, &swap)?);
    let (hi, lo) = window_sum::record(rec, window_sum::Input::Pairs(hi, lo), rank - 2, m)?;
    Ok((layout::permute(rec, hi, &swap)?, layout::permute(rec, lo, &swap)?))
}

/// scikit-image's `match_template(image, template, pad_input, mode, constant_values)` on the GPU,
/// clipped to [-1, 1].
pub fn match_template(gpu: &Gpu, image: &ArrayViewD<f32>, template: &ArrayViewD<f32>, how: &TemplateMatch) -> Result<ArrayD<f32>> {
    let t = std::time::Instant::now();
    check_shapes(image.shape(), template.shape())?;
    let summary = crate::check::finite_summary(image, "the image")?;
    crate::gpu::trace("match_template: checked", t);
    // The normalised correlation is invariant to scaling the image (with its padding constant)
    // and the template: each far from 1 in magnitude is brought near it, exactly, so that sums of
    // squares do not overflow or underflow in f32.
    let cval = match how.mode {
        PadMode::Constant(c) if how.pad_input => c,
        _ => 0.0,
    };
    if let Some(e) = crate::check::power_of_two_for(summary.largest_magnitude().max(cval.abs())) {
        let mode = match how.mode {
            PadMode::Constant(c) => PadMode::Constant((c as f64 * 2f64.powi(e)) as f32),
            other => other,
        };
        return match_template(gpu, &crate::check::scaled(image, e).view(), template, &TemplateMatch { mode, ..*how });
    }
    if let Some(e) = crate::check::power_of_two_scale(template) {
        return match_template(gpu, image, &crate::check::scaled(template, e).view(), how);
    }
    let mean = (summary.sum / image.len() as f64) as f32;
    // The largest |x − mean| lies at the least or the largest value (f32 subtraction is monotone).
    let spread = (summary.max - mean).abs().max((summary.min - mean).abs());
    let mut rec = Recording::new(gpu);
    let x = rec.upload_once_real(image)?;
    let y = record_match_template(&mut rec, x, template, how, mean, spread)?;
    crate::gpu::trace("match_template: recorded", t);
    rec.run_fetch(y)
}

/// The `count` highest responses at least `min_distance` apart (in every axis' terms: the
/// largest per-axis distance, as scikit-image's `peak_local_max`), highest first, ties to the
/// lowest index: greedy non-maximum suppression over the response on the host.
pub fn peaks(response: &ArrayViewD<f32>, count: usize, min_distance: usize) -> Vec<(Vec<usize>, f32)> {
    let dims = response.shape().to_vec();
    let values: Vec<f32> = response.iter().copied().collect();
    let mut order: Vec<usize> = (0..values.len()).filter(|&i| values[i].is_finite()).collect();
    order.sort_by(|&a, &b| values[b].total_cmp(&values[a]).then(a.cmp(&b)));
    let unravel = |mut i: usize| -> Vec<usize> {
        let mut at = vec![0; dims.len()];
        for d in (0..dims.len()).rev() {
            at[d] = i % dims[d];
            i /= dims[d];
        }
        at
    };
    let mut found: Vec<(Vec<usize>, f32)> = Vec::new();
    for i in order {
        if found.len() == count {
            break;
        }
        let at = unravel(i);
        if found.iter().all(|(p, _)| p.iter().zip(&at).any(|(a, b)| a.abs_diff(*b) >= min_distance.max(1))) {
            found.push((at, values[i]));
        }
    }
    found
}

/// The f64 reference: scikit-image's algorithm step by step (numpy.pad by the template's shape
/// on every side, each response element from its window's sums, taken directly, and 0 where the
/// denominator is at most f64 ε), without the clip.
pub fn match_template_reference(image: &ArrayD<f64>, template: &ArrayD<f64>, how: &TemplateMatch) -> Result<ArrayD<f64>> {
    check_shapes(image.shape(), template.shape())?;
    let m = template.shape().to_vec();
    let pads: Vec<(usize, usize)> = m.iter().map(|&m| (m, m)).collect();
    let fill = match how.mode {
        PadMode::Constant(c) => c as f64,
        _ => 0.0,
    };
    let p = layout::cpu::pad(image, &pads, how.mode.boundary(0.0), fill);
    let volume = template.len() as f64;
    let tmean = template.sum() / volume;
    let tssd: f64 = template.iter().map(|v| (v - tmean).powi(2)).sum();
    // Output element o is the window starting at padded index o + 1 + (m-1)/2 with pad_input,
    // o + m without (scikit-image's slicing of its full response).
    let first: Vec<usize> = m.iter().map(|&m| if how.pad_input { (m - 1) / 2 + 1 } else { m }).collect();
    Ok(ArrayD::from_shape_fn(IxDyn(&output_dims(image.shape(), &m, how.pad_input)), |o| {
        let (mut xcorr, mut s1, mut s2) = (0.0, 0.0, 0.0);
        for (t, &tv) in template.indexed_iter() {
            let at: Vec<usize> = (0..m.len()).map(|d| first[d] + o[d] + t[d]).collect();
            let v = p[IxDyn(&at)];
            xcorr += v * tv;
            s1 += v;
            s2 += v * v;
        }
        let numerator = xcorr - s1 * tmean;
        let den = ((s2 - s1 * s1 / volume) * tssd).max(0.0).sqrt();
        if den > f64::EPSILON {
            numerator / den
        } else {
            0.0
        }
    }))
}
