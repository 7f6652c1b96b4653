//! `shaders/pointwise/complex_to_real.wgsl`: modulus, squared modulus, real or imaginary part.

use bytemuck::{Pod, Zeroable};
use num_complex::Complex32;

use super::COMPLEX_TO_REAL;
use crate::error::Result;
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in complex_to_real.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub pad: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ComplexToReal {
    Abs,
    AbsSquared,
    Re,
    Im,
}

impl ComplexToReal {
    pub fn apply(self, c: Complex32) -> f32 {
        match self {
            ComplexToReal::Abs => c.norm(),
            ComplexToReal::AbsSquared => c.norm_sqr(),
            ComplexToReal::Re => c.re,
            ComplexToReal::Im => c.im,
        }
    }
}

/// Records `f(x)` for complex `x` into a new real array of the same shape.
pub fn record(rec: &mut Recording, op: ComplexToReal, x: Buf) -> Result<Buf> {
    rec.expect_dtype(x, Dtype::C32, "complex-to-real input")?;
    let y = rec.temp_like(x, Dtype::F32)?;
    let count = rec.shape(x).len().div_ceil(2) as u32;
    let p = Params { count, pad: 0 };
    rec.dispatch(&COMPLEX_TO_REAL, &[("OP", op as u32 as f64)], bytemuck::bytes_of(&p), &[x, y], COMPLEX_TO_REAL.groups(count as u64));
    Ok(y)
}

pub fn cpu(op: ComplexToReal, x: &[Complex32]) -> Vec<f32> {
    x.iter().map(|&c| op.apply(c)).collect()
}
