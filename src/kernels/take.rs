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
    pub words: u32,
    pub unused: u32,
}

/// `x` (any element type, read flat) at the flat indices `index` (u32): an array of index's
/// shape (NaN bits where an index is out of range).
pub fn record(rec: &mut Recording, x: Buf, index: Buf) -> Result<Buf> {
    rec.expect_dtype(index, Dtype::U32, "indices")?;
    let dtype = rec.dtype(x);
    let len = rec.shape(x).len();
    if len > u32::MAX as usize {
        return Err(Error::Invalid(format!("take from {len} elements (at most {})", u32::MAX)));
    }
    let out = rec.temp_like(index, dtype)?;
    let count = rec.shape(index).len();
    let words = dtype.words();
    let p = Params { count: count as u32, len: len as u32, words, unused: 0 };
    rec.dispatch(&TAKE, &[], bytemuck::bytes_of(&p), &[x, index, out], TAKE.groups(count as u64 * words as u64));
    Ok(out)
}
