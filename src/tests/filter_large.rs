//! Filters with kernels much longer than the axes (which once gave wrong answers, or could not
//! be made at all) and non-finite input or cval.
//!
//! A kernel longer than its axis is folded onto the axis on the host (`ops::filter::
//! gaussian_weights`, `uniform_weights`): the GPU result is checked against the unfolded f64
//! reference (scipy's kernel, direct sums over explicitly padded arrays) for the sizes that once
//! gave wrong answers, against the folded f64 reference and closed forms for sizes whose
//! unfolded kernel could not be made, and sizes beyond the Gaussian's tap limit must be a clear
//! error, quickly.
//!
//! Data in [0, 1), as in the failing cases (its mean is the answer of the widest filters). Tolerance
//! 4e-6 relative L2: a folded kernel has at most 2n + 1 taps (≤ 65 here) summed in plain f32
//! (compensation starts at 256 taps), two passes for the 2D image: the rounding bound is
//! 2 · 65 · 2^-24 ≈ 7.7e-6, typically ~7e-7; a folded kernel's end taps carry nearly all the
//! weight, so the small taps are added to a large sum (measured up to 1.3e-6, uniform 20000
//! nearest, in about one run of ten; the wrong answers these tests guard against were off by 1e-4
//! and more).

use crate::tests::common;
use common::*;

use std::time::{Duration, Instant};

use lucent::kernels::correlate_tiled;
use lucent::ndimage::{self, Boundary};
use lucent::ops::filter::{self, cpu};
use lucent::Error;
use ndarray::ArrayD;

const TOL: f64 = 4e-6;

const BOUNDARIES: [Boundary; 6] = [Boundary::Constant(0.0), Boundary::Constant(0.7), Boundary::Nearest, Boundary::Reflect, Boundary::Mirror, Boundary::Wrap];

fn check(got: &ArrayD<f32>, want: &ArrayD<f64>, what: &str) {
    assert_rel_l2(got, want, TOL, what);
}

/// Uniform in [0, 1).
fn image(dims: &[usize]) -> ArrayD<f32> {
    rand_array(dims).mapv(|v| v + 0.5)
}

/// The sizes that once gave wrong answers on the GPU, and their neighbours, against
/// scipy's unfolded kernel: every boundary, a 32×32 image, a 1-wide axis and a 2-wide one.
#[test]
fn long_kernels_match_the_unfolded_reference() {
    for dims in [&[32usize, 32][..], &[2, 1, 7]] {
        let x = image(dims);
        let x64 = to64(&x);
        for b in BOUNDARIES {
            for sigma in [2500.0f32, 3000.0, 4000.0, 7000.0, 10000.0] {
                let got = ndimage::gaussian_filter(gpu(), &x, &[sigma], b).unwrap();
                check(&got, &cpu::gaussian_filter(&x64, &vec![sigma as f64; dims.len()], b), &format!("gaussian {sigma} {b:?} {dims:?}"));
            }
            for size in [20000usize, 30000, 100000, 65, 66, 67] {
                let got = ndimage::uniform_filter(gpu(), &x, &[size], b).unwrap();
                check(&got, &cpu::uniform_filter(&x64, &vec![size; dims.len()], b), &format!("uniform {size} {b:?} {dims:?}"));
            }
        }
    }
}

/// Kernels just longer than the folded length, per axis, so each fold's edge (the period, the
/// end taps) is exercised: the folded weights against the unfolded reference on the CPU.
#[test]
fn folding_matches_the_unfolded_reference_at_every_length() {
    let x = image(&[5, 3, 1]);
    let x64 = to64(&x);
    for b in BOUNDARIES {
        for size in 1..=24 {
            let passes = filter::uniform_passes(&[size], x.shape(), b).unwrap();
            let want = cpu::uniform_filter(&x64, &[size; 3], b);
            let got = cpu::separable(&x64, &passes, b);
            let err = (&got - &want).iter().map(|v| v.abs()).fold(0.0, f64::max);
            assert!(err < 1e-12, "uniform {size} {b:?}: {err:e}");
        }
        for sigma in [0.3, 0.9, 1.0, 1.6, 2.1, 3.3, 7.0] {
            let passes = filter::gaussian_passes(&[sigma], x.shape(), b).unwrap();
            let want = cpu::gaussian_filter(&x64, &[sigma as f64; 3], b);
            let got = cpu::separable(&x64, &passes, b);
            let err = (&got - &want).iter().map(|v| v.abs()).fold(0.0, f64::max);
            assert!(err < 1e-12, "gaussian {sigma} {b:?}: {err:e}");
        }
    }
}

/// Sizes whose kernels once could not be made (panics, aborts, gigabytes): a correct answer
/// against the folded f64 reference and the closed forms, or a clear error, each within seconds.
#[test]
fn huge_sizes_are_bounded() {
    let x = image(&[32, 32]);
    let x64 = to64(&x);
    let mean = x64.mean().unwrap();
    let limit = Duration::from_secs(20);

    // Gaussian 1e6: 8e6 taps summed on the host, folded to ≤ 65.
    for b in BOUNDARIES {
        let t = Instant::now();
        let got = ndimage::gaussian_filter(gpu(), &x, &[1e6], b).unwrap();
        let passes = filter::gaussian_passes(&[1e6], x.shape(), b).unwrap();
        assert!(passes.iter().all(|(_, w)| w.len() <= 65), "{b:?}: folded to {:?}", passes.iter().map(|(_, w)| w.len()).collect::<Vec<_>>());
        check(&got, &cpu::separable(&x64, &passes, b), &format!("gaussian 1e6 {b:?}"));
        assert!(t.elapsed() < limit, "gaussian 1e6 {b:?} took {:?}", t.elapsed());
    }
    // Wrapped (or reflected), a Gaussian far wider than the image averages it.
    let got = ndimage::gaussian_filter(gpu(), &x, &[1e6], Boundary::Wrap).unwrap();
    check(&got, &ArrayD::from_elem(x.shape(), mean), "gaussian 1e6 wrap = mean");

    // Beyond the tap limit: a clear error, at once.
    for sigma in [1e8f32, 1e10, 1e15, 1e19, 1e30, f32::MAX] {
        let t = Instant::now();
        match ndimage::gaussian_filter(gpu(), &x, &[sigma], Boundary::Reflect) {
            Err(Error::Invalid(m)) => assert!(m.contains("taps"), "{m}"),
            other => panic!("gaussian {sigma}: {other:?}"),
        }
        assert!(t.elapsed() < Duration::from_secs(1), "gaussian {sigma} took {:?}", t.elapsed());
    }

    // Uniform of any size: closed-form counts. Wrap and reflect: the mean; constant: cval;
    // nearest: the mean of the two edge values; mirror against the folded reference.
    for size in [1 << 40, usize::MAX, usize::MAX - 1, 1_000_000_007] {
        for b in BOUNDARIES {
            let t = Instant::now();
            let got = ndimage::uniform_filter(gpu(), &x, &[size], b).unwrap();
            let passes = filter::uniform_passes(&[size], x.shape(), b).unwrap();
            check(&got, &cpu::separable(&x64, &passes, b), &format!("uniform {size} {b:?}"));
            let closed = match b {
                Boundary::Wrap | Boundary::Reflect => Some(ArrayD::from_elem(x.shape(), mean)),
                Boundary::Constant(c) => Some(ArrayD::from_elem(x.shape(), c as f64)),
                Boundary::Nearest => {
                    let corners = (x64[[0, 0]] + x64[[0, 31]] + x64[[31, 0]] + x64[[31, 31]]) / 4.0;
                    Some(ArrayD::from_elem(x.shape(), corners))
                }
                Boundary::Mirror => None,
            };
            if let Some(want) = closed {
                // Constant 0: the answer is 0 up to 1/size; compare absolutely there.
                if b == Boundary::Constant(0.0) {
                    assert!(got.iter().all(|v| v.abs() < 1e-6), "uniform {size} constant 0");
                } else {
                    check(&got, &want, &format!("uniform {size} {b:?} closed form"));
                }
            }
            assert!(t.elapsed() < limit, "uniform {size} {b:?} took {:?}", t.elapsed());
        }
    }
}

/// Long kernels on longer axes are not folded: the GPU's direct sums over ~30000 taps (a length
/// that once lost its far taps) against the unfolded f64 reference, on an axis of 40009.
/// Plain f32 sums erred by up to 1e-4 of max|x| (in constant mode, cval 0.7, one product is
/// added T times and rounds the same way each time, an error growing like T·u; 3e-6 in reflect
/// mode); the kernels now sum long windows in compensated blocks (`COMPENSATED_TAPS`), which err
/// by ~1e-7. Cases: uniform 30000 (constant, reflect, wrap), a prime 29989, a Gaussian of 30001
/// taps, a row of 9999 (the tiled kernel where its halo fits), and 150 × 150 taps (the tiled
/// kernel: many short rows). Tolerance: the largest error 2e-6 of max|input| (weights sum to 1).
#[test]
fn long_unfolded_kernels_are_compensated() {
    let mut failed = Vec::new();
    let mut check_max = |got: &ArrayD<f32>, want: &ArrayD<f64>, x64: &ArrayD<f64>, what: &str| {
        assert_eq!(got.shape(), want.shape(), "{what}: shape");
        let scale = x64.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let err = got.iter().zip(want.iter()).map(|(&g, &w)| (g as f64 - w).abs()).fold(0.0, f64::max) / scale;
        eprintln!("{what}: max error {err:e} of max|x|");
        if err.is_nan() || err > 2e-6 {
            failed.push(format!("{what}: {err:e}"));
        }
    };
    let x = image(&[1, 40009]);
    let x64 = to64(&x);
    let cval = Boundary::Constant(0.7);
    for (size, b) in [(30000usize, cval), (30000, Boundary::Reflect), (30000, Boundary::Wrap), (29989, cval), (9999, cval)] {
        let got = ndimage::uniform_filter(gpu(), &x, &[1, size], b).unwrap();
        check_max(&got, &cpu::uniform_filter(&x64, &[1, size], b), &x64, &format!("uniform {size} {b:?}"));
    }
    let got = ndimage::gaussian_filter(gpu(), &x, &[0.0, 3750.0], cval).unwrap();
    check_max(&got, &cpu::gaussian_filter(&x64, &[0.0, 3750.0], cval), &x64, "gaussian 3750 (30001 taps)");

    let x = image(&[200, 200]);
    let x64 = to64(&x);
    let k = ArrayD::from_elem(vec![150, 150], 1.0f32 / 22500.0);
    assert!(correlate_tiled::pays(k.shape()) && correlate_tiled::Tiling::for_gpu(gpu(), x.shape(), k.shape()).is_some());
    for b in [cval, Boundary::Reflect] {
        let got = ndimage::correlate(gpu(), &x, &k, b).unwrap();
        check_max(&got, &cpu::correlate(&x64, &to64(&k), b), &x64, &format!("correlate 150x150 {b:?}"));
    }
    assert!(failed.is_empty(), "max error beyond 2e-6 of max|x|: {failed:?}");
}
