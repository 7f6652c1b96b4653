//! Every pointwise kernel against its CPU twin, on fresh random inputs and awkward shapes, with
//! temporaries poisoned so an unwritten element fails.

use crate::tests::common;
use common::*;

use lucent::kernels::binary::{self, BinaryOp};
use lucent::kernels::complex_to_real::{self, ComplexToReal};
use lucent::kernels::complex_unary::{self, ComplexUnary};
use lucent::kernels::multiply_lines::{self, Factor};
use lucent::kernels::unary::{self, UnaryOp};
use lucent::kernels::{real_to_complex, select};
use lucent::{Dtype, Error, Recording};
use ndarray::{ArrayD, IxDyn};
use num_complex::{Complex32, Complex64};

fn carr(dims: &[usize], v: Vec<Complex32>) -> ArrayD<Complex32> {
    ArrayD::from_shape_vec(IxDyn(dims), v).unwrap()
}

/// Ops with an exactly rounded WGSL result must match bit for bit; the rest within a few ulps.
fn check(got: &[f32], want: &[f32], exact: bool, what: &str) {
    let want64: Vec<f64> = want.iter().map(|&w| w as f64).collect();
    let err = rel_l2(got, &want64);
    let tol = if exact { 0.0 } else { 1e-6 };
    assert!(err <= tol, "{what}: relative L2 error {err:e} > {tol:e}");
}

/// WGSL promises log an absolute error of 2^-21 on [0.5, 2] and 3 ulp elsewhere: near x = 1,
/// where log x is near 0, a relative measure asks more than that (a single element failed at
/// 5e-6 relative, within the spec's absolute bound). Each element against the spec's bound, plus
/// half an ulp for the f32 reference's own rounding.
fn check_log(got: &[f32], x: &[f32], want: &[f32], what: &str) {
    for ((&g, &x), &w) in got.iter().zip(x).zip(want) {
        let ulp = f32::EPSILON * w.abs().max(f32::MIN_POSITIVE);
        let tol = if (0.5..=2.0).contains(&x) { 2f32.powi(-21) } else { 3.0 * ulp } + 0.5 * ulp;
        assert!((g - w).abs() <= tol, "{what}: log({x}) = {g}, want {w}");
    }
}

#[test]
fn unary_ops_match_cpu() {
    let ops = [
        (UnaryOp::Affine { scale: 1.7, offset: -0.3 }, false), // may be fused into an FMA
        (UnaryOp::Clamp { lo: -0.2, hi: 0.25 }, true),
        (UnaryOp::Abs, true),
        (UnaryOp::Sqrt, false),
        (UnaryOp::Exp, false),
        (UnaryOp::Log, false),
        (UnaryOp::MaxScalar(0.1), true),
        (UnaryOp::MinScalar(-0.1), true),
        (UnaryOp::Scale(-2.5), true),
        (UnaryOp::Offset(0.75), true),
        (UnaryOp::Reciprocal(0.3), false),
    ];
    for dims in SHAPES {
        let n: usize = dims.iter().product();
        for &(op, exact) in &ops {
            let positive = matches!(op, UnaryOp::Sqrt | UnaryOp::Log);
            let x = if positive { random_positive(n) } else { random(n) };
            let mut rec = Recording::new(gpu());
            rec.set_poison(true);
            let xb = rec.upload_f32(&arr(dims, x.clone()).view()).unwrap();
            let y = unary::record(&mut rec, op, xb).unwrap();
            let d = rec.download(y);
            let got = rec.run().unwrap().f32(d).unwrap();
            assert_eq!(got.shape(), *dims);
            let (got, want, what) = (got.as_slice().unwrap(), unary::cpu(op, &x), format!("{op:?} {dims:?}"));
            if matches!(op, UnaryOp::Log) {
                check_log(got, &x, &want, &what);
            } else {
                check(got, &want, exact, &what);
            }
        }
    }
}

#[test]
fn binary_ops_match_cpu() {
    for dims in SHAPES {
        let n: usize = dims.iter().product();
        for op in [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Max, BinaryOp::Min] {
            let (x, y) = (random(n), random_positive(n));
            let mut rec = Recording::new(gpu());
            rec.set_poison(true);
            let xb = rec.upload_f32(&arr(dims, x.clone()).view()).unwrap();
            let yb = rec.upload_f32(&arr(dims, y.clone()).view()).unwrap();
            let z = binary::record(&mut rec, op, xb, yb).unwrap();
            let d = rec.download(z);
            let got = rec.run().unwrap().f32(d).unwrap();
            // WGSL division is within 2.5 ulp; the others are exactly rounded.
            check(got.as_slice().unwrap(), &binary::cpu(op, &x, &y), op != BinaryOp::Div, &format!("{op:?} {dims:?}"));
        }
        for op in [BinaryOp::Add, BinaryOp::Sub, BinaryOp::ComplexMul, BinaryOp::ComplexMulConj, BinaryOp::CrossPower] {
            let (x, mut y) = (random_complex(n), random_complex(n));
            if op == BinaryOp::CrossPower {
                // Products below the floor too: divided by it, not by their own size.
                y.iter_mut().step_by(3).for_each(|v| *v *= 1e-6);
            }
            let mut rec = Recording::new(gpu());
            rec.set_poison(true);
            let xb = rec.upload_c32(&carr(dims, x.clone()).view()).unwrap();
            let yb = rec.upload_c32(&carr(dims, y.clone()).view()).unwrap();
            let z = binary::record(&mut rec, op, xb, yb).unwrap();
            let d = rec.download(z);
            let got = rec.run().unwrap().c32(d).unwrap();
            let want: Vec<Complex64> = x
                .iter()
                .zip(&y)
                .map(|(a, b)| {
                    let (a, b) = (Complex64::new(a.re as f64, a.im as f64), Complex64::new(b.re as f64, b.im as f64));
                    match op {
                        BinaryOp::Add => a + b,
                        BinaryOp::Sub => a - b,
                        BinaryOp::ComplexMul => a * b,
                        BinaryOp::CrossPower => a * b.conj() / (a * b.conj()).norm().max(binary::CROSS_POWER_FLOOR as f64),
                        _ => a * b.conj(),
                    }
                })
                .collect();
            let err = rel_l2_c(got.as_slice().unwrap(), &want);
            assert!(err < 1e-6, "{op:?} {dims:?}: {err:e}");
        }
    }
}

#[test]
fn complex_maps_match_cpu() {
    for dims in SHAPES {
        let n: usize = dims.iter().product();
        let x = random_complex(n);
        for op in [ComplexToReal::Abs, ComplexToReal::AbsSquared, ComplexToReal::Re, ComplexToReal::Im] {
            let mut rec = Recording::new(gpu());
            rec.set_poison(true);
            let xb = rec.upload_c32(&carr(dims, x.clone()).view()).unwrap();
            let y = complex_to_real::record(&mut rec, op, xb).unwrap();
            let d = rec.download(y);
            let got = rec.run().unwrap().f32(d).unwrap();
            let exact = matches!(op, ComplexToReal::Re | ComplexToReal::Im);
            check(got.as_slice().unwrap(), &complex_to_real::cpu(op, &x), exact, &format!("{op:?} {dims:?}"));
        }
        for op in [ComplexUnary::UnitModulus { eps: 1e-20 }, ComplexUnary::Conj, ComplexUnary::Scale(Complex32::new(0.3, -1.2))] {
            let mut rec = Recording::new(gpu());
            rec.set_poison(true);
            let xb = rec.upload_c32(&carr(dims, x.clone()).view()).unwrap();
            let y = complex_unary::record(&mut rec, op, xb).unwrap();
            let d = rec.download(y);
            let got = rec.run().unwrap().c32(d).unwrap();
            let want: Vec<Complex64> = complex_unary::cpu(op, &x).iter().map(|c| Complex64::new(c.re as f64, c.im as f64)).collect();
            let err = rel_l2_c(got.as_slice().unwrap(), &want);
            assert!(err < 1e-6, "{op:?} {dims:?}: {err:e}");
        }
        let r = random(n);
        let mut rec = Recording::new(gpu());
        rec.set_poison(true);
        let rb = rec.upload_f32(&arr(dims, r.clone()).view()).unwrap();
        let c = real_to_complex::record(&mut rec, rb).unwrap();
        let d = rec.download(c);
        let got = rec.run().unwrap().c32(d).unwrap();
        assert_eq!(got.as_slice().unwrap(), real_to_complex::cpu(&r).as_slice(), "{dims:?}");
    }
}

/// Lines times one factor of their trailing axes, real (FBP's filter) or complex (the log-polar
/// kernel's spectrum): a real factor scales exactly; a complex one rounds as `cmul` does (FMA
/// contraction may round its two products once: within a few ulps of the result).
#[test]
fn multiply_lines_matches_cpu() {
    for (dims, tail) in [(&[7usize, 5][..], 1), (&[3, 4, 9][..], 1), (&[2, 3, 4, 6][..], 2), (&[13][..], 1)] {
        let n: usize = dims.iter().product();
        let x = random_complex(n);
        let fdims = &dims[dims.len() - tail..];
        let len: usize = fdims.iter().product();
        let (real, complex) = (random(len), random_complex(len));
        for is_complex in [false, true] {
            let mut rec = Recording::new(gpu());
            rec.set_poison(true);
            let xb = rec.upload_c32(&carr(dims, x.clone()).view()).unwrap();
            let fb = if is_complex { rec.upload_c32(&carr(fdims, complex.clone()).view()) } else { rec.upload_f32(&arr(fdims, real.clone()).view()) }.unwrap();
            let y = multiply_lines::record(&mut rec, xb, fb).unwrap();
            let d = rec.download(y);
            let got = rec.run().unwrap().c32(d).unwrap();
            let factor = if is_complex { Factor::Complex(&complex) } else { Factor::Real(&real) };
            let want = multiply_lines::cpu(&x, factor);
            if is_complex {
                let want: Vec<Complex64> = want.iter().map(|c| Complex64::new(c.re as f64, c.im as f64)).collect();
                let err = rel_l2_c(got.as_slice().unwrap(), &want);
                assert!(err < 1e-6, "complex factor {dims:?}: {err:e}");
            } else {
                assert_eq!(got.as_slice().unwrap(), want.as_slice(), "real factor {dims:?}");
            }
        }
    }
    let mut rec = Recording::new(gpu());
    let xb = rec.upload_c32(&carr(&[4, 6], random_complex(24)).view()).unwrap();
    let short = rec.upload_f32(&arr(&[5], random(5)).view()).unwrap();
    assert!(matches!(multiply_lines::record(&mut rec, xb, short), Err(Error::Shape(_))));
}

#[test]
fn unit_modulus_keeps_zero_finite() {
    let x = vec![Complex32::new(0.0, 0.0), Complex32::new(3.0, 4.0), Complex32::new(-1e-30, 0.0)];
    let mut rec = Recording::new(gpu());
    let xb = rec.upload_c32(&carr(&[3], x).view()).unwrap();
    let y = complex_unary::record(&mut rec, ComplexUnary::UnitModulus { eps: 1e-20 }, xb).unwrap();
    let d = rec.download(y);
    let got = rec.run().unwrap().c32(d).unwrap();
    assert_eq!(got[0], Complex32::new(0.0, 0.0));
    assert!((got[1] - Complex32::new(0.6, 0.8)).norm() < 1e-7);
    assert!(got[2].norm() < 1e-9);
}

#[test]
fn select_matches_cpu() {
    for dims in SHAPES {
        let n: usize = dims.iter().product();
        let (c, x, y) = (random(n), random(n), random(n));
        let mut rec = Recording::new(gpu());
        rec.set_poison(true);
        let cb = rec.upload_f32(&arr(dims, c.clone()).view()).unwrap();
        let xb = rec.upload_f32(&arr(dims, x.clone()).view()).unwrap();
        let yb = rec.upload_f32(&arr(dims, y.clone()).view()).unwrap();
        let z = select::record(&mut rec, cb, xb, yb).unwrap();
        let d = rec.download(z);
        let got = rec.run().unwrap().f32(d).unwrap();
        assert_eq!(got.as_slice().unwrap(), select::cpu(&c, &x, &y).as_slice(), "{dims:?}");
    }
}

#[test]
fn bad_input_is_an_error() {
    let mut rec = Recording::new(gpu());
    let a = rec.temp(&[3, 4], Dtype::F32).unwrap();
    let b = rec.temp(&[4, 3], Dtype::F32).unwrap();
    let c = rec.temp(&[3, 4], Dtype::C32).unwrap();
    assert!(matches!(binary::record(&mut rec, BinaryOp::Add, a, b), Err(Error::Shape(_))));
    assert!(matches!(binary::record(&mut rec, BinaryOp::Add, a, c), Err(Error::Dtype(_))));
    assert!(matches!(binary::record(&mut rec, BinaryOp::ComplexMul, a, a), Err(Error::Dtype(_))));
    assert!(matches!(unary::record(&mut rec, UnaryOp::Abs, c), Err(Error::Dtype(_))));
    assert!(matches!(rec.temp(&[3, 0], Dtype::F32), Err(Error::Empty(_))));
    assert!(matches!(rec.temp(&[1, 2, 3, 4, 5], Dtype::F32), Err(Error::Invalid(_))));
    let huge = gpu().max_buffer_bytes() / 4 + 1;
    assert!(matches!(rec.temp(&[huge as usize], Dtype::F32), Err(Error::TooLarge { .. })));
}

#[test]
fn take_reads_elements_at_device_indices() {
    let x = random(37);
    let c = random_complex(37);
    let index: Vec<u32> = vec![0, 36, 17, 37, 5, 5];
    let mut rec = Recording::new(gpu());
    rec.set_poison(true);
    let xb = rec.upload_f32(&arr(&[37], x.clone()).view()).unwrap();
    let cb = rec.upload_c32(&carr(&[37], c.clone()).view()).unwrap();
    let ib = rec.upload_f32(&arr(&[6], index.iter().map(|&i| f32::from_bits(i)).collect()).view()).unwrap();
    let ib = rec.reinterpret(ib, &[6], lucent::Dtype::U32).unwrap();
    let (tx, tc) = (lucent::kernels::take::record(&mut rec, xb, ib).unwrap(), lucent::kernels::take::record(&mut rec, cb, ib).unwrap());
    let (dx, dc) = (rec.download(tx), rec.download(tc));
    let r = rec.run().unwrap();
    let (gx, gc) = (r.f32(dx).unwrap(), r.c32(dc).unwrap());
    for (k, &i) in index.iter().enumerate() {
        if (i as usize) < x.len() {
            assert_eq!(gx[k].to_bits(), x[i as usize].to_bits(), "f32 at {i}");
            assert_eq!(gc[k], c[i as usize], "complex at {i}");
        } else {
            assert!(gx[k].is_nan() && gc[k].re.is_nan() && gc[k].im.is_nan(), "index {i} past the end");
        }
    }
}

#[test]
fn pack_half_rounds_to_a_neighbour_and_marks_overflow() {
    use lucent::kernels::pack_half::{self, half_bits, half_value};
    // The host's conversion at values whose halves are known.
    for (v, bits) in [
        (1.0f32, 0x3c00u16),
        (-2.5, 0xc100),
        (0.1, 0x2e66),
        (65504.0, 0x7bff),
        (65519.0, 0x7bff),
        (65520.0, 0x7c00),
        (2f32.powi(-24), 0x0001),
        (f32::NAN, 0x7c00),
        (-1e9, 0xfc00),
    ] {
        assert_eq!(half_bits(v), bits, "half of {v}");
    }
    let gpu = poisoned_gpu();
    for dims in SHAPES {
        // Spread over the range, with subnormals, zeros and values past ±65504.
        let x = rand_array(dims).mapv(|u| if u.abs() < 0.05 { u * 1e-5 } else { (u * 40.0).exp2() * u.signum() });
        let mut rec = Recording::new(gpu);
        let b = rec.upload_f32(&x.view()).unwrap();
        let y = pack_half::record(&mut rec, b).unwrap();
        let d = rec.download(y);
        let words = rec.run().unwrap().u32(d).unwrap();
        let got: Vec<u16> = words.iter().flat_map(|w| [(*w & 0xffff) as u16, (*w >> 16) as u16]).collect();
        assert!(x.len().is_multiple_of(2) || got[x.len()] == 0, "{dims:?}: the last word's unused half");
        for (&v, &g) in x.iter().zip(&got) {
            let want = half_bits(v);
            // The device may round either way: the nearest half, or its neighbour on v's other
            // side; overflow exactly ±infinity.
            let adjacent = (g as i32 - want as i32).abs() == 1 && (g ^ want) & 0x8000 == 0 && pack_half::half_is_finite(want);
            let (a, b) = (half_value(g), half_value(want));
            let ok = g == want || (adjacent && (a.min(b)..=a.max(b)).contains(&v));
            assert!(ok, "{dims:?}: half of {v} = {g:#06x} ({}), want {want:#06x} ({})", half_value(g), half_value(want));
        }
    }
}

/// The device's finiteness test (`count_nonfinite`: a grid of at most 2048 workgroups stepping
/// through the array) finds one NaN or infinity anywhere, also beyond the first step of the
/// grid, in f32, f64 and complex arrays; a finite array gives 0.
#[test]
fn nonfinite_test_finds_one_bad_value_anywhere() {
    use lucent::kernels::count_nonfinite;
    let n = 2048 * 256 * 2 + 1234; // past two steps of the largest grid
    for at in [None, Some(0), Some(777), Some(2048 * 256 + 5), Some(n - 1)] {
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            for dtype in [Dtype::F32, Dtype::F64] {
                if dtype == Dtype::F64 && !gpu().has_f64() {
                    continue;
                }
                let mut x = ArrayD::from_shape_fn(IxDyn(&[n]), |i| (i[0] % 1000) as f64 * 1e30 - 5e32);
                if let Some(k) = at {
                    x[k] = bad;
                }
                let mut rec = Recording::new(gpu());
                let xb = rec.upload_as(&x.view(), dtype).unwrap();
                let flag = count_nonfinite::record(&mut rec, xb).unwrap();
                let d = rec.download(flag);
                let got = rec.run().unwrap().u32(d).unwrap()[0];
                assert_eq!(got, u32::from(at.is_some()), "{dtype:?} {bad} at {at:?}");
            }
        }
    }
    let mut z = ArrayD::from_elem(IxDyn(&[3, 1001]), Complex32::new(1.0, 2.0));
    z[[2, 1000]] = Complex32::new(1.0, f32::NAN);
    let mut rec = Recording::new(gpu());
    let zb = rec.upload_c32(&z.view()).unwrap();
    let flag = count_nonfinite::record(&mut rec, zb).unwrap();
    let d = rec.download(flag);
    assert_eq!(rec.run().unwrap().u32(d).unwrap()[0], 1, "the last imaginary part");
}
