//! `shaders/registration/peak_neighbours.wgsl`: a correlation map's peak and its neighbours
//! along each axis, gathered on the device at a device-side index.

use bytemuck::{Pod, Zeroable};

use super::PEAK_NEIGHBOURS;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in peak_neighbours.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub dims: [u32; 4],
    pub rank: u32,
    pub at: u32,
    pub len: u32,
    pub unused: u32,
}

/// Values written per peak for a map of `rank` axes: the flat index's bits, |peak|, then each
/// axis' lower and upper neighbour's magnitude.
pub fn slots(rank: usize) -> usize {
    2 + 2 * rank
}

/// Writes, from element `at` of `out` (f32), the flat index `index` (u32, one element) as its
/// bits, |map| there, and |map| one step below and above along each axis (wrapped).
pub fn record_into(rec: &mut Recording, map: Buf, index: Buf, out: Buf, at: usize) -> Result<()> {
    rec.expect_dtype(map, Dtype::F32, "correlation map")?;
    rec.expect_dtype(index, Dtype::U32, "peak index")?;
    rec.expect_dtype(out, Dtype::F32, "peak results")?;
    let dims = rec.dims(map).to_vec();
    let (len, rank) = (rec.shape(map).len(), dims.len());
    if !(1..=4).contains(&rank) || len > u32::MAX as usize || at + slots(rank) > rec.shape(out).len() {
        return Err(Error::Invalid(format!("peak neighbours of a {dims:?} map at {at} of {} results", rec.shape(out).len())));
    }
    let mut padded = [1u32; 4];
    for (a, &n) in dims.iter().enumerate() {
        padded[4 - rank + a] = n as u32;
    }
    let p = Params { dims: padded, rank: rank as u32, at: at as u32, len: len as u32, unused: 0 };
    rec.dispatch(&PEAK_NEIGHBOURS, &[], bytemuck::bytes_of(&p), &[map, index, out], 1);
    Ok(())
}

/// The CPU twin: the values [`record_into`] writes, for a map of `dims` and a flat index.
pub fn cpu(map: &[f64], dims: &[usize], flat: usize) -> Vec<f64> {
    let mut out = vec![flat as f64, map[flat].abs()];
    let mut stride = 1;
    let mut strides = vec![0; dims.len()];
    for a in (0..dims.len()).rev() {
        strides[a] = stride;
        stride *= dims[a];
    }
    for (a, &n) in dims.iter().enumerate() {
        let i = (flat / strides[a]) % n;
        for moved in [(i + n - 1) % n, (i + 1) % n] {
            out.push(map[flat - i * strides[a] + moved * strides[a]].abs());
        }
    }
    out
}
