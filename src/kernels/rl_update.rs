//! `shaders/deconvolve/rl_update.wgsl`: Richardson-Lucy's multiplicative update in place,
//! e *= c, or e *= c · t with a total-variation factor t.

use bytemuck::{Pod, Zeroable};

use super::{groups, vec4s, RL_UPDATE};
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
pub fn record(rec: &mut Recording, e: Buf, c: Buf, t: Option<Buf>) -> Result<()> {
    for (b, what) in [(e, "update estimate"), (c, "update correction"), (t.unwrap_or(c), "update TV factor")] {
        rec.expect_dtype(b, Dtype::F32, what)?;
        rec.expect_same_shape(e, b, what)?;
    }
    if e == c || Some(e) == t {
        return Err(Error::Invalid("the update is in place: the factors must be other buffers than the estimate".into()));
    }
    let count = vec4s(rec.shape(e).len(), 4);
    let p = Params { count, pad: 0 };
    // Without TV, `c` stands in for the unread factor binding.
    let bufs = [e, c, t.unwrap_or(c)];
    rec.dispatch(&RL_UPDATE, &[("TV", t.is_some() as u32 as f64)], bytemuck::bytes_of(&p), &bufs, groups(count as u64, 256));
    Ok(())
}

/// The CPU twin: e *= c, or e *= (c * t) in the kernel's order.
pub fn cpu(e: &mut [f32], c: &[f32], t: Option<&[f32]>) {
    for (k, (e, &c)) in e.iter_mut().zip(c).enumerate() {
        *e *= t.map_or(c, |t| c * t[k]);
    }
}
