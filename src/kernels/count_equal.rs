//! `shaders/registration/count_equal.wgsl`: how many elements equal the one at a device-side
//! index (ties of a maximum).

use bytemuck::{Pod, Zeroable};

use super::{fill, COUNT_EQUAL};
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in count_equal.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub unused: u32,
}

/// The count (u32, one element) of elements of `x` (f32) equal to `x[index[0]]`.
pub fn record(rec: &mut Recording, x: Buf, index: Buf) -> Result<Buf> {
    rec.expect_dtype(x, Dtype::F32, "counted array")?;
    rec.expect_dtype(index, Dtype::U32, "index")?;
    let len = rec.shape(x).len();
    if len > u32::MAX as usize {
        return Err(Error::Invalid(format!("counting over {len} elements (at most {})", u32::MAX)));
    }
    let out = rec.temp(&[1], Dtype::U32)?;
    fill::record(rec, out, 0.0);
    let p = Params { count: len as u32, unused: 0 };
    rec.dispatch(&COUNT_EQUAL, &[], bytemuck::bytes_of(&p), &[x, index, out], COUNT_EQUAL.groups(len as u64));
    Ok(out)
}
