//! `shaders/denoise/nlm_box.wgsl`: non-local means over volumes, the row sums summed along
//! another axis.

use bytemuck::{Pod, Zeroable};

use super::NLM_BOX;
use crate::error::Result;
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in nlm_box.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub offset: u32,
    pub stride: u32,
    pub unused: u32,
}

/// out(x) = Σ_{k = 1 − offset}^{offset} sums(x + k · stride), `sums` flat (any shape).
pub fn record(rec: &mut Recording, sums: Buf, offset: usize, stride: usize) -> Result<Buf> {
    rec.expect_dtype(sums, Dtype::F32, "non-local means sums")?;
    let count = rec.shape(sums).len();
    let out = rec.temp_like(sums, Dtype::F32)?;
    let p = Params { count: count as u32, offset: offset as u32, stride: stride as u32, unused: 0 };
    rec.dispatch(&NLM_BOX, &[], bytemuck::bytes_of(&p), &[sums, out], NLM_BOX.groups(count as u64));
    Ok(out)
}
