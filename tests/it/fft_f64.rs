//! The f64 FFT (complex f64 data, numpy.fft's complex128; plans in f64 on devices with
//! SHADER_F64) against rustfft in f64: fresh random inputs, outputs poisoned, every kind of plan
//! (single passes, split exchange, four-step, Rader, Bluestein over single and four-step passes,
//! real transforms along and across lines, chunks beyond one buffer). An f32 computation errs by
//! ~1e-7 and fails every bound here; the f32 fallback where f64 is off.

use crate::common;
use common::*;
use lucent::fft::{self, cpu, Norm};
use lucent::GpuOptions;
use ndarray::{ArrayD, IxDyn};
use num_complex::{Complex32, Complex64};
use rand::Rng;

/// Relative L2 error bound: f64 transforms err by ~1e-16 · log n (Bluestein twice that).
const F64_TOL: f64 = 1e-13;

fn crand(dims: &[usize]) -> ArrayD<Complex64> {
    let mut rng = rand::rng();
    ArrayD::from_shape_fn(IxDyn(dims), |_| Complex64::new(rng.random::<f64>() - 0.5, rng.random::<f64>() - 0.5))
}

fn rand64(dims: &[usize]) -> ArrayD<f64> {
    let mut rng = rand::rng();
    ArrayD::from_shape_fn(IxDyn(dims), |_| rng.random::<f64>() - 0.5)
}

fn rel<T: Copy + Into<Complex64>>(got: &ArrayD<T>, want: &ArrayD<T>) -> f64 {
    assert_eq!(got.shape(), want.shape());
    let (mut num, mut den) = (0.0, 0.0);
    for (&g, &w) in got.iter().zip(want) {
        let (g, w): (Complex64, Complex64) = (g.into(), w.into());
        if !(g.re.is_finite() && g.im.is_finite()) {
            return f64::INFINITY;
        }
        num += (g - w).norm_sqr();
        den += w.norm_sqr();
    }
    (num / den.max(f64::MIN_POSITIVE)).sqrt()
}

fn f64_gpu() -> &'static lucent::Gpu {
    let gpu = poisoned_gpu();
    assert!(gpu.has_f64(), "these tests need an adapter with SHADER_F64 (lavapipe, NVIDIA and AMD Vulkan have it)");
    gpu
}

/// Forward and inverse over `axes` against rustfft, and the round trip.
fn check_c2c(gpu: &lucent::Gpu, dims: &[usize], axes: &[usize], norm: Norm) {
    let x = crand(dims);
    let y = fft::fftn(gpu, &x, Some(axes), norm).unwrap();
    let e = rel(&y, &cpu::c2c(&x, axes, false, norm));
    assert!(e < F64_TOL, "fftn {dims:?} {axes:?} {norm:?}: {e:.2e}");
    let back = fft::ifftn(gpu, &y, Some(axes), norm).unwrap();
    let e = rel(&back, &cpu::c2c(&y, axes, true, norm));
    assert!(e < F64_TOL, "ifftn {dims:?} {axes:?} {norm:?}: {e:.2e}");
    let e = rel(&back, &x);
    assert!(e < F64_TOL, "round trip {dims:?} {axes:?} {norm:?}: {e:.2e}");
}

/// rfftn and irfftn over `axes` against rustfft (the last axis real).
fn check_real(gpu: &lucent::Gpu, dims: &[usize], axes: &[usize], norm: Norm) {
    let x = rand64(dims);
    let y = fft::rfftn(gpu, &x, Some(axes), norm).unwrap();
    let e = rel(&y, &cpu::r2c(&x, axes, norm));
    assert!(e < F64_TOL, "rfftn {dims:?} {axes:?} {norm:?}: {e:.2e}");
    let n = dims[*axes.last().unwrap()];
    let back = fft::irfftn(gpu, &y, Some(axes), Some(n), norm).unwrap();
    let e = rel(&back, &cpu::c2r(&y, axes, n, norm));
    assert!(e < F64_TOL, "irfftn {dims:?} {axes:?} {norm:?}: {e:.2e}");
    let e = rel(&back, &x);
    assert!(e < F64_TOL, "real round trip {dims:?} {axes:?} {norm:?}: {e:.2e}");
}

// The f64 kernels differ from the f32 ones (tested over every length in src/tests/fft.rs) in
// their types, literals, tables, norm factor and workgroup budget: one case per kind of plan
// covers those (each distinct kernel costs lavapipe a compile, ~0.3 s in f64).

/// Single passes: every radix (2, 3, 4, 5, 7, 8, 9, 11, 13, 15, 16) along and across lines,
/// several axes, and the longest lines one pass takes in f64 (split exchange).
#[test]
fn single_pass_lengths_in_f64() {
    let gpu = f64_gpu();
    check_c2c(gpu, &[1, 5], &[0], Norm::Backward);
    check_c2c(gpu, &[77, 144], &[0, 1], Norm::Backward);
    check_c2c(gpu, &[195, 2], &[0], Norm::Ortho);
    check_c2c(gpu, &[2, 3, 5, 7], &[0, 1, 2, 3], Norm::Forward);
    check_c2c(gpu, &[2, 4096], &[1], Norm::Backward);
}

/// Lengths beyond one pass: four-step (two passes with the twiddle between), Rader's primes,
/// Bluestein's over a single pass and over four-step passes (axis maps between them).
#[test]
fn four_step_rader_and_bluestein_in_f64() {
    let gpu = f64_gpu();
    check_c2c(gpu, &[8192], &[0], Norm::Backward);
    check_c2c(gpu, &[2, 257], &[1], Norm::Ortho);
    check_c2c(gpu, &[97, 3], &[0], Norm::Backward);
    check_c2c(gpu, &[2, 47], &[1], Norm::Forward);
    check_c2c(gpu, &[40009], &[0], Norm::Backward);
}

/// Real transforms: even lengths along lines (one pass untangles), odd ones and strided axes
/// (two real lines to one complex line), a Rader length, several axes, a length beyond one pass.
#[test]
fn real_transforms_in_f64() {
    let gpu = f64_gpu();
    check_real(gpu, &[1], &[0], Norm::Backward);
    check_real(gpu, &[3, 100], &[1], Norm::Backward);
    check_real(gpu, &[3, 33], &[1], Norm::Ortho);
    check_real(gpu, &[97, 6], &[0], Norm::Forward);
    check_real(gpu, &[5, 6, 7], &[0, 1, 2], Norm::Backward);
    check_real(gpu, &[2, 16384], &[1], Norm::Backward);
}

/// Arrays beyond one buffer: chunks along axis 0 (the transform across chunks in f64 too).
#[test]
fn chunked_transforms_in_f64() {
    let base = GpuOptions { poison: true, ..GpuOptions::from_env().unwrap() };
    // Four rows of 48 · 7 complex f64 per buffer.
    let gpu = open(GpuOptions { max_buffer_bytes: Some(4 * 48 * 7 * 16), ..base });
    let x = crand(&[12, 48, 7]);
    for axes in [&[0, 1, 2][..], &[1, 2], &[0]] {
        let y = fft::fftn(&gpu, &x, Some(axes), Norm::Backward).unwrap();
        let e = rel(&y, &cpu::c2c(&x, axes, false, Norm::Backward));
        assert!(e < F64_TOL, "chunked fftn {axes:?}: {e:.2e}");
        let back = fft::ifftn(&gpu, &y, Some(axes), Norm::Backward).unwrap();
        assert!(rel(&back, &x) < F64_TOL, "chunked round trip {axes:?}");
    }
    let r = rand64(&[12, 48, 14]);
    let y = fft::rfftn(&gpu, &r, None, Norm::Ortho).unwrap();
    let e = rel(&y, &cpu::r2c(&r, &[0, 1, 2], Norm::Ortho));
    assert!(e < F64_TOL, "chunked rfftn: {e:.2e}");
}

/// With f64 off (as on Metal), complex f64 data is transformed in f32 and widened.
#[test]
fn f64_transforms_without_f64_are_computed_in_f32() {
    let gpu = open(GpuOptions { no_f64: true, ..GpuOptions::from_env().unwrap() });
    let x = crand(&[6, 17]);
    let x32 = x.mapv(|c| Complex32::new(c.re as f32, c.im as f32));
    let got = fft::fftn(&gpu, &x, None, Norm::Backward).unwrap();
    let want = fft::fftn(&gpu, &x32, None, Norm::Backward).unwrap().mapv(|c| Complex64::new(c.re as f64, c.im as f64));
    assert_eq!(got, want);
    let r = rand64(&[5, 12]);
    let got = fft::irfftn(&gpu, &fft::rfftn(&gpu, &r, None, Norm::Backward).unwrap(), None, Some(12), Norm::Backward).unwrap();
    assert!(rel(&got, &r) < 1e-6 && rel(&got, &r) > 1e-12, "an f32 round trip");
}

/// scipy.signal on f64 data: direct sums and the FFT path in f64 against the f64 reference,
/// every mode, odd and prime shapes, 1-3 axes.
#[test]
fn signal_convolution_in_f64() {
    use lucent::signal::{self, Method, Mode};
    let gpu = f64_gpu();
    for (a_dims, k_dims) in [(&[31][..], &[5][..]), (&[13, 17], &[4, 3]), (&[7, 9, 11], &[3, 5, 2])] {
        let (a, k) = (rand64(a_dims), rand64(k_dims));
        let modes: &[Mode] = if a_dims.len() < 3 { &[Mode::Full, Mode::Same, Mode::Valid] } else { &[Mode::Same] };
        for &mode in modes {
            let want = signal::cpu::convolve(&a, &k, mode).unwrap();
            let want_corr = signal::cpu::correlate(&a, &k, mode).unwrap();
            for method in [Method::Direct, Method::Fft] {
                let got = signal::convolve(gpu, &a, &k, mode, method).unwrap();
                let e = rel(&got, &want);
                assert!(e < F64_TOL, "convolve {a_dims:?} {k_dims:?} {mode:?} {method:?}: {e:.2e}");
                let got = signal::correlate(gpu, &a, &k, mode, method).unwrap();
                let e = rel(&got, &want_corr);
                assert!(e < F64_TOL, "correlate {a_dims:?} {k_dims:?} {mode:?} {method:?}: {e:.2e}");
            }
        }
    }
}
