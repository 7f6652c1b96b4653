//! `shaders/interpolate/spline_prefilter.wgsl`: the cubic B-spline prefilter along one axis,
//! one thread per segment of a line.

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

/// Samples of a line one thread computes (SEG in the kernel), and those its passes start
/// before and end after it (HALO).
const SEGMENT: usize = 32;
const HALO: usize = 16;

/// The kernel with `segments` written out, generated once.
fn kernel() -> &'static KernelInfo {
    static KERNEL: std::sync::OnceLock<&'static KernelInfo> = std::sync::OnceLock::new();
    KERNEL.get_or_init(|| SPLINE_PREFILTER.unrolled(&written_out()))
}

/// The kernel's `segments` written out straight: the staged loads, the samples, the causal
/// values and the outputs are named registers, not arrays.
fn written_out() -> String {
    let span = 2 * HALO + SEGMENT;
    let mut s = String::from("    if (staged) {\n        let last_line = p.lines - 1u;\n        let column = u32(s0) - HALO + lid;\n");
    s += "        for (var r = 0u; r < GROUP; r += 32u) {\n";
    s += &(0..32).map(|m| format!("            let t{m} = x[min(first + r + {m}u, last_line) * p.n + column];\n")).collect::<String>();
    s += &(0..32).map(|m| format!("            tile[at(r + {m}u, lid)] = t{m};\n")).collect::<String>();
    s += "        }\n        workgroupBarrier();\n    }\n";
    s += &(0..span).map(|k| format!("    var v{k}: f32;\n")).collect::<String>();
    s += &format!("    if (s0 >= i32(HALO) && s0 + {} <= i32(p.n)) {{\n", SEGMENT + HALO);
    s += &(0..span).map(|k| format!("        v{k} = near(s0 + {});\n", k as i64 - HALO as i64)).collect::<String>();
    s += "    } else {\n";
    s += &(0..span).map(|k| format!("        v{k} = extended(s0 + {});\n", k as i64 - HALO as i64)).collect::<String>();
    s += "    }\n    var cp = 0.0;\n";
    s += &(0..HALO).map(|k| format!("    cp = 6.0 * v{k} + Z * cp;\n")).collect::<String>();
    for j in 0..SEGMENT + HALO {
        let prev = if j == 0 { "cp".to_string() } else { format!("p{}", j - 1) };
        s += &format!("    let p{j} = 6.0 * v{} + Z * {prev};\n", j + HALO);
    }
    s += "    var cm = 0.0;\n";
    for j in (SEGMENT..SEGMENT + HALO).rev() {
        s += &format!("    cm = Z * (cm - p{j});\n");
    }
    for j in (0..SEGMENT).rev() {
        let prev = if j == SEGMENT - 1 { "cm".to_string() } else { format!("o{}", j + 1) };
        s += &format!("    let o{j} = Z * ({prev} - p{j});\n");
    }
    s += &(0..SEGMENT).map(|j| format!("    emit({j}u, o{j});\n")).collect::<String>();
    s += "    if (staged) {\n        workgroupBarrier();\n        let k = lid % SEG;\n";
    s += "        for (var r = lid / SEG; r < GROUP; r += 16u) {\n";
    s += &(0..8).map(|m| format!("            let q{m} = tile[at(r + {}u, HALO + k)];\n", 2 * m)).collect::<String>();
    s += &(0..8)
        .map(|m| {
            format!(
                "            if (first + r + {r}u < p.lines) {{\n                c[(first + r + {r}u) * p.n + u32(s0) + k] = q{m};\n            }}\n",
                r = 2 * m
            )
        })
        .collect::<String>();
    s + "        }\n    }"
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

/// The prefiltered coefficients of f32 `x` along `axis` (of length > 1).
pub fn record(rec: &mut Recording, x: Buf, axis: usize, init: Init) -> Result<Buf> {
    rec.expect_dtype(x, Dtype::F32, "spline prefilter input")?;
    let dims = rec.dims(x).to_vec();
    let n = *dims.get(axis).ok_or_else(|| Error::Invalid(format!("axis {axis} of a {dims:?} array")))?;
    if n < 2 {
        return Err(Error::Invalid(format!("the spline prefilter needs lines of 2 or more samples, axis {axis} of {dims:?} has {n}")));
    }
    let inner: usize = dims[axis + 1..].iter().product();
    let total = rec.shape(x).len();
    let segments = n.div_ceil(SEGMENT);
    let lines = total / n;
    if total > u32::MAX as usize {
        return Err(Error::TooLarge {
            what: format!("a spline prefilter of {total} samples in one dispatch"),
            bytes: total as u64 * 4,
            limit: u32::MAX as u64 * 4,
        });
    }
    let y = rec.temp_like(x, Dtype::F32)?;
    let p = Params { n: n as u32, inner: inner as u32, segments: segments as u32, init: init as u32, lines: lines as u32 };
    let last = [("LAST", if inner == 1 { 1.0 } else { 0.0 })];
    // Each workgroup one segment of 64 lines.
    let groups = lines.div_ceil(64) * segments;
    rec.dispatch(kernel(), &last, bytemuck::bytes_of(&p), &[x, y], groups as u64);
    Ok(y)
}
