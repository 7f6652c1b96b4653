//! `shaders/registration/masked_ncc.wgsl` and `masked_ncc_finish.wgsl`: the element-wise steps
//! of Padfield's masked normalised cross-correlation.

use bytemuck::{Pod, Zeroable};

use super::{MASKED_NCC, MASKED_NCC_FINISH};
use crate::error::Result;
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in masked_ncc.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub unused: u32,
}

/// Mirrors `Params` in masked_ncc_finish.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct FinishParams {
    pub count: u32,
    pub ratio: f32,
}

/// In place: `overlap` becomes the rounded count (at least ε), `a` the numerator, `d` the
/// denominator (all f32 of one shape).
pub fn record(rec: &mut Recording, overlap: Buf, fixed_part: Buf, moving_part: Buf, a: Buf, d: Buf, e: Buf) -> Result<()> {
    for (b, what) in [(overlap, "overlap"), (fixed_part, "fixed part"), (moving_part, "moving part"), (a, "a"), (d, "d"), (e, "e")] {
        rec.expect_dtype(b, Dtype::F32, what)?;
        rec.expect_same_shape(overlap, b, "masked NCC terms")?;
    }
    let count = rec.shape(overlap).len();
    let p = Params { count: count as u32, unused: 0 };
    rec.dispatch(&MASKED_NCC, &[], bytemuck::bytes_of(&p), &[overlap, fixed_part, moving_part, a, d, e], MASKED_NCC.groups(count as u64));
    Ok(())
}

/// The correlation from the numerator, denominator and overlap and their largest values (one
/// element each).
pub fn finish(rec: &mut Recording, numerator: Buf, denominator: Buf, overlap: Buf, largest_denominator: Buf, largest_overlap: Buf, ratio: f32) -> Result<Buf> {
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
