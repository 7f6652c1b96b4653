//! `shaders/tomography/backproject_rays.wgsl`: the exact transpose of `kernels::project_rays`
//! (whose parameters it shares).

use super::project_rays::{expect_len, params, Setup};
use super::BACKPROJECT_RAYS;
use crate::error::Result;
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// The back-projection (Z, Y, X) of projections (rows, angles, cols).
pub fn record(rec: &mut Recording, projections: Buf, s: &Setup) -> Result<Buf> {
    let angles = rec.dims(s.views)[0];
    expect_len(rec, projections, &[s.rows, angles, s.cols], "projections")?;
    let out = rec.temp(&[s.dims[2], s.dims[1], s.dims[0]], Dtype::F32)?;
    let count = s.dims.iter().product::<usize>();
    let p = params(rec, s, count)?;
    rec.dispatch(&BACKPROJECT_RAYS, &s.constants(), bytemuck::bytes_of(&p), &[projections, s.views, out], BACKPROJECT_RAYS.groups(count as u64));
    Ok(out)
}
