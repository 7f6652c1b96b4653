//! `shaders/tomography/prep_normalize.wgsl`: raw detector rows (16-bit counts or f32) to f32,
//! transmission or −log, with TomoPy's outlier replacement, in projection or sinogram order.

use bytemuck::{Pod, Zeroable};

use super::PREP_NORMALIZE;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in prep_normalize.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub angles: u32,
    pub rows: u32,
    pub cols: u32,
    pub raw_rows: u32,
    pub row0: u32,
    pub dif: f32,
    pub cutoff: f32,
    pub floor: f32,
}

/// What the kernel writes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mode {
    /// The raw value as f32 (what the median filter of the outlier test reads).
    Raw,
    /// (x − dark) / max(flat − dark, 1e-6), at most `cutoff`.
    Transmission { cutoff: f32 },
    /// −ln(max(transmission, floor)).
    MinusLog { cutoff: f32, floor: f32 },
}

/// The raw input: `buf` holds (angles, raw_rows, cols) values, 16-bit counts two to a u32 word
/// (`u16`), else f32.
#[derive(Clone, Copy, Debug)]
pub struct Raw {
    pub buf: Buf,
    pub u16: bool,
    pub dims: [usize; 3],
}

/// Rows `row0..row0 + rows` of `raw` in `mode`; `outliers`: each value's median (f32, raw's
/// shape) and the threshold `dif`; `flat_dark`: the flat and dark means (2, rows, cols) (unused
/// in `Mode::Raw`, any f32 buffer). Output (angles, rows, cols), or (rows, angles, cols) with
/// `sinograms`.
pub fn record(
    rec: &mut Recording,
    raw: Raw,
    row0: usize,
    rows: usize,
    outliers: Option<(Buf, f32)>,
    flat_dark: Buf,
    mode: Mode,
    sinograms: bool,
) -> Result<Buf> {
    let [angles, raw_rows, cols] = raw.dims;
    let len = angles * raw_rows * cols;
    let words = if raw.u16 { len.div_ceil(2) } else { len };
    if rec.shape(raw.buf).len() != words || rec.dtype(raw.buf).bytes() != 4 || row0 + rows > raw_rows || rows == 0 {
        return Err(Error::Shape(format!(
            "raw rows {:?} ({} words) for rows {row0}..{} of {:?}",
            rec.dims(raw.buf),
            rec.shape(raw.buf).len(),
            row0 + rows,
            raw.dims
        )));
    }
    if angles * rows * cols > u32::MAX as usize || len > u32::MAX as usize {
        return Err(Error::Invalid(format!("{len} raw values in one batch (at most {})", u32::MAX)));
    }
    let median = match outliers {
        Some((m, _)) => {
            rec.expect_dtype(m, Dtype::F32, "medians")?;
            if rec.shape(m).len() != len {
                return Err(Error::Shape(format!("medians {:?} for raw rows {:?}", rec.dims(m), raw.dims)));
            }
            m
        }
        None => flat_dark,
    };
    rec.expect_dtype(flat_dark, Dtype::F32, "flat and dark means")?;
    let (code, cutoff, floor) = match mode {
        Mode::Raw => (0.0, f32::INFINITY, 0.0),
        Mode::Transmission { cutoff } => (1.0, cutoff, 0.0),
        Mode::MinusLog { cutoff, floor } => (2.0, cutoff, floor),
    };
    if mode != Mode::Raw && rec.shape(flat_dark).len() != 2 * rows * cols {
        return Err(Error::Shape(format!("flat and dark means {:?} for {rows} rows of {cols}", rec.dims(flat_dark))));
    }
    let dims = if sinograms { [rows, angles, cols] } else { [angles, rows, cols] };
    let out = rec.temp(&dims, Dtype::F32)?;
    let p = Params {
        angles: angles as u32,
        rows: rows as u32,
        cols: cols as u32,
        raw_rows: raw_rows as u32,
        row0: row0 as u32,
        dif: outliers.map_or(0.0, |(_, d)| d),
        cutoff,
        floor,
    };
    let flag = |b: bool| if b { 1.0 } else { 0.0 };
    let constants = [("U16", flag(raw.u16)), ("OUTLIERS", flag(outliers.is_some())), ("MODE", code), ("SINOGRAMS", flag(sinograms))];
    rec.dispatch(&PREP_NORMALIZE, &constants, bytemuck::bytes_of(&p), &[raw.buf, median, flat_dark, out], PREP_NORMALIZE.groups((angles * rows * cols) as u64));
    Ok(out)
}

#[cfg(test)]
/// The CPU twin: `raw` (angles, raw_rows, cols) as f32 values, `median` of the same shape.
#[allow(clippy::too_many_arguments)]
pub fn cpu(
    raw: &ndarray::ArrayView3<f32>,
    row0: usize,
    rows: usize,
    median: Option<(&ndarray::ArrayView3<f32>, f32)>,
    flat: &ndarray::ArrayView2<f32>,
    dark: &ndarray::ArrayView2<f32>,
    mode: Mode,
    sinograms: bool,
) -> ndarray::Array3<f32> {
    let (angles, cols) = (raw.shape()[0], raw.shape()[2]);
    let dims = if sinograms { (rows, angles, cols) } else { (angles, rows, cols) };
    let mut out = ndarray::Array3::<f32>::zeros(dims);
    for a in 0..angles {
        for r in 0..rows {
            for c in 0..cols {
                let mut v = raw[[a, row0 + r, c]];
                if let Some((m, dif)) = median {
                    if v - m[[a, row0 + r, c]] >= dif {
                        v = m[[a, row0 + r, c]];
                    }
                }
                let t = |v: f32, cutoff: f32| ((v - dark[[r, c]]) / (flat[[r, c]] - dark[[r, c]]).max(1e-6)).min(cutoff);
                v = match mode {
                    Mode::Raw => v,
                    Mode::Transmission { cutoff } => t(v, cutoff),
                    Mode::MinusLog { cutoff, floor } => -t(v, cutoff).max(floor).ln(),
                };
                let at = if sinograms { [r, a, c] } else { [a, r, c] };
                out[at] = v;
            }
        }
    }
    out
}
