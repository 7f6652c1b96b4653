//! The metrics as SimpleITK's v4 metrics name and define them, their values and analytic
//! gradients over the transform's parameters, summed in f64 on the host from a level's samples:
//! - mean squares: mean (m − f)²;
//! - correlation: −(Σ f̃ m̃)² / (Σ f̃² Σ m̃²), f̃ and m̃ less their means over the overlap;
//! - Mattes mutual information: −MI of the joint histogram with a zero-order Parzen window on the
//!   fixed image and a cubic B-spline one on the moving image (ITK's bins: two bins of padding at
//!   each end, ranges from each level's images).

use rayon::prelude::*;

use super::level::{Grid, HostSamples};
use super::transform::{jacobian, Params};
use super::Metric;
use crate::kernels::registration_sums::SumsMode;

/// A metric's value, its gradient over the parameters and how many points counted; with the
/// Gauss-Newton normal equations (JᵀJ, Jᵀr) for mean squares when asked.
pub(super) struct Evaluation {
    pub value: f64,
    pub gradient: Vec<f64>,
    pub count: usize,
    pub normal: Option<(Vec<f64>, Vec<f64>)>,
}

/// The sums (kernels::registration_sums) a metric is made of; None: mutual information, made
/// on the host from the samples.
pub(super) fn sums_mode(metric: Metric) -> Option<SumsMode> {
    match metric {
        Metric::MeanSquares => Some(SumsMode::MeanSquares),
        Metric::Correlation => Some(SumsMode::Correlation),
        Metric::MattesMutualInformation { .. } => None,
    }
}

/// ∂m/∂v = L u: row k of L maps u = g ⊗ (1, p − c) to the parameter k's derivative.
fn jacobian_in_u(params: &Params, f: f64) -> Vec<Vec<f64>> {
    let d = params.dims();
    let nu = d * (d + 1);
    let mut l = vec![vec![0.0; nu]; params.v.len()];
    for (k, row) in l.iter_mut().enumerate().take(d) {
        row[k * (d + 1)] = 1.0 / f;
    }
    for (k, dm) in params.matrix_derivatives().iter().enumerate() {
        for i in 0..d {
            for j in 0..d {
                l[d + k][i * (d + 1) + 1 + j] = dm[i][j];
            }
        }
    }
    l
}

fn apply(l: &[Vec<f64>], x: &[f64]) -> Vec<f64> {
    l.iter().map(|row| row.iter().zip(x).map(|(a, b)| a * b).sum()).collect()
}

/// Mean squares or correlation from their sums (`sums_mode`'s layout) at a level of shrink
/// factor `f`; the normal equations of mean squares when `normal`.
pub(super) fn finish(metric: Metric, params: &Params, f: f64, sums: &[f64], normal: bool) -> Evaluation {
    let (d, n) = (params.dims(), params.v.len());
    let nu = d * (d + 1);
    let l = jacobian_in_u(params, f);
    let count = sums[0].max(1.0);
    match metric {
        Metric::MeanSquares => {
            let jr = apply(&l, &sums[2..2 + nu]);
            let normal = normal.then(|| {
                // S = Σ u uᵀ from its upper triangle, then L S Lᵀ.
                let mut s = vec![vec![0.0; nu]; nu];
                let mut k = 2 + nu;
                for a in 0..nu {
                    for b in a..nu {
                        (s[a][b], s[b][a]) = (sums[k], sums[k]);
                        k += 1;
                    }
                }
                let ls: Vec<Vec<f64>> = l.iter().map(|row| (0..nu).map(|b| (0..nu).map(|a| row[a] * s[a][b]).sum()).collect()).collect();
                let h: Vec<f64> = (0..n).flat_map(|a| (0..n).map(move |b| (a, b))).map(|(a, b)| ls[a].iter().zip(&l[b]).map(|(x, y)| x * y).sum()).collect();
                (h, jr.clone())
            });
            Evaluation { value: sums[1] / count, gradient: jr.iter().map(|x| 2.0 * x / count).collect(), count: sums[0] as usize, normal }
        }
        _ => {
            let (sff, smm, sfm) = (sums[3] - sums[1] * sums[1] / count, sums[4] - sums[2] * sums[2] / count, sums[5] - sums[1] * sums[2] / count);
            let denominator = sff * smm;
            if denominator.is_nan() || denominator <= 0.0 {
                return Evaluation { value: 0.0, gradient: vec![0.0; n], count: sums[0] as usize, normal: None };
            }
            let (fa, ma, a) = (apply(&l, &sums[6..6 + nu]), apply(&l, &sums[6 + nu..6 + 2 * nu]), apply(&l, &sums[6 + 2 * nu..6 + 3 * nu]));
            let gradient = (0..n)
                .map(|u| {
                    let fa = fa[u] - sums[1] / count * a[u];
                    let ma = ma[u] - sums[2] / count * a[u];
                    -2.0 * sfm / denominator * (fa - sfm / smm * ma)
                })
                .collect();
            Evaluation { value: -sfm * sfm / denominator, gradient, count: sums[0] as usize, normal: None }
        }
    }
}

/// Mean squares or correlation at the previous and the current samples over the points both
/// cover, from the comparison's sums (a step is judged so: over each one's own overlap, a step
/// that slid the image off its worst points would count as progress); and the current samples'
/// own count.
pub(super) fn compare(metric: Metric, sums: &[f64]) -> (f64, f64, usize) {
    let c = sums[0].max(1.0);
    let (a, b) = match metric {
        Metric::MeanSquares => (sums[1] / c, sums[2] / c),
        _ => {
            let sff = sums[6] - sums[3] * sums[3] / c;
            let ncc = |ss: f64, s: f64, sf: f64| {
                let (smm, sfm) = (ss - s * s / c, sf - sums[3] * s / c);
                if sff * smm > 0.0 {
                    -sfm * sfm / (sff * smm)
                } else {
                    0.0
                }
            };
            (ncc(sums[7], sums[4], sums[9]), ncc(sums[8], sums[5], sums[10]))
        }
    };
    (a, b, sums[11] as usize)
}

/// Mattes mutual information at the host samples `s`, its gradient.
pub(super) fn mutual_information(bins: usize, level: &Grid, params: &Params, s: &HostSamples) -> Evaluation {
    let n = params.v.len();
    let inside = s.inside(level, None);
    let h = Histogram::new(bins, level);
    let joint = h.joint(level, s, &inside);
    let count = joint.iter().sum::<f64>();
    let value = h.value(&joint);
    // ∂(−MI)/∂v = (1 / (N bin)) Σ_x Σ_κ β3'(κ − η_x) log(p(ι_x, κ) / p_m(κ)) ∂m_x/∂v.
    let marginal = h.moving_marginal(&joint);
    let log_ratio: Vec<f64> =
        joint.iter().enumerate().map(|(k, &p)| if p > 0.0 && marginal[k % bins] > 0.0 { (p / marginal[k % bins]).ln() } else { 0.0 }).collect();
    let sums = accumulate(level, params, s, &inside, n, |acc, f, m, a| {
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

/// −MI at the previous and the current samples over the points both cover, and the current
/// samples' own count.
pub(super) fn compare_mutual_information(bins: usize, level: &Grid, s: [&HostSamples; 2]) -> (f64, f64, usize) {
    let both = s[1].inside(level, Some(s[0]));
    let h = Histogram::new(bins, level);
    let count = s[1].inside(level, None).iter().filter(|&&b| b).count();
    (h.value(&h.joint(level, s[0], &both)), h.value(&h.joint(level, s[1], &both)), count)
}

/// Σ over the points where `inside` of `add(acc, f, m, ∂m/∂v)`, `width` f64 sums, by every core.
fn accumulate(level: &Grid, params: &Params, s: &HostSamples, inside: &[bool], width: usize, add: impl Fn(&mut [f64], f64, f64, &[f64]) + Sync) -> Vec<f64> {
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
    fn joint(&self, level: &Grid, s: &HostSamples, inside: &[bool]) -> Vec<f64> {
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
    use crate::kernels::registration_sums::{cpu, HostInputs};
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

    fn samples(grid: &Grid, params: &Params, inside: &[bool]) -> HostSamples {
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
        HostSamples { values, gradients, support: inside.iter().map(|&b| f32::from(u8::from(b))).collect() }
    }

    /// The metric as the optimisers see it, the sums by the kernel's CPU twin.
    fn evaluate(metric: Metric, grid: &Grid, params: &Params, s: &HostSamples) -> Evaluation {
        match sums_mode(metric) {
            Some(mode) => {
                let centre: Vec<f64> = params.centre.iter().map(|c| c / grid.f).collect();
                let x =
                    HostInputs { fixed: &grid.fixed, mask: &grid.fixed_mask, values: &s.values, gradients: &s.gradients, support: &s.support, previous: None };
                finish(metric, params, grid.f, &cpu(mode, &grid.dims, &centre, [0.5, 0.25], &x), true)
            }
            None => mutual_information(20, grid, params, s),
        }
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
            let mut grid = Grid { f, dims: dims.clone(), fixed: vec![0.0; n], fixed_mask: vec![true; n], moving_range: (-1.5, 1.5), shifts: [0.5, 0.25] };
            let base = samples(&grid, &identity, &vec![true; n]);
            grid.fixed = base.values.iter().enumerate().map(|(k, x)| 2.0 * x + 0.3 * ((k * 7919 % 101) as f32 / 101.0 - 0.5) + 1.0).collect();
            let inside: Vec<bool> = (0..n).map(|k| k % 13 != 5).collect();
            for metric in [Metric::MeanSquares, Metric::Correlation, Metric::MattesMutualInformation { bins: 20 }] {
                let e = evaluate(metric, &grid, &params, &samples(&grid, &params, &inside));
                let largest = e.gradient.iter().fold(0.0f64, |m, x| m.max(x.abs()));
                assert!(largest > 0.0, "{metric:?}");
                for k in 0..params.v.len() {
                    let h = 1e-3 * if k < dims.len() { 1.0 } else { 0.1 };
                    let at = |delta: f64| {
                        let mut p = params.clone();
                        p.v[k] += delta;
                        evaluate(metric, &grid, &p, &samples(&grid, &p, &inside)).value
                    };
                    let numeric = (at(h) - at(-h)) / (2.0 * h);
                    if metric == Metric::MeanSquares {
                        // The normal equations' JᵀJ (from Σ u uᵀ) against Σ a aᵀ point by point.
                        let s = samples(&grid, &params, &inside);
                        let direct = accumulate(&grid, &params, &s, &s.inside(&grid, None), 1, |acc, _, _, a| acc[0] += a[k] * a[k]);
                        let (jtj, _) = e.normal.as_ref().unwrap();
                        let want = jtj[k * params.v.len() + k];
                        assert!((direct[0] - want).abs() <= 1e-6 * want.abs(), "JᵀJ[{k}][{k}] {want} vs {}", direct[0]);
                    }
                    assert!((numeric - e.gradient[k]).abs() < 0.02 * largest, "{metric:?} {kind:?} {dims:?} parameter {k}: {numeric} vs {}", e.gradient[k]);
                }
            }
        }
    }
}
