//! `shaders/denoise/bm_filter.wgsl`: collaborative filtering of a group a workgroup and its
//! aggregation in 64-bit fixed point.

use bytemuck::{Pod, Zeroable};

use super::BM_FILTER;
use crate::error::{Error, Result};
use crate::graph::{Buf, Recording};
use crate::kernels::bm_match::Matching;

/// Mirrors `Params` in bm_filter.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub n: [u32; 4],
    pub b: [u32; 4],
    pub g: [u32; 4],
    pub most: u32,
    pub wiener: u32,
    pub thr: f32,
    pub noise: f32,
}

/// Shrinkage: hard thresholding at `threshold` (λσ), or Wiener filtering with `noise` (μ²σ²).
#[derive(Clone, Copy, Debug)]
pub enum Shrinkage {
    Hard { threshold: f32 },
    Wiener { noise: f32 },
}

/// Adds every group (from bm_match over `m.grid`) filtered into `num` and `den`: 64-bit fixed
/// point, two u32 words a value of (t, z, y, x), zeroed by the caller (bm_normalize divides
/// them). `pilot` is read by Wiener filtering only.
#[allow(clippy::too_many_arguments)]
pub fn record(
    rec: &mut Recording,
    noisy: Buf,
    pilot: Buf,
    groups: Buf,
    counts: Buf,
    tables: Buf,
    num: Buf,
    den: Buf,
    m: &Matching,
    shrinkage: Shrinkage,
) -> Result<()> {
    let &[n0, n1, n2, n3] = rec.dims(noisy) else {
        return Err(Error::Shape(format!("block matching of data of shape {:?}: four axes", rec.dims(noisy))));
    };
    let shape = [n0, n1, n2, n3];
    let voxels: usize = shape.iter().product();
    if rec.dims(pilot) != shape || rec.shape(num).len() != 2 * voxels || rec.shape(den).len() != 2 * voxels {
        return Err(Error::Shape(format!("block matching arrays of {:?}, sums of {} words for data of {shape:?}", rec.dims(pilot), rec.shape(num).len())));
    }
    let u = |a: [usize; 4]| a.map(|v| v as u32);
    let (wiener, thr, noise) = match shrinkage {
        Shrinkage::Hard { threshold } => (0, threshold, 0.0),
        Shrinkage::Wiener { noise } => (1, 0.0, noise),
    };
    let p = Params { n: u(shape), b: u(m.block), g: u(m.grid), most: m.most as u32, wiener, thr, noise };
    let refs = m.grid.iter().product::<usize>() as u64;
    rec.dispatch(&BM_FILTER, &[], bytemuck::bytes_of(&p), &[noisy, pilot, groups, counts, tables, num, den], refs);
    Ok(())
}
