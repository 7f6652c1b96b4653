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
    pub lambda: f32,
    pub mu2: f32,
    pub reach: [u32; 4],
    pub spread: u32,
    pub pad: [u32; 3],
}

/// Shrinkage: hard thresholding at `lambda` times each coefficient's noise standard deviation,
/// or Wiener filtering with `mu2` times its variance (the variances in the tables).
#[derive(Clone, Copy, Debug)]
pub enum Shrinkage {
    Hard { lambda: f32 },
    Wiener { mu2: f32 },
}

/// Adds every group (from bm_match over `m.grid`) filtered into `num` and `den`: 64-bit fixed
/// point, two u32 words a value of (t, z, y, x), zeroed by the caller (bm_normalize divides
/// them). `pilot` is read by Wiener filtering only. `spread`: correlated noise, whose
/// covariance between blocks up to this far apart follows the tables (each group's variances
/// along the group from it); None: white noise, blocks independent.
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
    spread: Option<[usize; 4]>,
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
    let (wiener, lambda, mu2) = match shrinkage {
        Shrinkage::Hard { lambda } => (0, lambda, 0.0),
        Shrinkage::Wiener { mu2 } => (1, 0.0, mu2),
    };
    let p = Params {
        n: u(shape),
        b: u(m.block),
        g: u(m.grid),
        most: m.most as u32,
        wiener,
        lambda,
        mu2,
        reach: u(spread.unwrap_or([0; 4])),
        spread: spread.is_some() as u32,
        pad: [0; 3],
    };
    let refs = m.grid.iter().product::<usize>() as u64;
    rec.dispatch(&BM_FILTER, &[], bytemuck::bytes_of(&p), &[noisy, pilot, groups, counts, tables, num, den], refs);
    Ok(())
}
