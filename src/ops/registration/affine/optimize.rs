//! The optimisers of one pyramid level: Levenberg-Marquardt (mean squares), L-BFGS with a
//! backtracking line search, and SimpleITK's regular-step gradient descent. Gradient methods step
//! in scaled parameters (one unit moves the image by about a pixel: [`Params::scales`]).

use super::level::{Grid, Level, Samples};
use super::metric::{self, Evaluation};
use super::transform::Params;
use super::{AffineOptions, Metric, Optimizer};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::kernels::registration_histogram::MOST_BINS;
use crate::kernels::registration_sums::SumsMode;

/// The samples at `params`: on the host only for mutual information of more bins than the
/// histogram kernel holds.
fn sample(gpu: &Gpu, level: &Level, metric: Metric, params: &Params) -> Result<Samples> {
    let host = matches!(metric, Metric::MattesMutualInformation { bins } if bins > MOST_BINS);
    level.sample(gpu, &params.map_at(level.grid.f), host)
}

/// The metric at the samples `s` of `params`, its gradient (and the normal equations).
fn evaluate(gpu: &Gpu, level: &Level, metric: Metric, params: &Params, s: &Samples, normal: bool) -> Result<Evaluation> {
    match metric {
        Metric::MattesMutualInformation { bins } => {
            let b = metric::bins_of(bins, &level.grid);
            let (joint, sums) = level.mutual_information(gpu, &b, &params.centre, s)?;
            Ok(metric::finish_mutual_information(params, level.grid.f, &b, &joint, &sums))
        }
        _ => {
            let mode = metric::sums_mode(metric).expect("mean squares or correlation");
            Ok(metric::finish(metric, params, level.grid.f, &level.sums(gpu, mode, &params.centre, s, None)?, normal))
        }
    }
}

/// The metric at the previous samples `s[0]` and the current `s[1]` over the points both cover.
fn common_values(gpu: &Gpu, level: &Level, metric: Metric, centre: &[f64], s: [&Samples; 2]) -> Result<(f64, f64, usize)> {
    match metric {
        Metric::MattesMutualInformation { bins } => level.compare_mutual_information(gpu, &metric::bins_of(bins, &level.grid), s),
        _ => Ok(metric::compare(metric, &level.sums(gpu, SumsMode::Compare, centre, s[1], Some(s[0]))?)),
    }
}

/// One level's fit from `params`: the parameters, the steps taken and the final metric.
pub(super) fn fit(gpu: &Gpu, level: &Level, params: Params, o: &AffineOptions) -> Result<(Params, usize, f64)> {
    let s = sample(gpu, level, o.metric, &params)?;
    let e = evaluate(gpu, level, o.metric, &params, &s, o.metric == Metric::MeanSquares)?;
    check_overlap(&e, &params, &level.grid)?;
    match o.optimizer {
        Optimizer::Auto if o.metric == Metric::MeanSquares => levenberg_marquardt(gpu, level, params, s, e, o),
        Optimizer::LevenbergMarquardt => levenberg_marquardt(gpu, level, params, s, e, o),
        Optimizer::Auto | Optimizer::Lbfgs => lbfgs(gpu, level, params, s, e, o),
        Optimizer::RegularStep { learning_rate, min_step, relaxation } => regular_step(gpu, level, params, e, o, [learning_rate, min_step, relaxation]),
    }
}

/// The fewest points a transform may leave the metric, as ITK's "too many samples map outside
/// the moving image" (a quarter of the fixed level's points): on fewer, a metric's value means
/// little (mutual information over a few points is high by chance: a fit slid off the image).
fn fewest(params: &Params, level: &Grid) -> usize {
    (level.fixed_mask.iter().filter(|&&m| m).count() / 4).max(params.v.len() * 4)
}

fn check_overlap(e: &Evaluation, params: &Params, level: &Grid) -> Result<()> {
    if e.count < fewest(params, level) {
        return Err(Error::Invalid(format!(
            "register_affine: {} of the fixed image's points map inside the moving image at shrink factor {} (fewer than a quarter: the transform has moved the moving image away, or the masks leave too little)",
            e.count, level.f
        )));
    }
    Ok(())
}

fn levenberg_marquardt(gpu: &Gpu, level: &Level, mut params: Params, mut s: Samples, mut e: Evaluation, o: &AffineOptions) -> Result<(Params, usize, f64)> {
    let n = params.v.len();
    let mut lambda = 1e-3;
    let mut steps = 0;
    while steps < o.iterations {
        steps += 1;
        let (h, b) = e.normal.as_ref().expect("the normal equations");
        let mut a = h.clone();
        for k in 0..n {
            a[k * n + k] *= 1.0 + lambda;
        }
        let Some(delta) = solve(&a, b, n) else { break };
        let mut trial = params.clone();
        trial.v.iter_mut().zip(&delta).for_each(|(v, d)| *v -= d);
        let ts = sample(gpu, level, o.metric, &trial)?;
        let (now, then, count) = common_values(gpu, level, o.metric, &params.centre, [&s, &ts])?;
        if count >= fewest(&trial, &level.grid) && then <= now {
            let te = evaluate(gpu, level, o.metric, &trial, &ts, true)?;
            let moved = displacement(&params, &trial, &level.grid);
            (params, s, e) = (trial, ts, te);
            lambda = (lambda / 10.0).max(1e-9);
            if moved < o.tolerance {
                break;
            }
        } else {
            lambda *= 10.0;
            if lambda > 1e9 {
                break;
            }
        }
    }
    Ok((params, steps, e.value))
}

fn lbfgs(gpu: &Gpu, level: &Level, mut params: Params, mut s: Samples, mut e: Evaluation, o: &AffineOptions) -> Result<(Params, usize, f64)> {
    const MEMORY: usize = 8;
    let scales = params.scales(level.grid.radius());
    let scaled = |g: &[f64]| -> Vec<f64> { g.iter().zip(&scales).map(|(g, s)| g * s).collect() };
    let mut history: Vec<(Vec<f64>, Vec<f64>)> = Vec::new();
    let mut steps = 0;
    while steps < o.iterations {
        steps += 1;
        let g = scaled(&e.gradient);
        let norm = dot(&g, &g).sqrt();
        if norm.is_nan() || norm <= 1e-15 {
            break;
        }
        // The first step (and any after a reset) moves the image by about a level pixel.
        let steepest = |g: &[f64]| -> Vec<f64> { g.iter().map(|x| -x / norm * level.grid.f).collect() };
        let mut d = if history.is_empty() { steepest(&g) } else { two_loop(&g, &history) };
        if dot(&g, &d) >= 0.0 {
            history.clear();
            d = steepest(&g);
        }
        // No step moves the image by more than two level pixels: a curvature pair from a flat
        // stretch of the metric asks for leaps that land in another basin.
        let length = dot(&d, &d).sqrt();
        if length > 2.0 * level.grid.f {
            d.iter_mut().for_each(|x| *x *= 2.0 * level.grid.f / length);
        }
        let mut accepted = None;
        let mut alpha = 1.0;
        for _ in 0..12 {
            let mut trial = params.clone();
            trial.v.iter_mut().zip(&d).zip(&scales).for_each(|((v, d), s)| *v += alpha * d * s);
            let ts = sample(gpu, level, o.metric, &trial)?;
            let (now, then, count) = common_values(gpu, level, o.metric, &params.centre, [&s, &ts])?;
            if count >= fewest(&trial, &level.grid) && then <= now + 1e-4 * alpha * dot(&g, &d) {
                accepted = Some((trial, ts));
                break;
            }
            alpha /= 2.0;
        }
        let Some((trial, ts)) = accepted else {
            if history.is_empty() {
                break;
            }
            history.clear();
            continue;
        };
        let te = evaluate(gpu, level, o.metric, &trial, &ts, false)?;
        let step: Vec<f64> = d.iter().map(|x| alpha * x).collect();
        let change: Vec<f64> = scaled(&te.gradient).iter().zip(&g).map(|(a, b)| a - b).collect();
        if dot(&step, &change) > 1e-12 {
            history.push((step, change));
            if history.len() > MEMORY {
                history.remove(0);
            }
        }
        let moved = displacement(&params, &trial, &level.grid);
        (params, s, e) = (trial, ts, te);
        if moved < o.tolerance {
            break;
        }
    }
    Ok((params, steps, e.value))
}

/// H g by the two-loop recursion over (step, gradient change) pairs, negated: a descent direction.
fn two_loop(g: &[f64], history: &[(Vec<f64>, Vec<f64>)]) -> Vec<f64> {
    let mut q = g.to_vec();
    let mut alphas = Vec::with_capacity(history.len());
    for (s, y) in history.iter().rev() {
        let a = dot(s, &q) / dot(y, s);
        q.iter_mut().zip(y).for_each(|(q, y)| *q -= a * y);
        alphas.push(a);
    }
    let (s, y) = history.last().expect("a pair");
    let gamma = dot(s, y) / dot(y, y);
    q.iter_mut().for_each(|x| *x *= gamma);
    for ((s, y), a) in history.iter().zip(alphas.iter().rev()) {
        let b = dot(y, &q) / dot(y, s);
        q.iter_mut().zip(s).for_each(|(q, s)| *q += (a - b) * s);
    }
    q.iter().map(|x| -x).collect()
}

/// SimpleITK's RegularStepGradientDescent: steps of a set length (pixels) along the scaled
/// gradient, the length times `relaxation` whenever the gradient turns back; ends below
/// `min_step`.
fn regular_step(
    gpu: &Gpu,
    level: &Level,
    mut params: Params,
    mut e: Evaluation,
    o: &AffineOptions,
    [rate, min_step, relaxation]: [f64; 3],
) -> Result<(Params, usize, f64)> {
    let scales = params.scales(level.grid.radius());
    let mut length = rate;
    let mut previous: Option<Vec<f64>> = None;
    let mut steps = 0;
    while steps < o.iterations {
        let g: Vec<f64> = e.gradient.iter().zip(&scales).map(|(g, s)| g * s).collect();
        let norm = dot(&g, &g).sqrt();
        if norm.is_nan() || norm <= 1e-15 {
            break;
        }
        if previous.as_ref().is_some_and(|p| dot(p, &g) < 0.0) {
            length *= relaxation;
        }
        if length < min_step {
            break;
        }
        steps += 1;
        params.v.iter_mut().zip(&g).zip(&scales).for_each(|((v, g), s)| *v -= length * g / norm * s);
        let s = sample(gpu, level, o.metric, &params)?;
        e = evaluate(gpu, level, o.metric, &params, &s, false)?;
        check_overlap(&e, &params, &level.grid)?;
        previous = Some(g);
    }
    Ok((params, steps, e.value))
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The largest move, in level pixels, of the level's corners between two transforms.
fn displacement(a: &Params, b: &Params, level: &Grid) -> f64 {
    let (ma, mb) = (a.map_at(level.f), b.map_at(level.f));
    let d = level.dims.len();
    let at = |m: &crate::ops::interpolate::AffineMap, p: &[f64]| -> Vec<f64> {
        (0..d).map(|i| (0..d).map(|j| m.matrix[i][j] * p[j]).sum::<f64>() + m.offset[i]).collect()
    };
    (0..1usize << d)
        .map(|corner| {
            let p: Vec<f64> = (0..d).map(|i| if corner >> i & 1 == 1 { level.dims[i] as f64 } else { 0.0 }).collect();
            at(&ma, &p).iter().zip(at(&mb, &p)).map(|(x, y)| (x - y).powi(2)).sum::<f64>().sqrt()
        })
        .fold(0.0, f64::max)
}

/// `a` (n × n, row-major) \ `b` by Gaussian elimination with partial pivoting; None if singular.
fn solve(a: &[f64], b: &[f64], n: usize) -> Option<Vec<f64>> {
    let mut m: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            let mut row = a[i * n..(i + 1) * n].to_vec();
            row.push(b[i]);
            row
        })
        .collect();
    for c in 0..n {
        let p = (c..n).max_by(|&x, &y| m[x][c].abs().total_cmp(&m[y][c].abs()))?;
        if m[p][c].abs() < 1e-300 {
            return None;
        }
        m.swap(c, p);
        for r in 0..n {
            if r != c {
                let k = m[r][c] / m[c][c];
                for j in c..=n {
                    m[r][j] -= k * m[c][j];
                }
            }
        }
    }
    Some((0..n).map(|i| m[i][n] / m[i][i]).collect())
}
