//! `shaders/util/copy_range.wgsl`: a run of 32-bit words copied from one buffer to another at
//! any offsets (whole rows of arrays held in chunks).

use bytemuck::{Pod, Zeroable};

use super::COPY_RANGE;
use crate::error::{Error, Result};
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in copy_range.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub src_at: u32,
    pub dst_at: u32,
    pub pad: u32,
}

/// Elements `src_at .. src_at + count` of `src` copied to `dst_at ..` of `dst` (same type).
pub fn record(rec: &mut Recording, src: Buf, src_at: usize, dst: Buf, dst_at: usize, count: usize) -> Result<()> {
    rec.expect_dtype(dst, rec.dtype(src), "copied range")?;
    let (src_len, dst_len) = (rec.shape(src).len(), rec.shape(dst).len());
    if src_at + count > src_len || dst_at + count > dst_len {
        return Err(Error::Invalid(format!("copy of {count} elements from {src_at} of {src_len} to {dst_at} of {dst_len} leaves an array")));
    }
    if count == 0 {
        return Ok(());
    }
    let words = rec.dtype(src).words() as usize;
    let p = Params { count: (count * words) as u32, src_at: (src_at * words) as u32, dst_at: (dst_at * words) as u32, pad: 0 };
    rec.dispatch(&COPY_RANGE, &[], bytemuck::bytes_of(&p), &[src, dst], COPY_RANGE.groups((count * words) as u64));
    Ok(())
}
