//! `shaders/interpolate/phase_ramp.wgsl`: a complex array times a separable phase ramp whose
//! per-axis factors come from a table.

use bytemuck::{Pod, Zeroable};

use super::PHASE_RAMP;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in phase_ramp.wgsl (and fourier_ellipsoid.wgsl).
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub dims: [u32; 4],
    pub start: [u32; 4],
    pub rank: u32,
    pub count: u32,
    pub pad: [u32; 2],
}

/// The parameters of a kernel that reads per-axis tables (each axis' entries one after another)
/// for every element of `x`: its axes, each table's start, the rank and the element count.
pub(crate) fn table_params(rec: &Recording, x: Buf, table: Buf, what: &str) -> Result<Params> {
    let dims = rec.dims(x).to_vec();
    if rec.shape(table).len() != dims.iter().sum::<usize>() {
        return Err(Error::Shape(format!("{what} of {} values for an array of shape {dims:?}", rec.shape(table).len())));
    }
    let mut p = Params::zeroed();
    let mut at = 0;
    for (a, &n) in dims.iter().enumerate() {
        (p.dims[a], p.start[a]) = (n as u32, at as u32);
        at += n;
    }
    (p.rank, p.count) = (dims.len() as u32, rec.shape(x).len() as u32);
    Ok(p)
}

/// `x` (complex, of either precision) times Π_a table[start[a] + k_a] at index k; `table` holds
/// each axis's factors in turn (complex of `x`'s precision, as many as the axis is long).
pub fn record(rec: &mut Recording, x: Buf, table: Buf) -> Result<Buf> {
    let dtype = rec.dtype(x);
    if !matches!(dtype, Dtype::C32 | Dtype::C64) {
        return Err(Error::Dtype(format!("phase ramp input of {dtype:?}: expected complex")));
    }
    rec.expect_dtype(table, dtype, "phase table")?;
    let p = table_params(rec, x, table, "a phase table")?;
    let y = rec.temp_like(x, dtype)?;
    let kernel = PHASE_RAMP.for_dtype(dtype.real())?;
    rec.dispatch(kernel, &[], bytemuck::bytes_of(&p), &[x, table, y], PHASE_RAMP.groups(p.count as u64));
    Ok(y)
}

/// Per-axis factors computed in f64 as a table of the complex type `dtype` (C32 or C64).
pub(crate) fn upload_factors(rec: &mut Recording, factors: Vec<num_complex::Complex64>, dtype: Dtype) -> Result<Buf> {
    let table = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[factors.len()]), factors).expect("one axis");
    let table = crate::gpu::GpuArray::upload_complex_as(rec.gpu(), &table.view(), dtype)?;
    Ok(rec.input(&table))
}
