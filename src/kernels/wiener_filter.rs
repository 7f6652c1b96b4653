//! `shaders/deconvolve/wiener_filter.wgsl`: Wiener-Hunt deconvolution's filter with the
//! Laplacian regulariser (scikit-image's `wiener`), on an rfftn half spectrum.

use bytemuck::{Pod, Zeroable};

use super::WIENER_FILTER;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in wiener_filter.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub ndim: u32,
    pub unused0: [u32; 2],
    pub dims: [u32; 4],
    pub half: [u32; 4],
    pub balance: f32,
    pub unused1: [f32; 3],
}

/// Y · conj(H) / (|H|² + balance |L|²) for the half spectra `spectrum` (Y) and `transfer` (H)
/// of real arrays of `dims` (1 to 4 axes), c32.
pub fn record(rec: &mut Recording, spectrum: Buf, transfer: Buf, dims: &[usize], balance: f32) -> Result<Buf> {
    rec.expect_dtype(spectrum, Dtype::C32, "the image's spectrum")?;
    rec.expect_dtype(transfer, Dtype::C32, "the transfer function")?;
    rec.expect_same_shape(spectrum, transfer, "Wiener filter spectra")?;
    if dims.is_empty() || dims.len() > 4 {
        return Err(Error::Shape(format!("a Wiener filter of {dims:?}: 1 to 4 axes")));
    }
    let half: Vec<usize> = dims.iter().enumerate().map(|(a, &n)| if a + 1 == dims.len() { n / 2 + 1 } else { n }).collect();
    if rec.dims(spectrum) != half.as_slice() {
        return Err(Error::Shape(format!("a half spectrum {:?} for an array of {dims:?}", rec.dims(spectrum))));
    }
    let out = rec.temp_like(spectrum, Dtype::C32)?;
    let count = half.iter().product::<usize>();
    let four = |v: &[usize]| std::array::from_fn(|a| v.get(a).map_or(1, |&n| n as u32));
    let p = Params { count: count as u32, ndim: dims.len() as u32, unused0: [0; 2], dims: four(dims), half: four(&half), balance, unused1: [0.0; 3] };
    rec.dispatch(&WIENER_FILTER, &[], bytemuck::bytes_of(&p), &[spectrum, transfer, out], WIENER_FILTER.groups(count as u64));
    Ok(out)
}
