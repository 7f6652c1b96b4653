//! `shaders/denoise/denoise_direct.wgsl`: the adaptive filter's filters by direct sums, their
//! responses packed in pairs.

use bytemuck::{Pod, Zeroable};

use super::DENOISE_DIRECT;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

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

/// The most filters [`record`] takes.
pub const DIRECT_FILTERS: usize = 16;

/// Per-axis values of an array of up to four axes as the kernels take them: padded to four at
/// the front with `fill`.
pub fn four(v: &[usize], fill: u32) -> [u32; 4] {
    let mut a = [fill; 4];
    for (k, &n) in v.iter().enumerate() {
        a[4 - v.len() + k] = n as u32;
    }
    a
}

/// `filters` real filters of `taps[a]` (odd) taps along axis a, by direct sums over the already
/// extended f32 input `x` (valid correlation): their responses packed in pairs, a complex stack
/// of ⌈filters/2⌉ arrays of the output's shape. `weights` holds the correlation taps in
/// row-major order, ⌈filters/4⌉ · 4 values per tap (zero past `filters`).
pub fn record(rec: &mut Recording, x: Buf, weights: Buf, taps: &[usize], filters: usize) -> Result<(Buf, Vec<usize>)> {
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
