//! The reference in f64: the strip-model projector pair (each pixel's footprint, a trapezoid of
//! unit area, shared among the detector bins it covers; back-projection the exact adjoint), the
//! FBP filters and FBP, and MLEM.

use ndarray::{Array3, ArrayView3, Axis};
use num_complex::Complex64;
use rustfft::FftPlanner;

use super::{Filter, Geometry};

/// The strip model's share of a pixel at detector coordinate u (its centre) in bin k at angle
/// (cos θ, sin θ): the part within [k − ½, k + ½] of its footprint, a trapezoid of unit area
/// (boxes |cos θ| and |sin θ| wide, convolved).
pub fn strip_weight(u: f64, k: f64, cos: f64, sin: f64) -> f64 {
    let (a, b) = (cos.abs(), sin.abs());
    let (w1, w2, h) = (0.5 * (a - b).abs(), 0.5 * (a + b), 1.0 / a.max(b));
    let cdf = |s: f64| {
        if s <= -w2 {
            0.0
        } else if s >= w2 {
            1.0
        } else if s < -w1 {
            h * (s + w2).powi(2) / (2.0 * (w2 - w1))
        } else if s > w1 {
            1.0 - h * (w2 - s).powi(2) / (2.0 * (w2 - w1))
        } else {
            0.5 * h * (w2 - w1) + h * (s + w1)
        }
    };
    cdf(k + 0.5 - u) - cdf(k - 0.5 - u)
}

/// The bins a pixel at detector coordinate u reaches, with their weights.
fn bins(u: f64, cos: f64, sin: f64, detectors: usize) -> impl Iterator<Item = (usize, f64)> {
    let reach = 0.5 + 0.5 * (cos.abs() + sin.abs());
    let (first, last) = ((u - reach).ceil().max(0.0) as i64, ((u + reach).floor() as i64).min(detectors as i64 - 1));
    (first..=last).map(move |k| (k as usize, strip_weight(u, k as f64, cos, sin)))
}

/// Forward projection of images (batch, N, N) to sinograms (batch, angles, detectors).
pub fn project(images: &ArrayView3<f64>, g: &Geometry) -> Array3<f64> {
    let (batch, n, _) = images.dim();
    let mut out = Array3::zeros((batch, g.angles.len(), g.detectors));
    for (b, image) in images.axis_iter(Axis(0)).enumerate() {
        for (a, &theta) in g.angles.iter().enumerate() {
            let (cos, sin) = (theta.cos(), theta.sin());
            for r in 0..n {
                for c in 0..n {
                    let (x, y) = g.pixel_centre(r, c);
                    for (k, w) in bins(x * cos + y * sin + g.center, cos, sin, g.detectors) {
                        out[[b, a, k]] += image[[r, c]] * w;
                    }
                }
            }
        }
    }
    out
}

/// Back-projection of sinograms (batch, angles, detectors) to images (batch, N, N): the adjoint.
pub fn backproject(sinograms: &ArrayView3<f64>, g: &Geometry) -> Array3<f64> {
    let batch = sinograms.dim().0;
    let n = g.size;
    Array3::from_shape_fn((batch, n, n), |(b, r, c)| {
        let (x, y) = g.pixel_centre(r, c);
        g.angles
            .iter()
            .enumerate()
            .map(|(a, &theta)| {
                let (cos, sin) = (theta.cos(), theta.sin());
                bins(x * cos + y * sin + g.center, cos, sin, g.detectors).map(|(k, w)| sinograms[[b, a, k]] * w).sum::<f64>()
            })
            .sum()
    })
}

/// The cubic B-spline's four weights at fraction f past a sample (taps −1, 0, 1, 2).
#[cfg(test)]
fn cubic_weights(f: f64) -> [f64; 4] {
    let h = 1.0 - f;
    [h * h * h / 6.0, (4.0 - 6.0 * f * f + 3.0 * f * f * f) / 6.0, (4.0 - 6.0 * h * h + 3.0 * h * h * h) / 6.0, f * f * f / 6.0]
}

/// The back-projection the log-polar method approximates: every pixel sums, over the angles,
/// the cubic B-spline interpolant of each projection (prefiltered as scipy's mirror mode, taps
/// beyond the detector 0) at its line's detector coordinate. The reference for
/// `logpolar::record_backproject` (inside the object's disk).
#[cfg(test)]
pub fn backproject_spline(sinograms: &ArrayView3<f64>, g: &Geometry) -> Array3<f64> {
    use crate::ops::interpolate::{cpu::spline_filter1d, SplineMode};
    let coefficients = spline_filter1d(&sinograms.to_owned().into_dyn(), 3, 2, SplineMode::Mirror);
    let n = g.size;
    Array3::from_shape_fn((sinograms.dim().0, n, n), |(b, r, c)| {
        let (x, y) = g.pixel_centre(r, c);
        g.angles
            .iter()
            .enumerate()
            .map(|(a, &theta)| {
                let u = x * theta.cos() + y * theta.sin() + g.center;
                let base = u.floor();
                let w = cubic_weights(u - base);
                (0..4)
                    .filter_map(|k| {
                        let i = base as i64 - 1 + k as i64;
                        (0..g.detectors as i64).contains(&i).then(|| w[k] * coefficients[[b, a, i as usize]])
                    })
                    .sum::<f64>()
            })
            .sum()
    })
}

/// The filter's response at the `padded / 2 + 1` frequencies of a real transform of `padded`
/// detector samples: the ramp as the transform of its sampled spatial kernel (Kak and Slaney:
/// 1/4 at 0, −1/(πn)² at odd n, 0 at even n), times the window: scikit-image's
/// `_get_fourier_filter` of `iradon`.
pub fn filter_response(filter: Filter, padded: usize) -> Vec<f64> {
    let mut kernel = vec![Complex64::new(0.0, 0.0); padded];
    for (i, v) in kernel.iter_mut().enumerate() {
        let n = if i <= padded / 2 { i as f64 } else { i as f64 - padded as f64 };
        let value = if n == 0.0 {
            0.25
        } else if (n as i64) % 2 != 0 {
            -1.0 / (std::f64::consts::PI * n).powi(2)
        } else {
            0.0
        };
        *v = Complex64::new(value, 0.0);
    }
    FftPlanner::new().plan_fft_forward(padded).process(&mut kernel);
    (0..padded / 2 + 1)
        .map(|k| {
            let ramp = 2.0 * kernel[k].re;
            // As scikit-image's windows: ω = π × cycles per sample; numpy's symmetric Hamming and
            // Hann windows of `padded` points, centred on frequency 0.
            let omega = std::f64::consts::PI * k as f64 / padded as f64;
            let centred = ((k + padded / 2) % padded) as f64 / (padded as f64 - 1.0);
            let tau = 2.0 * std::f64::consts::PI;
            ramp * match filter {
                Filter::Ramp => 1.0,
                Filter::SheppLogan => {
                    if k == 0 {
                        1.0
                    } else {
                        omega.sin() / omega
                    }
                }
                Filter::Cosine => omega.cos(),
                Filter::Hamming => 0.54 - 0.46 * (tau * centred).cos(),
                Filter::Hann => 0.5 - 0.5 * (tau * centred).cos(),
            }
        })
        .collect()
}

/// Each projection filtered along the detector axis (zero-padded to `padded`), as FBP does.
pub fn filter_sinograms(sinograms: &ArrayView3<f64>, filter: Filter, padded: usize) -> Array3<f64> {
    let response = filter_response(filter, padded);
    let mut planner = FftPlanner::new();
    let (forward, inverse) = (planner.plan_fft_forward(padded), planner.plan_fft_inverse(padded));
    let detectors = sinograms.dim().2;
    let mut out = Array3::zeros(sinograms.dim());
    for (row, mut dst) in sinograms.rows().into_iter().zip(out.rows_mut()) {
        let mut line = vec![Complex64::new(0.0, 0.0); padded];
        for (l, &v) in line.iter_mut().zip(row) {
            *l = Complex64::new(v, 0.0);
        }
        forward.process(&mut line);
        for (k, l) in line.iter_mut().enumerate() {
            *l *= response[k.min(padded - k)];
        }
        inverse.process(&mut line);
        for (d, l) in dst.iter_mut().zip(&line[..detectors]) {
            *d = l.re / padded as f64;
        }
    }
    out
}

/// Filtered back-projection: the filtered sinograms back-projected, times π / (2 angles) (angles
/// equally spaced over [0, π); the filter's response is twice the ramp, as scikit-image's).
pub fn fbp(sinograms: &ArrayView3<f64>, g: &Geometry, filter: Filter) -> Array3<f64> {
    let filtered = filter_sinograms(sinograms, filter, g.padded_detectors());
    backproject(&filtered.view(), g) * (std::f64::consts::PI / (2.0 * g.angles.len() as f64))
}

/// `iterations` of MLEM from a constant 1: f ← f · R#(g / (Rf + ε)) / R#1, and the KL divergence
/// Σ (Rf − g) + Σ g ln(g / (Rf + ε)) of each iterate's projections before its update.
pub fn mlem(sinograms: &ArrayView3<f64>, g: &Geometry, iterations: usize, epsilon: f64) -> (Array3<f64>, Vec<f64>) {
    let batch = sinograms.dim().0;
    let mut f = Array3::from_elem((batch, g.size, g.size), 1.0);
    let norm = backproject(&Array3::from_elem(sinograms.dim(), 1.0).view(), g);
    let mut kl = Vec::new();
    for _ in 0..iterations {
        let p = project(&f.view(), g);
        kl.push(p.iter().zip(sinograms.iter()).map(|(&q, &y)| q - y + if y > 0.0 { y * (y / (q + epsilon)).ln() } else { 0.0 }).sum());
        let ratio = ndarray::Zip::from(sinograms).and(&p).map_collect(|&y, &q| y / (q + epsilon));
        let update = backproject(&ratio.view(), g);
        ndarray::Zip::from(&mut f).and(&update).and(&norm).for_each(|v, &u, &w| *v *= if w > 0.0 { u / w } else { 0.0 });
    }
    (f, kl)
}

/// Whether [`project`] and [`backproject`] are adjoint: ⟨Rf, s⟩ and ⟨f, R#s⟩.
#[cfg(test)]
pub fn inner_products(f: &ArrayView3<f64>, s: &ArrayView3<f64>, g: &Geometry) -> (f64, f64) {
    let rf = project(f, g);
    let bs = backproject(s, g);
    ((&rf * s).sum(), (&bs * f).sum())
}

/// The log-polar method in f64, step by step as the GPU takes it (ops::tomography::logpolar):
/// its reference, on grids in natural order (column m at φ = (m − ntheta/2)·dtheta).
#[cfg(test)]
pub mod logpolar {
    use std::f64::consts::PI;

    use ndarray::{Array2, Array3, ArrayView3, Axis};
    use num_complex::Complex64;
    use rustfft::FftPlanner;

    use super::super::logpolar::{angle_spans, grids, kernel_spectrum, radii, Grids, BETA, EXTRA_ROWS, SPANS};
    use super::super::Geometry;
    use crate::ops::interpolate::{cpu::spline_filter1d, SplineMode};

    /// The cubic B-spline with coefficients `c` at (row u, column v), taps beyond `c` 0.
    fn spline2(c: &Array2<f64>, u: f64, v: f64) -> f64 {
        let (rows, cols) = c.dim();
        if !(u > -2.0 && u < rows as f64 + 1.0 && v > -2.0 && v < cols as f64 + 1.0) {
            return 0.0;
        }
        let (fu, fv) = (u.floor(), v.floor());
        let (wu, wv) = (super::cubic_weights(u - fu), super::cubic_weights(v - fv));
        let mut sum = 0.0;
        for (i, wi) in wu.iter().enumerate() {
            let r = fu as i64 - 1 + i as i64;
            if !(0..rows as i64).contains(&r) {
                continue;
            }
            for (j, wj) in wv.iter().enumerate() {
                let k = fv as i64 - 1 + j as i64;
                if (0..cols as i64).contains(&k) {
                    sum += wi * wj * c[[r as usize, k as usize]];
                }
            }
        }
        sum
    }

    /// A kernel's whole spectrum (Hermitian in k_θ: the kernel is real).
    fn whole_spectrum(s: &Grids, sign: f64, power: f64) -> Array2<Complex64> {
        let (nrho, ntheta) = (s.nrho, s.ntheta);
        let half = kernel_spectrum(nrho, ntheta, nrho as f64 * s.drho, sign, power);
        let columns = ntheta / 2 + 1;
        Array2::from_shape_fn(
            (nrho, ntheta),
            |(r, k)| {
                if k < columns {
                    half[r * columns + k]
                } else {
                    half[((nrho - r) % nrho) * columns + (ntheta - k)].conj()
                }
            },
        )
    }

    /// ifft2(fft2(x) · z), real part.
    fn convolve(x: &Array2<f64>, z: &Array2<Complex64>) -> Array2<f64> {
        let (rows, cols) = x.dim();
        let mut planner = FftPlanner::new();
        let mut y = x.mapv(|v| Complex64::new(v, 0.0));
        let (fr, fc) = (planner.plan_fft_forward(rows), planner.plan_fft_forward(cols));
        let (ir, ic) = (planner.plan_fft_inverse(rows), planner.plan_fft_inverse(cols));
        let along = |y: &mut Array2<Complex64>, axis: usize, fft: &std::sync::Arc<dyn rustfft::Fft<f64>>| {
            for mut lane in y.lanes_mut(Axis(axis)) {
                let mut v = lane.to_vec();
                fft.process(&mut v);
                lane.iter_mut().zip(v).for_each(|(o, w)| *o = w);
            }
        };
        along(&mut y, 1, &fc);
        along(&mut y, 0, &fr);
        y *= z;
        along(&mut y, 1, &ic);
        along(&mut y, 0, &ir);
        y.mapv(|v| v.re / (rows * cols) as f64)
    }

    /// Back-projections (batch, N, N) of sinograms (batch, angles, detectors) by the log-polar
    /// method (`logpolar::unsuitable(g)` none): 0 outside the object's disk.
    pub fn backproject(sinograms: &ArrayView3<f64>, g: &Geometry) -> Array3<f64> {
        let s = grids(g);
        let (a_r, _) = radii();
        let (angles, detectors, n) = (g.angles.len(), g.detectors, g.size);
        let (nrho, ntheta, radius, e) = (s.nrho, s.ntheta, s.radius, EXTRA_ROWS);
        let kernel = whole_spectrum(&s, 1.0, 0.0);
        let (step, first) = (PI / angles as f64, g.angles[0].rem_euclid(PI));
        let mid = (n as f64 - 1.0) / 2.0;
        let mut out = Array3::zeros((sinograms.dim().0, n, n));
        for (b, sino) in sinograms.axis_iter(Axis(0)).enumerate() {
            let extended = Array2::from_shape_fn((angles + 2 * e, detectors), |(row, k)| {
                let a = row as i64 - e as i64;
                if a < 0 || a >= angles as i64 {
                    sino[[a.rem_euclid(angles as i64) as usize, detectors - 1 - k]]
                } else {
                    sino[[a as usize, k]]
                }
            });
            let c = spline_filter1d(&spline_filter1d(&extended.into_dyn(), 3, 0, SplineMode::Mirror), 3, 1, SplineMode::Mirror)
                .into_dimensionality()
                .expect("two axes");
            for span in 0..SPANS {
                let grid = Array2::from_shape_fn((nrho, ntheta), |(j, m)| {
                    if m < ntheta / 4 || m >= 3 * ntheta / 4 {
                        return 0.0;
                    }
                    let phi = (m as f64 - (ntheta / 2) as f64) * s.dtheta;
                    let a = (span as f64 * BETA + phi - first) / step;
                    let turns = (a / angles as f64).floor();
                    let t = radius * ((s.rho0 + j as f64 * s.drho).exp() - (1.0 - a_r) * phi.cos()) / a_r;
                    let t = if (turns as i64).rem_euclid(2) == 1 { -t } else { t };
                    spline2(&c, a - turns * angles as f64 + e as f64, t + g.center)
                });
                let coefficients = convolve(&grid, &kernel);
                let (sin, cos) = (span as f64 * BETA).sin_cos();
                for ((r, col), o) in out.index_axis_mut(Axis(0), b).indexed_iter_mut() {
                    let (x, y) = (col as f64 - mid, mid - r as f64);
                    if x * x + y * y > radius * radius {
                        continue;
                    }
                    let z = (a_r * (cos * x + sin * y) / radius + 1.0 - a_r, a_r * (cos * y - sin * x) / radius);
                    let (rho, phi) = (0.5 * (z.0 * z.0 + z.1 * z.1).ln(), z.1.atan2(z.0));
                    *o += spline2(&coefficients, (rho - s.rho0) / s.drho, phi / s.dtheta + (ntheta / 2) as f64) * angles as f64 / PI;
                }
            }
        }
        out
    }

    /// Projections (batch, angles, detectors) of images (batch, N, N) by the log-polar method:
    /// the image outside the object's disk unseen.
    pub fn project(images: &ArrayView3<f64>, g: &Geometry) -> Array3<f64> {
        let s = grids(g);
        let (a_r, _) = radii();
        let (angles, detectors, n) = (g.angles.len(), g.detectors, g.size);
        let (nrho, ntheta, radius) = (s.nrho, s.ntheta, s.radius);
        let kernel = whole_spectrum(&s, -1.0, 2.0);
        let table = angle_spans(g);
        let mid = (n as f64 - 1.0) / 2.0;
        let mut out = Array3::zeros((images.dim().0, angles, detectors));
        for (b, image) in images.axis_iter(Axis(0)).enumerate() {
            let c: Array2<f64> = spline_filter1d(&spline_filter1d(&image.to_owned().into_dyn(), 3, 0, SplineMode::Mirror), 3, 1, SplineMode::Mirror)
                .into_dimensionality()
                .expect("two axes");
            let spans: Vec<Array2<f64>> = (0..SPANS)
                .map(|span| {
                    let (sin, cos) = (span as f64 * BETA).sin_cos();
                    let grid = Array2::from_shape_fn((nrho, ntheta), |(j, m)| {
                        if m < ntheta / 4 || m >= 3 * ntheta / 4 {
                            return 0.0;
                        }
                        let phi = (m as f64 - (ntheta / 2) as f64) * s.dtheta;
                        let e = (s.rho0 + j as f64 * s.drho).exp();
                        let (tx, ty) = ((e * phi.cos() - (1.0 - a_r)) * radius / a_r, e * phi.sin() * radius / a_r);
                        if tx * tx + ty * ty > radius * radius {
                            return 0.0;
                        }
                        let (x, y) = (cos * tx - sin * ty, sin * tx + cos * ty);
                        spline2(&c, mid - y, x + mid)
                    });
                    convolve(&grid, &kernel)
                })
                .collect();
            for ((a, k), o) in out.index_axis_mut(Axis(0), b).indexed_iter_mut() {
                let (span, tp, flip) = table[a];
                let t = if flip { g.center - k as f64 } else { k as f64 - g.center };
                if t.abs() > radius {
                    continue;
                }
                let sz = a_r * t / radius + (1.0 - a_r) * tp.cos();
                *o = sz * radius / a_r * spline2(&spans[span], (sz.ln() - s.rho0) / s.drho, tp / s.dtheta + (ntheta / 2) as f64);
            }
        }
        out
    }
}
