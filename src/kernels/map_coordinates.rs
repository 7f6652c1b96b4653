//! `shaders/interpolate/map_coordinates.wgsl`: B-spline sampling of an array of 1-4 axes at
//! arbitrary coordinates, one output per thread.

use bytemuck::{Pod, Zeroable};

use super::MAP_COORDINATES;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in map_coordinates.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub dims: [u32; 4],
    pub rank: u32,
    pub points: u32,
    pub pad: f32,
    pub cval: f32,
}

/// The axes of a 1-4-axis array as the sampling kernels see them: four, leading ones of 1.
pub(crate) fn as_four(dims: &[usize]) -> [u32; 4] {
    let mut d = [1u32; 4];
    d[4 - dims.len()..].iter_mut().zip(dims).for_each(|(d, &n)| *d = n as u32);
    d
}

/// The sampling kernels' specialisation (common/bspline.wgsl): the mode's code and the taps
/// (order + 1) along each of the four axes, leading ones 1.
pub(crate) fn specialisation(mode: u32, orders: &[u32]) -> Vec<(&'static str, f64)> {
    let mut taps = [1.0; 4];
    taps[4 - orders.len()..].iter_mut().zip(orders).for_each(|(t, &o)| *t = o as f64 + 1.0);
    vec![("MODE", mode as f64), ("T0", taps[0]), ("T1", taps[1]), ("T2", taps[2]), ("T3", taps[3])]
}

/// `x` (f32, 1-4 axes) sampled at `coords` (f32, shape (rank, points...)); `mode` is the
/// kernel's code, `pad` is added to every coordinate. The output has coords' shape after its
/// first axis.
pub fn record(rec: &mut Recording, x: Buf, coords: Buf, order: u32, mode: u32, pad: f32, cval: f32) -> Result<Buf> {
    rec.expect_dtype(x, Dtype::F32, "sampled array")?;
    rec.expect_dtype(coords, Dtype::F32, "coordinates")?;
    let (dims, cdims) = (rec.dims(x).to_vec(), rec.dims(coords).to_vec());
    if cdims[0] != dims.len() || cdims.len() < 2 {
        return Err(Error::Shape(format!("coordinates of shape {cdims:?} for a {}-axis array: the first axis must be {}", dims.len(), dims.len())));
    }
    let points: usize = cdims[1..].iter().product();
    if points > u32::MAX as usize {
        return Err(Error::TooLarge { what: format!("{points} samples in one dispatch"), bytes: points as u64 * 4, limit: u32::MAX as u64 * 4 });
    }
    let out = rec.temp(&cdims[1..], Dtype::F32)?;
    let p = Params { dims: as_four(&dims), rank: dims.len() as u32, points: points as u32, pad, cval };
    let constants = specialisation(mode, &vec![order; dims.len()]);
    rec.dispatch(&MAP_COORDINATES, &constants, bytemuck::bytes_of(&p), &[x, coords, out], MAP_COORDINATES.groups(points as u64));
    Ok(out)
}
