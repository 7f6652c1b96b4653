//! `shaders/deconvolve/rl_predict.wgsl`: Biggs-Andrews' prediction for accelerated
//! Richardson-Lucy, y = max(x + α (x − previous), 0), with α computed on the device from the
//! two 1-element sums the previous iteration left there (see
//! [`acceleration`]).

use bytemuck::{Pod, Zeroable};

use super::{vec4s, RL_PREDICT};
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in rl_predict.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub pad: u32,
}

/// Records `y = max(x + α (x − previous), 0)`, α from the sums `cross` and `square` (f32, one
/// element each); `x`, `previous` and `y` f32 of one shape, `y` another buffer than the rest.
pub fn record_into(rec: &mut Recording, x: Buf, previous: Buf, cross: Buf, square: Buf, y: Buf) -> Result<()> {
    for (b, what) in [(x, "prediction estimate"), (previous, "prediction previous estimate"), (y, "prediction output")] {
        rec.expect_dtype(b, Dtype::F32, what)?;
        rec.expect_same_shape(x, b, what)?;
    }
    for (b, what) in [(cross, "prediction cross sum"), (square, "prediction square sum")] {
        rec.expect_dtype(b, Dtype::F32, what)?;
        if rec.shape(b).len() != 1 {
            return Err(Error::Shape(format!("the {what} must hold one element, got shape {:?}", rec.dims(b))));
        }
    }
    if [x, previous, cross, square].contains(&y) {
        return Err(Error::Invalid("the prediction is out of place: its output must be another buffer than its inputs".into()));
    }
    let count = vec4s(rec.shape(x).len(), 4);
    let p = Params { count, pad: 0 };
    rec.dispatch(&RL_PREDICT, &[], bytemuck::bytes_of(&p), &[x, previous, cross, square, y], RL_PREDICT.groups(count as u64));
    Ok(())
}

/// The CPU twin, in f64 (α as [`acceleration`] computes it).
#[cfg(test)]
pub fn cpu(x: &[f64], previous: &[f64], cross: f64, square: f64) -> Vec<f64> {
    let alpha = acceleration(cross, square);
    x.iter().zip(previous).map(|(&x, &p)| (x + alpha * (x - p)).max(0.0)).collect()
}

/// Biggs-Andrews' step αₖ₊₁ = Σ gₖ·gₖ₋₁ / Σ gₖ₋₁·gₖ₋₁ clamped to [0, 1], where gₖ = xₖ₊₁ − yₖ is
/// the change the RL update made to the prediction; 0 when the denominator is (both paths call
/// this with their two sums; the first two iterations use α = 0, there being no gₖ₋₁ yet).
pub fn acceleration(g_dot_previous: f64, previous_squared: f64) -> f64 {
    if previous_squared > 0.0 {
        (g_dot_previous / previous_squared).clamp(0.0, 1.0)
    } else {
        0.0
    }
}
