//! `shaders/pointwise/real_to_complex.wgsl`: a real array as a complex one (zero imaginary part).

use bytemuck::{Pod, Zeroable};
use num_complex::Complex32;

use super::REAL_TO_COMPLEX;
use crate::error::Result;
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in real_to_complex.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub pad: u32,
}

pub fn record(rec: &mut Recording, x: Buf) -> Result<Buf> {
    rec.expect_dtype(x, Dtype::F32, "real-to-complex input")?;
    let y = rec.temp_like(x, Dtype::C32)?;
    let count = rec.shape(x).len().div_ceil(2) as u32;
    let p = Params { count, pad: 0 };
    rec.dispatch(&REAL_TO_COMPLEX, &[], bytemuck::bytes_of(&p), &[x, y], REAL_TO_COMPLEX.groups(count as u64));
    Ok(y)
}

pub fn cpu(x: &[f32]) -> Vec<Complex32> {
    x.iter().map(|&r| Complex32::new(r, 0.0)).collect()
}
