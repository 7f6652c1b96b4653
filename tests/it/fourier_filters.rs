//! scipy.ndimage's Fourier filters (fourier_gaussian, fourier_uniform, fourier_ellipsoid): values
//! scipy 1.17.1 printed, the GPU against the f64 reference on random spectra of 1-4 axes (odd,
//! prime, even) full and half, outputs poisoned; refusals. The Python suite compares them with
//! scipy itself in every dtype.

use crate::common;
use common::*;
use lucent::ndimage::{self, cpu, FourierFilter};
use ndarray::{ArrayD, IxDyn};
use num_complex::{Complex32, Complex64};

type Filter = fn(&lucent::Gpu, &ArrayD<Complex32>, &[f64], Option<usize>, isize) -> lucent::Result<ArrayD<Complex32>>;

fn front_door(f: FourierFilter) -> Filter {
    match f {
        FourierFilter::Gaussian => ndimage::fourier_gaussian,
        FourierFilter::Uniform => ndimage::fourier_uniform,
        FourierFilter::Ellipsoid => ndimage::fourier_ellipsoid,
    }
}

#[test]
fn fourier_filters_match_scipy() {
    // numpy: i = arange(12).reshape(3, 4); x = sin(i + 1) + 1j * cos(2 i); elements 1, 5, 6, 11.
    let x = ArrayD::from_shape_fn(IxDyn(&[3, 4]), |i| {
        let k = (i[0] * 4 + i[1]) as f64;
        Complex32::new((k + 1.0).sin() as f32, (2.0 * k).cos() as f32)
    });
    let cases: [(FourierFilter, [f64; 2], Option<usize>, [(f64, f64); 4]); 3] = [
        (
            FourierFilter::Gaussian,
            [0.8, 1.7],
            None,
            [
                (0.025720225144195398, -0.011771055337088394),
                (-0.0019418250040083263, -0.005831208668862658),
                (1.0332906986627655e-07, 1.3271906128503206e-07),
                (-0.003728965341447046, -0.00694932438693696),
            ],
        ),
        (
            FourierFilter::Uniform,
            [2.5, 3.0],
            Some(7),
            [
                (0.6584235850481179, -0.3013325276662533),
                (-0.03864126059240609, -0.1160378784273051),
                (0.020217533884087625, 0.025968027410553214),
                (0.019835764300091648, 0.03696606108188413),
            ],
        ),
        (
            FourierFilter::Ellipsoid,
            [2.5, 3.0],
            None,
            [
                (0.40848654888065655, -0.1869469549497946),
                (-0.02032254531667624, -0.0610276426451086),
                (-0.08422361726206676, -0.10817942555291989),
                (-0.03902620832435616, -0.07272949904460296),
            ],
        ),
    ];
    for (filter, size, n, want) in cases {
        let got = front_door(filter)(poisoned_gpu(), &x, &size, n, -1).unwrap();
        for (&k, (re, im)) in [1, 5, 6, 11].iter().zip(want) {
            let g = got.as_slice().unwrap()[k];
            assert!((g.re as f64 - re).abs() <= 1e-6 && (g.im as f64 - im).abs() <= 1e-6, "{filter:?} at {k}: {g} vs ({re}, {im})");
        }
    }
    // A ball: fourier_ellipsoid(ones((2, 3, 4)), (2.5, 3, 1.5)), elements 1, 5, 13, 23.
    let ones = ArrayD::from_elem(IxDyn(&[2, 3, 4]), Complex32::new(1.0, 0.0));
    let ball = ndimage::fourier_ellipsoid(poisoned_gpu(), &ones, &[2.5, 3.0, 1.5], None, -1).unwrap();
    for (&k, want) in [1, 5, 13, 23].iter().zip([0.8679142788031847, 0.24359194161911454, 0.06698776671822175, -0.06876793792705344]) {
        assert!((ball.as_slice().unwrap()[k].re as f64 - want).abs() <= 1e-6, "ball at {k}");
    }
}

#[test]
fn fourier_filters_match_the_reference() {
    let shapes: [&[usize]; 5] = [&[31], &[7, 12], &[5, 6, 11], &[2, 3, 4, 5], &[1, 9]];
    for dims in shapes {
        let x = ArrayD::from_shape_vec(IxDyn(dims), random_complex(dims.iter().product())).unwrap();
        let x64 = x.mapv(|c| Complex64::new(c.re as f64, c.im as f64));
        let last = dims.len() - 1;
        for filter in [FourierFilter::Gaussian, FourierFilter::Uniform, FourierFilter::Ellipsoid] {
            if filter == FourierFilter::Ellipsoid && dims.len() > 3 {
                let e = ndimage::fourier_ellipsoid(gpu(), &x, &[2.0], None, -1).unwrap_err().to_string();
                assert!(e.contains("1, 2 or 3"), "{e}");
                continue;
            }
            let size: Vec<f64> = (0..dims.len()).map(|a| 0.7 + 1.9 * a as f64).collect();
            // A full spectrum, and a half spectrum of an odd-length signal along the last axis.
            for (n, real) in [(None, None), (Some(2 * dims[last] - 1), Some((last, 2 * dims[last] - 1)))] {
                let got = front_door(filter)(poisoned_gpu(), &x, &size, n, -1).unwrap();
                let want = cpu::fourier_filter(&x64, filter, &size, real).unwrap();
                let err = rel_l2_c(got.as_slice().unwrap(), want.as_slice().unwrap());
                assert!(err < 1e-6, "{filter:?} {dims:?} n {n:?}: relative L2 {err:e}");
            }
        }
    }
}

#[test]
fn fourier_filters_refuse_bad_arguments() {
    let x = ArrayD::from_elem(IxDyn(&[4, 6]), Complex32::new(1.0, 0.0));
    let e = ndimage::fourier_gaussian(gpu(), &x, &[1.0, 2.0, 3.0], None, -1).unwrap_err().to_string();
    assert!(e.contains("3 values for a 2-D array"), "{e}");
    assert!(ndimage::fourier_uniform(gpu(), &x, &[2.0], Some(20), -1).unwrap_err().to_string().contains("half spectrum"));
    assert!(ndimage::fourier_uniform(gpu(), &x, &[f64::NAN], None, -1).is_err());
    assert!(ndimage::fourier_ellipsoid(gpu(), &x, &[1.0], None, 2).unwrap_err().to_string().contains("axis"));
    let mut bad = x.clone();
    bad[[1, 2]] = Complex32::new(f32::INFINITY, 0.0);
    assert!(ndimage::fourier_gaussian(gpu(), &bad, &[1.0], None, -1).is_err());
}

/// Complex f64 spectra: the separable filters (and fourier_shift) in f64 on the GPU,
/// fourier_ellipsoid in f64 on the host, all at f64's level against the reference (f32 would err
/// by ~1e-7).
#[test]
fn fourier_filters_in_f64() {
    assert!(gpu().has_f64(), "an adapter with SHADER_F64");
    type Filter64 = fn(&lucent::Gpu, &ArrayD<Complex64>, &[f64], Option<usize>, isize) -> lucent::Result<ArrayD<Complex64>>;
    let doors: [(FourierFilter, Filter64); 3] = [
        (FourierFilter::Gaussian, ndimage::fourier_gaussian),
        (FourierFilter::Uniform, ndimage::fourier_uniform),
        (FourierFilter::Ellipsoid, ndimage::fourier_ellipsoid),
    ];
    for dims in [&[31][..], &[7, 12], &[5, 6, 11]] {
        let x = ArrayD::from_shape_vec(IxDyn(dims), random_complex(dims.iter().product())).unwrap().mapv(|c| Complex64::new(c.re as f64, c.im as f64));
        let last = dims.len() - 1;
        let size: Vec<f64> = (0..dims.len()).map(|a| 0.7 + 1.9 * a as f64).collect();
        for (n, real) in [(None, None), (Some(2 * dims[last] - 1), Some((last, 2 * dims[last] - 1)))] {
            for (filter, door) in doors {
                let got = door(poisoned_gpu(), &x, &size, n, -1).unwrap();
                let want = cpu::fourier_filter(&x, filter, &size, real).unwrap();
                let err = rel_l2_c64(&got, &want);
                assert!(err < 1e-13, "{filter:?} {dims:?} n {n:?}: relative L2 {err:e}");
            }
            let got = ndimage::fourier_shift(poisoned_gpu(), &x, &size, n, -1).unwrap();
            let want = lucent::ndimage::cpu::fourier_shift(&x, &size, real).unwrap();
            let err = rel_l2_c64(&got, &want);
            assert!(err < 1e-13, "fourier_shift {dims:?} n {n:?}: relative L2 {err:e}");
        }
    }
}

fn rel_l2_c64(got: &ArrayD<Complex64>, want: &ArrayD<Complex64>) -> f64 {
    let num: f64 = got.iter().zip(want).map(|(g, w)| (g - w).norm_sqr()).sum();
    let den: f64 = want.iter().map(|w| w.norm_sqr()).sum();
    (num / den).sqrt()
}
