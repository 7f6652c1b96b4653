//! scipy.ndimage's spatial filters (`ops::filter`) against the f64 CPU references (direct sums
//! over explicitly padded arrays), tolerances and helpers as in `tests/convolve.rs`. Fresh random
//! inputs every run, temporaries poisoned (NaN), awkward shapes.

use crate::tests::common;
use common::*;

use super::convolve::{check, check_direct, run_gpu, TOL};
use lucent::kernels::boundary::Boundary;
use lucent::ops::convolve::Method;
use lucent::ops::filter::{self, cpu as filter_cpu};
use ndarray::{ArrayD, IxDyn};

#[test]
fn gaussian_weights_match_scipy() {
    // scipy.ndimage._filters._gaussian_kernel1d(1.5, 0, 6), first half.
    let want = [
        8.922106863539231e-05,
        1.028196578138909e-03,
        7.597402196596929e-03,
        3.599434807370883e-02,
        1.093411749545305e-01,
        2.129_675_285_478_54e-1,
        2.659642571610709e-01,
    ];
    let w = filter::gaussian_kernel1d(1.5, filter::GAUSSIAN_TRUNCATE);
    assert_eq!(w.len(), 13);
    for (i, &v) in want.iter().enumerate() {
        assert!((w[i] - v).abs() < 1e-15 && (w[12 - i] - v).abs() < 1e-15, "{i}: {} vs {v}", w[i]);
    }
}

const BOUNDARIES: [Boundary; 6] = [Boundary::Constant(0.0), Boundary::Constant(0.7), Boundary::Nearest, Boundary::Reflect, Boundary::Mirror, Boundary::Wrap];

#[test]
fn correlate_and_convolve_every_boundary() {
    // (input, kernel): even and odd kernel axes, 1-4D, a single-element axis, a kernel larger
    // than the input.
    let cases: &[(&[usize], &[usize])] =
        &[(&[13], &[4]), (&[1], &[3]), (&[7, 10], &[3, 4]), (&[5, 6, 7], &[2, 3, 3]), (&[3, 4, 2, 5], &[3, 2, 3, 2]), (&[3, 2], &[7, 5])];
    for &(xd, kd) in cases {
        let (x, k) = (rand_array(xd), rand_array(kd));
        let (x64, k64) = (to64(&x), to64(&k));
        let (xa, ka) = (x64.mapv(f64::abs), k64.mapv(f64::abs));
        for b in BOUNDARIES {
            let got = run_gpu(&x, |rec, xb| filter::correlate(rec, xb, &k.view(), b)).unwrap();
            let (want, magnitude) = (filter_cpu::correlate(&x64, &k64, b), filter_cpu::correlate(&xa, &ka, abs_boundary(b)));
            check_direct(&got, &want, &magnitude, &format!("correlate {xd:?} {kd:?} {b:?}"));
            let got = run_gpu(&x, |rec, xb| filter::convolve(rec, xb, &k.view(), b)).unwrap();
            let (want, magnitude) = (filter_cpu::convolve(&x64, &k64, b), filter_cpu::convolve(&xa, &ka, abs_boundary(b)));
            check_direct(&got, &want, &magnitude, &format!("convolve {xd:?} {kd:?} {b:?}"));
        }
    }
}

#[test]
fn one_dimensional_filters_on_every_axis() {
    let dims = [6usize, 7, 8];
    let x = rand_array(&dims);
    for len in [4usize, 5] {
        let w = random(len);
        let w64: Vec<f64> = w.iter().map(|&v| v as f64).collect();
        for axis in 0..3 {
            for b in BOUNDARIES {
                let got = run_gpu(&x, |rec, xb| filter::correlate1d(rec, xb, &w, axis, b)).unwrap();
                check(&got, &filter_cpu::correlate1d(&to64(&x), &w64, axis, b), TOL, &format!("correlate1d len {len} axis {axis} {b:?}"));
            }
            let got = run_gpu(&x, |rec, xb| filter::convolve1d(rec, xb, &w, axis, Boundary::Reflect)).unwrap();
            check(&got, &filter_cpu::convolve1d(&to64(&x), &w64, axis, Boundary::Reflect), TOL, &format!("convolve1d len {len} axis {axis}"));
        }
    }
}

#[test]
fn gaussian_and_uniform_filters() {
    let dims = [12usize, 9, 14];
    let x = rand_array(&dims);
    let x64 = to64(&x);
    for b in BOUNDARIES {
        // Axis 1 has sigma 0: left alone, as scipy does.
        let got = run_gpu(&x, |rec, xb| filter::gaussian_filter(rec, xb, &[1.3, 0.0, 2.1], b)).unwrap();
        check(&got, &filter_cpu::gaussian_filter(&x64, &[1.3f32 as f64, 0.0, 2.1f32 as f64], b), TOL, &format!("gaussian {b:?}"));
        let got = run_gpu(&x, |rec, xb| filter::uniform_filter(rec, xb, &[3, 4, 1], b)).unwrap();
        check(&got, &filter_cpu::uniform_filter(&x64, &[3, 4, 1], b), TOL, &format!("uniform {b:?}"));
    }
    // One value for every axis; a Gaussian wider than the array; nothing to do is a copy.
    let got = run_gpu(&x, |rec, xb| filter::gaussian_filter(rec, xb, &[3.0], Boundary::Mirror)).unwrap();
    check(&got, &filter_cpu::gaussian_filter(&x64, &[3.0; 3], Boundary::Mirror), TOL, "gaussian sigma 3");
    let got = run_gpu(&x, |rec, xb| filter::uniform_filter(rec, xb, &[1], Boundary::Reflect)).unwrap();
    check(&got, &x64, 0.0, "uniform size 1");
}

/// Certainty in [0.3, 1] with a fifth of the samples missing (0), a positive kernel, eps 1e-6.
/// Tolerance 2e-6: numerator and denominator each carry their path's ≤ 3e-7 error relative to
/// their norms, and the ratio divides by denominators that stay within a few times their RMS
/// (≥ 20 positive taps, most of them on certain samples), so an element's relative error grows
/// a few times at most (measured: ~2.5e-7).
#[test]
fn normalized_convolution_matches() {
    let dims = [30usize, 27];
    let x = rand_array(&dims);
    let c = ArrayD::from_shape_vec(IxDyn(&dims), random_positive(30 * 27)).unwrap().mapv(|v| if v < 0.3 { 0.0 } else { v.min(1.0) });
    for kd in [[5usize, 5], [4, 6]] {
        let k = ArrayD::from_shape_vec(IxDyn(&kd), random_positive(kd[0] * kd[1])).unwrap();
        let want = filter_cpu::normalized_convolution(&to64(&x), &to64(&c), &to64(&k), 1e-6).unwrap();
        for method in [Method::Direct, Method::Fft] {
            let got = run_gpu(&x, |rec, xb| {
                let cb = rec.upload_f32(&c.view())?;
                filter::normalized_convolution(rec, xb, cb, &k.view(), method, 1e-6)
            })
            .unwrap();
            check(&got, &want, 2e-6, &format!("normalized convolution {kd:?} {method:?}"));
        }
    }
}
