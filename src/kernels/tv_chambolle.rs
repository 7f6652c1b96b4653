//! `shaders/denoise/tv_chambolle.wgsl`: one step of Chambolle's total-variation projection
//! (scikit-image's `_denoise_tv_chambolle_nd`), and its f64 twin.

use bytemuck::{Pod, Zeroable};
use ndarray::{ArrayD, ArrayViewD, Axis};

use super::{TV_CHAMBOLLE, TV_CHAMBOLLE_STOPPING};
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in tv_chambolle.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub nx: u32,
    pub ny: u32,
    pub nz: u32,
    pub ndim: u32,
    pub tau: f32,
    pub tau_over_weight: f32,
    pub count: u32,
    pub unused: u32,
}

/// One step on `f` (the last `ndim` ≤ 3 axes denoised together, leading axes a batch) from the
/// dual field `p` (`ndim` components, then `f`'s shape): (the estimate f − div p, the next p).
pub fn record(rec: &mut Recording, f: Buf, p: Buf, weight: f32, ndim: usize) -> Result<(Buf, Buf)> {
    let q = params(rec, f, p, weight, ndim)?;
    let out = rec.temp_like(f, Dtype::F32)?;
    let next = rec.temp_like(p, Dtype::F32)?;
    rec.dispatch(&TV_CHAMBOLLE, &[], bytemuck::bytes_of(&q), &[f, p, next, out], TV_CHAMBOLLE.groups(q.count as u64));
    Ok((out, next))
}

/// Checks `f` and `p`, and the step's parameters.
fn params(rec: &Recording, f: Buf, p: Buf, weight: f32, ndim: usize) -> Result<Params> {
    rec.expect_dtype(f, Dtype::F32, "TV denoising")?;
    rec.expect_dtype(p, Dtype::F32, "TV denoising")?;
    let dims = rec.dims(f).to_vec();
    if !(1..=3).contains(&ndim) || ndim > dims.len() {
        return Err(Error::Invalid(format!("TV denoising over {ndim} axes of an array of shape {dims:?} (1 to 3 axes)")));
    }
    let count = rec.shape(f).len();
    if rec.shape(p).len() != ndim * count {
        return Err(Error::Shape(format!("a dual field of {:?} for {ndim} axes of {dims:?}", rec.dims(p))));
    }
    let item = &dims[dims.len() - ndim..];
    let axis = |k: usize| if k < ndim { item[ndim - 1 - k] as u32 } else { 1 };
    let tau = 1.0 / (2.0 * ndim as f32);
    Ok(Params { nx: axis(0), ny: axis(1), nz: axis(2), ndim: ndim as u32, tau, tau_over_weight: tau / weight, count: count as u32, unused: 0 })
}

/// Mirrors `Params` in tv_chambolle_stopping.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct StoppingParams {
    pub nx: u32,
    pub ny: u32,
    pub nz: u32,
    pub ndim: u32,
    pub tau: f32,
    pub tau_over_weight: f32,
    pub count: u32,
    pub weight: f32,
}

/// [`record`]'s step for scikit-image's stopping rule (`shaders/denoise/tv_chambolle_stopping.wgsl`):
/// from `p`, the result so far and the items' stopping `state` ((items, 4), `kernels::tv_stop`),
/// (the result: this step's estimate where the item has not stopped, the next p, each voxel's
/// energy terms).
pub fn record_stopping(rec: &mut Recording, f: Buf, p: Buf, result: Buf, state: Buf, weight: f32, ndim: usize) -> Result<(Buf, Buf, Buf)> {
    let q = params(rec, f, p, weight, ndim)?;
    rec.expect_same_shape(result, f, "TV denoising's result")?;
    let items = rec.shape(f).len() / (q.nx * q.ny * q.nz) as usize;
    if rec.dims(state) != [items, 4] {
        return Err(Error::Shape(format!("a stopping state of {:?} for {items} items", rec.dims(state))));
    }
    let q = StoppingParams { nx: q.nx, ny: q.ny, nz: q.nz, ndim: q.ndim, tau: q.tau, tau_over_weight: q.tau_over_weight, count: q.count, weight };
    let next = rec.temp_like(p, Dtype::F32)?;
    let out = rec.temp_like(f, Dtype::F32)?;
    let energy = rec.temp_like(f, Dtype::F32)?;
    rec.dispatch(&TV_CHAMBOLLE_STOPPING, &[], bytemuck::bytes_of(&q), &[f, p, result, state, next, out, energy], TV_CHAMBOLLE_STOPPING.groups(q.count as u64));
    Ok((out, next, energy))
}

/// The f64 twin of one step on one item (`f` of `ndim` axes, `p` of shape (ndim, f's shape)).
pub fn cpu(f: &ArrayViewD<f64>, p: &ArrayViewD<f64>, weight: f64) -> (ArrayD<f64>, ArrayD<f64>) {
    let ndim = f.ndim();
    let mut d = p.sum_axis(Axis(0)).mapv(|v| -v);
    for a in 0..ndim {
        let n = f.shape()[a];
        if n > 1 {
            let shifted = p.index_axis(Axis(0), a);
            let mut tail = d.slice_axis_mut(Axis(a), (1..).into());
            tail += &shifted.slice_axis(Axis(a), (..n - 1).into());
        }
    }
    let out = f + &d;
    let mut g = ArrayD::<f64>::zeros(p.raw_dim());
    for a in 0..ndim {
        let n = f.shape()[a];
        if n > 1 {
            let diff = &out.slice_axis(Axis(a), (1..).into()) - &out.slice_axis(Axis(a), (..n - 1).into());
            g.index_axis_mut(Axis(0), a).slice_axis_mut(Axis(a), (..n - 1).into()).assign(&diff);
        }
    }
    let tau = 1.0 / (2.0 * ndim as f64);
    let norm = g.mapv(|v| v * v).sum_axis(Axis(0)).mapv(|v| v.sqrt() * tau / weight + 1.0);
    let mut next = p - &(g * tau);
    for mut component in next.axis_iter_mut(Axis(0)) {
        component /= &norm;
    }
    (out, next)
}
