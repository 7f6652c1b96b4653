//! `shaders/util/copy_vec4.wgsl`: a device copy as a compute kernel, 16 bytes per thread.
//! Through Vulkan this is far faster than `copy_buffer_to_buffer`, and it is the bandwidth roof
//! `lucent bench` reports the other kernels against.

use bytemuck::{Pod, Zeroable};

use super::{vec4s, COPY_VEC4};
use crate::error::Result;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in copy_vec4.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub pad: u32,
}

/// `dst = src`; both arrays must have the same shape and type.
pub fn record(rec: &mut Recording, src: Buf, dst: Buf) -> Result<()> {
    rec.expect_same_shape(src, dst, "copy")?;
    rec.expect_dtype(dst, rec.dtype(src), "copy")?;
    let count = vec4s(rec.shape(src).len(), rec.dtype(src).bytes());
    let p = Params { count, pad: 0 };
    rec.dispatch(&COPY_VEC4, &[], bytemuck::bytes_of(&p), &[src, dst], COPY_VEC4.groups(count as u64));
    Ok(())
}
