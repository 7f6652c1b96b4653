//! A 4D (t, z, y, x) phantom for denoising: an intensity ramp along x, a step edge moving along
//! y at a set speed (voxels per frame), and a thin tube along z; and a smooth textured one.
//! Values are partial-volume averaged (the edge and the tube's wall ramp over one voxel).

use ndarray::Array4;

use super::Rng;

/// The moving-edge phantom of `shape` = (t, z, y, x), values in [0, 2.5].
pub fn moving_edge(shape: [usize; 4], speed: f64) -> Array4<f64> {
    Array4::from_shape_fn(shape, |(t, z, y, x)| moving_edge_at(shape, speed, [t, z, y, x]))
}

/// One sample of [`moving_edge`].
pub fn moving_edge_at(shape: [usize; 4], speed: f64, at: [usize; 4]) -> f64 {
    let [_, nz, ny, nx] = shape.map(|n| n as f64);
    let [t, z, y, x] = at.map(|i| i as f64);
    let ramp = 0.5 * x / nx.max(1.0);
    // The edge's plane leans a little in z and x; it moves along y.
    let edge_at = ny / 3.0 + speed * t + 0.15 * (z - nz / 2.0) + 0.1 * (x - nx / 2.0);
    let edge = (y - edge_at + 0.5).clamp(0.0, 1.0);
    let (ty, tx) = (2.0 * ny / 3.0, nx / 3.0);
    let r = ((y - ty).powi(2) + (x - tx).powi(2)).sqrt();
    let tube = (2.0 - r).clamp(0.0, 1.0);
    ramp + edge + tube
}

/// A smooth textured volume series: a sum of slowly drifting plane waves of several
/// frequencies and directions (deterministic from `seed`), values about in [−1, 1].
pub fn textured(shape: [usize; 4], seed: u64) -> Array4<f64> {
    let mut rng = Rng::new(seed);
    let waves: Vec<([f64; 4], f64, f64)> = (0..12)
        .map(|_| {
            let k = [0.1 * (rng.uniform() - 0.5), rng.uniform() - 0.5, rng.uniform() - 0.5, rng.uniform() - 0.5];
            let scale = 0.15 + 0.45 * rng.uniform();
            (k.map(|v| v * 2.0 * scale), 2.0 * std::f64::consts::PI * rng.uniform(), 0.25)
        })
        .collect();
    Array4::from_shape_fn(shape, |(t, z, y, x)| {
        let p = [t as f64, z as f64, y as f64, x as f64];
        waves.iter().map(|(k, phase, a)| a * (k.iter().zip(&p).map(|(k, p)| k * p).sum::<f64>() + phase).cos()).sum()
    })
}

/// `clean` plus Gaussian noise of standard deviation `sigma` (deterministic from `seed`).
pub fn noisy(clean: &Array4<f64>, sigma: f64, seed: u64) -> Array4<f64> {
    let mut rng = Rng::new(seed);
    clean.mapv(|v| v + sigma * rng.normal())
}

/// The peak signal-to-noise ratio of `x` against `truth`, in dB, the peak being truth's range.
pub fn psnr(x: &ndarray::ArrayViewD<f64>, truth: &ndarray::ArrayViewD<f64>) -> f64 {
    let (lo, hi) = truth.iter().fold((f64::MAX, f64::MIN), |(l, h), &v| (l.min(v), h.max(v)));
    let mse = x.iter().zip(truth).map(|(a, b)| (a - b) * (a - b)).sum::<f64>() / x.len() as f64;
    10.0 * ((hi - lo).powi(2) / mse).log10()
}
