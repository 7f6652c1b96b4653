//! A widefield specimen with known truth, as `lucent demo` images it: beads (sub-resolution
//! spheres) and filaments (smooth random curves) in photons per voxel, blurred by the vectorial
//! PSF of a 1.1 NA water objective at 0.52 µm (Aguet et al. 2009) and given Poisson noise.

use std::f64::consts::PI;

use ndarray::{ArrayD, IxDyn};

use crate::error::Result;
use crate::phantom::Rng;
use crate::psf::{Planes, PsfOptions};
use crate::restoration::{cpu, RlBoundary};

/// The voxel (µm): z step, then the pixel in y and x.
pub const VOXEL_UM: [f64; 3] = [0.25, 0.1, 0.1];
/// The PSF's planes and pixels.
pub const PSF_SIZE: [usize; 2] = [17, 25];
/// The shape (z, y, x) the bead and filament counts are set for: volumes of other shapes get as
/// many per voxel.
const DEMO_SHAPE: [usize; 3] = [32, 128, 128];

/// The microscope: a 1.1 NA water-dipping objective, 0.52 µm emission, the source at the
/// coverslip (the model `lucent deconvolve --psf-model` makes from the same options).
pub fn microscope() -> PsfOptions {
    PsfOptions {
        z: Planes::Count { nz: PSF_SIZE[0], dz: VOXEL_UM[0] },
        nx: PSF_SIZE[1],
        dxy: VOXEL_UM[1],
        na: 1.1,
        ni: 1.33,
        ni0: 1.33,
        ns: 1.33,
        wvl: 0.52,
        ..Default::default()
    }
}

/// The specimen as imaged: the truth, the PSF (summing to 1) and the blurred truth with Poisson
/// noise, all deterministic from the seed.
pub struct Imaged {
    pub truth: ArrayD<f64>,
    pub psf: ArrayD<f64>,
    pub observed: ArrayD<f32>,
}

/// The specimen of `shape` (z, y, x), blurred on the host in f64 (zero boundary) and counted.
pub fn imaged(shape: [usize; 3], seed: u64) -> Result<Imaged> {
    let mut rng = Rng::new(seed);
    let truth = specimen(shape, &mut rng);
    let psf = crate::psf::cpu::make_psf(&microscope())?.into_dyn();
    let psf = &psf / psf.sum();
    let blurred = cpu::convolve(&truth.view(), &psf.view(), RlBoundary::Zero)?;
    let observed = blurred.mapv(|v| rng.poisson(v.max(0.0)) as f32);
    Ok(Imaged { truth, psf, observed })
}

/// Beads and filaments in photons per voxel, drawn from `rng`.
pub fn specimen(shape: [usize; 3], rng: &mut Rng) -> ArrayD<f64> {
    let mut x = ArrayD::zeros(IxDyn(&shape));
    let per_voxel = shape.iter().product::<usize>() as f64 / DEMO_SHAPE.iter().product::<usize>() as f64;
    let (beads, filaments) = ((60.0 * per_voxel).round().max(1.0) as usize, (10.0 * per_voxel).round().max(1.0) as usize);
    let inside = |axis: usize, margin: f64, rng: &mut Rng| margin + rng.uniform() * (shape[axis] as f64 - 2.0 * margin);
    for _ in 0..beads {
        let at = [inside(0, 4.0, rng), inside(1, 6.0, rng), inside(2, 6.0, rng)];
        splat(&mut x, at, 0.8, 2000.0 + 3000.0 * rng.uniform());
    }
    for _ in 0..filaments {
        let mut at = [inside(0, 8.0, rng), inside(1, 10.0, rng), inside(2, 10.0, rng)];
        let mut heading = 2.0 * PI * rng.uniform();
        let mut tilt = 0.3 * (rng.uniform() - 0.5);
        let brightness = 200.0 + 300.0 * rng.uniform();
        for _ in 0..400 {
            // Half-voxel steps, turning slowly, mostly in the focal plane.
            heading += 0.08 * (rng.uniform() - 0.5);
            tilt = (tilt + 0.05 * (rng.uniform() - 0.5)).clamp(-0.4, 0.4);
            at[0] += 0.5 * tilt.sin();
            at[1] += 0.5 * tilt.cos() * heading.sin();
            at[2] += 0.5 * tilt.cos() * heading.cos();
            if (0..3).any(|d| at[d] < 1.0 || at[d] > shape[d] as f64 - 2.0) {
                break;
            }
            splat(&mut x, at, 0.7, brightness);
        }
    }
    x
}

/// Adds a normalised Gaussian of width `sigma` and total `amount` at `at` (z, y, x); the part
/// outside the volume is left out.
fn splat(x: &mut ArrayD<f64>, at: [f64; 3], sigma: f64, amount: f64) {
    let shape = x.shape().to_vec();
    let r = (3.0 * sigma).ceil() as isize;
    let norm = amount / (2.0 * PI * sigma * sigma).powf(1.5);
    let c: Vec<isize> = at.iter().map(|&v| v.round() as isize).collect();
    for dz in -r..=r {
        for dy in -r..=r {
            for dx in -r..=r {
                let p = [c[0] + dz, c[1] + dy, c[2] + dx];
                if (0..3).any(|d| p[d] < 0 || p[d] >= shape[d] as isize) {
                    continue;
                }
                let d2: f64 = (0..3).map(|d| (p[d] as f64 - at[d]).powi(2)).sum();
                x[[p[0] as usize, p[1] as usize, p[2] as usize]] += norm * (-d2 / (2.0 * sigma * sigma)).exp();
            }
        }
    }
}
