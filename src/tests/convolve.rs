//! scipy.signal's convolution and correlation (`ops::convolve`) against the f64 CPU references
//! (direct sums over explicitly padded arrays), which are themselves checked against values
//! computed with scipy 1.17 (with scipy.ndimage's references and bad input: the two share them).
//! Fresh random inputs every run, temporaries poisoned (NaN), awkward shapes. The filters:
//! `tests/filter.rs`, with these helpers.
//!
//! Tolerances (relative L2 over the output):
//! - FFT path, 1e-6: f32 transforms with f64 twiddles have a relative error of a few f32
//!   epsilons (6e-8) times log N, ~1e-7 here, and the error of the circular result spreads evenly
//!   over the output window; 1e-6 leaves a margin of ~10 and catches any wrong index or scale.
//! - Direct sums, 1e-6: T products accumulated with FMA in f32 err by about eps·√T relative to
//!   the result for zero-mean data, ≤ 6e-7 for the ≤ 100 taps used here; where one output may
//!   cancel, relative to Σ|w||x| instead (`check_direct`).
//! - Normalised convolution: see that test.

use crate::tests::common;
use common::*;

use lucent::kernels::boundary::Boundary;
use lucent::ops::convolve::{self, cpu, Geometry, KernelSpectrum, Method, Mode};
use lucent::ops::filter::{self, cpu as filter_cpu};
use lucent::{Buf, Error, Recording};
use ndarray::{ArrayD, IxDyn};

pub(super) const TOL: f64 = 1e-6;

/// Direct sums in f32 are accurate relative to the sums of absolute terms, Σ|w|·|x| (not to
/// the result, which may cancel: one output of a length-1 axis is x·Σw). The error over that:
/// at most T·u (u = 6e-8) for T taps, typically far less; ≤ 2e-6 worst case for the 36-tap
/// kernels here, ~u·√T ≈ 4e-7 in practice.
pub(super) fn check_direct(got: &ArrayD<f32>, want: &ArrayD<f64>, magnitude: &ArrayD<f64>, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    let err: f64 = got.iter().zip(want).map(|(&g, &w)| (g as f64 - w).powi(2)).sum::<f64>().sqrt();
    let scale: f64 = magnitude.iter().map(|m| m * m).sum::<f64>().sqrt();
    assert!(got.iter().all(|v| v.is_finite()) && err <= 1e-6 * scale, "{what}: error {:e} relative to Σ|w||x|", err / scale);
}

pub(super) fn check(got: &ArrayD<f32>, want: &ArrayD<f64>, tol: f64, what: &str) {
    assert_rel_l2(got, want, tol, what);
}

/// Records `f` on an uploaded (poisoned-temporaries) recording and downloads its result.
pub(super) fn run_gpu(x: &ArrayD<f32>, f: impl FnOnce(&mut Recording, Buf) -> Result<Buf, Error>) -> Result<ArrayD<f32>, Error> {
    let mut rec = Recording::new(gpu());
    rec.set_poison(true);
    let xb = rec.upload_f32(&x.view())?;
    let y = f(&mut rec, xb)?;
    let d = rec.download(y);
    rec.run()?.f32(d)
}

const MODES: [Mode; 3] = [Mode::Full, Mode::Same, Mode::Valid];

/// (image, kernel): 1-4D, primes and odd lengths, a single element, kernels larger than the image
/// in every axis (valid swaps the roles) or in some (valid is an error).
const PAIRS: &[(&[usize], &[usize])] = &[
    (&[37], &[5]),
    (&[6], &[11]),
    (&[1], &[1]),
    (&[17, 12], &[4, 5]),
    (&[5, 9], &[7, 3]),
    (&[3, 4], &[8, 6]),
    (&[9, 10, 11], &[3, 2, 5]),
    (&[3, 5, 4, 6], &[2, 3, 1, 3]),
];

// ---------------------------------------------------------------------------------------------
// Geometry and the references (no GPU)

#[test]
fn geometry_follows_scipy() {
    let g = Geometry::new(&[10, 7], &[3, 4], Mode::Full).unwrap();
    assert_eq!((g.out, g.start), (vec![12, 10], vec![0, 0]));
    let g = Geometry::new(&[10, 7], &[3, 4], Mode::Same).unwrap();
    assert_eq!((g.out, g.start), (vec![10, 7], vec![1, 1]));
    let g = Geometry::new(&[10, 7], &[3, 4], Mode::Valid).unwrap();
    assert_eq!((g.out, g.start), (vec![8, 4], vec![2, 3]));
    // Valid with the kernel the larger in every axis; neither larger is an error.
    let g = Geometry::new(&[3, 4], &[10, 7], Mode::Valid).unwrap();
    assert_eq!((g.out, g.start), (vec![8, 4], vec![2, 3]));
    assert!(matches!(Geometry::new(&[3, 8], &[10, 7], Mode::Valid), Err(Error::Shape(_))));
    assert!(matches!(Geometry::new(&[3], &[3, 1], Mode::Full), Err(Error::Shape(_))));
    assert!(matches!(Geometry::new(&[3, 0], &[3, 1], Mode::Full), Err(Error::Empty(_))));
    assert!(matches!(Geometry::new(&[1, 2, 3, 4, 5], &[1, 1, 1, 1, 1], Mode::Full), Err(Error::Invalid(_))));
}

#[test]
fn padding_is_fast_and_free_of_wrap_around() {
    for n in 1..40 {
        for m in 1..40 {
            for mode in MODES {
                let Ok(g) = Geometry::new(&[n], &[m], mode) else { continue };
                let (l, s, o, full) = (g.padded[0], g.start[0], g.out[0], n + m - 1);
                // The last (here the only) axis is even: twice a smooth length.
                assert!(l % 2 == 0 && l / 2 == lucent::fft::plan::smooth_at_least(l / 2), "{l}");
                // Output j (full index s + j) must see no alias full[s + j ± l] within 0..full.
                assert!(s + o <= l && full <= s + l && n.max(m) <= l, "n {n} m {m} {mode:?}: {g:?}");
            }
        }
    }
}

fn a1(v: &[f64]) -> ArrayD<f64> {
    ArrayD::from_shape_vec(IxDyn(&[v.len()]), v.to_vec()).unwrap()
}

/// The references against values printed by scipy 1.17 (exact: small integers).
#[test]
fn references_match_scipy() {
    let a = a1(&[1., 2., 3., 4., 5., 6., 7.]);
    let k = a1(&[1., 10., 100., 1000.]);
    let signal = [
        (Mode::Full, false, vec![1., 12., 123., 1234., 2345., 3456., 4567., 5670., 6700., 7000.]),
        (Mode::Same, false, vec![12., 123., 1234., 2345., 3456., 4567., 5670.]),
        (Mode::Valid, false, vec![1234., 2345., 3456., 4567.]),
        (Mode::Full, true, vec![1000., 2100., 3210., 4321., 5432., 6543., 7654., 765., 76., 7.]),
        (Mode::Same, true, vec![2100., 3210., 4321., 5432., 6543., 7654., 765.]),
        (Mode::Valid, true, vec![4321., 5432., 6543., 7654.]),
    ];
    for (mode, corr, want) in signal {
        let got = if corr { cpu::signal_correlate(&a, &k, mode) } else { cpu::signal_convolve(&a, &k, mode) }.unwrap();
        assert_eq!(got, a1(&want), "signal {mode:?} correlate={corr}");
        let fft = cpu::fft_signal(&a, &k, mode, corr).unwrap();
        assert!(fft.iter().zip(&want).all(|(g, w)| (g - w).abs() < 1e-9 * w.abs().max(1.0)), "fft {mode:?} {corr}: {fft}");
    }
    // A kernel larger than the image: valid swaps the roles, same keeps the image's shape.
    let (s, big) = (a1(&[1., 2., 3.]), a1(&[1., 10., 100., 1000., 10000.]));
    for mode in [Mode::Same, Mode::Valid] {
        assert_eq!(cpu::signal_convolve(&s, &big, mode).unwrap(), a1(&[123., 1230., 12300.]));
        assert_eq!(cpu::signal_correlate(&s, &big, mode).unwrap(), a1(&[32100., 3210., 321.]));
    }
    // ndimage correlate1d / convolve1d with an even kernel, every mode (cval 0.5).
    let x = a1(&[1., 2., 3., 4., 5.]);
    let ndimage = [
        (Boundary::Reflect, [2112., 3211., 4321., 5432., 5543.], [1123., 1234., 2345., 3455., 4554.]),
        (Boundary::Mirror, [2123., 3212., 4321., 5432., 4543.], [2123., 1234., 2345., 3454., 4543.]),
        (Boundary::Nearest, [2111., 3211., 4321., 5432., 5543.], [1123., 1234., 2345., 3455., 4555.]),
        (Boundary::Wrap, [2154., 3215., 4321., 5432., 1543.], [5123., 1234., 2345., 3451., 4512.]),
        (Boundary::Constant(0.5), [2105.5, 3210.5, 4321., 5432., 1043.], [623., 1234., 2345., 3450.5, 4505.5]),
    ];
    let w = [1., 10., 100., 1000.];
    for (b, corr, conv) in ndimage {
        assert_eq!(filter_cpu::correlate1d(&x, &w, 0, b), a1(&corr), "correlate1d {b:?}");
        assert_eq!(filter_cpu::convolve1d(&x, &w, 0, b), a1(&conv), "convolve1d {b:?}");
    }
    // A kernel longer than the input: the periodic extensions.
    let (x3, w7) = (a1(&[1., 2., 3.]), [1., 10., 100., 1000., 1e4, 1e5, 1e6]);
    for (b, want) in [
        (Boundary::Reflect, [3321123., 2332112., 1233211.]),
        (Boundary::Mirror, [2321232., 1232123., 2123212.]),
        (Boundary::Wrap, [1321321., 2132132., 3213213.]),
        (Boundary::Nearest, [3321111., 3332111., 3333211.]),
    ] {
        assert_eq!(filter_cpu::correlate1d(&x3, &w7, 0, b), a1(&want), "long kernel {b:?}");
    }
    // 2D with an even axis.
    let x2 = ArrayD::from_shape_fn(IxDyn(&[3, 4]), |i| (i[0] * 4 + i[1]) as f64);
    let w2 = ArrayD::from_shape_vec(IxDyn(&[2, 3]), vec![1., 2., 3., 10., 20., 30.]).unwrap();
    let m = |v: [[f64; 4]; 3]| ArrayD::from_shape_vec(IxDyn(&[3, 4]), v.concat()).unwrap();
    assert_eq!(filter_cpu::convolve(&x2, &w2, Boundary::Mirror), m([[68., 68., 134., 178.], [332., 332., 398., 442.], [548., 548., 614., 658.]]));
    assert_eq!(filter_cpu::correlate(&x2, &w2, Boundary::Reflect), m([[33., 88., 154., 187.], [273., 328., 394., 427.], [537., 592., 658., 691.]]));
    let one = ArrayD::from_elem(IxDyn(&[1, 1]), 5.0);
    assert_eq!(filter_cpu::correlate(&one, &w2, Boundary::Mirror), ArrayD::from_elem(IxDyn(&[1, 1]), 330.0));
}

// ---------------------------------------------------------------------------------------------
// FFT convolution

#[test]
fn fftconvolve_and_fftcorrelate_match_direct_sums() {
    for &(ad, kd) in PAIRS {
        let (a, k) = (rand_array(ad), rand_array(kd));
        for mode in MODES {
            for corr in [false, true] {
                let what = format!("{ad:?} ⊛ {kd:?} {mode:?} correlate={corr}");
                let got = run_gpu(&a, |rec, ab| {
                    let kb = rec.upload_f32(&k.view())?;
                    if corr {
                        convolve::fftcorrelate(rec, ab, kb, mode)
                    } else {
                        convolve::fftconvolve(rec, ab, kb, mode)
                    }
                });
                let want = if corr { cpu::signal_correlate(&to64(&a), &to64(&k), mode) } else { cpu::signal_convolve(&to64(&a), &to64(&k), mode) };
                match (got, want) {
                    (Ok(got), Ok(want)) => check(&got, &want, TOL, &what),
                    (Err(Error::Shape(_)), Err(Error::Shape(_))) => assert_eq!(mode, Mode::Valid, "{what}"),
                    (got, want) => panic!("{what}: GPU {:?}, CPU {:?}", got.err(), want.err()),
                }
            }
        }
    }
}

#[test]
fn direct_method_matches_direct_sums() {
    for &(ad, kd) in PAIRS {
        let (a, k) = (rand_array(ad), rand_array(kd));
        for mode in MODES {
            if Geometry::new(ad, kd, mode).is_err() {
                continue;
            }
            for corr in [false, true] {
                let got = run_gpu(&a, |rec, ab| {
                    if corr {
                        convolve::signal_correlate(rec, ab, &k.view(), mode, Method::Direct)
                    } else {
                        convolve::signal_convolve(rec, ab, &k.view(), mode, Method::Direct)
                    }
                })
                .unwrap();
                let want = if corr { cpu::signal_correlate(&to64(&a), &to64(&k), mode) } else { cpu::signal_convolve(&to64(&a), &to64(&k), mode) };
                check(&got, &want.unwrap(), TOL, &format!("direct {ad:?} ⊛ {kd:?} {mode:?} correlate={corr}"));
            }
        }
    }
}

/// A spectrum made once serves convolution and correlation, chained in one recording (a
/// Richardson-Lucy step), and the compiled recording runs again with the same result.
#[test]
fn kernel_spectrum_is_reused() {
    let (dims, kdims) = ([17usize, 12], [4usize, 5]);
    let (a, k) = (rand_array(&dims), rand_array(&kdims));
    let spectrum = KernelSpectrum::new(gpu(), &k.view(), &dims, Mode::Same).unwrap();
    assert_eq!(spectrum.output_dims(), &dims);
    let mut rec = Recording::new(gpu());
    rec.set_poison(true);
    let ab = rec.upload_f32(&a.view()).unwrap();
    let blurred = spectrum.record(&mut rec, ab).unwrap();
    let back = spectrum.record_correlate(&mut rec, blurred).unwrap();
    let (d1, d2) = (rec.download(blurred), rec.download(back));
    let compiled = rec.compile().unwrap();
    let want1 = cpu::signal_convolve(&to64(&a), &to64(&k), Mode::Same).unwrap();
    let want2 = cpu::signal_correlate(&want1, &to64(&k), Mode::Same).unwrap();
    for run in 0..2 {
        let r = compiled.run(gpu()).unwrap();
        check(&r.f32(d1).unwrap(), &want1, TOL, &format!("convolve, run {run}"));
        check(&r.f32(d2).unwrap(), &want2, TOL, &format!("then correlate, run {run}"));
    }
    // The host conveniences, and Method::Fft through a spectrum.
    let want = cpu::signal_convolve(&to64(&a), &to64(&k), Mode::Valid).unwrap();
    check(&convolve::convolve_host(gpu(), &a.view(), &k.view(), Mode::Valid).unwrap(), &want, TOL, "convolve_host");
    let want = cpu::signal_correlate(&to64(&a), &to64(&k), Mode::Full).unwrap();
    check(&convolve::correlate_host(gpu(), &a.view(), &k.view(), Mode::Full).unwrap(), &want, TOL, "correlate_host");
    let got = run_gpu(&a, |rec, ab| convolve::signal_correlate(rec, ab, &k.view(), Mode::Full, Method::Fft)).unwrap();
    check(&got, &want, TOL, "signal_correlate fft");
    // A spectrum only takes images of its shape.
    let other = rand_array(&[12, 17]);
    assert!(matches!(run_gpu(&other, |rec, b| spectrum.record(rec, b)), Err(Error::Shape(_))));
}

// ---------------------------------------------------------------------------------------------
// Bad input

#[test]
fn bad_input_is_reported() {
    let a = rand_array(&[6, 5]);
    let mut nan = rand_array(&[3, 3]);
    nan[[1, 2]] = f32::NAN;
    let nonfinite = |r: Result<ArrayD<f32>, Error>| matches!(r, Err(Error::NonFinite(_)));
    assert!(matches!(KernelSpectrum::new(gpu(), &nan.view(), &[6, 5], Mode::Same), Err(Error::NonFinite(_))));
    assert!(nonfinite(convolve::convolve_host(gpu(), &a.view(), &nan.view(), Mode::Full)));
    assert!(nonfinite(convolve::convolve_host(gpu(), &nan.view(), &a.view(), Mode::Full)));
    assert!(nonfinite(run_gpu(&a, |rec, b| convolve::signal_convolve(rec, b, &nan.view(), Mode::Same, Method::Direct))));
    assert!(nonfinite(run_gpu(&a, |rec, b| filter::correlate(rec, b, &nan.view(), Boundary::Reflect))));
    let inf = nan.mapv(|v| if v.is_nan() { f32::INFINITY } else { v });
    assert!(nonfinite(run_gpu(&a, |rec, b| filter::normalized_convolution(rec, b, b, &inf.view(), Method::Auto, 0.0))));
    // Empty, too many axes, mismatched ranks, valid with neither array the larger.
    let empty = ArrayD::<f32>::zeros(IxDyn(&[0, 3]));
    assert!(matches!(convolve::convolve_host(gpu(), &a.view(), &empty.view(), Mode::Full), Err(Error::Empty(_))));
    assert!(matches!(run_gpu(&a, |rec, b| filter::correlate(rec, b, &empty.view(), Boundary::Wrap)), Err(Error::Empty(_))));
    let five = ArrayD::<f32>::ones(IxDyn(&[1, 1, 1, 1, 2]));
    assert!(matches!(convolve::convolve_host(gpu(), &five.view(), &five.view(), Mode::Full), Err(Error::Invalid(_))));
    let line = rand_array(&[3]);
    assert!(matches!(convolve::convolve_host(gpu(), &a.view(), &line.view(), Mode::Full), Err(Error::Shape(_))));
    assert!(matches!(run_gpu(&a, |rec, b| filter::correlate(rec, b, &line.view(), Boundary::Wrap)), Err(Error::Shape(_))));
    let wide = rand_array(&[2, 9]);
    assert!(matches!(convolve::convolve_host(gpu(), &a.view(), &wide.view(), Mode::Valid), Err(Error::Shape(_))));
    assert!(matches!(KernelSpectrum::new(gpu(), &wide.view(), &[6, 5], Mode::Valid), Err(Error::Shape(_))));
    // Filter parameters.
    let invalid = |r: Result<ArrayD<f32>, Error>| matches!(r, Err(Error::Invalid(_)));
    assert!(invalid(run_gpu(&a, |rec, b| filter::gaussian_filter(rec, b, &[-1.0], Boundary::Reflect))));
    assert!(invalid(run_gpu(&a, |rec, b| filter::gaussian_filter(rec, b, &[f32::NAN, 1.0], Boundary::Reflect))));
    assert!(invalid(run_gpu(&a, |rec, b| filter::gaussian_filter(rec, b, &[1.0, 1.0, 1.0], Boundary::Reflect))));
    assert!(invalid(run_gpu(&a, |rec, b| filter::uniform_filter(rec, b, &[0], Boundary::Reflect))));
    assert!(invalid(run_gpu(&a, |rec, b| filter::correlate1d(rec, b, &[1.0], 2, Boundary::Reflect))));
    assert!(matches!(run_gpu(&a, |rec, b| filter::correlate1d::<f32>(rec, b, &[], 0, Boundary::Reflect)), Err(Error::Empty(_))));
    assert!(invalid(run_gpu(&a, |rec, b| filter::normalized_convolution(rec, b, b, &a.view(), Method::Direct, -1.0))));
    let other = rand_array(&[5, 6]);
    assert!(matches!(
        run_gpu(&a, |rec, b| {
            let c = rec.upload_f32(&other.view())?;
            filter::normalized_convolution(rec, b, c, &a.view(), Method::Direct, 0.0)
        }),
        Err(Error::Shape(_))
    ));
}

// ---------------------------------------------------------------------------------------------
// Command line
