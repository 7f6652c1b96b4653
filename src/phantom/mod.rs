//! Synthetic test objects with known truth, for tests, benchmarks and `lucent demo`: a
//! deterministic random generator, an AO-OCT retina imaged under eye motion ([`aooct`]) and
//! Toft's modified Shepp-Logan phantom with its exact sinogram ([`shepp_logan`]), 4D series
//! for denoising ([`dynamic`]); the blurred, noisy widefield specimen is
//! `restoration::specimen` (it needs the PSF model and the reference convolution).

pub mod aooct;
pub mod dynamic;
pub mod shepp_logan;
pub mod shepp_logan3d;

use std::f64::consts::PI;

/// xorshift64* with uniform and Poisson draws: deterministic on every platform.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A Poisson draw of mean `lambda`: multiplication of uniforms below 10, else Hörmann's
    /// transformed rejection (PTRS, 1993), as numpy does.
    pub fn poisson(&mut self, lambda: f64) -> u64 {
        if lambda < 10.0 {
            let limit = (-lambda).exp();
            let mut k = 0;
            let mut product = self.uniform();
            while product > limit {
                k += 1;
                product *= self.uniform();
            }
            return k;
        }
        let slam = lambda.sqrt();
        let b = 0.931 + 2.53 * slam;
        let a = -0.059 + 0.02483 * b;
        let inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
        let vr = 0.9277 - 3.6224 / (b - 2.0);
        loop {
            let u = self.uniform() - 0.5;
            let v = self.uniform();
            let us = 0.5 - u.abs();
            let k = ((2.0 * a / us + b) * u + lambda + 0.43).floor();
            if us >= 0.07 && v <= vr {
                return k as u64;
            }
            if k < 0.0 || (us < 0.013 && v > us) {
                continue;
            }
            if v.ln() + inv_alpha.ln() - (a / (us * us) + b).ln() <= -lambda + k * lambda.ln() - ln_gamma(k + 1.0) {
                return k as u64;
            }
        }
    }
}

/// ln Γ(x) for x ≥ 1 (Stirling's series after shifting x to 7 or more, as numpy's loggam).
fn ln_gamma(x: f64) -> f64 {
    const A: [f64; 10] = [
        8.333333333333333e-02,
        -2.777777777777778e-03,
        7.936507936507937e-04,
        -5.952380952380952e-04,
        8.417508417508418e-04,
        -1.917526917526918e-03,
        6.410_256_410_256_41e-3,
        -2.955065359477124e-02,
        1.796443723688307e-01,
        -1.39243221690590e+00,
    ];
    if x == 1.0 || x == 2.0 {
        return 0.0;
    }
    let shift = if x < 7.0 { (7.0 - x).floor() } else { 0.0 };
    let x0 = x + shift;
    let x2 = 1.0 / (x0 * x0);
    let series = A.iter().rev().fold(0.0, |acc, &a| acc * x2 + a);
    let mut gl = series / x0 + 0.5 * (2.0 * PI).ln() + (x0 - 0.5) * x0.ln() - x0;
    let mut y = x0;
    for _ in 0..shift as usize {
        y -= 1.0;
        gl -= y.ln();
    }
    gl
}

impl Rng {
    /// A standard normal draw (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        let u = 1.0 - self.uniform();
        (-2.0 * u.ln()).sqrt() * (2.0 * PI * self.uniform()).cos()
    }

    /// A gamma draw of `shape` k > 0 and `scale` θ > 0 (mean kθ, numpy's `gamma(shape, scale)`):
    /// Marsaglia and Tsang's (2000) squeeze for k ≥ 1, with U^(1/k) for k < 1.
    pub fn gamma(&mut self, shape: f64, scale: f64) -> f64 {
        if shape < 1.0 {
            let u = 1.0 - self.uniform();
            return self.gamma(shape + 1.0, scale) * u.powf(1.0 / shape);
        }
        let d = shape - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        loop {
            let x = self.normal();
            let v = (1.0 + c * x).powi(3);
            if v <= 0.0 {
                continue;
            }
            let u = 1.0 - self.uniform();
            if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
                return d * v * scale;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gamma_draws_have_the_right_mean_and_variance() {
        let mut rng = Rng::new(11);
        for (k, theta) in [(0.4, 2.0), (1.0, 1.0), (3.5, 0.5), (1e4, 3e-4)] {
            let n = 40_000;
            let draws: Vec<f64> = (0..n).map(|_| rng.gamma(k, theta)).collect();
            let mean = draws.iter().sum::<f64>() / n as f64;
            let var = draws.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / n as f64;
            // Four standard errors of the mean (kθ² / n) and about six of the variance.
            assert!((mean - k * theta).abs() < 4.0 * (k * theta * theta / n as f64).sqrt(), "k {k}: mean {mean}");
            assert!((var / (k * theta * theta) - 1.0).abs() < 0.06, "k {k}: variance {var}");
            assert!(draws.iter().all(|&d| d > 0.0));
        }
    }

    #[test]
    fn poisson_draws_have_the_right_mean_and_variance() {
        let mut rng = Rng::new(7);
        for lambda in [0.0, 0.3, 4.0, 9.9, 10.0, 37.5, 1000.0] {
            let n = 20_000;
            let draws: Vec<f64> = (0..n).map(|_| rng.poisson(lambda) as f64).collect();
            let mean = draws.iter().sum::<f64>() / n as f64;
            let var = draws.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / n as f64;
            // Five standard errors of the mean (sqrt(λ/n)) and of the variance (≈ λ·sqrt(2/n)).
            assert!((mean - lambda).abs() <= 5.0 * (lambda / n as f64).sqrt() + 1e-12, "λ {lambda}: mean {mean}");
            assert!((var - lambda).abs() <= 5.0 * lambda * (2.0 / n as f64).sqrt() + 5.0 * (lambda / n as f64).sqrt() + 1e-12, "λ {lambda}: variance {var}");
        }
    }

    #[test]
    fn ln_gamma_matches_factorials() {
        let mut f = 1.0f64;
        for k in 1..30 {
            f *= k as f64;
            assert!((ln_gamma(k as f64 + 1.0) - f.ln()).abs() < 1e-10, "{k}!");
        }
    }
}
