//! `shaders/filter/correlate_axis.wgsl`: direct correlation with weights along one axis (the
//! contiguous one only for short windows), `y[o, k, i] = Σ_j w[j] · x[o, origin + k + j, i]` (the array viewed
//! as (outer, n, inner) around the axis), boundaries folded as `correlate_window` folds them and
//! the same sums in the same order; eight outputs a thread from the inputs they share. The
//! separable filters' passes along the slow axes take it (`ops::convolve::gpu::window`).

use bytemuck::{Pod, Zeroable};

use super::boundary::Boundary;
use super::CORRELATE_AXIS;
use crate::error::{Error, Result};
use crate::graph::{Buf, Recording};

/// Outputs a thread computes along the axis (the WGSL's `RUN`).
pub const RUN: usize = 8;

/// The most taps the kernel takes (its workgroup memory; longer windows are summed with
/// compensation by `correlate_window`, from `COMPENSATED_TAPS` = 256 on).
pub const MAX_TAPS: usize = 255;

/// Mirrors `Params` in correlate_axis.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub outer: u32,
    pub n_in: i32,
    pub n_out: u32,
    pub inner: u32,
    pub runs: u32,
    pub taps: u32,
    pub origin: i32,
    pub fill: f32,
    pub threads: u32,
    pub pad: [u32; 3],
}

/// The axis along which `k_dims` has its only non-unit length, where this kernel takes the
/// correlation of an input of `in_dims` into `out_dims` from `origin`: at most [`MAX_TAPS`]
/// taps, the other axes untouched (output as long as the input, origin 0), and the last axis
/// only where the tiled kernel does not pay (fewer than its `MIN_PLANE_TAPS`).
pub fn axis_of(in_dims: &[usize], k_dims: &[usize], out_dims: &[usize], origin: &[i64]) -> Option<usize> {
    let rank = k_dims.len();
    let axis = k_dims.iter().position(|&m| m > 1)?;
    let others_untouched = (0..rank).all(|a| a == axis || (k_dims[a] == 1 && out_dims[a] == in_dims[a] && origin[a] == 0));
    // The window kernel's i32 indexing limits, which this one shares.
    let fits = super::correlate_window::check_i32(in_dims, k_dims, out_dims, origin).is_ok();
    let slow = axis + 1 < rank || !super::correlate_tiled::pays(k_dims);
    (slow && k_dims[axis] <= MAX_TAPS && others_untouched && fits).then_some(axis)
}

/// Records the correlation of `x` with the weights `w` (1-D, `taps` long, of x's type) along
/// `axis` into a new temporary of shape `out_dims` (see [`axis_of`] for what it takes).
pub fn record(rec: &mut Recording, x: Buf, w: Buf, axis: usize, out_dims: &[usize], origin: i64, boundary: Boundary) -> Result<Buf> {
    let dtype = rec.dtype(x);
    let kernel = CORRELATE_AXIS.for_dtype(dtype)?;
    rec.expect_dtype(w, dtype, "correlation weights")?;
    let in_dims = rec.dims(x).to_vec();
    let (rank, taps) = (in_dims.len(), rec.shape(w).len());
    let (mut k_dims, mut origins) = (vec![1; rank], vec![0; rank]);
    if axis < rank {
        (k_dims[axis], origins[axis]) = (taps, origin);
    }
    if out_dims.len() != rank || axis_of(&in_dims, &k_dims, out_dims, &origins) != Some(axis) {
        return Err(Error::Invalid(format!(
            "correlation along axis {axis}: input {in_dims:?}, {taps} taps, output {out_dims:?} (at most {MAX_TAPS} taps along one axis, the last only below the tiled kernel's threshold, the others untouched)"
        )));
    }
    let y = rec.temp(out_dims, dtype)?;
    let outer: usize = in_dims[..axis].iter().product();
    let inner: usize = in_dims[axis + 1..].iter().product();
    let runs = out_dims[axis].div_ceil(RUN);
    let threads = outer * runs * inner;
    let fill = if let Boundary::Constant(v) = boundary { v } else { 0.0 };
    let p = Params {
        outer: outer as u32,
        n_in: in_dims[axis] as i32,
        n_out: out_dims[axis] as u32,
        inner: inner as u32,
        runs: runs as u32,
        taps: taps as u32,
        origin: origin as i32,
        fill,
        threads: threads as u32,
        pad: [0; 3],
    };
    rec.dispatch(kernel, &[("MODE", boundary.code() as f64)], bytemuck::bytes_of(&p), &[x, w, y], kernel.groups(threads as u64));
    Ok(y)
}
