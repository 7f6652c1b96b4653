//! FFT accuracy against an f64 reference (rustfft in f64 on the same f32 inputs), the gate of the
//! FFT issue: relative L2 ≤ 1e-6 and max|Δ|/max|ref| < 2e-6 + 5e-7·log10(N), twice that for
//! Bluestein lengths. Inputs uniform in ±0.5, fresh each run; temporaries poisoned.

mod common;
use common::*;

use lucent::fft::{self, cpu, plan, FftPlan, Norm, Transform};
use lucent::{Dtype, Error, Recording};
use ndarray::{ArrayD, IxDyn};
use num_complex::{Complex32, Complex64};

struct Errors {
    rel_l2: f64,
    rel_max: f64,
}

fn errors(got: &[f64], want: &[f64]) -> Errors {
    let mut num = 0.0;
    let mut den = 0.0;
    let mut dmax: f64 = 0.0;
    let mut rmax: f64 = 0.0;
    for (&g, &w) in got.iter().zip(want) {
        let d = if g.is_finite() { (g - w).abs() } else { f64::INFINITY };
        num += d * d;
        den += w * w;
        dmax = dmax.max(d);
        rmax = rmax.max(w.abs());
    }
    Errors { rel_l2: (num / den).sqrt(), rel_max: dmax / rmax }
}

fn flat_c(a: &ArrayD<Complex32>) -> Vec<f64> {
    a.iter().flat_map(|c| [c.re as f64, c.im as f64]).collect()
}
fn flat_c64(a: &ArrayD<Complex64>) -> Vec<f64> {
    a.iter().flat_map(|c| [c.re, c.im]).collect()
}
fn to64(a: &ArrayD<Complex32>) -> ArrayD<Complex64> {
    a.mapv(|c| Complex64::new(c.re as f64, c.im as f64))
}

/// The gate's bound on max|Δ|/max|ref| for a transform of `n` points in all.
fn max_bound(n: usize, bluestein: bool) -> f64 {
    let b = 2e-6 + 5e-7 * (n.max(1) as f64).log10();
    if bluestein { 2.0 * b } else { b }
}

fn uses_bluestein(dims: &[usize], axes: &[usize]) -> bool {
    axes.iter().any(|&a| plan::factor(dims[a]).is_none())
}

fn check_c2c(dims: &[usize], axes: &[usize], inverse: bool, norm: Norm) {
    let n: usize = dims.iter().product();
    let x = ArrayD::from_shape_vec(IxDyn(dims), random_complex(n)).unwrap();
    let got = fft::fftn(gpu(), &x.view(), axes, inverse, norm).unwrap();
    let want = cpu::c2c(&to64(&x), axes, inverse, norm);
    let e = errors(&flat_c(&got), &flat_c64(&want));
    let points: usize = axes.iter().map(|&a| dims[a]).product();
    let bound = max_bound(points, uses_bluestein(dims, axes));
    let what = format!("c2c {dims:?} axes {axes:?} inverse {inverse} {norm:?}");
    assert!(e.rel_l2 <= 1e-6, "{what}: relative L2 {:e}", e.rel_l2);
    assert!(e.rel_max < bound, "{what}: max error {:e} >= {bound:e}", e.rel_max);
}

#[test]
fn small_lengths_both_directions() {
    for n in 1..=64 {
        check_c2c(&[3, n], &[1], false, Norm::Backward);
        check_c2c(&[n, 2], &[0], true, Norm::Backward);
    }
}
