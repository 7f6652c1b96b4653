//! `shaders/pointwise/complex_unary.wgsl`: unit modulus (phase), conjugate, complex scale.

use bytemuck::{Pod, Zeroable};
use num_complex::Complex32;

use super::COMPLEX_UNARY;
use crate::error::Result;
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in complex_unary.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub pad: u32,
    pub a: f32,
    pub b: f32,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ComplexUnary {
    /// c / max(|c|, eps): the phase factor of phase correlation; eps keeps zeros finite.
    UnitModulus {
        eps: f32,
    },
    Conj,
    Scale(Complex32),
}

impl ComplexUnary {
    fn encode(self) -> (u32, f32, f32) {
        match self {
            ComplexUnary::UnitModulus { eps } => (0, eps, 0.0),
            ComplexUnary::Conj => (1, 0.0, 0.0),
            ComplexUnary::Scale(s) => (2, s.re, s.im),
        }
    }
    pub fn apply(self, c: Complex32) -> Complex32 {
        match self {
            ComplexUnary::UnitModulus { eps } => c / c.norm().max(eps),
            ComplexUnary::Conj => c.conj(),
            ComplexUnary::Scale(s) => c * s,
        }
    }
}

pub fn record(rec: &mut Recording, op: ComplexUnary, x: Buf) -> Result<Buf> {
    rec.expect_dtype(x, Dtype::C32, "complex op input")?;
    let y = rec.temp_like(x, Dtype::C32)?;
    let (code, a, b) = op.encode();
    let count = rec.shape(x).len().div_ceil(2) as u32;
    let p = Params { count, pad: 0, a, b };
    rec.dispatch(&COMPLEX_UNARY, &[("OP", code as f64)], bytemuck::bytes_of(&p), &[x, y], COMPLEX_UNARY.groups(count as u64));
    Ok(y)
}

pub fn cpu(op: ComplexUnary, x: &[Complex32]) -> Vec<Complex32> {
    x.iter().map(|&c| op.apply(c)).collect()
}
