//! The small transforms of block matching: the blocks' separable local transforms (bm4d's
//! `bior1.5` for hard thresholding, the orthonormal DCT for Wiener filtering), the orthonormal
//! Haar transform along a group, and the Kaiser windows of the aggregation.

use crate::error::{Error, Result};

/// A block's transform along one axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Local {
    /// The biorthogonal 1.5 wavelet, full decomposition (BM3D's and bm4d's tables for 4 and 8;
    /// sizes 1 and 2 are the identity and the 2-point Haar).
    Bior15,
    /// The orthonormal DCT-II.
    Dct,
}

/// The forward (rows are the basis) and inverse matrices of `kind` for `n` samples, row-major.
pub fn matrices(kind: Local, n: usize) -> Result<(Vec<f64>, Vec<f64>)> {
    let forward = match (kind, n) {
        (_, 1) => vec![1.0],
        (Local::Dct, _) => (0..n)
            .flat_map(|k| {
                let a = if k == 0 { (1.0 / n as f64).sqrt() } else { (2.0 / n as f64).sqrt() };
                (0..n).map(move |i| a * (std::f64::consts::PI * (2 * i + 1) as f64 * k as f64 / (2 * n) as f64).cos())
            })
            .collect(),
        (Local::Bior15, 2) => {
            let r = std::f64::consts::FRAC_1_SQRT_2;
            vec![r, r, r, -r]
        }
        (Local::Bior15, 4) => {
            let r = std::f64::consts::FRAC_1_SQRT_2;
            #[rustfmt::skip]
            let m = vec![0.5, 0.5, 0.5, 0.5, 0.5, 0.5, -0.5, -0.5, r, -r, 0.0, 0.0, 0.0, 0.0, r, -r];
            m
        }
        (Local::Bior15, 8) => {
            // BM3D's table (Dabov et al.'s MATLAB code, as bm4d 4.2.5 hard-codes it).
            let (a, b, c, d, e, f) = (0.343550200747110, 0.225454819240296, 0.461645582253923, 0.569359398342840, 0.402347308162280, 0.083506045090280);
            let r = std::f64::consts::FRAC_1_SQRT_2;
            #[rustfmt::skip]
            let m = vec![
                a, a, a, a, a, a, a, a,
                -b, -c, -c, -b, b, c, c, b,
                d, e, -e, -d, -f, f, -f, f,
                -f, f, -f, f, d, e, -e, -d,
                r, -r, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                0.0, 0.0, r, -r, 0.0, 0.0, 0.0, 0.0,
                0.0, 0.0, 0.0, 0.0, r, -r, 0.0, 0.0,
                0.0, 0.0, 0.0, 0.0, 0.0, 0.0, r, -r,
            ];
            m
        }
        (Local::Bior15, _) => return Err(Error::Invalid(format!("bior1.5 blocks of {n} samples: 1, 2, 4 or 8 (bm4d's tables)"))),
    };
    let inverse = invert(&forward, n);
    Ok((forward, inverse))
}

/// The inverse of an invertible n × n matrix by Gauss-Jordan elimination with partial pivoting.
fn invert(m: &[f64], n: usize) -> Vec<f64> {
    let mut a = m.to_vec();
    let mut inv: Vec<f64> = (0..n * n).map(|i| if i / n == i % n { 1.0 } else { 0.0 }).collect();
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| a[i * n + col].abs().total_cmp(&a[j * n + col].abs())).expect("a row");
        for k in 0..n {
            a.swap(col * n + k, pivot * n + k);
            inv.swap(col * n + k, pivot * n + k);
        }
        let p = a[col * n + col];
        for k in 0..n {
            a[col * n + k] /= p;
            inv[col * n + k] /= p;
        }
        for row in (0..n).filter(|&r| r != col) {
            let f = a[row * n + col];
            for k in 0..n {
                a[row * n + k] -= f * a[col * n + k];
                inv[row * n + k] -= f * inv[col * n + k];
            }
        }
    }
    inv
}

/// numpy's `kaiser(n, beta)`: I₀(β √(1 − (2i/(n − 1) − 1)²)) / I₀(β); one sample is 1.
pub fn kaiser(n: usize, beta: f64) -> Vec<f64> {
    if n == 1 {
        return vec![1.0];
    }
    (0..n)
        .map(|i| {
            let t = 2.0 * i as f64 / (n - 1) as f64 - 1.0;
            bessel_i0(beta * (1.0 - t * t).max(0.0).sqrt()) / bessel_i0(beta)
        })
        .collect()
}

/// The modified Bessel function I₀ by its power series (β is small here).
fn bessel_i0(x: f64) -> f64 {
    let (mut sum, mut term, q) = (1.0, 1.0, x * x / 4.0);
    for k in 1..200 {
        term *= q / (k * k) as f64;
        sum += term;
        if term < sum * 1e-17 {
            break;
        }
    }
    sum
}

/// The orthonormal Haar transform of `x` (a power of two long) in place, full decomposition:
/// averages first, then each level's differences.
pub fn haar(x: &mut [f64]) {
    let mut t = x.to_vec();
    let mut len = x.len();
    let r = std::f64::consts::FRAC_1_SQRT_2;
    while len > 1 {
        let h = len / 2;
        for i in 0..h {
            t[i] = (x[2 * i] + x[2 * i + 1]) * r;
            t[h + i] = (x[2 * i] - x[2 * i + 1]) * r;
        }
        x[..len].copy_from_slice(&t[..len]);
        len = h;
    }
}

/// The inverse of [`haar`].
pub fn haar_inverse(x: &mut [f64]) {
    let mut t = x.to_vec();
    let mut len = 2;
    let r = std::f64::consts::FRAC_1_SQRT_2;
    while len <= x.len() {
        let h = len / 2;
        for i in 0..h {
            t[2 * i] = (x[i] + x[h + i]) * r;
            t[2 * i + 1] = (x[i] - x[h + i]) * r;
        }
        x[..len].copy_from_slice(&t[..len]);
        len *= 2;
    }
}
