//! `shaders/denoise/tv_stop.wgsl`: scikit-image's stopping rule for Chambolle's TV, per item,
//! on the device.

use bytemuck::{Pod, Zeroable};

use super::TV_STOP;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in tv_stop.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub items: u32,
    pub eps: f32,
    pub inv_count: f32,
    pub unused: u32,
}

/// The items' state (items, 4) after a step whose energy sums per item are `sums` (items),
/// each item of `count` voxels.
pub fn record(rec: &mut Recording, sums: Buf, state: Buf, eps: f32, count: usize) -> Result<Buf> {
    rec.expect_dtype(sums, Dtype::F32, "TV energies")?;
    let items = rec.shape(sums).len();
    if rec.dims(state) != [items, 4] {
        return Err(Error::Shape(format!("a stopping state of {:?} for {items} items", rec.dims(state))));
    }
    let after = rec.temp_like(state, Dtype::F32)?;
    let p = Params { items: items as u32, eps, inv_count: 1.0 / count as f32, unused: 0 };
    rec.dispatch(&TV_STOP, &[], bytemuck::bytes_of(&p), &[sums, state, after], TV_STOP.groups(items as u64));
    Ok(after)
}
