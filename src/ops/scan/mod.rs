//! Prefix sums (numpy's `cumsum`, inclusive or exclusive) along any axis of a 1-4D f32 array,
//! and summed-area tables over the last 2 or 3 axes (for box sums, e.g. normalised
//! cross-correlation).
//!
//! A scan along axis `a` views the array as (outer, len, inner), len = dims[a] and inner the
//! product of the later axes. With inner == 1 the rows are contiguous and go to the block scan
//! of `kernels::scan_rows`; otherwise to the column scan of `kernels::scan_columns`.

pub mod cpu;

use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};
use crate::kernels::{scan_columns, scan_rows};

/// Prefix sum of `x` along `axis` into a new temporary of the same shape. Inclusive:
/// y[k] = x[0] + ... + x[k]; exclusive: y[k] = x[0] + ... + x[k-1], y[0] = 0.
pub fn cumsum(rec: &mut Recording, x: Buf, axis: usize, exclusive: bool) -> Result<Buf> {
    rec.expect_dtype(x, Dtype::F32, "cumsum input")?;
    let (len, inner) = scan_geometry(rec.dims(x), axis)?;
    if inner == 1 {
        scan_rows::record(rec, x, len, exclusive)
    } else {
        scan_columns::record(rec, x, len, inner, exclusive)
    }
}

/// Summed-area table over the last `dims` (2 or 3) axes of `x`, batched over the leading ones:
/// y[.., j, k] = sum of x[.., ..=j, ..=k] (and likewise in 3D).
pub fn summed_area_table(rec: &mut Recording, x: Buf, dims: usize) -> Result<Buf> {
    rec.expect_dtype(x, Dtype::F32, "summed-area table input")?;
    let ndim = rec.dims(x).len();
    check_sat_dims(rec.dims(x), dims)?;
    let mut y = cumsum(rec, x, ndim - 1, false)?;
    for axis in (ndim - dims..ndim - 1).rev() {
        y = cumsum(rec, y, axis, false)?;
    }
    Ok(y)
}

/// (len, inner) of a scan along `axis` of an array of shape `dims`.
pub(crate) fn scan_geometry(dims: &[usize], axis: usize) -> Result<(usize, usize)> {
    if axis >= dims.len() {
        return Err(Error::Invalid(format!("scan axis {axis} is out of range for an array of shape {dims:?}")));
    }
    Ok((dims[axis], dims[axis + 1..].iter().product()))
}

pub(crate) fn check_sat_dims(shape: &[usize], dims: usize) -> Result<()> {
    if !(2..=3).contains(&dims) {
        return Err(Error::Invalid(format!("summed-area tables are 2D or 3D, got dims = {dims}")));
    }
    if shape.len() < dims {
        return Err(Error::Shape(format!("a {dims}D summed-area table needs at least {dims} axes, got shape {shape:?}")));
    }
    Ok(())
}
