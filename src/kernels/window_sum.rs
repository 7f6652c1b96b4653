//! `shaders/registration/window_sum.wgsl`: sums over every window of `m` elements along one axis
//! (the 'valid' positions), in double-single arithmetic: an f32 pair per value, hi + lo.

use bytemuck::{Pod, Zeroable};

use super::WINDOW_SUM;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Outputs per thread along an axis with inner elements (RUN in window_sum.wgsl): consecutive
/// threads then read consecutive addresses at every step.
const RUN: usize = 32;

/// Mirrors `Params` in window_sum.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub outer: u32,
    pub n: u32,
    pub inner: u32,
    pub m: u32,
    pub out_n: u32,
    pub count: u32,
    /// 1.0, opaque to the shader compiler (see common/double_single.wgsl).
    pub one: f32,
    pub unused: u32,
}

/// What a pass sums.
#[derive(Clone, Copy, Debug)]
pub enum Input {
    /// One f32 array's values.
    Values(Buf),
    /// One f32 array's squares (each exact as a pair).
    Squares(Buf),
    /// A double-single array: its high and low parts.
    Pairs(Buf, Buf),
}

/// The window sums along `axis` of windows of `m`: a pair (hi, lo) of f32 arrays whose length
/// along `axis` is n - m + 1.
pub fn record(rec: &mut Recording, input: Input, axis: usize, m: usize) -> Result<(Buf, Buf)> {
    let (hi, lo, first, square) = match input {
        Input::Values(x) => (x, x, 1, 0),
        Input::Squares(x) => (x, x, 1, 1),
        Input::Pairs(h, l) => (h, l, 0, 0),
    };
    rec.expect_dtype(hi, Dtype::F32, "window sum input")?;
    rec.expect_same_shape(hi, lo, "window sum pair")?;
    let dims = rec.dims(hi).to_vec();
    let n = *dims.get(axis).ok_or_else(|| Error::Shape(format!("axis {axis} of {dims:?}")))?;
    if m == 0 || m > n {
        return Err(Error::Shape(format!("windows of {m} along axis {axis} of {dims:?}")));
    }
    let mut out = dims.clone();
    out[axis] = n - m + 1;
    // Threads: one per run of outputs along the axis.
    let inner = dims[axis + 1..].iter().product::<usize>();
    let run = if inner > 1 { RUN } else { 1 };
    let count = dims[..axis].iter().product::<usize>() * out[axis].div_ceil(run) * inner;
    let p = Params {
        outer: dims[..axis].iter().product::<usize>() as u32,
        n: n as u32,
        inner: dims[axis + 1..].iter().product::<usize>() as u32,
        m: m as u32,
        out_n: out[axis] as u32,
        count: count as u32,
        one: 1.0,
        unused: 0,
    };
    let (out_hi, out_lo) = (rec.temp(&out, Dtype::F32)?, rec.temp(&out, Dtype::F32)?);
    let constants = [("FIRST", first as f64), ("SQUARE", square as f64), ("RUN", run as f64)];
    rec.dispatch(&WINDOW_SUM, &constants, bytemuck::bytes_of(&p), &[hi, lo, out_hi, out_lo], WINDOW_SUM.groups(count as u64));
    Ok((out_hi, out_lo))
}
