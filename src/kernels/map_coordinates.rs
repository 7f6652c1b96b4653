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
    pub order: u32,
    pub mode: u32,
    pub pad: f32,
    pub cval: f32,
    pub unused: [u32; 2],
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
    let mut d = [1u32; 4];
    dims.iter().enumerate().for_each(|(a, &n)| d[a] = n as u32);
    let p = Params { dims: d, rank: dims.len() as u32, points: points as u32, order, mode, pad, cval, unused: [0; 2] };
    rec.dispatch(&MAP_COORDINATES, &[], bytemuck::bytes_of(&p), &[x, coords, out], MAP_COORDINATES.groups(points as u64));
    Ok(out)
}
