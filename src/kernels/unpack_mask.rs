//! `shaders/pointwise/unpack_mask.wgsl`: a mask of bytes (as `Recording::upload_mask` packs it)
//! as 0 and 1 in f32 or f64.

use bytemuck::{Pod, Zeroable};

use super::UNPACK_MASK;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in unpack_mask.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub pad: u32,
}

/// The mask `mask` (u32 words of four bytes) as an array of `dims` in `dtype` (F32 or F64).
pub fn record(rec: &mut Recording, mask: Buf, dims: &[usize], dtype: Dtype) -> Result<Buf> {
    rec.expect_dtype(mask, Dtype::U32, "mask")?;
    let count: usize = dims.iter().product();
    let words = rec.shape(mask).len();
    if words < count.div_ceil(4) || count > u32::MAX as usize {
        return Err(Error::Shape(format!("a mask of {words} words for {dims:?} (four elements a word)")));
    }
    let kernel = UNPACK_MASK.for_dtype(dtype)?;
    let y = rec.temp(dims, dtype)?;
    let p = Params { count: count as u32, pad: 0 };
    rec.dispatch(kernel, &[], bytemuck::bytes_of(&p), &[mask, y], kernel.groups(count as u64));
    Ok(y)
}
