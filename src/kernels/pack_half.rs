//! `shaders/pointwise/pack_half.wgsl`: f32 values as IEEE binary16 bit patterns, two to a word.

use bytemuck::{Pod, Zeroable};

use super::PACK_HALF;
use crate::error::Result;
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in pack_half.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub words: u32,
    pub values: u32,
}

/// `x` (f32, any shape, n values) as ⌈n/2⌉ U32 words of two halves each.
pub fn record(rec: &mut Recording, x: Buf) -> Result<Buf> {
    rec.expect_dtype(x, Dtype::F32, "values to pack as halves")?;
    let values = rec.shape(x).len();
    let words = crate::gpu::u16_words(values);
    let y = rec.temp(&[words], Dtype::U32)?;
    let p = Params { words: words as u32, values: values as u32 };
    rec.dispatch(&PACK_HALF, &[], bytemuck::bytes_of(&p), &[x, y], PACK_HALF.groups(words as u64));
    Ok(y)
}

/// The binary16 bits of `v` (the kernel's CPU twin), rounded to nearest (ties to even; the device may round either
/// way to one of the two neighbours); past ±65504, infinite or NaN: ±infinity.
#[cfg_attr(not(test), allow(dead_code))]
pub fn half_bits(v: f32) -> u16 {
    let sign = ((v.to_bits() >> 16) & 0x8000) as u16;
    let a = v.abs();
    if !a.is_finite() || a >= 65520.0 {
        return sign | 0x7c00;
    }
    if a < 2f32.powi(-14) {
        // Subnormal: multiples of 2^-24.
        return sign | (a as f64 * 2f64.powi(24)).round_ties_even() as u16;
    }
    let e = ((a.to_bits() >> 23) & 0xff) as i32 - 127;
    let mut m = (a as f64 / 2f64.powi(e - 10)).round_ties_even() as u32;
    let mut e = e + 15;
    if m == 2048 {
        (m, e) = (1024, e + 1);
    }
    if e >= 31 {
        return sign | 0x7c00;
    }
    sign | ((e as u16) << 10) | (m - 1024) as u16
}

/// The value of binary16 bits.
#[cfg_attr(not(any(test, feature = "io")), allow(dead_code))]
pub fn half_value(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let (e, m) = (((h >> 10) & 0x1f) as i32, (h & 0x3ff) as f64);
    let magnitude = match e {
        0 => m * 2f64.powi(-24),
        31 if m == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        _ => (1024.0 + m) * 2f64.powi(e - 25),
    };
    (sign * magnitude) as f32
}

/// Whether binary16 bits are finite.
pub fn half_is_finite(h: u16) -> bool {
    h & 0x7c00 != 0x7c00
}
