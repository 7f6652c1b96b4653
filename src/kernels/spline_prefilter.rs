//! `shaders/interpolate/spline_prefilter.wgsl`: the B-spline prefilter of orders 2-5 along one
//! axis, one pass per pole, one thread per segment of a line.

use bytemuck::{Pod, Zeroable};

use super::{KernelInfo, SPLINE_PREFILTER};
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in spline_prefilter.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub n: u32,
    pub inner: u32,
    pub segments: u32,
    pub init: u32,
    pub lines: u32,
}

/// The samples of a line one thread computes (SEG in the kernel) and those its passes start
/// before and end after it (HALO), SEG + 2 · HALO = 64 (a staged row): (32, 16) where
/// |z|^16 ≤ 1e-9, else (16, 24) (|z|^24 ≤ 2e-9 for order 5's larger pole).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Segments {
    seg: usize,
    halo: usize,
}

impl Segments {
    fn of(pole: f64) -> Segments {
        if pole.abs() <= 0.27 {
            Segments { seg: 32, halo: 16 }
        } else {
            Segments { seg: 16, halo: 24 }
        }
    }
}

/// The f64 twin's halo for pole `z`: the samples after which its terms fall below 1e-17 (22 to
/// 47 for orders 2-5; the readable form holds SEG + HALO ≤ 96).
fn f64_halo(z: f64) -> usize {
    (1e-17f64.ln() / z.abs().ln()).ceil() as usize
}

/// The poles of the B-spline prefilter of `order` (2-5; scipy's `get_filter_poles`), in f64.
pub fn poles(order: u32) -> Result<Vec<f64>> {
    Ok(match order {
        2 => vec![8f64.sqrt() - 3.0],
        3 => vec![3f64.sqrt() - 2.0],
        4 => vec![(664.0 - 438976f64.sqrt()).sqrt() + 304f64.sqrt() - 19.0, (664.0 + 438976f64.sqrt()).sqrt() - 304f64.sqrt() - 19.0],
        5 => vec![(67.5 - 4436.25f64.sqrt()).sqrt() + 26.25f64.sqrt() - 6.5, (67.5 + 4436.25f64.sqrt()).sqrt() - 26.25f64.sqrt() - 6.5],
        _ => return Err(Error::Invalid(format!("spline prefilter of order {order} (orders 2 to 5 have one)"))),
    })
}

/// The prefilter's gain: the product over the poles of (1 − z)(1 − 1/z).
pub fn gain(poles: &[f64]) -> f64 {
    poles.iter().map(|z| (1.0 - z) * (1.0 - 1.0 / z)).product()
}

/// The kernel with `segments` written out for `at`, generated once per geometry.
fn kernel(at: Segments) -> &'static KernelInfo {
    static KERNELS: [std::sync::OnceLock<&'static KernelInfo>; 2] = [std::sync::OnceLock::new(), std::sync::OnceLock::new()];
    KERNELS[usize::from(at.seg != 32)].get_or_init(|| SPLINE_PREFILTER.unrolled(&written_out(at)))
}

/// The kernel's `segments` written out straight: the staged loads, the samples, the causal
/// values and the outputs are named registers, not arrays.
fn written_out(Segments { seg, halo }: Segments) -> String {
    let span = 2 * halo + seg;
    let mut s = String::from("    if (staged) {\n        let last_line = p.lines - 1u;\n        let column = u32(s0) - HALO + lid;\n");
    s += "        for (var r = 0u; r < GROUP; r += 32u) {\n";
    s += &(0..32).map(|m| format!("            let t{m} = x[min(first + r + {m}u, last_line) * p.n + column];\n")).collect::<String>();
    s += &(0..32).map(|m| format!("            tile[at(r + {m}u, lid)] = t{m};\n")).collect::<String>();
    s += "        }\n        workgroupBarrier();\n    }\n";
    s += &(0..span).map(|k| format!("    var v{k}: f32;\n")).collect::<String>();
    s += &format!("    if (s0 >= i32(HALO) && s0 + {} <= i32(p.n)) {{\n", seg + halo);
    s += &(0..span).map(|k| format!("        v{k} = near(s0 + {});\n", k as i64 - halo as i64)).collect::<String>();
    s += "    } else {\n";
    s += &(0..span).map(|k| format!("        v{k} = extended(s0 + {});\n", k as i64 - halo as i64)).collect::<String>();
    s += "    }\n";
    s += &passes_written_out(seg, halo, "");
    s += &(0..seg).map(|j| format!("    emit({j}u, o{j});\n")).collect::<String>();
    // The staged rows stored 64 / seg at a time, eight such steps in flight.
    let rows = 64 / seg;
    s += "    if (staged) {\n        workgroupBarrier();\n        let k = lid % SEG;\n";
    s += &format!("        for (var r = lid / SEG; r < GROUP; r += {}u) {{\n", 8 * rows);
    s += &(0..8).map(|m| format!("            let q{m} = tile[at(r + {}u, HALO + k)];\n", rows * m)).collect::<String>();
    s += &(0..8)
        .map(|m| {
            format!(
                "            if (first + r + {r}u < p.lines) {{\n                c[(first + r + {r}u) * p.n + u32(s0) + k] = q{m};\n            }}\n",
                r = rows * m
            )
        })
        .collect::<String>();
    s + "        }\n    }"
}

/// One segment's two passes written out (shared with `spline_prefilter_lines`): from the samples
/// `v{tag}0 ..` (the segment's SEG between HALO either side) the causal values `p{tag}j` and
/// the outputs `o{tag}0 .. o{tag}{seg - 1}`, each step one dependent `fma` (the anti-causal
/// step z·(c − p) as fma(z, c, −z·p)).
pub(super) fn passes_written_out(seg: usize, halo: usize, tag: &str) -> String {
    let mut s = format!("    var cp{tag} = 0.0;\n");
    s += &(0..halo).map(|k| format!("    cp{tag} = fma(Z, cp{tag}, GAIN * v{tag}{k});\n")).collect::<String>();
    for j in 0..seg + halo {
        let prev = if j == 0 { format!("cp{tag}") } else { format!("p{tag}{}", j - 1) };
        s += &format!("    let p{tag}{j} = fma(Z, {prev}, GAIN * v{tag}{});\n", j + halo);
    }
    s += &format!("    var cm{tag} = 0.0;\n");
    for j in (seg..seg + halo).rev() {
        s += &format!("    cm{tag} = fma(Z, cm{tag}, -Z * p{tag}{j});\n");
    }
    for j in (0..seg).rev() {
        let prev = if j == seg - 1 { format!("cm{tag}") } else { format!("o{tag}{}", j + 1) };
        s += &format!("    let o{tag}{j} = fma(Z, {prev}, -Z * p{tag}{j});\n");
    }
    s
}

/// The initial conditions of the two passes (which scipy mode uses which: `ops::interpolate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Init {
    /// Whole-sample symmetric: ..., x1, x0, x1, ...
    Mirror = 0,
    /// Half-sample symmetric: ..., x1, x0, x0, x1, ...
    Reflect = 1,
    /// Periodic.
    Wrap = 2,
}

/// The coefficients of the B-spline of `order` (2-5) through f32 `x` along `axis` (of two or
/// more samples): per pole its gain and its causal and anti-causal passes, one dispatch per
/// pole. (scipy applies the gains' product first, in f64; each pole its own keeps the f32
/// intermediates of order 5 at the samples' scale, 25× smaller.)
pub fn record(rec: &mut Recording, x: Buf, axis: usize, order: u32, init: Init) -> Result<Buf> {
    let dtype = rec.dtype(x);
    let twin = SPLINE_PREFILTER.for_dtype(dtype)?;
    let poles = poles(order)?;
    let dims = rec.dims(x).to_vec();
    let n = *dims.get(axis).ok_or_else(|| Error::Invalid(format!("axis {axis} of a {dims:?} array")))?;
    if n < 2 {
        return Err(Error::Invalid(format!("the spline prefilter needs lines of 2 or more samples, axis {axis} of {dims:?} has {n}")));
    }
    let inner: usize = dims[axis + 1..].iter().product();
    let total = rec.shape(x).len();
    let lines = total / n;
    if total > u32::MAX as usize {
        return Err(Error::TooLarge {
            what: format!("a spline prefilter of {total} samples in one dispatch"),
            bytes: total as u64 * 4,
            limit: u32::MAX as u64 * 4,
        });
    }
    let mut y = x;
    for &z in &poles {
        // f64: the kernel's readable form, unstaged, with halos to f64's precision.
        let (at, kernel, staged) = match dtype {
            Dtype::F64 => (Segments { seg: 32, halo: f64_halo(z) }, twin, false),
            _ => (Segments::of(z), kernel(Segments::of(z)), inner == 1),
        };
        // Lines along the last axis that fit a workgroup: staged whole, each sample read once.
        if staged && super::spline_prefilter_lines::takes(rec, n) {
            y = super::spline_prefilter_lines::record_pole(rec, y, n, lines, z, gain(&[z]), (at.seg, at.halo), init as u32)?;
            continue;
        }
        let segments = n.div_ceil(at.seg);
        let p = Params { n: n as u32, inner: inner as u32, segments: segments as u32, init: init as u32, lines: lines as u32 };
        let constants = [
            ("LAST", if staged { 1.0 } else { 0.0 }),
            ("TILE", if staged { 4096.0 } else { 1.0 }),
            ("Z", z),
            ("GAIN", gain(&[z])),
            ("SEG", at.seg as f64),
            ("HALO", at.halo as f64),
        ];
        let out = rec.temp_like(x, dtype)?;
        // Each workgroup one segment of 64 lines.
        let groups = lines.div_ceil(64) * segments;
        rec.dispatch(kernel, &constants, bytemuck::bytes_of(&p), &[y, out], groups as u64);
        y = out;
    }
    Ok(y)
}
