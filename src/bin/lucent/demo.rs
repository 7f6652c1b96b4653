//! `lucent demo`: a self-contained Richardson-Lucy run without a measured PSF. It synthesises a
//! 3D specimen (beads and filaments), blurs it with the vectorial widefield PSF of a water
//! objective (lucent::psf, Aguet et al. 2009), adds Poisson noise, deconvolves it with the same
//! model made from the microscope's parameters, as `lucent deconvolve --psf-model` does (GPU if
//! present, else the CPU reference with a warning) and writes the volumes as .npy, their max
//! projections as PNG and report.json; then registers a synthetic AO-OCT series under eye
//! motion (demo_register.rs), registers a turned, scaled and shifted image (demo_similarity.rs), reconstructs a Shepp-Logan phantom from Poisson counts
//! (demo_tomography.rs) and denoises a noisy 4D series over 3 and 4 axes (demo_denoise.rs).
//! Each part draws its figures (demo_figure.rs), written as PNG and, with the numbers and the
//! commands that make them again, into one self-contained report.html (demo_report.rs).
//! Everything is deterministic (`--seed`); `--size small` makes every part's data smaller, for
//! tests and a first look on a software GPU.

use std::path::{Path, PathBuf};
use std::time::Instant;

use lucent::io;
use lucent::restoration::specimen;
use lucent::restoration::RlOptions;
use lucent::Error;
use ndarray::{Array2, ArrayD, Axis};
use serde_json::json;

use crate::deconvolve::{restore, summary};
use crate::demo_figure::{self, Panel};
use crate::demo_report::Section;
use crate::report::{self, ms_since, Report};
use crate::Global;

#[derive(clap::Args)]
#[command(after_help = "Example:
  lucent demo --out /tmp/rl-demo     then open /tmp/rl-demo/report.html in a browser
  lucent demo --out /tmp/quick --size small -n 10     a few seconds on a software GPU")]
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
    /// The data's sizes: full (the sizes the README's numbers are for; 30-80 s on a software GPU)
    /// or small (each part on about half the extent per axis: a few seconds).
    #[arg(long, value_enum, default_value_t = Size::Full)]
    size: Size,
}

/// How large the demo's data are.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Size {
    Full,
    Small,
}

impl Size {
    pub fn name(self) -> &'static str {
        match self {
            Size::Full => "full",
            Size::Small => "small",
        }
    }

    /// The specimen's shape (z, y, x).
    fn specimen(self) -> [usize; 3] {
        match self {
            Size::Full => [32, 128, 128],
            Size::Small => [24, 64, 64],
        }
    }
}

/// The specimen's voxel (µm) and the PSF's planes and pixels.
const DZ: f64 = specimen::VOXEL_UM[0];
const DXY: f64 = specimen::VOXEL_UM[1];
const PSF_SIZE: [usize; 2] = specimen::PSF_SIZE;

pub fn run(global: &Global, args: &Args) -> Result<(), Error> {
    let start = Instant::now();
    // Checked before the folder is made, so a refused run leaves nothing behind.
    lucent::restoration::check_iterations(args.iterations)?;
    std::fs::create_dir_all(&args.out).map_err(|e| file_error(&args.out, format!("cannot create the folder: {e}")))?;
    let shape = args.size.specimen();
    let specimen::Imaged { truth, observed, .. } = specimen::imaged(shape, args.seed)?;
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
    let (files, figures) = write_files(&args.out, &truth32, &observed, restored, &psf32)?;
    let write_ms = ms_since(t);
    let (registration, registration_section) = crate::demo_register::run(gpu.as_ref(), &args.out, args.seed, args.size)?;
    let (similarity, similarity_section) = crate::demo_similarity::run(gpu.as_ref(), &args.out, args.seed, args.size)?;
    if similarity_section.is_none() {
        global.warn("no GPU: the similarity registration panel is left out (it has no CPU form)");
    }
    let (tomography, tomography_section) = crate::demo_tomography::run(gpu.as_ref(), &args.out, args.seed, args.size)?;
    let (conebeam, conebeam_section) = crate::demo_conebeam::run(gpu.as_ref(), &args.out, args.seed, args.size)?;
    if conebeam_section.is_none() {
        global.warn("no GPU: the cone-beam panel is left out (its CPU reference takes minutes)");
    }
    let (denoising, denoising_section) = crate::demo_denoise::run(gpu.as_ref(), &args.out, args.seed, args.size)?;

    let photons = observed.iter().map(|&v| v as f64).sum::<f64>();
    let details = json!({
        "seed": args.seed,
        "size": args.size.name(),
        "shape": shape,
        "psf": crate::psf::options_json(&specimen::microscope()),
        "voxel_um": [DZ, DXY, DXY],
        "photons": photons,
        "relative_l2_error_vs_truth": { "observed": error_observed, "restored": error_restored },
        "deconvolution": result.report,
        "ms": { "simulate": simulate_ms, "write": write_ms },
        "files": files,
        "registration": registration,
        "similarity": similarity,
        "tomography": tomography,
        "conebeam": conebeam,
        "denoising": denoising,
    });
    // report.json is the --json report too.
    let report = Report {
        output: report::path(&args.out),
        options: json!({ "iterations": args.iterations, "seed": args.seed, "size": args.size.name() }),
        ms: report::Stages::default().total(start),
        details,
        ..Report::new("demo", report::device(&gpu))
    };
    lucent::host::write_atomic(&args.out.join("report.json"), |w| serde_json::to_writer_pretty(&mut *w, &report).map_err(|e| Error::Io(e.into())))?;

    let device = match gpu.as_ref() {
        Some(g) => format!("{} ({})", g.summary().name, g.summary().backend),
        None => "the CPU reference (no GPU)".to_string(),
    };
    let r = &result.report;
    let deconvolution = Section {
        title: "Deconvolution: Richardson-Lucy with a computed PSF".into(),
        text: format!(
            "A synthetic specimen of {shape:?} voxels of {DZ}×{DXY}×{DXY} µm (z, y, x): beads below the resolution and filaments (60 and 10 at the full size, as many per voxel at others). \
             Blurred by the vectorial widefield PSF of a 1.1 NA water objective at 0.52 µm emission (psfmodels' model, {}×{}×{} voxels), \
             Poisson noise added, then restored by {} Richardson-Lucy iterations with the same model made again from the microscope's parameters, on {device}.",
            PSF_SIZE[0], PSF_SIZE[1], PSF_SIZE[1], r.iterations
        ),
        numbers: vec![
            ("photons in the observed volume".into(), format!("{photons:.3e}")),
            ("relative L2 error vs truth, observed".into(), format!("{error_observed:.3}")),
            ("relative L2 error vs truth, restored".into(), format!("{error_restored:.3}")),
            ("simulation (CPU, f64)".into(), format!("{simulate_ms:.0} ms")),
            ("Richardson-Lucy, setup + iterations + download".into(), format!("{:.0} ms", r.setup_ms + r.iterate_ms + r.download_ms)),
            ("per iteration".into(), format!("{:.2} ms", r.ms_per_iteration)),
        ],
        figures,
    };
    let commands = vec![
        format!("lucent demo --out {} -n {} --seed {} --size {}", args.out.display(), args.iterations, args.seed, args.size.name()),
        format!("# the deconvolution again from the file, no PSF needed:\n{}", deconvolve_command(&args.out, args.iterations)),
        format!(
            "# the registration (its CSV: bscan, dz, dy, dx, peak, status):\nlucent register-volume {} {} -o shifts.csv",
            args.out.join("aooct_reference.npy").display(),
            args.out.join("aooct_moving.npy").display()
        ),
        format!(
            "# the reconstructions (in counts: the demo divides by the {} photons per unit line integral):\nlucent fbp {counts} -o fbp.npy --filter hann\nlucent em {counts} -o em.npy -n {}",
            crate::demo_tomography::PHOTONS,
            crate::demo_tomography::EM_ITERATIONS,
            counts = args.out.join("counts.npy").display()
        ),
format!(
            "# the cone-beam reconstructions (ASTRA's geometry dicts as JSON: see lucent fdk --help):\nlucent fdk {} --geometry cone.json --volume volume.json -o fdk.npy --filter hann",
            args.out.join("cone_projections.npy").display()
        ),
                format!("# the denoising over 4 axes:\nlucent denoise {} -o denoised.npy --dims 4", args.out.join("series_noisy.npy").display()),
    ];
    let intro = format!(
        "Made by lucent {} on {device} in {:.1} s (seed {}, size {}). Every figure is drawn from the arrays this run computed; the arrays themselves are .npy files beside this page.",
        env!("CARGO_PKG_VERSION"),
        report.ms.total / 1e3,
        args.seed,
        args.size.name()
    );
    let sections: Vec<Section> =
        [Some(deconvolution), Some(registration_section), similarity_section, Some(tomography_section), conebeam_section, Some(denoising_section)]
            .into_iter()
            .flatten()
            .collect();
    crate::demo_report::write(&args.out, &intro, &sections, &commands)?;

    let (registration, tomography, denoising) = (&report.details["registration"], &report.details["tomography"], &report.details["denoising"]);
    if global.json {
        report.print();
    } else if !global.quiet {
        println!(
            "specimen {shape:?} of {DZ}×{DXY}×{DXY} µm voxels (beads and filaments), vectorial PSF of a 1.1 NA water objective at 0.52 µm, Poisson noise: simulated in {simulate_ms:.0} ms"
        );
        println!("{}", summary(&result.report));
        println!("relative L2 error vs truth: observed {error_observed:.3}, restored {error_restored:.3}");
        println!(
            "AO-OCT registration: {} of {} B-scans within one voxel of the true eye motion",
            registration["bscans_within_one_voxel"], registration["bscans"]
        );
        let found = &report.details["similarity"]["found"];
        if found.is_object() {
            println!(
                "similarity registration of a pair turned {}°, scaled {}: found angle {:.2}°, scale {:.4}",
                crate::demo_similarity::ANGLE,
                crate::demo_similarity::SCALE,
                found["angle"].as_f64().unwrap_or(f64::NAN),
                found["scale"].as_f64().unwrap_or(f64::NAN)
            );
        }
        println!(
            "tomography from Poisson counts: relative L2 error vs the phantom, FBP {:.3}, MLEM {:.3}",
            tomography["relative_l2_error_vs_phantom"]["fbp_hann"].as_f64().unwrap_or(f64::NAN),
            tomography["relative_l2_error_vs_phantom"]["em"].as_f64().unwrap_or(f64::NAN)
        );
        let db = |k: &str| denoising["psnr_db"][k].as_f64().unwrap_or(f64::NAN);
        println!(
            "4D denoising of a noisy moving edge: PSNR noisy {:.1} dB, adaptive over 3 axes {:.1}, over 4 {:.1}, block matching {:.1}",
            db("noisy"),
            db("denoised_3d"),
            db("denoised_4d"),
            db("block_matching")
        );
        println!(
            "wrote {}: report.html (every figure, its numbers and the commands; open it in a browser), the figures as PNG, the arrays as .npy, report.json",
            args.out.display()
        );
        println!("again from the file, no PSF needed: {}", deconvolve_command(&args.out, args.iterations));
    }
    Ok(())
}

/// The `lucent deconvolve` command that restores the demo's observed volume from the file.
fn deconvolve_command(dir: &Path, iterations: usize) -> String {
    format!(
        "lucent deconvolve {} -o restored.npy -n {iterations} --psf-model vectorial --dxy {DXY} --dz {DZ} --psf-size {},{} --na 1.1 --ni 1.33 --ni0 1.33 --ns 1.33 --wvl 0.52",
        dir.join("observed.npy").display(),
        PSF_SIZE[0],
        PSF_SIZE[1]
    )
}

/// ‖x − truth‖ / ‖truth‖.
fn relative_error(x: &ArrayD<f64>, truth: &ArrayD<f64>) -> f64 {
    let num: f64 = x.iter().zip(truth).map(|(a, b)| (a - b) * (a - b)).sum();
    let den: f64 = truth.iter().map(|b| b * b).sum();
    (num / den).sqrt()
}

/// The volumes as .npy, their max projections along z as grey PNGs (data, readable as input),
/// and the figures (written too); returns the file names and the figures.
fn write_files(
    dir: &Path,
    truth: &ArrayD<f32>,
    observed: &ArrayD<f32>,
    restored: &ArrayD<f32>,
    psf: &ArrayD<f32>,
) -> Result<(Vec<String>, Vec<demo_figure::Figure>), Error> {
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
    let projections: Vec<Array2<f32>> = volumes[..3].iter().map(|(_, x)| max_projection(x)).collect();
    for ((name, _), p) in volumes.iter().zip(&projections) {
        write(&format!("{name}_mip.png"), &p.clone().into_dyn())?;
    }
    let axes = ("y (µm)", "x (µm)");
    let titles = ["Truth", "Observed (blurred, Poisson noise)", "Restored (Richardson-Lucy)"];
    let panels = titles.iter().zip(projections).map(|(title, p)| Panel::new(title, p, (DXY, DXY), axes, "photons per voxel (max along z)")).collect::<Vec<_>>();
    let mips = demo_figure::images(
        "panels.png",
        "Maximum projections along z",
        "The brightest voxel along z of each (y, x). Each panel has its own grey scale (its colour bar); images enlarged by nearest neighbour, so every square is one voxel.",
        &panels,
        3,
    )?;
    // The PSF's xz section through its centre, as the square root of the intensity so the side
    // lobes show.
    let (nz, ny, nx) = (psf.shape()[0], psf.shape()[1], psf.shape()[2]);
    let section = Array2::from_shape_fn((nz, nx), |(z, x)| psf[[z, ny / 2, x]].max(0.0).sqrt());
    let psf_figure = demo_figure::images(
        "psf.png",
        "The PSF's xz section",
        &format!("The vectorial PSF through its centre (y = 0), along the optical axis z and across x, at its voxel size (rectangles of {DZ} × {DXY} µm, enlarged by nearest neighbour); the square root of the intensity over its peak (the model's normalisation), so the rings show."),
        &[Panel::new("Vectorial PSF, 1.1 NA water, 0.52 µm", section, (DZ, DXY), ("z (µm)", "x (µm)"), "√ (intensity / peak)")],
        1,
    )?;
    let figures = vec![mips, psf_figure];
    for f in &figures {
        f.write(dir)?;
        names.push(f.file.clone());
    }
    Ok((names, figures))
}

fn max_projection(x: &ArrayD<f32>) -> Array2<f32> {
    x.fold_axis(Axis(0), f32::NEG_INFINITY, |&a, &b| a.max(b)).into_dimensionality().expect("a 3D volume")
}

fn file_error(path: &Path, message: String) -> Error {
    Error::File { path: path.display().to_string(), message }
}
