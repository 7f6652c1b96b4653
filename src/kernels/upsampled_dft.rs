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
    pub lines: [u32; 4],
}

/// Outputs one thread sums (KC in the kernel).
pub const KC: usize = 16;

/// The kernel with its KC accumulators written out, generated once.
fn kernel() -> &'static KernelInfo {
    static KERNEL: std::sync::OnceLock<&'static KernelInfo> = std::sync::OnceLock::new();
    KERNEL.get_or_init(|| {
        let sums = |t: &str| (0..KC).map(|s| format!("        a{s} += cmul(v, table[{t} + {s}u]);\n")).collect::<String>();
        let mut code: String = (0..KC).map(|s| format!("    var a{s} = vec2<f32>(0.0);\n")).collect();
        code += "    for (var j = 0u; j < p.n; j++) {\n        let v = x[(o * p.n + j) * p.inner + q];\n        let t = j * p.rpad + k0;\n";
        code += &sums("t");
        code += "    }\n    if (p.mirrored > 0u) {\n        let m = mirror(o);\n        for (var j = 1u; j <= p.mirrored; j++) {\n";
        code += "            let w = x[(m * p.n + j) * p.inner + q];\n            let v = vec2<f32>(w.x, -w.y);\n            let t = (p.full - j) * p.rpad + k0;\n";
        code += &sums("t").lines().map(|l| format!("    {l}\n")).collect::<String>();
        code += "        }\n    }\n";
        for s in 0..KC {
            code += &format!("    if (k0 + {s}u < p.r) {{ out[(o * p.r + k0 + {s}u) * p.inner + q] = a{s}; }}\n");
        }
        UPSAMPLED_DFT.unrolled(&code)
    })
}

/// numpy's fftfreq numerator: bin j of n as a signed frequency.
pub fn signed_frequency(j: usize, n: usize) -> f64 {
    if j <= (n - 1) / 2 { j as f64 } else { j as f64 - n as f64 }
}

/// The table of one axis of length `full`: exp(2πi (k − offset) f_j / (full · upsample)), one
/// row per bin j of r outputs k padded with zeros to a multiple of [`KC`], in f64 then rounded.
pub fn table(full: usize, r: usize, upsample: f64, offset: f64) -> Vec<Complex32> {
    let rpad = r.div_ceil(KC) * KC;
    let mut t = Vec::with_capacity(rpad * full);
    for j in 0..full {
        for k in 0..rpad {
            if k >= r {
                t.push(Complex32::new(0.0, 0.0));
                continue;
            }
            // The phase's fraction of a turn first, as fourier_shift does, for its precision.
            let turns = ((k as f64 - offset) * signed_frequency(j, full) / (full as f64 * upsample)).rem_euclid(1.0);
            let z = Complex64::from_polar(1.0, 2.0 * std::f64::consts::PI * turns);
            t.push(Complex32::new(z.re as f32, z.im as f32));
        }
    }
    t
}

/// Axis `axis` of the complex array `x` contracted with `table` ([`table`]): the result has r
/// along that axis. With `half` = Some(full), `x` is a real transform's half spectrum along its
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
    if rec.shape(table).len() != rpad * full {
        return Err(Error::Shape(format!("an upsampled DFT table of {} entries for {full} bins × {rpad} outputs", rec.shape(table).len())));
    }
    let mut out_dims = dims.clone();
    out_dims[axis] = r;
    let out = rec.temp(&out_dims, Dtype::C32)?;
    let outer: usize = dims[..axis].iter().product();
    let inner: usize = dims[axis + 1..].iter().product();
    let count = outer * (rpad / KC) * inner;
    let mut lines = [1u32; 4];
    if half.is_some() {
        lines[4 - axis..].iter_mut().zip(&dims[..axis]).for_each(|(l, &d)| *l = d as u32);
    }
    let mirrored = if half.is_some() { full - n } else { 0 };
    let p = Params { outer: outer as u32, n: n as u32, inner: inner as u32, r: r as u32, rpad: rpad as u32, full: full as u32, mirrored: mirrored as u32, count: count as u32, lines };
    rec.dispatch(kernel(), &[], bytemuck::bytes_of(&p), &[x, table, out], UPSAMPLED_DFT.groups(count as u64));
    Ok(out)
}
