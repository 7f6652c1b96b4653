//! The adaptive filter's kernels (`shaders/denoise/*.wgsl`): the structure tensor from packed
//! monomial responses, normalised convolution's division for a stack of arrays, the control
//! tensor's reconstruction weights, and one pair of reconstruction responses added into the
//! result (src/ops/denoise/gpu.rs plans them). Stacks hold their arrays one after another in
//! one buffer.

use bytemuck::{Pod, Zeroable};

use super::{DENOISE_ACCUMULATE, DENOISE_CONTROL, DENOISE_DIRECT, DENOISE_NORMALIZE, DENOISE_STRUCTURE};
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in denoise_structure.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct StructureParams {
    pub count: u32,
    pub unused: [u32; 3],
    pub inverse_scales: [f32; 8],
}

/// Mirrors `Params` in denoise_normalize.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct NormalizeParams {
    pub count: u32,
    pub arrays: u32,
}

/// Mirrors `Params` in denoise_control.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct ControlParams {
    pub count: u32,
    pub largest: f32,
    pub sigma: f32,
    pub alpha: f32,
    pub beta: f32,
    pub isotropy_alpha: f32,
    pub isotropy_beta: f32,
    pub gamma0: f32,
    pub coefficients: [f32; 100],
}

/// Mirrors `Params` in denoise_direct.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct DirectParams {
    pub dims: [u32; 4],
    pub padded: [u32; 4],
    pub taps: [u32; 4],
    pub count: u32,
    pub filters: u32,
    pub unused: [u32; 2],
}

/// The most filters [`direct`] takes.
pub const DIRECT_FILTERS: usize = 16;

/// Mirrors `Params` in denoise_accumulate.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct AccumulateParams {
    pub dims: [u32; 4],
    pub low_dims: [u32; 4],
    pub full_start: [u32; 4],
    pub low_start: [u32; 4],
    pub low_total: [u32; 4],
    pub factors: [u32; 4],
    pub count: u32,
    pub low_count: u32,
    pub a: u32,
    pub b: u32,
    pub inverse_scale: f32,
    pub accumulate: u32,
    pub pair_at: u32,
    pub unused: u32,
}

/// Per-axis values of an array of up to four axes as the kernels take them: padded to four at
/// the front with `fill`.
pub fn four(v: &[usize], fill: u32) -> [u32; 4] {
    let mut a = [fill; 4];
    for (k, &n) in v.iter().enumerate() {
        a[4 - v.len() + k] = n as u32;
    }
    a
}

/// The index of a pair with one response in [`AccumulateParams::b`].
pub const NO_RESPONSE: u32 = u32::MAX;

fn count_of(rec: &Recording, x: Buf, per: usize, what: &str) -> Result<u32> {
    let len = rec.shape(x).len();
    if per == 0 || !len.is_multiple_of(per) || len / per > u32::MAX as usize / 16 {
        return Err(Error::Shape(format!("{what}: {len} values are not {per} arrays of at most {} samples", u32::MAX as usize / 16)));
    }
    Ok((len / per) as u32)
}

/// The structure tensor's d(d+1)/2 components (a stack) from the monomial responses packed in
/// pairs (a complex stack of ⌈(d + d(d+1)/2)/2⌉ arrays; `inverse_scales[q]` undoes pair q's
/// scaling of its imaginary part).
pub fn structure(rec: &mut Recording, responses: Buf, d: usize, inverse_scales: &[f32]) -> Result<Buf> {
    rec.expect_dtype(responses, Dtype::C32, "monomial responses")?;
    let pairs = (d + d * (d + 1) / 2).div_ceil(2);
    if !(2..=4).contains(&d) || inverse_scales.len() != pairs {
        return Err(Error::Invalid(format!("structure tensor of {d} axes from {} pairs", inverse_scales.len())));
    }
    let count = count_of(rec, responses, pairs, "monomial responses")?;
    let components = d * (d + 1) / 2;
    let tensor = rec.temp(&[components * count as usize], Dtype::F32)?;
    let mut p = StructureParams { count, unused: [0; 3], inverse_scales: [1.0; 8] };
    p.inverse_scales[..pairs].copy_from_slice(inverse_scales);
    rec.dispatch(&DENOISE_STRUCTURE, &[("DIMS", d as f64)], bytemuck::bytes_of(&p), &[responses, tensor], DENOISE_STRUCTURE.groups(count as u64));
    Ok(tensor)
}

/// Every array of the f32 stack `x` divided by `w`, sample by sample.
pub fn normalize(rec: &mut Recording, x: Buf, w: Buf) -> Result<Buf> {
    rec.expect_dtype(x, Dtype::F32, "normalised stack")?;
    rec.expect_dtype(w, Dtype::F32, "certainty")?;
    let count = rec.shape(w).len();
    let arrays = rec.shape(x).len() / count.max(1);
    count_of(rec, x, count, "normalised stack")?;
    let out = rec.temp(&[rec.shape(x).len()], Dtype::F32)?;
    let p = NormalizeParams { count: count as u32, arrays: arrays as u32 };
    rec.dispatch(&DENOISE_NORMALIZE, &[], bytemuck::bytes_of(&p), &[x, w, out], DENOISE_NORMALIZE.groups(rec.shape(x).len() as u64));
    Ok(out)
}

/// The reconstruction weights (a stack of d(d+1)/2 arrays) from the structure tensor's
/// components; `p.count` is set here.
pub fn control(rec: &mut Recording, tensor: Buf, d: usize, p: &ControlParams) -> Result<Buf> {
    rec.expect_dtype(tensor, Dtype::F32, "structure tensor")?;
    let components = d * (d + 1) / 2;
    let count = count_of(rec, tensor, components, "structure tensor")?;
    let weights = rec.temp(&[rec.shape(tensor).len()], Dtype::F32)?;
    let p = ControlParams { count, ..*p };
    rec.dispatch(&DENOISE_CONTROL, &[("DIMS", d as f64)], bytemuck::bytes_of(&p), &[tensor, weights], DENOISE_CONTROL.groups(count as u64));
    Ok(weights)
}

/// One pair of reconstruction responses (complex, the window's shape) added into `out` (f32,
/// the same count; written, not added to, when `p.accumulate` is 0).
pub fn accumulate(rec: &mut Recording, pair: Buf, weights: Buf, out: Buf, p: &AccumulateParams) -> Result<()> {
    rec.expect_dtype(pair, Dtype::C32, "reconstruction pair")?;
    rec.expect_dtype(weights, Dtype::F32, "reconstruction weights")?;
    rec.expect_dtype(out, Dtype::F32, "reconstruction")?;
    let count: usize = p.dims.iter().map(|&n| n as usize).product();
    let low: usize = p.low_dims.iter().map(|&n| n as usize).product();
    if rec.shape(pair).len() < p.pair_at as usize + count
        || rec.shape(out).len() != count
        || !rec.shape(weights).len().is_multiple_of(low.max(1))
        || count > u32::MAX as usize
    {
        return Err(Error::Shape(format!(
            "reconstruction of {count} samples from weights of {low}: given {}, {} and {}",
            rec.shape(pair).len(),
            rec.shape(weights).len(),
            rec.shape(out).len()
        )));
    }
    let p = AccumulateParams { count: count as u32, low_count: low as u32, ..*p };
    rec.dispatch(&DENOISE_ACCUMULATE, &[], bytemuck::bytes_of(&p), &[pair, weights, out], DENOISE_ACCUMULATE.groups(count as u64));
    Ok(())
}

/// `filters` real filters of `taps[a]` (odd) taps along axis a, by direct sums over the already
/// extended f32 input `x` (valid correlation): their responses packed in pairs, a complex stack
/// of ⌈filters/2⌉ arrays of the output's shape. `weights` holds the correlation taps in
/// row-major order, ⌈filters/4⌉ · 4 values per tap (zero past `filters`).
pub fn direct(rec: &mut Recording, x: Buf, weights: Buf, taps: &[usize], filters: usize) -> Result<(Buf, Vec<usize>)> {
    rec.expect_dtype(x, Dtype::F32, "direct filters' input")?;
    rec.expect_dtype(weights, Dtype::F32, "direct filters' weights")?;
    let groups = filters.div_ceil(4);
    let window = taps.iter().try_fold(1usize, |w, &t| w.checked_mul(t)).unwrap_or(usize::MAX);
    let dims = rec.dims(x).to_vec();
    if !(1..=DIRECT_FILTERS).contains(&filters)
        || taps.len() != dims.len()
        || taps.iter().any(|t| t % 2 == 0)
        || dims.iter().zip(taps).any(|(&n, &t)| n < t)
        || rec.shape(weights).len() != window.saturating_mul(groups * 4)
    {
        return Err(Error::Invalid(format!("{filters} direct filters of {taps:?} taps over an input of {dims:?} with {} weights", rec.shape(weights).len())));
    }
    let out_dims: Vec<usize> = dims.iter().zip(taps).map(|(&n, &t)| n - t + 1).collect();
    let count: usize = out_dims.iter().product();
    let pairs = filters.div_ceil(2);
    if count.saturating_mul(pairs) > u32::MAX as usize {
        return Err(Error::Invalid(format!("{count} outputs of {pairs} pairs exceed one dispatch's indexing")));
    }
    let out = rec.temp(&[pairs * count], Dtype::C32)?;
    let p =
        DirectParams { dims: four(&out_dims, 1), padded: four(&dims, 1), taps: four(taps, 1), count: count as u32, filters: filters as u32, unused: [0; 2] };
    rec.dispatch(&DENOISE_DIRECT, &[("GROUPS", groups as f64)], bytemuck::bytes_of(&p), &[x, weights, out], DENOISE_DIRECT.groups(count as u64));
    Ok((out, out_dims))
}
