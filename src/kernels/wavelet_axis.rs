//! `shaders/tomography/wavelet_axis.wgsl`: one level of pywt's dwt / idwt (mode 'symmetric')
//! along the middle axis of (outer, n, inner), for a filter of 10 taps (db5).

use bytemuck::{Pod, Zeroable};

use super::WAVELET_AXIS;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in wavelet_axis.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub outer: u32,
    pub n: u32,
    pub m: u32,
    pub inner: u32,
}

/// The filter length (mirrors TAPS in wavelet_axis.wgsl).
pub const TAPS: usize = 10;

/// pywt's four filters from the decomposition low-pass `dec_lo`: dec_hi[j] = (−1)^(j+1)
/// dec_lo[9 − j], rec_lo its reverse, rec_hi[j] = (−1)^j dec_lo[j]; as the kernel's table.
pub fn filters(dec_lo: &[f64; TAPS]) -> [f32; 4 * TAPS] {
    let sign = |j: usize| if j.is_multiple_of(2) { 1.0 } else { -1.0 };
    let mut t = [0f32; 4 * TAPS];
    for j in 0..TAPS {
        t[j] = dec_lo[j] as f32;
        t[TAPS + j] = (-sign(j) * dec_lo[TAPS - 1 - j]) as f32;
        t[2 * TAPS + j] = dec_lo[TAPS - 1 - j] as f32;
        t[3 * TAPS + j] = (sign(j) * dec_lo[j]) as f32;
    }
    t
}

fn dims3(rec: &Recording, x: Buf, axis: usize) -> Result<(usize, usize, usize)> {
    let dims = rec.dims(x);
    if axis >= dims.len() {
        return Err(Error::Shape(format!("a wavelet transform along axis {axis} of {dims:?}")));
    }
    Ok((dims[..axis].iter().product(), dims[axis], dims[axis + 1..].iter().product()))
}

/// The approximation and detail of `x` (f32) along `axis`: ⌊(n + 9)/2⌋ each along it.
pub fn record_forward(rec: &mut Recording, filters: Buf, x: Buf, axis: usize) -> Result<(Buf, Buf)> {
    rec.expect_dtype(x, Dtype::F32, "wavelet input")?;
    let (outer, n, inner) = dims3(rec, x, axis)?;
    let m = (n + TAPS - 1) / 2;
    let mut dims = rec.dims(x).to_vec();
    dims[axis] = m;
    let (lo, hi) = (rec.temp(&dims, Dtype::F32)?, rec.temp(&dims, Dtype::F32)?);
    let p = Params { outer: outer as u32, n: n as u32, m: m as u32, inner: inner as u32 };
    rec.dispatch(&WAVELET_AXIS, &[("INVERSE", 0.0)], bytemuck::bytes_of(&p), &[filters, x, x, lo, hi], WAVELET_AXIS.groups((outer * m * inner) as u64));
    Ok((lo, hi))
}

/// The inverse from approximation `a` and detail `d` (same shape, f32) along `axis`:
/// 2n − 8 values along it.
pub fn record_inverse(rec: &mut Recording, filters: Buf, a: Buf, d: Buf, axis: usize) -> Result<Buf> {
    rec.expect_same_shape(a, d, "wavelet detail")?;
    let (outer, n, inner) = dims3(rec, a, axis)?;
    if n < TAPS / 2 {
        return Err(Error::Shape(format!("wavelet coefficients of length {n} along axis {axis} (at least {})", TAPS / 2)));
    }
    let m = 2 * n + 2 - TAPS;
    let mut dims = rec.dims(a).to_vec();
    dims[axis] = m;
    let y = rec.temp(&dims, Dtype::F32)?;
    // (The detail output is not written: a one-element stand-in, no aliased writable binding.)
    let unused = rec.temp(&[1], Dtype::F32)?;
    let p = Params { outer: outer as u32, n: n as u32, m: m as u32, inner: inner as u32 };
    rec.dispatch(&WAVELET_AXIS, &[("INVERSE", 1.0)], bytemuck::bytes_of(&p), &[filters, a, d, y, unused], WAVELET_AXIS.groups((outer * m * inner) as u64));
    Ok(y)
}
