//! Similarity registration of two 2D images (rotation, isotropic scale, translation) by the
//! Fourier-Mellin method, with imreg_dft's `similarity` conventions and steps: each image
//! apodized (a Hann border of 12% of the smaller side blended into the border's median), its
//! magnitude spectrum high-passed (1 − cos² of the radius) and resampled on a log-polar grid
//! (angles over half a turn, log radii to 1.1 × half the side), where a rotation and a scale
//! are a translation found by phase correlation; the moving image turned and scaled back
//! (imreg_dft's `transform_img` geometry), then the translation and the 180° ambiguity settled by
//! phase correlation of it and of it turned by 180°. Sub-sample peaks come from the upsampled
//! DFT (`upsample_factor`) where imreg_dft takes a centre of mass over 5 × 5 samples. The
//! spectra, log-polar grids, resampling and correlations run on the device.

use ndarray::{Array2, Array3, ArrayD, ArrayViewD, Zip};
use rayon::prelude::*;

use super::{Normalization, PhaseCorrelation, PhaseCorrelator};
use crate::error::{Error, Result};
use crate::fft::{FftPlan, Norm, Transform};
use crate::gpu::{Gpu, GpuArray};
use crate::graph::Recording;
use crate::kernels::binary::{self, BinaryOp};
use crate::kernels::complex_to_real::{self, ComplexToReal};
use crate::kernels::real_to_complex;
use crate::ops::interpolate::{self, AffineMap, Sampling, SplineMode};
use crate::ops::layout;

/// imreg_dft's `similarity` options.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimilarityOptions {
    /// How many times the angle and scale are estimated (each time on the moving image turned
    /// and scaled by the estimate so far).
    pub numiter: usize,
    /// The spline order of the resampling (imreg_dft's `order`, 0-5).
    pub order: u32,
    /// Sub-sample precision of the peaks: 1 / upsample_factor of a sample (log-polar and
    /// translation grids).
    pub upsample_factor: f64,
    /// Rotation and translation only (a rigid body): the scale is held at 1.
    pub fixed_scale: bool,
}

impl Default for SimilarityOptions {
    fn default() -> SimilarityOptions {
        SimilarityOptions { numiter: 1, order: 3, upsample_factor: 20.0, fixed_scale: false }
    }
}

/// How to transform the moving image to get the reference (imreg_dft's result): scale about the
/// centre, then turn by `angle` degrees (scipy.ndimage.rotate's sense), then shift by `tvec`
/// (rows, columns) — [`transform_map`] of the moving image with these is the registered image.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Similarity {
    pub scale: f64,
    pub angle: f64,
    pub tvec: [f64; 2],
    /// skimage's normalised RMS error of the final translation's correlation (lower is better).
    pub error: f64,
    /// The value beyond the moving image's edges (the median of its border, as imreg_dft's).
    pub bgval: f32,
}

/// imreg_dft's EXCESS_CONST: the log-polar grid reaches 1.1 × half the side.
const EXCESS: f64 = 1.1;

/// Registers `moving` onto `reference` (2D, one shape, finite, each side at least 16).
pub fn similarity(gpu: &Gpu, reference: &ArrayViewD<f32>, moving: &ArrayViewD<f32>, o: &SimilarityOptions) -> Result<Similarity> {
    let dims = reference.shape().to_vec();
    if dims.len() != 2 || moving.shape() != dims.as_slice() {
        return Err(Error::Shape(format!("similarity takes two 2D images of one shape, got {:?} and {:?}", dims, moving.shape())));
    }
    if dims.iter().any(|&n| n < 16) {
        return Err(Error::Shape(format!("similarity needs images of at least 16 × 16, got {dims:?}")));
    }
    crate::check::check_finite(reference, "the reference image")?;
    crate::check::check_finite(moving, "the moving image")?;
    if o.numiter == 0 || o.order > 5 || !(o.upsample_factor.is_finite() && o.upsample_factor >= 1.0) {
        return Err(Error::Invalid(format!(
            "similarity: numiter ≥ 1, order 0-5 and upsample_factor ≥ 1, got {}, {}, {}",
            o.numiter, o.order, o.upsample_factor
        )));
    }
    let bgval = border_value(moving, 5);
    let n = dims[0].max(dims[1]);
    // imreg_dft's log base: base^n is the largest radius, 1.1 × half the first side.
    let log_base = ((dims[0] as f64 * EXCESS / 2.0).ln() / n as f64).exp();
    let grid = LogPolar::new(&dims, n, log_base);
    let lp_reference = grid.spectrum(gpu, reference)?;
    // Phase normalisation here, as imreg_dft's (plain correlation of the log-polar grids moved the
    // scale by 0.2% in a test).
    let how = PhaseCorrelation { upsample_factor: o.upsample_factor, normalization: Normalization::Phase };
    let angles = PhaseCorrelator::new_resident(gpu, &lp_reference, &how)?;

    let (mut scale, mut angle) = (1.0f64, 0.0f64);
    let mut turned = moving.to_owned();
    for _ in 0..o.numiter {
        let lp = grid.spectrum(gpu, &turned.view())?;
        let found = angles.register_resident(&lp)?;
        let (arg_angle, arg_radius) = (found.shift[0], found.shift[1]);
        let new_angle = wrap_degrees((-std::f64::consts::PI * arg_angle / n as f64).to_degrees());
        let new_scale = if o.fixed_scale { 1.0 } else { 1.0 / log_base.powf(arg_radius) };
        let new_angle = -new_angle;
        if !(0.5 < new_scale && new_scale < 2.0) {
            return Err(Error::Invalid(format!("the images are not compatible: a scale change of {new_scale:.4} (similarity finds 0.5 to 2)")));
        }
        scale *= new_scale;
        angle += new_angle;
        turned = transform(gpu, moving, scale, angle, [0.0, 0.0], bgval, o.order)?;
    }

    // The translation, and whether the angle is off by 180°: the better correlation of the two.
    // Plain cross-correlation: whitening the spectra (phase normalisation) lets the noise of
    // a smooth image's high frequencies move the sub-sample peak by tenths of a sample.
    let how = PhaseCorrelation { upsample_factor: o.upsample_factor, normalization: Normalization::None };
    // Both about zero (the reference less its mean, the moving image less its background), so
    // that the edge between the turned image and its background does not pull the peak, and
    // windowed (see [`windowed`]).
    let shifts = PhaseCorrelator::new(gpu, &windowed(reference, None).view(), &how)?;
    let less_background = |x: &ArrayD<f32>| GpuArray::upload_f32(gpu, &windowed(&x.view(), Some(bgval)).view());
    let turned = less_background(&turned)?;
    let mut rec = Recording::new(gpu);
    let t = rec.input(&turned);
    let flipped = layout::flip(&mut rec, t, &[0, 1])?;
    let out = rec.output(flipped);
    let flipped = rec.run()?.array(out);
    let (straight, half_turn) = (shifts.register_resident(&turned)?, shifts.register_resident(&flipped)?);
    let err = |r: &super::Registration| r.error.unwrap_or(f64::INFINITY);
    if err(&half_turn) >= err(&straight) {
        return Ok(Similarity { scale, angle: wrap_degrees(angle), tvec: [straight.shift[0], straight.shift[1]], error: err(&straight), bgval });
    }
    // Half a turn more. The flipped array turned about the array's centre, (n - 1) / 2, where
    // transform_img turns about its canvas's: the shift is measured again on the image turned
    // its way (imreg_dft keeps the flipped array's shift, up to a sample off).
    let angle = wrap_degrees(angle + 180.0);
    let turned = less_background(&transform(gpu, moving, scale, angle, [0.0, 0.0], bgval, o.order)?)?;
    let found = shifts.register_resident(&turned)?;
    Ok(Similarity { scale, angle, tvec: [found.shift[0], found.shift[1]], error: err(&found), bgval })
}

/// `x` less `level` (None: its mean), times a Hann window along every axis (numpy.hanning's):
/// what the translation's cross-correlation takes. Without the window the image's edges, which a
/// circular correlation wraps onto the opposite side, moved a shift by up to 0.1 sample; with it
/// 0.02 at upsample 20 (0.01 at 100).
pub(super) fn windowed(x: &ArrayViewD<f32>, level: Option<f32>) -> ArrayD<f32> {
    let level = level.map_or_else(|| x.iter().map(|&v| v as f64).sum::<f64>() / x.len() as f64, |l| l as f64);
    let dims = x.shape();
    let windows: Vec<Vec<f64>> = dims.iter().map(|&m| hanning(m)).collect();
    let mut out = x.as_standard_layout().into_owned();
    let last = dims[dims.len() - 1];
    // Row by row (the last axis): the leading axes' product of windows, then along the row.
    out.as_slice_mut().expect("standard layout").par_chunks_mut(last.max(1)).enumerate().for_each(|(row, values)| {
        let (mut rest, mut w) = (row, 1.0);
        for k in (0..dims.len() - 1).rev() {
            w *= windows[k][rest % dims[k]];
            rest /= dims[k];
        }
        for (v, h) in values.iter_mut().zip(&windows[dims.len() - 1]) {
            *v = ((*v as f64 - level) * w * h) as f32;
        }
    });
    out
}

/// numpy.hanning(m): 0.5 − 0.5 cos(2πk / (m − 1)) (ones below 2 samples).
fn hanning(m: usize) -> Vec<f64> {
    (0..m).map(|k| if m < 2 { 1.0 } else { 0.5 - 0.5 * (2.0 * std::f64::consts::PI * k as f64 / (m as f64 - 1.0)).cos() }).collect()
}

/// `angle` (degrees) in [-180, 180).
fn wrap_degrees(angle: f64) -> f64 {
    (angle + 180.0).rem_euclid(360.0) - 180.0
}

/// imreg_dft's `get_borderval`: the median of the pixels within `radius` of the left, right and
/// bottom edges and of row `radius` (imreg_dft marks that one row where it means the top band;
/// kept, so that the background matches its).
pub fn border_value(x: &ArrayViewD<f32>, radius: usize) -> f32 {
    let (h, w) = (x.shape()[0], x.shape()[1]);
    let mut v: Vec<f32> = Vec::new();
    for i in 0..h {
        for j in 0..w {
            let edge = j < radius || j + radius >= w || i == radius.min(h - 1) || i + radius >= h;
            if edge {
                v.push(x[[i, j]]);
            }
        }
    }
    v.sort_by(f32::total_cmp);
    let m = v.len();
    match m % 2 {
        1 => v[m / 2],
        _ => ((v[m / 2 - 1] as f64 + v[m / 2] as f64) / 2.0) as f32,
    }
}

/// The log-polar resampling of one image shape's magnitude spectra: the apodization field, the
/// high-pass filter and the sample coordinates, made once.
struct LogPolar {
    dims: Vec<usize>,
    aporad: usize,
    apofield: ArrayD<f32>,
    filter: ArrayD<f32>,
    /// (2, n, n): rows then columns of the fftshifted spectrum for angle i, log radius j.
    coords: ArrayD<f32>,
}

impl LogPolar {
    fn new(dims: &[usize], n: usize, log_base: f64) -> LogPolar {
        let (h, w) = (dims[0], dims[1]);
        let aporad = (h.min(w) as f64 * 0.12) as usize;
        // numpy.hanning(2 aporad): its first half rises over the first aporad samples, its
        // second falls over the last.
        let hann = hanning(2 * aporad);
        let ramp = |len: usize| -> Vec<f64> {
            (0..len)
                .map(|i| match () {
                    _ if aporad == 0 => 1.0,
                    _ if i < aporad => hann[i],
                    _ if i >= len - aporad => hann[2 * aporad - (len - i)],
                    _ => 1.0,
                })
                .collect()
        };
        let (ry, rx) = (ramp(h), ramp(w));
        // Every table filled by all cores from per-axis factors (a 2048² pair spent a fifth of its
        // time here on one core).
        let mut apofield = Array2::<f32>::zeros((h, w));
        Zip::indexed(&mut apofield).par_for_each(|(i, j), v| *v = (ry[i] * rx[j]) as f32);
        let lin = |len: usize| -> Vec<f64> { (0..len).map(|k| -std::f64::consts::FRAC_PI_2 + std::f64::consts::PI * k as f64 / (len as f64 - 1.0)).collect() };
        let (ly, lx) = (lin(h), lin(w));
        let mut filter = Array2::<f32>::zeros((h, w));
        Zip::indexed(&mut filter).par_for_each(|(i, j), v| {
            let r = ly[i].hypot(lx[j]);
            *v = (if r > std::f64::consts::FRAC_PI_2 { 1.0 } else { 1.0 - r.cos().powi(2) }) as f32;
        });
        let (cy, cx) = (h as f64 / 2.0, w as f64 / 2.0);
        let ellipse = h as f64 / w as f64;
        let turns: Vec<(f64, f64)> = (0..n).map(|i| (-std::f64::consts::PI * i as f64 / n as f64).sin_cos()).collect();
        let radii: Vec<f64> = (0..n).map(|j| log_base.powi(j as i32)).collect();
        let mut coords = Array3::<f32>::zeros((2, n, n));
        Zip::indexed(&mut coords).par_for_each(|(axis, i, j), v| {
            let ((sin, cos), r) = (turns[i], radii[j]);
            *v = if axis == 0 { (r * sin + cy) as f32 } else { (r / ellipse * cos + cx) as f32 };
        });
        let (apofield, filter, coords) = (apofield.into_dyn(), filter.into_dyn(), coords.into_dyn());
        LogPolar { dims: dims.to_vec(), aporad, apofield, filter, coords }
    }

    /// The log-polar grid of `x`'s apodized, high-passed magnitude spectrum, on the device.
    fn spectrum(&self, gpu: &Gpu, x: &ArrayViewD<f32>) -> Result<GpuArray> {
        let bg = border_value(x, self.aporad / 2);
        let mut apodized = x.to_owned();
        apodized
            .as_slice_mut()
            .expect("owned, standard layout")
            .par_iter_mut()
            .zip(self.apofield.as_slice().expect("standard layout"))
            .for_each(|(v, &a)| *v = *v * a + bg * (1.0 - a));
        let plan = FftPlan::cached(gpu, &self.dims, &[0, 1], Transform::Forward, Norm::Backward)?;
        let mut rec = Recording::new(gpu);
        let image = rec.upload_once_f32(&apodized.view())?;
        let complex = real_to_complex::record(&mut rec, image)?;
        let spectrum = plan.record(&mut rec, complex)?;
        let magnitude = complex_to_real::record(&mut rec, ComplexToReal::Abs, spectrum)?;
        let centred = layout::fftshift(&mut rec, magnitude, &[0, 1])?;
        let filter = rec.upload_f32(&self.filter.view())?;
        let filtered = binary::record(&mut rec, BinaryOp::Mul, centred, filter)?;
        let coords = rec.upload_f32(&self.coords.view())?;
        let how = Sampling { order: 3, mode: SplineMode::Nearest, ..Default::default() };
        let grid = interpolate::map_coordinates(&mut rec, filtered, coords, &how)?;
        let out = rec.output(grid);
        Ok(rec.run()?.array(out))
    }
}

/// The map (reference (row, column) → moving) of the similarity found between two 2D images:
/// a start for intensity-based registration that reaches any turn and scale.
pub fn similarity_start(gpu: &Gpu, reference: &ArrayViewD<f32>, moving: &ArrayViewD<f32>, o: &SimilarityOptions) -> Result<AffineMap> {
    let s = similarity(gpu, reference, moving, o)?;
    transform_map(reference.shape(), s.scale, s.angle, s.tvec)
}

/// imreg_dft's `transform_img(image, scale, angle, tvec, bgval=bgval, order=order)` as one
/// affine resampling: the image embedded in a 1.2× larger background, zoomed (scipy's zoom,
/// corners aligned), turned (scipy's rotate, reshape), shifted, and the centre cut back to the
/// image's shape, each step's grid as imreg_dft's (the one interpolation instead of three).
pub fn transform_map(dims: &[usize], scale: f64, angle: f64, tvec: [f64; 2]) -> Result<AffineMap> {
    let embed = |from: usize, to: usize| ((to as i64 - from as i64) as f64 / 2.0).trunc();
    let big: Vec<usize> = dims.iter().map(|&d| (d as f64 * 1.2).round_ties_even() as usize).collect();
    let (zoom, zoomed) = if scale != 1.0 { interpolate::zoom_map(&big, &[scale], false)? } else { (AffineMap::shift(&[0.0, 0.0]), big.clone()) };
    let (turn, turned) = if angle != 0.0 { interpolate::rotate_map(&zoomed, angle, [1, 0], true)? } else { (AffineMap::shift(&[0.0, 0.0]), zoomed.clone()) };
    // Output index o → the turned array's o + c (c: the cut), minus the shift → the zoomed
    // array's by `turn` → the big array's by `zoom` → the image's, minus the embedding.
    let mut matrix = vec![vec![0.0; 2]; 2];
    let mut offset = vec![0.0; 2];
    for a in 0..2 {
        for b in 0..2 {
            matrix[a][b] = (0..2).map(|k| zoom.matrix[a][k] * turn.matrix[k][b]).sum();
        }
        let cut: Vec<f64> = (0..2).map(|k| embed(dims[k], turned[k]) - tvec[k]).collect();
        let in_zoomed: Vec<f64> = (0..2).map(|k| turn.offset[k] + (0..2).map(|b| turn.matrix[k][b] * cut[b]).sum::<f64>()).collect();
        offset[a] = zoom.offset[a] + (0..2).map(|k| zoom.matrix[a][k] * in_zoomed[k]).sum::<f64>() + embed(big[a], dims[a]);
    }
    Ok(AffineMap { matrix, offset })
}

/// `x` transformed as imreg_dft's `transform_img` (see [`transform_map`]), `bgval` beyond it.
pub fn transform(gpu: &Gpu, x: &ArrayViewD<f32>, scale: f64, angle: f64, tvec: [f64; 2], bgval: f32, order: u32) -> Result<ArrayD<f32>> {
    let map = transform_map(x.shape(), scale, angle, tvec)?;
    let how = Sampling { order, mode: SplineMode::Constant, cval: bgval, ..Default::default() };
    let mut rec = Recording::new(gpu);
    let b = rec.upload_once_f32(x)?;
    let y = interpolate::affine_transform(&mut rec, b, &map, x.shape(), &how)?;
    let d = rec.download(y);
    rec.run()?.into_f32(d)
}
