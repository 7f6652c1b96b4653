//! Every reduction, over the whole array and along every axis, against the CPU reference (f64
//! sums), on fresh random inputs, ties, NaN and infinities, with temporaries poisoned so an
//! unwritten element fails.

use crate::tests::common;
use common::*;

use lucent::kernels::reduce_columns;
use lucent::kernels::reduce_rows::{self, ReduceOp};
use lucent::ops::reduce::{self, cpu, Reduction};
use lucent::{Download, Error, Recording, Results};
use ndarray::{ArrayD, IxDyn};
use num_complex::Complex32;
use rand::Rng;

const OPS: [Reduction; 8] =
    [Reduction::Sum, Reduction::Mean, Reduction::Min, Reduction::Max, Reduction::ArgMin, Reduction::ArgMax, Reduction::SumSquares, Reduction::ArgMaxAbs];
const KERNEL_OPS: [ReduceOp; 7] = [ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max, ReduceOp::ArgMin, ReduceOp::ArgMax, ReduceOp::SumSquares, ReduceOp::ArgMaxAbs];

/// Sums are double-f32 all the way (TwoSum per element, compensated partials), so the only
/// error left of any size is the final rounding to f32, 2^-24 ~ 6e-8 relative, plus one more
/// rounding for the mean's scale. 1e-6 leaves a wide margin, yet a plain f32 sum fails it on
/// the cancellation test below (about 1e-4 there).
const SUM_TOL: f64 = 1e-6;

/// Long inputs: several passes of the rows kernel, rows that start inside a vec4, and columns
/// split into chunks.
const LONG_SHAPES: &[&[usize]] = &[&[3_000_000], &[3, 1_000_003], &[1_000_003, 3]];
/// Shorter, for the ties and NaN tests: still many chunks (4096 elements each on lavapipe's
/// sizes) and several passes.
const PLANTED_SHAPES: &[&[usize]] = &[&[300_007], &[3, 100_003], &[100_003, 3]];

/// None (the whole array), then every axis.
fn axes(ndim: usize) -> Vec<Option<usize>> {
    std::iter::once(None).chain((0..ndim).map(Some)).collect()
}

/// Checks one GPU result against the reference: indices exactly; min/max exactly; sums and
/// means within SUM_TOL by relative L2 over the finite results. Non-finite results must match
/// exactly (NaN where numpy gives NaN, the same infinity).
fn check(results: &Results, d: Download, op: Reduction, want: &ArrayD<f64>, what: &str) {
    if op.output_dtype() == lucent::Dtype::U32 {
        let got = results.u32(d).unwrap();
        assert_eq!(got.shape(), want.shape(), "{what}");
        let want: Vec<u32> = want.iter().map(|&i| i as u32).collect();
        assert_eq!(got.as_slice().unwrap(), want.as_slice(), "{what}");
        return;
    }
    let got = results.f32(d).unwrap();
    assert_eq!(got.shape(), want.shape(), "{what}");
    let (mut g, mut w) = (Vec::new(), Vec::new());
    for (k, (&gv, &wv)) in got.iter().zip(want.iter()).enumerate() {
        if wv.is_finite() {
            g.push(gv);
            w.push(wv);
        } else {
            let same = if wv.is_nan() { gv.is_nan() } else { gv as f64 == wv };
            assert!(same, "{what}: result {k} is {gv}, want {wv}");
        }
    }
    let tol = if matches!(op, Reduction::Sum | Reduction::Mean | Reduction::SumSquares) { SUM_TOL } else { 0.0 };
    let err = if w.is_empty() { 0.0 } else { rel_l2(&g, &w) };
    assert!(err <= tol, "{what}: relative L2 error {err:e} > {tol:e}");
}

/// Every op, whole and along every axis, in one poisoned recording.
fn check_all(dims: &[usize], x: Vec<f32>, what: &str) {
    let a = arr(dims, x);
    let mut rec = Recording::new(gpu());
    rec.set_poison(true);
    let xb = rec.upload_f32(&a.view()).unwrap();
    let mut cases = Vec::new();
    for axis in axes(dims.len()) {
        for op in OPS {
            let y = reduce::record(&mut rec, xb, op, axis).unwrap();
            cases.push((op, axis, rec.download(y)));
        }
    }
    let results = rec.run().unwrap();
    for (op, axis, d) in cases {
        let want = cpu::reduce(&a.view(), op, axis).unwrap();
        check(&results, d, op, &want, &format!("{what} {op:?} axis {axis:?} of {dims:?}"));
    }
}

#[test]
fn every_reduction_matches_cpu() {
    for dims in SHAPES.iter().chain(LONG_SHAPES) {
        let n: usize = dims.iter().product();
        check_all(dims, random(n), "random");
    }
}

/// Few distinct values, so every row has many equal extremes: the index must be the first.
#[test]
fn ties_give_the_first_occurrence() {
    let mut rng = rand::rng();
    for dims in SHAPES {
        let n: usize = dims.iter().product();
        let x: Vec<f32> = (0..n).map(|_| rng.random_range(-2..=2) as f32).collect();
        check_all(dims, x, "ties");
    }
    // Extremes repeated far apart in long arrays: the first lies in a later chunk than index 0
    // and in earlier chunks than the others, so every pass must keep the smaller index.
    for dims in PLANTED_SHAPES {
        let n: usize = dims.iter().product();
        let mut x = random(n);
        let first = rng.random_range(n / 3..n / 2);
        for k in [first, first + 1, first + 4099, n / 2 + 77, n - 1] {
            x[k] = 2.0;
        }
        for k in [first + 3, first + 8192, n - 5] {
            x[k] = -2.0;
        }
        check_all(dims, x, "planted ties");
    }
}

/// NaN and infinities at random places: sums and min/max give NaN where a NaN is, sums give
/// the infinity (or NaN for inf - inf), argmin/argmax the first NaN.
#[test]
fn nan_and_infinity_follow_numpy() {
    let mut rng = rand::rng();
    let specials = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY];
    for dims in SHAPES {
        let n: usize = dims.iter().product();
        let mut x = random(n);
        for _ in 0..(n / 40).max(1) {
            x[rng.random_range(0..n)] = specials[rng.random_range(0..3)];
        }
        check_all(dims, x, "non-finite");
    }
    // A few in long arrays, so the first NaN is rarely in the first chunk.
    for dims in PLANTED_SHAPES {
        let n: usize = dims.iter().product();
        let mut x = random(n);
        for _ in 0..6 {
            x[rng.random_range(0..n)] = specials[rng.random_range(0..3)];
        }
        check_all(dims, x, "non-finite");
    }
    // Infinity beside finite values sums to infinity, not NaN (compensation must not leak).
    check_all(&[5], vec![1.0, f32::INFINITY, 2.0, -3.0, 0.5], "one infinity");
    check_all(&[2, 3], vec![f32::INFINITY, 1.0, f32::NEG_INFINITY, f32::NAN, 4.0, f32::NAN], "mixed");
}

/// Large values that cancel exactly around small ones: the sum is the small ones' sum, about a
/// millionth of the sum of magnitudes. Plain f32 summation loses several digits here.
#[test]
fn sum_is_compensated() {
    let (m, k) = (400_000, 200_000); // multiples of 8, so each column of [n / 8, 8] cancels too
    let big: Vec<f32> = random(m).iter().map(|v| v * 1000.0).collect();
    let x: Vec<f32> = big.iter().copied().chain(random(k)).chain(big.iter().map(|v| -v)).collect();
    let n = x.len();
    for dims in [vec![n], vec![n / 8, 8]] {
        let a = arr(&dims, x.clone());
        let mut rec = Recording::new(gpu());
        rec.set_poison(true);
        let xb = rec.upload_f32(&a.view()).unwrap();
        let cases: Vec<_> = axes(dims.len())
            .into_iter()
            .map(|axis| {
                let y = reduce::record(&mut rec, xb, Reduction::Sum, axis).unwrap();
                (axis, rec.download(y))
            })
            .collect();
        let results = rec.run().unwrap();
        for (axis, d) in cases {
            let want = cpu::reduce(&a.view(), Reduction::Sum, axis).unwrap();
            check(&results, d, Reduction::Sum, &want, &format!("cancelling sum, axis {axis:?} of {dims:?}"));
        }
    }
}

/// Each kernel on its own, on every shape viewed as rows of its last axis, and on row shapes
/// that give the rows kernel teams of every size, unaligned rows and short-row partial passes:
/// the rows kernel, the columns kernel with inner = 1, and the columns kernel as (1, rows, len).
#[test]
fn kernels_match_their_cpu_twins() {
    let extra: &[&[usize]] = &[&[5, 4099], &[33, 601], &[2, 70_001], &[300, 3], &[9, 130]];
    for dims in SHAPES.iter().chain(extra) {
        let n: usize = dims.iter().product();
        let len = *dims.last().unwrap();
        let rows = n / len;
        let x = random(n);
        let mut rec = Recording::new(gpu());
        rec.set_poison(true);
        let xb = rec.upload_f32(&arr(dims, x.clone()).view()).unwrap();
        let mut cases = Vec::new();
        for op in KERNEL_OPS {
            let y = reduce_rows::record(&mut rec, op, xb, rows, len).unwrap();
            cases.push((op, "rows", rec.download(y), reduce_rows::cpu(op, &x, rows, len)));
            let y = reduce_columns::record(&mut rec, op, xb, rows, len, 1).unwrap();
            cases.push((op, "columns, inner 1", rec.download(y), reduce_columns::cpu(op, &x, rows, len, 1)));
            let y = reduce_columns::record(&mut rec, op, xb, 1, rows, len).unwrap();
            cases.push((op, "columns", rec.download(y), reduce_columns::cpu(op, &x, 1, rows, len)));
        }
        let results = rec.run().unwrap();
        for (op, kernel, d, want) in cases {
            let as_op = match op {
                ReduceOp::Sum => Reduction::Sum,
                ReduceOp::Min => Reduction::Min,
                ReduceOp::Max => Reduction::Max,
                ReduceOp::ArgMin => Reduction::ArgMin,
                ReduceOp::ArgMax => Reduction::ArgMax,
                ReduceOp::SumSquares => Reduction::SumSquares,
                ReduceOp::ArgMaxAbs => Reduction::ArgMaxAbs,
            };
            let want = ArrayD::from_shape_vec(IxDyn(&[want.len()]), want).unwrap();
            check(&results, d, as_op, &want, &format!("{kernel} kernel {op:?} on {dims:?}"));
        }
    }
}

#[test]
fn bad_input_is_an_error() {
    let mut rec = Recording::new(gpu());
    let x = rec.upload_f32(&arr(&[3, 4], random(12)).view()).unwrap();
    let c = rec.upload_c32(&ArrayD::from_elem(IxDyn(&[3, 4]), Complex32::new(1.0, 2.0)).view()).unwrap();
    let u = rec.temp(&[3, 4], lucent::Dtype::U32).unwrap();
    assert!(matches!(reduce::record(&mut rec, x, Reduction::Sum, Some(2)), Err(Error::Invalid(_))));
    assert!(matches!(reduce::record(&mut rec, x, Reduction::ArgMax, Some(7)), Err(Error::Invalid(_))));
    assert!(matches!(reduce::record(&mut rec, c, Reduction::Sum, None), Err(Error::Dtype(_))));
    assert!(matches!(reduce::record(&mut rec, u, Reduction::Max, Some(0)), Err(Error::Dtype(_))));
    assert!(matches!(cpu::reduce(&arr(&[3, 4], random(12)).view(), Reduction::Min, Some(2)), Err(Error::Invalid(_))));
    // Kernel wrappers check the geometry they are given.
    assert!(matches!(reduce_rows::record(&mut rec, ReduceOp::Sum, x, 5, 4), Err(Error::Shape(_))));
    assert!(matches!(reduce_columns::record(&mut rec, ReduceOp::Sum, x, 2, 3, 3), Err(Error::Shape(_))));
}
