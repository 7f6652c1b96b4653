//! `shaders/denoise/bm_normalize.wgsl`: block matching's fixed-point sums divided.

use bytemuck::{Pod, Zeroable};

use super::BM_NORMALIZE;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in bm_normalize.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub unused: [u32; 3],
}

/// num / den of `dims` from their fixed-point word pairs (u32, two a value).
pub fn record(rec: &mut Recording, num: Buf, den: Buf, dims: &[usize]) -> Result<Buf> {
    let count: usize = dims.iter().product();
    if rec.shape(num).len() != 2 * count || rec.shape(den).len() != 2 * count {
        return Err(Error::Shape(format!("fixed-point sums of {} and {} words for {count} values", rec.shape(num).len(), rec.shape(den).len())));
    }
    let out = rec.temp(dims, Dtype::F32)?;
    let p = Params { count: count as u32, unused: [0; 3] };
    rec.dispatch(&BM_NORMALIZE, &[], bytemuck::bytes_of(&p), &[num, den, out], BM_NORMALIZE.groups(count as u64));
    Ok(out)
}
