//! `shaders/filter/edt_axis.wgsl`: one axis of the exact Euclidean distance transform
//! (Felzenszwalb-Huttenlocher lower envelopes, one thread per line).

use bytemuck::{Pod, Zeroable};

use super::EDT_AXIS;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in edt_axis.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub dims: [u32; 4],
    pub axis: u32,
    pub lines: u32,
    pub w2: f32,
    pub w2_lo: f32,
}

/// "Far" (no zero reached yet) in the squared distances.
pub const FAR: f32 = 3.0e38;

/// Squared distances along `axis` (spacing² `w2`) from `f` (with `first`, the input itself: 0 at
/// its zeros, [`FAR`] elsewhere), f32 (or f64 on devices with it) of 1-4 axes.
pub fn record(rec: &mut Recording, f: Buf, axis: usize, w2: f64, first: bool) -> Result<Buf> {
    Ok(pass(rec, f, axis, w2, first, None)?.0)
}

/// [`record`] with the feature transform: also the linear index (u32) of every element's nearest
/// zero, from `near` (the previous pass's; None for the first pass, which reads the input).
pub fn record_features(rec: &mut Recording, f: Buf, near: Option<Buf>, axis: usize, w2: f64) -> Result<(Buf, Buf)> {
    let first = near.is_none();
    let (d, near) = pass(rec, f, axis, w2, first, Some(near))?;
    Ok((d, near.expect("asked for")))
}

fn pass(rec: &mut Recording, f: Buf, axis: usize, w2: f64, first: bool, features: Option<Option<Buf>>) -> Result<(Buf, Option<Buf>)> {
    let dtype = rec.dtype(f);
    let kernel = EDT_AXIS.for_dtype(dtype)?;
    let dims = rec.dims(f).to_vec();
    if dims.is_empty() || dims.len() > 4 || axis >= dims.len() {
        return Err(Error::Shape(format!("an EDT pass along axis {axis} of {dims:?}")));
    }
    if dims.iter().product::<usize>() >= u32::MAX as usize && features.is_some() {
        return Err(Error::TooLarge { what: format!("the feature transform of {dims:?} (u32 indices)"), bytes: 0, limit: u32::MAX as u64 });
    }
    let lead = 4 - dims.len();
    let mut four = [1u32; 4];
    dims.iter().enumerate().for_each(|(a, &n)| four[lead + a] = n as u32);
    let n = dims[axis];
    let lines = dims.iter().product::<usize>() / n;
    let v = rec.temp(&[n + 1, lines], Dtype::U32)?;
    let z = rec.temp(&[n + 1, lines], dtype)?;
    let d = rec.temp(&dims, dtype)?;
    // The indices where asked for, else one-element stand-ins for the bindings.
    let near_out = rec.temp(if features.is_some() { &dims } else { &[1][..] }, Dtype::U32)?;
    let near_in = match features.flatten() {
        Some(b) => {
            rec.expect_dtype(b, Dtype::U32, "nearest zeros")?;
            rec.expect_same_shape(b, f, "nearest zeros")?;
            b
        }
        None => rec.temp(&[1], Dtype::U32)?,
    };
    let (w2, w2_lo) = crate::gpu::f32_pair(w2);
    let p = Params { dims: four, axis: (lead + axis) as u32, lines: lines as u32, w2, w2_lo };
    let constants = [("FIRST", f64::from(u8::from(first))), ("FEATURES", f64::from(u8::from(features.is_some())))];
    rec.dispatch(kernel, &constants, bytemuck::bytes_of(&p), &[f, d, v, z, near_in, near_out], kernel.groups(lines as u64));
    Ok((d, features.map(|_| near_out)))
}
