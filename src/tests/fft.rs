//! FFT accuracy against an f64 reference (rustfft in f64 on the same f32 inputs), the gate of the
//! FFT issue: relative L2 ≤ 1e-6 and max|Δ|/max|ref| < 2e-6 + 5e-7·log10(N), twice that for
//! plans with a Bluestein axis (Rader's prime lengths meet the tight bound). Inputs uniform in
//! ±0.5, fresh each run; temporaries poisoned.

use crate::tests::common;
use common::fft_check::*;
use common::*;

use lucent::fft::{self, cpu, plan, FftPlan, Fusion, Norm, Product, Transform, Window};
use lucent::{Error, Recording};
use ndarray::{ArrayD, Dimension, IxDyn};
use num_complex::Complex32;

#[test]
fn small_lengths_both_directions() {
    for n in 1..=40 {
        check_c2c(gpu(), &[3, n], &[1], false, Norm::Backward);
        check_c2c(gpu(), &[n, 2], &[0], true, Norm::Backward);
    }
}

#[test]
fn smooth_prime_and_long_lengths() {
    // Every radix, the largest single-dispatch lines, Bluestein primes and four-step lengths.
    for n in [49, 121, 169, 243, 343, 625, 1000, 1024, 2048, 3 * 1024, 4096] {
        check_c2c(gpu(), &[2, n], &[1], false, Norm::Backward);
    }
    // The composite radices 9 and 15 (81 = 9·9, 225 = 15·15, 270 = 15·9·2, 1215 = 15·9·9),
    // along lines and down columns, both directions.
    for n in [81, 135, 225, 270, 324, 1215] {
        check_c2c(gpu(), &[3, n], &[1], false, Norm::Backward);
        check_c2c(gpu(), &[n, 5], &[0], true, Norm::Backward);
    }
    for n in [67, 127, 257, 509, 1021, 4093] {
        check_c2c(gpu(), &[2, n], &[1], n % 2 == 0, Norm::Backward);
        check_c2c(gpu(), &[n, 3], &[0], true, Norm::Ortho);
    }
    for n in [8192, 1 << 16, 3 * 5 * 7 * 11 * 13 * 4, 1 << 20] {
        check_c2c(gpu(), &[n], &[0], false, Norm::Backward);
        check_c2c(gpu(), &[n], &[0], true, Norm::Forward);
    }
    // Columns whose real parts fit more to a workgroup than their complex lines: stages exchange
    // real, then imaginary halves (lavapipe, 32 KiB: 625 and 729 points; 48 KiB: 1024, 2048).
    let split: Vec<usize> = [625, 729, 1024, 2048]
        .into_iter()
        .filter(|&n| matches!(plan::plan_axis(n, plan::DeviceLimits::of(gpu()), 7, false), Some(plan::AxisPlan::Single(p)) if p.split && p.batch > 1))
        .collect();
    assert!(split.len() >= 2, "{split:?}");
    for (i, &n) in split.iter().enumerate() {
        check_c2c(gpu(), &[n, 7], &[0], i % 2 == 0, Norm::Backward);
        check_c2c(gpu(), &[n, 12], &[0], i % 2 == 1, Norm::Ortho);
    }
    check_c2c(gpu(), &[3, split[0], 9], &[0, 1, 2], false, Norm::Backward);
    check_c2c(gpu(), &[2, split[1], 5], &[1, 2], true, Norm::Forward);
    // A long strided axis: four-step with inner > 1.
    check_c2c(gpu(), &[8192, 3], &[0], false, Norm::Backward);
    // Lines too long for workgroup memory as complex numbers (lavapipe: 32 KiB), batched: one
    // pass exchanging real and imaginary halves; real transforms of twice that length.
    check_c2c(gpu(), &[3, 8192], &[1], true, Norm::Backward);
    check_real(gpu(), &[2, 16384], &[1], Norm::Backward);
}

#[test]
fn rader_and_bluestein_primes() {
    // Rader (p − 1 one pass): contiguous and strided, both directions, every norm; then primes
    // that stay Bluestein (p − 1 has a factor 23, 29, 41) on the same paths.
    let rader = [17, 97, 257, 641, 769, 1153, 3329];
    let bluestein = [47, 59, 83];
    for (i, &n) in rader.iter().chain(&bluestein).enumerate() {
        let norm = [Norm::Backward, Norm::Ortho, Norm::Forward][i % 3];
        let (b, c) = (uses_bluestein(gpu(), &[2, n], &[1], Transform::Forward), uses_bluestein(gpu(), &[n, 5], &[0], Transform::Forward));
        assert_eq!(b, bluestein.contains(&n), "{n} contiguous");
        // Strided, p − 1 must hold 4 lines per workgroup (on lavapipe 1152 and 3328 do not).
        assert_eq!(c, bluestein.contains(&n) || plan_batch(n - 1) < 4, "{n} strided");
        check_c2c(gpu(), &[2, n], &[1], i % 2 == 1, norm);
        check_c2c(gpu(), &[n, 5], &[0], i % 2 == 0, norm);
    }
    // Multi-D, every axis Rader; odd real lengths two lines to a complex transform.
    check_c2c(gpu(), &[257, 17], &[0, 1], false, Norm::Backward);
    check_c2c(gpu(), &[17, 257, 3], &[0, 1], true, Norm::Ortho);
    check_c2c(gpu(), &[17, 257, 3], &[0, 1, 2], false, Norm::Forward);
    check_real(gpu(), &[4, 257], &[1], Norm::Backward);
    check_real(gpu(), &[17, 257], &[0, 1], Norm::Ortho);
    check_real(gpu(), &[97, 6], &[0], Norm::Forward);
    check_real(gpu(), &[2, 47], &[1], Norm::Backward);
    // An even real length whose half is a Rader prime: 2 · 17 reals as 17 complex pairs.
    check_real(gpu(), &[3, 34], &[1], Norm::Backward);
}

/// Lines per workgroup of one strided pass of length n over lines 5 apart on this device.
fn plan_batch(n: usize) -> usize {
    plan::line_pass(n, plan::DeviceLimits::of(gpu()), 5, false).map_or(0, |p| p.batch)
}

#[test]
fn multi_dimensional_all_axis_subsets() {
    let shapes: [&[usize]; 5] = [&[7, 11], &[5, 6, 7], &[2, 3, 5, 7], &[17, 1, 9], &[64, 129]];
    for dims in shapes {
        let nd = dims.len();
        for mask in 1..(1u32 << nd) {
            let axes: Vec<usize> = (0..nd).filter(|a| mask & (1 << a) != 0).collect();
            let norm = [Norm::Backward, Norm::Ortho, Norm::Forward][mask as usize % 3];
            check_c2c(gpu(), dims, &axes, mask % 2 == 0, norm);
        }
    }
}

#[test]
fn real_transforms() {
    check_real(gpu(), &[1], &[0], Norm::Backward);
    for n in [2, 7, 16, 33, 100, 257, 450, 4096, 8190] {
        check_real(gpu(), &[3, n], &[1], Norm::Backward);
    }
    check_real(gpu(), &[9, 10], &[0, 1], Norm::Ortho);
    check_real(gpu(), &[5, 6, 7], &[0, 1, 2], Norm::Backward);
    check_real(gpu(), &[5, 6, 7], &[0, 2], Norm::Forward);
    check_real(gpu(), &[5, 6, 7], &[1], Norm::Backward);
    check_real(gpu(), &[2, 3, 4, 5], &[1, 2, 3], Norm::Backward);
    check_real(gpu(), &[31, 17], &[0], Norm::Backward);
}

/// Real transforms other than the even-length contiguous ones run two lines per complex
/// transform: odd lengths (single passes, Rader 101, four-step 6561, Bluestein 2053 over a
/// four-step length, split-exchange 5625) with 1, 2 and 7 lines, real axes that are not the last (pairs of columns,
/// even or odd in number, or of strided rows), and zero-padded inputs.
#[test]
fn real_lines_packed_in_pairs() {
    let norms = [Norm::Backward, Norm::Ortho, Norm::Forward];
    for (i, n) in [1, 3, 5, 9, 15, 27, 101, 243, 375, 1001].into_iter().enumerate() {
        for (j, lines) in [1, 2, 7].into_iter().enumerate() {
            check_real(gpu(), &[lines, n], &[1], norms[(i + j) % 3]);
        }
    }
    check_real(gpu(), &[3, 6561], &[1], Norm::Backward);
    check_real(gpu(), &[3, 2053], &[1], Norm::Ortho);
    // Lines too long for workgroup memory as complex (lavapipe: 4096): split-exchange passes.
    check_real(gpu(), &[3, 5625], &[1], Norm::Forward);
    let cases: [(&[usize], &[usize]); 10] = [
        (&[15, 6], &[0]),
        (&[27, 2], &[0]),
        (&[9, 5], &[0]),
        (&[10, 3], &[0]),
        (&[4, 27, 5], &[0, 1]),
        (&[3, 9, 5], &[1]),
        (&[8, 6, 3], &[0, 1]),
        (&[9, 4, 15], &[0, 2]),
        (&[15, 4, 9], &[0]),
        (&[7, 6, 5, 3], &[0, 2]),
    ];
    for (i, (dims, axes)) in cases.into_iter().enumerate() {
        check_real(gpu(), dims, axes, norms[i % 3]);
    }
    // One dispatch each way where a line fits one pass (odd rows, even columns), the packing
    // fused into Rader's passes.
    for (dims, axis, dispatches) in [(vec![7usize, 375], 1usize, 1usize), (vec![15, 6], 0, 1), (vec![3, 101], 1, 3)] {
        let forward = FftPlan::new(gpu(), &dims, &[axis], Transform::RealForward, Norm::Backward).unwrap();
        let inverse = FftPlan::new(gpu(), forward.output_dims(), &[axis], Transform::RealInverse { len: dims[axis] }, Norm::Backward).unwrap();
        assert_eq!((forward.dispatches(), inverse.dispatches()), (dispatches, dispatches), "{dims:?} axis {axis}");
    }
    // A real inverse of a product (conjugate: a correlation) fused into the packing load, rows
    // and columns.
    for (half, axis, len, op) in [
        ([6usize, 8], 1usize, 15usize, Product::Mul),
        ([8, 6], 0, 15, Product::MulConj),
        ([6, 8], 1, 14, Product::CrossPower),
        ([8, 6], 0, 14, Product::CrossPower),
    ] {
        let n = half.iter().product();
        let x = ArrayD::from_shape_vec(IxDyn(&half), random_complex(n)).unwrap();
        let y = ArrayD::from_shape_vec(IxDyn(&half), random_complex(n)).unwrap();
        let fusion = Fusion { input: None, window: None, product: Some(op) };
        let plan = FftPlan::fused(gpu(), &half, &[axis], Transform::RealInverse { len }, Norm::Backward, &fusion).unwrap();
        assert_eq!(plan.dispatches(), 1, "{half:?} axis {axis}");
        let (r, d) = run_fused(&plan, |rec| rec.upload_c32(&x.view()).unwrap(), Some(&y));
        let got = r.f32(d).unwrap();
        let product = ndarray::Zip::from(&to64(&x)).and(&to64(&y)).map_collect(|&a, &b| product64(op, a, b));
        let want = cpu::c2r(&product, &[axis], len, Norm::Backward);
        let e = errors(&got.iter().map(|&v| v as f64).collect::<Vec<_>>(), &want.iter().copied().collect::<Vec<_>>());
        assert!(e.rel_l2 <= 1e-6 && e.rel_max < max_bound(len, false), "c2r product {op:?} {half:?} axis {axis}: {:e} {:e}", e.rel_l2, e.rel_max);
    }
    // Zero padding of the input along the real axis (fused or a step) and the others.
    for (dims, from, axes) in [
        (&[5usize, 8, 15][..], &[3usize, 8, 10][..], &[0usize, 1, 2][..]),
        (&[9, 6, 4], &[9, 4, 4], &[0, 1]),
        (&[3, 101], &[3, 60], &[1]),
        (&[27, 5], &[20, 5], &[0]),
        (&[15, 6], &[11, 6], &[0]),
    ] {
        let n: usize = from.iter().product();
        let x = ArrayD::from_shape_vec(IxDyn(from), random(n)).unwrap();
        let fusion = Fusion { input: Some(from.to_vec()), window: None, product: None };
        let plan = FftPlan::fused(gpu(), dims, axes, Transform::RealForward, Norm::Backward, &fusion).unwrap();
        let (r, d) = run_fused(&plan, |rec| rec.upload_f32(&x.view()).unwrap(), None);
        let got = r.c32(d).unwrap();
        let want = cpu::r2c(&zero_padded(&x.mapv(|v| v as f64), dims), axes, Norm::Backward);
        assert_eq!(got.shape(), want.shape(), "r2c {from:?} -> {dims:?}");
        let points: usize = axes.iter().map(|&a| dims[a]).product();
        let e = errors(&flat_c(&got), &flat_c64(&want));
        assert!(e.rel_l2 <= 1e-6 && e.rel_max < max_bound(points, plan.uses_bluestein()), "r2c {from:?} -> {dims:?}: {:e} {:e}", e.rel_l2, e.rel_max);
    }
}

#[test]
fn plans_are_reusable_inside_one_recording() {
    // Forward then inverse with the same plans, twice in one submission: the identity.
    let dims = [12, 35];
    let x = ArrayD::from_shape_vec(IxDyn(&dims), random_complex(12 * 35)).unwrap();
    let fwd = FftPlan::new(gpu(), &dims, &[0, 1], Transform::Forward, Norm::Backward).unwrap();
    let inv = FftPlan::new(gpu(), &dims, &[0, 1], Transform::Inverse, Norm::Backward).unwrap();
    let mut rec = Recording::new(gpu());
    rec.set_poison(true);
    let mut b = rec.upload_c32(&x.view()).unwrap();
    for _ in 0..2 {
        b = fwd.record(&mut rec, b).unwrap();
        b = inv.record(&mut rec, b).unwrap();
    }
    let d = rec.download(b);
    let got = rec.run().unwrap().c32(d).unwrap();
    let e = errors(&flat_c(&got), &flat_c(&x));
    assert!(e.rel_l2 < 1e-6, "{:e}", e.rel_l2);
}

/// `x` zero-padded at the end of each axis to `dims`.
fn zero_padded<T: Clone + Default>(x: &ArrayD<T>, dims: &[usize]) -> ArrayD<T> {
    ArrayD::from_shape_fn(IxDyn(dims), |i| {
        let i = i.slice();
        if i.iter().zip(x.shape()).all(|(&j, &n)| j < n) {
            x[i].clone()
        } else {
            T::default()
        }
    })
}

/// The cyclic window of `full`: element w is full[(origin + w) mod n] along each axis.
fn windowed<T: Clone>(full: &ArrayD<T>, window: &[Window]) -> ArrayD<T> {
    let dims: Vec<usize> = window.iter().map(|w| w.len).collect();
    ArrayD::from_shape_fn(IxDyn(&dims), |i| {
        let j: Vec<usize> =
            i.slice().iter().zip(window).zip(full.shape()).map(|((&w, win), &n)| (win.origin + w as i64).rem_euclid(n as i64) as usize).collect();
        full[j.as_slice()].clone()
    })
}

fn window(spec: &[(i64, usize)]) -> Vec<Window> {
    spec.iter().map(|&(origin, len)| Window { origin, len }).collect()
}

/// Runs a fused plan on `x` (and the product's operand `y`) with poisoned temporaries.
fn run_fused(plan: &FftPlan, upload: impl FnOnce(&mut Recording) -> lucent::Buf, y: Option<&ArrayD<Complex32>>) -> (lucent::Results, lucent::Download) {
    let mut rec = Recording::new(gpu());
    rec.set_poison(true);
    let xb = upload(&mut rec);
    let yb = y.map(|y| rec.upload_c32(&y.view()).unwrap());
    let out = plan.record_with(&mut rec, xb, yb).unwrap();
    let d = rec.download(out);
    (rec.run().unwrap(), d)
}

/// Zero padding of the input, the product with a second array and a cyclic output window fused
/// into the passes, against the same steps done one by one on the f64 reference: single passes
/// (split-exchange columns among them), Bluestein (17, 19) and four-step (1200 strided) axes,
/// windows that wrap around and windows that only rotate.
#[test]
fn fused_padding_window_and_product() {
    let g = gpu();
    let c64 = |v: &ArrayD<Complex32>| to64(v);
    // Complex, both directions: (transform dims, input dims, axes, window).
    let cases: &[(&[usize], &[usize], &[usize], &[(i64, usize)])] = &[
        (&[9, 20, 12], &[5, 13, 12], &[0, 1], &[(-3, 7), (4, 20), (0, 12)]),
        (&[17, 6, 19], &[11, 6, 4], &[0, 2], &[(15, 9), (0, 6), (-20, 19)]),
        (&[1200, 4], &[1000, 4], &[0], &[(-5, 700), (1, 3)]),
        // Columns exchanging real and imaginary halves (lavapipe: 625; 48 KiB: 1024).
        (&[625, 6], &[600, 6], &[0], &[(-7, 500), (2, 4)]),
        (&[1024, 6], &[1000, 6], &[0], &[(9, 1000), (0, 6)]),
    ];
    for &(dims, from, axes, win) in cases {
        for (inverse, conj) in [(false, false), (true, true)] {
            let what = format!("c2c {from:?} -> {dims:?} axes {axes:?} inverse {inverse}");
            let n: usize = from.iter().product();
            let x = ArrayD::from_shape_vec(IxDyn(from), random_complex(n)).unwrap();
            let y = ArrayD::from_shape_vec(IxDyn(from), random_complex(n)).unwrap();
            let op = if conj { Product::MulConj } else { Product::Mul };
            let fusion = Fusion { input: Some(from.to_vec()), window: Some(window(win)), product: Some(op) };
            let t = if inverse { Transform::Inverse } else { Transform::Forward };
            let plan = FftPlan::fused(g, dims, axes, t, Norm::Backward, &fusion).unwrap();
            let (r, d) = run_fused(&plan, |rec| rec.upload_c32(&x.view()).unwrap(), Some(&y));
            let got = r.c32(d).unwrap();
            let product = ndarray::Zip::from(&c64(&x)).and(&c64(&y)).map_collect(|&a, &b| product64(op, a, b));
            let want = windowed(&cpu::c2c(&zero_padded(&product, dims), axes, inverse, Norm::Backward), &window(win));
            assert_eq!(got.shape(), want.shape(), "{what}");
            let e = errors(&flat_c(&got), &flat_c64(&want));
            assert!(e.rel_l2 <= 1e-6, "{what}: relative L2 {:e}", e.rel_l2);
        }
    }
    // Real forward: odd and even input lengths padded along every axis, a window on the half spectrum.
    for (dims, from, win) in [([6usize, 10, 16], [4usize, 7, 9], [(0i64, 6usize), (-2, 10), (1, 8)]), ([7, 12, 10], [7, 5, 10], [(0, 7), (3, 4), (0, 6)])] {
        let n: usize = from.iter().product();
        let x = ArrayD::from_shape_vec(IxDyn(&from), random(n)).unwrap();
        let fusion = Fusion { input: Some(from.to_vec()), window: Some(window(&win)), product: None };
        let plan = FftPlan::fused(g, &dims, &[0, 1, 2], Transform::RealForward, Norm::Backward, &fusion).unwrap();
        let (r, d) = run_fused(&plan, |rec| rec.upload_f32(&x.view()).unwrap(), None);
        let got = r.c32(d).unwrap();
        let want = windowed(&cpu::r2c(&zero_padded(&x.mapv(|v| v as f64), &dims), &[0, 1, 2], Norm::Backward), &window(&win));
        let e = errors(&flat_c(&got), &flat_c64(&want));
        assert!(e.rel_l2 <= 1e-6, "r2c {from:?} -> {dims:?}: relative L2 {:e}", e.rel_l2);
    }
    // Real inverse of a product (conjugate, a correlation), windowed: what convolutions run.
    for (half, len, win, op) in [
        ([9usize, 10, 7], 12usize, [(-4i64, 5usize), (2, 9), (-1, 11)], Product::MulConj),
        ([5, 13, 9], 17, [(0, 5), (0, 13), (3, 14)], Product::Mul),
        ([5, 13, 9], 16, [(0, 5), (0, 13), (0, 16)], Product::CrossPower),
    ] {
        let n: usize = half.iter().product();
        let x = ArrayD::from_shape_vec(IxDyn(&half), random_complex(n)).unwrap();
        let y = ArrayD::from_shape_vec(IxDyn(&half), random_complex(n)).unwrap();
        let fusion = Fusion { input: None, window: Some(window(&win)), product: Some(op) };
        let plan = FftPlan::fused(g, &half, &[0, 1, 2], Transform::RealInverse { len }, Norm::Backward, &fusion).unwrap();
        let (r, d) = run_fused(&plan, |rec| rec.upload_c32(&x.view()).unwrap(), Some(&y));
        let got = r.f32(d).unwrap();
        let product = ndarray::Zip::from(&c64(&x)).and(&c64(&y)).map_collect(|&a, &b| product64(op, a, b));
        let want = windowed(&cpu::c2r(&product, &[0, 1, 2], len, Norm::Backward), &window(&win));
        let e = errors(&got.iter().map(|&v| v as f64).collect::<Vec<_>>(), &want.iter().copied().collect::<Vec<_>>());
        assert!(e.rel_l2 <= 1e-6, "c2r {half:?} len {len}: relative L2 {:e}", e.rel_l2);
    }
    // Bad fusions are errors.
    let bad = |f: Fusion, t: Transform| FftPlan::fused(g, &[8, 8], &[1], t, Norm::Backward, &f).is_err();
    assert!(bad(Fusion { input: Some(vec![4, 8]), ..Fusion::default() }, Transform::Forward), "padding an untransformed axis");
    assert!(bad(Fusion { input: Some(vec![8, 9]), ..Fusion::default() }, Transform::Forward), "input larger than the transform");
    assert!(bad(Fusion { product: Some(Product::Mul), ..Fusion::default() }, Transform::RealForward), "real product");
    assert!(bad(Fusion { window: Some(window(&[(0, 8), (0, 9)])), ..Fusion::default() }, Transform::Forward), "window too long");
    assert!(bad(Fusion { window: Some(window(&[(0, 8)])), ..Fusion::default() }, Transform::Forward), "window rank");
}

/// In-place transforms: plans whose axes take one pass each overwrite their input (the result is
/// the input's buffer); others (Bluestein, four-step) still give the right answer.
#[test]
fn in_place_where_the_layout_allows() {
    for (dims, axes, inverse, all_in_place) in [
        (vec![12usize, 35, 9], vec![0usize, 1, 2], false, true),
        (vec![5, 16], vec![1], true, true),
        (vec![17, 6], vec![0, 1], false, false),
        (vec![8192, 3], vec![0], true, false),
    ] {
        check_in_place(gpu(), &dims, &axes, inverse, all_in_place);
    }
}

#[test]
fn bad_input_is_an_error() {
    let g = gpu();
    let real = |r: Result<FftPlan, Error>| matches!(r, Err(Error::Invalid(_)));
    assert!(real(FftPlan::new(g, &[4, 5], &[], Transform::Forward, Norm::Backward)));
    assert!(real(FftPlan::new(g, &[4, 5], &[2], Transform::Forward, Norm::Backward)));
    assert!(real(FftPlan::new(g, &[4, 5], &[1, 1], Transform::Forward, Norm::Backward)));
    assert!(real(FftPlan::new(g, &[4, 5], &[1], Transform::RealInverse { len: 5 }, Norm::Backward)));
    assert!(real(FftPlan::new(g, &[4, 5], &[1], Transform::RealInverse { len: 0 }, Norm::Backward)));
    assert!(matches!(FftPlan::new(g, &[4, 0], &[1], Transform::Forward, Norm::Backward), Err(Error::Empty(_))));
    let plan = FftPlan::new(g, &[4, 5], &[1], Transform::Forward, Norm::Backward).unwrap();
    let mut rec = Recording::new(g);
    let wrong_shape = rec.temp(&[5, 4], lucent::Dtype::C32).unwrap();
    let wrong_type = rec.temp(&[4, 5], lucent::Dtype::F32).unwrap();
    assert!(matches!(plan.record(&mut rec, wrong_shape), Err(Error::Shape(_))));
    assert!(matches!(plan.record(&mut rec, wrong_type), Err(Error::Dtype(_))));
    assert!("sideways".parse::<Norm>().is_err());
    // NaN and infinities are refused by the host-array functions, naming the element.
    let mut c = ArrayD::from_shape_vec(IxDyn(&[3, 7]), random_complex(21)).unwrap();
    c[[2, 5]].im = f32::NAN;
    let nan = |r: Result<String, Error>| matches!(r, Err(Error::NonFinite(m)) if m.contains("[2, 5]"));
    assert!(nan(fft::fftn(g, &c, Some(&[0, 1]), Norm::Backward).map(|_| String::new())));
    assert!(nan(fft::irfftn(g, &c, Some(&[1]), Some(12), Norm::Backward).map(|_| String::new())));
    let mut r = ArrayD::from_elem(IxDyn(&[3, 7]), 0.25f32);
    r[[2, 5]] = f32::INFINITY;
    assert!(nan(fft::rfftn(g, &r, Some(&[1]), Norm::Backward).map(|_| String::new())));
}

/// A fused product's value in f64 (the floor of the cross-power spectrum as the kernels').
fn product64(op: Product, a: num_complex::Complex64, b: num_complex::Complex64) -> num_complex::Complex64 {
    match op {
        Product::Mul => a * b,
        Product::MulConj => a * b.conj(),
        Product::CrossPower => a * b.conj() / (a * b.conj()).norm().max(lucent::kernels::binary::CROSS_POWER_FLOOR as f64),
    }
}
