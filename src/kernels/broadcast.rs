//! `shaders/pointwise/broadcast.wgsl`: z = x (op) y with numpy's broadcasting (a scalar is a
//! one-element array), arithmetic and comparisons, f32 or f64. The elementwise arithmetic of
//! arrays that stay on the device between calls (Python's `lucent.Array`).

use bytemuck::{Pod, Zeroable};

use super::BROADCAST;
use crate::error::{Error, Result};
use crate::gpu::{Dtype, Shape};
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in broadcast.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub pad: [u32; 3],
    pub dims: [u32; 4],
    pub sx: [u32; 4],
    pub sy: [u32; 4],
}

/// numpy's names: add, subtract, multiply, divide, maximum, minimum, and the comparisons
/// (1 where true, 0 where false, in the operands' type).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BroadcastOp {
    Add,
    Subtract,
    Multiply,
    Divide,
    Maximum,
    Minimum,
    Less,
    LessEqual,
    Greater,
    GreaterEqual,
    Equal,
    NotEqual,
}

impl BroadcastOp {
    /// The OP code in broadcast.wgsl.
    fn code(self) -> u32 {
        self as u32
    }

    /// The CPU twin of one element (in f64: the f32 kernel's result is this one rounded, but
    /// for maximum/minimum of NaN, where WGSL leaves the choice open).
    pub fn apply(self, a: f64, b: f64) -> f64 {
        let t = |c: bool| if c { 1.0 } else { 0.0 };
        match self {
            BroadcastOp::Add => a + b,
            BroadcastOp::Subtract => a - b,
            BroadcastOp::Multiply => a * b,
            BroadcastOp::Divide => a / b,
            BroadcastOp::Maximum => a.max(b),
            BroadcastOp::Minimum => a.min(b),
            BroadcastOp::Less => t(a < b),
            BroadcastOp::LessEqual => t(a <= b),
            BroadcastOp::Greater => t(a > b),
            BroadcastOp::GreaterEqual => t(a >= b),
            BroadcastOp::Equal => t(a == b),
            BroadcastOp::NotEqual => t(a != b),
        }
    }
}

/// numpy's broadcast shape of `a` and `b` (axes aligned from the last).
pub fn broadcast_shape(a: &[usize], b: &[usize]) -> Result<Vec<usize>> {
    let n = a.len().max(b.len());
    let at = |d: &[usize], k: usize| if k + d.len() >= n { d[k + d.len() - n] } else { 1 };
    (0..n)
        .map(|k| match (at(a, k), at(b, k)) {
            (x, y) if x == y || y == 1 => Ok(x),
            (1, y) => Ok(y),
            _ => Err(Error::Shape(format!("operands could not be broadcast together with shapes {a:?} {b:?}"))),
        })
        .collect()
}

/// The element strides of an array of `dims` read as the broadcast shape `out` (0 along the
/// axes it is broadcast over), padded to four axes in front.
fn strides(dims: &[usize], out: &[usize]) -> [u32; 4] {
    let mut s = [0u32; 4];
    let mut step = 1usize;
    for k in (0..out.len()).rev() {
        let j = k as isize - (out.len() - dims.len()) as isize;
        let n = if j >= 0 { dims[j as usize] } else { 1 };
        if n != 1 {
            s[4 - out.len() + k] = step as u32;
        }
        step *= n;
    }
    s
}

/// Records `x (op) y` broadcast together into a new array (real arrays of one type, f32 or f64).
pub fn record(rec: &mut Recording, op: BroadcastOp, x: Buf, y: Buf) -> Result<Buf> {
    let dtype = rec.dtype(x);
    rec.expect_dtype(y, dtype, "broadcast operand")?;
    let kernel = BROADCAST.for_dtype(dtype)?;
    let out = broadcast_shape(rec.dims(x), rec.dims(y))?;
    let shape = Shape::new(&out)?;
    let z = rec.temp(&out, dtype)?;
    let count = u32::try_from(shape.len()).map_err(|_| Error::TooLarge {
        what: format!("an elementwise result of shape {out:?}"),
        bytes: shape.len() as u64 * dtype.bytes(),
        limit: u32::MAX as u64,
    })?;
    let d4 = shape.dims4().map(|d| d as u32);
    let p = Params { count, pad: [0; 3], dims: d4, sx: strides(rec.dims(x), &out), sy: strides(rec.dims(y), &out) };
    rec.dispatch(kernel, &[("OP", op.code() as f64)], bytemuck::bytes_of(&p), &[x, y, z], kernel.groups(count as u64));
    Ok(z)
}

/// The CPU twin over row-major arrays of shapes `a` and `b`.
pub fn cpu(op: BroadcastOp, x: &[f64], a: &[usize], y: &[f64], b: &[usize]) -> Result<(Vec<f64>, Vec<usize>)> {
    let out = broadcast_shape(a, b)?;
    let d4 = Shape::new(&out)?.dims4();
    let (sx, sy) = (strides(a, &out), strides(b, &out));
    let n: usize = out.iter().product();
    let z = (0..n)
        .map(|i| {
            let at = [i / (d4[1] * d4[2] * d4[3]), i / (d4[2] * d4[3]) % d4[1], i / d4[3] % d4[2], i % d4[3]];
            let off = |s: [u32; 4]| at.iter().zip(s).map(|(&c, s)| c * s as usize).sum::<usize>();
            op.apply(x[off(sx)], y[off(sy)])
        })
        .collect();
    Ok((z, out))
}

/// Whether `dtype` is one `record` computes.
pub fn accepts(dtype: Dtype) -> bool {
    matches!(dtype, Dtype::F32 | Dtype::F64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_broadcast_as_numpy() {
        assert_eq!(broadcast_shape(&[3, 1, 5], &[4, 1]).unwrap(), vec![3, 4, 5]);
        assert_eq!(broadcast_shape(&[1], &[2, 3]).unwrap(), vec![2, 3]);
        assert!(broadcast_shape(&[3], &[4]).is_err());
        assert_eq!(strides(&[4, 1], &[3, 4, 5]), [0, 0, 1, 0]);
        assert_eq!(strides(&[3, 1, 5], &[3, 4, 5]), [0, 5, 0, 1]);
        assert_eq!(strides(&[1], &[2, 3]), [0, 0, 0, 0]);
    }
}
