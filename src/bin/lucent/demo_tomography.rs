//! The tomography panel of `lucent demo`: Toft's Shepp-Logan phantom, its exact sinogram made
//! Poisson-noisy, and its reconstructions by filtered back-projection and by MLEM.

use std::path::Path;
use std::time::Instant;

use lucent::phantom::{shepp_logan, Rng};
use lucent::tomography::{cpu, Filter, Geometry, EM_EPSILON};
use lucent::{io, Error, Gpu};
use ndarray::{Array2, Axis};
use serde_json::{json, Value};

use crate::report::ms_since;

/// The phantom's side, the angles, EM's iterations and the photons per unit line integral.
const SIZE: usize = 128;
const ANGLES: usize = 192;
const EM_ITERATIONS: usize = 30;
const PHOTONS: f64 = 20.0;

/// Reconstructs the noisy sinogram both ways, writes the panel into `dir` and returns the
/// report's section.
pub fn run(gpu: Option<&Gpu>, dir: &Path, seed: u64) -> Result<Value, Error> {
    let start = Instant::now();
    let g = Geometry::new(SIZE, Geometry::equally_spaced(ANGLES), None, None)?;
    let phantom = shepp_logan::image(SIZE);
    let exact = shepp_logan::sinogram(SIZE, &g.angles, &g.detector_coordinates());
    let mut rng = Rng::new(seed ^ 0x70_3060);
    let counts = exact.mapv(|v| rng.poisson(PHOTONS * v.max(0.0)) as f32);
    let t = Instant::now();
    let (fbp, (em, kl)) = match gpu {
        Some(gpu) => (lucent::tomography::fbp(gpu, &counts, &g, Filter::Hann)?, lucent::tomography::mlem(gpu, &counts, &g, EM_ITERATIONS)?),
        None => {
            let c = counts.mapv(f64::from).insert_axis(Axis(0));
            let fbp = cpu::fbp(&c.view(), &g, Filter::Hann).index_axis_move(Axis(0), 0).mapv(|v| v as f32);
            let (em, kl) = cpu::mlem(&c.view(), &g, EM_ITERATIONS, EM_EPSILON as f64);
            (fbp, (em.index_axis_move(Axis(0), 0).mapv(|v| v as f32), kl))
        }
    };
    let reconstruct_ms = ms_since(t);
    // In the phantom's units: the counts are PHOTONS per unit line integral.
    let (fbp, em) = (fbp / PHOTONS as f32, em / PHOTONS as f32);
    let error = |x: &Array2<f32>| {
        let num: f64 = x.iter().zip(&phantom).map(|(&a, &b)| (a as f64 - b).powi(2)).sum();
        (num / phantom.iter().map(|b| b * b).sum::<f64>()).sqrt()
    };
    let (fbp_error, em_error) = (error(&fbp), error(&em));
    let phantom32 = phantom.mapv(|v| v as f32);
    let clip = |x: &Array2<f32>| x.mapv(|v| v.clamp(0.0, 1.0));
    let sinogram = crate::demo::montage(&[counts.mapv(|v| v / PHOTONS as f32)]);
    let mut files = Vec::new();
    for (name, x) in [("tomography.png", &crate::demo::montage(&[phantom32.clone(), clip(&fbp), clip(&em)])), ("sinogram.png", &sinogram)] {
        io::write_real(dir.join(name), &x.view().into_dyn())?;
        files.push(name.to_string());
    }
    for (name, x) in [("phantom.npy", &phantom32), ("counts.npy", &counts), ("fbp.npy", &fbp), ("em.npy", &em)] {
        io::write_real(dir.join(name), &x.view().into_dyn())?;
        files.push(name.to_string());
    }
    Ok(json!({
        "size": SIZE,
        "angles": ANGLES,
        "photons_per_unit": PHOTONS,
        "relative_l2_error_vs_phantom": { "fbp_hann": fbp_error, "em": em_error },
        "em_iterations": EM_ITERATIONS,
        "kl_divergence": kl,
        "ms": { "total": ms_since(start), "reconstruct": reconstruct_ms },
        "files": files,
        "panels": "tomography.png: phantom | FBP (Hann) | MLEM, from Poisson counts; sinogram.png: the counts",
    }))
}
