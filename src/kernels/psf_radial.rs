//! `shaders/psf/psf_radial.wgsl`: the radial profiles of a widefield PSF model (scalar
//! Gibson-Lanni or vectorial), one pupil integral per (plane, radius).

use bytemuck::{Pod, Zeroable};

use super::PSF_RADIAL;
use crate::error::Result;
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in psf_radial.wgsl: lengths in µm, `k0` = 2π / λ, `dn_*` = n² − ni² of
/// the sample, coverslip (experimental, design) and immersion design indices, `scale` the
/// model's constant over (3 sf)².
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, Default)]
pub struct Params {
    pub count: u32,
    pub rmax: u32,
    pub unused0: [u32; 2],
    pub k0: f32,
    pub r_step: f32,
    pub alpha: f32,
    pub scale: f32,
    pub ni: f32,
    pub ns: f32,
    pub ng: f32,
    pub ng0: f32,
    pub ni0: f32,
    pub tg: f32,
    pub tg0: f32,
    pub ti0: f32,
    pub zp: f32,
    pub dn_s: f32,
    pub dn_g: f32,
    pub dn_g0: f32,
    pub dn_i0: f32,
    pub unused1: [f32; 3],
}

/// The profiles (planes × `rmax`, f32) from each (plane, radius)'s Simpson interval count
/// `samples` (f32, planes × rmax) and each plane's zp − z (`depth`, f32, planes).
pub fn record(rec: &mut Recording, samples: Buf, depth: Buf, vectorial: bool, p: Params) -> Result<Buf> {
    rec.expect_dtype(samples, Dtype::F32, "Simpson interval counts")?;
    rec.expect_dtype(depth, Dtype::F32, "plane depths")?;
    let planes = rec.shape(depth).len();
    let out = rec.temp(&[planes, p.rmax as usize], Dtype::F32)?;
    let count = planes * p.rmax as usize;
    let p = Params { count: count as u32, ..p };
    let constants = [("VECTORIAL", f64::from(u8::from(vectorial)))];
    rec.dispatch(&PSF_RADIAL, &constants, bytemuck::bytes_of(&p), &[samples, depth, out], PSF_RADIAL.groups(count as u64));
    Ok(out)
}
