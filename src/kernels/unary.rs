//! `shaders/pointwise/unary.wgsl`: y = f(x) elementwise on f32.

use bytemuck::{Pod, Zeroable};

use super::UNARY;
use crate::error::Result;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in unary.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub pad: u32,
    pub a: f32,
    pub b: f32,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum UnaryOp {
    /// x * scale + offset
    Affine {
        scale: f32,
        offset: f32,
    },
    Clamp {
        lo: f32,
        hi: f32,
    },
    Abs,
    Sqrt,
    Exp,
    Log,
    MaxScalar(f32),
    MinScalar(f32),
    Scale(f32),
    Offset(f32),
    /// 1 / x, 0 where |x| is below the threshold.
    Reciprocal(f32),
}

impl UnaryOp {
    /// The OP code in unary.wgsl and the two scalar parameters.
    fn encode(self) -> (u32, f32, f32) {
        match self {
            UnaryOp::Affine { scale, offset } => (0, scale, offset),
            UnaryOp::Clamp { lo, hi } => (1, lo, hi),
            UnaryOp::Abs => (2, 0.0, 0.0),
            UnaryOp::Sqrt => (3, 0.0, 0.0),
            UnaryOp::Exp => (4, 0.0, 0.0),
            UnaryOp::Log => (5, 0.0, 0.0),
            UnaryOp::MaxScalar(a) => (6, a, 0.0),
            UnaryOp::MinScalar(a) => (7, a, 0.0),
            UnaryOp::Scale(a) => (8, a, 0.0),
            UnaryOp::Offset(a) => (9, a, 0.0),
            UnaryOp::Reciprocal(a) => (10, a, 0.0),
        }
    }

    /// The CPU twin of one element.
    pub fn apply(self, x: f32) -> f32 {
        match self {
            UnaryOp::Affine { scale, offset } => x * scale + offset,
            UnaryOp::Clamp { lo, hi } => x.max(lo).min(hi),
            UnaryOp::Abs => x.abs(),
            UnaryOp::Sqrt => x.sqrt(),
            UnaryOp::Exp => x.exp(),
            UnaryOp::Log => x.ln(),
            UnaryOp::MaxScalar(a) => x.max(a),
            UnaryOp::MinScalar(a) => x.min(a),
            UnaryOp::Scale(a) => x * a,
            UnaryOp::Offset(a) => x + a,
            UnaryOp::Reciprocal(a) => {
                if x.abs() < a {
                    0.0
                } else {
                    1.0 / x
                }
            }
        }
    }
}

/// Records `y = op(x)` into `y` (same shape, f32 or f64, another buffer). The f64 twin takes
/// the scalars in f32 and exp/log through f32 (SPIR-V has no f64 forms of them).
pub fn record_into(rec: &mut Recording, op: UnaryOp, x: Buf, y: Buf) -> Result<()> {
    let dtype = rec.dtype(x);
    let kernel = UNARY.for_dtype(dtype)?;
    rec.expect_dtype(y, dtype, "unary op output")?;
    rec.expect_same_shape(x, y, "unary op")?;
    let (code, a, b) = op.encode();
    let count = rec.shape(x).len().div_ceil(4) as u32;
    let p = Params { count, pad: 0, a, b };
    rec.dispatch(kernel, &[("OP", code as f64)], bytemuck::bytes_of(&p), &[x, y], kernel.groups(count as u64));
    Ok(())
}

/// Records `op(x)` into a new temporary.
pub fn record(rec: &mut Recording, op: UnaryOp, x: Buf) -> Result<Buf> {
    let y = rec.temp_like(x, rec.dtype(x))?;
    record_into(rec, op, x, y)?;
    Ok(y)
}

pub fn cpu(op: UnaryOp, x: &[f32]) -> Vec<f32> {
    x.iter().map(|&v| op.apply(v)).collect()
}
