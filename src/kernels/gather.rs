//! `shaders/layout/gather.wgsl`: the general gather behind every layout op. Each output axis walks
//! one input axis (a permutation), from `origin` in steps of `step` (1, or -1 to flip); source
//! coordinates outside the input are folded back by a [`Boundary`] or, in constant mode, replaced
//! by the fill value. Elements move as 32-bit words, so f32, u32, f64 and complex arrays share it.

use bytemuck::{Pod, Zeroable};

use super::boundary::Boundary;
use super::GATHER;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Outputs per thread, as in gather.wgsl.
const PER_THREAD: u32 = 8;

/// Mirrors `Params` in gather.wgsl. Slots are numpy axis order padded on the left to 4D.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub out_dims: [u32; 4],
    pub src_len: [u32; 4],
    pub src_stride: [u32; 4],
    pub origin: [i32; 4],
    pub step: [i32; 4],
    pub group_step: [u32; 4],
    pub count: u32,
    pub fill_lo: u32,
    pub fill_hi: u32,
    pub pad: u32,
}

/// One output axis: its length, the input axis it walks, and the input coordinate of output
/// coordinate `o`, `origin + step * o` (before the boundary folds it into range).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AxisMap {
    pub len: usize,
    pub src_axis: usize,
    pub origin: i64,
    pub step: i64,
}

impl AxisMap {
    /// Output axis = input axis `src_axis` unchanged (length `len`).
    pub fn identity(src_axis: usize, len: usize) -> AxisMap {
        AxisMap { len, src_axis, origin: 0, step: 1 }
    }
}

/// Records `y = gather(x)` into a new temporary of shape `axes[..].len`, same element type.
pub fn record(rec: &mut Recording, x: Buf, axes: &[AxisMap], boundary: Boundary) -> Result<Buf> {
    let dims: Vec<usize> = axes.iter().map(|a| a.len).collect();
    let y = rec.temp(&dims, rec.dtype(x))?;
    record_into(rec, x, y, axes, boundary)?;
    Ok(y)
}

/// Records `y = gather(x)`; `y` has shape `axes[..].len` and `x`'s element type, and is another
/// buffer than `x`.
pub fn record_into(rec: &mut Recording, x: Buf, y: Buf, axes: &[AxisMap], boundary: Boundary) -> Result<()> {
    let dtype = rec.dtype(x);
    rec.expect_dtype(y, dtype, "gather output")?;
    if x == y {
        return Err(Error::Invalid("gather is out of place: the output must be another buffer".into()));
    }
    let out_dims: Vec<usize> = axes.iter().map(|a| a.len).collect();
    if rec.dims(y) != out_dims.as_slice() {
        return Err(Error::Shape(format!("gather output: expected {out_dims:?}, got {:?}", rec.dims(y))));
    }
    let in_dims = rec.dims(x).to_vec();
    check_axes(&in_dims, axes)?;
    let (fill_lo, fill_hi) = fill_words(boundary, dtype)?;
    check_words(in_dims.iter().product(), dtype, "gather input")?;
    check_words(out_dims.iter().product(), dtype, "gather output")?;
    let mut p = Params {
        out_dims: [1; 4],
        src_len: [1; 4],
        src_stride: [0; 4],
        origin: [0; 4],
        step: [0; 4],
        group_step: [0; 4],
        count: out_dims.iter().product::<usize>() as u32,
        fill_lo,
        fill_hi,
        pad: 0,
    };
    let strides = strides(&in_dims);
    let lead = 4 - axes.len();
    for (d, a) in axes.iter().enumerate() {
        p.out_dims[lead + d] = a.len as u32;
        p.src_len[lead + d] = in_dims[a.src_axis] as u32;
        p.src_stride[lead + d] = strides[a.src_axis] as u32;
        p.origin[lead + d] = a.origin as i32;
        p.step[lead + d] = a.step as i32;
    }
    p.group_step = digits(GATHER.threads_per_workgroup() as usize, &p.out_dims);
    let constants = [("ELEM_WORDS", dtype.words() as f64), ("MODE", boundary.code() as f64)];
    let workgroups = GATHER.groups(p.count.div_ceil(PER_THREAD) as u64);
    rec.dispatch(&GATHER, &constants, bytemuck::bytes_of(&p), &[x, y], workgroups);
    Ok(())
}

/// numpy.pad(x, pads) with scipy's `boundary`: `pads` holds (before, after) per axis of x (the
/// caller checks the count).
pub fn pad(rec: &mut Recording, x: Buf, pads: &[(usize, usize)], boundary: Boundary) -> Result<Buf> {
    let dims = rec.dims(x).to_vec();
    let mut maps = Vec::with_capacity(dims.len());
    for (d, (&n, &(before, after))) in dims.iter().zip(pads).enumerate() {
        let len = n.checked_add(before).and_then(|l| l.checked_add(after));
        let (Some(len), Ok(before)) = (len, i64::try_from(before)) else {
            return Err(Error::Invalid(format!("pad widths {pads:?} overflow along axis {d}")));
        };
        maps.push(AxisMap { len, src_axis: d, origin: -before, step: 1 });
    }
    record(rec, x, &maps, boundary)
}

/// The axis maps must name every input axis once, and every coordinate the kernel forms must fit
/// its i32 arithmetic (including 2n for the reflect period).
fn check_axes(in_dims: &[usize], axes: &[AxisMap]) -> Result<()> {
    if axes.len() != in_dims.len() {
        return Err(Error::Invalid(format!("gather: {} axis maps for a {}-D input", axes.len(), in_dims.len())));
    }
    let mut seen = vec![false; in_dims.len()];
    for a in axes {
        if a.src_axis >= in_dims.len() || std::mem::replace(&mut seen[a.src_axis], true) {
            let src: Vec<usize> = axes.iter().map(|a| a.src_axis).collect();
            return Err(Error::Invalid(format!("gather: source axes {src:?} are not a permutation of 0..{}", in_dims.len())));
        }
    }
    const LIMIT: i64 = 1 << 30;
    for a in axes {
        let last = a.origin as i128 + a.step as i128 * (a.len as i128 - 1);
        let fits = |v: i128| v.abs() < LIMIT as i128;
        if !fits(a.origin as i128) || !fits(last) || !fits(a.step as i128) || in_dims[a.src_axis] as i64 >= LIMIT {
            return Err(Error::Invalid(format!("gather: {a:?} reaches coordinates beyond ±2^30")));
        }
    }
    Ok(())
}

/// The element a constant boundary writes, as the kernel's two words: f32 bits, complex
/// (value, 0), f64 (low, high; complex f64: those, then a zero imaginary part), or for u32 arrays the value itself, which must then be a whole number in range.
fn fill_words(boundary: Boundary, dtype: Dtype) -> Result<(u32, u32)> {
    let Boundary::Constant(v) = boundary else { return Ok((0, 0)) };
    match dtype {
        Dtype::F32 | Dtype::C32 => Ok((v.to_bits(), 0)),
        Dtype::F64 | Dtype::C64 => {
            let b = (v as f64).to_bits();
            Ok((b as u32, (b >> 32) as u32))
        }
        Dtype::U32 if v >= 0.0 && v < u32::MAX as f32 && v.fract() == 0.0 => Ok((v as u32, 0)), // 2^32 is excluded
        Dtype::U32 => Err(Error::Invalid(format!("constant {v} cannot pad a u32 array (not a whole number in range)"))),
    }
}

/// The kernel indexes 32-bit words with u32 (with room for one workgroup's stride past the end).
fn check_words(elems: usize, dtype: Dtype, what: &str) -> Result<()> {
    let bytes = elems as u64 * dtype.bytes();
    let limit = (u32::MAX - GATHER.threads_per_workgroup() * PER_THREAD) as u64 * 4;
    if bytes > limit {
        return Err(Error::TooLarge { what: what.into(), bytes, limit });
    }
    Ok(())
}

/// `i` as a coordinate of the 4D shape `dims` (the slowest digit taken modulo its length).
fn digits(mut i: usize, dims: &[u32; 4]) -> [u32; 4] {
    let mut o = [0; 4];
    for d in (0..4).rev() {
        o[d] = (i % dims[d] as usize) as u32;
        i /= dims[d] as usize;
    }
    o
}

/// Row-major strides in elements.
fn strides(dims: &[usize]) -> Vec<usize> {
    let mut s = vec![1; dims.len()];
    for d in (0..dims.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * dims[d + 1];
    }
    s
}

/// The CPU twin: the same gather on the host over row-major data of shape `in_dims`; `fill` is
/// what constant mode writes (the caller's value in the element type). Expects valid `axes`.
#[cfg(test)]
pub fn cpu<T: Copy>(x: &[T], in_dims: &[usize], axes: &[AxisMap], boundary: Boundary, fill: T) -> Vec<T> {
    let strides = strides(in_dims);
    let count: usize = axes.iter().map(|a| a.len).product();
    let mut out = Vec::with_capacity(count);
    let mut o = vec![0usize; axes.len()];
    for _ in 0..count {
        let mut src = Some(0usize);
        for (a, &od) in axes.iter().zip(&o) {
            let c = boundary.fold(a.origin + a.step * od as i64, in_dims[a.src_axis] as i64);
            src = src.zip(c).map(|(s, c)| s + c as usize * strides[a.src_axis]);
        }
        out.push(src.map_or(fill, |s| x[s]));
        // Next output coordinate, fastest axis first.
        for d in (0..o.len()).rev() {
            o[d] += 1;
            if o[d] < axes[d].len {
                break;
            }
            o[d] = 0;
        }
    }
    out
}
