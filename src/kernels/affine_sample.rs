//! `shaders/interpolate/affine_sample.wgsl` and `affine_sample_texture.wgsl`: B-spline sampling
//! at an affine map of the output index, one output per thread, of an array of 1-4 axes in a
//! buffer or of 2-3 axes in a texture (`kernels::spline_texture`).

use bytemuck::{Pod, Zeroable};

use super::map_coordinates::{as_four, check_orders, sampled_dims, specialised};
use super::{AFFINE_SAMPLE, AFFINE_SAMPLE_TEXTURE};
use crate::error::{Error, Result};
use crate::gpu::Shape;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in affine_sample.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub matrix: [[f32; 4]; 4],
    pub offset: [f32; 4],
    /// What f32 left of the matrix and the offset, and what that left: the f64 twin adds them
    /// back, (hi + lo) + lo2 = the f64 values exactly ([`split`]).
    pub matrix_lo: [[f32; 4]; 4],
    pub offset_lo: [f32; 4],
    pub matrix_lo2: [[f32; 4]; 4],
    pub offset_lo2: [f32; 4],
    pub dims: [u32; 4],
    pub out_dims: [u32; 4],
    pub points: u32,
    pub cval: f32,
    pub unused: [u32; 2],
}

/// `v` as three f32s whose sum, added in f64 as (hi + lo) + lo2, is `v` exactly (each takes 24
/// of the 53 bits; values of f32's range away from its subnormals), so the f64 twin computes
/// the coordinates scipy computes: zoom's last sample lands on n − 1, not an ulp past it.
fn split(v: f64) -> [f32; 3] {
    let hi = v as f32;
    let rest = v - hi as f64;
    let lo = rest as f32;
    [hi, lo, (rest - lo as f64) as f32]
}

/// Output of shape `out_dims` (of x's type: f32, or f64 from a buffer on devices with it):
/// element o reads `x` (a buffer or a texture, as
/// `map_coordinates::record` takes it) at `matrix · o + offset` (rows per input axis), with
/// `orders[a] + 1` taps along axis a; `mode` is the kernel's code.
#[allow(clippy::too_many_arguments)]
pub fn record(rec: &mut Recording, x: Buf, matrix: &[Vec<f64>], offset: &[f64], out_dims: &[usize], orders: &[u32], mode: u32, cval: f32) -> Result<Buf> {
    let dtype = rec.dtype(x);
    let dims = sampled_dims(rec, x);
    let rank = dims.len();
    if out_dims.len() != rank || matrix.len() != rank || matrix.iter().any(|r| r.len() != rank) || offset.len() != rank || orders.len() != rank {
        return Err(Error::Shape(format!("an affine map of a {rank}-axis array needs a {rank}×{rank} matrix, {rank} offsets and an output of {rank} axes")));
    }
    check_orders(orders)?;
    let points = Shape::new(out_dims)?.len();
    if points > u32::MAX as usize {
        return Err(Error::TooLarge { what: format!("{points} samples in one dispatch"), bytes: points as u64 * 4, limit: u32::MAX as u64 * 4 });
    }
    let out = rec.temp(out_dims, dtype)?;
    let mut p = Params::zeroed();
    let lead = 4 - rank;
    for a in 0..rank {
        for (b, &v) in matrix[a].iter().enumerate() {
            [p.matrix[lead + a][lead + b], p.matrix_lo[lead + a][lead + b], p.matrix_lo2[lead + a][lead + b]] = split(v);
        }
        [p.offset[lead + a], p.offset_lo[lead + a], p.offset_lo2[lead + a]] = split(offset[a]);
    }
    (p.dims, p.out_dims, p.points, p.cval) = (as_four(&dims), as_four(out_dims), points as u32, cval);
    let (kernel, constants) = specialised([&AFFINE_SAMPLE, &AFFINE_SAMPLE_TEXTURE], rec.is_texture(x), dtype, mode, orders)?;
    rec.dispatch(kernel, &constants, bytemuck::bytes_of(&p), &[out, x], AFFINE_SAMPLE.groups(points as u64));
    Ok(out)
}

#[cfg(test)]
mod tests {
    /// The three f32s add back to the f64 exactly, as the f64 twin adds them.
    #[test]
    fn split_is_exact() {
        let mut state = 0x9e3779b97f4a7c15u64;
        for _ in 0..100_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // Mantissas of every pattern, exponents over ±2^40.
            let v = f64::from_bits((state & 0x000f_ffff_ffff_ffff) | ((1023 + (state >> 52) % 81 - 40) << 52)) * if state & 1 == 0 { 1.0 } else { -1.0 };
            let [hi, lo, lo2] = super::split(v);
            assert_eq!((hi as f64 + lo as f64) + lo2 as f64, v, "{v:e}");
        }
        for v in [0.0, 1.0, 7.0 / 11.0, 28.0 / 48.0, -0.1, 1e-30, 3e38] {
            let [hi, lo, lo2] = super::split(v);
            assert_eq!((hi as f64 + lo as f64) + lo2 as f64, v, "{v:e}");
        }
    }
}
