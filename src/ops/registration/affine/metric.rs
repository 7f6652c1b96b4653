//! The metrics as SimpleITK's v4 metrics name and define them, their values and analytic
//! gradients over the transform's parameters, summed in f64 on the host from a level's samples:
//! - mean squares: mean (m − f)²;
//! - correlation: −(Σ f̃ m̃)² / (Σ f̃² Σ m̃²), f̃ and m̃ less their means over the overlap;
//! - Mattes mutual information: −MI of the joint histogram with a zero-order Parzen window on the
//!   fixed image and a cubic B-spline one on the moving image (ITK's bins: two bins of padding at
//!   each end, ranges from each level's images).

use super::level::Grid;
use super::transform::Params;
use super::Metric;
use crate::kernels::registration_histogram::Bins;
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

/// ITK's Mattes bins at a level: the fixed range over its mask, the moving level's range, two
/// bins of padding at each end.
pub(super) fn bins_of(bins: usize, level: &Grid) -> Bins {
    let (lo, hi) = level
        .fixed
        .iter()
        .zip(&level.fixed_mask)
        .filter(|(_, &m)| m)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (&x, _)| (lo.min(x as f64), hi.max(x as f64)));
    let width = (bins - 4) as f64;
    let (mlo, mhi) = level.moving_range;
    Bins { bins, fixed_min: lo, fixed_width: ((hi - lo) / width).max(1e-30), moving_min: mlo, moving_width: ((mhi - mlo) / width).max(1e-30) }
}

/// log(p(ι, κ) / p_m(κ)) of a joint histogram (0 where a bin is empty): the weights of mutual
/// information's gradient.
pub(super) fn log_ratios(b: &Bins, joint: &[f64]) -> Vec<f64> {
    let marginal = moving_marginal(b.bins, joint);
    joint.iter().enumerate().map(|(k, &p)| if p > 0.0 && marginal[k % b.bins] > 0.0 { (p / marginal[k % b.bins]).ln() } else { 0.0 }).collect()
}

fn moving_marginal(bins: usize, joint: &[f64]) -> Vec<f64> {
    (0..bins).map(|k| (0..bins).map(|i| joint[i * bins + k]).sum()).collect()
}

/// −MI of a joint histogram.
pub(super) fn mi_value(bins: usize, joint: &[f64]) -> f64 {
    let total = joint.iter().sum::<f64>();
    if total <= 0.0 {
        return 0.0;
    }
    let fixed: Vec<f64> = (0..bins).map(|i| joint[i * bins..(i + 1) * bins].iter().sum::<f64>() / total).collect();
    let moving: Vec<f64> = moving_marginal(bins, joint).iter().map(|x| x / total).collect();
    let mut mi = 0.0;
    for i in 0..bins {
        for k in 0..bins {
            let p = joint[i * bins + k] / total;
            if p > 1e-16 && fixed[i] > 0.0 && moving[k] > 0.0 {
                mi += p * (p / (fixed[i] * moving[k])).ln();
            }
        }
    }
    -mi
}

/// −MI from its joint histogram and its gradient from the sums Σ w u
/// (kernels::registration_sums' MutualInformation):
/// ∂(−MI)/∂v = (1 / (N bin)) Σ_x Σ_κ β3'(κ − η_x) log(p(ι_x, κ) / p_m(κ)) ∂m_x/∂v.
pub(super) fn finish_mutual_information(params: &Params, f: f64, b: &Bins, joint: &[f64], sums: &[f64]) -> Evaluation {
    let count = joint.iter().sum::<f64>();
    let scale = 1.0 / (count.max(1.0) * b.moving_width);
    let gradient = apply(&jacobian_in_u(params, f), sums).iter().map(|x| x * scale).collect();
    Evaluation { value: mi_value(b.bins, joint), gradient, count: count.round() as usize, normal: None }
}

#[cfg(test)]
mod tests {
    use super::super::level::HostSamples;
    use super::super::transform::jacobian;
    use super::*;
    use crate::kernels::registration_histogram;
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
                let x = HostInputs {
                    fixed: &grid.fixed,
                    mask: &grid.fixed_mask,
                    values: &s.values,
                    gradients: &s.gradients,
                    support: &s.support,
                    previous: None,
                    log_ratios: None,
                };
                finish(metric, params, grid.f, &cpu(mode, &grid.dims, &centre, [0.5, 0.25], &x), true)
            }
            None => {
                let b = bins_of(20, grid);
                let joint = registration_histogram::cpu(&b, &grid.fixed, &grid.fixed_mask, &s.values, &s.support, None);
                let l = log_ratios(&b, &joint);
                let centre: Vec<f64> = params.centre.iter().map(|c| c / grid.f).collect();
                let x = HostInputs {
                    fixed: &grid.fixed,
                    mask: &grid.fixed_mask,
                    values: &s.values,
                    gradients: &s.gradients,
                    support: &s.support,
                    previous: None,
                    log_ratios: Some((&l, b)),
                };
                finish_mutual_information(params, grid.f, &b, &joint, &cpu(SumsMode::MutualInformation, &grid.dims, &centre, [0.0; 2], &x))
            }
        }
    }

    /// Σ (∂m/∂v_k)² point by point through the transform's Jacobian.
    fn direct_jtj(grid: &Grid, params: &Params, s: &HostSamples, k: usize) -> f64 {
        let d = grid.dims.len();
        let derivatives = params.matrix_derivatives();
        let mut jac = vec![vec![0.0; d]; params.v.len()];
        let mut total = 0.0;
        for at in 0..s.values.len() {
            if !grid.fixed_mask[at] || s.support[at] < 0.999 {
                continue;
            }
            let mut p = vec![0.0; d];
            let mut rest = at;
            for axis in (0..d).rev() {
                p[axis] = (rest % grid.dims[axis]) as f64;
                rest /= grid.dims[axis];
            }
            jacobian(&p, &params.centre, grid.f, &derivatives, &mut jac);
            let a: f64 = (0..d).map(|i| s.gradients[i][at] as f64 * jac[k][i]).sum();
            total += a * a;
        }
        total
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
                        let direct = direct_jtj(&grid, &params, &s, k);
                        let (jtj, _) = e.normal.as_ref().unwrap();
                        let want = jtj[k * params.v.len() + k];
                        assert!((direct - want).abs() <= 1e-6 * want.abs(), "JᵀJ[{k}][{k}] {want} vs {direct}");
                    }
                    assert!((numeric - e.gradient[k]).abs() < 0.02 * largest, "{metric:?} {kind:?} {dims:?} parameter {k}: {numeric} vs {}", e.gradient[k]);
                }
            }
        }
    }
}
