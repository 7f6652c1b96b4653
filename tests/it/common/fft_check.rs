//! FFT checks against an f64 reference (rustfft in f64 on the same f32 inputs), shared by the
//! FFT test binaries: relative L2 ≤ 1e-6 and max|Δ|/max|ref| < 2e-6 + 5e-7·log10(N), twice that
//! for plans with a Bluestein axis. Each check runs on the GPU it is given (tests/it/fft_loops.rs
//! gives one with its own tuning).

use super::*;
use lucent::fft::{self, cpu, FftPlan, Norm, Transform};
use lucent::{Gpu, Recording};
use ndarray::{ArrayD, IxDyn};
use num_complex::{Complex32, Complex64};

pub struct Errors {
    pub rel_l2: f64,
    pub rel_max: f64,
}

pub fn errors(got: &[f64], want: &[f64]) -> Errors {
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

pub fn flat_c(a: &ArrayD<Complex32>) -> Vec<f64> {
    a.iter().flat_map(|c| [c.re as f64, c.im as f64]).collect()
}
pub fn flat_c64(a: &ArrayD<Complex64>) -> Vec<f64> {
    a.iter().flat_map(|c| [c.re, c.im]).collect()
}
/// The gate's bound on max|Δ|/max|ref| for a transform of `n` points in all.
pub fn max_bound(n: usize, bluestein: bool) -> f64 {
    let b = 2e-6 + 5e-7 * (n.max(1) as f64).log10();
    if bluestein {
        2.0 * b
    } else {
        b
    }
}

pub fn uses_bluestein(gpu: &Gpu, dims: &[usize], axes: &[usize], transform: Transform) -> bool {
    FftPlan::new(gpu, dims, axes, transform, Norm::Backward).unwrap().uses_bluestein()
}

pub fn check_c2c(gpu: &Gpu, dims: &[usize], axes: &[usize], inverse: bool, norm: Norm) {
    let n: usize = dims.iter().product();
    let x = ArrayD::from_shape_vec(IxDyn(dims), random_complex(n)).unwrap();
    let got = if inverse { fft::ifftn(gpu, &x, Some(axes), norm) } else { fft::fftn(gpu, &x, Some(axes), norm) }.unwrap();
    let want = cpu::c2c(&to64(&x), axes, inverse, norm);
    let e = errors(&flat_c(&got), &flat_c64(&want));
    let points: usize = axes.iter().map(|&a| dims[a]).product();
    let bound = max_bound(points, uses_bluestein(gpu, dims, axes, if inverse { Transform::Inverse } else { Transform::Forward }));
    let what = format!("c2c {dims:?} axes {axes:?} inverse {inverse} {norm:?}");
    assert!(e.rel_l2 <= 1e-6, "{what}: relative L2 {:e}", e.rel_l2);
    assert!(e.rel_max < bound, "{what}: max error {:e} >= {bound:e}", e.rel_max);
}

pub fn check_real(gpu: &Gpu, dims: &[usize], axes: &[usize], norm: Norm) {
    let n: usize = dims.iter().product();
    let x = ArrayD::from_shape_vec(IxDyn(dims), random(n)).unwrap();
    let what = format!("real {dims:?} axes {axes:?} {norm:?}");
    let points: usize = axes.iter().map(|&a| dims[a]).product();
    let spectrum = fft::rfftn(gpu, &x, Some(axes), norm).unwrap();
    let want = cpu::r2c(&x.mapv(|v| v as f64), axes, norm);
    assert_eq!(spectrum.shape(), want.shape(), "{what}");
    let last = *axes.iter().max().unwrap();
    let len = dims[last];
    let bluestein = uses_bluestein(gpu, dims, axes, Transform::RealForward) || uses_bluestein(gpu, spectrum.shape(), axes, Transform::RealInverse { len });
    let e = errors(&flat_c(&spectrum), &flat_c64(&want));
    assert!(e.rel_l2 <= 1e-6 && e.rel_max < max_bound(points, bluestein), "{what} forward: {:e} {:e}", e.rel_l2, e.rel_max);
    // Inverse of a fresh random half spectrum against the reference, then the round trip.
    let h: Vec<Complex32> = random_complex(spectrum.len());
    let h = ArrayD::from_shape_vec(spectrum.raw_dim(), h).unwrap();
    let back = fft::irfftn(gpu, &h, Some(axes), Some(len), norm).unwrap();
    let want = cpu::c2r(&to64(&h), axes, len, norm);
    assert_eq!(back.shape(), dims, "{what}");
    let e = errors(&back.iter().map(|&v| v as f64).collect::<Vec<_>>(), &want.iter().copied().collect::<Vec<_>>());
    assert!(e.rel_l2 <= 1e-6 && e.rel_max < max_bound(points, bluestein), "{what} inverse: {:e} {:e}", e.rel_l2, e.rel_max);
    let round = fft::irfftn(gpu, &spectrum, Some(axes), Some(len), norm).unwrap();
    let e = errors(&round.iter().map(|&v| v as f64).collect::<Vec<_>>(), &x.iter().map(|&v| v as f64).collect::<Vec<_>>());
    assert!(e.rel_l2 <= 1e-6, "{what} round trip: {:e}", e.rel_l2);
}

/// A c2c transform recorded in place: it runs in place (returns its input) exactly when every
/// step of the plan can (`all_in_place`), and is right either way.
pub fn check_in_place(gpu: &Gpu, dims: &[usize], axes: &[usize], inverse: bool, all_in_place: bool) {
    let n: usize = dims.iter().product();
    let x = ArrayD::from_shape_vec(IxDyn(dims), random_complex(n)).unwrap();
    let t = if inverse { Transform::Inverse } else { Transform::Forward };
    let plan = FftPlan::new(gpu, dims, axes, t, Norm::Backward).unwrap();
    assert_eq!(plan.is_in_place(), all_in_place, "{dims:?}");
    let mut rec = Recording::new(gpu);
    rec.set_poison(true);
    let xb = rec.upload_c32(&x.view()).unwrap();
    let y = plan.record_in_place(&mut rec, xb).unwrap();
    assert_eq!(y == xb, all_in_place, "{dims:?}");
    let d = rec.download(y);
    let got = rec.run().unwrap().c32(d).unwrap();
    let want = cpu::c2c(&to64(&x), axes, inverse, Norm::Backward);
    let e = errors(&flat_c(&got), &flat_c64(&want));
    assert!(e.rel_l2 <= 1e-6, "in place {dims:?} axes {axes:?}: relative L2 {:e}", e.rel_l2);
}
