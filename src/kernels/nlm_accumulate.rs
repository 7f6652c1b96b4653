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
    pub t_row: i32,
    pub t_col: i32,
    pub pad: u32,
    pub inner_cols: u32,
    pub inner_count: u32,
    pub alpha: f32,
    pub h2s2: f32,
    pub unused: u32,
}

/// The accumulator (inner rows, inner cols, channels + 1) after the shift (t_row, t_col),
/// from `before`; `sums` from `nlm_rows` for the same shift; `pad` the padding on each side.
pub fn record(rec: &mut Recording, padded: Buf, sums: Buf, before: Buf, offset: usize, pad: usize, shift: [i32; 2], h2s2: f32) -> Result<Buf> {
    let &[rows, cols, channels] = rec.dims(padded) else {
        return Err(Error::Shape(format!("a padded image of {:?}: (rows, cols, channels)", rec.dims(padded))));
    };
    let (inner_rows, inner_cols) = (rows - 2 * pad, cols - 2 * pad);
    if rec.dims(before) != [inner_rows, inner_cols, channels + 1] || rec.dims(sums) != [rows, cols] {
        return Err(Error::Shape(format!(
            "non-local means sums {:?} and accumulator {:?} for a padded image of {:?}",
            rec.dims(sums),
            rec.dims(before),
            rec.dims(padded)
        )));
    }
    let inner_count = inner_rows * inner_cols;
    let p = Params {
        rows: rows as u32,
        cols: cols as u32,
        channels: channels as u32,
        offset: offset as u32,
        t_row: shift[0],
        t_col: shift[1],
        pad: pad as u32,
        inner_cols: inner_cols as u32,
        inner_count: inner_count as u32,
        alpha: if shift[1] == 0 { 0.5 } else { 1.0 },
        h2s2,
        unused: 0,
    };
    let after = rec.temp_like(before, Dtype::F32)?;
    rec.dispatch(&NLM_ACCUMULATE, &[], bytemuck::bytes_of(&p), &[padded, sums, before, after], NLM_ACCUMULATE.groups(inner_count as u64));
    Ok(after)
}
