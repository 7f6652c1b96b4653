//! Synthetic microscopy data for the Richardson-Lucy tests and timings: Gaussian PSFs, specimens
//! of beads and blobs, Poisson-noisy observations, and their error measures.

use lucent::restoration::{cpu, RlBoundary};
use ndarray::{ArrayD, IxDyn};
use rand::Rng;

pub fn flat(x: &ArrayD<f32>) -> Vec<f32> {
    x.iter().copied().collect()
}

pub fn flat64(x: &ArrayD<f64>) -> Vec<f64> {
    x.iter().copied().collect()
}

/// A normalised Gaussian PSF of `sigma` per axis on `dims`, centred as scipy centres 'same'.
pub fn gaussian(dims: &[usize], sigma: &[f64]) -> ArrayD<f32> {
    let g = ArrayD::from_shape_fn(IxDyn(dims), |i| {
        let r2: f64 = (0..dims.len()).map(|d| ((i[d] as f64 - ((dims[d] - 1) / 2) as f64) / sigma[d]).powi(2)).sum();
        (-r2 / 2.0).exp()
    });
    let s = g.sum();
    g.mapv(|v| (v / s) as f32)
}

/// The PSF extent for a Gaussian of `sigma` cut at 3 sigma: 2·ceil(3σ) + 1.
pub fn extent(sigma: f64) -> usize {
    2 * (3.0 * sigma).ceil() as usize + 1
}

/// A specimen: a faint uneven background, point-like beads and larger blobs, at random places.
pub fn specimen(dims: &[usize], beads: usize, blobs: usize) -> ArrayD<f64> {
    let mut rng = rand::rng();
    let mut x = ArrayD::from_shape_fn(IxDyn(dims), |_| rng.random_range(4.0..6.0));
    for _ in 0..beads {
        let at: Vec<usize> = dims.iter().map(|&n| rng.random_range(0..n)).collect();
        x[IxDyn(&at)] += rng.random_range(200.0..1000.0);
    }
    for _ in 0..blobs {
        let c: Vec<f64> = dims.iter().map(|&n| rng.random_range(0.0..n as f64)).collect();
        let (s, a) = (rng.random_range(2.0..6.0), rng.random_range(20.0..100.0));
        x.indexed_iter_mut().for_each(|(i, v)| {
            let r2: f64 = (0..dims.len()).map(|d| (i[d] as f64 - c[d]).powi(2)).sum();
            *v += a * (-r2 / (2.0 * s * s)).exp();
        });
    }
    x
}

/// Poisson counts of mean `lambda` (Knuth below 30, a rounded normal above).
pub fn poisson(lambda: f64, rng: &mut impl Rng) -> f64 {
    if lambda < 30.0 {
        let (limit, mut k, mut p) = ((-lambda).exp(), 0.0, 1.0);
        loop {
            p *= rng.random::<f64>();
            if p <= limit {
                return k;
            }
            k += 1.0;
        }
    }
    let (u, v): (f64, f64) = (rng.random::<f64>().max(1e-300), rng.random());
    let normal = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
    (lambda + lambda.sqrt() * normal).round().max(0.0)
}

/// The specimen blurred by `psf` with Poisson noise: what a microscope records.
pub fn observed(truth: &ArrayD<f64>, psf: &ArrayD<f32>) -> ArrayD<f32> {
    let p = psf.mapv(|v| v as f64);
    let blurred = cpu::convolve(&truth.view(), &p.view(), RlBoundary::Zero).unwrap();
    let mut rng = rand::rng();
    blurred.mapv(|v| poisson(v.max(0.0), &mut rng) as f32)
}

/// Relative L2 and max |difference| / max |want|.
pub fn errors(got: &[f64], want: &[f64]) -> (f64, f64) {
    let num: f64 = got.iter().zip(want).map(|(g, w)| (g - w).powi(2)).sum();
    let den: f64 = want.iter().map(|w| w * w).sum();
    let max_diff = got.iter().zip(want).map(|(g, w)| (g - w).abs()).fold(0.0, f64::max);
    let max = want.iter().map(|w| w.abs()).fold(0.0, f64::max);
    ((num / den).sqrt(), max_diff / max)
}

pub fn errors32(got: &ArrayD<f32>, want: &ArrayD<f64>) -> (f64, f64) {
    assert!(got.iter().all(|v| v.is_finite()), "non-finite values in the result");
    errors(&got.iter().map(|&v| v as f64).collect::<Vec<_>>(), &flat64(want))
}

/// A grid of Gaussian PSFs of different widths, stacked as (GY, GX, ...psf).
pub fn psf_grid(grid: [usize; 2], dims: &[usize]) -> ArrayD<f32> {
    let mut rng = rand::rng();
    let psfs: Vec<ArrayD<f32>> = (0..grid[0] * grid[1])
        .map(|_| {
            let sigma: Vec<f64> = dims.iter().map(|&m| rng.random_range(0.15..0.3) * m as f64).collect();
            gaussian(dims, &sigma)
        })
        .collect();
    let views: Vec<_> = psfs.iter().map(|p| p.view()).collect();
    let stacked = ndarray::stack(ndarray::Axis(0), &views).unwrap();
    let shape: Vec<usize> = grid.iter().chain(dims).copied().collect();
    stacked.into_shape_with_order(IxDyn(&shape)).unwrap()
}
