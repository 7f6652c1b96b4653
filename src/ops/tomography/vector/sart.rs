//! OS-SART (ordered subsets SART, as TIGRE's `OS_SART`) and OSEM (Hudson and Larkin, IEEE
//! Trans. Med. Imaging 1994): the views dealt into subsets of
//! `subset_size` (subset k holds views k, k + S, k + 2S, …, S the subset count, so each spans
//! the whole scan), and per subset s, in order, x ← clamp(x + λ C_s A_sᵀ R_s (b_s − A_s x), min,
//! max), R_s and C_s the inverse row and column sums of the subset's operator (0 below 10⁻⁶, as
//! SIRT's). One iteration sweeps every subset; a subset size of all the views is SIRT, of one
//! view ASTRA's SART. OSEM makes MLEM's update per subset instead, x ← x · A_sᵀ(b_s / A_s x) /
//! A_sᵀ1, from a constant 1 (counts ≥ 0, no masks); one subset is MLEM.
//!
//! Each subset's data, R_s (and projection mask) stay on the device; C_s (OSEM: A_sᵀ1; a volume
//! each) is made again per subset
//! and sweep (one more back-projection of ones), so memory stays two volumes and one set of
//! projections whatever the subset count. The residual of each sweep is Σ_s ‖b_s − A_s x‖², x
//! as each subset found it, square-rooted.

use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn};

use super::iterative::{check_fits, ones_or, start, sum_squares, Options, Solution, SUM_FLOOR};
use super::{gpu, Views};
use crate::error::{Error, Result};
use crate::gpu::{Gpu, GpuArray};
use crate::graph::{Buf, Recording};
use crate::kernels::binary::{self, BinaryOp};
use crate::kernels::sirt_update;
use crate::kernels::unary::{self, UnaryOp};
use crate::placement::Progress;

/// TIGRE's default block size.
pub const DEFAULT_SUBSET_SIZE: usize = 20;

/// Subset k's views: k, k + S, … (S subsets of at most `size` views).
pub fn subsets(views: usize, size: usize) -> Vec<Vec<usize>> {
    let count = views.div_ceil(size.clamp(1, views.max(1)));
    (0..count).map(|k| (k..views).step_by(count).collect()).collect()
}

impl Views {
    /// The geometry of the views `members` only.
    pub fn subset(&self, members: &[usize]) -> Views {
        Views { views: members.iter().map(|&i| self.views[i]).collect(), ..self.clone() }
    }
}

/// Projections (the full geometry's shape) cut to the views `members` (that subset's shape).
pub fn select(x: &ArrayViewD<f32>, views: &Views, members: &[usize]) -> ArrayD<f32> {
    let three = x.view().into_shape_with_order(IxDyn(&[views.rows, views.projections(), views.cols])).expect("the projections' shape");
    let picked = three.select(Axis(1), members).as_standard_layout().into_owned();
    let shape = views.subset(members).projection_shape();
    picked.into_shape_with_order(IxDyn(&shape)).expect("sizes match")
}

/// `o.iterations` sweeps of OS-SART (OSEM where `em`) over subsets of `subset_size` views.
pub fn solve(
    gpu: &Gpu,
    projections: &ArrayViewD<f32>,
    views: &Views,
    subset_size: usize,
    em: bool,
    o: &Options,
    progress: &mut dyn FnMut(Progress),
) -> Result<Solution> {
    if subset_size == 0 {
        return Err(Error::Invalid("a subset size of 0 views (1 or more)".into()));
    }
    super::iterative::check_inputs(projections, views, o)?;
    if em {
        super::iterative::check_counts(projections, o, "OSEM")?;
    }
    check_fits(gpu, views, 5, 4)?;
    let groups = subsets(views.projections(), subset_size);
    let parts: Vec<Views> = groups.iter().map(|m| views.subset(m)).collect();
    let vshape = views.volume_shape();

    // Set-up: per subset b_s and R_s = 1/(A_s M_v) · M_p,s; the start.
    let mut rec = Recording::new(gpu);
    let mv = o.volume_mask.as_ref().map(|m| rec.upload_once_f32(&m.view())).transpose()?;
    let ones = if em { None } else { Some(ones_or(&mut rec, mv, &vshape)?) };
    let x = start(&mut rec, o, &vshape, if em { 1.0 } else { 0.0 })?;
    let mut keep = vec![x];
    if let Some(m) = mv {
        keep.push(m);
    }
    for (members, part) in groups.iter().zip(&parts) {
        let s = gpu::setup(&mut rec, part)?;
        let b = rec.upload_once_f32(&select(projections, views, members).view())?;
        keep.push(b);
        if let Some(ones) = ones {
            let rows = gpu::record_project_for(&mut rec, ones, part, &s, o.projector)?;
            keep.push(unary::record(&mut rec, UnaryOp::Reciprocal(SUM_FLOOR), rows)?);
        }
        if let Some(m) = &o.projection_mask {
            let m = rec.upload_once_f32(&select(&m.view(), views, members).view())?;
            keep.push(m);
        }
    }
    let outputs: Vec<_> = keep.iter().map(|&k| rec.output(k)).collect();
    let results = rec.run()?;
    let mut state: Vec<GpuArray> = outputs.into_iter().map(|o| results.array(o)).collect();
    drop(results);

    let (lo, hi) = (o.min.unwrap_or(f32::MIN), o.max.unwrap_or(f32::MAX));
    let masked = mv.is_some();
    let mut residuals = Vec::with_capacity(o.iterations);
    // About 32 subset updates per recording.
    let sweeps = (32 / groups.len()).max(1);
    while residuals.len() < o.iterations {
        let steps = (o.iterations - residuals.len()).min(sweeps);
        let mut rec = Recording::new(gpu);
        let inputs: Vec<Buf> = state.iter().map(|a| rec.input(a)).collect();
        let mut x = inputs[0];
        let mv = masked.then(|| inputs[1]);
        let first = if masked { 2 } else { 1 };
        // Per subset b_s, R_s (not OSEM) and, with a projection mask, its part.
        let stride = 1 + usize::from(!em) + usize::from(o.projection_mask.is_some());
        let setups = parts.iter().map(|p| gpu::setup(&mut rec, p)).collect::<Result<Vec<_>>>()?;
        let mut sweep_sums = Vec::with_capacity(steps);
        for _ in 0..steps {
            let mut sums = Vec::with_capacity(parts.len());
            for (k, (part, s)) in parts.iter().zip(&setups).enumerate() {
                let at = first + stride * k;
                let b = inputs[at];
                let ax = gpu::record_project_for(&mut rec, x, part, s, o.projector)?;
                let mut residual = binary::record(&mut rec, BinaryOp::Sub, b, ax)?;
                let ones = ones_or(&mut rec, None, &part.projection_shape())?;
                let cols = gpu::record_backproject(&mut rec, ones, part, s, o.projector)?;
                if em {
                    sums.push(sum_squares(&mut rec, residual)?);
                    let (ratio, _) = crate::kernels::em_ratio::record(&mut rec, b, ax, crate::ops::tomography::EM_EPSILON)?;
                    let back = gpu::record_backproject(&mut rec, ratio, part, s, o.projector)?;
                    let norm = unary::record(&mut rec, UnaryOp::MaxScalar(f32::MIN_POSITIVE), cols)?;
                    x = crate::kernels::em_update::record(&mut rec, x, back, norm)?;
                    continue;
                }
                let r = inputs[at + 1];
                if o.projection_mask.is_some() {
                    residual = binary::record(&mut rec, BinaryOp::Mul, residual, inputs[at + 2])?;
                }
                let weighted = binary::record(&mut rec, BinaryOp::Mul, residual, r)?;
                sums.push(sum_squares(&mut rec, residual)?);
                let v = gpu::record_backproject(&mut rec, weighted, part, s, o.projector)?;
                let mut c = unary::record(&mut rec, UnaryOp::Reciprocal(SUM_FLOOR), cols)?;
                if let Some(m) = mv {
                    c = binary::record(&mut rec, BinaryOp::Mul, c, m)?;
                }
                x = sirt_update::record(&mut rec, x, c, v, o.relaxation, lo, hi)?;
            }
            sweep_sums.push(sums);
        }
        let mut keep = vec![x];
        keep.extend(&inputs[1..]);
        let outputs: Vec<_> = keep.iter().map(|&k| rec.output(k)).collect();
        let downloads: Vec<Vec<_>> = sweep_sums.iter().map(|sums| sums.iter().map(|&q| rec.download(q)).collect()).collect();
        let results = rec.run()?;
        for sweep in downloads {
            let mut total = 0.0;
            for d in sweep {
                total += results.f32(d)?.iter().next().copied().unwrap_or(f32::NAN) as f64;
            }
            residuals.push(total.sqrt());
        }
        state = outputs.into_iter().map(|o| results.array(o)).collect();
        progress(Progress::new("iterations", residuals.len(), o.iterations));
    }
    let volume = state[0].download_f32(gpu)?;
    let volume = volume.into_shape_with_order(IxDyn(&vshape)).map_err(|e| Error::Shape(e.to_string()))?;
    Ok(Solution { volume, residuals, lipschitz: None })
}
