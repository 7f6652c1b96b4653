//! `shaders/tomography/em_ratio.wgsl`: MLEM's ratio and KL terms, one pass.

use bytemuck::{Pod, Zeroable};

use super::EM_RATIO;
use crate::error::Result;
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in em_ratio.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct RatioParams {
    pub count: u32,
    pub epsilon: f32,
}

/// The length of `arrays`, f32 of one shape.
pub(super) fn same_f32(rec: &Recording, arrays: &[Buf], what: &str) -> Result<usize> {
    for &a in arrays {
        rec.expect_dtype(a, Dtype::F32, what)?;
        rec.expect_same_shape(arrays[0], a, what)?;
    }
    Ok(rec.shape(arrays[0]).len())
}

/// The ratio g / (max(q, 0) + ε) and the KL terms g ln(ratio) (0 where g is 0).
pub fn record(rec: &mut Recording, counts: Buf, projections: Buf, epsilon: f32) -> Result<(Buf, Buf)> {
    let count = same_f32(rec, &[counts, projections], "EM ratio")?;
    let (ratio, terms) = (rec.temp_like(counts, Dtype::F32)?, rec.temp_like(counts, Dtype::F32)?);
    let p = RatioParams { count: count as u32, epsilon };
    rec.dispatch(&EM_RATIO, &[], bytemuck::bytes_of(&p), &[counts, projections, ratio, terms], EM_RATIO.groups(count as u64));
    Ok((ratio, terms))
}
