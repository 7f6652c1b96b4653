//! Similarity registration of two volumes about one axis: a turn about `axis`, an isotropic
//! scale and a 3D translation (a sample turned on a rotation stage). A turn about the axis turns
//! the volumes' projections (sums) along it, and a scale scales them in the plane (and multiplies
//! them by the scale, to which the phase-normalised log-polar correlation is blind), so the 2D
//! Fourier-Mellin method ([`super::similarity::similarity`]) on the projections gives the angle
//! and the scale (and settles the 180° ambiguity); the moving volume is then turned and scaled
//! back in one 3D resampling, and a 3D cross-correlation (upsampled) gives the translation.

use ndarray::{ArrayD, ArrayViewD, Axis};

use super::similarity::{self, similarity, windowed, SimilarityOptions};
use super::{Normalization, PhaseCorrelation, PhaseCorrelator};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::graph::Recording;
use crate::ops::interpolate::{self, AffineMap, Sampling, SplineMode};
use crate::ops::reduce::{self, cpu::median, Reduction};

/// How to transform the moving volume to get the reference (see [`transform_3d`]): in the plane
/// of the two other axes (in array order) imreg_dft's `transform_img` geometry with `scale`,
/// `angle` (degrees) and the plane's part of `shift`; along `axis` the same scale about the
/// axis' centre and its part of `shift`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Similarity3d {
    /// The axis turned about (0, 1 or 2).
    pub axis: usize,
    pub scale: f64,
    pub angle: f64,
    /// Per axis (z, y, x), in samples, applied after the turn and the scale.
    pub shift: [f64; 3],
    /// 1 − skimage's normalised RMS error of the translation's correlation (higher is better).
    pub success: f64,
    /// The value beyond the moving volume's edges: the median of its outer faces.
    pub bgval: f32,
}

/// The two axes other than `axis`, in array order: the projection's rows and columns.
fn plane(axis: usize) -> [usize; 2] {
    match axis {
        0 => [1, 2],
        1 => [0, 2],
        _ => [0, 1],
    }
}

/// The output → input map of [`transform_3d`] for volumes of `dims`.
pub fn transform_3d_map(dims: &[usize], t: &Similarity3d) -> Result<AffineMap> {
    if dims.len() != 3 || t.axis > 2 {
        return Err(Error::Shape(format!("transform_3d takes a 3D volume and an axis 0-2, got {dims:?} and axis {}", t.axis)));
    }
    if !(t.scale.is_finite() && t.scale > 0.0 && t.angle.is_finite() && t.shift.iter().all(|s| s.is_finite())) {
        return Err(Error::Invalid(format!("transform_3d needs a finite positive scale, angle and shift, got {t:?}")));
    }
    let p = plane(t.axis);
    let flat = similarity::transform_map(&[dims[p[0]], dims[p[1]]], t.scale, t.angle, [t.shift[p[0]], t.shift[p[1]]])?;
    // Along the axis the plane's actual zoom (input samples per output sample): imreg_dft's
    // canvas rounds the zoomed size, which moves it off 1 / scale by up to half a sample over it.
    let zoom = (flat.matrix[0][0] * flat.matrix[1][1] - flat.matrix[0][1] * flat.matrix[1][0]).abs().sqrt();
    let mut matrix = vec![vec![0.0; 3]; 3];
    let mut offset = vec![0.0; 3];
    for (i, &a) in p.iter().enumerate() {
        for (j, &b) in p.iter().enumerate() {
            matrix[a][b] = flat.matrix[i][j];
        }
        offset[a] = flat.offset[i];
    }
    // Output o → input c + (o − shift − c) · zoom, c the axis' centre.
    let c = (dims[t.axis] as f64 - 1.0) / 2.0;
    matrix[t.axis][t.axis] = zoom;
    offset[t.axis] = c - (c + t.shift[t.axis]) * zoom;
    Ok(AffineMap { matrix, offset })
}

/// `volume` transformed by `t` (spline `order` 0-5, `t.bgval` beyond it), one resampling.
pub fn transform_3d(gpu: &Gpu, volume: &ArrayViewD<f32>, t: &Similarity3d, order: u32) -> Result<ArrayD<f32>> {
    let map = transform_3d_map(volume.shape(), t)?;
    let how = Sampling { order, mode: SplineMode::Constant, cval: t.bgval, ..Default::default() };
    let mut rec = Recording::new(gpu);
    let b = rec.upload_once_f32(volume)?;
    let y = interpolate::affine_transform(&mut rec, b, &map, volume.shape(), &how)?;
    let d = rec.download(y);
    rec.run()?.into_f32(d)
}

/// Registers `moving` onto `reference` (3D, one shape, finite, the plane at least 16 × 16) for a
/// turn about `axis`, a scale and a shift: [`transform_3d`] of `moving` with the result is the
/// registered volume. `numiter` 2 (the angle and scale estimated again on the projections turned
/// back) halved the worst angle error on 128² planes of smoothed noise, to about a third of a
/// log-polar sample.
pub fn similarity_3d(gpu: &Gpu, reference: &ArrayViewD<f32>, moving: &ArrayViewD<f32>, axis: usize, o: &SimilarityOptions) -> Result<Similarity3d> {
    let dims = reference.shape().to_vec();
    if dims.len() != 3 || moving.shape() != dims.as_slice() {
        return Err(Error::Shape(format!("similarity_3d takes two 3D volumes of one shape, got {:?} and {:?}", dims, moving.shape())));
    }
    if axis > 2 {
        return Err(Error::Invalid(format!("similarity_3d turns about axis 0, 1 or 2, got {axis}")));
    }
    if plane(axis).iter().any(|&a| dims[a] < 16) {
        return Err(Error::Shape(format!("similarity_3d needs at least 16 × 16 across axis {axis}, got {dims:?}")));
    }
    crate::check::check_finite(reference, "the reference volume")?;
    crate::check::check_finite(moving, "the moving volume")?;
    let (p0, p1) = projections(gpu, reference, moving, axis)?;
    let flat = similarity(gpu, &p0.view(), &p1.view(), o)?;

    let bgval = faces_median(moving);
    let mut found = Similarity3d { axis, scale: flat.scale, angle: flat.angle, shift: [0.0; 3], success: 0.0, bgval };
    let turned = transform_3d(gpu, moving, &found, o.order)?;
    // As the 2D translation: plain cross-correlation of the windowed volumes about zero.
    let how = PhaseCorrelation { upsample_factor: o.upsample_factor, normalization: Normalization::None };
    let r = PhaseCorrelator::new(gpu, &windowed(reference, None).view(), &how)?.register(&windowed(&turned.view(), Some(bgval)).view())?;
    found.shift = [r.shift[0], r.shift[1], r.shift[2]];
    found.success = 1.0 - r.error.unwrap_or(1.0);
    Ok(found)
}

/// The sums of both volumes along `axis`, on the device.
fn projections(gpu: &Gpu, a: &ArrayViewD<f32>, b: &ArrayViewD<f32>, axis: usize) -> Result<(ArrayD<f32>, ArrayD<f32>)> {
    let mut rec = Recording::new(gpu);
    let (x, y) = (rec.upload_once_f32(a)?, rec.upload_once_f32(b)?);
    let (sx, sy) = (reduce::record(&mut rec, x, Reduction::Sum, Some(axis))?, reduce::record(&mut rec, y, Reduction::Sum, Some(axis))?);
    let (dx, dy) = (rec.download(sx), rec.download(sy));
    let mut done = rec.run()?;
    Ok((done.take_f32(dx)?, done.take_f32(dy)?))
}

/// The median of the samples on the volume's six faces (imreg_dft's border value, in 3D).
fn faces_median(x: &ArrayViewD<f32>) -> f32 {
    let mut v: Vec<f64> = Vec::new();
    for (k, &n) in x.shape().iter().enumerate() {
        for i in [0, n - 1] {
            // Each face whole; the edges it shares with another face count twice (negligible).
            v.extend(x.index_axis(Axis(k), i).iter().map(|&s| s as f64));
        }
    }
    median(&mut v) as f32
}
