//! FISTA-TV (Beck and Teboulle, IEEE Trans. Image Process. 2009; TIGRE's `FISTA`): the minimiser
//! of ½‖M_p (A x − b)‖² + w · TV(x), TV isotropic (forward differences over the volume's axes):
//!
//!   z = y + (1/L) Aᵀ M_p (b − A y),  x' = prox_{(w/L) TV}(z) clamped to [min, max],
//!   y' = x' + (t − 1)/t' · (x' − x),  t' = (1 + √(1 + 4t²)) / 2, t₀ = 1, y₀ = x₀,
//!
//! the proximal step by `tv_iterations` of Chambolle's algorithm from a zero dual
//! ([`crate::ops::denoise::tv`], TIGRE's `tviter`, default 20), L = ‖Aᵀ M_p A‖ by the power
//! method from a constant volume (TIGRE asks for it as `hyper`), 1 % above its estimate since
//! the method approaches from below. A weight of 0 is plain FISTA (no proximal step). The
//! bounds are applied after the proximal step (a projection, as TIGRE's non-negativity); the
//! residual ‖M_p (b − A y)‖ of each extrapolated iterate is returned.

use ndarray::{ArrayViewD, IxDyn};

use super::iterative::{check_fits, start, sum_squares, Options, Solution};
use super::{gpu, Views};
use crate::error::{Error, Result};
use crate::gpu::{Gpu, GpuArray};
use crate::graph::{Buf, Recording};
use crate::kernels::binary::{self, BinaryOp};
use crate::kernels::unary::{self, UnaryOp};
use crate::placement::Progress;

/// TIGRE's `tviter` default.
pub const DEFAULT_TV_ITERATIONS: usize = 20;
/// The power method's steps at most, and the relative change of its estimate that ends it.
pub const POWER_STEPS: usize = 40;
pub const POWER_TOLERANCE: f64 = 1e-4;
/// L this much above the power method's estimate.
pub const LIPSCHITZ_MARGIN: f64 = 1.01;

/// FISTA's extrapolation weights (t_k − 1)/t_(k+1), k = 0, 1, ….
pub fn momentum(iterations: usize) -> Vec<f64> {
    let mut t = 1.0f64;
    (0..iterations)
        .map(|_| {
            let next = (1.0 + (1.0 + 4.0 * t * t).sqrt()) / 2.0;
            let beta = (t - 1.0) / next;
            t = next;
            beta
        })
        .collect()
}

/// Checks the weight and the proximal step's iterations.
pub fn check(weight: f32, tv_iterations: usize) -> Result<()> {
    if !(weight.is_finite() && weight >= 0.0) {
        return Err(Error::Invalid(format!("a TV weight of {weight} (0 or more)")));
    }
    if !(1..=10_000).contains(&tv_iterations) {
        return Err(Error::Invalid(format!("{tv_iterations} TV iterations per step (1 to 10000)")));
    }
    Ok(())
}

/// ‖Aᵀ M_p A‖ by the power method from a constant volume (times [`LIPSCHITZ_MARGIN`]).
fn lipschitz(gpu: &Gpu, views: &Views, mask: Option<&GpuArray>, o: &Options) -> Result<f64> {
    let vshape = views.volume_shape();
    let count = vshape.iter().product::<usize>() as f64;
    let (mut v, mut estimate): (Option<GpuArray>, f64) = (None, 0.0);
    for _ in 0..POWER_STEPS {
        let mut rec = Recording::new(gpu);
        let s = gpu::setup(&mut rec, views)?;
        // v = w / ‖w‖ from the last step, or the unit constant.
        let x = match &v {
            Some(w) => {
                let w = rec.input(w);
                unary::record(&mut rec, UnaryOp::Scale((1.0 / estimate) as f32), w)?
            }
            None => {
                let x = rec.temp(&vshape, crate::gpu::Dtype::F32)?;
                crate::kernels::fill::record(&mut rec, x, (1.0 / count.sqrt()) as f32);
                x
            }
        };
        let mut ax = gpu::record_project_for(&mut rec, x, views, &s, o.projector)?;
        if let Some(m) = mask {
            let m = rec.input(m);
            ax = binary::record(&mut rec, BinaryOp::Mul, ax, m)?;
        }
        let w = gpu::record_backproject(&mut rec, ax, views, &s, o.projector)?;
        let norm = sum_squares(&mut rec, w)?;
        let (out, d) = (rec.output(w), rec.download(norm));
        let results = rec.run()?;
        let next = (results.f32(d)?.iter().next().copied().unwrap_or(f32::NAN) as f64).sqrt();
        v = Some(results.array(out));
        if !next.is_finite() {
            return Err(Error::NonFinite("the power method's estimate of ‖AᵀA‖".into()));
        }
        let done = (next - estimate).abs() <= POWER_TOLERANCE * next;
        estimate = next;
        if done || next == 0.0 {
            break;
        }
    }
    if estimate == 0.0 {
        return Err(Error::Invalid("the geometry's rays miss the volume: ‖AᵀA‖ is 0".into()));
    }
    Ok(estimate * LIPSCHITZ_MARGIN)
}

/// `o.iterations` of FISTA-TV with the TV weight `weight`.
pub fn solve(
    gpu: &Gpu,
    projections: &ArrayViewD<f32>,
    views: &Views,
    weight: f32,
    tv_iterations: usize,
    o: &Options,
    progress: &mut dyn FnMut(Progress),
) -> Result<Solution> {
    check(weight, tv_iterations)?;
    super::iterative::check_inputs(projections, views, o)?;
    if o.volume_mask.is_some() {
        return Err(Error::Invalid("a reconstruction mask belongs to SIRT, CGLS and OS-SART, not FISTA-TV".into()));
    }
    check_fits(gpu, views, 12, 4)?;
    let vshape = views.volume_shape();

    let mut rec = Recording::new(gpu);
    let b = rec.upload_once_f32(projections)?;
    let x = start(&mut rec, o, &vshape, 0.0)?;
    let mut keep = vec![b, x];
    if let Some(m) = &o.projection_mask {
        keep.push(rec.upload_once_f32(&m.view())?);
    }
    let outputs: Vec<_> = keep.iter().map(|&k| rec.output(k)).collect();
    let results = rec.run()?;
    let first: Vec<GpuArray> = outputs.into_iter().map(|o| results.array(o)).collect();
    drop(results);
    let mask = first.get(2).cloned();
    let lipschitz = lipschitz(gpu, views, mask.as_ref(), o)?;
    progress(Progress::new("iterations", 0, o.iterations));

    // State: b, x (the last proximal result), y (the extrapolated iterate).
    let mut state = vec![first[0].clone(), first[1].clone(), first[1].clone()];
    let betas = momentum(o.iterations);
    let (lo, hi) = (o.min.unwrap_or(f32::MIN), o.max.unwrap_or(f32::MAX));
    let per_recording = (256 / (tv_iterations + 8)).max(1);
    let mut residuals = Vec::with_capacity(o.iterations);
    while residuals.len() < o.iterations {
        let steps = (o.iterations - residuals.len()).min(per_recording);
        let mut rec = Recording::new(gpu);
        let s = gpu::setup(&mut rec, views)?;
        let [b, mut x, mut y]: [Buf; 3] = [rec.input(&state[0]), rec.input(&state[1]), rec.input(&state[2])];
        let mp = mask.as_ref().map(|m| rec.input(m));
        let mut sums = Vec::with_capacity(steps);
        for k in residuals.len()..residuals.len() + steps {
            let ay = gpu::record_project_for(&mut rec, y, views, &s, o.projector)?;
            let mut r = binary::record(&mut rec, BinaryOp::Sub, b, ay)?;
            if let Some(m) = mp {
                r = binary::record(&mut rec, BinaryOp::Mul, r, m)?;
            }
            sums.push(sum_squares(&mut rec, r)?);
            let g = gpu::record_backproject(&mut rec, r, views, &s, o.projector)?;
            let g = unary::record(&mut rec, UnaryOp::Scale((1.0 / lipschitz) as f32), g)?;
            let z = binary::record(&mut rec, BinaryOp::Add, y, g)?;
            // A weight below f32's normal range after the step's scale does nothing: no TV step.
            let step_weight = (weight as f64 / lipschitz) as f32;
            let mut next =
                if step_weight >= f32::MIN_POSITIVE { crate::ops::denoise::tv::record(&mut rec, z, step_weight, tv_iterations, vshape.len())? } else { z };
            if o.min.is_some() || o.max.is_some() {
                next = unary::record(&mut rec, UnaryOp::Clamp { lo, hi }, next)?;
            }
            let step = binary::record(&mut rec, BinaryOp::Sub, next, x)?;
            let step = unary::record(&mut rec, UnaryOp::Scale(betas[k] as f32), step)?;
            y = binary::record(&mut rec, BinaryOp::Add, next, step)?;
            x = next;
        }
        let outputs = [rec.output(x), rec.output(y)];
        let downloads: Vec<_> = sums.iter().map(|&q| rec.download(q)).collect();
        let results = rec.run()?;
        for d in downloads {
            let v = results.f32(d)?;
            residuals.push((v.iter().next().copied().unwrap_or(f32::NAN) as f64).sqrt());
        }
        state = vec![state[0].clone(), results.array(outputs[0]), results.array(outputs[1])];
        progress(Progress::new("iterations", residuals.len(), o.iterations));
    }
    let volume = state[1].download_f32(gpu)?;
    let volume = volume.into_shape_with_order(IxDyn(&vshape)).map_err(|e| Error::Shape(e.to_string()))?;
    Ok(Solution { volume, residuals, lipschitz: Some(lipschitz) })
}
