//! `shaders/interpolate/map_coordinates.wgsl`: B-spline sampling of an array of 1-4 axes at
//! arbitrary coordinates, one output per thread.

use bytemuck::{Pod, Zeroable};

use super::{KernelInfo, MAP_COORDINATES};
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in map_coordinates.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub dims: [u32; 4],
    pub rank: u32,
    pub points: u32,
    pub pad: f32,
    pub cval: f32,
}

/// The axes of a 1-4-axis array as the sampling kernels see them: four, leading ones of 1.
pub(crate) fn as_four(dims: &[usize]) -> [u32; 4] {
    let mut d = [1u32; 4];
    d[4 - dims.len()..].iter_mut().zip(dims).for_each(|(d, &n)| *d = n as u32);
    d
}

/// A sampling kernel (common/bspline.wgsl) specialised for `mode` (the kernel's code) and the
/// `orders` of a 1-4-axis array: its `tap_sum` written out for the taps (order + 1) of each of
/// the four axes, and the override constants.
pub(crate) fn specialised(kernel: &'static KernelInfo, mode: u32, orders: &[u32]) -> (&'static KernelInfo, Vec<(&'static str, f64)>) {
    let mut taps = [1usize; 4];
    taps[4 - orders.len()..].iter_mut().zip(orders).for_each(|(t, &o)| *t = o as usize + 1);
    let constants = vec![("MODE", mode as f64), ("RANK", orders.len() as f64), ("T0", taps[0] as f64), ("T1", taps[1] as f64), ("T2", taps[2] as f64), ("T3", taps[3] as f64)];
    (kernel.unrolled(&tap_sum(taps, mode == self::mode::GRID_CONSTANT)), constants)
}

/// The sampling kernels' codes for scipy's modes (common/bspline.wgsl).
pub mod mode {
    pub const MIRROR: u32 = 0;
    pub const REFLECT: u32 = 1;
    pub const NEAREST: u32 = 2;
    pub const WRAP: u32 = 3;
    pub const GRID_WRAP: u32 = 4;
    pub const CONSTANT: u32 = 5;
    /// Taps outside the array read cval.
    pub const GRID_CONSTANT: u32 = 6;
}

/// `tap_sum` for `taps` per axis: one line per row of taps along the last axis, its weight the
/// product of the other axes' (an axis of one tap weighs 1).
fn tap_sum(taps: [usize; 4], checked: bool) -> String {
    const C: [&str; 4] = ["x", "y", "z", "w"];
    let mut s = String::from("    var sum = 0.0;\n");
    for k0 in 0..taps[0] {
        for k1 in 0..taps[1] {
            for k2 in 0..taps[2] {
                let k = [k0, k1, k2];
                let row = format!("a0.at.{} + a1.at.{} + a2.at.{}", C[k0], C[k1], C[k2]);
                let inside = format!("a0.inside.{} && a1.inside.{} && a2.inside.{}", C[k0], C[k1], C[k2]);
                let terms: Vec<String> = (0..taps[3])
                    .map(|k3| {
                        let value = format!("x[{row} + a3.at.{}]", C[k3]);
                        let value = if checked { format!("select(cval, {value}, {inside} && a3.inside.{})", C[k3]) } else { value };
                        if taps[3] == 1 { value } else { format!("a3.w.{} * {value}", C[k3]) }
                    })
                    .collect();
                let weight: Vec<String> = (0..3).filter(|&a| taps[a] > 1).map(|a| format!("a{a}.w.{}", C[k[a]])).collect();
                let weight = if weight.is_empty() { String::new() } else { weight.join(" * ") + " * " };
                s += &format!("    sum += {weight}({});\n", terms.join(" + "));
            }
        }
    }
    s + "    return sum;"
}

/// `x` (f32, 1-4 axes) sampled at `coords` (f32, shape (rank, points...)); `mode` is the
/// kernel's code, `pad` is added to every coordinate. The output has coords' shape after its
/// first axis.
pub fn record(rec: &mut Recording, x: Buf, coords: Buf, order: u32, mode: u32, pad: f32, cval: f32) -> Result<Buf> {
    rec.expect_dtype(x, Dtype::F32, "sampled array")?;
    rec.expect_dtype(coords, Dtype::F32, "coordinates")?;
    let (dims, cdims) = (rec.dims(x).to_vec(), rec.dims(coords).to_vec());
    if cdims[0] != dims.len() || cdims.len() < 2 {
        return Err(Error::Shape(format!("coordinates of shape {cdims:?} for a {}-axis array: the first axis must be {}", dims.len(), dims.len())));
    }
    let points: usize = cdims[1..].iter().product();
    if points > u32::MAX as usize {
        return Err(Error::TooLarge { what: format!("{points} samples in one dispatch"), bytes: points as u64 * 4, limit: u32::MAX as u64 * 4 });
    }
    let out = rec.temp(&cdims[1..], Dtype::F32)?;
    let p = Params { dims: as_four(&dims), rank: dims.len() as u32, points: points as u32, pad, cval };
    let (kernel, constants) = specialised(&MAP_COORDINATES, mode, &vec![order; dims.len()]);
    rec.dispatch(kernel, &constants, bytemuck::bytes_of(&p), &[x, coords, out], MAP_COORDINATES.groups(points as u64));
    Ok(out)
}
