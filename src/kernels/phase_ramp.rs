//! `shaders/interpolate/phase_ramp.wgsl`: a complex array times a separable phase ramp whose
//! per-axis factors come from a table.

use bytemuck::{Pod, Zeroable};

use super::PHASE_RAMP;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in phase_ramp.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub dims: [u32; 4],
    pub start: [u32; 4],
    pub rank: u32,
    pub count: u32,
    pub pad: [u32; 2],
}

/// `x` (complex) times Π_a table[start[a] + k_a] at index k; `table` holds each axis's factors
/// in turn (complex, as many as the axis is long).
pub fn record(rec: &mut Recording, x: Buf, table: Buf) -> Result<Buf> {
    rec.expect_dtype(x, Dtype::C32, "phase ramp input")?;
    rec.expect_dtype(table, Dtype::C32, "phase table")?;
    let dims = rec.dims(x).to_vec();
    if rec.shape(table).len() != dims.iter().sum::<usize>() {
        return Err(Error::Shape(format!("a phase table of {} factors for an array of shape {dims:?}", rec.shape(table).len())));
    }
    let mut p = Params::zeroed();
    let mut at = 0;
    for (a, &n) in dims.iter().enumerate() {
        (p.dims[a], p.start[a]) = (n as u32, at as u32);
        at += n;
    }
    (p.rank, p.count) = (dims.len() as u32, rec.shape(x).len() as u32);
    let y = rec.temp_like(x, Dtype::C32)?;
    rec.dispatch(&PHASE_RAMP, &[], bytemuck::bytes_of(&p), &[x, table, y], PHASE_RAMP.groups(p.count as u64));
    Ok(y)
}
