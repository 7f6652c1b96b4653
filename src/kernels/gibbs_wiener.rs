//! `shaders/deconvolve/gibbs_wiener.wgsl`: one Gibbs step of unsupervised Wiener-Hunt
//! deconvolution (scikit-image's `unsupervised_wiener`) over an rfftn half spectrum: the
//! object's sample, the terms of the next draws' sums, the running sum of samples.

use bytemuck::{Pod, Zeroable};

use super::GIBBS_WIENER;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in gibbs_wiener.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub ndim: u32,
    pub seed: u32,
    pub hermitian: u32,
    pub dims: [u32; 4],
    pub half: [u32; 4],
    pub scale: f32,
    pub unused: [f32; 3],
}

/// The step for the half spectra `spectrum` (the image's, times `scale`) and `transfer` of real
/// arrays of `dims`, the running sum `total` (c32, updated in place) and `state` (u32 × 5: gn
/// and gx as f32 bits, the iteration, the phase, t as f32 bits); returns the terms (f32, 4 ×
/// the half spectrum's length: residual, smoothness, change, size). `hermitian` weighs the
/// frequencies off the first column twice in the first two (scikit-image's image_quad_norm).
#[allow(clippy::too_many_arguments)]
pub fn record(
    rec: &mut Recording,
    spectrum: Buf,
    transfer: Buf,
    total: Buf,
    state: Buf,
    dims: &[usize],
    scale: f32,
    seed: u32,
    hermitian: bool,
) -> Result<Buf> {
    for (b, what) in [(spectrum, "the image's spectrum"), (transfer, "the transfer function"), (total, "the sum of samples")] {
        rec.expect_dtype(b, Dtype::C32, what)?;
        rec.expect_same_shape(spectrum, b, what)?;
    }
    rec.expect_dtype(state, Dtype::U32, "the sampler's state")?;
    if dims.is_empty() || dims.len() > 4 {
        return Err(Error::Shape(format!("a Gibbs step of {dims:?}: 1 to 4 axes")));
    }
    let half: Vec<usize> = dims.iter().enumerate().map(|(a, &n)| if a + 1 == dims.len() { n / 2 + 1 } else { n }).collect();
    if rec.dims(spectrum) != half.as_slice() || rec.shape(state).len() < 5 {
        return Err(Error::Shape(format!("a half spectrum {:?} for an array of {dims:?}, or a short state", rec.dims(spectrum))));
    }
    let count = half.iter().product::<usize>();
    let terms = rec.temp(&[4, count], Dtype::F32)?;
    let four = |v: &[usize]| std::array::from_fn(|a| v.get(a).map_or(1, |&n| n as u32));
    let p = Params {
        count: count as u32,
        ndim: dims.len() as u32,
        seed,
        hermitian: hermitian as u32,
        dims: four(dims),
        half: four(&half),
        scale,
        unused: [0.0; 3],
    };
    rec.dispatch(&GIBBS_WIENER, &[], bytemuck::bytes_of(&p), &[spectrum, transfer, total, terms, state], GIBBS_WIENER.groups(count as u64));
    Ok(terms)
}

/// PCG's output permutation (the kernel's `pcg`).
pub fn pcg(v: u32) -> u32 {
    let s = v.wrapping_mul(747796405).wrapping_add(2891336453);
    let w = ((s >> ((s >> 28) + 4)) ^ s).wrapping_mul(277803737);
    (w >> 22) ^ w
}

/// The two normals the kernel draws for frequency `i` at `iteration` (in f64 from the same
/// 24-bit uniforms).
pub fn normals(seed: u32, iteration: u32, i: u32) -> (f64, f64) {
    let a = pcg(i ^ pcg(iteration ^ pcg(seed)));
    let b = pcg(a);
    let u1 = ((a >> 8) + 1) as f64 / (1u64 << 24) as f64;
    let u2 = (b >> 8) as f64 / (1u64 << 24) as f64;
    let radius = (-2.0 * u1.ln()).sqrt();
    let angle = 2.0 * std::f64::consts::PI * u2;
    (radius * angle.cos(), radius * angle.sin())
}
