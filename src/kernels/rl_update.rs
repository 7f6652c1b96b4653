//! `shaders/deconvolve/rl_update.wgsl`: Richardson-Lucy's multiplicative update in place,
//! e *= c, times a total-variation factor t and Bertero-Boccacci's inverse weights w when given.

use bytemuck::{Pod, Zeroable};

use super::{vec4s, RL_UPDATE};
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in rl_update.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub pad: u32,
}

/// Records `e *= c` (or `e *= c * t`); all f32 of one shape, `e` another buffer than the others.
#[cfg(test)]
pub fn record(rec: &mut Recording, e: Buf, c: Buf, t: Option<Buf>) -> Result<()> {
    record_weighted(rec, e, c, t, None)
}

/// Records `e *= c [* t] [* w]`, `w` the inverse weights of [`crate::ops::deconvolve::RlBoundary::Extended`];
/// all f32 of one shape, `e` another buffer than the others.
pub fn record_weighted(rec: &mut Recording, e: Buf, c: Buf, t: Option<Buf>, w: Option<Buf>) -> Result<()> {
    for (b, what) in [(e, "update estimate"), (c, "update correction"), (t.unwrap_or(c), "update TV factor"), (w.unwrap_or(c), "update weights")] {
        rec.expect_dtype(b, Dtype::F32, what)?;
        rec.expect_same_shape(e, b, what)?;
    }
    if e == c || Some(e) == t || Some(e) == w {
        return Err(Error::Invalid("the update is in place: the factors must be other buffers than the estimate".into()));
    }
    let count = vec4s(rec.shape(e).len(), 4);
    let p = Params { count, pad: 0 };
    // `c` stands in for the bindings of factors that are off (not read).
    let bufs = [e, c, t.unwrap_or(c), w.unwrap_or(c)];
    let overrides = [("TV", t.is_some() as u32 as f64), ("WEIGHTED", w.is_some() as u32 as f64)];
    rec.dispatch(&RL_UPDATE, &overrides, bytemuck::bytes_of(&p), &bufs, RL_UPDATE.groups(count as u64));
    Ok(())
}

/// The CPU twin: e *= c, or e *= (c * t) in the kernel's order.
#[cfg(test)]
pub fn cpu(e: &mut [f32], c: &[f32], t: Option<&[f32]>) {
    cpu_weighted(e, c, t, None)
}

/// The CPU twin of [`record_weighted`]: e *= ((c * t) * w) in the kernel's order, the factors
/// that are off left out.
#[cfg(test)]
pub fn cpu_weighted(e: &mut [f32], c: &[f32], t: Option<&[f32]>, w: Option<&[f32]>) {
    for (k, (e, &c)) in e.iter_mut().zip(c).enumerate() {
        let mut factor = t.map_or(c, |t| c * t[k]);
        if let Some(w) = w {
            factor *= w[k];
        }
        *e *= factor;
    }
}
