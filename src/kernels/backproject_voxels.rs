//! `shaders/tomography/backproject_voxels.wgsl`: the voxel-driven back-projector (the rays'
//! density, or FDK's weight), parameters as `kernels::project_rays`.

use super::project_rays::{expect_len, params, Setup};
use super::{BACKPROJECT_VOXELS, BACKPROJECT_VOXELS_TEXTURE};
use crate::error::Result;
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// The back-projection (Z, Y, X) of projections (rows, angles, cols); `fdk` weighs each view by
/// (λ₀ / λ)² instead of the rays' density.
pub fn record(rec: &mut Recording, projections: Buf, s: &Setup, fdk: bool) -> Result<Buf> {
    let angles = rec.dims(s.views)[0];
    expect_len(rec, projections, &[s.rows, angles, s.cols], "projections")?;
    let out = rec.temp(&[s.dims[2], s.dims[1], s.dims[0]], Dtype::F32)?;
    let count = s.dims.iter().product::<usize>();
    let p = params(rec, s, count)?;
    let fdk = if fdk { 1.0 } else { 0.0 };
    rec.dispatch(
        &BACKPROJECT_VOXELS,
        &[("FDK", fdk), s.constants()[0], s.constants()[1]],
        bytemuck::bytes_of(&p),
        &[projections, s.views, out],
        BACKPROJECT_VOXELS.groups(count as u64),
    );
    Ok(out)
}

/// [`record`] (the rays' density) through the texture unit, as ASTRA's: the projections copied
/// into a bordered texture (zeros around), one linear fetch per voxel and view
/// (`project_rays::textures_fit` says where it runs).
pub fn record_texture(rec: &mut Recording, projections: Buf, s: &Setup) -> Result<Buf> {
    let angles = rec.dims(s.views)[0];
    expect_len(rec, projections, &[s.rows, angles, s.cols], "projections")?;
    let out = rec.temp(&[s.dims[2], s.dims[1], s.dims[0]], Dtype::F32)?;
    let count = s.dims.iter().product::<usize>();
    let p = params(rec, s, count)?;
    let cube = rec.reinterpret(projections, &[s.rows, angles, s.cols], Dtype::F32)?;
    let tex = super::spline_texture::record(rec, cube, super::map_coordinates::mode::GRID_CONSTANT, 0.0)?;
    rec.dispatch(&BACKPROJECT_VOXELS_TEXTURE, &s.constants(), bytemuck::bytes_of(&p), &[tex, s.views, out], BACKPROJECT_VOXELS_TEXTURE.groups(count as u64));
    Ok(out)
}
