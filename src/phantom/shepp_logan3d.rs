//! The 3D modified Shepp-Logan phantom (the ten ellipsoids of Schabel's `phantom3d`, Toft's
//! intensities, values in [0, 1]) and its exact line integrals, in world coordinates: the
//! phantom's unit is `radius` world units, and its y axis points along −y, so that a slice of
//! an ASTRA volume (rows along +y) shows it as the 2D phantom ([`super::shepp_logan`]) is shown.

use ndarray::Array3;

/// (intensity, semi-axes a, b, c, centre x, y, z, Euler angles φ, θ, ψ in degrees).
const ELLIPSOIDS: [[f64; 10]; 10] = [
    [1.0, 0.69, 0.92, 0.81, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    [-0.8, 0.6624, 0.874, 0.78, 0.0, -0.0184, 0.0, 0.0, 0.0, 0.0],
    [-0.2, 0.11, 0.31, 0.22, 0.22, 0.0, 0.0, -18.0, 0.0, 10.0],
    [-0.2, 0.16, 0.41, 0.28, -0.22, 0.0, 0.0, 18.0, 0.0, 10.0],
    [0.1, 0.21, 0.25, 0.41, 0.0, 0.35, -0.15, 0.0, 0.0, 0.0],
    [0.1, 0.046, 0.046, 0.05, 0.0, 0.1, 0.25, 0.0, 0.0, 0.0],
    [0.1, 0.046, 0.046, 0.05, 0.0, -0.1, 0.25, 0.0, 0.0, 0.0],
    [0.1, 0.046, 0.023, 0.05, -0.08, -0.605, 0.0, 0.0, 0.0, 0.0],
    [0.1, 0.023, 0.023, 0.02, 0.0, -0.606, 0.0, 0.0, 0.0, 0.0],
    [0.1, 0.023, 0.046, 0.02, 0.06, -0.605, 0.0, 0.0, 0.0, 0.0],
];

/// One ellipsoid: its intensity, and the map x ↦ A (x − c) that sends it onto the unit ball.
struct Ellipsoid {
    value: f64,
    centre: [f64; 3],
    a: [[f64; 3]; 3],
}

/// The phantom scaled to `radius` world units.
pub struct Phantom {
    ellipsoids: Vec<Ellipsoid>,
}

impl Phantom {
    pub fn new(radius: f64) -> Phantom {
        let ellipsoids = ELLIPSOIDS
            .iter()
            .map(|e| {
                let [phi, theta, psi] = [e[7], e[8], e[9]].map(f64::to_radians);
                let (cf, sf, ct, st, cp, sp) = (phi.cos(), phi.sin(), theta.cos(), theta.sin(), psi.cos(), psi.sin());
                // Schabel's rotation (z-x-z Euler angles).
                let r = [
                    [cp * cf - ct * sf * sp, cp * sf + ct * cf * sp, sp * st],
                    [-sp * cf - ct * sf * cp, -sp * sf + ct * cf * cp, cp * st],
                    [st * sf, -st * cf, ct],
                ];
                let axes = [e[1], e[2], e[3]];
                // World → phantom units (y mirrored) → rotated → divided by the semi-axes.
                let flip = [1.0, -1.0, 1.0];
                let a = std::array::from_fn(|i| std::array::from_fn(|j| r[i][j] * flip[j] / (axes[i] * radius)));
                Ellipsoid { value: e[0], centre: [e[4] * radius, -e[5] * radius, e[6] * radius], a }
            })
            .collect();
        Phantom { ellipsoids }
    }

    /// The phantom's value at a world point.
    pub fn at(&self, x: [f64; 3]) -> f64 {
        self.ellipsoids
            .iter()
            .filter(|e| {
                let d = [0, 1, 2].map(|k| x[k] - e.centre[k]);
                (0..3).map(|i| (0..3).map(|j| e.a[i][j] * d[j]).sum::<f64>().powi(2)).sum::<f64>() <= 1.0
            })
            .map(|e| e.value)
            .sum()
    }

    /// The integral along the whole line through `origin` in direction `dir` (world units).
    pub fn line_integral(&self, origin: [f64; 3], dir: [f64; 3]) -> f64 {
        let length = dir.iter().map(|v| v * v).sum::<f64>().sqrt();
        self.ellipsoids
            .iter()
            .map(|e| {
                let apply = |v: [f64; 3]| -> [f64; 3] { std::array::from_fn(|i| (0..3).map(|j| e.a[i][j] * v[j]).sum()) };
                let p = apply([0, 1, 2].map(|k| origin[k] - e.centre[k]));
                let q = apply(dir);
                let (pq, qq, pp) =
                    (p.iter().zip(&q).map(|(a, b)| a * b).sum::<f64>(), q.iter().map(|v| v * v).sum::<f64>(), p.iter().map(|v| v * v).sum::<f64>());
                let disc = pq * pq - qq * (pp - 1.0);
                if disc <= 0.0 || qq == 0.0 {
                    0.0
                } else {
                    e.value * 2.0 * disc.sqrt() / qq * length
                }
            })
            .sum()
    }

    /// The phantom averaged over `sub`³ points in each voxel of a volume of `shape` (Z, Y, X)
    /// spanning `window` ((min, max) of x, y, z; ASTRA's voxel centres).
    pub fn volume(&self, shape: [usize; 3], window: [(f64, f64); 3], sub: usize) -> Array3<f64> {
        let [nz, ny, nx] = shape;
        let voxel = [(window[0].1 - window[0].0) / nx as f64, (window[1].1 - window[1].0) / ny as f64, (window[2].1 - window[2].0) / nz as f64];
        let sub = sub.max(1);
        let offsets: Vec<f64> = (0..sub).map(|i| (i as f64 + 0.5) / sub as f64).collect();
        let mut out = Array3::zeros((nz, ny, nx));
        ndarray::Zip::indexed(&mut out).par_for_each(|(k, j, i), out| {
            let mut sum = 0.0;
            for &oz in &offsets {
                for &oy in &offsets {
                    for &ox in &offsets {
                        let x = [window[0].0 + (i as f64 + ox) * voxel[0], window[1].0 + (j as f64 + oy) * voxel[1], window[2].0 + (k as f64 + oz) * voxel[2]];
                        sum += self.at(x);
                    }
                }
            }
            *out = sum / (sub * sub * sub) as f64;
        });
        out
    }

    /// The exact projections (rows, angles, cols): each detector pixel's central ray's integral,
    /// per projection (source or rays' direction, detector centre, u, v) in world coordinates
    /// (ASTRA's vector geometries: pixel (r, c) at d + (c − cols/2 + ½) u + (r − rows/2 + ½) v),
    /// rays from the source if `divergent`, else parallel.
    pub fn projections(&self, vectors: &[[[f64; 3]; 4]], (rows, cols): (usize, usize), divergent: bool) -> Array3<f64> {
        self.projections_of((rows, vectors.len(), cols), |a, r, c| {
            let [s, d, u, v] = vectors[a];
            let (fc, fr) = (c as f64 - cols as f64 / 2.0 + 0.5, r as f64 - rows as f64 / 2.0 + 0.5);
            let pixel: [f64; 3] = std::array::from_fn(|k| d[k] + fc * u[k] + fr * v[k]);
            if divergent {
                (s, std::array::from_fn(|k| pixel[k] - s[k]))
            } else {
                (pixel, s)
            }
        })
    }

    /// The exact projections (rows, angles, cols) along the rays `ray(angle, row, col)` =
    /// (origin, direction) in world coordinates (any detector's pixels).
    pub fn projections_of(&self, shape: (usize, usize, usize), ray: impl Fn(usize, usize, usize) -> ([f64; 3], [f64; 3]) + Sync) -> Array3<f64> {
        let mut out = Array3::zeros(shape);
        ndarray::Zip::indexed(&mut out).par_for_each(|(r, a, c), out| {
            let (origin, dir) = ray(a, r, c);
            *out = self.line_integral(origin, dir);
        });
        out
    }

    /// The phantom's radius for a volume window ((min, max) of x, y, …): half the smaller of its
    /// x and y extents (a thin slab along z holds the phantom's middle).
    pub fn radius_for(window: &[(f64, f64)]) -> f64 {
        window.iter().take(2).map(|(lo, hi)| (hi - lo) / 2.0).fold(f64::MAX, f64::min)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line integral against the sum of the phantom sampled finely along the line.
    #[test]
    fn line_integrals_are_the_sampled_sums() {
        let p = Phantom::new(50.0);
        for (o, d) in [([-80.0, 3.0, 1.0], [1.0, 0.1, 0.05]), ([10.0, -90.0, -5.0], [-0.1, 1.0, 0.2]), ([0.0, 0.0, -70.0], [0.05, 0.01, 1.0])] {
            let exact = p.line_integral(o, d);
            let steps = 400_000;
            let length = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
            let dt = 200.0 / steps as f64 / length;
            let sampled: f64 = (0..steps).map(|i| p.at(std::array::from_fn(|k| o[k] + (i as f64 + 0.5) * dt * d[k]))).sum::<f64>() * dt * length;
            assert!((exact - sampled).abs() < 1e-3 * exact.abs().max(1.0), "{exact} vs {sampled}");
            assert!(exact > 1.0);
        }
    }
}
