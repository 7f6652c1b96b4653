//! `shaders/tomography/logpolar_extend.wgsl` (the log-polar method, parameters in `kernels::logpolar`).

use super::logpolar::{batch_of, dispatch, Params};
use super::LOGPOLAR_EXTEND;
use crate::error::Result;
use crate::graph::{Buf, Recording};

/// Sinograms (batch, angles, detectors) with `extra` rows each side, continued by symmetry.
pub fn record(rec: &mut Recording, sinograms: Buf, p: &Params) -> Result<Buf> {
    let batch = batch_of(rec, sinograms, [p.angles as usize, p.detectors as usize], "sinograms")?;
    dispatch(rec, &LOGPOLAR_EXTEND, p, &[sinograms], &[batch, (p.angles + 2 * p.extra) as usize, p.detectors as usize])
}
