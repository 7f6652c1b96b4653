//! `shaders/pointwise/multiply_lines.wgsl`: complex lines times one real or complex factor,
//! repeated over the leading elements (FBP's filter response on every projection's spectrum,
//! the log-polar spectra times the kernel's).

use bytemuck::{Pod, Zeroable};
#[cfg(test)]
use num_complex::Complex32;

use super::MULTIPLY_LINES;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in multiply_lines.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub len: u32,
    pub count: u32,
}

/// `x` (c32) times `factor` (f32 or c32), whose shape is x's trailing axes, repeated over x's
/// leading elements.
pub fn record(rec: &mut Recording, x: Buf, factor: Buf) -> Result<Buf> {
    rec.expect_dtype(x, Dtype::C32, "spectra")?;
    let complex = match rec.dtype(factor) {
        Dtype::C32 => true,
        Dtype::F32 => false,
        other => return Err(Error::Dtype(format!("a factor of spectra must be f32 or complex64, not {other:?}"))),
    };
    let (count, len) = (rec.shape(x).len(), rec.shape(factor).len());
    if len == 0 || count % len != 0 || !rec.dims(x).ends_with(rec.dims(factor)) {
        return Err(Error::Shape(format!("spectra {:?} times a factor {:?}", rec.dims(x), rec.dims(factor))));
    }
    let out = rec.temp_like(x, Dtype::C32)?;
    let p = Params { len: len as u32, count: count as u32 };
    let constants = [("COMPLEX", if complex { 1.0 } else { 0.0 })];
    rec.dispatch(&MULTIPLY_LINES, &constants, bytemuck::bytes_of(&p), &[x, factor, out], MULTIPLY_LINES.groups(count as u64));
    Ok(out)
}

/// The CPU twin: `x` times `factor` (f32 as a real factor, else complex) along every line of
/// its length, as the shader computes it.
#[cfg(test)]
pub fn cpu(x: &[Complex32], factor: Factor) -> Vec<Complex32> {
    x.iter()
        .enumerate()
        .map(|(i, &v)| match factor {
            Factor::Real(r) => v * r[i % r.len()],
            Factor::Complex(c) => {
                let h = c[i % c.len()];
                Complex32::new(v.re * h.re - v.im * h.im, v.re * h.im + v.im * h.re)
            }
        })
        .collect()
}

/// A factor of [`cpu`].
#[cfg(test)]
pub enum Factor<'a> {
    Real(&'a [f32]),
    Complex(&'a [Complex32]),
}
