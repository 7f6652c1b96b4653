//! `shaders/tomography/logpolar_from_image.wgsl` (the log-polar method, parameters in `kernels::logpolar`).

use super::logpolar::{batch_of, dispatch, grids, Params};
use super::LOGPOLAR_FROM_IMAGE;
use crate::error::Result;
use crate::graph::{Buf, Recording};

/// Images' B-spline coefficients (batch, N, N) on the spans' grids (batch, 3, nrho, width).
pub fn record(rec: &mut Recording, coefficients: Buf, p: &Params) -> Result<Buf> {
    let batch = batch_of(rec, coefficients, [p.size as usize, p.size as usize], "images")?;
    dispatch(rec, &LOGPOLAR_FROM_IMAGE, p, &[coefficients], &grids(p, batch))
}
