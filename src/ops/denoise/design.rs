//! Spatial filter design by weighted least squares (Knutsson): the n^d-tap kernel f whose
//! frequency response F(u) = Σ_x f(x) e^(−iu·x) is closest to an ideal response H(u) in
//! Σ_u W(u) |H(u) − F(u)|² over a grid of m^d frequencies in [−π, π)^d.
//!
//! The weight is separable, W(u) = Π_a w(u_a) with w(v) = cos²(v/2) + 1/8 (the error is
//! weighted towards low frequencies, where images keep their energy, never to zero). Then the
//! normal equations' matrix Σ_u W(u) e^(iu·(x−y)) is the Kronecker product of one n×n Toeplitz
//! matrix per axis, so the solution is the right-hand side b(x) = Σ_u W(u) H(u) e^(iu·x) (one
//! inverse FFT) with that small matrix's inverse applied along every axis: exact, and cheap
//! even for 11⁴ taps. The DC response is held exact (a Lagrange multiplier on Σ f = H(0)), so
//! filters that should ignore constants do, and the reconstruction of constant data is exact.

use ndarray::{ArrayD, Axis, IxDyn};
use num_complex::Complex64;

use crate::fft::{cpu::c2c, Norm};

/// The per-axis frequency weight w(v).
fn weight(v: f64) -> f64 {
    (v / 2.0).cos().powi(2) + 0.125
}

/// The angular frequency of bin k of m, in [−π, π).
pub fn frequency(k: usize, m: usize) -> f64 {
    let k = if 2 * k >= m { k as f64 - m as f64 } else { k as f64 };
    2.0 * std::f64::consts::PI * k / m as f64
}

/// Frequency samples per axis: 4 per tap, fewer in 4D so the grid stays near 2^20 points (at
/// least 2 per tap, which keeps the normal matrix far from singular).
fn grid_len(taps: usize, d: usize) -> usize {
    let mut m = 4 * taps;
    while m > 2 * taps && m.pow(d as u32) > 1 << 20 {
        m -= 2;
    }
    m
}

/// The convolution kernel of `taps` (odd) samples per axis in `d` dimensions closest to the
/// ideal response `h(u)` (Hermitian, so the kernel is real), centred at taps/2 on every axis.
pub fn least_squares(h: &dyn Fn(&[f64]) -> Complex64, taps: usize, d: usize) -> ArrayD<f64> {
    let m = grid_len(taps, d);
    let r = (taps / 2) as i64;
    let target = ArrayD::from_shape_fn(IxDyn(&vec![m; d]), |k| {
        let u: Vec<f64> = (0..d).map(|a| frequency(k[a], m)).collect();
        h(&u) * u.iter().map(|&v| weight(v)).product::<f64>()
    });
    let axes: Vec<usize> = (0..d).collect();
    // Backward inverse: (1/m^d) Σ_u W H e^(iu·x), the normal equations divided by m^d.
    let b = c2c(&target, &axes, true, Norm::Backward);
    let mut f = ArrayD::from_shape_fn(IxDyn(&vec![taps; d]), |t| {
        let at: Vec<usize> = (0..d).map(|a| (t[a] as i64 - r).rem_euclid(m as i64) as usize).collect();
        b[IxDyn(&at)].re
    });
    let inverse = toeplitz_inverse(taps, m);
    let solve = |f: &mut ArrayD<f64>| {
        for axis in 0..d {
            for mut lane in f.lanes_mut(Axis(axis)) {
                let v: Vec<f64> = lane.to_vec();
                for (i, o) in lane.iter_mut().enumerate() {
                    *o = (0..taps).map(|j| inverse[i][j] * v[j]).sum();
                }
            }
        }
    };
    solve(&mut f);
    // Minimising under Σ f = H(0): f − λ K⁻¹1 with λ that meets the constraint.
    let mut g = ArrayD::from_elem(f.raw_dim(), 1.0);
    solve(&mut g);
    let lambda = (f.sum() - h(&vec![0.0; d]).re) / g.sum();
    f.scaled_add(-lambda, &g);
    f
}

/// The inverse of K_ij = (1/m) Σ_k w(v_k) cos(v_k (i − j)), i, j < n (K is symmetric positive
/// definite, w > 0 everywhere).
fn toeplitz_inverse(n: usize, m: usize) -> Vec<Vec<f64>> {
    let entry = |lag: i64| {
        (0..m)
            .map(|k| {
                let v = frequency(k, m);
                weight(v) * (v * lag as f64).cos()
            })
            .sum::<f64>()
            / m as f64
    };
    invert((0..n).map(|i| (0..n).map(|j| entry(i as i64 - j as i64)).collect()).collect())
}

/// The inverse of a small well-conditioned square matrix, by Gauss-Jordan elimination with
/// partial pivoting in f64.
pub fn invert(a: Vec<Vec<f64>>) -> Vec<Vec<f64>> {
    let n = a.len();
    let mut g: Vec<Vec<f64>> =
        a.into_iter().enumerate().map(|(i, row)| row.into_iter().chain((0..n).map(|j| if i == j { 1.0 } else { 0.0 })).collect()).collect();
    for c in 0..n {
        let pivot = (c..n).max_by(|&a, &b| g[a][c].abs().total_cmp(&g[b][c].abs())).expect("rows");
        g.swap(c, pivot);
        let p = g[c][c];
        g[c].iter_mut().for_each(|v| *v /= p);
        for r in 0..n {
            if r != c {
                let f = g[r][c];
                let row = g[c].clone();
                g[r].iter_mut().zip(row).for_each(|(v, w)| *v -= f * w);
            }
        }
    }
    g.into_iter().map(|row| row[n..].to_vec()).collect()
}

/// The frequency response F(u) of a centred convolution kernel.
#[cfg(test)]
pub fn response(f: &ArrayD<f64>, u: &[f64]) -> Complex64 {
    let r: Vec<i64> = f.shape().iter().map(|&n| (n / 2) as i64).collect();
    f.indexed_iter()
        .map(|(t, &v)| {
            let phase: f64 = u.iter().enumerate().map(|(a, w)| w * (t[a] as i64 - r[a]) as f64).sum();
            Complex64::from_polar(v, -phase)
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_response_the_taps_can_hold_is_designed_exactly() {
        // H = 0.5 + 0.25 cos(u_0) + 0.3 i sin(u_1) · cos(u_2): a 3-tap kernel holds it, so
        // every larger design finds it again (weights do not matter when the error can be 0).
        let h = |u: &[f64]| Complex64::new(0.5 + 0.25 * u[0].cos(), 0.0) + Complex64::new(0.0, -0.3 * u[1].sin() * u[2].cos());
        for taps in [3, 5, 7] {
            let f = least_squares(&h, taps, 3);
            for u in [[0.3, -1.2, 2.0], [3.0, 0.1, -0.7], [-2.2, 2.9, 1.1]] {
                let e = (response(&f, &u) - h(&u)).norm();
                assert!(e < 1e-12, "taps {taps} at {u:?}: off by {e}");
            }
        }
    }

    #[test]
    fn designs_approach_a_smooth_ideal_response_as_taps_grow() {
        // A Gaussian lowpass (not representable with finite taps): the weighted error falls.
        let h = |u: &[f64]| Complex64::new((-u.iter().map(|v| v * v).sum::<f64>() / 1.2).exp(), 0.0);
        let error = |taps: usize| {
            let f = least_squares(&h, taps, 2);
            let m = 64;
            let mut e = 0.0;
            for k0 in 0..m {
                for k1 in 0..m {
                    let u = [frequency(k0, m), frequency(k1, m)];
                    e += weight(u[0]) * weight(u[1]) * (response(&f, &u) - h(&u)).norm_sqr();
                }
            }
            (e / (m * m) as f64).sqrt()
        };
        let (e3, e7, e11) = (error(3), error(7), error(11));
        assert!((least_squares(&h, 5, 2).sum() - 1.0).abs() < 1e-14, "the DC response is exact");
        assert!(e7 < 0.2 * e3 && e11 < 0.2 * e7 && e11 < 1e-3, "{e3} {e7} {e11}");
    }
}
