//! Layout operations on f32, complex and u32 arrays of 1-4 axes: permute (transpose), pad, crop,
//! flip, roll, fftshift and ifftshift, with numpy's and scipy.ndimage's semantics. Each is one
//! dispatch of the general gather kernel ([`crate::kernels::gather`]): an op only says, per output
//! axis, which input axis it walks, from which coordinate, in which direction, and how to treat
//! coordinates outside the input ([`Boundary`], shared with the spatial filters; it lives in
//! `kernels::boundary`, the CPU twin of `shaders/common/boundary.wgsl`).
//!
//! `cpu` holds references written independently of the kernel's index math (ndarray slicing,
//! concatenation and step-by-step boundary walks), which the tests compare against.

pub mod chunks;
pub mod cpu;

use crate::error::{Error, Result};
use crate::graph::{Buf, Recording};
use crate::kernels::gather::{self, AxisMap};

use crate::kernels::boundary::Boundary;

/// numpy.transpose(x, axes): output axis d is input axis `axes[d]`.
pub fn permute(rec: &mut Recording, x: Buf, axes: &[usize]) -> Result<Buf> {
    let dims = rec.dims(x).to_vec();
    if axes.len() != dims.len() {
        return Err(Error::Invalid(format!("permute: {axes:?} is not a permutation of the {} axes of a {dims:?} array", dims.len())));
    }
    check_axes(&dims, axes, "permute")?;
    let maps: Vec<AxisMap> = axes.iter().map(|&a| AxisMap::identity(a, dims[a])).collect();
    gather::record(rec, x, &maps, Boundary::Constant(0.0))
}

/// numpy's `x.T`: the axes in reverse order.
pub fn transpose(rec: &mut Recording, x: Buf) -> Result<Buf> {
    let axes: Vec<usize> = (0..rec.dims(x).len()).rev().collect();
    permute(rec, x, &axes)
}

/// numpy.pad: `pads[d] = (before, after)` elements added along axis d, filled as `boundary` says
/// (any width, also wider than the array).
pub fn pad(rec: &mut Recording, x: Buf, pads: &[(usize, usize)], boundary: Boundary) -> Result<Buf> {
    let dims = rec.dims(x).to_vec();
    expect_per_axis(&dims, pads.len(), "pad widths")?;
    gather::pad(rec, x, pads, boundary)
}

/// The window `start[d] .. start[d] + size[d]` along every axis; it must lie inside the array.
pub fn crop(rec: &mut Recording, x: Buf, start: &[usize], size: &[usize]) -> Result<Buf> {
    let dims = rec.dims(x).to_vec();
    expect_per_axis(&dims, start.len(), "crop start")?;
    expect_per_axis(&dims, size.len(), "crop size")?;
    if size.contains(&0) {
        return Err(Error::Empty(format!("crop size {size:?} has no elements")));
    }
    for d in 0..dims.len() {
        if start[d].checked_add(size[d]).is_none_or(|end| end > dims[d]) {
            return Err(Error::Invalid(format!("crop window start {start:?} size {size:?} leaves the {dims:?} array along axis {d}")));
        }
    }
    let maps: Vec<AxisMap> = (0..dims.len()).map(|d| AxisMap { len: size[d], src_axis: d, origin: start[d] as i64, step: 1 }).collect();
    gather::record(rec, x, &maps, Boundary::Constant(0.0))
}

/// numpy's basic slicing: along each axis `len` elements from `start` in steps of `step`
/// (negative walks backwards), as Python's `slice.indices` gives them; every read inside the array.
pub fn slice(rec: &mut Recording, x: Buf, axes: &[(usize, i64, usize)]) -> Result<Buf> {
    let dims = rec.dims(x).to_vec();
    expect_per_axis(&dims, axes.len(), "slices")?;
    let mut maps = Vec::with_capacity(dims.len());
    for (d, &(start, step, len)) in axes.iter().enumerate() {
        let last = start as i64 + step * (len as i64 - 1);
        if len == 0 || step == 0 || start >= dims[d] || last < 0 || last >= dims[d] as i64 {
            return Err(Error::Invalid(format!("slice of {len} from {start} by {step} leaves axis {d} of {} elements (or is empty)", dims[d])));
        }
        maps.push(AxisMap { len, src_axis: d, origin: start as i64, step });
    }
    gather::record(rec, x, &maps, Boundary::Constant(0.0))
}

/// numpy.concatenate(parts, axis=0): arrays of one type whose other axes agree, one after the
/// other in a new array (chunks along axis 0 joined into one buffer).
pub fn concatenate(rec: &mut Recording, parts: &[Buf]) -> Result<Buf> {
    let first = *parts.first().ok_or_else(|| Error::Empty("nothing to concatenate".into()))?;
    let (dtype, tail) = (rec.dtype(first), rec.dims(first)[1..].to_vec());
    let mut rows = 0;
    for &p in parts {
        rec.expect_dtype(p, dtype, "concatenated part")?;
        if rec.dims(p)[1..] != tail[..] {
            return Err(Error::Shape(format!("parts {:?} and {:?} differ beyond axis 0", rec.dims(first), rec.dims(p))));
        }
        rows += rec.dims(p)[0];
    }
    let mut dims = vec![rows];
    dims.extend_from_slice(&tail);
    let out = rec.temp(&dims, dtype)?;
    let mut at = 0;
    for &p in parts {
        let n = rec.shape(p).len();
        crate::kernels::copy_range::record(rec, p, 0, out, at, n)?;
        at += n;
    }
    Ok(out)
}

/// numpy.flip(x, axes): reverses the listed axes (each at most once).
pub fn flip(rec: &mut Recording, x: Buf, axes: &[usize]) -> Result<Buf> {
    let dims = rec.dims(x).to_vec();
    check_axes(&dims, axes, "flip")?;
    let maps: Vec<AxisMap> = (0..dims.len())
        .map(|d| if axes.contains(&d) { AxisMap { len: dims[d], src_axis: d, origin: dims[d] as i64 - 1, step: -1 } } else { AxisMap::identity(d, dims[d]) })
        .collect();
    gather::record(rec, x, &maps, Boundary::Constant(0.0))
}

/// numpy.roll(x, shifts, axes): element i moves to i + shift (circularly) along each listed axis.
/// As in numpy, an axis listed more than once is shifted by the sum of its shifts.
pub fn roll(rec: &mut Recording, x: Buf, shifts: &[isize], axes: &[usize]) -> Result<Buf> {
    let dims = rec.dims(x).to_vec();
    if shifts.len() != axes.len() {
        return Err(Error::Invalid(format!("roll: {} shifts for {} axes", shifts.len(), axes.len())));
    }
    check_in_range(&dims, axes, "roll")?;
    let mut total = vec![0i64; dims.len()];
    for (&s, &a) in shifts.iter().zip(axes) {
        total[a] = (total[a] + (s as i64).rem_euclid(dims[a] as i64)) % dims[a] as i64;
    }
    circular_shift(rec, x, &total)
}

/// numpy.fft.fftshift(x, axes): the zero frequency moves to index n / 2 (rounded down) of each
/// listed axis; `&[]` shifts nothing, pass every axis for numpy's default.
pub fn fftshift(rec: &mut Recording, x: Buf, axes: &[usize]) -> Result<Buf> {
    half_shift(rec, x, axes, 1, "fftshift")
}

/// numpy.fft.ifftshift(x, axes): the inverse of [`fftshift`] (they differ on odd lengths).
pub fn ifftshift(rec: &mut Recording, x: Buf, axes: &[usize]) -> Result<Buf> {
    half_shift(rec, x, axes, -1, "ifftshift")
}

/// Rolls each listed axis by `sign * (n / 2)`.
fn half_shift(rec: &mut Recording, x: Buf, axes: &[usize], sign: i64, what: &str) -> Result<Buf> {
    let dims = rec.dims(x).to_vec();
    check_axes(&dims, axes, what)?;
    let shifts: Vec<i64> = (0..dims.len()).map(|d| if axes.contains(&d) { (sign * (dims[d] / 2) as i64).rem_euclid(dims[d] as i64) } else { 0 }).collect();
    circular_shift(rec, x, &shifts)
}

/// out[i] = x[(i - shift) mod n] per axis, with shifts already in `0..n`.
fn circular_shift(rec: &mut Recording, x: Buf, shifts: &[i64]) -> Result<Buf> {
    let dims = rec.dims(x).to_vec();
    let maps: Vec<AxisMap> = (0..dims.len()).map(|d| AxisMap { len: dims[d], src_axis: d, origin: -shifts[d], step: 1 }).collect();
    gather::record(rec, x, &maps, Boundary::Wrap)
}

fn expect_per_axis(dims: &[usize], got: usize, what: &str) -> Result<()> {
    if got != dims.len() {
        return Err(Error::Invalid(format!("{what}: {got} values for the {} axes of a {dims:?} array", dims.len())));
    }
    Ok(())
}

fn check_in_range(dims: &[usize], axes: &[usize], what: &str) -> Result<()> {
    if let Some(a) = axes.iter().find(|&&a| a >= dims.len()) {
        return Err(Error::Invalid(format!("{what}: axis {a} is out of range for a {dims:?} array")));
    }
    Ok(())
}

/// Every axis in range and listed at most once.
fn check_axes(dims: &[usize], axes: &[usize], what: &str) -> Result<()> {
    check_in_range(dims, axes, what)?;
    for (i, a) in axes.iter().enumerate() {
        if axes[..i].contains(a) {
            return Err(Error::Invalid(format!("{what}: axis {a} is repeated in {axes:?}")));
        }
    }
    Ok(())
}
