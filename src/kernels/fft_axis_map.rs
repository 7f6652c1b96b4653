//! `shaders/fft/fft_axis_map.wgsl`: element maps along one axis between FFT passes (Bluestein's
//! chirps, the untangling of real transforms packed into complex ones).

use bytemuck::{Pod, Zeroable};

use super::FFT_AXIS_MAP;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in fft_axis_map.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub len_in: u32,
    pub len_out: u32,
    pub inner: u32,
    pub table: u32,
    pub scale: f32,
    pub inner_in: u32,
    pub pair_count: u32,
    pub scale_lo: f32,
    pub pad: [u32; 3],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AxisMap {
    /// y_k = x_k · table_k for k < len_in, zero beyond (len_out ≥ len_in).
    Chirp = 0,
    /// y_k = x_k · table_k.
    Multiply = 1,
    /// y_k = x_k · table_k for k < len_out (len_out ≤ len_in).
    Crop = 2,
    /// Spectrum of 2M reals (k = 0..=M) from the length-M transform of their pairs; table W_2M^k.
    RealPost = 3,
    /// Inverse of `RealPost`: the M-point spectrum of the pairs from k = 0..=M; table W_2M^k.
    RealPre = 4,
    /// The half spectra (k < len_out = n/2 + 1) of two real lines a, b from the transform
    /// (length n = len_in) of their packing a + i·b. Needs `pairs`.
    RealPairs = 5,
    /// The packing A + i·B (length n = len_out) of two lines' full Hermitian spectra, from their
    /// halves (len_in = n/2 + 1), for the inverse of `RealPairs`. Needs `pairs`.
    HermitianPairs = 6,
}

/// Which real lines share a complex one in `RealPairs` and `HermitianPairs`, in the real-side
/// (outer, len, inner) view: line b beyond the array (an odd count) is zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pairs {
    /// Rows 2m and 2m + 1, packed as row m of (⌈outer/2⌉, len, inner).
    Rows,
    /// Columns 2c and 2c + 1, packed as column c of (outer, len, ⌈inner/2⌉).
    Columns,
}

impl Pairs {
    /// (outer, inner) of the packed side.
    pub fn packed(self, outer: usize, inner: usize) -> (usize, usize) {
        match self {
            Pairs::Rows => (outer.div_ceil(2), inner),
            Pairs::Columns => (outer, inner.div_ceil(2)),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Map {
    pub kind: AxisMap,
    pub outer: usize,
    pub len_in: usize,
    pub len_out: usize,
    pub inner: usize,
    pub table: u32,
    pub scale: f64,
    pub conj_in: bool,
    pub conj_out: bool,
    /// For `RealPairs` and `HermitianPairs`: how lines pair up; `outer` and `inner` are then the
    /// real side's (the output of `RealPairs`, the input of `HermitianPairs`).
    pub pairs: Option<Pairs>,
}

impl Map {
    /// Shape (outer, len_out, inner) of the output.
    pub fn output(&self) -> [usize; 3] {
        match (self.kind, self.pairs) {
            (AxisMap::HermitianPairs, Some(pairs)) => {
                let (outer, inner) = pairs.packed(self.outer, self.inner);
                [outer, self.len_out, inner]
            }
            _ => [self.outer, self.len_out, self.inner],
        }
    }
}

pub fn record(rec: &mut Recording, m: &Map, src: Buf, dst: Buf, table: Buf) {
    let pairs = matches!(m.kind, AxisMap::RealPairs | AxisMap::HermitianPairs);
    assert_eq!(pairs, m.pairs.is_some(), "pairs go with the pair maps");
    let [_, _, inner] = m.output();
    let inner_in = match (m.kind, m.pairs) {
        (AxisMap::RealPairs, Some(p)) => p.packed(m.outer, m.inner).1,
        _ => m.inner,
    };
    let count = m.output().iter().product::<usize>() as u64;
    let p = Params {
        count: count as u32,
        len_in: m.len_in as u32,
        len_out: m.len_out as u32,
        inner: inner as u32,
        table: m.table,
        scale: crate::gpu::f32_pair(m.scale).0,
        inner_in: inner_in as u32,
        pair_count: match m.pairs {
            Some(Pairs::Rows) => m.outer as u32,
            Some(Pairs::Columns) => m.inner as u32,
            None => 0,
        },
        scale_lo: crate::gpu::f32_pair(m.scale).1,
        pad: [0; 3],
    };
    let code = match m.pairs {
        None => 0,
        Some(Pairs::Rows) => 1,
        Some(Pairs::Columns) => 2,
    };
    let constants = [("MODE", m.kind as u32 as f64), ("CONJ_IN", m.conj_in as u32 as f64), ("CONJ_OUT", m.conj_out as u32 as f64), ("PAIRS", code as f64)];
    // The tables' type is the plan's precision.
    let kernel = FFT_AXIS_MAP.for_dtype(rec.dtype(table).real()).expect("fft_axis_map has an f64 twin");
    rec.dispatch(kernel, &constants, bytemuck::bytes_of(&p), &[src, dst, table], FFT_AXIS_MAP.groups(count));
}
