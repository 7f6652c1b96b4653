//! `shaders/filter/footprint_rank.wgsl`: the rank-th smallest of x[i + offset] over a
//! footprint's taps, scipy.ndimage's modes (rank, median and percentile filters).

use bytemuck::{Pod, Zeroable};

use super::boundary::Boundary;
use super::FOOTPRINT_RANK;
use crate::error::{Error, Result};
use crate::graph::{Buf, Recording};

/// Most taps a footprint may have (the kernel's per-thread array).
pub const MAX_TAPS: usize = 343;

/// Mirrors `Params` in footprint_rank.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub dims: [u32; 4],
    pub count: u32,
    pub taps: u32,
    pub rank: u32,
    pub cval: f32,
}

/// `y[i]` = the `rank`-th smallest (from 0) of x[i + offsets[t]] over the taps, `x` f32 (or f64
/// on devices with it) of 1-4 axes, `offsets` one per axis of x for each tap (1 to [`MAX_TAPS`]).
pub fn record(rec: &mut Recording, x: Buf, offsets: &[Vec<i64>], rank: usize, boundary: Boundary) -> Result<Buf> {
    let dtype = rec.dtype(x);
    let twin = FOOTPRINT_RANK.for_dtype(dtype)?;
    let dims = rec.dims(x).to_vec();
    let d = dims.len();
    if d == 0 || d > 4 || offsets.iter().any(|o| o.len() != d) {
        return Err(Error::Shape(format!("a footprint over an array of {dims:?}: 1 to 4 axes, one offset per axis")));
    }
    if offsets.is_empty() || offsets.len() > MAX_TAPS || rank >= offsets.len() {
        return Err(Error::Invalid(format!(
            "a rank filter of {} taps at rank {rank}: 1 to {MAX_TAPS} taps (a larger footprint is not implemented), the rank within them",
            offsets.len()
        )));
    }
    let lead = 4 - d;
    let off = super::footprint_extreme::upload_offsets(rec, offsets, d)?;
    let y = rec.temp(&dims, dtype)?;
    let count = dims.iter().product::<usize>();
    let mut p = Params::zeroed();
    (0..4).for_each(|a| p.dims[a] = if a < lead { 1 } else { dims[a - lead] as u32 });
    (p.count, p.taps, p.rank, p.cval) = (count as u32, offsets.len() as u32, rank as u32, boundary.cval());
    let kernel = twin.unrolled(&selection(offsets, lead));
    rec.dispatch(kernel, &[("MODE", boundary.code() as f64)], bytemuck::bytes_of(&p), &[x, off, y], kernel.groups(count as u64));
    Ok(y)
}

/// Most taps selected by a sorting network in registers (beyond: the kernel's selection). The
/// 64-input network's 543 comparators took lavapipe's compiler 16 s; 32's 191 take 0.05.
const NETWORK_TAPS: usize = 32;

/// The kernel's selection section for a footprint's `offsets` (4 − `lead` axes): up to
/// [`NETWORK_TAPS`], the taps in variables (read straight at their constant offsets where the
/// whole footprint lies inside the array, folded by the mode elsewhere), padded with +inf to a
/// power of two and sorted by Batcher's odd-even merge network (comparators between two
/// paddings left out), the parameters' rank read; beyond, the kernel's own Hoare selection with
/// its array sized to the taps.
fn selection(offsets: &[Vec<i64>], lead: usize) -> String {
    let taps = offsets.len();
    if taps > NETWORK_TAPS {
        let source = FOOTPRINT_RANK.source;
        let (b, e) = (source.find("// unrolled: begin").expect("marked"), source.find("// unrolled: end").expect("marked"));
        let section = &source[b + "// unrolled: begin".len()..e];
        return section.trim_end().replace("MAX_TAPS", &taps.to_string());
    }
    let four = |o: &Vec<i64>| -> [i32; 4] {
        let mut f = [0i32; 4];
        f[lead..].iter_mut().zip(o).for_each(|(f, &v)| *f = v as i32);
        f
    };
    let vec = |f: [i32; 4]| format!("vec4<i32>({}, {}, {}, {})", f[0], f[1], f[2], f[3]);
    let (lo, hi) = super::footprint_extreme::bounds(offsets, lead);
    let size = taps.next_power_of_two();
    let mut s = String::new();
    for t in 0..size {
        let value = if t < taps { String::new() } else { " = real(bitcast<f32>(0x7f800000u))".into() };
        s += &format!("    var v{t}: real{value};\n");
    }
    s += &format!("    if (footprint_inside(c, n, {}, {})) {{\n", vec(lo), vec(hi));
    for (t, o) in offsets.iter().enumerate() {
        s += &format!("        v{t} = x[footprint_at(i, {}, n)];\n", vec(four(o)));
    }
    s += "    } else {\n";
    for t in 0..taps {
        s += &format!("        v{t} = tap_value(c, n, {t}u);\n");
    }
    s += "    }\n";
    for (a, b) in batcher_pairs(size) {
        if a < taps || b < taps {
            s += &format!("    {{ let low = min(v{a}, v{b}); v{b} = max(v{a}, v{b}); v{a} = low; }}\n");
        }
    }
    // The rank from the parameters, so one pipeline serves every rank of a footprint.
    s += "    switch p.rank {\n";
    for r in 0..taps {
        s += &format!("        case {r}u: {{ y[i] = v{r}; }}\n");
    }
    s + "        default: { y[i] = v0; }\n    }"
}

/// The comparators of Batcher's odd-even merge sort of `n` (a power of two) elements, in order
/// (Knuth, TAOCP 5.3.4, algorithm M).
fn batcher_pairs(n: usize) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    let mut p = 1;
    while p < n {
        let mut k = p;
        while k >= 1 {
            for j in (k % p..n - k).step_by(2 * k) {
                for i in 0..k.min(n - j - k) {
                    if (i + j) / (2 * p) == (i + j + k) / (2 * p) {
                        pairs.push((i + j, i + j + k));
                    }
                }
            }
            k /= 2;
        }
        p *= 2;
    }
    pairs
}

#[cfg(test)]
mod tests {
    /// The network sorts every 0/1 input of its size (the zero-one principle: then it sorts all).
    #[test]
    fn batcher_network_sorts() {
        for n in [1usize, 2, 4, 8, 16] {
            let pairs = super::batcher_pairs(n);
            for bits in 0u32..(1 << n) {
                let mut v: Vec<u32> = (0..n).map(|i| (bits >> i) & 1).collect();
                for &(a, b) in &pairs {
                    if v[a] > v[b] {
                        v.swap(a, b);
                    }
                }
                assert!(v.windows(2).all(|w| w[0] <= w[1]), "n {n} bits {bits:b}");
            }
        }
        assert_eq!(super::batcher_pairs(32).len(), 191);
        assert_eq!(super::batcher_pairs(64).len(), 543);
    }
}
