//! Intensity-based registration of 2D and 3D images (translation, rigid, similarity, affine)
//! as SimpleITK's `ImageRegistrationMethod`: mean squares, correlation or Mattes mutual
//! information ([`Metric`]), fixed and moving masks, a multi-resolution pyramid
//! (`shrink_factors`, `smoothing_sigmas` in pixels of the full image), and at each level
//! Levenberg-Marquardt (mean squares), L-BFGS or regular-step gradient descent ([`Optimizer`]) on
//! the metric's analytic gradient: the moving image's gradient (central differences, sampled with
//! the image) through the transform's Jacobian. The moving image, its gradients and its support
//! are resampled on the device (one recording per step); the metric's sums are taken on the host
//! in f64.
//!
//! The transform maps the fixed image's indices to the moving image's, as
//! scipy.ndimage.affine_transform's `matrix` and `offset`: `affine_transform(moving, matrix,
//! offset)` is the moving image registered onto the fixed one.

mod itk;
mod level;
mod metric;
mod optimize;
mod transform;

use ndarray::ArrayViewD;

use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::ops::interpolate::AffineMap;
pub use itk::{itk_transform, parse_itk_transform};
use level::Level;
use transform::Params;

/// The transform's kind (SimpleITK's TranslationTransform, Euler2D/VersorRigid3DTransform,
/// Similarity2D/3DTransform, AffineTransform), turns and scales about the fixed image's centre.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransformKind {
    Translation,
    Rigid,
    Similarity,
    Affine,
}

/// The similarity measure (SimpleITK's SetMetricAsMeanSquares, SetMetricAsCorrelation,
/// SetMetricAsMattesMutualInformation(numberOfHistogramBins)), minimised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    MeanSquares,
    Correlation,
    MattesMutualInformation { bins: usize },
}

/// How each level is optimised.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Optimizer {
    /// Levenberg-Marquardt for mean squares, L-BFGS for the others.
    Auto,
    /// Gauss-Newton steps damped as Levenberg-Marquardt (mean squares only).
    LevenbergMarquardt,
    /// Limited-memory BFGS (eight pairs) with a backtracking line search.
    Lbfgs,
    /// SimpleITK's SetOptimizerAsRegularStepGradientDescent(learningRate, minStep,
    /// numberOfIterations, relaxationFactor): steps of `learning_rate` pixels of motion.
    RegularStep { learning_rate: f64, min_step: f64, relaxation: f64 },
}

/// The registration's options (SimpleITK's names where it has them).
#[derive(Clone, Debug, PartialEq)]
pub struct AffineOptions {
    pub kind: TransformKind,
    pub metric: Metric,
    pub optimizer: Optimizer,
    /// Each level's shrink factor, coarsest first (SimpleITK's SetShrinkFactorsPerLevel).
    pub shrink_factors: Vec<usize>,
    /// Each level's Gaussian smoothing, in pixels of the full image (SetSmoothingSigmasPerLevel).
    pub smoothing_sigmas: Vec<f64>,
    /// Most steps per level.
    pub iterations: usize,
    /// A level ends when a step moves no point of the image by more than this (pixels).
    pub tolerance: f64,
    /// The starting transform (None: the identity), fixed indices → moving.
    pub initial: Option<AffineMap>,
}

impl Default for AffineOptions {
    fn default() -> AffineOptions {
        AffineOptions {
            kind: TransformKind::Affine,
            metric: Metric::MeanSquares,
            optimizer: Optimizer::Auto,
            shrink_factors: vec![4, 2, 1],
            smoothing_sigmas: vec![2.0, 1.0, 0.0],
            iterations: 100,
            tolerance: 1e-4,
            initial: None,
        }
    }
}

/// The transform found and how the fit went.
#[derive(Clone, Debug, PartialEq)]
pub struct AffineResult {
    pub map: AffineMap,
    /// The metric at the end of the finest level (mean squares: the mean squared difference;
    /// correlation: −NCC²; mutual information: −MI).
    pub metric: f64,
    /// Steps taken, over every level.
    pub iterations: usize,
}

/// Registers `moving` onto `fixed` (2D or 3D, one shape or not, finite).
pub fn register_affine(gpu: &Gpu, fixed: &ArrayViewD<f32>, moving: &ArrayViewD<f32>, o: &AffineOptions) -> Result<AffineResult> {
    register_affine_masked(gpu, fixed, moving, None, None, o)
}

/// [`register_affine`] over the points where `fixed_mask` is true (of the fixed image's shape)
/// that map inside `moving_mask` (of the moving image's shape), SimpleITK's metric masks.
pub fn register_affine_masked(
    gpu: &Gpu,
    fixed: &ArrayViewD<f32>,
    moving: &ArrayViewD<f32>,
    fixed_mask: Option<&ArrayViewD<bool>>,
    moving_mask: Option<&ArrayViewD<bool>>,
    o: &AffineOptions,
) -> Result<AffineResult> {
    check(fixed, moving, fixed_mask, moving_mask, o)?;
    check_memory(gpu, fixed, moving, o)?;
    crate::check::check_finite(fixed, "the fixed image")?;
    crate::check::check_finite(moving, "the moving image")?;
    let d = fixed.ndim();
    let centre: Vec<f64> = fixed.shape().iter().map(|&n| (n as f64 - 1.0) / 2.0).collect();
    let initial = o.initial.clone().unwrap_or_else(|| AffineMap::shift(&vec![0.0; d]));
    let mut params = Params::from_map(o.kind, &centre, &initial);
    let mut steps = 0;
    let mut metric = f64::NAN;
    for (k, (&f, &sigma)) in o.shrink_factors.iter().zip(&o.smoothing_sigmas).enumerate() {
        let level = Level::new(gpu, fixed, moving, fixed_mask, moving_mask, f, sigma)?;
        if k == 0 && o.kind != TransformKind::Translation && o.initial.is_none() {
            // The translation first, at the coarsest level: from the identity, the matrix's
            // freedom let a first fit slide into a shrunk, shifted false minimum (a 128² pair
            // shifted by 2.5 pixels was "registered" at scale 0.94).
            let start = Params::from_map(TransformKind::Translation, &centre, &params.map_at(1.0));
            let (t, n, _) = optimize::fit(gpu, &level, start, o)?;
            params = Params::from_map(o.kind, &centre, &t.map_at(1.0));
            steps += n;
        }
        let (p, n, m) = optimize::fit(gpu, &level, params, o)?;
        params = p;
        steps += n;
        metric = m;
    }
    Ok(AffineResult { map: params.map_at(1.0), metric, iterations: steps })
}

/// The finest level's arrays must fit before anything is allocated: on the device the fixed
/// image (with its mask), the moving image, its spline coefficients, gradients and support,
/// their samples and the prefilter's temporaries; on the host the fixed level, the moving
/// level's values, and (mutual information beyond the histogram kernel's bins) the samples.
fn check_memory(gpu: &Gpu, fixed: &ArrayViewD<f32>, moving: &ArrayViewD<f32>, o: &AffineOptions) -> Result<()> {
    let d = fixed.ndim() as u64;
    let n = fixed.len().max(moving.len()) as u64;
    let device = n.saturating_mul(4 * (10 + 2 * d));
    if device > gpu.memory_budget_bytes() || n.saturating_mul(8) > gpu.max_buffer_bytes() {
        return Err(Error::TooLarge {
            what: format!("register_affine of {:?} onto {:?} (the finest level's arrays on the device)", moving.shape(), fixed.shape()),
            bytes: device,
            limit: gpu.memory_budget_bytes().min(gpu.max_buffer_bytes()),
        });
    }
    let host_samples = matches!(o.metric, Metric::MattesMutualInformation { bins } if bins > crate::kernels::registration_histogram::MOST_BINS);
    let host_arrays = 4 + if host_samples { 2 + d as usize } else { 0 };
    crate::host::check_host_array("register_affine's host arrays", &[host_arrays, n as usize], 4)
}

fn check(
    fixed: &ArrayViewD<f32>,
    moving: &ArrayViewD<f32>,
    fixed_mask: Option<&ArrayViewD<bool>>,
    moving_mask: Option<&ArrayViewD<bool>>,
    o: &AffineOptions,
) -> Result<()> {
    let d = fixed.ndim();
    if !(d == 2 || d == 3) || moving.ndim() != d {
        return Err(Error::Shape(format!("register_affine takes two 2D or two 3D images, got {:?} and {:?}", fixed.shape(), moving.shape())));
    }
    for (mask, image, name) in [(fixed_mask.map(|m| m.shape()), fixed.shape(), "fixed"), (moving_mask.map(|m| m.shape()), moving.shape(), "moving")] {
        if let Some(m) = mask {
            if m != image {
                return Err(Error::Shape(format!("register_affine: the {name} mask's shape {m:?} is not the {name} image's {image:?}")));
            }
        }
    }
    if o.shrink_factors.is_empty() || o.shrink_factors.len() != o.smoothing_sigmas.len() || o.shrink_factors.contains(&0) {
        return Err(Error::Invalid(format!(
            "register_affine: one shrink factor (≥ 1) and one smoothing sigma per level, got {:?} and {:?}",
            o.shrink_factors, o.smoothing_sigmas
        )));
    }
    if o.smoothing_sigmas.iter().any(|s| !(s.is_finite() && *s >= 0.0)) || o.iterations == 0 || !(o.tolerance.is_finite() && o.tolerance > 0.0) {
        return Err(Error::Invalid(format!(
            "register_affine: sigmas ≥ 0, iterations ≥ 1 and a positive tolerance, got {:?}, {}, {}",
            o.smoothing_sigmas, o.iterations, o.tolerance
        )));
    }
    if let Metric::MattesMutualInformation { bins } = o.metric {
        if !(5..=1024).contains(&bins) {
            return Err(Error::Invalid(format!("register_affine: the mutual information takes 5 to 1024 histogram bins, got {bins}")));
        }
    }
    if o.optimizer == Optimizer::LevenbergMarquardt && o.metric != Metric::MeanSquares {
        return Err(Error::Invalid("register_affine: Levenberg-Marquardt fits mean squares only (use L-BFGS or regular steps)".into()));
    }
    if let Optimizer::RegularStep { learning_rate, min_step, relaxation } = o.optimizer {
        if !(learning_rate > 0.0 && learning_rate.is_finite() && min_step > 0.0 && min_step.is_finite() && relaxation > 0.0 && relaxation < 1.0) {
            return Err(Error::Invalid(format!(
                "register_affine: regular steps take a positive learning rate and minimum step and a relaxation in (0, 1), got {learning_rate}, {min_step}, {relaxation}"
            )));
        }
    }
    if let Some(m) = &o.initial {
        if m.matrix.len() != d
            || m.matrix.iter().any(|r| r.len() != d)
            || m.offset.len() != d
            || m.matrix.iter().flatten().chain(&m.offset).any(|x| !x.is_finite())
        {
            return Err(Error::Invalid(format!("register_affine: the initial transform must be a finite {d} × {d} matrix and {d} offsets")));
        }
    }
    Ok(())
}
