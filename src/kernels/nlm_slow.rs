//! `shaders/denoise/nlm_slow.wgsl`: non-local means in scikit-image's slow mode, one pixel a
//! thread.

use bytemuck::{Pod, Zeroable};

use super::NLM_SLOW;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in nlm_slow.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub planes: u32,
    pub rows: u32,
    pub cols: u32,
    pub channels: u32,
    pub size: u32,
    pub distance: u32,
    pub volume: u32,
    pub noise: f32,
}

/// The denoised image (planes, rows, cols, channels) from the image padded by s/2 on its
/// spatial axes (not the planes of an image: `volume` false), the patch weights `w`
/// (s^ndim), the search distance and 2σ².
pub fn record(rec: &mut Recording, padded: Buf, w: Buf, size: usize, distance: usize, volume: bool, noise: f32) -> Result<Buf> {
    let &[pp, pr, pc, channels] = rec.dims(padded) else {
        return Err(Error::Shape(format!("a padded image of {:?}: (planes, rows, cols, channels)", rec.dims(padded))));
    };
    let o = size / 2;
    let planes = if volume { pp - 2 * o } else { pp };
    let (rows, cols) = (pr - 2 * o, pc - 2 * o);
    let p = Params {
        planes: planes as u32,
        rows: rows as u32,
        cols: cols as u32,
        channels: channels as u32,
        size: size as u32,
        distance: distance as u32,
        volume: volume as u32,
        noise,
    };
    let out = rec.temp(&[planes, rows, cols, channels], Dtype::F32)?;
    rec.dispatch(&NLM_SLOW, &[], bytemuck::bytes_of(&p), &[padded, w, out], NLM_SLOW.groups((planes * rows * cols) as u64));
    Ok(out)
}
