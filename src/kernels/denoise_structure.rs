//! `shaders/denoise/denoise_structure.wgsl`: the adaptive filter's structure tensor from packed
//! monomial responses (src/ops/denoise/gpu.rs plans the filter's kernels). Stacks hold their
//! arrays one after another in one buffer.

use bytemuck::{Pod, Zeroable};

use super::DENOISE_STRUCTURE;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in denoise_structure.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct StructureParams {
    pub count: u32,
    pub unused: [u32; 3],
    pub inverse_scales: [f32; 8],
}

pub(super) fn count_of(rec: &Recording, x: Buf, per: usize, what: &str) -> Result<u32> {
    let len = rec.shape(x).len();
    if per == 0 || !len.is_multiple_of(per) || len / per > u32::MAX as usize / 16 {
        return Err(Error::Shape(format!("{what}: {len} values are not {per} arrays of at most {} samples", u32::MAX as usize / 16)));
    }
    Ok((len / per) as u32)
}

/// The structure tensor's d(d+1)/2 components (a stack) from the monomial responses packed in
/// pairs (a complex stack of ⌈(d + d(d+1)/2)/2⌉ arrays; `inverse_scales[q]` undoes pair q's
/// scaling of its imaginary part).
pub fn record(rec: &mut Recording, responses: Buf, d: usize, inverse_scales: &[f32]) -> Result<Buf> {
    rec.expect_dtype(responses, Dtype::C32, "monomial responses")?;
    let pairs = (d + d * (d + 1) / 2).div_ceil(2);
    if !(2..=4).contains(&d) || inverse_scales.len() != pairs {
        return Err(Error::Invalid(format!("structure tensor of {d} axes from {} pairs", inverse_scales.len())));
    }
    let count = count_of(rec, responses, pairs, "monomial responses")?;
    let components = d * (d + 1) / 2;
    let tensor = rec.temp(&[components * count as usize], Dtype::F32)?;
    let mut p = StructureParams { count, unused: [0; 3], inverse_scales: [1.0; 8] };
    p.inverse_scales[..pairs].copy_from_slice(inverse_scales);
    rec.dispatch(&DENOISE_STRUCTURE, &[("DIMS", d as f64)], bytemuck::bytes_of(&p), &[responses, tensor], DENOISE_STRUCTURE.groups(count as u64));
    Ok(tensor)
}
