//! `shaders/interpolate/map_coordinates.wgsl` and `map_coordinates_texture.wgsl`: B-spline
//! sampling at arbitrary coordinates, one output per thread, of an array of 1-4 axes in a buffer
//! or of 2-3 axes in a texture (`kernels::spline_texture`).

use bytemuck::{Pod, Zeroable};

use super::{spline_texture, KernelInfo, MAP_COORDINATES, MAP_COORDINATES_TEXTURE};
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

/// The sampling kernel of `kernels` (buffer, texture) for `texture`, specialised for `mode` (the
/// kernel's code) and the `orders` (0-5) of a 1-4-axis array: its loops over taps
/// (common/bspline.wgsl) or fetches (common/bspline_texture.wgsl) written out for the taps
/// (order + 1) of each of the four axes, and the override constants.
pub(crate) fn specialised(
    kernels: [&'static KernelInfo; 2],
    texture: bool,
    dtype: Dtype,
    mode: u32,
    orders: &[u32],
) -> Result<(&'static KernelInfo, Vec<(&'static str, f64)>)> {
    let mut taps = [1usize; 4];
    taps[4 - orders.len()..].iter_mut().zip(orders).for_each(|(t, &o)| *t = o as usize + 1);
    let constants = vec![
        ("MODE", mode as f64),
        ("RANK", orders.len() as f64),
        ("T0", taps[0] as f64),
        ("T1", taps[1] as f64),
        ("T2", taps[2] as f64),
        ("T3", taps[3] as f64),
    ];
    let code = if texture { fetch_sum([taps[1], taps[2], taps[3]]) } else { tap_sum(taps, mode == self::mode::GRID_CONSTANT) };
    // f64 through the buffer kernel's twin (textures are f32).
    let kernel = if texture { kernels[1] } else { kernels[0].for_dtype(dtype)? };
    Ok((kernel.unrolled(&code), constants))
}

/// Orders 0-5 (the kernels hold 6 taps per axis).
pub(crate) fn check_orders(orders: &[u32]) -> Result<()> {
    match orders.iter().find(|&&o| o > 5) {
        Some(o) => Err(Error::Invalid(format!("B-spline sampling of order {o} (orders 0 to 5)"))),
        None => Ok(()),
    }
}

/// The axes of the array `x` holds: its own, or those of the array a texture was made of.
pub(crate) fn sampled_dims(rec: &Recording, x: Buf) -> Vec<usize> {
    if rec.is_texture(x) {
        spline_texture::array_dims(rec.dims(x))
    } else {
        rec.dims(x).to_vec()
    }
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

/// `tap_sum` for `taps` per axis: where no axis has more than 4 (orders up to 3), one line per
/// row of taps along the last axis, its weight the product of the other axes' (an axis of one
/// tap weighs 1); beyond (orders 4 and 5: up to 6^4 taps), loops over the leading axes' taps
/// around one written-out row, so the kernel stays small.
fn tap_sum(taps: [usize; 4], checked: bool) -> String {
    // One row of taps along the last axis at element `row` (all inside: `row_in`).
    // Taps 1-4 are components of Taps' vectors, 5-6 of its second ones.
    let part = |field: &str, k: usize| if k < 4 { format!("a3.{field}[{k}]") } else { format!("a3.{field}2[{}]", k - 4) };
    let row_sum = |row: &str, row_in: &str| -> String {
        let terms: Vec<String> = (0..taps[3])
            .map(|k3| {
                let value = format!("x[{row} + {}]", part("at", k3));
                let value = if checked { format!("select(cval, {value}, {row_in} && {})", part("inside", k3)) } else { value };
                if taps[3] == 1 {
                    value
                } else {
                    format!("{} * {value}", part("w", k3))
                }
            })
            .collect();
        terms.join(" + ")
    };
    if taps.iter().all(|&t| t <= 4) {
        let mut s = String::from("    var sum = real(0.0);\n");
        for k0 in 0..taps[0] {
            for k1 in 0..taps[1] {
                for k2 in 0..taps[2] {
                    let k = [k0, k1, k2];
                    let row = format!("a0.at[{k0}] + a1.at[{k1}] + a2.at[{k2}]");
                    let inside = format!("a0.inside[{k0}] && a1.inside[{k1}] && a2.inside[{k2}]");
                    let weight: Vec<String> = (0..3).filter(|&a| taps[a] > 1).map(|a| format!("a{a}.w[{}]", k[a])).collect();
                    let weight = if weight.is_empty() { String::new() } else { weight.join(" * ") + " * " };
                    s += &format!("    sum += {weight}({});\n", row_sum(&format!("({row})"), &format!("({inside})")));
                }
            }
        }
        return s + "    return sum;";
    }
    format!(
        "    var sum = real(0.0);
    for (var k0 = 0u; k0 < T0; k0++) {{
        var s1 = real(0.0);
        for (var k1 = 0u; k1 < T1; k1++) {{
            var s2 = real(0.0);
            for (var k2 = 0u; k2 < T2; k2++) {{
                let row = tap_at(a0, k0) + tap_at(a1, k1) + tap_at(a2, k2);
                let row_in = tap_inside(a0, k0) && tap_inside(a1, k1) && tap_inside(a2, k2);
                s2 += tap_w(a2, k2) * ({});
            }}
            s1 += tap_w(a1, k1) * s2;
        }}
        sum += tap_w(a0, k0) * s1;
    }}
    return sum;",
        row_sum("row", "row_in")
    )
}

/// `fetch_sum` (common/bspline_texture.wgsl) for `taps` along the texture's three axes: one line
/// per fetch, its weight the product of the axes' that fetch twice (cubic).
fn fetch_sum(taps: [usize; 3]) -> String {
    const C: [&str; 2] = ["x", "y"];
    let fetches = taps.map(|t| if t == 4 { 2 } else { 1 });
    let mut s = String::from("    var sum = 0.0;\n");
    for k in 0..fetches[0] {
        for j in 0..fetches[1] {
            for i in 0..fetches[2] {
                let at = [("az", k), ("ay", j), ("ax", i)];
                let weight: String = at.iter().zip(fetches).filter(|(_, f)| *f == 2).map(|((a, n), _)| format!("{a}.w.{} * ", C[*n])).collect();
                s += &format!("    sum += {weight}fetch(ax.at.{}, ay.at.{}, az.at.{});\n", C[i], C[j], C[k]);
            }
        }
    }
    s + "    return sum;"
}

/// `x` sampled at `coords` (f32, shape (rank, points...)): `x` an f32 array of 1-4 axes, or a
/// texture `kernels::spline_texture` made of one of 2-3 axes; `mode` is the kernel's code, `pad`
/// is added to every coordinate. The output has coords' shape after its first axis.
pub fn record(rec: &mut Recording, x: Buf, coords: Buf, order: u32, mode: u32, pad: f32, cval: f32) -> Result<Buf> {
    let dtype = rec.dtype(x);
    rec.expect_dtype(coords, dtype, "coordinates")?;
    let dims = sampled_dims(rec, x);
    let cdims = rec.dims(coords).to_vec();
    if cdims[0] != dims.len() || cdims.len() < 2 {
        return Err(Error::Shape(format!("coordinates of shape {cdims:?} for a {}-axis array: the first axis must be {}", dims.len(), dims.len())));
    }
    check_orders(&[order])?;
    let points: usize = cdims[1..].iter().product();
    if points > u32::MAX as usize {
        return Err(Error::TooLarge { what: format!("{points} samples in one dispatch"), bytes: points as u64 * 4, limit: u32::MAX as u64 * 4 });
    }
    let out = rec.temp(&cdims[1..], dtype)?;
    let p = Params { dims: as_four(&dims), rank: dims.len() as u32, points: points as u32, pad, cval };
    let (kernel, constants) = specialised([&MAP_COORDINATES, &MAP_COORDINATES_TEXTURE], rec.is_texture(x), dtype, mode, &vec![order; dims.len()])?;
    rec.dispatch(kernel, &constants, bytemuck::bytes_of(&p), &[coords, out, x], MAP_COORDINATES.groups(points as u64));
    Ok(out)
}
