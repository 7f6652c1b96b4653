//! `shaders/tomography/sirt_update.wgsl`: SIRT's update, one pass.

use bytemuck::{Pod, Zeroable};

use super::em_ratio::same_f32;
use super::SIRT_UPDATE;
use crate::error::Result;
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in sirt_update.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub relaxation: f32,
    pub lo: f32,
    pub hi: f32,
}

/// clamp(x + relaxation · c · v, lo, hi).
pub fn record(rec: &mut Recording, x: Buf, c: Buf, v: Buf, relaxation: f32, lo: f32, hi: f32) -> Result<Buf> {
    let count = same_f32(rec, &[x, c, v], "SIRT update")?;
    let out = rec.temp_like(x, Dtype::F32)?;
    let p = Params { count: count as u32, relaxation, lo, hi };
    rec.dispatch(&SIRT_UPDATE, &[], bytemuck::bytes_of(&p), &[x, c, v, out], SIRT_UPDATE.groups(count as u64));
    Ok(out)
}
