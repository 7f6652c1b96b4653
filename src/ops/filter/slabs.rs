//! Direct filters on arrays larger than one GPU buffer: scipy.ndimage.correlate/convolve and the
//! separable filters computed slab by slab along axis 0. Each slab of output rows needs the
//! input rows its kernel reaches, the slab plus a halo of the kernel's extent along axis 0 minus
//! one; those rows are gathered with the boundary applied along axis 0 (so slabs at the edges
//! see the same folded rows as the whole volume would), and the GPU filters the slab with that
//! axis already in range: exactly the whole-array result.
//!
//! In core ([`filter_chunks`], [`separable_chunks`]) the array stays on the device in chunks and
//! each slab's rows are gathered there; host arrays that do not fit the device go slab by slab
//! through the host (upload, filter, download per slab).

use std::ops::Range;

use ndarray::{ArrayD, ArrayViewD, Axis, Slice};

use super::along_axis;
use crate::check::check_finite;
use crate::error::{Error, Result};
use crate::gpu::{GpuArray, Real, Shape};
use crate::graph::{row_ranges, Chunked, Output, Recording};
use crate::kernels::boundary::Boundary;
use crate::kernels::{copy_range, fill};
use crate::ops::convolve::{reverse, window};
use crate::ops::layout::chunks;
use crate::placement::{Form, GiveWay, Ladder};
use crate::Gpu;

/// scipy.ndimage.correlate(x, kernel, mode) of a host array of any size along axis 0.
pub fn correlate_host<T: Real, W: Real>(gpu: &Gpu, x: &ArrayViewD<T>, kernel: &ArrayViewD<W>, boundary: Boundary) -> Result<ArrayD<T>> {
    filter_host(gpu, x, &[Pass::correlate(kernel)], boundary)
}

/// scipy.ndimage.convolve(x, kernel, mode) of a host array of any size along axis 0.
pub fn convolve_host<T: Real, W: Real>(gpu: &Gpu, x: &ArrayViewD<T>, kernel: &ArrayViewD<W>, boundary: Boundary) -> Result<ArrayD<T>> {
    filter_host(gpu, x, &[Pass::convolve(kernel)], boundary)
}

/// A separable filter ([`super::gaussian_passes`], [`super::uniform_passes`]) of a host array of
/// any size: all passes in one submission, on the whole array or its chunks when the device
/// holds it, else pass by pass in slabs through the host.
pub fn separable_host<T: Real>(gpu: &Gpu, x: &ArrayViewD<T>, passes: &[(usize, Vec<f64>)], boundary: Boundary) -> Result<ArrayD<T>> {
    let passes = passes.iter().map(|(axis, w)| Pass::along(x.shape(), *axis, w)).collect::<Result<Vec<_>>>()?;
    if passes.is_empty() {
        Shape::new(x.shape())?;
        check_finite(x, "filter input")?;
        boundary.check()?;
        return Ok(x.to_owned());
    }
    filter_host(gpu, x, &passes, boundary)
}

/// One correlation of a filter: its weights (x's rank; f64, sent in the data's type) and where
/// tap 0 reads, per axis.
#[derive(Clone, Debug)]
pub struct Pass {
    pub weights: ArrayD<f64>,
    pub origin: Vec<i64>,
}

impl Pass {
    /// scipy.ndimage.correlate's centring: tap j of m reads x[i + j - m/2].
    pub fn correlate<W: Real>(kernel: &ArrayViewD<W>) -> Pass {
        Pass { weights: kernel.mapv(|w| w.as_f64()), origin: kernel.shape().iter().map(|&m| -((m / 2) as i64)).collect() }
    }

    /// scipy.ndimage.convolve: the reversed kernel, shifted by one on even axes.
    pub fn convolve<W: Real>(kernel: &ArrayViewD<W>) -> Pass {
        let origin = kernel.shape().iter().map(|&m| -(((m - 1) / 2) as i64)).collect();
        Pass { weights: reverse(&kernel.mapv(|w| w.as_f64()).view()), origin }
    }

    /// correlate1d's weights along `axis` of an array of shape `dims`.
    pub fn along(dims: &[usize], axis: usize, weights: &[f64]) -> Result<Pass> {
        Ok(Pass::correlate(&along_axis(dims, weights, axis)?.view()))
    }

    fn rows(&self) -> usize {
        self.weights.shape()[0]
    }
}

/// The passes over a host array: on the whole array or its chunks when they fit the device's
/// memory, else slab by slab through the host.
fn filter_host<T: Real>(gpu: &Gpu, x: &ArrayViewD<T>, passes: &[Pass], boundary: Boundary) -> Result<ArrayD<T>> {
    let dims = Shape::new(x.shape())?.dims().to_vec();
    for p in passes {
        Shape::new(p.weights.shape())?;
        if p.weights.ndim() != dims.len() {
            return Err(Error::Shape(format!("filter kernel {:?} must have the rank of the input {dims:?}", p.weights.shape())));
        }
        check_finite(&p.weights.view(), "filter kernel")?;
    }
    check_finite(x, "filter input")?;
    boundary.check()?;
    if gpu.narrows::<T>() {
        // No f64 kernels here: computed in f32, returned as f64 (the front doors say so).
        return Ok(crate::gpu::widened(&filter_host(gpu, &crate::gpu::narrowed(x).view(), passes, boundary)?));
    }
    // In core (whole, or chunks where the array exceeds a buffer), else slabs through the host.
    let mut ladder = Ladder::new();
    if let Some(y) = ladder.attempt(Form::Chunks, GiveWay::OnMisfit, || in_core(gpu, x, passes, boundary))? {
        return Ok(y);
    }
    let mut cur = None;
    for p in passes {
        cur = Some(through_host(gpu, &cur.as_ref().map_or_else(|| x.view(), |c: &ArrayD<T>| c.view()), p, boundary)?);
    }
    Ok(cur.expect("at least one pass"))
}

/// Every pass on the device, the array in as few chunks as the slabs allow.
fn in_core<T: Real>(gpu: &Gpu, x: &ArrayViewD<T>, passes: &[Pass], boundary: Boundary) -> Result<ArrayD<T>> {
    let dims = x.shape().to_vec();
    let halo = passes.iter().map(|p| p.rows() - 1).max().unwrap_or(0);
    let elem = T::DTYPE.bytes();
    let data = Shape::new(&dims)?.len() as u64 * elem;
    let per_chunk = if data <= gpu.max_buffer_bytes() { dims[0] } else { slab_rows(&dims, halo + 1, gpu.max_buffer_bytes(), elem)? };
    let rows = row_ranges(dims[0], per_chunk);
    // Input and output chunks, and one slab with its halo on the way.
    let needed = data.saturating_mul(2).saturating_add((rows[0].len() + halo) as u64 * (data / dims[0] as u64));
    if needed > gpu.memory_budget_bytes() {
        let what = format!("a {dims:?} filter in core (device memory budget, LUCENT_DEVICE_MEMORY_BYTES)");
        return Err(Error::TooLarge { what, bytes: needed, limit: gpu.memory_budget_bytes() });
    }
    let mut rec = Recording::new(gpu);
    let mut cur = chunks::place(&mut rec, x, &dims, &vec![0; dims.len()], &rows)?;
    for p in passes {
        cur = filter_chunks(&mut rec, &cur, p, boundary, &rows)?;
    }
    let outputs: Vec<Output> = cur.parts.iter().map(|&p| rec.output(p)).collect();
    let results = rec.run()?;
    let arrays: Vec<GpuArray> = outputs.iter().map(|&o| results.array(o)).collect();
    GpuArray::download_joined(gpu, &arrays, &dims)
}

/// One pass over a chunked array (any chunking), its output in chunks of the rows `out`: each
/// output chunk filters its rows gathered with their halo on the device. A whole array filters
/// in place of its slab.
pub fn filter_chunks(rec: &mut Recording, x: &Chunked, pass: &Pass, boundary: Boundary, out: &[Range<usize>]) -> Result<Chunked> {
    let dims = x.dims.clone();
    if x.len() == 1 && out.len() == 1 {
        let y = window(rec, x.parts[0], &pass.weights.view(), &dims, &pass.origin, boundary)?;
        return Chunked::from_parts(rec, vec![y]);
    }
    let in_rows = x.rows(rec);
    let mut slab_origin = pass.origin.clone();
    slab_origin[0] = 0;
    let parts = out
        .iter()
        .map(|r| {
            // A pass along other axes reads only its own rows: a chunk of them is its slab.
            if let Some(c) = in_rows.iter().position(|i| i == r).filter(|_| pass.rows() == 1 && pass.origin[0] == 0) {
                let mut out_dims = dims.clone();
                out_dims[0] = r.len();
                return window(rec, x.parts[c], &pass.weights.view(), &out_dims, &pass.origin, boundary);
            }
            let input = gather_rows(rec, x, pass.origin[0] + r.start as i64, r.len() + pass.rows() - 1, boundary)?;
            let mut out_dims = dims.clone();
            out_dims[0] = r.len();
            window(rec, input, &pass.weights.view(), &out_dims, &slab_origin, boundary)
        })
        .collect::<Result<Vec<_>>>()?;
    Chunked::from_parts(rec, parts)
}

/// The passes of a separable filter over a chunked array (as [`super::separable`] does on one
/// array), the output chunked as the input.
#[cfg(test)]
pub fn separable_chunks(rec: &mut Recording, x: &Chunked, passes: &[(usize, Vec<f64>)], boundary: Boundary) -> Result<Chunked> {
    let rows = x.rows(rec);
    let mut cur = x.clone();
    for (axis, weights) in passes {
        cur = filter_chunks(rec, &cur, &Pass::along(&x.dims, *axis, weights)?, boundary, &rows)?;
    }
    Ok(cur)
}

/// Output rows per slab along axis 0 so that a slab's input (rows + halo) and output each fit
/// `max_bytes` (elements of `elem_bytes`); `Error::TooLarge` when not even one row does.
pub fn slab_rows(dims: &[usize], kernel_rows: usize, max_bytes: u64, elem_bytes: u64) -> Result<usize> {
    let plane_bytes = dims[1..].iter().product::<usize>() as u64 * elem_bytes;
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

/// One pass slab by slab through the host: each slab's rows gathered on the host, uploaded,
/// filtered and downloaded.
fn through_host<T: Real>(gpu: &Gpu, x: &ArrayViewD<T>, pass: &Pass, boundary: Boundary) -> Result<ArrayD<T>> {
    let dims = x.shape().to_vec();
    let k0 = pass.rows();
    let rows = slab_rows(&dims, k0, gpu.max_buffer_bytes(), T::DTYPE.bytes())?;
    let mut y = ArrayD::zeros(x.raw_dim());
    let mut slab_origin = pass.origin.clone();
    slab_origin[0] = 0;
    for start in (0..dims[0]).step_by(rows) {
        let end = (start + rows).min(dims[0]);
        let input = host_rows(x, pass.origin[0] + start as i64, end - start + k0 - 1, boundary);
        let mut out_dims = dims.clone();
        out_dims[0] = end - start;
        let mut rec = Recording::new(gpu);
        let xb = rec.upload_once_real(&input.view())?;
        let yb = window(&mut rec, xb, &pass.weights.view(), &out_dims, &slab_origin, boundary)?;
        let d = rec.download(yb);
        let slab = rec.run()?.into_real::<T>(d)?;
        y.slice_axis_mut(Axis(0), Slice::from(start..end)).assign(&slab);
    }
    Ok(y)
}

/// Runs of consecutive rows `first .. first + count` (which may leave `0..n`) folded by the
/// boundary: (first row of the run, first source row or `None` for the constant, length).
fn row_runs(first: i64, count: usize, n: usize, boundary: Boundary) -> Vec<(usize, Option<usize>, usize)> {
    let mut runs: Vec<(usize, Option<usize>, usize)> = Vec::new();
    for r in 0..count {
        let src = boundary.fold(first + r as i64, n as i64).map(|c| c as usize);
        match runs.last_mut() {
            Some((_, s, len)) if s.is_none() && src.is_none() || s.zip(src).is_some_and(|(s, c)| s + *len == c) => *len += 1,
            _ => runs.push((r, src, 1)),
        }
    }
    runs
}

/// Rows `first .. first + count` of x along axis 0, folded by the boundary (constant mode:
/// rows of its value outside).
fn host_rows<T: Real>(x: &ArrayViewD<T>, first: i64, count: usize, boundary: Boundary) -> ArrayD<T> {
    let mut dims = x.shape().to_vec();
    dims[0] = count;
    let fill = T::from_f64(if let Boundary::Constant(v) = boundary { v as f64 } else { 0.0 });
    let mut out = ArrayD::from_elem(dims, fill);
    for (at, src, len) in row_runs(first, count, x.shape()[0], boundary) {
        if let Some(s) = src {
            out.slice_axis_mut(Axis(0), Slice::from(at..at + len)).assign(&x.slice_axis(Axis(0), Slice::from(s..s + len)));
        }
    }
    out
}

/// Rows `first .. first + count` of a chunked array, folded by the boundary, gathered into one
/// new array on the device.
fn gather_rows(rec: &mut Recording, x: &Chunked, first: i64, count: usize, boundary: Boundary) -> Result<crate::graph::Buf> {
    let mut dims = x.dims.clone();
    dims[0] = count;
    let row: usize = dims[1..].iter().product();
    let out = rec.temp(&dims, x.dtype(rec))?;
    let runs = row_runs(first, count, x.dims[0], boundary);
    if runs.iter().any(|r| r.1.is_none()) {
        fill::record(rec, out, if let Boundary::Constant(v) = boundary { v } else { 0.0 });
    }
    let chunk_rows = x.rows(rec);
    for (at, src, len) in runs {
        let Some(s) = src else { continue };
        for (&part, r) in x.parts.iter().zip(&chunk_rows) {
            let (lo, hi) = (s.max(r.start), (s + len).min(r.end));
            if lo < hi {
                copy_range::record(rec, part, (lo - r.start) * row, out, (at + lo - s) * row, (hi - lo) * row)?;
            }
        }
    }
    Ok(out)
}
