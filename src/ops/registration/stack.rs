//! Stack registration with pystackreg's conventions (`StackReg.register_stack`): every frame of
//! a stack (frames along axis 0) registered onto a reference (the previous frame, the mean of
//! the first frames, or the mean of all), the result one 3 × 3 matrix per frame in pystackreg's
//! form: homogeneous (x, y) coordinates of the reference mapped to the frame's, so that sampling
//! the frame there registers it ([`transform_stack`]). Translations by phase correlation
//! (upsampled DFT), rigid bodies and scaled rotations by the Fourier-Mellin similarity
//! ([`super::similarity`]), affine transforms by mean squares ([`super::affine`], from the
//! similarity: its capture range is the Fourier-Mellin one); pystackreg's bilinear transform is
//! not here.

use ndarray::{Array3, ArrayView3, ArrayViewD, Axis};

use super::affine::AffineOptions;
use super::similarity::{self, SimilarityOptions};
use super::{Normalization, PhaseCorrelation, PhaseCorrelator};
use crate::error::{Error, Result};
use crate::gpu::{Gpu, GpuArray};
use crate::graph::Recording;
use crate::ops::interpolate::{self, AffineMap, Sampling, SplineMode};

/// pystackreg's transformations that are found here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StackTransform {
    Translation,
    RigidBody,
    ScaledRotation,
    Affine,
}

/// What each frame is registered onto (pystackreg's `reference`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StackReference {
    /// The previous frame; the matrices chained, so each maps the first frame's coordinates.
    Previous,
    /// The mean of the first `n` frames (the first frame itself keeps the identity).
    First(usize),
    /// The mean of all frames.
    Mean,
}

/// pystackreg's matrix: `[[a, b, tx], [c, d, ty], [0, 0, 1]]` over (x, y, 1).
pub type Tmat = [[f64; 3]; 3];

const IDENTITY: Tmat = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

/// One matrix per frame of `stack` (frames, rows, columns), sub-sample peaks to
/// 1 / `upsample_factor`.
pub fn register_stack(gpu: &Gpu, stack: &ArrayView3<f32>, transform: StackTransform, reference: StackReference, upsample_factor: f64) -> Result<Vec<Tmat>> {
    let frames = stack.shape()[0];
    if frames == 0 {
        return Err(Error::Empty("register_stack: the stack has no frames".into()));
    }
    crate::check::check_finite(&stack.view().into_dyn(), "the stack")?;
    let mean_of = |n: usize| stack.slice_axis(Axis(0), (0..n).into()).mapv(|v| v as f64).mean_axis(Axis(0)).expect("frames").mapv(|v| v as f32).into_dyn();
    let pair = Pair::new(transform, upsample_factor)?;
    let mut tmats = vec![IDENTITY; frames];
    match reference {
        StackReference::Previous => {
            for i in 1..frames {
                let t = pair.register(gpu, &stack.index_axis(Axis(0), i - 1).into_dyn(), &stack.index_axis(Axis(0), i).into_dyn())?;
                tmats[i] = product(&t, &tmats[i - 1]);
            }
        }
        StackReference::First(n) => {
            if n == 0 || n > frames {
                return Err(Error::Invalid(format!("register_stack: n_frames {n} of a stack of {frames}")));
            }
            let reference = mean_of(n);
            for (i, t) in tmats.iter_mut().enumerate().skip(1) {
                *t = pair.register(gpu, &reference.view(), &stack.index_axis(Axis(0), i).into_dyn())?;
            }
        }
        StackReference::Mean => {
            let reference = mean_of(frames);
            for (i, t) in tmats.iter_mut().enumerate() {
                *t = pair.register(gpu, &reference.view(), &stack.index_axis(Axis(0), i).into_dyn())?;
            }
        }
    }
    Ok(tmats)
}

/// `a · b`.
fn product(a: &Tmat, b: &Tmat) -> Tmat {
    let mut c = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            c[i][j] = (0..3).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    c
}

/// One registration of a frame onto a reference.
struct Pair {
    transform: StackTransform,
    upsample_factor: f64,
}

impl Pair {
    fn new(transform: StackTransform, upsample_factor: f64) -> Result<Pair> {
        super::check_upsample_factor(upsample_factor)?;
        Ok(Pair { transform, upsample_factor })
    }

    fn register(&self, gpu: &Gpu, reference: &ArrayViewD<f32>, moving: &ArrayViewD<f32>) -> Result<Tmat> {
        if self.transform == StackTransform::Translation {
            // Cross-correlation of the frames less their means, windowed: phase normalisation
            // moves a smooth frame's sub-sample peak by tenths of a sample (see similarity.rs).
            let how = PhaseCorrelation { upsample_factor: self.upsample_factor, normalization: Normalization::None };
            let r = PhaseCorrelator::new(gpu, &similarity::windowed(reference, None).view(), &how)?.register(&similarity::windowed(moving, None).view())?;
            // The shift s registers the frame (frame(p − s) = reference(p)): reference (x, y)
            // lies at (x − s_x, y − s_y) in the frame.
            return Ok([[1.0, 0.0, -r.shift[1]], [0.0, 1.0, -r.shift[0]], [0.0, 0.0, 1.0]]);
        }
        let o = SimilarityOptions { upsample_factor: self.upsample_factor, fixed_scale: self.transform == StackTransform::RigidBody, ..Default::default() };
        // transform_img's map sends the reference's (row, column) to the frame's.
        let m = similarity::similarity_start(gpu, reference, moving, &o)?;
        if self.transform != StackTransform::Affine {
            return Ok(from_map(&m));
        }
        let o = AffineOptions { initial: Some(m), ..Default::default() };
        Ok(from_map(&super::affine::register_affine(gpu, reference, moving, &o)?.map))
    }
}

/// pystackreg's matrix of an output → input map over (row, column).
fn from_map(m: &AffineMap) -> Tmat {
    [[m.matrix[1][1], m.matrix[1][0], m.offset[1]], [m.matrix[0][1], m.matrix[0][0], m.offset[0]], [0.0, 0.0, 1.0]]
}

/// The output → input map over (row, column) of pystackreg's matrix.
fn to_map(t: &Tmat) -> AffineMap {
    AffineMap { matrix: vec![vec![t[1][1], t[1][0]], vec![t[0][1], t[0][0]]], offset: vec![t[1][2], t[0][2]] }
}

/// pystackreg's `transform_stack`: each frame sampled at its matrix's image of the reference
/// grid (spline `order`, zeros beyond the frame), the frames kept on the device between the
/// upload and the download.
pub fn transform_stack(gpu: &Gpu, stack: &ArrayView3<f32>, tmats: &[Tmat], order: u32) -> Result<Array3<f32>> {
    let (frames, h, w) = stack.dim();
    if tmats.len() != frames {
        return Err(Error::Shape(format!("transform_stack: {} matrices for {frames} frames", tmats.len())));
    }
    if let Some(t) = tmats.iter().find(|t| t.iter().flatten().any(|v| !v.is_finite()) || t[2] != [0.0, 0.0, 1.0]) {
        return Err(Error::Invalid(format!("transform_stack takes finite affine matrices with a last row 0, 0, 1, got {t:?}")));
    }
    crate::check::check_finite(&stack.view().into_dyn(), "the stack")?;
    let how = Sampling { order, mode: SplineMode::Constant, cval: 0.0, ..Default::default() };
    let mut out = Array3::<f32>::zeros((frames, h, w));
    for (i, t) in tmats.iter().enumerate() {
        let frame = stack.index_axis(Axis(0), i).into_dyn();
        let mut rec = Recording::new(gpu);
        let x = rec.upload_once_f32(&frame)?;
        let y = interpolate::affine_transform(&mut rec, x, &to_map(t), &[h, w], &how)?;
        let o = rec.output(y);
        let y = rec.run()?.array(o);
        let plane = GpuArray::download_joined::<f32>(gpu, &[y], &[h, w])?;
        out.index_axis_mut(Axis(0), i).assign(&plane.into_dimensionality::<ndarray::Ix2>().map_err(|e| Error::Shape(e.to_string()))?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrices_and_maps_round_trip() {
        let t = [[0.9, 0.1, 3.0], [-0.2, 1.1, -4.0], [0.0, 0.0, 1.0]];
        assert_eq!(from_map(&to_map(&t)), t);
        assert_eq!(product(&t, &IDENTITY), t);
    }
}
