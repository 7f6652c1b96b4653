//! `shaders/scan/scan_rows_vec4.wgsl`: prefix sums along contiguous rows whose length is a
//! multiple of 4 and more than `scan_rows::BLOCK`, in whole vec4s and tiles of 4096 elements.
//! Rows that fit one tile are scanned in one pass; longer rows are reduce-then-scan: the totals
//! of every quarter tile (1024 elements), their exclusive scan (`scan_rows::record`, which
//! comes back here while they are long: a level shrinks a row by 1024) and a rescan of every
//! tile from its quarters' offsets. `scan_rows::record` sends the rows this kernel fits here;
//! the CPU twin is `scan_rows::cpu` (the same sums).

use bytemuck::{Pod, Zeroable};

use super::{scan_rows, SCAN_ROWS_VEC4};
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Elements per workgroup tile (256 threads, 4 vec4s each); mirrors BLOCK in scan_rows_vec4.wgsl.
pub const BLOCK: usize = 4096;
/// Tile totals per tile: one per quarter, the vec4 a tile writes in its totals pass.
pub const TOTALS_PER_TILE: usize = 4;

/// Mirrors `Params` in scan_rows_vec4.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct Params {
    pub len4: u32,
    pub blocks_per_row: u32,
    pub tiles: u32,
    pub pad0: u32,
}

/// The PHASE override of scan_rows_vec4.wgsl.
#[derive(Clone, Copy)]
enum Phase {
    TileTotals = 0,
    ScanFromOffsets = 1,
    Scan = 2,
}

/// Whether rows of `len` take this kernel: whole vec4s (so every row starts on one), and longer
/// than scan_rows's tile (shorter rows share that kernel's tiles).
pub fn fits(len: usize) -> bool {
    len.is_multiple_of(4) && len > scan_rows::BLOCK
}

impl Params {
    /// The tiling of `total` elements in rows of `len` (a multiple of 4).
    pub fn new(total: usize, len: usize) -> Params {
        let rows = total / len;
        let blocks = len.div_ceil(BLOCK);
        Params { len4: (len / 4) as u32, blocks_per_row: blocks as u32, tiles: (rows * blocks) as u32, pad0: 0 }
    }
}

/// Scans every run of `len` consecutive elements of `x` (f32; its length a multiple of `len`;
/// `fits(len)`) into a new temporary of the same shape. Exclusive sums start at 0 and leave out
/// the element.
pub fn record(rec: &mut Recording, x: Buf, len: usize, exclusive: bool) -> Result<Buf> {
    rec.expect_dtype(x, Dtype::F32, "row scan input")?;
    let total = rec.shape(x).len();
    if !fits(len) || !total.is_multiple_of(len) {
        return Err(Error::Shape(format!(
            "vec4 row scan: rows of {len} (a multiple of 4 above {}) do not tile an array of shape {:?}",
            scan_rows::BLOCK,
            rec.dims(x)
        )));
    }
    let dims = rec.dims(x).to_vec();
    let y = rec.temp(&dims, Dtype::F32)?;
    let p = Params::new(total, len);
    if p.blocks_per_row == 1 {
        dispatch(rec, Phase::Scan, exclusive, &p, x, x, y);
    } else {
        let rows = total / len;
        let per_row = p.blocks_per_row as usize * TOTALS_PER_TILE;
        let totals = rec.temp(&[rows, per_row], Dtype::F32)?;
        dispatch(rec, Phase::TileTotals, exclusive, &p, x, x, totals);
        let offsets = scan_rows::record(rec, totals, per_row, true)?;
        dispatch(rec, Phase::ScanFromOffsets, exclusive, &p, x, offsets, y);
    }
    Ok(y)
}

fn dispatch(rec: &mut Recording, phase: Phase, exclusive: bool, p: &Params, x: Buf, offsets: Buf, out: Buf) {
    let constants = [("PHASE", phase as u32 as f64), ("EXCLUSIVE", exclusive as u32 as f64)];
    rec.dispatch(&SCAN_ROWS_VEC4, &constants, bytemuck::bytes_of(p), &[x, offsets, out], p.tiles as u64);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_of_whole_vec4s_above_the_scalar_tile_fit() {
        assert!(!fits(scan_rows::BLOCK) && !fits(scan_rows::BLOCK + 1) && !fits(4097));
        assert!(fits(scan_rows::BLOCK + 4) && fits(BLOCK) && fits(4 * BLOCK + 4));
    }

    #[test]
    fn long_rows_split_into_tiles() {
        let p = Params::new(3 * 1028, 1028);
        assert_eq!((p.len4, p.blocks_per_row, p.tiles), (257, 1, 3));
        let p = Params::new(2 * BLOCK, BLOCK);
        assert_eq!((p.blocks_per_row, p.tiles), (1, 2));
        let p = Params::new(3 * (BLOCK + 4), BLOCK + 4);
        assert_eq!((p.len4, p.blocks_per_row, p.tiles), (1025, 2, 6));
    }
}
