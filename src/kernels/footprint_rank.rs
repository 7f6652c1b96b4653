//! `shaders/filter/footprint_rank.wgsl`: the rank-th smallest of x[i + offset] over a
//! footprint's taps, scipy.ndimage's modes (rank, median and percentile filters).

use bytemuck::{Pod, Zeroable};

use super::boundary::Boundary;
use super::FOOTPRINT_RANK;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Most taps a footprint may have (the kernel's per-thread array).
pub const MAX_TAPS: usize = 343;

/// Mirrors `Params` in footprint_rank.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub dims: [u32; 4],
    pub count: u32,
    pub taps: u32,
    pub rank: u32,
    pub cval: f32,
}

/// `y[i]` = the `rank`-th smallest (from 0) of x[i + offsets[t]] over the taps, `x` f32 of 1-4
/// axes, `offsets` one per axis of x for each tap (1 to [`MAX_TAPS`]).
pub fn record(rec: &mut Recording, x: Buf, offsets: &[Vec<i64>], rank: usize, boundary: Boundary) -> Result<Buf> {
    rec.expect_dtype(x, Dtype::F32, "filtered array")?;
    let dims = rec.dims(x).to_vec();
    let d = dims.len();
    if d == 0 || d > 4 || offsets.iter().any(|o| o.len() != d) {
        return Err(Error::Shape(format!("a footprint over an array of {dims:?}: 1 to 4 axes, one offset per axis")));
    }
    if offsets.is_empty() || offsets.len() > MAX_TAPS || rank >= offsets.len() {
        return Err(Error::Invalid(format!(
            "a rank filter of {} taps at rank {rank}: 1 to {MAX_TAPS} taps (a larger footprint is not implemented), the rank within them",
            offsets.len()
        )));
    }
    let lead = 4 - d;
    let off = super::footprint_extreme::upload_offsets(rec, offsets, d)?;
    let y = rec.temp(&dims, Dtype::F32)?;
    let count = dims.iter().product::<usize>();
    let mut p = Params::zeroed();
    (0..4).for_each(|a| p.dims[a] = if a < lead { 1 } else { dims[a - lead] as u32 });
    (p.count, p.taps, p.rank, p.cval) = (count as u32, offsets.len() as u32, rank as u32, boundary.cval());
    rec.dispatch(&FOOTPRINT_RANK, &[("MODE", boundary.code() as f64)], bytemuck::bytes_of(&p), &[x, off, y], FOOTPRINT_RANK.groups(count as u64));
    Ok(y)
}
