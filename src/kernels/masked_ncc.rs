//! `shaders/registration/masked_ncc.wgsl`: the element-wise terms of Padfield's masked normalised
//! cross-correlation.

use bytemuck::{Pod, Zeroable};

use super::MASKED_NCC;
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
