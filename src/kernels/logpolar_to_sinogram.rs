//! `shaders/tomography/logpolar_to_sinogram.wgsl` (the log-polar method, parameters in `kernels::logpolar`).

use super::logpolar::{dispatch, whole_batch, Params};
use super::LOGPOLAR_TO_SINOGRAM;
use crate::error::{Error, Result};
use crate::graph::{Buf, Recording};

/// The spans' grids of coefficients (batch, 3, nrho, ntheta) at every bin of every angle.
/// `spans`: per angle (span, θ′, ±1 where mirrored, 0), f32 (ops::tomography::logpolar::angle_spans).
pub fn record(rec: &mut Recording, coefficients: Buf, spans: Buf, p: &Params) -> Result<Buf> {
    let batch = whole_batch(rec, coefficients, p)?;
    if rec.dims(spans) != [p.angles as usize, 4] {
        return Err(Error::Shape(format!("an angle table {:?} for {} angles", rec.dims(spans), p.angles)));
    }
    dispatch(rec, &LOGPOLAR_TO_SINOGRAM, p, &[coefficients, spans], &[batch, p.angles as usize, p.detectors as usize])
}
