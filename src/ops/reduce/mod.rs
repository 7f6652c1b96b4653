//! Reductions over a whole f32 array or along one axis, with numpy's semantics: sum (compensated,
//! so accurate to about one f32 rounding of the result), mean, min and max (NaN propagates),
//! argmin and argmax (first occurrence; the first NaN if any; flat index for the whole array).
//!
//! A reduced axis that is the last one (or the whole array, one long row) goes to
//! `reduce_rows`, which reads with vec4 loads at close to memory bandwidth; other axes (and
//! rows of a few elements) go to `reduce_columns`, one thread per column.

pub mod cpu;

use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};
use crate::kernels::reduce_rows::ReduceOp;
use crate::kernels::unary::{self, UnaryOp};
use crate::kernels::{reduce_columns, reduce_rows};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    Sum,
    Mean,
    Min,
    Max,
    ArgMin,
    ArgMax,
    /// Σ x² in one pass.
    SumSquares,
    /// The index of the largest |x| (first occurrence).
    ArgMaxAbs,
}

impl Reduction {
    /// The kernel op (a mean is a sum, then a scale).
    pub fn kernel_op(self) -> ReduceOp {
        match self {
            Reduction::Sum | Reduction::Mean => ReduceOp::Sum,
            Reduction::Min => ReduceOp::Min,
            Reduction::Max => ReduceOp::Max,
            Reduction::ArgMin => ReduceOp::ArgMin,
            Reduction::ArgMax => ReduceOp::ArgMax,
            Reduction::SumSquares => ReduceOp::SumSquares,
            Reduction::ArgMaxAbs => ReduceOp::ArgMaxAbs,
        }
    }

    /// F32 values, or U32 indices for argmin/argmax.
    pub fn output_dtype(self) -> Dtype {
        self.kernel_op().output_dtype()
    }
}

/// Contiguous rows this short go to `reduce_columns`, a thread per row: on an H200 that beat
/// the rows kernel's one-thread teams by 40% at 4 to 8 elements (and lost from 16 on).
const TINY_ROW: usize = 8;

/// The array viewed as (outer, len, inner) with `len` the reduced axis, and the result's shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub outer: usize,
    pub len: usize,
    pub inner: usize,
    pub out_dims: Vec<usize>,
}

/// The whole array (`axis` None) is one row; along an axis, the result drops that axis
/// (shape [1] when nothing is left).
pub fn geometry(dims: &[usize], axis: Option<usize>) -> Result<Geometry> {
    let Some(axis) = axis else {
        return Ok(Geometry { outer: 1, len: dims.iter().product(), inner: 1, out_dims: vec![1] });
    };
    if axis >= dims.len() {
        return Err(Error::Invalid(format!("axis {axis} is out of range for an array of shape {dims:?}")));
    }
    let mut out_dims: Vec<usize> = dims.iter().enumerate().filter(|&(k, _)| k != axis).map(|(_, &d)| d).collect();
    if out_dims.is_empty() {
        out_dims.push(1);
    }
    Ok(Geometry { outer: dims[..axis].iter().product(), len: dims[axis], inner: dims[axis + 1..].iter().product(), out_dims })
}

/// Records `op` over the whole of `x` (`axis` None) or along `axis`, into a new array: F32
/// values, or U32 indices for ArgMin/ArgMax.
pub fn record(rec: &mut Recording, x: Buf, op: Reduction, axis: Option<usize>) -> Result<Buf> {
    rec.expect_dtype(x, Dtype::F32, "reduction input")?;
    let g = geometry(rec.dims(x), axis)?;
    let y = rec.temp(&g.out_dims, op.output_dtype())?;
    let kop = op.kernel_op();
    if g.inner == 1 && (g.len > TINY_ROW || g.outer == 1) {
        reduce_rows::record_into(rec, kop, x, y, g.outer, g.len)?;
    } else {
        reduce_columns::record_into(rec, kop, x, y, g.outer, g.len, g.inner)?;
    }
    if op == Reduction::Mean {
        return unary::record(rec, UnaryOp::Scale(1.0 / g.len as f32), y);
    }
    Ok(y)
}
