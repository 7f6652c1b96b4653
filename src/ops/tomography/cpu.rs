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

/// The back-projection the log-polar method approximates: every pixel sums, over the angles,
/// the cubic B-spline interpolant of each projection (prefiltered as scipy's mirror mode, taps
/// beyond the detector 0) at its line's detector coordinate. The reference for
/// `logpolar::record_backproject` (inside the object's disk).
pub fn backproject_spline(sinograms: &ArrayView3<f64>, g: &Geometry) -> Array3<f64> {
    use crate::ops::interpolate::{cpu::spline_filter1d, SplineMode};
    let coefficients = spline_filter1d(&sinograms.to_owned().into_dyn(), 2, SplineMode::Mirror);
    let n = g.size;
    let cubic = |f: f64| {
        let h = 1.0 - f;
        [h * h * h / 6.0, (4.0 - 6.0 * f * f + 3.0 * f * f * f) / 6.0, (4.0 - 6.0 * h * h + 3.0 * h * h * h) / 6.0, f * f * f / 6.0]
    };
    Array3::from_shape_fn((sinograms.dim().0, n, n), |(b, r, c)| {
        let (x, y) = g.pixel_centre(r, c);
        g.angles
            .iter()
            .enumerate()
            .map(|(a, &theta)| {
                let u = x * theta.cos() + y * theta.sin() + g.center;
                let base = u.floor();
                let w = cubic(u - base);
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
        let value = if n == 0.0 { 0.25 } else if (n as i64) % 2 != 0 { -1.0 / (std::f64::consts::PI * n).powi(2) } else { 0.0 };
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
                Filter::SheppLogan => if k == 0 { 1.0 } else { omega.sin() / omega },
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
pub fn inner_products(f: &ArrayView3<f64>, s: &ArrayView3<f64>, g: &Geometry) -> (f64, f64) {
    let rf = project(f, g);
    let bs = backproject(s, g);
    ((&rf * s).sum(), (&bs * f).sum())
}
