//! A synthetic AO-OCT retina imaged under eye motion, with the motion known: volumes of B-scans
//! (slow, depth, fast), each B-scan imaged at its own displaced position.
//!
//! The tissue is a function of continuous coordinates, so any displacement samples it exactly:
//! retinal layers under a tilted, gently curved surface (nerve fibres, plexiform layers, the
//! external limiting membrane, the photoreceptors' IS/OS and COST bands lit by a cone mosaic, the
//! RPE), blood vessels that brighten the nerve fibres and shadow the layers below, and speckle.
//! Speckle belongs to the tissue (a fixed random field sampled where the B-scan looks, as OCT's
//! speckle repeats where the eye returns) mixed with noise that differs from volume to volume.
//!
//! Eye motion per B-scan: drift (slow, smooth), tremor (white, sub-pixel), axial motion (a
//! heartbeat-like sine along depth) and micro-saccades (jumps of several pixels over two B-scans).
//! B-scan j of a moving volume is the tissue at (j + dy, z + dz, x + dx) for its shift
//! (dy, dz, dx): the shift that registers it onto the motion-free reference, as
//! [`crate::registration::register_volume`] reports it.

use ndarray::{Array3, Axis};
use rayon::prelude::*;

use super::Rng;

/// How the eye moves during one volume (pixels; one B-scan per time step).
#[derive(Clone, Debug, PartialEq)]
pub struct EyeMotion {
    /// Peak drift along the slow and fast axes.
    pub drift: f64,
    /// Standard deviation of the tremor, per axis and B-scan.
    pub tremor: f64,
    /// Amplitude of the axial (depth) motion.
    pub axial: f64,
    /// Number of micro-saccades, placed in the middle half of the volume.
    pub saccades: usize,
    /// Length of each micro-saccade's jump (slow and fast axes).
    pub saccade: f64,
}

impl Default for EyeMotion {
    fn default() -> EyeMotion {
        EyeMotion { drift: 2.5, tremor: 0.15, axial: 1.5, saccades: 1, saccade: 6.0 }
    }
}

/// Each B-scan's registering shift (slow, depth, fast) for `bscans` B-scans.
pub fn eye_motion(bscans: usize, motion: &EyeMotion, seed: u64) -> Vec<[f64; 3]> {
    let mut rng = Rng::new(seed ^ 0x0005_EED0_FE7E);
    let n = bscans.max(1) as f64;
    let tau = std::f64::consts::TAU;
    // Three smooth harmonics per lateral axis, weights 1, 1/2, 1/3, scaled to the drift.
    let mut harmonics = [[(0.0, 0.0); 3]; 2];
    for axis in &mut harmonics {
        for (k, h) in axis.iter_mut().enumerate() {
            *h = (motion.drift / (k as f64 + 1.0) / 1.83, tau * rng.uniform());
        }
    }
    let axial_phase = tau * rng.uniform();
    let saccades: Vec<(f64, f64, f64)> = (0..motion.saccades)
        .map(|_| {
            let at = n * (0.25 + 0.5 * rng.uniform());
            let angle = tau * rng.uniform();
            (at, motion.saccade * angle.cos(), motion.saccade * angle.sin())
        })
        .collect();
    (0..bscans)
        .map(|j| {
            let t = j as f64;
            let drift =
                |axis: usize| harmonics[axis].iter().enumerate().map(|(k, &(a, phase))| a * (tau * (k + 1) as f64 * t / (1.3 * n) + phase).sin()).sum::<f64>();
            let mut shift = [drift(0), motion.axial * (tau * 2.5 * t / n + axial_phase).sin(), drift(1)];
            for &(at, dy, dx) in &saccades {
                // The jump takes two B-scans.
                let f = ((t - at) / 2.0).clamp(0.0, 1.0);
                shift[0] += f * dy;
                shift[2] += f * dx;
            }
            shift[0] += motion.tremor * rng.normal();
            shift[1] += 0.5 * motion.tremor * rng.normal();
            shift[2] += motion.tremor * rng.normal();
            shift
        })
        .collect()
}

/// One retina: what stays the same from volume to volume.
#[derive(Clone, Debug)]
pub struct Retina {
    seed: u64,
    depth: f64,
    width: f64,
    slow: f64,
    vessels: Vec<Vessel>,
    curvature_phase: f64,
}

/// A vessel's centre line x = x0 + slope·y + amp·sin(2π y / period + phase), and its width.
#[derive(Clone, Debug)]
struct Vessel {
    x0: f64,
    slope: f64,
    amp: f64,
    period: f64,
    phase: f64,
    width: f64,
}

/// Cone spacing and radius (pixels).
const CONE_SPACING: f64 = 6.0;
const CONE_SIGMA: f64 = 1.2;

impl Retina {
    /// A retina for volumes of `shape` (slow, depth, fast).
    pub fn new(shape: [usize; 3], seed: u64) -> Retina {
        let mut rng = Rng::new(seed ^ 0x0007_E71A);
        let [slow, depth, width] = shape.map(|n| n as f64);
        let vessels = (0..3)
            .map(|_| Vessel {
                x0: width * rng.uniform(),
                slope: 0.6 * (rng.uniform() - 0.5),
                amp: 3.0 + 6.0 * rng.uniform(),
                period: slow.max(width) * (0.5 + rng.uniform()),
                phase: std::f64::consts::TAU * rng.uniform(),
                width: 1.5 + 2.0 * rng.uniform(),
            })
            .collect();
        Retina { seed, depth, width, slow, vessels, curvature_phase: std::f64::consts::TAU * rng.uniform() }
    }

    /// Reflectance without speckle at tissue position (y, z, x) given the en-face terms.
    fn layers(&self, z: f64, surface: f64, cones: f64, vessel: f64) -> f64 {
        let (thin, thick) = ((self.depth / 200.0).max(0.8), (self.depth / 60.0).max(1.5));
        let band = |offset: f64, sigma: f64| {
            let d = (z - surface - offset * self.depth) / sigma;
            (-0.5 * d * d).exp()
        };
        let shadow = 1.0 - 0.7 * vessel;
        let inner = 0.9 * (1.0 + 0.6 * vessel) * band(0.0, thick) + 0.35 * band(0.12, 2.0 * thick);
        let outer =
            0.4 * band(0.3, thick) + 0.3 * band(0.5, thin) + (1.0 * band(0.56, thin) + 0.8 * band(0.62, thin)) * (0.25 + cones) + 0.7 * band(0.68, thick);
        0.03 + inner + shadow * outer
    }

    /// The retina's surface depth under en-face position (y, x).
    fn surface(&self, y: f64, x: f64) -> f64 {
        self.depth * (0.18 + 0.03 * (std::f64::consts::TAU * y / (1.7 * self.slow) + self.curvature_phase).sin()) + 0.02 * (x - 0.5 * self.width)
    }

    /// The cone mosaic's brightness at en-face position (y, x): a jittered lattice of Gaussians.
    fn cones(&self, y: f64, x: f64) -> f64 {
        let (cy, cx) = ((y / CONE_SPACING).floor() as i64, (x / CONE_SPACING).floor() as i64);
        let mut sum = 0.0;
        for i in cy - 1..=cy + 1 {
            for k in cx - 1..=cx + 1 {
                let h = hash(self.seed, i, k, 7);
                let jy = unit(h);
                let jx = unit(h >> 21);
                let brightness = 0.5 + unit(h >> 42);
                let (py, px) = ((i as f64 + 0.2 + 0.6 * jy) * CONE_SPACING, (k as f64 + 0.2 + 0.6 * jx) * CONE_SPACING);
                let d2 = (y - py).powi(2) + (x - px).powi(2);
                sum += brightness * (-0.5 * d2 / (CONE_SIGMA * CONE_SIGMA)).exp();
            }
        }
        sum
    }

    fn vessels(&self, y: f64, x: f64) -> f64 {
        self.vessels
            .iter()
            .map(|v| {
                let d = (x - v.x0 - v.slope * y - v.amp * (std::f64::consts::TAU * y / v.period + v.phase).sin()) / v.width;
                (-0.5 * d * d).exp()
            })
            .sum::<f64>()
            .min(1.0)
    }

    /// The tissue's own speckle at (y, z, x): exponential values on the integer lattice,
    /// interpolated trilinearly.
    fn speckle(&self, y: f64, z: f64, x: f64) -> f64 {
        let (y0, z0, x0) = (y.floor(), z.floor(), x.floor());
        let (fy, fz, fx) = (y - y0, z - z0, x - x0);
        let mut sum = 0.0;
        for (a, wy) in [(0, 1.0 - fy), (1, fy)] {
            for (b, wz) in [(0, 1.0 - fz), (1, fz)] {
                for (c, wx) in [(0, 1.0 - fx), (1, fx)] {
                    let h = hash(self.seed ^ ((z0 as i64 + b) as u64).wrapping_mul(0x9E37_79B9), y0 as i64 + a, x0 as i64 + c, 11);
                    sum += wy * wz * wx * -(1.0 - unit(h)).ln();
                }
            }
        }
        sum
    }

    /// A volume of `bscans` = motion.len() B-scans of `depth` × `width`, B-scan j imaged at its
    /// shift `motion[j]` (slow, depth, fast); the volume's own noise drawn from `noise_seed`.
    pub fn image(&self, motion: &[[f64; 3]], noise_seed: u64) -> Array3<f32> {
        let (depth, width) = (self.depth as usize, self.width as usize);
        let mut out = Array3::<f32>::zeros((motion.len(), depth, width));
        out.axis_iter_mut(Axis(0)).into_par_iter().enumerate().for_each(|(j, mut bscan)| {
            let mut rng = Rng::new(noise_seed.wrapping_mul(0x100_0000_01B3) ^ j as u64);
            let [dy, dz, dx] = motion[j];
            let y = j as f64 + dy;
            for i in 0..width {
                let x = i as f64 + dx;
                let (surface, cones, vessel) = (self.surface(y, x), self.cones(y, x), self.vessels(y, x));
                for k in 0..depth {
                    let z = k as f64 + dz;
                    // Gamma(2, 1/2) noise: the mean of two exponentials.
                    let own = -0.5 * ((1.0 - rng.uniform()).ln() + (1.0 - rng.uniform()).ln());
                    let speckle = 0.6 * self.speckle(y, z, x) + 0.4 * own;
                    bscan[[k, i]] = (self.layers(z, surface, cones, vessel) * speckle + 0.02 * rng.normal()) as f32;
                }
            }
        });
        out
    }
}

/// A deterministic 64-bit hash of a seed and two lattice coordinates (splitmix64 finaliser).
fn hash(seed: u64, a: i64, b: i64, salt: u64) -> u64 {
    let mut h =
        seed ^ (a as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (b as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F) ^ salt.wrapping_mul(0x1656_67B1_9E37_79F9);
    h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    h ^ (h >> 31)
}

/// The low 21 bits of `h` as a fraction in [0, 1).
fn unit(h: u64) -> f64 {
    (h & 0x1F_FFFF) as f64 / (1u64 << 21) as f64
}

/// A reference volume (no motion) and `count` moving volumes of one retina, each with its own
/// eye motion (the truth, per B-scan) and noise.
pub struct Series {
    pub reference: Array3<f32>,
    pub moving: Vec<Array3<f32>>,
    pub truth: Vec<Vec<[f64; 3]>>,
}

impl Retina {
    /// The series' reference volume: no motion, noise drawn from `seed`.
    pub fn reference(&self, seed: u64) -> Array3<f32> {
        self.image(&vec![[0.0; 3]; self.slow as usize], seed.wrapping_add(1))
    }

    /// The series' moving volume `index` and its true motion, both drawn from `seed`.
    pub fn moving(&self, index: usize, motion: &EyeMotion, seed: u64) -> (Array3<f32>, Vec<[f64; 3]>) {
        let truth = eye_motion(self.slow as usize, motion, seed.wrapping_add(100 + index as u64));
        (self.image(&truth, seed.wrapping_add(200 + index as u64)), truth)
    }
}

/// [`Series`] of volumes of `shape` (slow, depth, fast).
pub fn series(shape: [usize; 3], count: usize, motion: &EyeMotion, seed: u64) -> Series {
    let retina = Retina::new(shape, seed);
    let (moving, truth) = (0..count).map(|v| retina.moving(v, motion, seed)).unzip();
    Series { reference: retina.reference(seed), moving, truth }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bscan_is_the_tissue_where_its_shift_puts_it() {
        // Without the volume's own noise, a B-scan shifted by whole pixels along the slow axis is
        // the reference's B-scan there up to the own-noise terms: compare their structure.
        let retina = Retina::new([24, 40, 32], 3);
        let reference = retina.image(&vec![[0.0; 3]; 24], 1);
        let moved = retina.image(&vec![[5.0, 0.0, 0.0]; 24], 2);
        let corr = |a: ndarray::ArrayView2<f32>, b: ndarray::ArrayView2<f32>| {
            let (ma, mb) = (a.mean().unwrap(), b.mean().unwrap());
            let num: f32 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
            let den = (a.iter().map(|x| (x - ma).powi(2)).sum::<f32>() * b.iter().map(|y| (y - mb).powi(2)).sum::<f32>()).sqrt();
            num / den
        };
        let same = corr(moved.index_axis(Axis(0), 3), reference.index_axis(Axis(0), 8));
        let other = corr(moved.index_axis(Axis(0), 3), reference.index_axis(Axis(0), 3));
        assert!(same > 0.6 && same > other + 0.2, "matching B-scans correlate {same}, others {other}");
    }

    #[test]
    fn motion_is_deterministic_and_has_its_saccade() {
        let motion = EyeMotion { tremor: 0.0, ..EyeMotion::default() };
        let a = eye_motion(200, &motion, 9);
        assert_eq!(a, eye_motion(200, &motion, 9));
        assert_ne!(a, eye_motion(200, &motion, 10));
        let jump = a.windows(3).map(|w| (w[2][0] - w[0][0]).hypot(w[2][2] - w[0][2])).fold(0.0, f64::max);
        assert!(jump > 0.8 * motion.saccade, "largest two-step jump {jump}");
        assert!(a.iter().all(|s| s[1].abs() <= motion.axial + 1e-12));
    }
}
