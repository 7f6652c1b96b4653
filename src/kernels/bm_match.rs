//! `shaders/denoise/bm_match.wgsl`: block matching, a reference block a workgroup.

use bytemuck::{Pod, Zeroable};

use super::BM_MATCH;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in bm_match.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub n: [u32; 4],
    pub b: [u32; 4],
    pub g: [u32; 4],
    pub s: [u32; 4],
    pub w: [u32; 4],
    pub most: u32,
    pub tau: f32,
    pub penalized: u32,
    pub unused: u32,
    pub reach: [u32; 4],
}

/// One stage's matching geometry over (t, z, y, x).
#[derive(Clone, Copy, Debug)]
pub struct Matching {
    /// Block sizes.
    pub block: [usize; 4],
    /// Reference blocks per axis, every `step` (the last at n − b).
    pub grid: [usize; 4],
    pub step: [usize; 4],
    /// Search window half-widths.
    pub window: [usize; 4],
    /// Most blocks a group holds (≤ 32).
    pub most: usize,
    /// The largest sum of squared differences a match may have over the data's range².
    pub tau: f32,
}

/// The groups of every reference block of `m.grid` over `data` (t, z, y, x), its extrema
/// `lowest` and `highest` (one value each) setting the cap: (linear indices of the matches'
/// first voxels, `m.most` slots per reference block; their counts). `penalty`: correlated
/// noise's per-offset penalties over |Δ| ≤ reach (row-major), added to the distances.
pub fn record(rec: &mut Recording, data: Buf, lowest: Buf, highest: Buf, m: &Matching, penalty: Option<(Buf, [usize; 4])>) -> Result<(Buf, Buf)> {
    let &[n0, n1, n2, n3] = rec.dims(data) else {
        return Err(Error::Shape(format!("block matching of data of shape {:?}: four axes", rec.dims(data))));
    };
    let refs: usize = m.grid.iter().product();
    let u = |a: [usize; 4]| a.map(|v| v as u32);
    let p = Params {
        n: u([n0, n1, n2, n3]),
        b: u(m.block),
        g: u(m.grid),
        s: u(m.step),
        w: u(m.window),
        most: m.most as u32,
        tau: m.tau,
        penalized: penalty.is_some() as u32,
        unused: 0,
        reach: u(penalty.map_or([0; 4], |p| p.1)),
    };
    // Without penalties the binding takes any buffer (unread).
    let table = penalty.map_or(lowest, |p| p.0);
    let groups = rec.temp(&[refs, m.most], Dtype::U32)?;
    let counts = rec.temp(&[refs], Dtype::U32)?;
    rec.dispatch(&BM_MATCH, &[], bytemuck::bytes_of(&p), &[data, groups, counts, lowest, highest, table], refs as u64);
    Ok((groups, counts))
}
