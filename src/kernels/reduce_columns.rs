//! `shaders/reduce/reduce_columns.wgsl`: sum, min, max, argmin or argmax along the middle axis
//! of an (outer, len, inner) row-major f32 array, one thread per column (coalesced reads). When
//! there are too few columns to fill the GPU, the axis is split into chunks and further passes
//! reduce the (outer, chunks, inner) partials.

use bytemuck::{Pod, Zeroable};

use super::reduce_rows::{check_geometry, ReduceOp};
use super::REDUCE_COLUMNS;
use crate::error::Result;
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in reduce_columns.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub outer: u32,
    pub len: u32,
    pub inner: u32,
    pub chunk_len: u32,
    pub chunks: u32,
    pub finish: u32,
    /// Always 1.0 (see `opaque` in shaders/common/reduce.wgsl).
    pub one: f32,
    pub pad: u32,
}

/// Below this many threads a pass splits the axis into chunks, if the axis is long enough.
const TARGET_THREADS: u64 = 1 << 18;
/// The shortest chunk worth a thread of its own.
const MIN_CHUNK: u64 = 64;

/// How one pass splits each column: `chunks` pieces of `chunk_len` elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pass {
    pub chunk_len: u64,
    pub chunks: u64,
}

pub fn pass(columns: u64, len: u64) -> Pass {
    if columns >= TARGET_THREADS || len <= MIN_CHUNK {
        return Pass { chunk_len: len, chunks: 1 };
    }
    let chunks = len.div_ceil(MIN_CHUNK).min(TARGET_THREADS.div_ceil(columns));
    let chunk_len = len.div_ceil(chunks);
    Pass { chunk_len, chunks: len.div_ceil(chunk_len) }
}

/// Records the reduction of axis 1 of `x` (f32, viewed as `outer` x `len` x `inner`) into `y`
/// (`outer * inner` elements of `op.output_dtype()`).
pub fn record_into(rec: &mut Recording, op: ReduceOp, x: Buf, y: Buf, outer: usize, len: usize, inner: usize) -> Result<()> {
    check_geometry(rec, op, x, y, outer * len * inner, outer * inner)?;
    let (outer, inner) = (outer as u64, inner as u64);
    let mut input = x;
    let mut len = len as u64;
    let mut first = true;
    loop {
        let pass = pass(outer * inner, len);
        let finish = pass.chunks == 1;
        let threads = outer * pass.chunks * inner;
        let output = if finish { y } else { rec.temp(&[(threads * 2) as usize], Dtype::U32)? };
        let p = Params {
            outer: outer as u32,
            len: len as u32,
            inner: inner as u32,
            chunk_len: pass.chunk_len as u32,
            chunks: pass.chunks as u32,
            finish: finish as u32,
            one: 1.0,
            pad: 0,
        };
        let constants = [("OP", op.code() as f64), ("FIRST", first as u32 as f64), ("PRE", op.pre() as f64)];
        rec.dispatch(&REDUCE_COLUMNS, &constants, bytemuck::bytes_of(&p), &[input, output], REDUCE_COLUMNS.groups(threads));
        if finish {
            return Ok(());
        }
        input = output;
        len = pass.chunks;
        first = false;
    }
}

/// Records the reduction into a new array of `outer * inner` elements.
#[cfg(test)]
pub fn record(rec: &mut Recording, op: ReduceOp, x: Buf, outer: usize, len: usize, inner: usize) -> Result<Buf> {
    let y = rec.temp(&[outer * inner], op.output_dtype())?;
    record_into(rec, op, x, y, outer, len, inner)?;
    Ok(y)
}

/// CPU twin: one result per (outer, inner) column, in that order.
pub fn cpu(op: ReduceOp, x: &[f32], outer: usize, len: usize, inner: usize) -> Vec<f64> {
    assert_eq!(x.len(), outer * len * inner);
    let column = |o: usize, i: usize| op.cpu_line((0..len).map(move |k| x[(o * len + k) * inner + i]));
    (0..outer).flat_map(|o| (0..inner).map(move |i| column(o, i))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn few_long_columns_are_split() {
        assert_eq!(pass(1 << 20, 1000).chunks, 1);
        assert_eq!(pass(3, 50).chunks, 1);
        let p = pass(3, 1_000_000);
        assert!(p.chunks > 1 && p.chunk_len >= MIN_CHUNK && p.chunks * p.chunk_len >= 1_000_000);
        assert!((p.chunks - 1) * p.chunk_len < 1_000_000, "no empty chunk: {p:?}");
    }
}
