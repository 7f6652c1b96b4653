//! `shaders/deconvolve/rl_ratio.wgsl`: Richardson-Lucy's relative blur r = o / (b + eps).

use bytemuck::{Pod, Zeroable};

use super::{vec4s, RL_RATIO};
use crate::error::Result;
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in rl_ratio.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub pad: u32,
    pub eps: f32,
    pub filter_eps: f32,
}

/// How the ratio guards against small denominators, as scikit-image's `richardson_lucy`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ratio {
    /// Added to the blurred estimate before dividing (skimage: 1e-12).
    pub eps: f32,
    /// Where the blurred estimate plus `eps` is below this, the ratio is 0 (skimage's
    /// `filter_epsilon`).
    pub filter_eps: Option<f32>,
}

impl Ratio {
    /// The CPU twin of one element, in f64 (the deconvolution reference's precision).
    pub fn apply(self, observed: f64, blurred: f64) -> f64 {
        let conv = blurred + self.eps as f64;
        if observed == 0.0 || self.filter_eps.is_some_and(|f| conv < f as f64) {
            return 0.0;
        }
        observed / conv
    }
}

/// Records `r = ratio(o, b)` into a new temporary; `o` and `b` are f32 of one shape.
pub fn record(rec: &mut Recording, ratio: Ratio, o: Buf, b: Buf) -> Result<Buf> {
    rec.expect_dtype(o, Dtype::F32, "ratio numerator")?;
    rec.expect_dtype(b, Dtype::F32, "ratio denominator")?;
    rec.expect_same_shape(o, b, "ratio")?;
    let r = rec.temp_like(o, Dtype::F32)?;
    let count = vec4s(rec.shape(o).len(), 4);
    let p = Params { count, pad: 0, eps: ratio.eps, filter_eps: ratio.filter_eps.unwrap_or(0.0) };
    let filter = ratio.filter_eps.is_some() as u32 as f64;
    rec.dispatch(&RL_RATIO, &[("FILTER", filter)], bytemuck::bytes_of(&p), &[o, b, r], RL_RATIO.groups(count as u64));
    Ok(r)
}
