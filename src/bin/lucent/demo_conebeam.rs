//! The cone-beam panel of `lucent demo`: the 3D Shepp-Logan phantom seen by a circular cone
//! beam, its exact projections with Gaussian noise, reconstructed by FDK and by SIRT (non-negative),
//! with SIRT's residual per iteration. GPU only (its CPU reference takes minutes).

use std::path::Path;
use std::time::Instant;

use lucent::phantom::Rng;
use lucent::tomography::{self as tomo, Algorithm, Filter, IterativeOptions, ProjectionGeometry, VolumeGeometry};
use lucent::{Error, Gpu};
use ndarray::{Array2, Array3, Axis};
use serde_json::{json, Value};

use crate::demo::Size;
use crate::demo_figure::{self, Mark, Panel, Plot, Series, COLOURS};
use crate::demo_report::Section;
use crate::report::ms_since;

/// SIRT's iterations, and the noise's standard deviation relative to the mean projection.
pub const SIRT_ITERATIONS: usize = 40;
pub const NOISE: f64 = 0.03;

/// The volume's side and the projections.
fn shape(size: Size) -> (usize, usize) {
    match size {
        Size::Full => (96, 120),
        Size::Small => (48, 60),
    }
}

fn relative_error(x: &Array3<f32>, truth: &Array3<f64>) -> f64 {
    let num: f64 = x.iter().zip(truth).map(|(&a, &b)| (a as f64 - b).powi(2)).sum();
    (num / truth.iter().map(|b| b * b).sum::<f64>()).sqrt()
}

/// The middle axial (z) and coronal (y) slices of a volume.
fn slices(x: &Array3<f32>) -> [Array2<f32>; 2] {
    let (z, y, _) = x.dim();
    [x.index_axis(Axis(0), z / 2).to_owned(), x.index_axis(Axis(1), y / 2).to_owned()]
}

/// Simulates and reconstructs on `gpu`, writes the figures into `dir`; None without a GPU.
pub fn run(gpu: Option<&Gpu>, dir: &Path, seed: u64, size: Size) -> Result<(Value, Option<Section>), Error> {
    let Some(gpu) = gpu else { return Ok((Value::Null, None)) };
    let start = Instant::now();
    let (n, count) = shape(size);
    let v = VolumeGeometry::new(n, n, Some(n))?;
    let angles: Vec<f64> = (0..count).map(|i| i as f64 * std::f64::consts::TAU / count as f64).collect();
    // Source 2n from the centre, detector n beyond it: magnification 1.5, pixels of 1.5.
    let g =
        ProjectionGeometry::Cone { spacing_x: 1.5, spacing_y: 1.5, rows: n, cols: n + n / 4, angles, source_origin: 2.0 * n as f64, origin_detector: n as f64 };
    let truth = tomo::shepp_logan_volume(&v, 2)?;
    let exact = tomo::shepp_logan_projections(&v, &g)?;
    let mean = exact.iter().sum::<f64>() / exact.len() as f64;
    let mut rng = Rng::new(seed ^ 0xc0_4e);
    let noisy = exact.mapv(|p| (p + NOISE * mean * rng.normal()) as f32).into_dyn();
    let t = Instant::now();
    let fdk = tomo::fdk(gpu, &noisy.view(), &g, &v, Filter::Hann)?;
    let fdk_ms = ms_since(t);
    let t = Instant::now();
    // The voxel-driven back-projector, as ASTRA's SIRT3D_CUDA (the matched one costs ~4× more).
    let options = IterativeOptions { iterations: SIRT_ITERATIONS, min: Some(0.0), projector: lucent::tomography::Projector::Astra, ..Default::default() };
    let sirt = tomo::iterative(gpu, Algorithm::Sirt, &noisy.view(), &g, &v, &options, &mut |_| {})?;
    let sirt_ms = ms_since(t);
    let as3 = |x: ndarray::ArrayD<f32>| x.into_dimensionality::<ndarray::Ix3>().map_err(|e| Error::Shape(e.to_string()));
    let (fdk, sirt_volume) = (as3(fdk)?, as3(sirt.volume)?);
    let (fdk_error, sirt_error) = (relative_error(&fdk, &truth), relative_error(&sirt_volume, &truth));
    let truth32 = truth.mapv(|x| x as f32);
    let unit = "attenuation (phantom units)";
    // Three columns (the phantom, FDK, SIRT): the axial slices above the coronal ones.
    let sirt_name = format!("SIRT, {SIRT_ITERATIONS} iterations");
    let volumes = [("phantom", &truth32), ("FDK (Hann)", &fdk), (sirt_name.as_str(), &sirt_volume)];
    let mut panels = Vec::new();
    for (k, (view, axes)) in [("axial", ("y (voxels)", "x (voxels)")), ("coronal", ("z (voxels)", "x (voxels)"))].into_iter().enumerate() {
        for (name, x) in volumes {
            let slice = slices(x)[k].clone();
            panels.push(Panel::new(&format!("{name}, {view}"), slice, (1.0, 1.0), axes, unit).with_range((0.0, 0.6)));
        }
    }
    let residual_points = sirt.residuals.iter().enumerate().map(|(k, &r)| (k as f64, r)).collect();
    let figures = vec![
        demo_figure::images(
            "conebeam.png",
            "Cone beam: FDK and SIRT",
            &format!(
                "The 3D Shepp-Logan phantom ({n}³ voxels) seen by a circular cone beam ({count} projections of {}×{} pixels, magnification 1.5), Gaussian noise of {:.0}% of the mean projection added; the middle axial and coronal slices of the phantom and of its reconstructions, on one grey scale from 0 to 0.6.",
                n + n / 4,
                n,
                NOISE * 100.0
            ),
            &panels,
            3,
        )?,
        demo_figure::plots(
            "sirt_residual.png",
            "SIRT's residual",
            "The norm of the projections' residual ‖b − A x‖ of each SIRT iterate before its update (iterate 0 is the zero start); the noise's own norm is where it levels off.",
            &[Plot {
                title: "residual norm per SIRT iteration".into(),
                x: "iterate".into(),
                y: "‖b − A x‖".into(),
                series: vec![Series { name: "SIRT (x ≥ 0)".into(), points: residual_points, mark: Mark::Line, colour: COLOURS[1] }],
                log_y: true,
            }],
            (1100, 420),
        )?,
    ];
    let arrays = [
        ("cone_phantom.npy", truth32.view().into_dyn()),
        ("cone_fdk.npy", fdk.view().into_dyn()),
        ("cone_sirt.npy", sirt_volume.view().into_dyn()),
        ("cone_projections.npy", noisy.view().into_dyn()),
    ];
    let files = demo_figure::write_all(dir, &figures, &arrays)?;
    let total_ms = ms_since(start);
    let section = Section {
        title: "Cone-beam tomography: FDK and SIRT".into(),
        text: format!(
            "The 3D modified Shepp-Logan phantom ({n}³) and its exact cone-beam projections ({count} views over a full turn) with Gaussian noise, reconstructed by FDK (Hann filter) and by {SIRT_ITERATIONS} SIRT iterations kept non-negative (the voxel-driven back-projector, as ASTRA's SIRT3D_CUDA), in ASTRA's cone geometry."
        ),
        numbers: vec![
            ("relative L2 error vs the phantom, FDK".into(), format!("{fdk_error:.3}")),
            ("relative L2 error vs the phantom, SIRT".into(), format!("{sirt_error:.3}")),
            ("FDK".into(), format!("{fdk_ms:.0} ms")),
            ("SIRT".into(), format!("{sirt_ms:.0} ms")),
            ("whole part (simulation, figures, files)".into(), format!("{total_ms:.0} ms")),
        ],
        figures,
    };
    let json = json!({
        "size": n,
        "projections": count,
        "noise_relative": NOISE,
        "relative_l2_error_vs_phantom": { "fdk_hann": fdk_error, "sirt": sirt_error },
        "sirt_iterations": SIRT_ITERATIONS,
        "sirt_residuals": sirt.residuals,
        "ms": { "total": total_ms, "fdk": fdk_ms, "sirt": sirt_ms },
        "files": files,
        "panels": "conebeam.png: phantom | FDK | SIRT, axial and coronal middle slices; sirt_residual.png: SIRT's residual per iteration",
    });
    Ok((json, Some(section)))
}
