//! `shaders/filter/correlate_window.wgsl`: direct correlation of an f32 (or f64) array with a weight array
//! of the same rank, `y[o] = Σ_j w[j] · x[origin + o + j]`, over any output window; coordinates
//! outside `x` are folded by a [`Boundary`] (constant mode reads its value). The spatial filters
//! and the direct modes of `ops::convolve` are choices of `origin` and the output shape.

use bytemuck::{Pod, Zeroable};

use super::boundary::Boundary;
use super::CORRELATE_WINDOW;
use crate::error::{Error, Result};
use crate::gpu::Shape;
use crate::graph::{Buf, Recording};

/// Windows of at least this many taps are summed with compensation (the WGSL's `COMPENSATED`:
/// blocks of 16 taps added with Neumaier's correction). Below it the plain f32 sum errs by less
/// than ~1e-6 relative and the kernel keeps its plain loop.
pub const COMPENSATED_TAPS: usize = 256;

/// Mirrors `Params` in correlate_window.wgsl. Slots are numpy axis order padded on the left to 4D.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub out_dims: [u32; 4],
    pub in_dims: [i32; 4],
    pub in_stride: [i32; 4],
    pub origin: [i32; 4],
    pub k_dims: [i32; 4],
    pub count: u32,
    pub fill: f32,
    pub pad0: u32,
    pub pad1: u32,
}

/// Records the correlation into a new temporary of shape `out_dims`.
pub fn record(rec: &mut Recording, x: Buf, w: Buf, out_dims: &[usize], origin: &[i64], boundary: Boundary) -> Result<Buf> {
    let y = rec.temp(out_dims, rec.dtype(x))?;
    record_into(rec, x, w, y, origin, boundary)?;
    Ok(y)
}

/// Records `y[o] = Σ_j w[j] · x[origin + o + j]`; `x`, `w` and `y` are arrays of one rank and
/// one real type (f32, or f64 on devices with it), `y` another buffer than both inputs.
pub fn record_into(rec: &mut Recording, x: Buf, w: Buf, y: Buf, origin: &[i64], boundary: Boundary) -> Result<()> {
    let dtype = rec.dtype(x);
    let kernel = CORRELATE_WINDOW.for_dtype(dtype)?;
    for (b, what) in [(w, "correlation weights"), (y, "correlation output")] {
        rec.expect_dtype(b, dtype, what)?;
    }
    if y == x || y == w {
        return Err(Error::Invalid("correlation is out of place: the output must be another buffer".into()));
    }
    let (in_dims, k_dims, out_dims) = (rec.dims(x).to_vec(), rec.dims(w).to_vec(), rec.dims(y).to_vec());
    let rank = in_dims.len();
    if k_dims.len() != rank || out_dims.len() != rank || origin.len() != rank {
        return Err(Error::Shape(format!("correlation: input {in_dims:?}, weights {k_dims:?}, output {out_dims:?} and origin {origin:?} must have one rank")));
    }
    check_i32(&in_dims, &k_dims, &out_dims, origin)?;
    let pad4 = |d: &[usize]| Shape::new(d).map(|s| s.dims4());
    let (in4, k4, out4) = (pad4(&in_dims)?, pad4(&k_dims)?, pad4(&out_dims)?);
    let mut origin4 = [0i32; 4];
    for (o, &v) in origin4[4 - rank..].iter_mut().zip(origin) {
        *o = v as i32;
    }
    let stride4 = [in4[1] * in4[2] * in4[3], in4[2] * in4[3], in4[3], 1];
    let count = out_dims.iter().product::<usize>() as u32;
    let fill = if let Boundary::Constant(v) = boundary { v } else { 0.0 };
    let p = Params {
        out_dims: out4.map(|d| d as u32),
        in_dims: in4.map(|d| d as i32),
        in_stride: stride4.map(|d| d as i32),
        origin: origin4,
        k_dims: k4.map(|d| d as i32),
        count,
        fill,
        pad0: 0,
        pad1: 0,
    };
    let taps: usize = k_dims.iter().product();
    let constants = [("MODE", boundary.code() as f64), ("COMPENSATED", f64::from(u8::from(taps >= COMPENSATED_TAPS)))];
    rec.dispatch(kernel, &constants, bytemuck::bytes_of(&p), &[x, w, y], kernel.groups(count as u64));
    Ok(())
}

/// The kernel indexes with i32: element counts below 2^31, and every coordinate it forms
/// (origin + output + tap, and the reflect period 2n) within ±2^30.
pub(crate) fn check_i32(in_dims: &[usize], k_dims: &[usize], out_dims: &[usize], origin: &[i64]) -> Result<()> {
    const LIMIT: i128 = 1 << 30;
    let elems = |d: &[usize]| d.iter().map(|&v| v as u128).product::<u128>();
    for (what, d) in [("input", in_dims), ("weights", k_dims), ("output", out_dims)] {
        if elems(d) >= 1 << 31 {
            return Err(Error::TooLarge { what: format!("correlation {what} {d:?}"), bytes: elems(d) as u64 * 4, limit: 1 << 33 });
        }
    }
    for a in 0..in_dims.len() {
        let reach = origin[a].unsigned_abs() as i128 + out_dims[a] as i128 + k_dims[a] as i128;
        if reach >= LIMIT || in_dims[a] as i128 >= LIMIT {
            return Err(Error::Invalid(format!("correlation: origin {origin:?} reaches coordinates beyond ±2^30 along axis {a}")));
        }
    }
    Ok(())
}

/// The CPU twin over row-major data (accumulating in f64); arguments as `record_into` checks them.
pub fn cpu(x: &[f32], in_dims: &[usize], w: &[f32], k_dims: &[usize], out_dims: &[usize], origin: &[i64], boundary: Boundary) -> Vec<f32> {
    let fill = if let Boundary::Constant(v) = boundary { v as f64 } else { 0.0 };
    let rank = in_dims.len();
    let mut stride = vec![1usize; rank];
    for a in (0..rank.saturating_sub(1)).rev() {
        stride[a] = stride[a + 1] * in_dims[a + 1];
    }
    let unravel = |mut i: usize, dims: &[usize]| {
        let mut c = vec![0usize; dims.len()];
        for a in (0..dims.len()).rev() {
            c[a] = i % dims[a];
            i /= dims[a];
        }
        c
    };
    let count: usize = out_dims.iter().product();
    (0..count)
        .map(|i| {
            let o = unravel(i, out_dims);
            let mut acc = 0.0f64;
            for (t, &wt) in w.iter().enumerate() {
                let j = unravel(t, k_dims);
                let mut src = Some(0usize);
                for a in 0..rank {
                    let c = boundary.fold(origin[a] + o[a] as i64 + j[a] as i64, in_dims[a] as i64);
                    src = src.zip(c).map(|(s, c)| s + c as usize * stride[a]);
                }
                acc += wt as f64 * src.map_or(fill, |s| x[s] as f64);
            }
            acc as f32
        })
        .collect()
}
