//! `shaders/tomography/gridrec_gather.wgsl`: the gridding FBP's polar samples gathered onto the
//! oversampled frequency grid.

use bytemuck::{Pod, Zeroable};

use super::GRIDREC_GATHER;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in gridrec_gather.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub slices: u32,
    pub angles: u32,
    pub padded: u32,
    pub size: u32,
    pub scale: f32,
    pub width: f32,
    pub beta: f32,
    pub dtheta: f32,
}

/// `trig` (angles, 2) f32 cos and sin of angles iπ/angles; `c` (slices, angles, padded) c32:
/// the grid (slices, size, size) c32.
pub fn record(rec: &mut Recording, trig: Buf, c: Buf, size: usize, width: f64, beta: f64) -> Result<Buf> {
    rec.expect_dtype(c, Dtype::C32, "polar samples")?;
    let &[slices, angles, padded] = rec.dims(c) else {
        return Err(Error::Shape(format!("polar samples {:?}: (slices, angles, frequencies)", rec.dims(c))));
    };
    let g = rec.temp(&[slices, size, size], Dtype::C32)?;
    let p = Params {
        slices: slices as u32,
        angles: angles as u32,
        padded: padded as u32,
        size: size as u32,
        scale: (size as f64 / padded as f64) as f32,
        width: width as f32,
        beta: beta as f32,
        dtheta: (std::f64::consts::PI / angles as f64) as f32,
    };
    rec.dispatch(&GRIDREC_GATHER, &[], bytemuck::bytes_of(&p), &[trig, c, g], GRIDREC_GATHER.groups((slices * size * size) as u64));
    Ok(g)
}
