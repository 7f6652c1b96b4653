//! Shared test helpers: one GPU per test binary, fresh random inputs, error metrics.
#![allow(dead_code)]

pub mod fft_check;

use std::sync::OnceLock;

use lucent::Gpu;
use num_complex::Complex32;
use rand::Rng;

/// The test GPU. Never skips: with no adapter the tests fail and say how to get one.
pub fn gpu() -> &'static Gpu {
    static GPU: OnceLock<Gpu> = OnceLock::new();
    GPU.get_or_init(|| {
        Gpu::new().unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}. Run scripts/test, which installs lavapipe."))
    })
}

/// Uniform in [-0.5, 0.5), fresh every call.
pub fn random(n: usize) -> Vec<f32> {
    let mut rng = rand::rng();
    (0..n).map(|_| rng.random::<f32>() - 0.5).collect()
}

pub fn random_positive(n: usize) -> Vec<f32> {
    let mut rng = rand::rng();
    (0..n).map(|_| rng.random::<f32>() + 0.1).collect()
}

pub fn random_complex(n: usize) -> Vec<Complex32> {
    let re = random(n);
    let im = random(n);
    re.into_iter().zip(im).map(|(r, i)| Complex32::new(r, i)).collect()
}

/// ||got - want|| / ||want|| in f64; NaN anywhere in `got` gives infinity.
pub fn rel_l2(got: &[f32], want: &[f64]) -> f64 {
    assert_eq!(got.len(), want.len(), "length mismatch");
    if got.iter().any(|v| !v.is_finite()) {
        return f64::INFINITY;
    }
    let num: f64 = got.iter().zip(want).map(|(&g, &w)| (g as f64 - w).powi(2)).sum();
    let den: f64 = want.iter().map(|w| w * w).sum();
    (num / den.max(f64::MIN_POSITIVE)).sqrt()
}

pub fn rel_l2_c(got: &[Complex32], want: &[num_complex::Complex64]) -> f64 {
    let g: Vec<f32> = got.iter().flat_map(|c| [c.re, c.im]).collect();
    let w: Vec<f64> = want.iter().flat_map(|c| [c.re, c.im]).collect();
    rel_l2(&g, &w)
}

/// Shapes every kernel is tried on: a single element, primes, odd, non-square, 4D.
pub const SHAPES: &[&[usize]] = &[&[1], &[7], &[1021], &[3, 5], &[17, 31], &[2, 3, 5, 7], &[5, 1, 13, 4], &[64, 129]];
