//! `shaders/denoise/denoise_accumulate.wgsl`: one pair of reconstruction responses added into
//! the result.

use bytemuck::{Pod, Zeroable};

use super::DENOISE_ACCUMULATE;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

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

/// The index of a pair with one response in [`AccumulateParams::b`].
pub const NO_RESPONSE: u32 = u32::MAX;

/// One pair of reconstruction responses (complex, the window's shape) added into `out` (f32,
/// the same count; written, not added to, when `p.accumulate` is 0).
pub fn record(rec: &mut Recording, pair: Buf, weights: Buf, out: Buf, p: &AccumulateParams) -> Result<()> {
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
