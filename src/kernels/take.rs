//! `shaders/util/take.wgsl`: numpy.take of a 32-bit array at indices held on the device.

use bytemuck::{Pod, Zeroable};

use super::TAKE;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in take.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub len: u32,
}

/// `x` (f32 or u32, read flat) at the flat indices `index` (u32): an array of index's shape
/// (NaN bits where an index is out of range).
pub fn record(rec: &mut Recording, x: Buf, index: Buf) -> Result<Buf> {
    rec.expect_dtype(index, Dtype::U32, "indices")?;
    let dtype = rec.dtype(x);
    if dtype.words() != 1 {
        return Err(Error::Dtype(format!("take reads 32-bit elements, not {dtype:?}")));
    }
    let len = rec.shape(x).len();
    let out = rec.temp_like(index, dtype)?;
    let count = rec.shape(index).len();
    let p = Params { count: count as u32, len: len.min(u32::MAX as usize) as u32 };
    rec.dispatch(&TAKE, &[], bytemuck::bytes_of(&p), &[x, index, out], TAKE.groups(count as u64));
    Ok(out)
}
