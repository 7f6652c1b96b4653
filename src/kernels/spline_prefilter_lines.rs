//! `shaders/interpolate/spline_prefilter_lines.wgsl`: one pole of the B-spline prefilter along
//! the last axis of f32 data whose lines hold up to [`WORDS`] samples, whole lines staged in
//! workgroup memory (each sample read and written once); [`super::spline_prefilter`] sends
//! such lines here and keeps the rest.

use bytemuck::{Pod, Zeroable};

use super::{KernelInfo, SPLINE_PREFILTER_LINES};
use crate::error::Result;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in spline_prefilter_lines.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub n: u32,
    pub lines: u32,
    pub per_group: u32,
    pub segments: u32,
    pub init: u32,
}

/// Samples a workgroup stages (WORDS in the kernel).
pub const WORDS: usize = 4096;
const THREADS: usize = 128;
/// The staged samples' workgroup memory: one padding word every 32.
const TILE_BYTES: u32 = (WORDS + WORDS / 32) as u32 * 4;

/// Whether lines of `n` samples fit this kernel on `gpu` (its workgroup memory holds the
/// staged samples).
pub fn takes(rec: &Recording, n: usize) -> bool {
    (2..=WORDS).contains(&n) && rec.gpu().workgroup_memory_bytes() >= TILE_BYTES
}

/// One pole `z` (gain `gain`) of the prefilter along the last axis of `x` (`lines` lines of `n`
/// samples, f32), each thread `seg` samples from `halo` outside them, `init` the boundary's
/// code (`spline_prefilter::Init`).
pub(super) fn record_pole(rec: &mut Recording, x: Buf, n: usize, lines: usize, z: f64, gain: f64, (seg, halo): (usize, usize), init: u32) -> Result<Buf> {
    let segments = n.div_ceil(seg);
    let per_group = (WORDS / n).min(WORDS / seg / segments).max(1);
    let p = Params { n: n as u32, lines: lines as u32, per_group: per_group as u32, segments: segments as u32, init };
    let constants = [("Z", z), ("GAIN", gain), ("SEG", seg as f64), ("HALO", halo as f64)];
    let out = rec.temp_like(x, crate::gpu::Dtype::F32)?;
    rec.dispatch(kernel(seg, halo), &constants, bytemuck::bytes_of(&p), &[x, out], lines.div_ceil(per_group) as u64);
    Ok(out)
}

/// The kernel with `lines` written out for (seg, halo), generated once per geometry.
fn kernel(seg: usize, halo: usize) -> &'static KernelInfo {
    static KERNELS: [std::sync::OnceLock<&'static KernelInfo>; 2] = [std::sync::OnceLock::new(), std::sync::OnceLock::new()];
    KERNELS[usize::from(seg != 32)].get_or_init(|| SPLINE_PREFILTER_LINES.unrolled(&written_out(seg, halo)))
}

/// `lines` written out straight: 32 loads a thread issued together, each segment's samples,
/// causal values and outputs named registers (the passes are `spline_prefilter`'s own,
/// `passes_written_out`, so the outputs are the same).
fn written_out(seg: usize, halo: usize) -> String {
    let (span, rounds, reps) = (seg + 2 * halo, WORDS / THREADS, WORDS / seg / THREADS);
    let mut s = String::new();
    s += &(0..rounds).map(|m| format!("    let t{m} = x[base + min(lid + {}u, count - 1u)];\n", m * THREADS)).collect::<String>();
    s += &(0..rounds).map(|m| format!("    tile[at(lid + {}u)] = t{m};\n", m * THREADS)).collect::<String>();
    s += "    workgroupBarrier();\n";
    for r in 0..reps {
        s += &format!("    let q{r} = lid + {}u;\n", r * THREADS);
        s += &format!("    let l{r} = min(q{r} / p.segments, p.per_group - 1u);\n");
        s += &format!("    let s{r} = i32((q{r} % p.segments) * SEG);\n");
        s += &format!("    let b{r} = l{r} * p.n;\n");
        s += &(0..span).map(|k| format!("    var v{r}_{k}: f32;\n")).collect::<String>();
        // Lines longer than a segment and its halos fold each sample once (on n, uniform: no
        // warp runs both ways).
        s += "    if (p.n > SEG + HALO) {\n";
        s += &(0..span)
            .map(|k| format!("        v{r}_{k} = tile[at(b{r} + u32(fold_line_once(s{r} + {}, i32(p.n), p.init)))];\n", k as i64 - halo as i64))
            .collect::<String>();
        s += "    } else {\n";
        s += &(0..span).map(|k| format!("        v{r}_{k} = sample(l{r}, s{r} + {});\n", k as i64 - halo as i64)).collect::<String>();
        s += "    }\n";
        s += &super::spline_prefilter::passes_written_out(seg, halo, &format!("{r}_"));
    }
    // Every thread's samples read: the outputs into the staged lines, then the lines stored.
    s += "    workgroupBarrier();\n";
    for r in 0..reps {
        s += &format!("    if (q{r} / p.segments < p.per_group) {{\n        let e{r} = b{r} + u32(s{r});\n");
        s += &(0..seg).map(|j| format!("        if (u32(s{r}) + {j}u < p.n) {{ tile[at(e{r} + {j}u)] = o{r}_{j}; }}\n")).collect::<String>();
        s += "    }\n";
    }
    s += "    workgroupBarrier();\n";
    s += &(0..rounds).map(|m| format!("    if (lid + {o}u < count) {{ c[base + lid + {o}u] = tile[at(lid + {o}u)]; }}\n", o = m * THREADS)).collect::<String>();
    s
}
