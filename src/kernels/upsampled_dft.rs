//! `shaders/registration/upsampled_dft.wgsl`: one axis of the matrix-multiply DFT at points
//! around a peak (scikit-image's `_upsampled_dft`), a half spectrum's missing bins added from
//! their Hermitian mirrors.

use bytemuck::{Pod, Zeroable};
use num_complex::{Complex32, Complex64};

use super::{KernelInfo, UPSAMPLED_DFT};
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in upsampled_dft.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub outer: u32,
    pub n: u32,
    pub inner: u32,
    pub r: u32,
    pub rpad: u32,
    pub full: u32,
    pub mirrored: u32,
    pub count: u32,
    pub span: u32,
    pub unused: [u32; 3],
    pub lines: [u32; 4],
}

/// Threads below which the bins are split into spans summed apart (then added): an H200 holds
/// ~270 000 threads at once.
const FILL_THREADS: usize = 1 << 16;

/// Outputs one thread sums (KC in the kernel).
pub const KC: usize = 16;

/// The kernel with its KC accumulators written out, generated once.
fn kernel() -> &'static KernelInfo {
    static KERNEL: std::sync::OnceLock<&'static KernelInfo> = std::sync::OnceLock::new();
    KERNEL.get_or_init(|| {
        // The bin times the series' first value, then one step per output: a product each.
        let sums: String = "        var e = cmul(v, start);\n".to_string()
            + &(0..KC).map(|s| format!("        a{s} += e;\n        e = cmul(e, ratio);\n")).collect::<String>();
        let mut code: String = (0..KC).map(|s| format!("    var a{s} = vec2<f32>(0.0);\n")).collect();
        code += "    let row = chunks + 1u;\n";
        code += "    for (var j = first; j < min(last, p.n); j++) {\n        let v = x[(o * p.n + j) * p.inner + q];\n";
        code += "        let ratio = table[j * row];\n        let start = table[j * row + 1u + k0 / KC];\n";
        code += &sums;
        code += "    }\n    if (last > p.n) {\n        let m = mirror(o);\n        for (var j = max(first, p.n) - p.n + 1u; j <= last - p.n; j++) {\n";
        code += "            let w = x[(m * p.n + j) * p.inner + q];\n            let v = vec2<f32>(w.x, -w.y);\n";
        code += "            let ratio = table[(p.full - j) * row];\n            let start = table[(p.full - j) * row + 1u + k0 / KC];\n";
        code += &sums.lines().map(|l| format!("    {l}\n")).collect::<String>();
        code += "        }\n    }\n";
        for s in 0..KC {
            code += &format!("    if (k0 + {s}u < p.r) {{ out[base + (o * p.r + k0 + {s}u) * p.inner + q] = a{s}; }}\n");
        }
        UPSAMPLED_DFT.unrolled(&code)
    })
}

/// numpy's fftfreq numerator: bin j of n as a signed frequency.
pub fn signed_frequency(j: usize, n: usize) -> f64 {
    if j <= (n - 1) / 2 {
        j as f64
    } else {
        j as f64 - n as f64
    }
}

/// The table of one axis of length `full`: the kernel exp(2πi (k − offset) f_j / (full ·
/// upsample)) as a geometric series in k per bin j — its ratio, then its value at k = 0, KC,
/// 2 KC, .. up to r (a row of ceil(r / KC) + 1 per bin) — in f64, then rounded.
pub fn table(full: usize, r: usize, upsample: f64, offset: f64) -> Vec<Complex32> {
    let chunks = r.div_ceil(KC);
    let turn = 2.0 * std::f64::consts::PI;
    let mut t = Vec::with_capacity((chunks + 1) * full);
    for j in 0..full {
        let rate = signed_frequency(j, full) / (full as f64 * upsample);
        let c32 = |z: Complex64| Complex32::new(z.re as f32, z.im as f32);
        t.push(c32(Complex64::from_polar(1.0, turn * rate)));
        // The chunks' first values by the same series, KC steps at a time (f64 products: ~1e-13
        // after a thousand); the first from the phase's fraction of a turn, for its precision.
        let leap = Complex64::from_polar(1.0, turn * (KC as f64 * rate).rem_euclid(1.0));
        let mut z = Complex64::from_polar(1.0, turn * (-offset * rate).rem_euclid(1.0));
        for _ in 0..chunks {
            t.push(c32(z));
            z *= leap;
        }
    }
    t
}

/// Axis `axis` of the complex array `x` contracted with `table` ([`table`]): the result has r
/// along that axis. Returned flat, as (spans, outputs): partial sums over spans of the bins, to
/// be added (one span where the axis' lines alone fill the GPU). With `half` = Some(full), `x` is a real transform's half spectrum along its
/// last axis (`axis`, n = full / 2 + 1 bins) and the missing bins come from their mirrors.
pub fn record(rec: &mut Recording, x: Buf, axis: usize, table: Buf, r: usize, half: Option<usize>) -> Result<Buf> {
    rec.expect_dtype(x, Dtype::C32, "upsampled DFT input")?;
    rec.expect_dtype(table, Dtype::C32, "upsampled DFT table")?;
    let dims = rec.dims(x).to_vec();
    let n = dims[axis];
    let full = half.unwrap_or(n);
    if half.is_some() && (axis + 1 != dims.len() || full / 2 + 1 != n || dims.len() > 5) {
        return Err(Error::Shape(format!("a half spectrum of length {full} along the last axis of {dims:?}")));
    }
    let rpad = r.div_ceil(KC) * KC;
    if rec.shape(table).len() != (rpad / KC + 1) * full {
        return Err(Error::Shape(format!("an upsampled DFT table of {} entries for {full} bins and {r} outputs", rec.shape(table).len())));
    }
    let mut out_dims = dims.clone();
    out_dims[axis] = r;
    let outer: usize = dims[..axis].iter().product();
    let inner: usize = dims[axis + 1..].iter().product();
    let mut lines = [1u32; 4];
    if half.is_some() {
        lines[4 - axis..].iter_mut().zip(&dims[..axis]).for_each(|(l, &d)| *l = d as u32);
    }
    let mirrored = if half.is_some() { full - n } else { 0 };
    // Spans of at least 32 bins, as many as fill the GPU.
    let threads = outer * (rpad / KC) * inner;
    let bins = n + mirrored;
    let splits = FILL_THREADS.div_ceil(threads).min(bins.div_ceil(32)).max(1);
    let span = bins.div_ceil(splits);
    let splits = bins.div_ceil(span);
    let partial = rec.temp(&[splits, out_dims.iter().product()], Dtype::C32)?;
    let count = splits * threads;
    let p = Params {
        outer: outer as u32,
        n: n as u32,
        inner: inner as u32,
        r: r as u32,
        rpad: rpad as u32,
        full: full as u32,
        mirrored: mirrored as u32,
        count: count as u32,
        span: span as u32,
        unused: [0; 3],
        lines,
    };
    rec.dispatch(kernel(), &[], bytemuck::bytes_of(&p), &[x, table, partial], UPSAMPLED_DFT.groups(count as u64));
    Ok(partial)
}
