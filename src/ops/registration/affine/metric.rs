//! The metrics as SimpleITK's v4 metrics name and define them, their values and analytic
//! gradients over the transform's parameters, summed in f64 on the host from a level's samples:
//! - mean squares: mean (m − f)²;
//! - correlation: −(Σ f̃ m̃)² / (Σ f̃² Σ m̃²), f̃ and m̃ less their means over the overlap;
//! - Mattes mutual information: −MI of the joint histogram with a zero-order Parzen window on the
//!   fixed image and a cubic B-spline one on the moving image (ITK's bins: two bins of padding at
//!   each end, ranges from each level's images).

use rayon::prelude::*;

use super::level::{Grid, Samples};
use super::transform::{jacobian, Params};
use super::Metric;

/// A metric's value, its gradient over the parameters and how many points counted; with the
/// Gauss-Newton normal equations (JᵀJ, Jᵀr) for mean squares when asked.
pub(super) struct Evaluation {
    pub value: f64,
    pub gradient: Vec<f64>,
    pub count: usize,
    pub normal: Option<(Vec<f64>, Vec<f64>)>,
}

/// The metric at `s`, its gradient and (mean squares, `normal`) the normal equations.
pub(super) fn evaluate(metric: Metric, level: &Grid, params: &Params, s: &Samples, normal: bool) -> Evaluation {
    let n = params.v.len();
    match metric {
        Metric::MeanSquares => {
            let width = 2 + n + if normal { n * n } else { 0 };
            let sums = accumulate(level, params, s, &s.inside, width, |acc, f, m, a| {
                let r = m - f;
                acc[0] += 1.0;
                acc[1] += r * r;
                for u in 0..n {
                    acc[2 + u] += a[u] * r;
                    if normal {
                        for v in 0..n {
                            acc[2 + n + u * n + v] += a[u] * a[v];
                        }
                    }
                }
            });
            let count = sums[0].max(1.0);
            let jr = sums[2..2 + n].to_vec();
            Evaluation {
                value: sums[1] / count,
                gradient: jr.iter().map(|x| 2.0 * x / count).collect(),
                count: sums[0] as usize,
                normal: normal.then(|| (sums[2 + n..].to_vec(), jr)),
            }
        }
        Metric::Correlation => {
            // Σ1, Σf, Σm, Σf², Σm², Σfm, then Σ f a, Σ m a, Σ a.
            let sums = accumulate(level, params, s, &s.inside, 6 + 3 * n, |acc, f, m, a| {
                for (x, y) in acc[..6].iter_mut().zip([1.0, f, m, f * f, m * m, f * m]) {
                    *x += y;
                }
                for u in 0..n {
                    acc[6 + u] += f * a[u];
                    acc[6 + n + u] += m * a[u];
                    acc[6 + 2 * n + u] += a[u];
                }
            });
            let c = sums[0].max(1.0);
            let (sff, smm, sfm) = (sums[3] - sums[1] * sums[1] / c, sums[4] - sums[2] * sums[2] / c, sums[5] - sums[1] * sums[2] / c);
            let denominator = sff * smm;
            if denominator.is_nan() || denominator <= 0.0 {
                return Evaluation { value: 0.0, gradient: vec![0.0; n], count: sums[0] as usize, normal: None };
            }
            let gradient = (0..n)
                .map(|u| {
                    let fa = sums[6 + u] - sums[1] / c * sums[6 + 2 * n + u];
                    let ma = sums[6 + n + u] - sums[2] / c * sums[6 + 2 * n + u];
                    -2.0 * sfm / denominator * (fa - sfm / smm * ma)
                })
                .collect();
            Evaluation { value: -sfm * sfm / denominator, gradient, count: sums[0] as usize, normal: None }
        }
        Metric::MattesMutualInformation { bins } => {
            let h = Histogram::new(bins, level);
            let joint = h.joint(level, s, &s.inside);
            let count = joint.iter().sum::<f64>();
            let value = h.value(&joint);
            // ∂(−MI)/∂v = (1 / (N bin)) Σ_x Σ_κ β3'(κ − η_x) log(p(ι_x, κ) / p_m(κ)) ∂m_x/∂v.
            let marginal = h.moving_marginal(&joint);
            let log_ratio: Vec<f64> =
                joint.iter().enumerate().map(|(k, &p)| if p > 0.0 && marginal[k % bins] > 0.0 { (p / marginal[k % bins]).ln() } else { 0.0 }).collect();
            let sums = accumulate(level, params, s, &s.inside, n, |acc, f, m, a| {
                let (i, eta, first) = (h.fixed_bin(f), h.moving_term(m), h.moving_first(m));
                let mut w = 0.0;
                for k in first..first + 4 {
                    w += cubic_derivative(k as f64 - eta) * log_ratio[i * bins + k];
                }
                for u in 0..n {
                    acc[u] += w * a[u];
                }
            });
            let scale = 1.0 / (count.max(1.0) * h.moving_bin);
            Evaluation { value, gradient: sums.iter().map(|x| x * scale).collect(), count: count as usize, normal: None }
        }
    }
}

/// The metric's values at two sets of samples over the points both have (a step is compared
/// so: over each one's own overlap, a step that slid the image off its worst points would
/// count as progress).
pub(super) fn common_values(metric: Metric, level: &Grid, params: [&Params; 2], s: [&Samples; 2]) -> (f64, f64) {
    let both: Vec<bool> = s[0].inside.iter().zip(&s[1].inside).map(|(a, b)| *a && *b).collect();
    let value = |p: &Params, x: &Samples| -> f64 {
        match metric {
            Metric::MeanSquares => {
                let sums = accumulate(level, p, x, &both, 2, |acc, f, m, _| {
                    acc[0] += 1.0;
                    acc[1] += (m - f) * (m - f);
                });
                sums[1] / sums[0].max(1.0)
            }
            Metric::Correlation => {
                let sums = accumulate(level, p, x, &both, 6, |acc, f, m, _| {
                    for (x, y) in acc.iter_mut().zip([1.0, f, m, f * f, m * m, f * m]) {
                        *x += y;
                    }
                });
                let c = sums[0].max(1.0);
                let (sff, smm, sfm) = (sums[3] - sums[1] * sums[1] / c, sums[4] - sums[2] * sums[2] / c, sums[5] - sums[1] * sums[2] / c);
                if sff * smm > 0.0 {
                    -sfm * sfm / (sff * smm)
                } else {
                    0.0
                }
            }
            Metric::MattesMutualInformation { bins } => {
                let h = Histogram::new(bins, level);
                h.value(&h.joint(level, x, &both))
            }
        }
    };
    (value(params[0], s[0]), value(params[1], s[1]))
}

/// Σ over the points where `inside` of `add(acc, f, m, ∂m/∂v)`, `width` f64 sums, by every core.
fn accumulate(level: &Grid, params: &Params, s: &Samples, inside: &[bool], width: usize, add: impl Fn(&mut [f64], f64, f64, &[f64]) + Sync) -> Vec<f64> {
    let (d, n) = (level.dims.len(), params.v.len());
    let derivatives = params.matrix_derivatives();
    let rows = level.dims[d - 1];
    let lines = level.fixed.len() / rows;
    (0..lines)
        .into_par_iter()
        .fold(
            || (vec![0.0; width], vec![vec![0.0; d]; n], vec![0.0; n], vec![0.0; d]),
            |(mut acc, mut jac, mut a, mut p), line| {
                // The line's point: every axis but the last from `line`.
                let mut rest = line;
                for axis in (0..d - 1).rev() {
                    p[axis] = (rest % level.dims[axis]) as f64;
                    rest /= level.dims[axis];
                }
                for j in 0..rows {
                    let at = line * rows + j;
                    if !inside[at] {
                        continue;
                    }
                    p[d - 1] = j as f64;
                    jacobian(&p, &params.centre, level.f, &derivatives, &mut jac);
                    for (u, x) in a.iter_mut().enumerate() {
                        *x = (0..d).map(|i| s.gradients[i][at] as f64 * jac[u][i]).sum();
                    }
                    add(&mut acc, level.fixed[at] as f64, s.values[at] as f64, &a);
                }
                (acc, jac, a, p)
            },
        )
        .map(|(acc, ..)| acc)
        .reduce(
            || vec![0.0; width],
            |mut x, y| {
                x.iter_mut().zip(&y).for_each(|(a, b)| *a += b);
                x
            },
        )
}

/// ITK's Mattes histogram: `bins` bins, two of padding at each end.
struct Histogram {
    bins: usize,
    fixed_min: f64,
    fixed_bin: f64,
    moving_min: f64,
    moving_bin: f64,
}

impl Histogram {
    fn new(bins: usize, level: &Grid) -> Histogram {
        let (lo, hi) = level
            .fixed
            .iter()
            .zip(&level.fixed_mask)
            .filter(|(_, &m)| m)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (&x, _)| (lo.min(x as f64), hi.max(x as f64)));
        let width = (bins - 4) as f64;
        let (mlo, mhi) = level.moving_range;
        Histogram { bins, fixed_min: lo, fixed_bin: ((hi - lo) / width).max(1e-30), moving_min: mlo, moving_bin: ((mhi - mlo) / width).max(1e-30) }
    }

    fn fixed_bin(&self, f: f64) -> usize {
        (((f - self.fixed_min) / self.fixed_bin + 2.0).floor() as isize).clamp(2, self.bins as isize - 3) as usize
    }

    /// The moving value in bin units (the Parzen window's centre).
    fn moving_term(&self, m: f64) -> f64 {
        (m - self.moving_min) / self.moving_bin + 2.0
    }

    /// The first of the four bins the cubic window of `m` reaches.
    fn moving_first(&self, m: f64) -> usize {
        ((self.moving_term(m).floor() as isize).clamp(2, self.bins as isize - 3) - 1) as usize
    }

    /// The joint histogram (fixed bin major) over the points where `inside`.
    fn joint(&self, level: &Grid, s: &Samples, inside: &[bool]) -> Vec<f64> {
        let b = self.bins;
        (0..s.values.len())
            .into_par_iter()
            .filter(|&at| inside[at])
            .fold(
                || vec![0.0; b * b],
                |mut h, at| {
                    let m = s.values[at] as f64;
                    let (row, eta, first) = (self.fixed_bin(level.fixed[at] as f64) * b, self.moving_term(m), self.moving_first(m));
                    for k in first..first + 4 {
                        h[row + k] += cubic(k as f64 - eta);
                    }
                    h
                },
            )
            .reduce(
                || vec![0.0; b * b],
                |mut x, y| {
                    x.iter_mut().zip(&y).for_each(|(a, c)| *a += c);
                    x
                },
            )
    }

    fn moving_marginal(&self, joint: &[f64]) -> Vec<f64> {
        let b = self.bins;
        (0..b).map(|k| (0..b).map(|i| joint[i * b + k]).sum()).collect()
    }

    /// −MI of a joint histogram.
    fn value(&self, joint: &[f64]) -> f64 {
        let b = self.bins;
        let total = joint.iter().sum::<f64>();
        if total <= 0.0 {
            return 0.0;
        }
        let fixed: Vec<f64> = (0..b).map(|i| joint[i * b..(i + 1) * b].iter().sum::<f64>() / total).collect();
        let moving: Vec<f64> = self.moving_marginal(joint).iter().map(|x| x / total).collect();
        let mut mi = 0.0;
        for i in 0..b {
            for k in 0..b {
                let p = joint[i * b + k] / total;
                if p > 1e-16 && fixed[i] > 0.0 && moving[k] > 0.0 {
                    mi += p * (p / (fixed[i] * moving[k])).ln();
                }
            }
        }
        -mi
    }
}

/// The cubic B-spline β3 and its derivative.
fn cubic(x: f64) -> f64 {
    let a = x.abs();
    if a < 1.0 {
        2.0 / 3.0 - a * a + a * a * a / 2.0
    } else if a < 2.0 {
        (2.0 - a).powi(3) / 6.0
    } else {
        0.0
    }
}

fn cubic_derivative(x: f64) -> f64 {
    let a = x.abs();
    let s = x.signum();
    if a < 1.0 {
        s * (-2.0 * a + 1.5 * a * a)
    } else if a < 2.0 {
        -s * (2.0 - a).powi(2) / 2.0
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::registration::affine::TransformKind;

    /// A smooth moving image m(q) and its gradient, in level units.
    fn moving(q: &[f64]) -> (f64, Vec<f64>) {
        let w = [0.31, -0.17, 0.23];
        let phase: f64 = q.iter().zip(&w).map(|(x, w)| x * w).sum();
        let u: f64 = q.iter().zip(&[0.13, 0.29, -0.11]).map(|(x, w)| x * w).sum();
        let value = phase.sin() + 0.5 * (u).cos();
        let gradient = (0..q.len()).map(|i| w[i] * phase.cos() - 0.5 * [0.13, 0.29, -0.11][i] * u.sin()).collect();
        (value, gradient)
    }

    fn samples(grid: &Grid, params: &Params, inside: &[bool]) -> Samples {
        let map = params.map_at(grid.f);
        let d = grid.dims.len();
        let mut values = Vec::new();
        let mut gradients = vec![Vec::new(); d];
        for at in 0..grid.fixed.len() {
            let mut p = vec![0.0; d];
            let mut rest = at;
            for axis in (0..d).rev() {
                p[axis] = (rest % grid.dims[axis]) as f64;
                rest /= grid.dims[axis];
            }
            let q: Vec<f64> = (0..d).map(|i| (0..d).map(|j| map.matrix[i][j] * p[j]).sum::<f64>() + map.offset[i]).collect();
            let (v, g) = moving(&q);
            values.push(v as f32);
            g.iter().enumerate().for_each(|(i, x)| gradients[i].push(*x as f32));
        }
        Samples { values, gradients, inside: inside.to_vec() }
    }

    #[test]
    fn analytic_gradients_match_finite_differences() {
        // f32 samples limit the differences' precision: steps of 1e-3 and a tolerance of 2%
        // of the gradient's largest component (a sign or Jacobian error is off by 100% or more).
        for (dims, kind, v) in [
            (vec![23usize, 29], TransformKind::Similarity, vec![0.7, -1.2, 0.1, 1.05]),
            (vec![23, 29], TransformKind::Affine, vec![0.7, -1.2, 1.02, 0.05, -0.03, 0.97]),
            (vec![9, 11, 13], TransformKind::Rigid, vec![0.4, 0.3, -0.6, 0.05, -0.08, 0.12]),
            (vec![9, 11, 13], TransformKind::Affine, vec![0.4, 0.3, -0.6, 1.0, 0.02, 0.0, -0.03, 0.98, 0.01, 0.0, 0.04, 1.03]),
        ] {
            let f = 2.0;
            let n: usize = dims.iter().product();
            let centre: Vec<f64> = dims.iter().map(|&k| (k as f64 * f - 1.0) / 2.0).collect();
            let params = Params { kind, centre, v };
            // The fixed image: the moving one at the identity, changed in intensity and noisy.
            let identity = Params { v: (0..params.v.len()).map(|k| if k < dims.len() { 0.0 } else { params.v[k].round() }).collect(), ..params.clone() };
            let mut grid = Grid { f, dims: dims.clone(), fixed: vec![0.0; n], fixed_mask: vec![true; n], moving_range: (-1.5, 1.5) };
            let base = samples(&grid, &identity, &vec![true; n]);
            grid.fixed = base.values.iter().enumerate().map(|(k, x)| 2.0 * x + 0.3 * ((k * 7919 % 101) as f32 / 101.0 - 0.5) + 1.0).collect();
            let inside: Vec<bool> = (0..n).map(|k| k % 13 != 5).collect();
            for metric in [Metric::MeanSquares, Metric::Correlation, Metric::MattesMutualInformation { bins: 20 }] {
                let e = evaluate(metric, &grid, &params, &samples(&grid, &params, &inside), false);
                let largest = e.gradient.iter().fold(0.0f64, |m, x| m.max(x.abs()));
                assert!(largest > 0.0, "{metric:?}");
                for k in 0..params.v.len() {
                    let h = 1e-3 * if k < dims.len() { 1.0 } else { 0.1 };
                    let at = |delta: f64| {
                        let mut p = params.clone();
                        p.v[k] += delta;
                        evaluate(metric, &grid, &p, &samples(&grid, &p, &inside), false).value
                    };
                    let numeric = (at(h) - at(-h)) / (2.0 * h);
                    assert!((numeric - e.gradient[k]).abs() < 0.02 * largest, "{metric:?} {kind:?} {dims:?} parameter {k}: {numeric} vs {}", e.gradient[k]);
                }
            }
        }
    }
}
