//! `shaders/scan/scan_columns.wgsl`: prefix sums along a strided axis, `x` viewed as
//! (outer, len, inner) with inner > 1, one Kahan-compensated thread per column. When there are
//! too few columns to fill the GPU, len is cut into chunks: chunk totals, their exclusive scan
//! (this same wrapper, recursively) and a rescan of every chunk from its offset.

use bytemuck::{Pod, Zeroable};

#[cfg(test)]
use super::scan_rows::scan_f64;
use super::SCAN_COLUMNS;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Threads (columns times chunks) worth splitting columns for: enough to fill a large GPU.
const TARGET_THREADS: usize = 1 << 16;
/// The shortest chunk: each level of recursion shrinks len at least this much.
const MIN_CHUNK: usize = 64;
/// The longest chunk: Mesa's llvmpipe/lavapipe stops any shader loop after 65,535 iterations
/// (seen here: a longer column came back unwritten past that row).
pub const MAX_CHUNK: usize = 1 << 15;

/// Mirrors `Params` in scan_columns.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct Params {
    pub len: u32,
    pub inner: u32,
    pub chunk: u32,
    pub chunks: u32,
    pub threads: u32,
    /// Always 0: hides Kahan's intermediates from reassociating compilers (see the WGSL).
    pub zero: u32,
    pub pad1: u32,
    pub pad2: u32,
}

/// The PHASE override of scan_columns.wgsl.
#[derive(Clone, Copy)]
enum Phase {
    ChunkTotals = 0,
    ScanFromOffsets = 1,
    Scan = 2,
}

/// Elements of len per thread: all of it when there are columns enough, else chunks of at
/// least MIN_CHUNK, as many as TARGET_THREADS asks for; never more than MAX_CHUNK.
pub fn chunk_len(columns: usize, len: usize) -> usize {
    if columns >= TARGET_THREADS || len < 2 * MIN_CHUNK {
        return len.min(MAX_CHUNK);
    }
    let wanted_chunks = TARGET_THREADS.div_ceil(columns);
    len.div_ceil(wanted_chunks).clamp(MIN_CHUNK, MAX_CHUNK)
}

impl Params {
    pub fn new(total: usize, len: usize, inner: usize) -> Params {
        let outer = total / (len * inner);
        let chunk = chunk_len(outer * inner, len);
        let chunks = len.div_ceil(chunk);
        Params {
            len: len as u32,
            inner: inner as u32,
            chunk: chunk as u32,
            chunks: chunks as u32,
            threads: (outer * chunks * inner) as u32,
            zero: 0,
            pad1: 0,
            pad2: 0,
        }
    }
}

/// Scans `x` (f32) viewed as (outer, len, inner) along len into a new temporary of the same
/// shape. Exclusive sums start at 0 and leave out the element.
pub fn record(rec: &mut Recording, x: Buf, len: usize, inner: usize, exclusive: bool) -> Result<Buf> {
    rec.expect_dtype(x, Dtype::F32, "column scan input")?;
    let total = rec.shape(x).len();
    if len == 0 || inner < 2 || !total.is_multiple_of(len * inner) {
        return Err(Error::Shape(format!("column scan: (len {len}, inner {inner}) with inner > 1 does not tile an array of shape {:?}", rec.dims(x))));
    }
    let dims = rec.dims(x).to_vec();
    let y = rec.temp(&dims, Dtype::F32)?;
    let p = Params::new(total, len, inner);
    if p.chunks == 1 {
        dispatch(rec, Phase::Scan, exclusive, &p, x, x, y);
    } else {
        let outer = total / (len * inner);
        let totals = rec.temp(&[outer, p.chunks as usize, inner], Dtype::F32)?;
        dispatch(rec, Phase::ChunkTotals, exclusive, &p, x, x, totals);
        let offsets = record(rec, totals, p.chunks as usize, inner, true)?;
        dispatch(rec, Phase::ScanFromOffsets, exclusive, &p, x, offsets, y);
    }
    Ok(y)
}

fn dispatch(rec: &mut Recording, phase: Phase, exclusive: bool, p: &Params, x: Buf, offsets: Buf, out: Buf) {
    let constants = [("PHASE", phase as u32 as f64), ("EXCLUSIVE", exclusive as u32 as f64)];
    rec.dispatch(&SCAN_COLUMNS, &constants, bytemuck::bytes_of(p), &[x, offsets, out], SCAN_COLUMNS.groups(p.threads as u64));
}

/// The CPU twin: the exact sums (f64) rounded to f32 (Kahan gets within about one rounding).
#[cfg(test)]
pub fn cpu(x: &[f32], len: usize, inner: usize, exclusive: bool) -> Vec<f32> {
    let x: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    scan_f64(&x, len, inner, exclusive).into_iter().map(|v| v as f32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn few_columns_are_chunked_many_are_not() {
        assert_eq!(chunk_len(TARGET_THREADS, 30_000), 30_000);
        assert_eq!(chunk_len(TARGET_THREADS, 100_000), MAX_CHUNK);
        assert_eq!(chunk_len(3, 100), 100);
        assert_eq!(chunk_len(2, 300_000), 64);
        let p = Params::new(2 * 300_000, 300_000, 2);
        assert_eq!((p.chunks, p.threads), (4688, 2 * 4688));
        let c = chunk_len(1000, 100_000);
        assert_eq!(c, 1516);
        assert!(100_000usize.div_ceil(c) * 1000 >= TARGET_THREADS);
    }
}
