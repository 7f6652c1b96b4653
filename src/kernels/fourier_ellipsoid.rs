//! `shaders/filter/fourier_ellipsoid.wgsl`: a complex spectrum of 1-3 axes times the transform
//! of an ellipsoid, from per-axis tables of π · size · frequency.

use bytemuck::Zeroable;

use super::phase_ramp::Params;
use super::FOURIER_ELLIPSOID;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// `x` (complex, 1-3 axes) times the ellipsoid's transform at r = sqrt(Σ_a table[start[a] +
/// k_a]²); `table` (f32) holds each axis's values in turn, as many as the axis is long.
pub fn record(rec: &mut Recording, x: Buf, table: Buf) -> Result<Buf> {
    rec.expect_dtype(x, Dtype::C32, "fourier_ellipsoid input")?;
    rec.expect_dtype(table, Dtype::F32, "fourier_ellipsoid table")?;
    let dims = rec.dims(x).to_vec();
    if dims.len() > 3 {
        return Err(Error::Invalid(format!("fourier_ellipsoid: a spectrum of {} axes (1, 2 or 3, as scipy)", dims.len())));
    }
    if rec.shape(table).len() != dims.iter().sum::<usize>() {
        return Err(Error::Shape(format!("an ellipsoid table of {} values for an array of shape {dims:?}", rec.shape(table).len())));
    }
    // The same layout as the phase ramp's parameters (dims, table starts, rank, count).
    let mut p = Params::zeroed();
    let mut at = 0;
    for (a, &n) in dims.iter().enumerate() {
        (p.dims[a], p.start[a]) = (n as u32, at as u32);
        at += n;
    }
    (p.rank, p.count) = (dims.len() as u32, rec.shape(x).len() as u32);
    let y = rec.temp_like(x, Dtype::C32)?;
    rec.dispatch(&FOURIER_ELLIPSOID, &[], bytemuck::bytes_of(&p), &[x, table, y], FOURIER_ELLIPSOID.groups(p.count as u64));
    Ok(y)
}
