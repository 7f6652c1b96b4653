//! The log-polar method's kernels (`shaders/tomography/logpolar_*.wgsl`, common/logpolar.wgsl)
//! and `times_spectrum.wgsl`: moving between the sinogram, the image and the log-polar grids of
//! the three spans, and the convolutions' products (src/ops/tomography/logpolar.rs plans them).

use bytemuck::{Pod, Zeroable};

use super::{LOGPOLAR_EXTEND, LOGPOLAR_FROM_IMAGE, LOGPOLAR_FROM_SINOGRAM, LOGPOLAR_TO_IMAGE, LOGPOLAR_TO_SINOGRAM, TIMES_SPECTRUM};
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
fn dispatch(rec: &mut Recording, kernel: &'static KernelInfo, p: &Params, inputs: &[Buf], out_dims: &[usize]) -> Result<Buf> {
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
fn whole_batch(rec: &Recording, x: Buf, p: &Params) -> Result<usize> {
    let batch = rec.dims(x)[0];
    if rec.dims(x) != whole_grids(p, batch) {
        return Err(Error::Shape(format!("log-polar grids {:?}, not {:?}", rec.dims(x), whole_grids(p, batch))));
    }
    Ok(batch)
}

fn batch_of(rec: &Recording, x: Buf, inner: [usize; 2], what: &str) -> Result<usize> {
    match rec.dims(x) {
        &[batch, a, b] if [a, b] == inner => Ok(batch),
        dims => Err(Error::Shape(format!("{what} {dims:?}: (batch, {}, {}) expected", inner[0], inner[1]))),
    }
}

/// The stored grids of the inputs, and the whole grids of the outputs.
fn grids(p: &Params, batch: usize) -> [usize; 4] {
    [batch, 3, p.nrho as usize, p.width as usize]
}

fn whole_grids(p: &Params, batch: usize) -> [usize; 4] {
    [batch, 3, p.nrho as usize, p.ntheta as usize]
}

/// Sinograms (batch, angles, detectors) with `extra` rows each side, continued by symmetry.
pub fn extend(rec: &mut Recording, sinograms: Buf, p: &Params) -> Result<Buf> {
    let batch = batch_of(rec, sinograms, [p.angles as usize, p.detectors as usize], "sinograms")?;
    dispatch(rec, &LOGPOLAR_EXTEND, p, &[sinograms], &[batch, (p.angles + 2 * p.extra) as usize, p.detectors as usize])
}

/// The extended sinograms' B-spline coefficients on the spans' grids (batch, 3, nrho, width).
pub fn from_sinogram(rec: &mut Recording, coefficients: Buf, p: &Params) -> Result<Buf> {
    let batch = batch_of(rec, coefficients, [(p.angles + 2 * p.extra) as usize, p.detectors as usize], "extended sinograms")?;
    dispatch(rec, &LOGPOLAR_FROM_SINOGRAM, p, &[coefficients], &grids(p, batch))
}

/// The spans' grids of coefficients (batch, 3, nrho, ntheta) summed at every pixel, × scale.
pub fn to_image(rec: &mut Recording, coefficients: Buf, p: &Params) -> Result<Buf> {
    let batch = whole_batch(rec, coefficients, p)?;
    dispatch(rec, &LOGPOLAR_TO_IMAGE, p, &[coefficients], &[batch, p.size as usize, p.size as usize])
}

/// Images' B-spline coefficients (batch, N, N) on the spans' grids (batch, 3, nrho, width).
pub fn from_image(rec: &mut Recording, coefficients: Buf, p: &Params) -> Result<Buf> {
    let batch = batch_of(rec, coefficients, [p.size as usize, p.size as usize], "images")?;
    dispatch(rec, &LOGPOLAR_FROM_IMAGE, p, &[coefficients], &grids(p, batch))
}

/// The spans' grids of coefficients (batch, 3, nrho, ntheta) at every bin of every angle.
/// `spans`: per angle (span, θ′, ±1 where mirrored, 0), f32 (ops::tomography::logpolar::angle_spans).
pub fn to_sinogram(rec: &mut Recording, coefficients: Buf, spans: Buf, p: &Params) -> Result<Buf> {
    let batch = whole_batch(rec, coefficients, p)?;
    if rec.dims(spans) != [p.angles as usize, 4] {
        return Err(Error::Shape(format!("an angle table {:?} for {} angles", rec.dims(spans), p.angles)));
    }
    dispatch(rec, &LOGPOLAR_TO_SINOGRAM, p, &[coefficients, spans], &[batch, p.angles as usize, p.detectors as usize])
}

/// Mirrors `Params` in times_spectrum.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct SpectrumParams {
    pub len: u32,
    pub count: u32,
}

/// Complex spectra `x` times the complex spectrum `h`, repeated over x's leading elements.
pub fn times_spectrum(rec: &mut Recording, x: Buf, h: Buf) -> Result<Buf> {
    rec.expect_dtype(x, Dtype::C32, "spectra")?;
    rec.expect_dtype(h, Dtype::C32, "kernel spectrum")?;
    let (count, len) = (rec.shape(x).len(), rec.shape(h).len());
    if len == 0 || count % len != 0 || !rec.dims(x).ends_with(rec.dims(h)) {
        return Err(Error::Shape(format!("spectra {:?} times a spectrum {:?}", rec.dims(x), rec.dims(h))));
    }
    let out = rec.temp_like(x, Dtype::C32)?;
    let p = SpectrumParams { len: len as u32, count: count as u32 };
    rec.dispatch(&TIMES_SPECTRUM, &[], bytemuck::bytes_of(&p), &[x, h, out], TIMES_SPECTRUM.groups(count as u64));
    Ok(out)
}
