//! Richardson-Lucy with its arrays in several buffers (chunks along axis 0, the transform across
//! them on the device): a GPU whose buffers are capped at a few KiB holds images of a few
//! thousand elements in 3 to 12 chunks. Every boundary and option against the f64 reference, at
//! the tolerance of the whole-array tests; chunk boundaries fall at awkward rows (prime images,
//! batch axes with a shorter last chunk). Temporaries poisoned.

use crate::tests::common;
use common::*;

use lucent::gpu::GpuOptions;
use lucent::ops::deconvolve::{self, cpu, Init, RlBoundary, RlOptions, StopRule};
use lucent::Gpu;
use ndarray::{ArrayD, IxDyn};

/// Buffers of at most `CAP` bytes: the tests' arrays span several.
const CAP: u64 = 24 << 10;

fn chunky() -> &'static Gpu {
    static GPU: std::sync::OnceLock<Gpu> = std::sync::OnceLock::new();
    GPU.get_or_init(|| open(GpuOptions { poison: true, max_buffer_bytes: Some(CAP), ..GpuOptions::from_env().unwrap() }))
}

fn psf(dims: &[usize]) -> ArrayD<f32> {
    let sigma = 1.3;
    ArrayD::from_shape_fn(IxDyn(dims), |idx| {
        let r2: f64 = (0..dims.len()).map(|d| (idx[d] as f64 - (dims[d] - 1) as f64 / 2.0).powi(2)).sum();
        ((-r2 / (2.0 * sigma * sigma)).exp() * (1.0 + 0.3 * ((idx[0] * 7 + 3) % 5) as f64 / 5.0)) as f32
    })
}

/// The chunked GPU run against the reference; returns the chunk count.
fn check(dims: &[usize], pdims: &[usize], iterations: usize, opts: RlOptions) -> usize {
    let x = arr(dims, random_positive(dims.iter().product()));
    let p = psf(pdims);
    let got = deconvolve::richardson_lucy(chunky(), &x.view(), &p.view(), iterations, &opts).unwrap();
    let want = cpu::richardson_lucy(&x.view(), &p.view(), iterations, &opts).unwrap();
    assert_eq!(got.estimate.shape(), dims);
    assert_eq!(got.report.iterations, want.iterations, "{dims:?} {opts:?}: iterations done");
    let err = rel_l2(&got.estimate.iter().copied().collect::<Vec<_>>(), &want.estimate.iter().copied().collect::<Vec<_>>());
    let tol = 2e-6 * (4.0 * want.iterations as f64).sqrt();
    let chunks = got.report.chunks;
    assert!(err <= tol, "{dims:?} psf {pdims:?} {opts:?} in {chunks} chunks: relative L2 {err:e} > {tol:e}");
    assert!(chunks > 1, "{dims:?}: expected several chunks under a {CAP}-byte cap");
    chunks
}

#[test]
fn every_boundary_in_chunks_3d() {
    for boundary in [RlBoundary::Zero, RlBoundary::Extended] {
        check(&[37, 23, 19], &[5, 4, 3], 4, RlOptions { boundary, ..Default::default() });
    }
    // Periodic keeps the image's own length: the chunk count divides it.
    let chunks = check(&[36, 21, 17], &[5, 3, 3], 4, RlOptions { boundary: RlBoundary::Periodic, ..Default::default() });
    assert_eq!(36 % chunks, 0);
}

#[test]
fn options_in_chunks() {
    let dims = [31, 20, 17];
    check(&dims, &[3, 5, 3], 6, RlOptions { tv: Some(0.02), ..Default::default() });
    check(&dims, &[3, 5, 3], 6, RlOptions { tv: Some(0.02), boundary: RlBoundary::Extended, ..Default::default() });
    check(&dims, &[3, 5, 3], 6, RlOptions { accelerate: true, ..Default::default() });
    check(&dims, &[3, 5, 3], 5, RlOptions { init: Init::Constant(0.5), boundary: RlBoundary::Extended, ..Default::default() });
    check(&dims, &[3, 5, 3], 5, RlOptions { init: Init::Constant(0.5), filter_epsilon: Some(1e-3), ..Default::default() });
    check(&dims, &[3, 5, 3], 40, RlOptions { stop: Some(StopRule { tolerance: 3e-3, every: 2 }), ..Default::default() });
}

#[test]
fn two_d_and_batches_in_chunks() {
    check(&[211, 37], &[7, 5], 4, RlOptions::default());
    check(&[301, 41], &[9, 2], 4, RlOptions { boundary: RlBoundary::Extended, ..Default::default() });
    // A batch axis: chunks of whole images, the last one shorter.
    check(&[11, 29, 23], &[3, 4], 4, RlOptions::default());
    check(&[7, 31, 19], &[5, 3], 4, RlOptions { tv: Some(0.05), boundary: RlBoundary::Extended, ..Default::default() });
}

/// The chunked run equals the whole-array run on an uncapped GPU (both within f32 rounding of
/// the same arithmetic, different transforms).
#[test]
fn chunked_equals_whole() {
    let x = arr(&[45, 26, 22], random_positive(45 * 26 * 22));
    let p = psf(&[7, 5, 5]);
    let opts = RlOptions { tv: Some(0.01), accelerate: true, ..Default::default() };
    let whole = deconvolve::richardson_lucy(poisoned_gpu(), &x.view(), &p.view(), 8, &opts).unwrap();
    let chunked = deconvolve::richardson_lucy(chunky(), &x.view(), &p.view(), 8, &opts).unwrap();
    assert_eq!(whole.report.chunks, 1);
    assert!(chunked.report.chunks > 1);
    let diff = whole.estimate.iter().zip(chunked.estimate.iter()).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
    let scale = whole.estimate.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    assert!(diff <= 2e-5 * scale, "chunked vs whole: max difference {diff:e} (scale {scale})");
}
