//! The tomography panel of `lucent demo`: Toft's Shepp-Logan phantom, its exact sinogram made
//! Poisson-noisy, and its reconstructions by filtered back-projection and by MLEM, with MLEM's
//! KL divergence per iteration.

use std::path::Path;
use std::time::Instant;

use lucent::phantom::{shepp_logan, Rng};
use lucent::tomography::{cpu, Filter, Geometry, EM_EPSILON};
use lucent::{Error, Gpu};
use ndarray::{Array2, Axis};
use serde_json::{json, Value};

use crate::demo::Size;
use crate::demo_figure::{self, Mark, Panel, Plot, Series, COLOURS};
use crate::demo_report::Section;
use crate::report::ms_since;

/// EM's iterations and the photons per unit line integral.
pub const EM_ITERATIONS: usize = 30;
pub const PHOTONS: f64 = 20.0;

/// The phantom's side and the angles.
fn shape(size: Size) -> (usize, usize) {
    match size {
        Size::Full => (128, 192),
        Size::Small => (64, 96),
    }
}

/// Reconstructs the noisy sinogram both ways, writes the figures into `dir` and returns the
/// report's section (JSON) and the page's.
pub fn run(gpu: Option<&Gpu>, dir: &Path, seed: u64, size: Size) -> Result<(Value, Section), Error> {
    let start = Instant::now();
    let (side, angles) = shape(size);
    let g = Geometry::new(side, Geometry::equally_spaced(angles), None, None)?;
    let phantom = shepp_logan::image(side);
    let exact = shepp_logan::sinogram(side, &g.angles, &g.detector_coordinates());
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
    let axes = ("row (pixels)", "column (pixels)");
    let unit = "attenuation (phantom units)";
    let reconstructions = [("Shepp-Logan phantom (truth)", &phantom32), ("FBP, Hann filter", &fbp), (&*format!("MLEM, {EM_ITERATIONS} iterations"), &em)]
        .map(|(title, x)| Panel::new(title, x.clone(), (1.0, 1.0), axes, unit).with_range((0.0, 1.0)));
    let kl_points = kl.iter().enumerate().map(|(k, &d)| (k as f64, d)).collect();
    let figures = vec![
        demo_figure::images(
            "tomography.png",
            "Reconstructions from Poisson counts",
            &format!("The phantom and its reconstructions from {angles} noisy projections over [0, π), on one grey scale from 0 to 1 (values outside shown black or white); enlarged by nearest neighbour."),
            &reconstructions,
            3,
        )?,
        demo_figure::images(
            "sinogram.png",
            "The sinogram of counts",
            &format!("Poisson counts, {PHOTONS} photons per unit line integral: one row per projection angle, one column per detector bin (ASTRA's parallel geometry). Enlarged by nearest neighbour."),
            &[Panel::new("Counts", counts.clone(), (180.0 / angles as f64, 1.0), ("angle (degrees)", "detector bin"), "counts")],
            1,
        )?,
        demo_figure::plots(
            "mlem_kl.png",
            "MLEM's KL divergence",
            "The Kullback-Leibler divergence of the counts g from each iterate's projections Rf, Σ (Rf − g) + Σ g ln(g / (Rf + ε)), computed with each iterate before its update (iterate 0 is the constant start). Maximising the Poisson likelihood, as MLEM does, is minimising this divergence; its logarithmic axis shows the late iterations' gains.",
            &[Plot {
                title: "KL divergence per MLEM iteration".into(),
                x: "iterate".into(),
                y: "KL divergence (counts)".into(),
                series: vec![Series { name: "D(g ‖ Rf)".into(), points: kl_points, mark: Mark::Line, colour: COLOURS[0] }],
                log_y: true,
            }],
            (1100, 420),
        )?,
    ];
    let arrays = [
        ("phantom.npy", phantom32.view().into_dyn()),
        ("counts.npy", counts.view().into_dyn()),
        ("fbp.npy", fbp.view().into_dyn()),
        ("em.npy", em.view().into_dyn()),
    ];
    let files = demo_figure::write_all(dir, &figures, &arrays)?;
    let total_ms = ms_since(start);
    let section = Section {
        title: "Tomography: filtered back-projection and MLEM".into(),
        text: format!(
            "Toft's Shepp-Logan phantom ({side}×{side}) and its exact sinogram at {angles} angles, as Poisson counts ({PHOTONS} photons per unit line integral), \
             reconstructed by filtered back-projection (Hann filter) and by {EM_ITERATIONS} MLEM iterations (the whole loop on the device)."
        ),
        numbers: vec![
            ("relative L2 error vs the phantom, FBP".into(), format!("{fbp_error:.3}")),
            ("relative L2 error vs the phantom, MLEM".into(), format!("{em_error:.3}")),
            ("KL divergence, first and last iterate".into(), format!("{:.4e} → {:.4e}", kl.first().copied().unwrap_or(f64::NAN), kl.last().copied().unwrap_or(f64::NAN))),
            ("FBP and MLEM".into(), format!("{reconstruct_ms:.0} ms")),
            ("whole part (simulation, figures, files)".into(), format!("{total_ms:.0} ms")),
        ],
        figures,
    };
    let json = json!({
        "size": side,
        "angles": angles,
        "photons_per_unit": PHOTONS,
        "relative_l2_error_vs_phantom": { "fbp_hann": fbp_error, "em": em_error },
        "em_iterations": EM_ITERATIONS,
        "kl_divergence": kl,
        "ms": { "total": total_ms, "reconstruct": reconstruct_ms },
        "files": files,
        "panels": "tomography.png: phantom | FBP (Hann) | MLEM, from Poisson counts; sinogram.png: the counts; mlem_kl.png: MLEM's KL divergence per iteration",
    });
    Ok((json, section))
}
