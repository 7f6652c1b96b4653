//! `shaders/denoise/bm_match.wgsl`: block matching, a reference block a workgroup.

use bytemuck::{Pod, Zeroable};

use super::BM_MATCH;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};
use crate::ops::denoise::bm::Spec;

/// Mirrors `Params` in bm_match.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub n: [u32; 3],
    pub most: u32,
    pub b: [u32; 3],
    pub cap: f32,
    pub g: [u32; 3],
    pub unused0: u32,
    pub s: [u32; 3],
    pub unused1: u32,
    pub w: [u32; 3],
    pub unused2: u32,
}

/// The groups of every reference block of `spec`'s grid over `data` (3-D): (linear indices of
/// the matches' first voxels, `spec.maxn` slots per reference block; their counts).
pub fn record(rec: &mut Recording, data: Buf, spec: &Spec) -> Result<(Buf, Buf)> {
    let &[n0, n1, n2] = rec.dims(data) else {
        return Err(Error::Shape(format!("block matching of data of shape {:?}: three axes", rec.dims(data))));
    };
    let g = spec.grid([n0, n1, n2]);
    let refs: usize = g.iter().product();
    let u = |a: [usize; 3]| a.map(|v| v as u32);
    let p = Params {
        n: u([n0, n1, n2]),
        most: spec.maxn as u32,
        b: u(spec.bs),
        cap: spec.cap as f32,
        g: u(g),
        unused0: 0,
        s: u(spec.step),
        unused1: 0,
        w: u(spec.win),
        unused2: 0,
    };
    let groups = rec.temp(&[refs, spec.maxn], Dtype::U32)?;
    let counts = rec.temp(&[refs], Dtype::U32)?;
    rec.dispatch(&BM_MATCH, &[], bytemuck::bytes_of(&p), &[data, groups, counts], refs as u64);
    Ok((groups, counts))
}
