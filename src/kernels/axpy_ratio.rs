//! `shaders/tomography/axpy_ratio.wgsl`: x + sign · (num / den) · y with the ratio of two
//! one-element device arrays (CGLS's steps).

use bytemuck::{Pod, Zeroable};

use super::em_ratio::same_f32;
use super::AXPY_RATIO;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in axpy_ratio.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub sign: f32,
}

/// x + sign · (num[0] / den[0]) · y (the ratio 0 where den[0] is 0).
pub fn record(rec: &mut Recording, x: Buf, y: Buf, num: Buf, den: Buf, sign: f32) -> Result<Buf> {
    let count = same_f32(rec, &[x, y], "axpy")?;
    for s in [num, den] {
        rec.expect_dtype(s, Dtype::F32, "axpy ratio")?;
        if rec.shape(s).len() != 1 {
            return Err(Error::Shape(format!("an axpy ratio's operand of {:?} (one element)", rec.dims(s))));
        }
    }
    let out = rec.temp_like(x, Dtype::F32)?;
    let p = Params { count: count as u32, sign };
    rec.dispatch(&AXPY_RATIO, &[], bytemuck::bytes_of(&p), &[x, y, num, den, out], AXPY_RATIO.groups(count as u64));
    Ok(out)
}
