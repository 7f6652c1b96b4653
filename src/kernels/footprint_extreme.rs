//! `shaders/filter/footprint_extreme.wgsl`: the minimum or maximum of x[i + offset] + weight over
//! a footprint's taps, with scipy.ndimage's modes (rank filters, grey and binary morphology).

use bytemuck::{Pod, Zeroable};

use super::boundary::Boundary;
use super::FOOTPRINT_EXTREME;
use crate::error::{Error, Result};
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in footprint_extreme.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub dims: [u32; 4],
    pub count: u32,
    pub taps: u32,
    pub cval: f32,
    pub unused: u32,
    /// The least and greatest offset along each axis (the footprint's bounding box).
    pub lo: [i32; 4],
    pub hi: [i32; 4],
}

/// `y[i] = min (or max) over taps t of x[i + offsets[t]] + weights[t]` for `x` of 1-4 axes
/// (f32, or f64 on devices with it; the weights sent in x's type); `offsets` one per axis of x for each tap.
pub fn record<W: crate::gpu::Real>(rec: &mut Recording, x: Buf, offsets: &[Vec<i64>], weights: &[W], maximum: bool, boundary: Boundary) -> Result<Buf> {
    let dtype = rec.dtype(x);
    let kernel = FOOTPRINT_EXTREME.for_dtype(dtype)?;
    let dims = rec.dims(x).to_vec();
    let d = dims.len();
    if d == 0 || d > 4 || offsets.is_empty() || offsets.len() != weights.len() || offsets.iter().any(|o| o.len() != d) {
        return Err(Error::Shape(format!(
            "a footprint of {} taps over an array of {dims:?}: 1 to 4 axes, one offset per axis and one weight per tap",
            offsets.len()
        )));
    }
    let lead = 4 - d;
    let off = upload_offsets(rec, offsets, d)?;
    let w = rec.upload_as(
        &ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[weights.len()]), weights.iter().map(|&w| w.as_f64()).collect()).expect("one per tap").view(),
        dtype,
    )?;
    let y = rec.temp(&dims, dtype)?;
    let count = dims.iter().product::<usize>();
    let mut p = Params::zeroed();
    for (a, &n) in dims.iter().enumerate() {
        p.dims[lead + a] = n as u32;
    }
    (0..lead).for_each(|a| p.dims[a] = 1);
    (p.count, p.taps, p.cval) = (count as u32, offsets.len() as u32, if let Boundary::Constant(c) = boundary { c } else { 0.0 });
    (p.lo, p.hi) = bounds(offsets, lead);
    let constants = [("MODE", boundary.code() as f64), ("MAXIMUM", f64::from(u8::from(maximum)))];
    rec.dispatch(kernel, &constants, bytemuck::bytes_of(&p), &[x, off, w, y], kernel.groups(count as u64));
    Ok(y)
}

/// The least and greatest offset along each of the four slots (0 included; the `lead` slots
/// padded on the left stay 0): the footprint's bounding box, for the kernels' inside test.
pub(crate) fn bounds(offsets: &[Vec<i64>], lead: usize) -> ([i32; 4], [i32; 4]) {
    let (mut lo, mut hi) = ([0i32; 4], [0i32; 4]);
    for o in offsets {
        for (a, &v) in o.iter().enumerate() {
            (lo[lead + a], hi[lead + a]) = (lo[lead + a].min(v as i32), hi[lead + a].max(v as i32));
        }
    }
    (lo, hi)
}

/// A footprint's offsets on the device as the footprint kernels read them: four f32 per tap (the
/// axes of a `d`-axis array padded with 0 on the left), whole numbers below 2^24.
pub(crate) fn upload_offsets(rec: &mut Recording, offsets: &[Vec<i64>], d: usize) -> Result<Buf> {
    if offsets.iter().flatten().any(|o| o.unsigned_abs() >= 1 << 24) {
        return Err(Error::Invalid("footprint offsets beyond 2^24".into()));
    }
    let lead = 4 - d;
    let flat: Vec<f32> = offsets.iter().flat_map(|o| (0..4).map(move |a| if a < lead { 0.0 } else { o[a - lead] as f32 })).collect();
    rec.upload_f32(&ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[offsets.len(), 4]), flat).expect("4 per tap").view())
}
