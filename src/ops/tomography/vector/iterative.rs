//! SIRT and CGLS in any vector geometry, as ASTRA's `SIRT3D_CUDA`/`CGLS3D_CUDA` (and their 2D
//! forms), every iteration on the device:
//! - SIRT: x ← clamp(x + λ C Aᵀ R (b − A x), min, max), R and C the inverse row and column sums
//!   of A (0 where a sum is below 10⁻⁶, as ASTRA), a reconstruction mask zeroing C (those voxels
//!   keep their start), a projection mask zeroing R;
//! - CGLS: conjugate gradients on the normal equations AᵀA x = Aᵀb of the masked operator
//!   M_p A M_v, the step sizes computed and applied on the device;
//! - MLEM: x ← x · Aᵀ(b / (A x + ε)) / Aᵀ1 from a constant 1 (counts ≥ 0, no masks);
//! - OS-SART and OSEM over ordered subsets of the views ([`super::sart`]), FISTA-TV
//!   ([`super::fista`]).
//!
//! The residual ‖b − A x‖ (masked) of each iterate before its update is returned.

use ndarray::{ArrayD, ArrayViewD, IxDyn};

use super::{gpu, Projector, Views};
use crate::error::{Error, Result};
use crate::gpu::{Dtype, Gpu, GpuArray};
use crate::graph::{Buf, Recording};
use crate::kernels::binary::{self, BinaryOp};
use crate::kernels::unary::{self, UnaryOp};
use crate::kernels::{axpy_ratio, sirt_update};
use crate::ops::reduce::{self, Reduction};
use crate::placement::Progress;

/// The algorithms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Algorithm {
    Sirt,
    Cgls,
    /// MLEM (ASTRA's `EM_CUDA`): x ← x · Aᵀ(b / A x) / Aᵀ1 from a constant 1, on counts ≥ 0.
    Mlem,
    /// OS-SART over subsets of `subset_size` views ([`super::sart`]; TIGRE's `OS_SART`).
    Sart {
        subset_size: usize,
    },
    /// OSEM (Hudson and Larkin 1994): MLEM's update per subset of `subset_size` views, dealt as
    /// OS-SART's.
    Osem {
        subset_size: usize,
    },
    /// FISTA with a total-variation proximal step of weight `weight` by `tv_iterations` of
    /// Chambolle's algorithm ([`super::fista`]; TIGRE's `FISTA`).
    FistaTv {
        weight: f32,
        tv_iterations: usize,
    },
}

impl Algorithm {
    /// Checks the algorithm's own parameters (subset sizes, the TV weight and iterations).
    pub fn check(&self) -> Result<()> {
        match *self {
            Algorithm::Sart { subset_size: 0 } | Algorithm::Osem { subset_size: 0 } => Err(Error::Invalid("a subset size of 0 views (1 or more)".into())),
            Algorithm::FistaTv { weight, tv_iterations } => super::fista::check(weight, tv_iterations),
            _ => Ok(()),
        }
    }
}

/// ASTRA's options (`MinConstraint`, `MaxConstraint`, `Relaxation`, `ReconstructionMaskId`,
/// `SinogramMaskId`, the starting volume).
#[derive(Clone, Debug)]
pub struct Options {
    pub iterations: usize,
    pub projector: Projector,
    /// SIRT only: bounds applied after each update.
    pub min: Option<f32>,
    pub max: Option<f32>,
    /// SIRT only: λ (ASTRA's default 1).
    pub relaxation: f32,
    /// 1 where the volume may change, 0 where it may not (the volume's shape).
    pub volume_mask: Option<ArrayD<f32>>,
    /// 1 where a projection value counts, 0 where it does not (the projections' shape).
    pub projection_mask: Option<ArrayD<f32>>,
    /// The start (default 0).
    pub initial: Option<ArrayD<f32>>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            iterations: 100,
            projector: Projector::Matched,
            min: None,
            max: None,
            relaxation: 1.0,
            volume_mask: None,
            projection_mask: None,
            initial: None,
        }
    }
}

/// What [`solve`] returns: the volume and the residual norm of each iterate before its update
/// (and FISTA's L, the step's inverse).
#[derive(Clone, Debug)]
pub struct Solution {
    pub volume: ArrayD<f32>,
    pub residuals: Vec<f64>,
    pub lipschitz: Option<f64>,
}

/// Iterations one recording holds.
const STEPS_PER_RECORDING: usize = 32;
/// ASTRA's floor of the row and column sums.
pub(super) const SUM_FLOOR: f32 = 1e-6;

fn check_array(x: &ArrayViewD<f32>, shape: &[usize], what: &str) -> Result<()> {
    if x.shape() != shape {
        return Err(Error::Shape(format!("{what} {:?} for a geometry of {shape:?}", x.shape())));
    }
    crate::check::check_finite(x, what)
}

/// The projections' shape and values, and the options.
pub fn check_inputs(projections: &ArrayViewD<f32>, views: &Views, o: &Options) -> Result<()> {
    check_array(projections, &views.projection_shape(), "the projections")?;
    check_options(o, views)
}

fn check_options(o: &Options, views: &Views) -> Result<()> {
    if !(1..=100_000).contains(&o.iterations) {
        return Err(Error::Invalid(format!("{} iterations (1 to 100000)", o.iterations)));
    }
    if !(o.relaxation.is_finite() && o.relaxation > 0.0 && o.relaxation < 2.0) {
        return Err(Error::Invalid(format!("a relaxation of {} (more than 0, less than 2)", o.relaxation)));
    }
    for (v, what) in [(o.min, "the minimum"), (o.max, "the maximum")] {
        if v.is_some_and(|v| v.is_nan()) {
            return Err(Error::NonFinite(format!("{what} constraint")));
        }
    }
    if let (Some(lo), Some(hi)) = (o.min, o.max) {
        if lo > hi {
            return Err(Error::Invalid(format!("a minimum {lo} above the maximum {hi}")));
        }
    }
    if let Some(m) = &o.volume_mask {
        check_array(&m.view(), &views.volume_shape(), "the reconstruction mask")?;
    }
    if let Some(m) = &o.projection_mask {
        check_array(&m.view(), &views.projection_shape(), "the projection mask")?;
    }
    if let Some(x) = &o.initial {
        check_array(&x.view(), &views.volume_shape(), "the starting volume")?;
    }
    Ok(())
}

/// MLEM's and OSEM's inputs: counts of 0 or more, no masks.
pub(super) fn check_counts(projections: &ArrayViewD<f32>, o: &Options, what: &str) -> Result<()> {
    if o.volume_mask.is_some() || o.projection_mask.is_some() {
        return Err(Error::Invalid(format!("masks belong to SIRT, CGLS, OS-SART and FISTA-TV, not {what}")));
    }
    if let Some(v) = projections.iter().find(|&&v| v < 0.0) {
        return Err(Error::Invalid(format!("a negative count ({v}) in the projections: {what} takes counts of 0 or more")));
    }
    Ok(())
}

/// Whether the volume or the projections exceed one buffer (SIRT, CGLS and MLEM then run in
/// blocks, [`super::blocked`]).
pub fn beyond_one_buffer(gpu: &Gpu, views: &Views) -> bool {
    let volume = 4 * views.dims.iter().map(|&d| d as u64).product::<u64>();
    let projections = 4 * (views.rows * views.cols * views.projections()) as u64;
    volume.max(projections) > gpu.max_buffer_bytes()
}

/// Refuses a problem whose working set (about six volumes and six projection sets) does not fit
/// the device's budget or one buffer, before anything is allocated.
pub fn check_fits(gpu: &Gpu, views: &Views, volumes: u64, projection_sets: u64) -> Result<()> {
    let volume = 4 * views.dims.iter().map(|&d| d as u64).product::<u64>();
    let projections = 4 * (views.rows * views.cols * views.projections()) as u64;
    let largest = volume.max(projections);
    if largest > gpu.max_buffer_bytes() {
        return Err(Error::OutOfMemory(format!(
            "a volume of {volume} bytes or projections of {projections} bytes in one buffer: this device's buffers hold {} bytes",
            gpu.max_buffer_bytes()
        )));
    }
    let need = volumes * volume + projection_sets * projections;
    if need > gpu.memory_budget_bytes() {
        return Err(Error::OutOfMemory(format!(
            "the reconstruction's working set of {need} bytes, beyond this device's memory budget of {} bytes",
            gpu.memory_budget_bytes()
        )));
    }
    Ok(())
}

/// Σ x² of an array, as a one-element array on the device.
pub(super) fn sum_squares(rec: &mut Recording, x: Buf) -> Result<Buf> {
    let n = rec.shape(x).len();
    let flat = rec.reinterpret(x, &[n], Dtype::F32)?;
    reduce::record(rec, flat, Reduction::SumSquares, None)
}

/// `x` times `mask`, or `x`.
pub(super) fn masked(rec: &mut Recording, x: Buf, mask: Option<Buf>) -> Result<Buf> {
    match mask {
        Some(m) => binary::record(rec, BinaryOp::Mul, x, m),
        None => Ok(x),
    }
}

/// `mask`, or ones of `shape`.
pub(super) fn ones_or(rec: &mut Recording, mask: Option<Buf>, shape: &[usize]) -> Result<Buf> {
    if let Some(m) = mask {
        return Ok(m);
    }
    let x = rec.temp(shape, Dtype::F32)?;
    crate::kernels::fill::record(rec, x, 1.0);
    Ok(x)
}

/// The start: `o.initial` uploaded, or `value` everywhere.
pub(super) fn start(rec: &mut Recording, o: &Options, shape: &[usize], value: f32) -> Result<Buf> {
    match &o.initial {
        Some(x) => rec.upload_once_f32(&x.view()),
        None => {
            let x = rec.temp(shape, Dtype::F32)?;
            crate::kernels::fill::record(rec, x, value);
            Ok(x)
        }
    }
}

/// `o.iterations` of SIRT or CGLS on projections in the geometry `views`.
pub fn solve(
    gpu: &Gpu,
    algorithm: Algorithm,
    projections: &ArrayViewD<f32>,
    views: &Views,
    o: &Options,
    progress: &mut dyn FnMut(Progress),
) -> Result<Solution> {
    match algorithm {
        Algorithm::Sart { subset_size } => return super::sart::solve(gpu, projections, views, subset_size, false, o, progress),
        Algorithm::Osem { subset_size } => return super::sart::solve(gpu, projections, views, subset_size, true, o, progress),
        Algorithm::FistaTv { weight, tv_iterations } => return super::fista::solve(gpu, projections, views, weight, tv_iterations, o, progress),
        _ => {}
    }
    check_inputs(projections, views, o)?;
    if algorithm == Algorithm::Mlem {
        check_counts(projections, o, "MLEM")?;
    }
    if beyond_one_buffer(gpu, views) {
        return super::blocked::solve(gpu, algorithm, projections, views, o, progress);
    }
    check_fits(gpu, views, 6, 6)?;
    let (vshape, pshape) = (views.volume_shape(), views.projection_shape());
    let upload_mask = |rec: &mut Recording, m: &Option<ArrayD<f32>>| m.as_ref().map(|m| rec.upload_once_f32(&m.view())).transpose();

    // Set-up: b, the masks, and the algorithm's first state.
    let mut rec = Recording::new(gpu);
    let s = gpu::setup(&mut rec, views)?;
    let b = rec.upload_once_f32(projections)?;
    let (mv, mp) = (upload_mask(&mut rec, &o.volume_mask)?, upload_mask(&mut rec, &o.projection_mask)?);
    let x = start(&mut rec, o, &vshape, if algorithm == Algorithm::Mlem { 1.0 } else { 0.0 })?;
    let mut keep = vec![b];
    match algorithm {
        Algorithm::Sirt => {
            let ones = ones_or(&mut rec, mv, &vshape)?;
            let rows = gpu::record_project_for(&mut rec, ones, views, &s, o.projector)?;
            let r = unary::record(&mut rec, UnaryOp::Reciprocal(SUM_FLOOR), rows)?;
            let r = masked(&mut rec, r, mp)?;
            let ones = ones_or(&mut rec, mp, &pshape)?;
            let cols = gpu::record_backproject(&mut rec, ones, views, &s, o.projector)?;
            let c = unary::record(&mut rec, UnaryOp::Reciprocal(SUM_FLOOR), cols)?;
            let c = masked(&mut rec, c, mv)?;
            keep.extend([x, r, c]);
        }
        Algorithm::Cgls => {
            let ax = gpu::record_project_for(&mut rec, x, views, &s, o.projector)?;
            let r = binary::record(&mut rec, BinaryOp::Sub, b, ax)?;
            let r = masked(&mut rec, r, mp)?;
            let p = gpu::record_backproject(&mut rec, r, views, &s, o.projector)?;
            let p = masked(&mut rec, p, mv)?;
            let gamma = sum_squares(&mut rec, p)?;
            keep.extend([x, r, p, gamma]);
        }
        Algorithm::Sart { .. } | Algorithm::Osem { .. } | Algorithm::FistaTv { .. } => unreachable!("solved in sart.rs and fista.rs"),
        Algorithm::Mlem => {
            let ones = ones_or(&mut rec, None, &pshape)?;
            let norm = gpu::record_backproject(&mut rec, ones, views, &s, o.projector)?;
            let norm = unary::record(&mut rec, UnaryOp::MaxScalar(f32::MIN_POSITIVE), norm)?;
            keep.extend([x, norm]);
        }
    }
    if let Some(m) = mp {
        keep.push(m);
    }
    if let Some(m) = mv {
        keep.push(m);
    }
    let outputs: Vec<_> = keep.iter().map(|&k| rec.output(k)).collect();
    let results = rec.run()?;
    let mut state: Vec<GpuArray> = outputs.into_iter().map(|o| results.array(o)).collect();
    drop(results);

    let mut residuals = Vec::with_capacity(o.iterations);
    while residuals.len() < o.iterations {
        let steps = (o.iterations - residuals.len()).min(STEPS_PER_RECORDING);
        let mut rec = Recording::new(gpu);
        let s = gpu::setup(&mut rec, views)?;
        let inputs: Vec<Buf> = state.iter().map(|a| rec.input(a)).collect();
        let count = match algorithm {
            Algorithm::Sirt => 4,
            Algorithm::Cgls => 5,
            Algorithm::Mlem => 3,
            Algorithm::Sart { .. } | Algorithm::Osem { .. } | Algorithm::FistaTv { .. } => unreachable!("solved in sart.rs and fista.rs"),
        };
        let (mut mp, mut mv) = (None, None);
        let mut rest = inputs[count..].iter();
        if o.projection_mask.is_some() {
            mp = rest.next().copied();
        }
        if o.volume_mask.is_some() {
            mv = rest.next().copied();
        }
        let mut sums = Vec::with_capacity(steps);
        let next: Vec<Buf> = match algorithm {
            Algorithm::Sirt => {
                let [b, mut x, r, c] = inputs[..4] else { unreachable!("four arrays") };
                let (lo, hi) = (o.min.unwrap_or(f32::MIN), o.max.unwrap_or(f32::MAX));
                for _ in 0..steps {
                    let ax = gpu::record_project_for(&mut rec, x, views, &s, o.projector)?;
                    let residual = binary::record(&mut rec, BinaryOp::Sub, b, ax)?;
                    let residual = masked(&mut rec, residual, mp)?;
                    sums.push(sum_squares(&mut rec, residual)?);
                    let weighted = binary::record(&mut rec, BinaryOp::Mul, residual, r)?;
                    let v = gpu::record_backproject(&mut rec, weighted, views, &s, o.projector)?;
                    x = sirt_update::record(&mut rec, x, c, v, o.relaxation, lo, hi)?;
                }
                vec![b, x, r, c]
            }
            Algorithm::Cgls => {
                let [b, mut x, mut r, mut p, mut gamma] = inputs[..5] else { unreachable!("five arrays") };
                for _ in 0..steps {
                    sums.push(sum_squares(&mut rec, r)?);
                    let q = gpu::record_project_for(&mut rec, p, views, &s, o.projector)?;
                    let q = masked(&mut rec, q, mp)?;
                    let qq = sum_squares(&mut rec, q)?;
                    x = axpy_ratio::record(&mut rec, x, p, gamma, qq, 1.0)?;
                    r = axpy_ratio::record(&mut rec, r, q, gamma, qq, -1.0)?;
                    let g = gpu::record_backproject(&mut rec, r, views, &s, o.projector)?;
                    let g = masked(&mut rec, g, mv)?;
                    let next = sum_squares(&mut rec, g)?;
                    p = axpy_ratio::record(&mut rec, g, p, next, gamma, 1.0)?;
                    gamma = next;
                }
                vec![b, x, r, p, gamma]
            }
            Algorithm::Sart { .. } | Algorithm::Osem { .. } | Algorithm::FistaTv { .. } => unreachable!("solved in sart.rs and fista.rs"),
            Algorithm::Mlem => {
                let [b, mut x, norm] = inputs[..3] else { unreachable!("three arrays") };
                for _ in 0..steps {
                    let q = gpu::record_project_for(&mut rec, x, views, &s, o.projector)?;
                    let residual = binary::record(&mut rec, BinaryOp::Sub, b, q)?;
                    sums.push(sum_squares(&mut rec, residual)?);
                    let (ratio, _) = crate::kernels::em_ratio::record(&mut rec, b, q, crate::ops::tomography::EM_EPSILON)?;
                    let back = gpu::record_backproject(&mut rec, ratio, views, &s, o.projector)?;
                    x = crate::kernels::em_update::record(&mut rec, x, back, norm)?;
                }
                vec![b, x, norm]
            }
        };
        let mut keep = next;
        keep.extend(mp);
        keep.extend(mv);
        let outputs: Vec<_> = keep.iter().map(|&k| rec.output(k)).collect();
        let downloads: Vec<_> = sums.iter().map(|&q| rec.download(q)).collect();
        let results = rec.run()?;
        for d in downloads {
            let v = results.f32(d)?;
            residuals.push((v.iter().next().copied().unwrap_or(f32::NAN) as f64).sqrt());
        }
        state = outputs.into_iter().map(|o| results.array(o)).collect();
        progress(Progress::new("iterations", residuals.len(), o.iterations));
    }
    let x = &state[1];
    let volume = x.download_f32(gpu)?;
    let volume = volume.into_shape_with_order(IxDyn(&vshape)).map_err(|e| Error::Shape(e.to_string()))?;
    Ok(Solution { volume, residuals, lipschitz: None })
}
