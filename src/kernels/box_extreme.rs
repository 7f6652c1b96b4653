//! `shaders/filter/box_extreme.wgsl`: the minimum or maximum over a window along one axis by van
//! Herk and Gil-Werman's blocks (a cost per output independent of the window), with
//! scipy.ndimage's modes: minimum_filter and maximum_filter over boxes, one pass per axis.

use bytemuck::{Pod, Zeroable};

use super::boundary::Boundary;
use super::BOX_EXTREME;
use crate::error::{Error, Result};
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in box_extreme.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub len: u32,
    pub inner: u32,
    pub blocks: u32,
    pub k: u32,
    pub lo: i32,
    pub count: u32,
    pub cval: f32,
    pub unused: u32,
}

/// `y[.., q, ..] = min (or max) over the window [q + lo, q + lo + k) along `axis` of x` (f32, or
/// f64 on devices with it), samples outside the array from `boundary`.
pub fn record(rec: &mut Recording, x: Buf, axis: usize, k: usize, lo: i64, maximum: bool, boundary: Boundary) -> Result<Buf> {
    let dtype = rec.dtype(x);
    let kernel = BOX_EXTREME.for_dtype(dtype)?;
    let dims = rec.dims(x).to_vec();
    if axis >= dims.len() || k == 0 {
        return Err(Error::Invalid(format!("a window of {k} along axis {axis} of an array of {dims:?}")));
    }
    if k >= 1 << 30 || lo.unsigned_abs() >= 1 << 30 {
        return Err(Error::Invalid(format!("a window of {k} starting {lo} away: beyond what the kernel indexes")));
    }
    let (n, inner) = (dims[axis], dims[axis + 1..].iter().product::<usize>());
    let outer: usize = dims[..axis].iter().product();
    let blocks = n.div_ceil(k);
    let count = outer * blocks * inner;
    let y = rec.temp(&dims, dtype)?;
    let cval = if let Boundary::Constant(c) = boundary { c } else { 0.0 };
    let p = Params { len: n as u32, inner: inner as u32, blocks: blocks as u32, k: k as u32, lo: lo as i32, count: count as u32, cval, unused: 0 };
    let constants = [("MODE", boundary.code() as f64), ("MAXIMUM", f64::from(u8::from(maximum)))];
    rec.dispatch(kernel, &constants, bytemuck::bytes_of(&p), &[x, y], kernel.groups(count as u64));
    Ok(y)
}
