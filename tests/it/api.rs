//! The one-call namespaces (`fft`, `signal`, `ndimage`, `restoration`) on typed ndarrays of
//! fixed dimension, against the f64 CPU references, and the context's cache across calls.

use crate::common;

use common::{poisoned_gpu, random, random_complex, random_positive, rel_l2, rel_l2_c};
use lucent::fft::{self, cpu as fft_cpu, Norm};
use lucent::ndimage::{self, Boundary};
use lucent::restoration::cpu as rl_cpu;
use lucent::restoration::{self, RlOptions, RlRun};
use lucent::signal::{self, Method, Mode};
use lucent::Gpu;
use ndarray::{Array2, Array3, ArrayD, Ix2, Ix3};
use num_complex::Complex64;

fn array2(rows: usize, cols: usize) -> Array2<f32> {
    Array2::from_shape_vec((rows, cols), random(rows * cols)).unwrap()
}

fn array3(d: (usize, usize, usize)) -> Array3<f32> {
    Array3::from_shape_vec(d, random(d.0 * d.1 * d.2)).unwrap()
}

fn f64_of<D: ndarray::Dimension>(x: &ndarray::Array<f32, D>) -> ArrayD<f64> {
    x.mapv(f64::from).into_dyn()
}

fn flat(x: &ArrayD<f64>) -> Vec<f64> {
    x.iter().copied().collect()
}

#[test]
fn fft_one_calls_keep_the_dimension_type() {
    let g = poisoned_gpu();
    let x = Array3::from_shape_vec((5, 7, 11), random_complex(385)).unwrap();
    let y: Array3<_> = fft::fftn(g, &x, None, Norm::Ortho).unwrap();
    let want = fft_cpu::c2c(&x.mapv(|c| Complex64::new(c.re as f64, c.im as f64)).into_dyn(), &[0, 1, 2], false, Norm::Ortho);
    assert!(rel_l2_c(y.as_slice().unwrap(), want.as_slice().unwrap()) < 1e-6);
    let back: Array3<_> = fft::ifftn(g, &y, None, Norm::Ortho).unwrap();
    assert!(rel_l2_c(back.as_slice().unwrap(), &x.iter().map(|c| Complex64::new(c.re as f64, c.im as f64)).collect::<Vec<_>>()) < 1e-6);

    // rfftn over one axis of a transposed (non-standard layout) view; irfftn's default length.
    let r = array2(13, 10);
    let h: Array2<_> = fft::rfftn(g, &r.t(), Some(&[1]), Norm::Backward).unwrap();
    assert_eq!(h.dim(), (10, 7));
    let want = fft_cpu::r2c(&r.t().mapv(f64::from).into_dyn(), &[1], Norm::Backward);
    assert!(rel_l2_c(&h.iter().copied().collect::<Vec<_>>(), &want.iter().copied().collect::<Vec<_>>()) < 1e-6);
    let even = array2(6, 12);
    let h = fft::rfftn(g, &even, None, Norm::Backward).unwrap();
    let round: Array2<f32> = fft::irfftn(g, &h, None, None, Norm::Backward).unwrap();
    assert_eq!(round.dim(), (6, 12));
    assert!(rel_l2(round.as_slice().unwrap(), &flat(&f64_of(&even))) < 1e-6);
    let err = fft::irfftn(g, &Array2::<num_complex::Complex32>::zeros((3, 1)), None, None, Norm::Backward).unwrap_err();
    assert!(err.to_string().contains("default output length"), "{err}");
}

#[test]
fn signal_one_calls_match_scipy_semantics() {
    let g = poisoned_gpu();
    let a = array2(37, 53);
    let k = array2(5, 8);
    for mode in [Mode::Full, Mode::Same, Mode::Valid] {
        let want = signal::cpu::convolve(&f64_of(&a), &f64_of(&k), mode).unwrap();
        let got: Array2<f32> = signal::fftconvolve(g, &a, &k, mode).unwrap();
        assert_eq!(got.shape(), want.shape(), "{mode:?}");
        assert!(rel_l2(got.as_slice().unwrap(), &flat(&want)) < 1e-5, "fftconvolve {mode:?}");
        let direct = signal::convolve(g, &a, &k, mode, Method::Direct).unwrap();
        assert!(rel_l2(direct.as_slice().unwrap(), &flat(&want)) < 1e-5, "direct {mode:?}");
        let want = signal::cpu::correlate(&f64_of(&a), &f64_of(&k), mode).unwrap();
        for method in [Method::Auto, Method::Fft, Method::Direct] {
            let got = signal::correlate(g, &a, &k, mode, method).unwrap();
            assert!(rel_l2(got.as_slice().unwrap(), &flat(&want)) < 1e-5, "correlate {mode:?} {method:?}");
        }
    }
    let volume = array3((9, 11, 6));
    let kernel = array3((3, 4, 5));
    let got: Array3<f32> = signal::convolve(g, &volume, &kernel, Mode::Same, Method::Auto).unwrap();
    let want = signal::cpu::convolve(&f64_of(&volume), &f64_of(&kernel), Mode::Same).unwrap();
    assert!(rel_l2(got.as_slice().unwrap(), &flat(&want)) < 1e-5);
    let bad = signal::fftconvolve(g, &a, &Array2::from_elem((2, 2), f32::NAN), Mode::Same).unwrap_err();
    assert!(bad.to_string().contains("kernel"), "{bad}");
}

#[test]
fn ndimage_one_calls_match_scipy_semantics() {
    let g = poisoned_gpu();
    let v = array3((7, 12, 9));
    let sigma = [0.8f32, 1.5, 0.0];
    let got: Array3<f32> = ndimage::gaussian_filter(g, &v, &sigma, Boundary::Reflect).unwrap();
    let want = ndimage::cpu::gaussian_filter(&f64_of(&v), &sigma.map(f64::from), Boundary::Reflect);
    assert!(rel_l2(got.as_slice().unwrap(), &flat(&want)) < 1e-5);
    let got = ndimage::uniform_filter(g, &v, &[3, 4, 1], Boundary::Constant(0.5)).unwrap();
    let want = ndimage::cpu::uniform_filter(&f64_of(&v), &[3, 4, 1], Boundary::Constant(0.5));
    assert!(rel_l2(got.as_slice().unwrap(), &flat(&want)) < 1e-5);

    let image = array2(19, 23);
    let w = array2(3, 4);
    let got: Array2<f32> = ndimage::correlate(g, &image, &w, Boundary::Mirror).unwrap();
    let want = ndimage::cpu::correlate(&f64_of(&image), &f64_of(&w), Boundary::Mirror);
    assert!(rel_l2(got.as_slice().unwrap(), &flat(&want)) < 1e-5);
    let got = ndimage::convolve(g, &image, &w, Boundary::Wrap).unwrap();
    let want = ndimage::cpu::convolve(&f64_of(&image), &f64_of(&w), Boundary::Wrap);
    assert!(rel_l2(got.as_slice().unwrap(), &flat(&want)) < 1e-5);
    let weights = [0.25f32, -1.0, 0.5, 2.0];
    let got = ndimage::convolve1d(g, &image, &weights, 1, Boundary::Nearest).unwrap();
    let want = ndimage::cpu::convolve1d(&f64_of(&image), &weights.map(f64::from), 1, Boundary::Nearest);
    assert!(rel_l2(got.as_slice().unwrap(), &flat(&want)) < 1e-5);
    let got = ndimage::correlate1d(g, &image, &weights, 0, Boundary::Reflect).unwrap();
    let want = ndimage::cpu::correlate1d(&f64_of(&image), &weights.map(f64::from), 0, Boundary::Reflect);
    assert!(rel_l2(got.as_slice().unwrap(), &flat(&want)) < 1e-5);
    assert!(ndimage::correlate1d(g, &image, &weights, 2, Boundary::Reflect).is_err());
}

#[test]
fn richardson_lucy_in_one_call() {
    let g = poisoned_gpu();
    let image = Array3::from_shape_vec((6, 17, 14), random_positive(6 * 17 * 14)).unwrap();
    let psf = Array3::from_shape_vec((3, 5, 4), random_positive(60)).unwrap();
    let opts = RlOptions::default();
    let got: Array3<f32> = restoration::richardson_lucy(g, &image, &psf, 7, &opts).unwrap();
    let want = rl_cpu::richardson_lucy(&image.view().into_dyn(), &psf.view().into_dyn(), 7, &opts).unwrap();
    assert!(rel_l2(got.as_slice().unwrap(), &flat(&want.estimate)) < 1e-4);
    // A 2D PSF over a stack of planes, reported as a whole resident run.
    let planes = Array3::from_shape_vec((4, 15, 13), random_positive(4 * 15 * 13)).unwrap();
    let psf2 = Array2::from_shape_vec((5, 3), random_positive(15)).unwrap();
    let (got, run) = restoration::richardson_lucy_with(g, &planes, &psf2, 5, &opts, |_| {}).unwrap();
    assert!(matches!(run, RlRun::Whole(_)));
    let want = rl_cpu::richardson_lucy(&planes.view().into_dyn(), &psf2.view().into_dyn(), 5, &opts).unwrap();
    assert!(rel_l2(got.as_slice().unwrap(), &flat(&want.estimate)) < 1e-4);
    let zero = restoration::richardson_lucy(g, &image, &Array3::<f32>::zeros((3, 3, 3)), 3, &opts).unwrap_err();
    assert!(zero.to_string().to_lowercase().contains("psf"), "{zero}");
}

/// The second call on the same shapes reuses the plans and the kernel's spectrum; a kernel of
/// the same shape but other values gets its own spectrum, never the cached one.
#[test]
fn the_context_caches_plans_and_spectra_across_calls() {
    let g = Gpu::new().unwrap();
    let a = array2(40, 31);
    let k = array2(6, 5);
    let first = signal::fftconvolve(&g, &a, &k, Mode::Same).unwrap();
    let kept = g.cached_values();
    assert!(kept >= 1);
    let b = array2(40, 31);
    let second = signal::fftconvolve(&g, &b, &k, Mode::Same).unwrap();
    assert_eq!(g.cached_values(), kept, "the second call planned again");
    let want = signal::cpu::convolve(&f64_of(&b), &f64_of(&k), Mode::Same).unwrap();
    assert!(rel_l2(second.as_slice().unwrap(), &flat(&want)) < 1e-5);
    let other = array2(6, 5);
    let third = signal::fftconvolve(&g, &a, &other, Mode::Same).unwrap();
    let want = signal::cpu::convolve(&f64_of(&a), &f64_of(&other), Mode::Same).unwrap();
    assert!(rel_l2(third.as_slice().unwrap(), &flat(&want)) < 1e-5);
    assert!(rel_l2(first.as_slice().unwrap(), &flat(&signal::cpu::convolve(&f64_of(&a), &f64_of(&k), Mode::Same).unwrap())) < 1e-5);

    let x = Array3::from_shape_vec((4, 6, 10), random_complex(240)).unwrap();
    fft::fftn(&g, &x, Some(&[1, 2]), Norm::Backward).unwrap();
    let plans = g.cached_values();
    let y: ndarray::Array<_, Ix3> = fft::fftn(&g, &x, Some(&[1, 2]), Norm::Backward).unwrap();
    assert_eq!(g.cached_values(), plans);
    assert_eq!(y.dim(), (4, 6, 10));
    let _: ndarray::Array<f32, Ix2> = restoration::richardson_lucy(&g, &a.mapv(|v| v + 1.0), &k.mapv(f32::abs), 2, &RlOptions::default()).unwrap();
    let rl = g.cached_values();
    restoration::richardson_lucy(&g, &a.mapv(|v| v + 2.0), &k.mapv(f32::abs), 2, &RlOptions::default()).unwrap();
    assert_eq!(g.cached_values(), rl);
}

/// The async path gives what the blocking one gives, on any executor (here pollster's).
#[test]
fn recordings_run_asynchronously() {
    use lucent::engine::binary::{self, BinaryOp};
    use lucent::Recording;
    let g = poisoned_gpu();
    let a = ArrayD::from_shape_vec(ndarray::IxDyn(&[37, 11]), random(407)).unwrap();
    let b = ArrayD::from_shape_vec(ndarray::IxDyn(&[37, 11]), random(407)).unwrap();
    let mut rec = Recording::new(g);
    let (x, y) = (rec.upload_f32(&a.view()).unwrap(), rec.upload_f32(&b.view()).unwrap());
    let z = binary::record(&mut rec, BinaryOp::Mul, x, y).unwrap();
    let d = rec.download(z);
    let compiled = rec.compile().unwrap();
    for _ in 0..2 {
        let got = pollster::block_on(compiled.run_async(g)).unwrap().f32(d).unwrap();
        let want: Vec<f64> = a.iter().zip(&b).map(|(&p, &q)| p as f64 * q as f64).collect();
        assert!(rel_l2(got.as_slice().unwrap(), &want) < 1e-7);
    }
}

/// The in-core budget: the option when given; else something positive (a CPU adapter's is the
/// host budget, a Vulkan GPU's 90% of its largest device-local heap).
#[test]
fn memory_budget_follows_the_option() {
    use lucent::GpuOptions;
    let set = common::open(GpuOptions { device_memory_bytes: Some(12345), ..GpuOptions::from_env().unwrap() });
    assert_eq!(set.memory_budget_bytes(), 12345);
    let gpu = common::gpu();
    assert!(gpu.memory_budget_bytes() > 0);
    if let Some(heap) = gpu.device_memory_bytes() {
        assert!(heap > 0);
    }
}

/// check_finite names the first non-finite element's index in row-major order, for contiguous
/// arrays and for strided views alike (views are scanned row by row), and the uploads of a
/// strided view hold its elements in row-major order.
#[test]
fn non_finite_index_and_strided_uploads() {
    use crate::common::{gpu, rand_array};
    let mut x = rand_array(&[5, 7, 6]);
    x[[3, 2, 4]] = f32::NAN;
    x[[4, 0, 1]] = f32::INFINITY;
    let err = lucent::check::check_finite(&x.view(), "x").unwrap_err().to_string();
    assert!(err.contains("NaN at index [3, 2, 4]"), "{err}");
    let strided = x.slice(ndarray::s![.., 0..6;2, ..]).into_dyn();
    let err = lucent::check::check_finite(&strided, "x").unwrap_err().to_string();
    assert!(err.contains("NaN at index [3, 1, 4]"), "{err}");
    let columns = x.slice(ndarray::s![4.., .., 1..2]).into_dyn();
    let err = lucent::check::check_finite(&columns, "x").unwrap_err().to_string();
    assert!(err.contains("inf at index [0, 0, 0]"), "{err}");
    let y = rand_array(&[4, 9, 5]);
    let view = y.slice(ndarray::s![1.., ..;3, 1..4]).into_dyn();
    let back = lucent::GpuArray::upload_f32(gpu(), &view).unwrap().download_f32(gpu()).unwrap();
    assert_eq!(back, view.to_owned());
}
