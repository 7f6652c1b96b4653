//! `shaders/denoise/denoise_normalize.wgsl`: normalised convolution's division for a stack of
//! arrays.

use bytemuck::{Pod, Zeroable};

use super::denoise_structure::count_of;
use super::DENOISE_NORMALIZE;
use crate::error::Result;
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in denoise_normalize.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct NormalizeParams {
    pub count: u32,
    pub arrays: u32,
}

/// Every array of the f32 stack `x` divided by `w`, sample by sample.
pub fn record(rec: &mut Recording, x: Buf, w: Buf) -> Result<Buf> {
    rec.expect_dtype(x, Dtype::F32, "normalised stack")?;
    rec.expect_dtype(w, Dtype::F32, "certainty")?;
    let count = rec.shape(w).len();
    let arrays = rec.shape(x).len() / count.max(1);
    count_of(rec, x, count, "normalised stack")?;
    let out = rec.temp(&[rec.shape(x).len()], Dtype::F32)?;
    let p = NormalizeParams { count: count as u32, arrays: arrays as u32 };
    rec.dispatch(&DENOISE_NORMALIZE, &[], bytemuck::bytes_of(&p), &[x, w, out], DENOISE_NORMALIZE.groups(rec.shape(x).len() as u64));
    Ok(out)
}
