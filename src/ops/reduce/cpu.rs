//! CPU reference of the reductions: the same geometry and semantics as the GPU path, with sums
//! and means in f64 so tests can measure the GPU's accuracy.

use ndarray::{ArrayD, ArrayViewD, IxDyn};

use super::{geometry, Reduction};
use crate::error::Result;
use crate::kernels::reduce_columns;

/// `op` over the whole of `x` or along `axis`. ArgMin/ArgMax give indices, exact in the f64.
pub fn reduce(x: &ArrayViewD<f32>, op: Reduction, axis: Option<usize>) -> Result<ArrayD<f64>> {
    let g = geometry(x.shape(), axis)?;
    let data: Vec<f32> = x.iter().copied().collect();
    let mut out = reduce_columns::cpu(op.kernel_op(), &data, g.outer, g.len, g.inner);
    if op == Reduction::Mean {
        out.iter_mut().for_each(|v| *v /= g.len as f64);
    }
    Ok(ArrayD::from_shape_vec(IxDyn(&g.out_dims), out).unwrap())
}

/// numpy's median: the middle value, the mean of the middle two for an even count; NaN if empty.
/// Sorts `values`.
pub fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        0.5 * (values[n / 2 - 1] + values[n / 2])
    }
}
