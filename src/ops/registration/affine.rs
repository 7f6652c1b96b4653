//! Intensity-based registration of 2D images (translation, rigid, similarity, affine) by mean
//! squares, as SimpleITK's `ImageRegistrationMethod` with `SetMetricAsMeanSquares`: a
//! multi-resolution pyramid (`shrink_factors`, `smoothing_sigmas` in pixels of the full image),
//! and at each level Levenberg-Marquardt steps on the mean squared difference, its Jacobian from
//! the moving image's gradient (central differences, sampled with the image) and the transform's
//! parameters. The moving image, its gradients and the overlap mask are resampled on the device
//! (one recording per step); the normal equations' sums are taken on the host in f64 from the
//! three resampled images.
//!
//! The transform maps the fixed image's (row, column) to the moving image's, as
//! scipy.ndimage.affine_transform's `matrix` and `offset`: `affine_transform(moving, matrix,
//! offset)` is the moving image registered onto the fixed one.

use ndarray::{Array2, ArrayD, ArrayViewD, IxDyn};
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::gpu::{Gpu, GpuArray};
use crate::graph::Recording;
use crate::kernels::boundary::Boundary;
use crate::ops::filter;
use crate::ops::interpolate::{self, AffineMap, Sampling, SplineMode};

/// The transform's kind (SimpleITK's TranslationTransform, Euler2DTransform,
/// Similarity2DTransform, AffineTransform), turns and scales about the fixed image's centre.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransformKind {
    Translation,
    Rigid,
    Similarity,
    Affine,
}

impl TransformKind {
    fn parameters(self) -> usize {
        match self {
            TransformKind::Translation => 2,
            TransformKind::Rigid => 3,
            TransformKind::Similarity => 4,
            TransformKind::Affine => 6,
        }
    }
}

/// The registration's options (SimpleITK's names where it has them).
#[derive(Clone, Debug, PartialEq)]
pub struct AffineOptions {
    pub kind: TransformKind,
    /// Each level's shrink factor, coarsest first (SimpleITK's SetShrinkFactorsPerLevel).
    pub shrink_factors: Vec<usize>,
    /// Each level's Gaussian smoothing, in pixels of the full image (SetSmoothingSigmasPerLevel).
    pub smoothing_sigmas: Vec<f64>,
    /// Most steps per level.
    pub iterations: usize,
    /// A level ends when a step moves no point of the image by more than this (pixels).
    pub tolerance: f64,
    /// The starting transform (None: the identity), fixed (row, column) → moving.
    pub initial: Option<AffineMap>,
}

impl Default for AffineOptions {
    fn default() -> AffineOptions {
        AffineOptions {
            kind: TransformKind::Affine,
            shrink_factors: vec![4, 2, 1],
            smoothing_sigmas: vec![2.0, 1.0, 0.0],
            iterations: 100,
            tolerance: 1e-4,
            initial: None,
        }
    }
}

/// The transform found and how the fit went.
#[derive(Clone, Debug, PartialEq)]
pub struct AffineResult {
    pub map: AffineMap,
    /// The mean squared difference over the overlap at the full resolution, at the end.
    pub metric: f64,
    /// Steps taken, over every level.
    pub iterations: usize,
}

/// The transform as parameters over a centre: q = M(θ) (p − c) + c + t, with M a turn (rigid),
/// a scaled turn (similarity) or any matrix (affine).
#[derive(Clone, Debug, PartialEq)]
struct Params {
    kind: TransformKind,
    centre: [f64; 2],
    /// [t0, t1] and then θ; s; or the matrix a00, a01, a10, a11.
    v: Vec<f64>,
}

impl Params {
    fn from_map(kind: TransformKind, centre: [f64; 2], map: &AffineMap) -> Params {
        let m = &map.matrix;
        // t = offset + M c − c.
        let t: Vec<f64> = (0..2).map(|i| map.offset[i] + m[i][0] * centre[0] + m[i][1] * centre[1] - centre[i]).collect();
        let mut v = vec![t[0], t[1]];
        match kind {
            TransformKind::Translation => {}
            TransformKind::Rigid => v.push(m[1][0].atan2(m[0][0])),
            TransformKind::Similarity => {
                v.push(m[1][0].atan2(m[0][0]));
                v.push((m[0][0] * m[1][1] - m[0][1] * m[1][0]).abs().sqrt());
            }
            TransformKind::Affine => v.extend([m[0][0], m[0][1], m[1][0], m[1][1]]),
        }
        Params { kind, centre, v }
    }

    fn matrix(&self) -> [[f64; 2]; 2] {
        match self.kind {
            TransformKind::Translation => [[1.0, 0.0], [0.0, 1.0]],
            TransformKind::Rigid | TransformKind::Similarity => {
                let s = if self.kind == TransformKind::Similarity { self.v[3] } else { 1.0 };
                let (sin, cos) = self.v[2].sin_cos();
                [[s * cos, -s * sin], [s * sin, s * cos]]
            }
            TransformKind::Affine => [[self.v[2], self.v[3]], [self.v[4], self.v[5]]],
        }
    }

    /// The map at a level of shrink factor `f`: level (row, column) → the moving level's.
    fn map_at(&self, f: f64) -> AffineMap {
        let m = self.matrix();
        let c = self.centre;
        // q = M (f p − c) + c + t, over f: M p + (c + t − M c) / f.
        let offset = (0..2).map(|i| (c[i] + self.v[i] - m[i][0] * c[0] - m[i][1] * c[1]) / f).collect();
        AffineMap { matrix: vec![m[0].to_vec(), m[1].to_vec()], offset }
    }

    /// ∂q/∂v at the level point p (level units; q in level units too) for each parameter.
    fn jacobian(&self, p: [f64; 2], f: f64) -> Vec<[f64; 2]> {
        let d = [p[0] - self.centre[0] / f, p[1] - self.centre[1] / f];
        let mut j = vec![[1.0 / f, 0.0], [0.0, 1.0 / f]];
        match self.kind {
            TransformKind::Translation => {}
            TransformKind::Rigid | TransformKind::Similarity => {
                let s = if self.kind == TransformKind::Similarity { self.v[3] } else { 1.0 };
                let (sin, cos) = self.v[2].sin_cos();
                j.push([s * (-sin * d[0] - cos * d[1]), s * (cos * d[0] - sin * d[1])]);
                if self.kind == TransformKind::Similarity {
                    j.push([cos * d[0] - sin * d[1], sin * d[0] + cos * d[1]]);
                }
            }
            TransformKind::Affine => {
                j.push([d[0], 0.0]);
                j.push([d[1], 0.0]);
                j.push([0.0, d[0]]);
                j.push([0.0, d[1]]);
            }
        }
        j
    }
}

/// Registers `moving` onto `fixed` (2D, one shape or not, finite).
pub fn register_affine(gpu: &Gpu, fixed: &ArrayViewD<f32>, moving: &ArrayViewD<f32>, o: &AffineOptions) -> Result<AffineResult> {
    if fixed.ndim() != 2 || moving.ndim() != 2 {
        return Err(Error::Shape(format!("register_affine takes 2D images, got {:?} and {:?}", fixed.shape(), moving.shape())));
    }
    crate::check::check_finite(fixed, "the fixed image")?;
    crate::check::check_finite(moving, "the moving image")?;
    if o.shrink_factors.is_empty() || o.shrink_factors.len() != o.smoothing_sigmas.len() || o.shrink_factors.contains(&0) {
        return Err(Error::Invalid(format!(
            "register_affine: one shrink factor (≥ 1) and one smoothing sigma per level, got {:?} and {:?}",
            o.shrink_factors, o.smoothing_sigmas
        )));
    }
    if o.smoothing_sigmas.iter().any(|s| !(s.is_finite() && *s >= 0.0)) || o.iterations == 0 || !(o.tolerance.is_finite() && o.tolerance > 0.0) {
        return Err(Error::Invalid(format!(
            "register_affine: sigmas ≥ 0, iterations ≥ 1 and a positive tolerance, got {:?}, {}, {}",
            o.smoothing_sigmas, o.iterations, o.tolerance
        )));
    }
    let dims = fixed.shape().to_vec();
    let centre = [(dims[0] as f64 - 1.0) / 2.0, (dims[1] as f64 - 1.0) / 2.0];
    let initial = o.initial.clone().unwrap_or_else(|| AffineMap::shift(&[0.0, 0.0]));
    let mut params = Params::from_map(o.kind, centre, &initial);
    let mut steps = 0;
    let mut metric = f64::NAN;
    for (k, (&f, &sigma)) in o.shrink_factors.iter().zip(&o.smoothing_sigmas).enumerate() {
        let level = Level::new(gpu, fixed, moving, f, sigma)?;
        if k == 0 && o.kind != TransformKind::Translation && o.initial.is_none() {
            // The translation first, at the coarsest level: from the identity, the matrix's
            // freedom let a first fit slide into a shrunk, shifted false minimum (a 128² pair
            // shifted by 2.5 pixels was "registered" at scale 0.94).
            let (t, n, _) = level.fit(gpu, Params::from_map(TransformKind::Translation, centre, &params.map_at(1.0)), o)?;
            params = Params::from_map(o.kind, centre, &t.map_at(1.0));
            steps += n;
        }
        let (p, n, m) = level.fit(gpu, params, o)?;
        params = p;
        steps += n;
        metric = m;
    }
    Ok(AffineResult { map: params.map_at(1.0), metric, iterations: steps })
}

/// One level of the pyramid: the fixed image (host), the moving image and its gradients
/// (device), smoothed and shrunk.
struct Level {
    f: f64,
    fixed: Array2<f32>,
    moving: GpuArray,
    gradients: [GpuArray; 2],
    ones: GpuArray,
}

impl Level {
    fn new(gpu: &Gpu, fixed: &ArrayViewD<f32>, moving: &ArrayViewD<f32>, shrink: usize, sigma: f64) -> Result<Level> {
        let f = shrink as f64;
        let shrunk = |x: &ArrayViewD<f32>| -> Result<(GpuArray, Vec<usize>)> {
            let out: Vec<usize> = x.shape().iter().map(|&n| (n / shrink).max(1)).collect();
            let mut rec = Recording::new(gpu);
            let b = rec.upload_once_f32(x)?;
            let smooth = if sigma > 0.0 { filter::gaussian_filter(&mut rec, b, &[sigma as f32], Boundary::Nearest)? } else { b };
            let map = AffineMap { matrix: vec![vec![f, 0.0], vec![0.0, f]], offset: vec![0.0, 0.0] };
            let how = Sampling { order: 1, mode: SplineMode::Nearest, ..Default::default() };
            let y = interpolate::affine_transform(&mut rec, smooth, &map, &out, &how)?;
            let o = rec.output(y);
            Ok((rec.run()?.array(o), out))
        };
        let (fixed_level, fixed_dims) = shrunk(fixed)?;
        let fixed = GpuArray::download_joined::<f32>(gpu, &[fixed_level], &fixed_dims)?
            .into_dimensionality::<ndarray::Ix2>()
            .map_err(|e| Error::Shape(e.to_string()))?;
        let (moving, moving_dims) = shrunk(moving)?;
        // Central differences (edges one-sided through `nearest`), per axis.
        let mut rec = Recording::new(gpu);
        let m = rec.input(&moving);
        let g: Vec<_> = (0..2).map(|axis| filter::correlate1d(&mut rec, m, &[-0.5f64, 0.0, 0.5], axis, Boundary::Nearest)).collect::<Result<_>>()?;
        let (o0, o1) = (rec.output(g[0]), rec.output(g[1]));
        let results = rec.run()?;
        let ones = GpuArray::upload_f32(gpu, &ArrayD::from_elem(IxDyn(&moving_dims), 1.0f32).view())?;
        Ok(Level { f, fixed, moving, gradients: [results.array(o0), results.array(o1)], ones })
    }

    /// The moving image, its gradients and the overlap, resampled onto the fixed grid by `map`.
    fn sample(&self, gpu: &Gpu, map: &AffineMap) -> Result<[Array2<f32>; 4]> {
        let dims = [self.fixed.nrows(), self.fixed.ncols()];
        let mut rec = Recording::new(gpu);
        let linear = Sampling { order: 1, mode: SplineMode::Constant, cval: 0.0, ..Default::default() };
        let cubic = Sampling { order: 3, mode: SplineMode::Nearest, ..Default::default() };
        let mut outs = Vec::new();
        for (a, how) in [(&self.moving, &cubic), (&self.gradients[0], &linear), (&self.gradients[1], &linear), (&self.ones, &linear)] {
            let b = rec.input(a);
            let y = interpolate::affine_transform(&mut rec, b, map, &dims, how)?;
            outs.push(rec.output(y));
        }
        let results = rec.run()?;
        let mut arrays = outs.iter().map(|&o| {
            GpuArray::download_joined::<f32>(gpu, &[results.array(o)], &dims)
                .and_then(|a| a.into_dimensionality::<ndarray::Ix2>().map_err(|e| Error::Shape(e.to_string())))
        });
        let mut next = || arrays.next().expect("four arrays");
        Ok([next()?, next()?, next()?, next()?])
    }

    /// Σ (r², J^T J, J^T r) over the overlap (the mask's samples at 1), in f64 by every core.
    fn normal_equations(&self, params: &Params, s: &[Array2<f32>; 4]) -> (f64, usize, Vec<f64>, Vec<f64>) {
        let n = params.kind.parameters();
        let rows: Vec<(f64, usize, Vec<f64>, Vec<f64>)> = (0..self.fixed.nrows())
            .into_par_iter()
            .map(|i| {
                let (mut ss, mut count, mut h, mut b) = (0.0, 0usize, vec![0.0; n * n], vec![0.0; n]);
                for j in 0..self.fixed.ncols() {
                    if s[3][[i, j]] < 0.999 {
                        continue;
                    }
                    let r = (s[0][[i, j]] - self.fixed[[i, j]]) as f64;
                    let g = [s[1][[i, j]] as f64, s[2][[i, j]] as f64];
                    let a: Vec<f64> = params.jacobian([i as f64, j as f64], self.f).iter().map(|d| g[0] * d[0] + g[1] * d[1]).collect();
                    for u in 0..n {
                        b[u] += a[u] * r;
                        for v in 0..n {
                            h[u * n + v] += a[u] * a[v];
                        }
                    }
                    ss += r * r;
                    count += 1;
                }
                (ss, count, h, b)
            })
            .collect();
        rows.into_iter().fold((0.0, 0, vec![0.0; n * n], vec![0.0; n]), |(s0, c0, mut h0, mut b0), (s1, c1, h1, b1)| {
            h0.iter_mut().zip(&h1).for_each(|(x, y)| *x += y);
            b0.iter_mut().zip(&b1).for_each(|(x, y)| *x += y);
            (s0 + s1, c0 + c1, h0, b0)
        })
    }

    /// Σ r² of the samples `a` and of `b` over the pixels both overlap.
    fn common_squares(&self, a: &[Array2<f32>; 4], b: &[Array2<f32>; 4]) -> (f64, f64) {
        (0..self.fixed.nrows())
            .into_par_iter()
            .map(|i| {
                let (mut sa, mut sb) = (0.0, 0.0);
                for j in 0..self.fixed.ncols() {
                    if a[3][[i, j]] >= 0.999 && b[3][[i, j]] >= 0.999 {
                        let f = self.fixed[[i, j]] as f64;
                        sa += (a[0][[i, j]] as f64 - f).powi(2);
                        sb += (b[0][[i, j]] as f64 - f).powi(2);
                    }
                }
                (sa, sb)
            })
            .reduce(|| (0.0, 0.0), |x, y| (x.0 + y.0, x.1 + y.1))
    }

    /// Levenberg-Marquardt from `params`: (the parameters, steps, the final mean square). A step
    /// is taken when it lowers the squares over the pixels both transforms overlap: compared
    /// over each one's own overlap, a step that slid the image off its worst pixels would count
    /// as progress (a level of 64² went from the identity to a wrong transform that way).
    fn fit(&self, gpu: &Gpu, mut params: Params, o: &AffineOptions) -> Result<(Params, usize, f64)> {
        let n = params.kind.parameters();
        let mut lambda = 1e-3;
        let mut s = self.sample(gpu, &params.map_at(self.f))?;
        let (mut ss, mut count, mut h, mut b) = self.normal_equations(&params, &s);
        if count < n * 4 {
            return Err(Error::Invalid(format!(
                "register_affine: the images overlap in {count} pixels at shrink factor {} (the transform has moved the moving image away)",
                self.f
            )));
        }
        let mut steps = 0;
        while steps < o.iterations {
            steps += 1;
            let mut a = h.clone();
            for k in 0..n {
                a[k * n + k] *= 1.0 + lambda;
            }
            let Some(delta) = solve(&a, &b, n) else { break };
            let mut trial = params.clone();
            trial.v.iter_mut().zip(&delta).for_each(|(v, d)| *v -= d);
            let ts = self.sample(gpu, &trial.map_at(self.f))?;
            let (now, then) = self.common_squares(&s, &ts);
            let (tss, tcount, th, tb) = self.normal_equations(&trial, &ts);
            if tcount >= n * 4 && then <= now {
                let moved = displacement(&params, &trial, [self.fixed.nrows() as f64, self.fixed.ncols() as f64], self.f);
                (params, s, ss, count, h, b) = (trial, ts, tss, tcount, th, tb);
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
        Ok((params, steps, ss / count.max(1) as f64))
    }
}

/// The largest move, in level pixels, of the level's corners between two transforms.
fn displacement(a: &Params, b: &Params, dims: [f64; 2], f: f64) -> f64 {
    let (ma, mb) = (a.map_at(f), b.map_at(f));
    let at = |m: &AffineMap, p: [f64; 2]| -> [f64; 2] {
        [m.matrix[0][0] * p[0] + m.matrix[0][1] * p[1] + m.offset[0], m.matrix[1][0] * p[0] + m.matrix[1][1] * p[1] + m.offset[1]]
    };
    [[0.0, 0.0], [0.0, dims[1]], [dims[0], 0.0], [dims[0], dims[1]]]
        .iter()
        .map(|&p| {
            let (x, y) = (at(&ma, p), at(&mb, p));
            (x[0] - y[0]).hypot(x[1] - y[1])
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
