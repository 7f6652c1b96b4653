//! The host's side of the split: folding an input into parts and adding the parts' results into
//! the output, exactly, in f32 or f64 (the CPU reference runs the same loops in f64).
//!
//! # The math
//! Let N be the circular length along axis 0 (at least the length the output window needs, as
//! [`Geometry`] computes it), N = P·M with M a fast FFT length, W_N = exp(-2πi/N), and r the
//! other axes (padded to the geometry's lengths). Part p of an array x is the M-row slab
//!
//! ```text
//! y_p[n1, r] = W_N^(n1·p) · Σ_{n2<P} x[n1 + M·n2, r] · W_P^(n2·p) = Σ_{n ≡ n1 (mod M)} W_N^(n·p) · x[n, r]
//! ```
//!
//! whose M-point transform along axis 0 is X at the frequencies P·m + p. The product of two
//! spectra only pairs equal frequencies, so each part convolves independently:
//! z_p = IFFT(FFT(y_p) · FFT(k_p)), with k_p the kernel's part. The inverse DFT over all N
//! frequencies then regroups as
//!
//! ```text
//! z[n] = (1/P) · Σ_p W_N^(-n·p) · z_p[n mod M]
//! ```
//!
//! and z is real. Part P - p is the conjugate mirror of part p (X[N - f] = conj X[f] for real x),
//! and its term in the sum is the conjugate of part p's term, so only parts 0..=P/2 are computed
//! and the others are counted by doubling the real part of their mirror's term. Twiddles are
//! computed in f64 with the phase n·p reduced modulo N in integers.

use ndarray::{ArrayD, ArrayViewD, IxDyn};
use num_complex::{Complex, Complex64};
use rayon::prelude::*;
use rustfft::FftNum;

use super::plan::SplitPlan;
#[cfg(test)]
use crate::error::Result;
#[cfg(test)]
use crate::fft::Norm;
#[cfg(test)]
use crate::ops::convolve::{Geometry, Mode};

/// exp(-2πi t / n) for an integer phase t reduced mod n first (as `fft::twiddle` does; exact
/// quarter turns).
fn unit_root(t: u128, n: u128) -> Complex64 {
    let t = t % n;
    if (4 * t).is_multiple_of(n) {
        return [Complex64::new(1.0, 0.0), Complex64::new(0.0, -1.0), Complex64::new(-1.0, 0.0), Complex64::new(0.0, 1.0)][(4 * t / n) as usize];
    }
    let angle = -2.0 * std::f64::consts::PI * (t as f64) / (n as f64);
    Complex64::new(angle.cos(), angle.sin())
}

fn to_t<T: FftNum>(c: Complex64) -> Complex<T> {
    Complex::new(T::from_f64(c.re).unwrap(), T::from_f64(c.im).unwrap())
}

/// Columns a host loop handles at once: the rows that feed a block (a fold's input rows, a
/// recombination's part rows) stay in cache while it is written.
const BLOCK: usize = 1024;

/// y[i] += Σ_j term(w_j, x_j[i]), four rows per pass over y, so y is loaded and stored once
/// per four terms.
fn add_terms<Y, W, X>(y: &mut [Y], terms: &[(W, &[X])], term: impl Fn(W, X) -> Y)
where
    Y: Copy + std::ops::Add<Output = Y>,
    W: Copy,
    X: Copy,
{
    for chunk in terms.chunks(4) {
        if let &[(w0, x0), (w1, x1), (w2, x2), (w3, x3)] = chunk {
            for ((((y, &a), &b), &c), &d) in y.iter_mut().zip(x0).zip(x1).zip(x2).zip(x3) {
                *y = *y + term(w0, a) + term(w1, b) + term(w2, c) + term(w3, d);
            }
        } else {
            for &(w, x) in chunk {
                for (y, &a) in y.iter_mut().zip(x) {
                    *y = *y + term(w, a);
                }
            }
        }
    }
}

/// y[i] += Σ_j w_j · x_j[i] (complex weights, real rows): the fold.
fn add_weighted_rows<T: FftNum>(y: &mut [Complex<T>], terms: &[(Complex<T>, &[T])]) {
    add_terms(y, terms, |w, a| w * a);
}

/// y[i] += Σ_j Re(c_j · z_j[i]) (complex weights, complex rows): the recombination.
fn add_real_products<T: FftNum>(y: &mut [T], terms: &[(Complex<T>, &[Complex<T>])]) {
    add_terms(y, terms, |c, z| c.re * z.re - c.im * z.im);
}

/// Runs `f(row, column, segments)` over equally long `data` slices seen as rows of `row`
/// elements, on rayon's pool: the element range is cut into contiguous ranges (parts may have few
/// rows but long ones), each range into its pieces of rows, and `segments` holds the same piece
/// of every slice, starting at `column` of row `row`.
fn par_rows<E: Send>(data: Vec<&mut [E]>, row: usize, f: impl Fn(usize, usize, &mut [&mut [E]]) + Sync) {
    let row = row.max(1);
    let len = data.first().map_or(0, |d| d.len());
    assert!(data.iter().all(|d| d.len() == len), "par_rows: slices of different lengths");
    // At least 4 ranges (the same cuts on any machine), none under 4096 elements (not worth a
    // task).
    let chunk = len.div_ceil(rayon::current_num_threads().max(4)).max(1 << 12);
    let mut ranges: Vec<Vec<&mut [E]>> = (0..len.div_ceil(chunk)).map(|_| Vec::with_capacity(data.len())).collect();
    for d in data {
        for (range, piece) in ranges.iter_mut().zip(d.chunks_mut(chunk)) {
            range.push(piece);
        }
    }
    ranges.into_par_iter().enumerate().for_each(|(c, mut pieces)| {
        let (first, end) = (c * chunk, c * chunk + pieces[0].len());
        let mut at = first;
        while at < end {
            let len = (row - at % row).min(end - at);
            let mut segments: Vec<&mut [E]> = pieces.iter_mut().map(|p| &mut p[at - first..at - first + len]).collect();
            f(at / row, at % row, &mut segments);
            at += len;
        }
    });
}

/// The parts `parts` of `x` (standard layout, the image or the kernel) in one sweep over `x`:
/// row n1 < min(M, rows) of part p is Σ_{n ≡ n1 mod M} W_N^(n·p) · x[n]. Each row of `x` is read
/// once for the whole group. Shapes [`SplitPlan::slab_dims`].
pub fn fold<T: FftNum>(x: &ArrayViewD<T>, plan: &SplitPlan, parts: &[usize]) -> Vec<ArrayD<Complex<T>>> {
    fold_reusing(x, plan, parts, &mut Vec::new())
}

/// [`fold`] into `spare` buffers of earlier parts where there are some of the right length: a
/// fresh buffer costs a page fault per 4 KiB on first write, which made up most of a fold.
pub fn fold_reusing<T: FftNum>(x: &ArrayViewD<T>, plan: &SplitPlan, parts: &[usize], spare: &mut Vec<Vec<Complex<T>>>) -> Vec<ArrayD<Complex<T>>> {
    let x = x.as_standard_layout();
    let src = x.as_slice().unwrap();
    let dims = plan.slab_dims(x.shape());
    let row: usize = dims[1..].iter().product();
    let (rows_in, m, group) = (x.shape()[0], plan.part_len, parts.len());
    // W_N^(n·p) for every input row n and part p of the group, row-major.
    let w: Vec<Complex<T>> = (0..rows_in).flat_map(|n| parts.iter().map(move |&p| to_t::<T>(unit_root(n as u128 * p as u128, plan.len as u128)))).collect();
    let zero = Complex::new(T::zero(), T::zero());
    let mut ys: Vec<Vec<Complex<T>>> = parts
        .iter()
        .map(|_| match spare.pop() {
            Some(y) if y.len() == dims[0] * row => y,
            _ => vec![zero; dims[0] * row],
        })
        .collect();
    par_rows(ys.iter_mut().map(|y| y.as_mut_slice()).collect(), row, |n1, col, outs| {
        let mut terms = Vec::new();
        for b in (0..outs[0].len()).step_by(BLOCK) {
            let end = (b + BLOCK).min(outs[0].len());
            for (k, y) in outs.iter_mut().enumerate() {
                y[b..end].fill(zero); // a reused buffer holds an earlier part
                terms.clear();
                terms.extend((n1..rows_in).step_by(m).map(|n| (w[n * group + k], &src[n * row + col + b..n * row + col + end])));
                add_weighted_rows(&mut y[b..end], &terms);
            }
        }
    });
    ys.into_iter().map(|y| ArrayD::from_shape_vec(IxDyn(&dims), y).unwrap()).collect()
}

/// Adds the terms of the finished parts `zs` ((p, z_p), z_p of shape
/// [`SplitPlan::out_part_dims`], standard layout) to the output in one sweep over it:
/// out[o] += Σ_p weight/P · Re(W_N^(-n·p) · z_p[n mod M]) with n = (start + o) mod N along axis 0.
/// The sweep goes part row by part row: the output rows ≡ n1 (mod M) all read row n1 of every
/// z_p, so each z_p is read from memory once and the output once per group.
pub fn recombine<T: FftNum>(out: &mut ArrayD<T>, zs: &[(usize, &ArrayD<Complex<T>>)], plan: &SplitPlan) {
    let row: usize = plan.geometry.out[1..].iter().product();
    let (start, n_len, m) = (plan.geometry.start[0], plan.len, plan.part_len);
    let group = zs.len();
    let src: Vec<&[Complex<T>]> = zs.iter().map(|(_, z)| z.as_slice().expect("parts come back in standard layout")).collect();
    let part_row = |o: usize| (start + o) % n_len;
    // weight/P · W_N^(-n·p) for every output row and part, row-major.
    let rows_out = plan.geometry.out[0];
    let w: Vec<Complex<T>> = (0..rows_out)
        .flat_map(|o| {
            zs.iter().map(move |&(p, _)| to_t::<T>(unit_root(part_row(o) as u128 * p as u128, n_len as u128).conj() * (plan.weight(p) / plan.parts as f64)))
        })
        .collect();
    // Work units: (part row n1, a column range) with the output rows that read it; about four
    // per thread (for rayon to balance), none under 4096 columns.
    let threads = rayon::current_num_threads();
    let cuts = (4 * threads.max(4)).div_ceil(m).min(row >> 12).max(1);
    let width = row.div_ceil(cuts).max(1);
    let mut units: Vec<Vec<(usize, &mut [T])>> = (0..m * cuts).map(|_| Vec::new()).collect();
    let dst = out.as_slice_mut().expect("the output is allocated in standard layout");
    for (o, out_row) in dst.chunks_mut(row.max(1)).enumerate() {
        for (c, piece) in out_row.chunks_mut(width).enumerate() {
            units[(part_row(o) % m) * cuts + c].push((o, piece));
        }
    }
    // Rayon splits no further than 4096 output elements a task (not worth a thread below).
    let per_unit = (rows_out * row).div_ceil(units.len()).max(1);
    let min_units = (1usize << 12).div_ceil(per_unit);
    units.into_par_iter().enumerate().with_min_len(min_units).for_each(|(u, mut rows)| {
        let (n1, col) = (u / cuts, (u % cuts) * width);
        let Some(len) = rows.first().map(|(_, r)| r.len()) else { return };
        let mut terms = Vec::with_capacity(group);
        for b in (0..len).step_by(BLOCK) {
            let at = n1 * row + col + b;
            let end = (b + BLOCK).min(len);
            for (o, dst) in rows.iter_mut() {
                terms.clear();
                terms.extend(src.iter().zip(&w[*o * group..(*o + 1) * group]).map(|(z, &c)| (c, &z[at..at + end - b])));
                add_real_products(&mut dst[b..end], &terms);
            }
        }
    });
}

/// The split algorithm on the CPU (rustfft), in any precision: the f64 check of the algebra.
#[cfg(test)]
pub fn reference<T: FftNum>(a: &ArrayViewD<T>, k: &ArrayViewD<T>, mode: Mode, parts: usize) -> Result<ArrayD<T>> {
    let g = Geometry::new(a.shape(), k.shape(), mode)?;
    let plan = SplitPlan::new(&g, parts)?;
    let axes: Vec<usize> = (0..g.padded.len()).collect();
    let spectrum = |x: ArrayD<Complex<T>>| {
        let mut padded = ArrayD::from_elem(IxDyn(&plan.part_dims), Complex::new(T::zero(), T::zero()));
        padded.slice_each_axis_mut(|ax| ndarray::Slice::from(0..x.shape()[ax.axis.0])).assign(&x);
        crate::fft::cpu::c2c(&padded, &axes, false, Norm::Backward)
    };
    // All parts folded in one group and recombined in one sweep (the pipeline's groups are
    // smaller; the loops are the same).
    let parts: Vec<usize> = plan.computed_parts().collect();
    let zs: Vec<ArrayD<Complex<T>>> = fold(a, &plan, &parts)
        .into_iter()
        .zip(fold(k, &plan, &parts))
        .map(|(ya, yk)| {
            let zf = crate::fft::cpu::c2c(&(spectrum(ya) * spectrum(yk)), &axes, true, Norm::Backward);
            ArrayD::from_shape_fn(IxDyn(&plan.out_part_dims()), |o| {
                let src: Vec<usize> = (0..axes.len()).map(|d| if d == 0 { o[0] } else { (g.start[d] + o[d]) % g.padded[d] }).collect();
                zf[IxDyn(&src)]
            })
        })
        .collect();
    let mut out = ArrayD::from_elem(IxDyn(&g.out), T::zero());
    recombine(&mut out, &parts.iter().copied().zip(&zs).collect::<Vec<_>>(), &plan);
    Ok(out)
}
