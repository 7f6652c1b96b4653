//! `shaders/pointwise/binary.wgsl`: z = x (op) y elementwise, real or complex.

use bytemuck::{Pod, Zeroable};
use num_complex::Complex32;

use super::{vec4s, BINARY};
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in binary.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub pad: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Min,
    /// Complex product x·y.
    ComplexMul,
    /// Complex product x·conj(y) (correlation).
    ComplexMulConj,
    /// x·conj(y) / max(|x·conj(y)|, 100 ε) with ε f32's epsilon: the cross-power spectrum of
    /// phase correlation, normalised as scikit-image normalises it.
    CrossPower,
}

/// The floor of |x·conj(y)| in [`BinaryOp::CrossPower`] (scikit-image: 100 · finfo(f32).eps).
pub const CROSS_POWER_FLOOR: f32 = 100.0 * f32::EPSILON;

impl BinaryOp {
    fn code(self) -> u32 {
        self as u32
    }
    /// Add and Sub act on real and complex arrays; the complex products on complex ones only;
    /// the rest on real ones only.
    fn accepts(self, dtype: Dtype) -> bool {
        match self {
            BinaryOp::Add | BinaryOp::Sub => dtype != Dtype::U32,
            BinaryOp::ComplexMul | BinaryOp::ComplexMulConj | BinaryOp::CrossPower => matches!(dtype, Dtype::C32 | Dtype::C64),
            _ => matches!(dtype, Dtype::F32 | Dtype::F64),
        }
    }
    pub fn apply(self, a: f32, b: f32) -> f32 {
        match self {
            BinaryOp::Add => a + b,
            BinaryOp::Sub => a - b,
            BinaryOp::Mul => a * b,
            BinaryOp::Div => a / b,
            BinaryOp::Max => a.max(b),
            BinaryOp::Min => a.min(b),
            _ => panic!("{self:?} is a complex operation"),
        }
    }
    pub fn apply_complex(self, a: Complex32, b: Complex32) -> Complex32 {
        match self {
            BinaryOp::Add => a + b,
            BinaryOp::Sub => a - b,
            BinaryOp::ComplexMul => a * b,
            BinaryOp::ComplexMulConj => a * b.conj(),
            BinaryOp::CrossPower => {
                let z = a * b.conj();
                z / z.norm().max(CROSS_POWER_FLOOR)
            }
            _ => panic!("{self:?} is a real operation"),
        }
    }
}

/// Records `z = x (op) y`; all three the same shape and type, `z` distinct from the inputs.
pub fn record_into(rec: &mut Recording, op: BinaryOp, x: Buf, y: Buf, z: Buf) -> Result<()> {
    rec.expect_same_shape(x, y, "binary op")?;
    rec.expect_same_shape(x, z, "binary op output")?;
    let dtype = rec.dtype(x);
    rec.expect_dtype(y, dtype, "binary op")?;
    rec.expect_dtype(z, dtype, "binary op output")?;
    if !op.accepts(dtype) {
        return Err(Error::Dtype(format!("{op:?} does not apply to {dtype:?} arrays")));
    }
    // f64 in the twin (vec4<f64>: four reals or two complex), everything else as f32 words.
    let (kernel, count) = match dtype {
        Dtype::F64 | Dtype::C64 => (BINARY.for_dtype(Dtype::F64)?, vec4s(rec.shape(x).len(), dtype.bytes() / 2)),
        _ => (&BINARY, vec4s(rec.shape(x).len(), dtype.bytes())),
    };
    let p = Params { count, pad: 0 };
    rec.dispatch(kernel, &[("OP", op.code() as f64)], bytemuck::bytes_of(&p), &[x, y, z], kernel.groups(count as u64));
    Ok(())
}

/// Records `x (op) y` into a new temporary.
pub fn record(rec: &mut Recording, op: BinaryOp, x: Buf, y: Buf) -> Result<Buf> {
    let z = rec.temp_like(x, rec.dtype(x))?;
    record_into(rec, op, x, y, z)?;
    Ok(z)
}

pub fn cpu(op: BinaryOp, x: &[f32], y: &[f32]) -> Vec<f32> {
    x.iter().zip(y).map(|(&a, &b)| op.apply(a, b)).collect()
}

pub fn cpu_complex(op: BinaryOp, x: &[Complex32], y: &[Complex32]) -> Vec<Complex32> {
    x.iter().zip(y).map(|(&a, &b)| op.apply_complex(a, b)).collect()
}
