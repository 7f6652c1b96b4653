//! `shaders/scan/scan_rows.wgsl`: prefix sums along contiguous rows, any row length and count.
//! Rows that fit one tile are scanned in one pass, several short rows per workgroup; longer rows
//! are reduce-then-scan: tile totals, their exclusive scan (this same wrapper, recursively: a
//! level shrinks a row by BLOCK) and a rescan of every tile from its offset. Rows of whole vec4s
//! longer than BLOCK go to `scan_rows_vec4` (larger tiles, 16-byte accesses).

use bytemuck::{Pod, Zeroable};

use super::{scan_rows_vec4, SCAN_ROWS};
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Elements per workgroup tile (THREADS * ITEMS); mirrors BLOCK in scan_rows.wgsl.
pub const BLOCK: usize = 1024;

/// Mirrors `Params` in scan_rows.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct Params {
    pub len: u32,
    pub total: u32,
    pub blocks_per_row: u32,
    pub tile_len: u32,
    pub tiles: u32,
    pub pad0: u32,
    pub pad1: u32,
    pub pad2: u32,
}

/// The PHASE override of scan_rows.wgsl.
#[derive(Clone, Copy)]
enum Phase {
    TileTotals = 0,
    ScanFromOffsets = 1,
    Scan = 2,
}

impl Params {
    /// The tiling of `total` elements in rows of `len`.
    pub fn new(total: usize, len: usize) -> Params {
        let rows = total / len;
        let (blocks_per_row, tile_len, tiles) = if len <= BLOCK {
            let rows_per_tile = BLOCK / len;
            (1, rows_per_tile * len, rows.div_ceil(rows_per_tile))
        } else {
            let blocks = len.div_ceil(BLOCK);
            (blocks, BLOCK, rows * blocks)
        };
        Params {
            len: len as u32,
            total: total as u32,
            blocks_per_row: blocks_per_row as u32,
            tile_len: tile_len as u32,
            tiles: tiles as u32,
            pad0: 0,
            pad1: 0,
            pad2: 0,
        }
    }
}

/// Scans every run of `len` consecutive elements of `x` (f32; its length a multiple of `len`)
/// into a new temporary of the same shape. Exclusive sums start at 0 and leave out the element.
/// Long rows of whole vec4s (`scan_rows_vec4::fits`) take `scan_rows_vec4`.
pub fn record(rec: &mut Recording, x: Buf, len: usize, exclusive: bool) -> Result<Buf> {
    rec.expect_dtype(x, Dtype::F32, "row scan input")?;
    let total = rec.shape(x).len();
    if len == 0 || !total.is_multiple_of(len) {
        return Err(Error::Shape(format!("row scan: rows of {len} do not tile an array of shape {:?}", rec.dims(x))));
    }
    if scan_rows_vec4::fits(len) {
        return scan_rows_vec4::record(rec, x, len, exclusive);
    }
    let dims = rec.dims(x).to_vec();
    let y = rec.temp(&dims, Dtype::F32)?;
    let p = Params::new(total, len);
    if p.blocks_per_row == 1 {
        dispatch(rec, Phase::Scan, exclusive, &p, x, x, y);
    } else {
        let rows = total / len;
        let totals = rec.temp(&[rows, p.blocks_per_row as usize], Dtype::F32)?;
        dispatch(rec, Phase::TileTotals, exclusive, &p, x, x, totals);
        let offsets = record(rec, totals, p.blocks_per_row as usize, true)?;
        dispatch(rec, Phase::ScanFromOffsets, exclusive, &p, x, offsets, y);
    }
    Ok(y)
}

fn dispatch(rec: &mut Recording, phase: Phase, exclusive: bool, p: &Params, x: Buf, offsets: Buf, out: Buf) {
    let constants = [("PHASE", phase as u32 as f64), ("EXCLUSIVE", exclusive as u32 as f64)];
    rec.dispatch(&SCAN_ROWS, &constants, bytemuck::bytes_of(p), &[x, offsets, out], p.tiles as u64);
}

/// The CPU twin: the exact sums (f64) rounded to f32.
#[cfg(test)]
pub fn cpu(x: &[f32], len: usize, exclusive: bool) -> Vec<f32> {
    let x: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    scan_f64(&x, len, 1, exclusive).into_iter().map(|v| v as f32).collect()
}

/// The CPU twin of both scan kernels: prefix sums of `x` viewed as (outer, len, inner) along the middle axis. Exclusive sums start
/// at 0 and leave out the element itself.
pub fn scan_f64(x: &[f64], len: usize, inner: usize, exclusive: bool) -> Vec<f64> {
    let mut y = vec![0.0; x.len()];
    for block in 0..x.len() / (len * inner) {
        let base = block * len * inner;
        for i in 0..inner {
            let mut run = 0.0;
            for l in 0..len {
                let at = base + l * inner + i;
                if exclusive {
                    y[at] = run;
                    run += x[at];
                } else {
                    run += x[at];
                    y[at] = run;
                }
            }
        }
    }
    y
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_rows_share_tiles_and_long_rows_split() {
        let p = Params::new(3 * 10, 10);
        assert_eq!((p.blocks_per_row, p.tile_len, p.tiles), (1, 1020, 1));
        let p = Params::new(5000, 1);
        assert_eq!((p.blocks_per_row, p.tile_len, p.tiles), (1, 1024, 5));
        let p = Params::new(2 * BLOCK, BLOCK);
        assert_eq!((p.blocks_per_row, p.tile_len, p.tiles), (1, 1024, 2));
        let p = Params::new(3 * (BLOCK + 1), BLOCK + 1);
        assert_eq!((p.blocks_per_row, p.tiles), (2, 6));
    }
}
