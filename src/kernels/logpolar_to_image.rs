//! `shaders/tomography/logpolar_to_image.wgsl` (the log-polar method, parameters in `kernels::logpolar`).

use super::logpolar::{dispatch, whole_batch, Params};
use super::LOGPOLAR_TO_IMAGE;
use crate::error::Result;
use crate::graph::{Buf, Recording};

/// The spans' grids of coefficients (batch, 3, nrho, ntheta) summed at every pixel, × scale.
pub fn record(rec: &mut Recording, coefficients: Buf, p: &Params) -> Result<Buf> {
    let batch = whole_batch(rec, coefficients, p)?;
    dispatch(rec, &LOGPOLAR_TO_IMAGE, p, &[coefficients], &[batch, p.size as usize, p.size as usize])
}
