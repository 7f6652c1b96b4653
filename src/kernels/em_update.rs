//! `shaders/tomography/em_update.wgsl`: MLEM's update, one pass.

use bytemuck::{Pod, Zeroable};

use super::em_ratio::same_f32;
use super::EM_UPDATE;
use crate::error::Result;
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in em_update.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct UpdateParams {
    pub count: u32,
    pub unused: u32,
}

/// f · max(b / n, 0).
pub fn record(rec: &mut Recording, f: Buf, back: Buf, norm: Buf) -> Result<Buf> {
    let count = same_f32(rec, &[f, back, norm], "EM update")?;
    let out = rec.temp_like(f, Dtype::F32)?;
    let p = UpdateParams { count: count as u32, unused: 0 };
    rec.dispatch(&EM_UPDATE, &[], bytemuck::bytes_of(&p), &[f, back, norm, out], EM_UPDATE.groups(count as u64));
    Ok(out)
}
