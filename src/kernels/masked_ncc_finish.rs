//! `shaders/registration/masked_ncc_finish.wgsl`: the masked normalised cross-correlation from
//! its terms.

use bytemuck::{Pod, Zeroable};

use super::MASKED_NCC_FINISH;
use crate::error::Result;
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in masked_ncc_finish.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct FinishParams {
    pub count: u32,
    pub ratio: f32,
}

/// The correlation from the numerator, denominator and overlap and their largest values (one
/// element each).
pub fn record(rec: &mut Recording, numerator: Buf, denominator: Buf, overlap: Buf, largest_denominator: Buf, largest_overlap: Buf, ratio: f32) -> Result<Buf> {
    let out = rec.temp_like(numerator, Dtype::F32)?;
    let count = rec.shape(numerator).len();
    let p = FinishParams { count: count as u32, ratio };
    rec.dispatch(
        &MASKED_NCC_FINISH,
        &[],
        bytemuck::bytes_of(&p),
        &[numerator, denominator, overlap, largest_denominator, largest_overlap, out],
        MASKED_NCC_FINISH.groups(count as u64),
    );
    Ok(out)
}
