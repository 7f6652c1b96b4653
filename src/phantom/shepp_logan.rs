//! Toft's modified Shepp-Logan phantom (the ten ellipses of MATLAB's `phantom('Modified
//! Shepp-Logan')`), values in [0, 1], and its exact parallel-beam sinogram; a Gaussian and its
//! exact projections. Geometry as `lucent::tomography`'s: pixel (r, c) of an N×N image has its
//! centre at x = c − (N−1)/2, y = (N−1)/2 − r (pixel units, y up); the ray at angle θ and
//! detector coordinate t is the line x cos θ + y sin θ = t.

use ndarray::Array2;

/// (intensity, semi-axis a, semi-axis b, centre x, centre y, rotation in degrees), in units of
/// half the image's width.
const ELLIPSES: [[f64; 6]; 10] = [
    [1.0, 0.69, 0.92, 0.0, 0.0, 0.0],
    [-0.8, 0.6624, 0.874, 0.0, -0.0184, 0.0],
    [-0.2, 0.11, 0.31, 0.22, 0.0, -18.0],
    [-0.2, 0.16, 0.41, -0.22, 0.0, 18.0],
    [0.1, 0.21, 0.25, 0.0, 0.35, 0.0],
    [0.1, 0.046, 0.046, 0.0, 0.1, 0.0],
    [0.1, 0.046, 0.046, 0.0, -0.1, 0.0],
    [0.1, 0.046, 0.023, -0.08, -0.605, 0.0],
    [0.1, 0.023, 0.023, 0.0, -0.606, 0.0],
    [0.1, 0.023, 0.046, 0.06, -0.605, 0.0],
];

/// One ellipse in pixel units: intensity, semi-axes, centre, rotation (radians).
struct Ellipse {
    value: f64,
    a: f64,
    b: f64,
    x0: f64,
    y0: f64,
    phi: f64,
}

fn ellipses(n: usize) -> impl Iterator<Item = Ellipse> {
    let half = n as f64 / 2.0;
    ELLIPSES.iter().map(move |&[value, a, b, x0, y0, degrees]| Ellipse {
        value,
        a: a * half,
        b: b * half,
        x0: x0 * half,
        y0: y0 * half,
        phi: degrees.to_radians(),
    })
}

/// The pixel centre (x, y) of (r, c) in an n×n image.
pub fn pixel_centre(n: usize, r: usize, c: usize) -> (f64, f64) {
    let mid = (n as f64 - 1.0) / 2.0;
    (c as f64 - mid, mid - r as f64)
}

/// The phantom sampled at the pixel centres of an n×n image.
pub fn image(n: usize) -> Array2<f64> {
    let all: Vec<Ellipse> = ellipses(n).collect();
    Array2::from_shape_fn((n, n), |(r, c)| {
        let (x, y) = pixel_centre(n, r, c);
        all.iter()
            .filter(|e| {
                let (dx, dy) = (x - e.x0, y - e.y0);
                let (u, v) = (dx * e.phi.cos() + dy * e.phi.sin(), -dx * e.phi.sin() + dy * e.phi.cos());
                (u / e.a).powi(2) + (v / e.b).powi(2) <= 1.0
            })
            .map(|e| e.value)
            .sum()
    })
}

/// The exact line integrals of the n×n phantom at `angles` (radians) and detector coordinates
/// `t` (pixel units): [angle][detector].
pub fn sinogram(n: usize, angles: &[f64], t: &[f64]) -> Array2<f64> {
    let all: Vec<Ellipse> = ellipses(n).collect();
    Array2::from_shape_fn((angles.len(), t.len()), |(i, k)| {
        let theta = angles[i];
        all.iter()
            .map(|e| {
                let s2 = (e.a * (theta - e.phi).cos()).powi(2) + (e.b * (theta - e.phi).sin()).powi(2);
                let tau = t[k] - (e.x0 * theta.cos() + e.y0 * theta.sin());
                if tau * tau < s2 {
                    2.0 * e.value * e.a * e.b / s2 * (s2 - tau * tau).sqrt()
                } else {
                    0.0
                }
            })
            .sum()
    })
}

/// A Gaussian exp(−((x−x0)² + (y−y0)²) / 2σ²) at the pixel centres of an n×n image.
pub fn gaussian(n: usize, centre: (f64, f64), sigma: f64) -> Array2<f64> {
    Array2::from_shape_fn((n, n), |(r, c)| {
        let (x, y) = pixel_centre(n, r, c);
        (-((x - centre.0).powi(2) + (y - centre.1).powi(2)) / (2.0 * sigma * sigma)).exp()
    })
}

/// The Gaussian's exact projections: σ√(2π) exp(−(t − t0)² / 2σ²), t0 the centre's coordinate.
pub fn gaussian_sinogram(centre: (f64, f64), sigma: f64, angles: &[f64], t: &[f64]) -> Array2<f64> {
    Array2::from_shape_fn((angles.len(), t.len()), |(i, k)| {
        let t0 = centre.0 * angles[i].cos() + centre.1 * angles[i].sin();
        sigma * (2.0 * std::f64::consts::PI).sqrt() * (-(t[k] - t0).powi(2) / (2.0 * sigma * sigma)).exp()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_lie_in_zero_to_one_and_projections_carry_the_mass() {
        let n = 128;
        let img = image(n);
        assert!(img.iter().all(|&v| (-1e-12..=1.0 + 1e-12).contains(&v)));
        assert!((img.iter().cloned().fold(f64::MIN, f64::max) - 1.0).abs() < 1e-12);
        // Each exact projection's integral is the phantom's area integral.
        let area: f64 = ellipses(n).map(|e| e.value * std::f64::consts::PI * e.a * e.b).sum();
        let t: Vec<f64> = (0..4 * n).map(|k| (k as f64 - (4 * n - 1) as f64 / 2.0) * 0.5).collect();
        let sino = sinogram(n, &[0.0, 0.7, 2.0], &t);
        for row in sino.rows() {
            let integral: f64 = row.sum() * 0.5;
            assert!((integral - area).abs() < 2e-3 * area, "{integral} vs {area}");
        }
        // Pixel sums approach the area.
        assert!((img.sum() - area).abs() < 0.02 * area);
    }
}
