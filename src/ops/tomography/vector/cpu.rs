//! The f64 references of the vector-geometry projectors, with the GPU kernels' semantics:
//! Joseph's forward projector, its exact transpose (the same weights scattered), the
//! voxel-driven back-projector and FDK.

use ndarray::{Array3, ArrayView3};

use super::{View, Views};

/// Projections arrays are (rows, angles, cols) and volumes (Z, Y, X) here, 2D ones with one row
/// and one slice.
///
/// Calls `f(voxel index (x, y, z), weight)` for every voxel the ray through pixel (row, col)
/// of `view` samples, the weight being its bilinear share times the ray's length per plane.
pub fn joseph(views: &Views, view: &View, row: usize, col: usize, mut f: impl FnMut([usize; 3], f64)) {
    let (origin, dir) = view.ray(row as f64, col as f64);
    let (a0, a1, a2) = (view.axis, (view.axis + 1) % 3, (view.axis + 2) % 3);
    if dir[a0] == 0.0 {
        return;
    }
    let n = views.dims;
    let (s1, s2) = (dir[a1] / dir[a0], dir[a2] / dir[a0]);
    let (b1, b2) = (origin[a1] - s1 * origin[a0], origin[a2] - s2 * origin[a0]);
    let step = (0..3).map(|a| (dir[a] * views.voxel[a]).powi(2)).sum::<f64>().sqrt() / dir[a0].abs();
    for plane in 0..n[a0] {
        let (p1, p2) = (s1 * plane as f64 + b1, s2 * plane as f64 + b2);
        let (j0, k0) = (p1.floor(), p2.floor());
        let (f1, f2) = (p1 - j0, p2 - k0);
        for (j, w1) in [(j0, 1.0 - f1), (j0 + 1.0, f1)] {
            for (k, w2) in [(k0, 1.0 - f2), (k0 + 1.0, f2)] {
                if j < 0.0 || k < 0.0 || j >= n[a1] as f64 || k >= n[a2] as f64 || w1 * w2 == 0.0 {
                    continue;
                }
                let mut idx = [0usize; 3];
                idx[a0] = plane;
                idx[a1] = j as usize;
                idx[a2] = k as usize;
                f(idx, w1 * w2 * step);
            }
        }
    }
}

/// Joseph's forward projection of a volume (Z, Y, X) to (rows, angles, cols).
pub fn project(volume: &ArrayView3<f64>, views: &Views) -> Array3<f64> {
    let mut out = Array3::zeros((views.rows, views.projections(), views.cols));
    for (a, view) in views.views.iter().enumerate() {
        for row in 0..views.rows {
            for col in 0..views.cols {
                let mut sum = 0.0;
                joseph(views, view, row, col, |[x, y, z], w| sum += volume[[z, y, x]] * w);
                out[[row, a, col]] = sum;
            }
        }
    }
    out
}

/// The exact transpose of [`project`].
pub fn backproject_matched(projections: &ArrayView3<f64>, views: &Views) -> Array3<f64> {
    let [nx, ny, nz] = views.dims;
    let mut out = Array3::zeros((nz, ny, nx));
    for (a, view) in views.views.iter().enumerate() {
        for row in 0..views.rows {
            for col in 0..views.cols {
                let p = projections[[row, a, col]];
                joseph(views, view, row, col, |[x, y, z], w| out[[z, y, x]] += p * w);
            }
        }
    }
    out
}

/// How the voxel-driven back-projector weighs each projection's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VoxelWeight {
    /// The rays' density at the voxel: the continuous adjoint of the forward projector.
    Density,
    /// FDK's (λ₀ / λ)² (distance to the source at the origin over the voxel's, squared).
    Fdk,
}

/// The weight of a projection's value at voxel x (index coordinates) that lands at λ.
pub fn voxel_weight(views: &Views, view: &View, x: [f64; 3], lambda: f64, weight: VoxelWeight) -> f64 {
    match (weight, view.cone) {
        (VoxelWeight::Fdk, _) => (view.lambda_origin / lambda).powi(2),
        (VoxelWeight::Density, false) => view.density,
        (VoxelWeight::Density, true) => {
            let (col, row, _) = view.project(x);
            let source = view.source_at(row);
            let distance = (0..3).map(|a| ((x[a] - source[a]) * views.voxel[a]).powi(2)).sum::<f64>().sqrt();
            distance * view.density_at(row, col) / lambda.powi(3)
        }
    }
}

/// The projection (row, col) bilinearly interpolated at fractional (r, c), 0 beyond the detector.
pub fn bilinear(projections: &ArrayView3<f64>, a: usize, r: f64, c: f64) -> f64 {
    let (rows, cols) = (projections.dim().0 as f64, projections.dim().2 as f64);
    let (r0, c0) = (r.floor(), c.floor());
    let (fr, fc) = (r - r0, c - c0);
    let mut sum = 0.0;
    for (i, wr) in [(r0, 1.0 - fr), (r0 + 1.0, fr)] {
        for (j, wc) in [(c0, 1.0 - fc), (c0 + 1.0, fc)] {
            if i >= 0.0 && j >= 0.0 && i < rows && j < cols {
                sum += wr * wc * projections[[i as usize, a, j as usize]];
            }
        }
    }
    sum
}

/// The voxel-driven back-projection of (rows, angles, cols) to (Z, Y, X).
pub fn backproject_voxels(projections: &ArrayView3<f64>, views: &Views, weight: VoxelWeight) -> Array3<f64> {
    let [nx, ny, nz] = views.dims;
    Array3::from_shape_fn((nz, ny, nx), |(z, y, x)| {
        let p = [x as f64, y as f64, z as f64];
        views
            .views
            .iter()
            .enumerate()
            .map(|(a, view)| {
                let (c, r, lambda) = view.project(p);
                bilinear(projections, a, r, c) * voxel_weight(views, view, p, lambda, weight)
            })
            .sum()
    })
}

/// FDK or fan-beam FBP ([`super::fdk`]) in f64: projections (rows, angles, cols) to (Z, Y, X).
pub fn fdk(
    projections: &ArrayView3<f64>,
    g: &super::ProjectionGeometry,
    views: &Views,
    filter: crate::ops::tomography::Filter,
) -> crate::error::Result<Array3<f64>> {
    let (cosine, per) = super::fdk::weights(g)?;
    // A stack's rows (its slices) share the 2D geometry's one row of cosine weights.
    let weighted = Array3::from_shape_fn(projections.dim(), |(r, a, c)| projections[[r, a, c]] * cosine[[r.min(cosine.nrows() - 1), c]] * per[[a, c]]);
    let padded = crate::ops::tomography::padded_length(views.cols);
    let filtered = crate::ops::tomography::cpu::filter_sinograms(&weighted.view(), filter, padded);
    Ok(backproject_voxels(&filtered.view(), views, VoxelWeight::Fdk))
}

/// The back-projector `projector` in f64.
pub fn backproject(projections: &ArrayView3<f64>, views: &Views, projector: super::Projector) -> Array3<f64> {
    match projector {
        super::Projector::Matched => backproject_matched(projections, views),
        super::Projector::Astra | super::Projector::Texture => backproject_voxels(projections, views, VoxelWeight::Density),
    }
}

/// SIRT, CGLS, OS-SART (from 0) or MLEM (from 1) ([`super::iterative`]) in f64, no masks: the volume and each
/// iterate's residual norm before its update.
pub fn solve(
    algorithm: super::iterative::Algorithm,
    b: &ArrayView3<f64>,
    views: &Views,
    iterations: usize,
    projector: super::Projector,
    bounds: (f64, f64),
) -> (Array3<f64>, Vec<f64>) {
    let [nx, ny, nz] = views.dims;
    let norm = |a: &Array3<f64>| a.iter().map(|v| v * v).sum::<f64>();
    let norm_of = norm;
    let mut x = Array3::<f64>::zeros((nz, ny, nx));
    let mut residuals = Vec::new();
    match algorithm {
        super::iterative::Algorithm::Sirt => {
            let inv = |a: Array3<f64>| a.mapv(|v| if (v as f32).abs() < 1e-6 { 0.0 } else { 1.0 / v });
            let r = inv(project(&Array3::from_elem((nz, ny, nx), 1.0).view(), views));
            let c = inv(backproject(&Array3::from_elem(b.dim(), 1.0).view(), views, projector));
            for _ in 0..iterations {
                let residual = b - &project(&x.view(), views);
                residuals.push(norm(&residual).sqrt());
                let v = backproject(&(&residual * &r).view(), views, projector);
                x = (&x + &(&c * &v)).mapv(|v| v.clamp(bounds.0, bounds.1));
            }
        }
        super::iterative::Algorithm::Sart { subset_size } => {
            let inv = |a: Array3<f64>| a.mapv(|v| if (v as f32).abs() < 1e-6 { 0.0 } else { 1.0 / v });
            let groups = super::sart::subsets(views.projections(), subset_size);
            for _ in 0..iterations {
                let mut total = 0.0;
                for members in &groups {
                    let part = views.subset(members);
                    let b_s = b.select(ndarray::Axis(1), members);
                    let r = inv(project(&Array3::from_elem((nz, ny, nx), 1.0).view(), &part));
                    let c = inv(backproject(&Array3::from_elem(b_s.dim(), 1.0).view(), &part, projector));
                    let residual = &b_s - &project(&x.view(), &part);
                    total += norm(&residual);
                    let v = backproject(&(&residual * &r).view(), &part, projector);
                    x = (&x + &(&c * &v)).mapv(|v| v.clamp(bounds.0, bounds.1));
                }
                residuals.push(total.sqrt());
            }
        }
        super::iterative::Algorithm::Osem { subset_size } => {
            x.fill(1.0);
            let eps = crate::ops::tomography::EM_EPSILON as f64;
            for _ in 0..iterations {
                let mut total = 0.0;
                for members in &super::sart::subsets(views.projections(), subset_size) {
                    let part = views.subset(members);
                    let b_s = b.select(ndarray::Axis(1), members);
                    let norm = backproject(&Array3::from_elem(b_s.dim(), 1.0).view(), &part, projector);
                    let q = project(&x.view(), &part);
                    total += norm_of(&(&b_s - &q));
                    let ratio = ndarray::Zip::from(&b_s).and(&q).map_collect(|&y, &q| y / (q.max(0.0) + eps));
                    let back = backproject(&ratio.view(), &part, projector);
                    ndarray::Zip::from(&mut x).and(&back).and(&norm).for_each(|v, &u, &w| *v *= (u / w.max(f64::from(f32::MIN_POSITIVE))).max(0.0));
                }
                residuals.push(total.sqrt());
            }
        }
        super::iterative::Algorithm::FistaTv { weight, tv_iterations } => {
            // L by the power method as on the device (same start, steps and stop).
            let normal = |v: &Array3<f64>| backproject(&project(&v.view(), views).view(), views, projector);
            let mut v = Array3::from_elem((nz, ny, nx), 1.0 / ((nx * ny * nz) as f64).sqrt());
            let mut estimate = 0.0;
            for _ in 0..super::fista::POWER_STEPS {
                let w = normal(&v);
                let next = norm(&w).sqrt();
                let done = (next - estimate).abs() <= super::fista::POWER_TOLERANCE * next;
                estimate = next;
                v = w / next;
                if done {
                    break;
                }
            }
            let lipschitz = estimate * super::fista::LIPSCHITZ_MARGIN;
            let shape = views.volume_shape();
            let prox = |z: Array3<f64>| -> Array3<f64> {
                if ((weight as f64 / lipschitz) as f32) < f32::MIN_POSITIVE {
                    return z;
                }
                let z = z.into_shape_with_order(ndarray::IxDyn(&shape)).expect("the volume's shape");
                let u = crate::ops::denoise::tv::cpu(&z.view(), weight as f64 / lipschitz, 0.0, tv_iterations).expect("a valid weight");
                u.into_shape_with_order((nz, ny, nx)).expect("the volume's shape")
            };
            let mut y = x.clone();
            for beta in super::fista::momentum(iterations) {
                let residual = b - &project(&y.view(), views);
                residuals.push(norm(&residual).sqrt());
                let z = &y + &(backproject(&residual.view(), views, projector) / lipschitz);
                let next = prox(z).mapv(|v| v.clamp(bounds.0, bounds.1));
                y = &next + &((&next - &x) * beta);
                x = next;
            }
        }
        super::iterative::Algorithm::Mlem => {
            x.fill(1.0);
            let norm = backproject(&Array3::from_elem(b.dim(), 1.0).view(), views, projector);
            let eps = crate::ops::tomography::EM_EPSILON as f64;
            for _ in 0..iterations {
                let q = project(&x.view(), views);
                residuals.push(norm_of(&(b - &q)).sqrt());
                let ratio = ndarray::Zip::from(b).and(&q).map_collect(|&y, &q| y / (q.max(0.0) + eps));
                let back = backproject(&ratio.view(), views, projector);
                ndarray::Zip::from(&mut x).and(&back).and(&norm).for_each(|v, &u, &w| *v *= (u / w.max(f64::from(f32::MIN_POSITIVE))).max(0.0));
            }
        }
        super::iterative::Algorithm::Cgls => {
            let mut r = b.to_owned();
            let mut p = backproject(&r.view(), views, projector);
            let mut gamma = norm(&p);
            for _ in 0..iterations {
                residuals.push(norm(&r).sqrt());
                let q = project(&p.view(), views);
                let alpha = if norm(&q) == 0.0 { 0.0 } else { gamma / norm(&q) };
                x = &x + &(&p * alpha);
                r = &r - &(&q * alpha);
                let g = backproject(&r.view(), views, projector);
                let next = norm(&g);
                let beta = if gamma == 0.0 { 0.0 } else { next / gamma };
                p = &g + &(&p * beta);
                gamma = next;
            }
        }
    }
    (x, residuals)
}
