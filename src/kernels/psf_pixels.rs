//! `shaders/psf/psf_pixels.wgsl`: a PSF model's planes from its radial profiles, each pixel the
//! sum of its sub-pixels (psfmodels' pixel integration).

use bytemuck::{Pod, Zeroable};

use super::PSF_PIXELS;
use crate::error::Result;
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in psf_pixels.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub nx: u32,
    pub sf: u32,
    pub xymax: u32,
    pub rmax: u32,
    pub unused: [u32; 3],
}

/// Planes × nx × nx (f32) from `profile` (planes × rmax, f32): `sf` sub-pixels per pixel along
/// each axis, the fine grid 2·xymax + 1 sub-pixels wide.
pub fn record(rec: &mut Recording, profile: Buf, nx: usize, sf: usize, xymax: usize) -> Result<Buf> {
    rec.expect_dtype(profile, Dtype::F32, "radial profiles")?;
    let [planes, rmax] = rec.dims(profile)[..] else { unreachable!("profiles are planes × radii") };
    let out = rec.temp(&[planes, nx, nx], Dtype::F32)?;
    let count = planes * nx * nx;
    let p = Params { count: count as u32, nx: nx as u32, sf: sf as u32, xymax: xymax as u32, rmax: rmax as u32, unused: [0; 3] };
    rec.dispatch(&PSF_PIXELS, &[], bytemuck::bytes_of(&p), &[profile, out], PSF_PIXELS.groups(count as u64));
    Ok(out)
}
