//! Direct filters on host volumes larger than one GPU buffer: scipy.ndimage.correlate/convolve
//! computed slab by slab along axis 0. Each slab of output rows needs the input rows its kernel
//! reaches, the slab plus a halo of the kernel's extent along axis 0 minus one; those rows are
//! gathered on the host with the boundary applied along axis 0 (so slabs at the edges see the
//! same folded rows as the whole volume would), and the GPU filters the slab with that axis
//! already in range. Slabs run one after another (uploads, filter, download per slab).

use ndarray::{ArrayD, ArrayViewD, Axis, Slice};

use super::{check_boundary, check_finite, gpu};
use crate::error::{Error, Result};
use crate::gpu::Shape;
use crate::graph::Recording;
use crate::ops::layout::Boundary;
use crate::Gpu;

/// scipy.ndimage.correlate(x, kernel, mode) of a host array of any size along axis 0 (each
/// slab's input and output must fit one buffer); x and the kernel finite, of one rank.
pub fn correlate_host(gpu: &Gpu, x: &ArrayViewD<f32>, kernel: &ArrayViewD<f32>, boundary: Boundary) -> Result<ArrayD<f32>> {
    let origin: Vec<i64> = kernel.shape().iter().map(|&m| -((m / 2) as i64)).collect();
    filter(gpu, x, kernel, &origin, boundary)
}

/// scipy.ndimage.convolve(x, kernel, mode) of a host array of any size along axis 0.
pub fn convolve_host(gpu: &Gpu, x: &ArrayViewD<f32>, kernel: &ArrayViewD<f32>, boundary: Boundary) -> Result<ArrayD<f32>> {
    let origin: Vec<i64> = kernel.shape().iter().map(|&m| -(((m - 1) / 2) as i64)).collect();
    filter(gpu, x, &gpu::reverse(kernel).view(), &origin, boundary)
}

/// A separable filter ([`super::gaussian_passes`], [`super::uniform_passes`]) of a host array:
/// all passes in one submission when the array fits a buffer, else pass by pass, each in slabs.
pub fn separable_host(gpu: &Gpu, x: &ArrayViewD<f32>, passes: &[(usize, Vec<f64>)], boundary: Boundary) -> Result<ArrayD<f32>> {
    Shape::new(x.shape())?;
    check_finite(x, "filter input")?;
    check_boundary(boundary)?;
    let whole = || -> Result<ArrayD<f32>> {
        let mut rec = Recording::new(gpu);
        let xb = rec.upload_f32(x)?;
        let y = super::separable(&mut rec, xb, passes, boundary)?;
        let d = rec.download(y);
        rec.run()?.into_f32(d)
    };
    match whole() {
        Err(Error::TooLarge { .. }) => {
            let mut cur = x.to_owned();
            for (axis, weights) in passes {
                let weights: Vec<f32> = weights.iter().map(|&w| w as f32).collect();
                let kernel = super::along_axis(x.shape(), &weights, *axis)?;
                cur = correlate_host(gpu, &cur.view(), &kernel.view(), boundary)?;
            }
            Ok(cur)
        }
        other => other,
    }
}

/// Output rows per slab along axis 0 so that a slab's input (rows + halo) and output each fit
/// `max_bytes`; `Error::TooLarge` when not even one row does.
pub fn slab_rows(dims: &[usize], kernel_rows: usize, max_bytes: u64) -> Result<usize> {
    let plane_bytes = dims[1..].iter().product::<usize>() as u64 * 4;
    let fit = (max_bytes / plane_bytes) as usize;
    if fit < kernel_rows {
        return Err(Error::TooLarge {
            what: format!("one slab of a {dims:?} filter with {kernel_rows} kernel rows along axis 0"),
            bytes: kernel_rows as u64 * plane_bytes,
            limit: max_bytes,
        });
    }
    Ok((fit - (kernel_rows - 1)).min(dims[0]))
}

/// `y[o] = Σ_j w[j] · x[origin + o + j]` over y shaped like x, slab by slab along axis 0.
fn filter(gpu: &Gpu, x: &ArrayViewD<f32>, weights: &ArrayViewD<f32>, origin: &[i64], boundary: Boundary) -> Result<ArrayD<f32>> {
    let dims = Shape::new(x.shape())?.dims().to_vec();
    Shape::new(weights.shape())?;
    if weights.ndim() != dims.len() {
        return Err(Error::Shape(format!("filter kernel {:?} must have the rank of the input {dims:?}", weights.shape())));
    }
    check_finite(x, "filter input")?;
    check_finite(weights, "filter kernel")?;
    check_boundary(boundary)?;
    let k0 = weights.shape()[0];
    let rows = slab_rows(&dims, k0, gpu.max_buffer_bytes())?;
    let mut y = ArrayD::zeros(x.raw_dim());
    // Axis 0 of every slab starts in range: its halo rows are gathered below.
    let mut slab_origin = origin.to_vec();
    slab_origin[0] = 0;
    for start in (0..dims[0]).step_by(rows) {
        let end = (start + rows).min(dims[0]);
        let input = slab_input(x, origin[0] + start as i64, end - start + k0 - 1, boundary);
        let mut out_dims = dims.clone();
        out_dims[0] = end - start;
        let mut rec = Recording::new(gpu);
        let xb = rec.upload_f32(&input.view())?;
        let yb = gpu::window(&mut rec, xb, weights, &out_dims, &slab_origin, boundary)?;
        let d = rec.download(yb);
        let slab = rec.run()?.into_f32(d)?;
        y.slice_axis_mut(Axis(0), Slice::from(start..end)).assign(&slab);
    }
    Ok(y)
}

/// Rows `first .. first + count` of x along axis 0, folded by the boundary (constant mode:
/// rows of its value outside).
fn slab_input(x: &ArrayViewD<f32>, first: i64, count: usize, boundary: Boundary) -> ArrayD<f32> {
    let n = x.shape()[0] as i64;
    let rows: Vec<ArrayD<f32>> = (0..count as i64)
        .map(|r| match boundary.fold(first + r, n) {
            Some(c) => x.index_axis(Axis(0), c as usize).to_owned(),
            None => {
                let fill = if let Boundary::Constant(v) = boundary { v } else { 0.0 };
                ArrayD::from_elem(x.index_axis(Axis(0), 0).raw_dim(), fill)
            }
        })
        .collect();
    let views: Vec<_> = rows.iter().map(|r| r.view().insert_axis(Axis(0))).collect();
    ndarray::concatenate(Axis(0), &views).expect("rows of one shape")
}
