//! `shaders/deconvolve/rl_normalize.wgsl`: e /= s[0] in place (blind Richardson-Lucy's PSF
//! divided by its sum, the sum a 1-element buffer reduced on the device).

use bytemuck::{Pod, Zeroable};

use super::{vec4s, RL_NORMALIZE};
use crate::error::Result;
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in rl_normalize.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub pad: u32,
}

/// Records `e /= s[0]` (f32; `s` one element), left alone where s[0] is not positive and finite.
pub fn record(rec: &mut Recording, e: Buf, s: Buf) -> Result<()> {
    rec.expect_dtype(e, Dtype::F32, "normalised array")?;
    rec.expect_dtype(s, Dtype::F32, "its sum")?;
    let count = vec4s(rec.shape(e).len(), 4);
    let p = Params { count, pad: 0 };
    rec.dispatch(&RL_NORMALIZE, &[], bytemuck::bytes_of(&p), &[e, s], RL_NORMALIZE.groups(count as u64));
    Ok(())
}
