//! `shaders/filter/fourier_ellipsoid.wgsl`: a complex spectrum of 1-3 axes times the transform
//! of an ellipsoid, from per-axis tables of π · size · frequency.

use super::FOURIER_ELLIPSOID;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// `x` (complex, 1-3 axes) times the ellipsoid's transform at r = sqrt(Σ_a table[start[a] +
/// k_a]²); `table` (f32) holds each axis's values in turn, as many as the axis is long.
pub fn record(rec: &mut Recording, x: Buf, table: Buf) -> Result<Buf> {
    rec.expect_dtype(x, Dtype::C32, "fourier_ellipsoid input")?;
    rec.expect_dtype(table, Dtype::F32, "fourier_ellipsoid table")?;
    if rec.dims(x).len() > 3 {
        return Err(Error::Invalid(format!("fourier_ellipsoid: a spectrum of {} axes (1, 2 or 3, as scipy)", rec.dims(x).len())));
    }
    let p = super::phase_ramp::table_params(rec, x, table, "an ellipsoid table")?;
    let y = rec.temp_like(x, Dtype::C32)?;
    rec.dispatch(&FOURIER_ELLIPSOID, &[], bytemuck::bytes_of(&p), &[x, table, y], FOURIER_ELLIPSOID.groups(p.count as u64));
    Ok(y)
}
