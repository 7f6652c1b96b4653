//! `shaders/denoise/tv_bregman.wgsl`: one anti-diagonal of scikit-image's split-Bregman
//! Gauss-Seidel sweep.

use bytemuck::{Pod, Zeroable};

use super::TV_BREGMAN;
use crate::error::{Error, Result};
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in tv_bregman.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub rows: u32,
    pub cols: u32,
    pub dims: u32,
    pub k: u32,
    pub weight: f32,
    pub lam: f32,
    pub norm: f32,
    pub isotropic: u32,
}

/// One sweep: every anti-diagonal of the (rows, cols, dims) `image`, in order, updating `u`
/// and `split` (dx, dy, bx, by), both padded by one on the spatial axes (rows + 2, cols + 2,
/// dims; `split` four of them), in place and each voxel's squared change into `change`;
/// nothing once `state` says stopped.
#[allow(clippy::too_many_arguments)]
pub fn record_sweep(rec: &mut Recording, image: Buf, u: Buf, split: Buf, change: Buf, state: Buf, weight: f32, isotropic: bool) -> Result<()> {
    let &[rows, cols, dims] = rec.dims(image) else {
        return Err(Error::Shape(format!("split-Bregman TV of an image of {:?}: (rows, cols, dims)", rec.dims(image))));
    };
    let padded = (rows + 2) * (cols + 2) * dims;
    if rec.shape(u).len() != padded || rec.shape(split).len() != 4 * padded || rec.shape(change).len() != rows * cols * dims {
        return Err(Error::Shape(format!("split-Bregman state of {:?} and {:?} for an image of {:?}", rec.dims(u), rec.dims(split), [rows, cols, dims])));
    }
    let lam = 2.0 * weight;
    for k in 2..=rows + cols {
        let len = (rows.min(k - 1) + 1).saturating_sub(1.max(k.saturating_sub(cols)));
        let p =
            Params { rows: rows as u32, cols: cols as u32, dims: dims as u32, k: k as u32, weight, lam, norm: weight + 4.0 * lam, isotropic: isotropic as u32 };
        rec.dispatch(&TV_BREGMAN, &[], bytemuck::bytes_of(&p), &[image, u, split, change, state], TV_BREGMAN.groups((len * dims) as u64));
    }
    Ok(())
}
