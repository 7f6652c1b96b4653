//! `shaders/common/logpolar.wgsl`'s side in Rust: the parameters and the dispatch shared by the
//! log-polar method's kernels (`kernels::logpolar_*`, one per `shaders/tomography/logpolar_*.wgsl`),
//! which move between the sinogram, the image and the log-polar grids of the three spans
//! (src/ops/tomography/logpolar.rs plans them).

use bytemuck::{Pod, Zeroable};

use crate::error::{Error, Result};
use crate::gpu::{Dtype, KernelInfo};
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in common/logpolar.wgsl: the geometry (image side, angles, detectors), the
/// grids (nrho × ntheta per span, of which `width` columns are stored; ρ = rho0 + j·drho, column
/// m at φ = (m − ntheta/4 − 2)·dtheta), the sinogram's
/// extra rows, the object's radius R and a_R, the span β, the first angle and the angle step,
/// the rotation centre, the image's middle, and the output's scale; `count` is set per dispatch.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct Params {
    pub size: u32,
    pub angles: u32,
    pub detectors: u32,
    pub count: u32,
    pub nrho: u32,
    pub ntheta: u32,
    pub extra: u32,
    pub width: u32,
    pub radius: f32,
    pub a_r: f32,
    pub rho0: f32,
    pub drho: f32,
    pub dtheta: f32,
    pub span: f32,
    pub angle0: f32,
    pub dangle: f32,
    pub center: f32,
    pub mid: f32,
    pub scale: f32,
    pub unused1: f32,
}

/// `kernel` over `inputs` (f32) into a new array of `out_dims`, one thread per output.
pub(super) fn dispatch(rec: &mut Recording, kernel: &'static KernelInfo, p: &Params, inputs: &[Buf], out_dims: &[usize]) -> Result<Buf> {
    for &x in inputs {
        rec.expect_dtype(x, Dtype::F32, kernel.name)?;
    }
    let count: usize = out_dims.iter().product();
    if count > u32::MAX as usize {
        return Err(Error::Invalid(format!("{count} log-polar samples (at most {})", u32::MAX)));
    }
    let out = rec.temp(out_dims, Dtype::F32)?;
    let p = Params { count: count as u32, ..*p };
    let buffers: Vec<Buf> = inputs.iter().copied().chain([out]).collect();
    rec.dispatch(kernel, &[], bytemuck::bytes_of(&p), &buffers, kernel.groups(count as u64));
    Ok(out)
}

/// The batch of whole grids (batch, 3, nrho, ntheta), the outputs' layout.
pub(super) fn whole_batch(rec: &Recording, x: Buf, p: &Params) -> Result<usize> {
    let batch = rec.dims(x)[0];
    if rec.dims(x) != whole_grids(p, batch) {
        return Err(Error::Shape(format!("log-polar grids {:?}, not {:?}", rec.dims(x), whole_grids(p, batch))));
    }
    Ok(batch)
}

pub(super) fn batch_of(rec: &Recording, x: Buf, inner: [usize; 2], what: &str) -> Result<usize> {
    match rec.dims(x) {
        &[batch, a, b] if [a, b] == inner => Ok(batch),
        dims => Err(Error::Shape(format!("{what} {dims:?}: (batch, {}, {}) expected", inner[0], inner[1]))),
    }
}

/// The stored grids of the inputs, and the whole grids of the outputs.
pub(super) fn grids(p: &Params, batch: usize) -> [usize; 4] {
    [batch, 3, p.nrho as usize, p.width as usize]
}

pub(super) fn whole_grids(p: &Params, batch: usize) -> [usize; 4] {
    [batch, 3, p.nrho as usize, p.ntheta as usize]
}
