//! `shaders/tomography/logpolar_from_sinogram.wgsl` (the log-polar method, parameters in `kernels::logpolar`).

use super::logpolar::{batch_of, dispatch, grids, Params};
use super::LOGPOLAR_FROM_SINOGRAM;
use crate::error::Result;
use crate::graph::{Buf, Recording};

/// The extended sinograms' B-spline coefficients on the spans' grids (batch, 3, nrho, width).
pub fn record(rec: &mut Recording, coefficients: Buf, p: &Params) -> Result<Buf> {
    let batch = batch_of(rec, coefficients, [(p.angles + 2 * p.extra) as usize, p.detectors as usize], "extended sinograms")?;
    dispatch(rec, &LOGPOLAR_FROM_SINOGRAM, p, &[coefficients], &grids(p, batch))
}
