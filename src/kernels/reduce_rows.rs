//! `shaders/reduce/reduce_rows.wgsl`: sum, min, max, argmin or argmax of each row of a
//! row-major (rows, len) f32 array (the whole array is one row), in passes: the first reads the
//! data with vec4 loads and writes one partial per (row, chunk); later passes reduce the
//! partials until one chunk per row is left. Sums are compensated (double-f32 partials).

use bytemuck::{Pod, Zeroable};

use super::REDUCE_ROWS;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// The reductions the kernels know; `OP` codes as in `shaders/common/reduce.wgsl`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    Sum,
    Min,
    Max,
    /// Index of the smallest value (first occurrence; the first NaN if any).
    ArgMin,
    /// Index of the largest value (first occurrence; the first NaN if any).
    ArgMax,
    /// The sum of the squares (one pass; the kernels square as they load).
    SumSquares,
    /// Index of the largest magnitude (first occurrence; the first NaN if any).
    ArgMaxAbs,
}

impl ReduceOp {
    pub(crate) fn code(self) -> u32 {
        match self {
            ReduceOp::Sum => 0,
            ReduceOp::Min => 1,
            ReduceOp::Max => 2,
            ReduceOp::ArgMin => 3,
            ReduceOp::ArgMax | ReduceOp::ArgMaxAbs => 4,
            ReduceOp::SumSquares => 0,
        }
    }

    /// What the kernels apply to each element as they load it (PRE): 0 nothing, 1 the
    /// magnitude, 2 the square.
    pub(crate) fn pre(self) -> u32 {
        match self {
            ReduceOp::ArgMaxAbs => 1,
            ReduceOp::SumSquares => 2,
            _ => 0,
        }
    }

    /// The op the kernels run once the elements are loaded.
    fn base(self) -> ReduceOp {
        match self {
            ReduceOp::SumSquares => ReduceOp::Sum,
            ReduceOp::ArgMaxAbs => ReduceOp::ArgMax,
            op => op,
        }
    }

    pub fn is_arg(self) -> bool {
        matches!(self.base(), ReduceOp::ArgMin | ReduceOp::ArgMax)
    }

    /// F32 values, or U32 indices for argmin/argmax.
    pub fn output_dtype(self) -> Dtype {
        if self.is_arg() {
            Dtype::U32
        } else {
            Dtype::F32
        }
    }

    /// The CPU twin over one line, with numpy's semantics: sums accumulate in f64, min/max
    /// propagate NaN, argmin/argmax give the first occurrence (the first NaN if any) as an
    /// index, held exactly in the f64.
    pub fn cpu_line(self, line: impl IntoIterator<Item = f32>) -> f64 {
        let pre = self.pre();
        let mut line = line.into_iter().map(f64::from).map(|v| match pre {
            1 => v.abs(),
            2 => v * v,
            _ => v,
        });
        match self.base() {
            ReduceOp::Sum => line.sum(),
            ReduceOp::Min | ReduceOp::Max => {
                let first = line.next().unwrap_or(f64::NAN);
                line.fold(first, |m, v| {
                    if m.is_nan() || v.is_nan() {
                        f64::NAN
                    } else if self.base() == ReduceOp::Min {
                        m.min(v)
                    } else {
                        m.max(v)
                    }
                })
            }
            ReduceOp::ArgMin | ReduceOp::ArgMax => {
                let mut best: Option<(usize, f64)> = None;
                for (i, v) in line.enumerate() {
                    let better = match best {
                        None => true,
                        Some((_, b)) if b.is_nan() => false,
                        Some((_, b)) => v.is_nan() || if self.base() == ReduceOp::ArgMin { v < b } else { v > b },
                    };
                    if better {
                        best = Some((i, v));
                    }
                }
                best.map_or(f64::NAN, |(i, _)| i as f64)
            }
            ReduceOp::SumSquares | ReduceOp::ArgMaxAbs => unreachable!("base() maps these to Sum and ArgMax"),
        }
    }
}

/// Mirrors `Params` in reduce_rows.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub rows: u32,
    pub len: u32,
    pub chunks: u32,
    pub iters: u32,
    pub team: u32,
    pub finish: u32,
    /// Always 1.0; the compensated sums multiply by it to hide algebraic identities from the
    /// shader compiler (see `opaque` in shaders/common/reduce.wgsl).
    pub one: f32,
    pub pad: u32,
}

/// Threads per workgroup and loads per thread per trip, as in the WGSL.
const WG: u64 = 256;
const LOADS: u64 = 4;
/// A row that a team smaller than the workgroup covers in this many trips gets such a team
/// (several rows per workgroup), so short rows keep every thread busy and the tree short; the
/// team has at least MIN_SHORT_TEAM threads where the row fills them, for coalesced loads.
/// On an H200 over 2^26 elements, rows of 64 to 4096 elements reach 64-90% of a vec4 copy this
/// way, against 5-46% with a workgroup per row.
const SHORT_TRIPS: u64 = 4;
const MIN_SHORT_TEAM: u64 = 8;
/// Long rows: the first pass aims for about this many workgroups (a few per multiprocessor of
/// a large GPU; measured best on an H100/H200) before it gives each thread more trips (up to
/// MAX_ITERS: 4 x 16 vec4 per thread).
const TARGET_WORKGROUPS: u64 = 1024;
const MAX_ITERS: u64 = 16;
/// Element indices (4 * vec4 index + lane) must fit the kernel's u32 arithmetic.
pub(crate) const MAX_ELEMENTS: u64 = 1 << 31;

/// How one pass splits each row: `chunks` teams of `team` threads, `iters` trips per thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pass {
    pub team: u64,
    pub chunks: u64,
    pub iters: u64,
}

impl Pass {
    pub fn workgroups(&self, rows: u64) -> u64 {
        (rows * self.chunks).div_ceil(WG / self.team)
    }
}

/// A team small enough for rows of `units` loads (vec4s or partials), if one is: the smallest
/// that covers the row in SHORT_TRIPS trips, but at least MIN_SHORT_TEAM threads while each of
/// them still has LOADS loads inside the row, so a warp's loads hit few memory lines.
fn short_rows(units: u64) -> Option<Pass> {
    let smallest = units.div_ceil(LOADS * SHORT_TRIPS).next_power_of_two();
    let full = (units / LOADS).max(1);
    let coalesced = MIN_SHORT_TEAM.min(1 << full.ilog2());
    let team = smallest.max(coalesced);
    (team < WG).then(|| Pass { team, chunks: 1, iters: units.div_ceil(team * LOADS) })
}

/// The first pass over rows of `len` f32 elements.
pub fn data_pass(rows: u64, len: u64) -> Pass {
    // vec4s a row touches: a row that starts inside a vec4 touches up to one more.
    let aligned = rows == 1 || len.is_multiple_of(4);
    let nvec = if aligned { len.div_ceil(4) } else { (len + 3).div_ceil(4) };
    short_rows(nvec).unwrap_or_else(|| {
        let per_trip = WG * LOADS;
        let iters = (rows * nvec / (per_trip * TARGET_WORKGROUPS)).clamp(1, MAX_ITERS).min(nvec.div_ceil(per_trip));
        Pass { team: WG, chunks: nvec.div_ceil(per_trip * iters), iters }
    })
}

/// A later pass over rows of `len` partials: as few chunks as MAX_ITERS trips allow.
pub fn partial_pass(len: u64) -> Pass {
    short_rows(len).unwrap_or_else(|| {
        let iters = len.div_ceil(WG * LOADS).min(MAX_ITERS);
        Pass { team: WG, chunks: len.div_ceil(WG * LOADS * iters), iters }
    })
}

/// The passes `record_into` runs for rows of `len` elements.
pub fn passes(rows: u64, len: u64) -> Vec<Pass> {
    let mut all = vec![data_pass(rows, len)];
    while let Some(&last) = all.last().filter(|p| p.chunks > 1) {
        all.push(partial_pass(last.chunks));
    }
    all
}

/// Records the reduction of each row of `x` (f32, viewed as `rows` x `len`) into `y` (`rows`
/// elements of `op.output_dtype()`).
pub fn record_into(rec: &mut Recording, op: ReduceOp, x: Buf, y: Buf, rows: usize, len: usize) -> Result<()> {
    check_geometry(rec, op, x, y, rows * len, rows)?;
    let rows = rows as u64;
    let mut input = x;
    let mut len = len as u64;
    for (k, pass) in passes(rows, len).into_iter().enumerate() {
        let finish = pass.chunks == 1;
        let output = if finish { y } else { rec.temp(&[(rows * pass.chunks * 2) as usize], Dtype::U32)? };
        let p = Params {
            rows: rows as u32,
            len: len as u32,
            chunks: pass.chunks as u32,
            iters: pass.iters as u32,
            team: pass.team as u32,
            finish: finish as u32,
            one: 1.0,
            pad: 0,
        };
        let constants = [("OP", op.code() as f64), ("FIRST", (k == 0) as u32 as f64), ("PRE", op.pre() as f64)];
        rec.dispatch(&REDUCE_ROWS, &constants, bytemuck::bytes_of(&p), &[input, output], pass.workgroups(rows));
        input = output;
        len = pass.chunks;
    }
    Ok(())
}

/// Records the reduction of each row into a new array of `rows` elements.
#[cfg(test)]
pub fn record(rec: &mut Recording, op: ReduceOp, x: Buf, rows: usize, len: usize) -> Result<Buf> {
    let y = rec.temp(&[rows], op.output_dtype())?;
    record_into(rec, op, x, y, rows, len)?;
    Ok(y)
}

/// Shared by both reduction kernels: `x` is f32 with `elements` elements, `y` holds `results`
/// of the op's output type.
pub(crate) fn check_geometry(rec: &Recording, op: ReduceOp, x: Buf, y: Buf, elements: usize, results: usize) -> Result<()> {
    rec.expect_dtype(x, Dtype::F32, "reduction input")?;
    rec.expect_dtype(y, op.output_dtype(), "reduction output")?;
    if rec.shape(x).len() != elements {
        return Err(Error::Shape(format!("reduction input of shape {:?} does not hold {elements} elements", rec.dims(x))));
    }
    if rec.shape(y).len() != results {
        return Err(Error::Shape(format!("reduction output of shape {:?} does not hold {results} results", rec.dims(y))));
    }
    if elements as u64 > MAX_ELEMENTS {
        return Err(Error::TooLarge { what: "reduction input".into(), bytes: elements as u64 * 4, limit: MAX_ELEMENTS * 4 });
    }
    Ok(())
}

/// CPU twin: one result per row (indices exact in the f64 for argmin/argmax).
#[cfg(test)]
pub fn cpu(op: ReduceOp, x: &[f32], rows: usize, len: usize) -> Vec<f64> {
    assert_eq!(x.len(), rows * len);
    x.chunks(len).map(|row| op.cpu_line(row.iter().copied())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_arrays_take_two_passes() {
        for &(rows, len) in &[(1u64, 1u64 << 30), (1, 3_000_000), (4096, 1 << 18), (3, 1_000_003)] {
            let p = passes(rows, len);
            assert_eq!(p.len(), 2, "{rows} x {len}: {p:?}");
            assert!(p[0].chunks > 1 && p[1].chunks == 1);
        }
        assert_eq!(passes(1, 4096).len(), 1);
        assert_eq!(passes(100_000, 7).len(), 1);
    }

    #[test]
    fn every_row_is_covered() {
        for &(rows, len) in &[(1u64, 1u64), (5, 7), (3, 17), (9, 4096), (3, 4097), (2, 1 << 20), (7, 1_000_003), (1, 1 << 30)] {
            let p = data_pass(rows, len);
            let span = p.team * LOADS * p.iters;
            // The vec4s any row touches fit in its chunks.
            let worst = (0..rows.min(8)).map(|r| (r * len + len).div_ceil(4) - r * len / 4).max().unwrap();
            assert!(p.chunks * span >= worst, "{rows} x {len}: {p:?}");
            assert!(p.team.is_power_of_two() && p.team <= WG && p.iters >= 1 && p.iters <= MAX_ITERS, "{p:?}");
            assert!(p.team == WG || p.chunks == 1, "{p:?}");
        }
    }

    #[test]
    fn short_rows_share_workgroups() {
        assert_eq!(data_pass(1000, 16), Pass { team: 1, chunks: 1, iters: 1 });
        assert_eq!(data_pass(1000, 64), Pass { team: 4, chunks: 1, iters: 1 });
        assert_eq!(data_pass(1000, 256), Pass { team: 8, chunks: 1, iters: 2 });
        assert_eq!(data_pass(1000, 4096), Pass { team: 64, chunks: 1, iters: 4 });
        assert_eq!(data_pass(1000, 4096).workgroups(1000), 250);
    }
}
