//! `shaders/tomography/filter_lines.wgsl`: every line of a complex array times one real response.

use bytemuck::{Pod, Zeroable};

use super::FILTER_LINES;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in filter_lines.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub len: u32,
    pub count: u32,
}

/// `x` (c32, last axis of `response`'s length) times `response` (f32) along every line.
pub fn record(rec: &mut Recording, x: Buf, response: Buf) -> Result<Buf> {
    rec.expect_dtype(x, Dtype::C32, "filtered spectra")?;
    rec.expect_dtype(response, Dtype::F32, "filter response")?;
    let len = rec.shape(response).len();
    if rec.dims(x).last() != Some(&len) {
        return Err(Error::Shape(format!("lines of {:?} and a response of {len}", rec.dims(x))));
    }
    let out = rec.temp_like(x, Dtype::C32)?;
    let count = rec.shape(x).len();
    let p = Params { len: len as u32, count: count as u32 };
    rec.dispatch(&FILTER_LINES, &[], bytemuck::bytes_of(&p), &[x, response, out], FILTER_LINES.groups(count as u64));
    Ok(out)
}
