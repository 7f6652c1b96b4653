//! `shaders/denoise/nlm_rows.wgsl`: non-local means (scikit-image's fast mode), one patch
//! shift's squared differences summed along rows.

use bytemuck::{Pod, Zeroable};

use super::NLM_ROWS;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in nlm_rows.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub rows: u32,
    pub cols: u32,
    pub channels: u32,
    pub offset: u32,
    pub t_row: i32,
    pub t_col: i32,
    pub noise: f32,
    pub unused: u32,
}

/// R (rows, cols) of the padded image (rows, cols, channels) for the shift (t_row, t_col):
/// sums over the patch's s − 1 columns (`offset` = s / 2) of the channels' squared
/// differences less `noise` (channels · 2σ²) each.
pub fn record(rec: &mut Recording, padded: Buf, offset: usize, shift: [i32; 2], noise: f32) -> Result<Buf> {
    rec.expect_dtype(padded, Dtype::F32, "non-local means")?;
    let &[rows, cols, channels] = rec.dims(padded) else {
        return Err(Error::Shape(format!("a padded image of {:?}: (rows, cols, channels)", rec.dims(padded))));
    };
    let p =
        Params { rows: rows as u32, cols: cols as u32, channels: channels as u32, offset: offset as u32, t_row: shift[0], t_col: shift[1], noise, unused: 0 };
    let sums = rec.temp(&[rows, cols], Dtype::F32)?;
    rec.dispatch(&NLM_ROWS, &[], bytemuck::bytes_of(&p), &[padded, sums], NLM_ROWS.groups((rows * cols) as u64));
    Ok(sums)
}
