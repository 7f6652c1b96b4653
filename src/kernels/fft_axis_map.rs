//! `shaders/fft/fft_axis_map.wgsl`: element maps along one axis between FFT passes (Bluestein's
//! chirps, half/full spectrum conversions).

use bytemuck::{Pod, Zeroable};

use super::{groups, FFT_AXIS_MAP};
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
    pub pad0: u32,
    pub pad1: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AxisMap {
    /// y_k = x_k · table_k for k < len_in, zero beyond (len_out ≥ len_in).
    Chirp = 0,
    /// y_k = x_k · table_k.
    Multiply = 1,
    /// y_k = x_k · table_k for k < len_out (len_out ≤ len_in).
    Crop = 2,
    /// Half spectrum (len_in = len_out / 2 + 1) to the full Hermitian one.
    Hermitian = 3,
    /// y_k = x_k for k < len_out.
    Truncate = 4,
    /// Spectrum of 2M reals (k = 0..=M) from the length-M transform of their pairs; table W_2M^k.
    RealPost = 5,
    /// Inverse of `RealPost`: the M-point spectrum of the pairs from k = 0..=M; table W_2M^k.
    RealPre = 6,
}

#[derive(Clone, Debug)]
pub struct Map {
    pub kind: AxisMap,
    pub outer: usize,
    pub len_in: usize,
    pub len_out: usize,
    pub inner: usize,
    pub table: u32,
    pub scale: f32,
    pub conj_in: bool,
    pub conj_out: bool,
}

pub fn record(rec: &mut Recording, m: &Map, src: Buf, dst: Buf, table: Buf) {
    let count = (m.outer * m.len_out * m.inner) as u64;
    let p = Params {
        count: count as u32,
        len_in: m.len_in as u32,
        len_out: m.len_out as u32,
        inner: m.inner as u32,
        table: m.table,
        scale: m.scale,
        ..Default::default()
    };
    let constants = [("MODE", m.kind as u32 as f64), ("CONJ_IN", m.conj_in as u32 as f64), ("CONJ_OUT", m.conj_out as u32 as f64)];
    rec.dispatch(&FFT_AXIS_MAP, &constants, bytemuck::bytes_of(&p), &[src, dst, table], groups(count, 256));
}
