//! CPU reference for prefix sums and summed-area tables, accumulated in f64 (same semantics and
//! validation as the GPU path in `mod.rs`).

use ndarray::{ArrayD, ArrayViewD, IxDyn};

use super::{check_sat_dims, scan_geometry};
use crate::error::Result;
use crate::gpu::Shape;
pub use crate::kernels::scan_rows::scan_f64;

/// `cumsum` along `axis` (exclusive: shifted by one, starting at 0).
pub fn cumsum(x: &ArrayViewD<f32>, axis: usize, exclusive: bool) -> Result<ArrayD<f64>> {
    Shape::new(x.shape())?;
    let (len, inner) = scan_geometry(x.shape(), axis)?;
    let data: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    Ok(ArrayD::from_shape_vec(IxDyn(x.shape()), scan_f64(&data, len, inner, exclusive)).unwrap())
}

/// Summed-area table over the last `dims` (2 or 3) axes: inclusive sums along each in turn.
pub fn summed_area_table(x: &ArrayViewD<f32>, dims: usize) -> Result<ArrayD<f64>> {
    Shape::new(x.shape())?;
    let shape = x.shape();
    check_sat_dims(shape, dims)?;
    let mut data: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    for axis in shape.len() - dims..shape.len() {
        let (len, inner) = scan_geometry(shape, axis)?;
        data = scan_f64(&data, len, inner, false);
    }
    Ok(ArrayD::from_shape_vec(IxDyn(shape), data).unwrap())
}
