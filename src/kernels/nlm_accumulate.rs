//! `shaders/denoise/nlm_accumulate.wgsl`: non-local means (scikit-image's fast mode), one patch
//! shift's weighted values gathered by the interior pixels.

use bytemuck::{Pod, Zeroable};

use super::NLM_ACCUMULATE;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in nlm_accumulate.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub rows: u32,
    pub cols: u32,
    pub channels: u32,
    pub offset: u32,
    pub shift: i32,
    pub stride: u32,
    pub pad_planes: u32,
    pub pad: u32,
    pub inner_rows: u32,
    pub inner_cols: u32,
    pub inner_count: u32,
    pub alpha: f32,
    pub h2s2: f32,
    pub unused: [u32; 3],
}

/// The accumulator (inner planes, rows, cols, channels + 1) after the shift t = (t_pln, t_row,
/// t_col) of the padded image (planes, rows, cols, channels), from `before`; `sums` the shift's
/// box sums over all axes but the first spatial one (flat, the padded image's pixels), summed
/// here along it (`stride`: its step); `pads` the padding of the planes (0 for an image) and
/// of the rows and columns.
#[allow(clippy::too_many_arguments)]
pub fn record(
    rec: &mut Recording,
    padded: Buf,
    sums: Buf,
    before: Buf,
    offset: usize,
    pads: [usize; 2],
    shift: [i32; 3],
    stride: usize,
    h2s2: f32,
) -> Result<Buf> {
    let &[planes, rows, cols, channels] = rec.dims(padded) else {
        return Err(Error::Shape(format!("a padded image of {:?}: (planes, rows, cols, channels)", rec.dims(padded))));
    };
    let inner = [planes - 2 * pads[0], rows - 2 * pads[1], cols - 2 * pads[1]];
    if rec.dims(before) != [inner[0], inner[1], inner[2], channels + 1] || rec.shape(sums).len() != planes * rows * cols {
        return Err(Error::Shape(format!(
            "non-local means sums {:?} and accumulator {:?} for a padded image of {:?}",
            rec.dims(sums),
            rec.dims(before),
            rec.dims(padded)
        )));
    }
    let inner_count = inner.iter().product::<usize>();
    let p = Params {
        rows: rows as u32,
        cols: cols as u32,
        channels: channels as u32,
        offset: offset as u32,
        shift: (shift[0] * rows as i32 + shift[1]) * cols as i32 + shift[2],
        stride: stride as u32,
        pad_planes: pads[0] as u32,
        pad: pads[1] as u32,
        inner_rows: inner[1] as u32,
        inner_cols: inner[2] as u32,
        inner_count: inner_count as u32,
        alpha: if shift[2] == 0 { 0.5 } else { 1.0 },
        h2s2,
        unused: [0; 3],
    };
    let after = rec.temp_like(before, Dtype::F32)?;
    rec.dispatch(&NLM_ACCUMULATE, &[], bytemuck::bytes_of(&p), &[padded, sums, before, after], NLM_ACCUMULATE.groups(inner_count as u64));
    Ok(after)
}
