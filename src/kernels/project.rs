//! `shaders/tomography/project.wgsl`: the parallel-beam projector (linear interpolation along
//! the detector; `kernels::backproject` is its adjoint). The parameters are both kernels'.

use bytemuck::{Pod, Zeroable};

use super::boundary::Boundary;
use super::gather::AxisMap;
use super::PROJECT;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in project.wgsl and backproject.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub size: u32,
    pub detectors: u32,
    pub angles: u32,
    pub count: u32,
    pub center: f32,
    pub mid: f32,
    pub unused0: u32,
    pub unused1: u32,
}

/// What both kernels need: the image side, the detector count, the rotation centre (detector
/// coordinate) and per angle its `Ray` (common/strip.wgsl) as an f32 array of (angles, 8).
pub struct Setup {
    pub size: usize,
    pub detectors: usize,
    pub center: f64,
    pub rays: Buf,
}

pub(super) fn params(rec: &Recording, s: &Setup, count: usize) -> Result<Params> {
    let angles = rec.dims(s.rays)[0];
    if count > u32::MAX as usize {
        return Err(Error::Invalid(format!("{count} projector threads (at most {})", u32::MAX)));
    }
    Ok(Params {
        size: s.size as u32,
        detectors: s.detectors as u32,
        angles: angles as u32,
        count: count as u32,
        center: s.center as f32,
        mid: ((s.size as f64 - 1.0) / 2.0) as f32,
        unused0: 0,
        unused1: 0,
    })
}

/// Projections (batch, angles, detectors) of images (batch, size, size).
pub fn record(rec: &mut Recording, images: Buf, s: &Setup) -> Result<Buf> {
    rec.expect_dtype(images, Dtype::F32, "images")?;
    let dims = rec.dims(images).to_vec();
    let [batch, h, w] = dims[..] else { return Err(Error::Shape(format!("images {dims:?} (batch, size, size)"))) };
    if h != s.size || w != s.size {
        return Err(Error::Shape(format!("images {dims:?} for a geometry of {}×{}", s.size, s.size)));
    }
    let angles = rec.dims(s.rays)[0];
    let maps = [0, 2, 1].map(|a| AxisMap::identity(a, dims[a]));
    let transposed = super::gather::record(rec, images, &maps, Boundary::Constant(0.0))?;
    let out = rec.temp(&[batch, angles, s.detectors], Dtype::F32)?;
    let count = batch * angles * s.detectors;
    let p = params(rec, s, count)?;
    rec.dispatch(&PROJECT, &[], bytemuck::bytes_of(&p), &[images, transposed, s.rays, out], PROJECT.groups(count as u64));
    Ok(out)
}
