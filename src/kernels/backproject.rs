//! `shaders/tomography/backproject.wgsl`: the parallel-beam back-projector, the adjoint of
//! `kernels::project` (whose parameters it shares).

use super::project::{params, Setup};
use super::BACKPROJECT;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Back-projections (batch, size, size) of sinograms (batch, angles, detectors).
pub fn record(rec: &mut Recording, sinograms: Buf, s: &Setup) -> Result<Buf> {
    rec.expect_dtype(sinograms, Dtype::F32, "sinograms")?;
    let dims = rec.dims(sinograms).to_vec();
    let angles = rec.dims(s.rays)[0];
    let [batch, a, d] = dims[..] else { return Err(Error::Shape(format!("sinograms {dims:?} (batch, angles, detectors)"))) };
    if a != angles || d != s.detectors {
        return Err(Error::Shape(format!("sinograms {dims:?} for {angles} angles and {} detectors", s.detectors)));
    }
    let out = rec.temp(&[batch, s.size, s.size], Dtype::F32)?;
    let count = batch * s.size * s.size;
    let p = params(rec, s, count)?;
    rec.dispatch(&BACKPROJECT, &[], bytemuck::bytes_of(&p), &[sinograms, s.rays, out], BACKPROJECT.groups(count as u64));
    Ok(out)
}
