//! `shaders/denoise/bm_filter.wgsl`: collaborative filtering of a group a workgroup and its
//! aggregation, one colour of the reference grid per dispatch.

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
    pub c: [u32; 4],
    pub k: [u32; 4],
    pub m: [u32; 4],
    pub most: u32,
    pub wiener: u32,
    pub thr: f32,
    pub noise: f32,
}

/// One colour of the reference grid: its first grid index per axis `c`, the colours per axis
/// `k` (a colour's grid step) and its reference blocks per axis.
#[derive(Clone, Copy, Debug)]
pub struct Colour {
    pub first: [usize; 4],
    pub colours: [usize; 4],
    pub blocks: [usize; 4],
}

/// Shrinkage: hard thresholding at `threshold` (λσ), or Wiener filtering with `noise` (μ²σ²).
#[derive(Clone, Copy, Debug)]
pub enum Shrinkage {
    Hard { threshold: f32 },
    Wiener { noise: f32 },
}

/// Adds the groups of one colour (from bm_match over `m.grid`) filtered into `num` and `den`
/// (t, z, y, x); `pilot` is read by Wiener filtering only.
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
    colour: &Colour,
    shrinkage: Shrinkage,
) -> Result<()> {
    let &[n0, n1, n2, n3] = rec.dims(noisy) else {
        return Err(Error::Shape(format!("block matching of data of shape {:?}: four axes", rec.dims(noisy))));
    };
    let shape = [n0, n1, n2, n3];
    for b in [pilot, num, den] {
        if rec.dims(b) != shape {
            return Err(Error::Shape(format!("block matching arrays of {:?} and {:?}", rec.dims(b), shape)));
        }
    }
    let u = |a: [usize; 4]| a.map(|v| v as u32);
    let (wiener, thr, noise) = match shrinkage {
        Shrinkage::Hard { threshold } => (0, threshold, 0.0),
        Shrinkage::Wiener { noise } => (1, 0.0, noise),
    };
    let p = Params {
        n: u(shape),
        b: u(m.block),
        g: u(m.grid),
        c: u(colour.first),
        k: u(colour.colours),
        m: u(colour.blocks),
        most: m.most as u32,
        wiener,
        thr,
        noise,
    };
    let workgroups = colour.blocks.iter().product::<usize>() as u64;
    rec.dispatch(&BM_FILTER, &[], bytemuck::bytes_of(&p), &[noisy, pilot, groups, counts, tables, num, den], workgroups);
    Ok(())
}
