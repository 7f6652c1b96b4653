//! `lucent demo`: a self-contained Richardson-Lucy run without a measured PSF. It synthesises a
//! 3D specimen (beads and filaments), blurs it with the vectorial widefield PSF of a water
//! objective (lucent::psf, Aguet et al. 2009), adds Poisson noise, deconvolves it with the same
//! model made from the microscope's parameters, as `lucent deconvolve --psf-model` does (GPU if
//! present, else the CPU reference with a warning) and writes max-projection PNGs beside the
//! PSF's xz section, the volumes as .npy and report.json; then registers a synthetic AO-OCT
//! series under eye motion (demo_register.rs) and reconstructs a Shepp-Logan phantom from
//! Poisson counts (demo_tomography.rs) and denoises a noisy 4D series over 3 and 4 axes
//! (demo_denoise.rs). Everything is deterministic (`--seed`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use lucent::io;
use lucent::restoration::specimen;
use lucent::restoration::RlOptions;
use lucent::Error;
use ndarray::{s, Array2, ArrayD, Axis};
use serde_json::json;

use crate::deconvolve::{restore, summary};
use crate::report::{self, ms_since, Report};
use crate::Global;

#[derive(clap::Args)]
#[command(after_help = "Example:
  lucent demo --out /tmp/rl-demo     then look at /tmp/rl-demo/panels.png")]
pub struct Args {
    /// Folder for the results (created if missing).
    #[arg(long, default_value = "lucent-demo")]
    out: PathBuf,
    /// Richardson-Lucy iterations.
    #[arg(short = 'n', long, default_value_t = 30)]
    iterations: usize,
    /// Seed of the specimen and the noise.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// The specimen's shape (z, y, x); its voxel (µm) and the PSF's planes and pixels.
const SHAPE: [usize; 3] = [32, 128, 128];
const DZ: f64 = specimen::VOXEL_UM[0];
const DXY: f64 = specimen::VOXEL_UM[1];
const PSF_SIZE: [usize; 2] = specimen::PSF_SIZE;

pub fn run(global: &Global, args: &Args) -> Result<(), Error> {
    let start = Instant::now();
    // Checked before the folder is made, so a refused run leaves nothing behind.
    lucent::restoration::check_iterations(args.iterations)?;
    std::fs::create_dir_all(&args.out).map_err(|e| file_error(&args.out, format!("cannot create the folder: {e}")))?;
    let specimen::Imaged { truth, observed, .. } = specimen::imaged(SHAPE, args.seed)?;
    let simulate_ms = ms_since(start);

    let gpu = global.gpu()?;
    if gpu.is_none() {
        global.warn("no GPU: deconvolving on the f64 CPU reference, which is much slower");
    }
    // Restored with the model made again from the microscope's parameters (no PSF file).
    let psf32 = crate::psf::make(gpu.as_ref(), &specimen::microscope())?.into_dyn();
    let opts = RlOptions::default();
    let result = restore(global, gpu.as_ref(), &observed.view(), &psf32.view(), args.iterations, &opts)?;

    let t = Instant::now();
    let restored = &result.estimate;
    let error_observed = relative_error(&observed.mapv(|v| v as f64), &truth);
    let error_restored = relative_error(&restored.mapv(|v| v as f64), &truth);
    let truth32 = truth.mapv(|v| v as f32);
    let files = write_files(&args.out, &truth32, &observed, restored, &psf32)?;
    let write_ms = ms_since(t);
    let registration = crate::demo_register::run(gpu.as_ref(), &args.out, args.seed)?;
    let tomography = crate::demo_tomography::run(gpu.as_ref(), &args.out, args.seed)?;
    let denoising = crate::demo_denoise::run(gpu.as_ref(), &args.out, args.seed)?;

    let details = json!({
        "seed": args.seed,
        "shape": SHAPE,
        "psf": crate::psf::options_json(&specimen::microscope()),
        "voxel_um": [DZ, DXY, DXY],
        "photons": observed.iter().map(|&v| v as f64).sum::<f64>(),
        "relative_l2_error_vs_truth": { "observed": error_observed, "restored": error_restored },
        "deconvolution": result.report,
        "ms": { "simulate": simulate_ms, "write": write_ms },
        "files": files,
        "registration": registration,
        "tomography": tomography,
        "denoising": denoising,
    });
    // report.json is the --json report too.
    let report = Report {
        output: report::path(&args.out),
        options: json!({ "iterations": args.iterations, "seed": args.seed }),
        ms: report::Stages::default().total(start),
        details,
        ..Report::new("demo", report::device(&gpu))
    };
    lucent::host::write_atomic(&args.out.join("report.json"), |w| serde_json::to_writer_pretty(&mut *w, &report).map_err(|e| Error::Io(e.into())))?;
    let (registration, tomography, denoising) = (&report.details["registration"], &report.details["tomography"], &report.details["denoising"]);
    if global.json {
        report.print();
    } else if !global.quiet {
        println!(
            "specimen {SHAPE:?} of {DZ}×{DXY}×{DXY} µm voxels (beads and filaments), vectorial PSF of a 1.1 NA water objective at 0.52 µm, Poisson noise: simulated in {simulate_ms:.0} ms"
        );
        println!("{}", summary(&result.report));
        println!("relative L2 error vs truth: observed {error_observed:.3}, restored {error_restored:.3}");
        println!(
            "AO-OCT registration: {} of {} B-scans within one voxel of the true eye motion",
            registration["bscans_within_one_voxel"], registration["bscans"]
        );
        println!(
            "tomography from Poisson counts: relative L2 error vs the phantom, FBP {:.3}, MLEM {:.3}",
            tomography["relative_l2_error_vs_phantom"]["fbp_hann"].as_f64().unwrap_or(f64::NAN),
            tomography["relative_l2_error_vs_phantom"]["em"].as_f64().unwrap_or(f64::NAN)
        );
        let db = |k: &str| denoising["psnr_db"][k].as_f64().unwrap_or(f64::NAN);
        println!(
            "4D denoising of a noisy moving edge: PSNR noisy {:.1} dB, over 3 axes {:.1}, over 4 {:.1}",
            db("noisy"),
            db("denoised_3d"),
            db("denoised_4d")
        );
        println!("wrote {} (panels.png: truth | observed | restored, max projections along z | the PSF's xz section, 1 µm = 30 px, square root of intensity; registration.png: en-face average unregistered | registered | reference; registration_trace.png: shifts found over the truth; tomography.png: phantom | FBP | MLEM; denoise.png: noisy | 3D | 4D | clean)", args.out.display());
        println!(
            "again from the file, no PSF needed: lucent deconvolve {} -o restored.npy -n {} --psf-model vectorial --dxy {DXY} --dz {DZ} --psf-size {},{} --na 1.1 --ni 1.33 --ni0 1.33 --ns 1.33 --wvl 0.52",
            args.out.join("observed.npy").display(),
            args.iterations,
            PSF_SIZE[0],
            PSF_SIZE[1]
        );
    }
    Ok(())
}

/// The PSF's xz section through its centre as a panel of the MIPs' size: 30 pixels per µm along
/// both axes (nearest sample), the square root of the intensity so the side lobes show.
fn psf_section(psf: &ArrayD<f32>) -> Array2<f32> {
    let (nz, ny, nx) = (psf.shape()[0], psf.shape()[1], psf.shape()[2]);
    let scale = 30.0; // pixels per µm
    let (h, w) = (SHAPE[1], SHAPE[2]);
    let (top, left) = (h as f64 / 2.0 - nz as f64 * DZ * scale / 2.0, w as f64 / 2.0 - nx as f64 * DXY * scale / 2.0);
    Array2::from_shape_fn((h, w), |(r, c)| {
        let (z, x) = (((r as f64 - top) / (DZ * scale)).floor(), ((c as f64 - left) / (DXY * scale)).floor());
        if (0.0..nz as f64).contains(&z) && (0.0..nx as f64).contains(&x) {
            psf[[z as usize, ny / 2, x as usize]].max(0.0).sqrt()
        } else {
            0.0
        }
    })
}

/// ‖x − truth‖ / ‖truth‖.
fn relative_error(x: &ArrayD<f64>, truth: &ArrayD<f64>) -> f64 {
    let num: f64 = x.iter().zip(truth).map(|(a, b)| (a - b) * (a - b)).sum();
    let den: f64 = truth.iter().map(|b| b * b).sum();
    (num / den).sqrt()
}

/// The volumes as .npy and max projections along z as PNGs; returns the file names.
fn write_files(dir: &Path, truth: &ArrayD<f32>, observed: &ArrayD<f32>, restored: &ArrayD<f32>, psf: &ArrayD<f32>) -> Result<Vec<String>, Error> {
    let mut names = Vec::new();
    let mut write = |name: &str, x: &ArrayD<f32>| -> Result<(), Error> {
        io::write_real(dir.join(name), &x.view())?;
        names.push(name.to_string());
        Ok(())
    };
    let volumes = [("truth", truth), ("observed", observed), ("restored", restored), ("psf", psf)];
    for (name, x) in volumes {
        write(&format!("{name}.npy"), x)?;
    }
    let mut projections: Vec<Array2<f32>> = volumes[..3].iter().map(|(_, x)| max_projection(x)).collect();
    for ((name, _), p) in volumes.iter().zip(&projections) {
        write(&format!("{name}_mip.png"), &p.clone().into_dyn())?;
    }
    projections.push(psf_section(psf));
    write("panels.png", &montage(&projections).into_dyn())?;
    Ok(names)
}

fn max_projection(x: &ArrayD<f32>) -> Array2<f32> {
    x.fold_axis(Axis(0), f32::NEG_INFINITY, |&a, &b| a.max(b)).into_dimensionality().expect("a 3D volume")
}

/// The panels side by side, each scaled to its own maximum, with a 4-pixel gap.
pub fn montage(panels: &[Array2<f32>]) -> Array2<f32> {
    let (h, w) = panels[0].dim();
    let gap = 4;
    let mut out = Array2::zeros((h, panels.len() * (w + gap) - gap));
    for (k, p) in panels.iter().enumerate() {
        let max = p.iter().copied().fold(f32::MIN_POSITIVE, f32::max);
        out.slice_mut(s![.., k * (w + gap)..k * (w + gap) + w]).assign(&(p / max));
    }
    out
}

fn file_error(path: &Path, message: String) -> Error {
    Error::File { path: path.display().to_string(), message }
}
