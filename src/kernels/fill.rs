//! `shaders/util/fill.wgsl`: one 32-bit pattern into every word of an array.

use bytemuck::{Pod, Zeroable};

use super::FILL;
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in fill.wgsl (the executor's poison fill in graph/compiled.rs packs the same).
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub bits: u32,
    pub bits_odd: u32,
    pub pad: u32,
}

/// Sets every element of `x` (every 32-bit word, for complex arrays) to `value`.
pub fn record(rec: &mut Recording, x: Buf, value: f32) {
    let words = rec.shape(x).len() as u64 * rec.dtype(x).words() as u64;
    let (bits, bits_odd) = match rec.dtype(x) {
        Dtype::F64 | Dtype::C64 => {
            let b = (value as f64).to_bits();
            (b as u32, (b >> 32) as u32)
        }
        _ => (value.to_bits(), value.to_bits()),
    };
    let p = Params { count: words as u32, bits, bits_odd, pad: 0 };
    rec.dispatch(&FILL, &[], bytemuck::bytes_of(&p), &[x], FILL.groups(words));
}

pub fn cpu(x: &mut [f32], value: f32) {
    x.fill(value);
}
