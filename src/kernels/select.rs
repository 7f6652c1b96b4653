//! `shaders/pointwise/select.wgsl`: z = cond > 0 ? x : y (numpy.where on a positive mask).

use bytemuck::{Pod, Zeroable};

use super::{vec4s, SELECT};
use crate::error::Result;
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in select.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub pad: u32,
}

pub fn record(rec: &mut Recording, cond: Buf, x: Buf, y: Buf) -> Result<Buf> {
    for (b, what) in [(cond, "select condition"), (x, "select x"), (y, "select y")] {
        rec.expect_dtype(b, Dtype::F32, what)?;
        rec.expect_same_shape(cond, b, what)?;
    }
    let z = rec.temp_like(x, Dtype::F32)?;
    let count = vec4s(rec.shape(x).len(), 4);
    let p = Params { count, pad: 0 };
    rec.dispatch(&SELECT, &[], bytemuck::bytes_of(&p), &[cond, x, y, z], SELECT.groups(count as u64));
    Ok(z)
}

pub fn cpu(cond: &[f32], x: &[f32], y: &[f32]) -> Vec<f32> {
    cond.iter().zip(x.iter().zip(y)).map(|(&c, (&a, &b))| if c > 0.0 { a } else { b }).collect()
}
