//! `shaders/denoise/bm_filter.wgsl`: collaborative filtering of a group a workgroup and its
//! aggregation, one colour of the reference grid per dispatch.

use bytemuck::{Pod, Zeroable};

use super::BM_FILTER;
use crate::error::{Error, Result};
use crate::graph::{Buf, Recording};
use crate::ops::denoise::bm::Spec;

/// Mirrors `Params` in bm_filter.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub n: [u32; 3],
    pub most: u32,
    pub b: [u32; 3],
    pub wiener: u32,
    pub g: [u32; 3],
    pub thr: f32,
    pub c: [u32; 3],
    pub noise: f32,
    pub k: [u32; 3],
    pub unused0: u32,
    pub m: [u32; 3],
    pub unused1: u32,
}

/// Adds every group of `spec`'s grid (from bm_match) filtered into `num` and `den` (3-D, zeroed
/// by the caller), one dispatch per colour; `pilot` is read by Wiener filtering only.
#[allow(clippy::too_many_arguments)]
pub fn record(rec: &mut Recording, noisy: Buf, pilot: Buf, groups: Buf, counts: Buf, tables: Buf, num: Buf, den: Buf, spec: &Spec, sigma: f64) -> Result<()> {
    let &[n0, n1, n2] = rec.dims(noisy) else {
        return Err(Error::Shape(format!("block matching of data of shape {:?}: three axes", rec.dims(noisy))));
    };
    let shape = [n0, n1, n2];
    for b in [pilot, num, den] {
        if rec.dims(b) != shape {
            return Err(Error::Shape(format!("block matching arrays of {:?} and {:?}", rec.dims(b), shape)));
        }
    }
    let g = spec.grid(shape);
    let k = spec.colours(g);
    let u = |a: [usize; 3]| a.map(|v| v as u32);
    for c0 in 0..k[0] {
        for c1 in 0..k[1] {
            for c2 in 0..k[2] {
                let c = [c0, c1, c2];
                let m: [usize; 3] = std::array::from_fn(|a| (g[a] - c[a]).div_ceil(k[a]));
                let p = Params {
                    n: u(shape),
                    most: spec.maxn as u32,
                    b: u(spec.bs),
                    wiener: spec.wiener as u32,
                    g: u(g),
                    thr: (spec.lambda * sigma) as f32,
                    c: u(c),
                    noise: (spec.mu2 * sigma * sigma) as f32,
                    k: u(k),
                    unused0: 0,
                    m: u(m),
                    unused1: 0,
                };
                let groups_here = m.iter().product::<usize>() as u64;
                rec.dispatch(&BM_FILTER, &[], bytemuck::bytes_of(&p), &[noisy, pilot, groups, counts, tables, num, den], groups_here);
            }
        }
    }
    Ok(())
}
