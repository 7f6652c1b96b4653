//! `lucent deconvolve`: Richardson-Lucy deconvolution of an image file with a PSF file, on the
//! GPU (the whole iteration resident) or, with `--device cpu` or no adapter, on the f64 CPU
//! reference. A progress bar on stderr; `--json` prints the report (device, stage times, peak
//! device memory) on stdout.

use std::path::{Path, PathBuf};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use lucent::io;
use lucent::ops::deconvolve::tiles::{self, PsfGrid, TileOptions, TileProgress};
use lucent::ops::deconvolve::{self, cpu, RlBoundary, Init, RichardsonLucy, RlOptions, RlReport, RlResult, StopRule};
use lucent::{Error, Gpu};
use ndarray::ArrayViewD;
use serde_json::json;

use crate::Global;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  lucent deconvolve stack.tif --psf psf.tif -o restored.tif
  lucent deconvolve image.npy --psf psf.npy -o restored.npy --iterations 50 --boundary periodic
  lucent deconvolve stack.npy --psf psf.npy -o restored.npy --stop-tolerance 1e-3 --json
  lucent deconvolve noisy.tif --psf psf.tif -o restored.tif --tv 0.002 -n 50
  lucent deconvolve stack.tif --psf psfs.npy --psf-grid 3,4 -o restored.tif
  lucent deconvolve field.tif --psf psf.tif -o restored.tif --boundary extended

A PSF with one axis fewer than the image deconvolves each slice along the first axis.
An image whose working set exceeds the GPU's buffer limit is deconvolved in tiles with guard
bands (see --json for the tiles, guard widths and per-tile times).")]
pub struct Args {
    /// The observed image: .npy, .tif/.tiff (multi-page = 3D) or .png.
    input: PathBuf,
    /// The point spread function, no larger than the image along any axis (its element
    /// (m-1)/2 on each axis is the centre, as scipy's 'same' convolution).
    #[arg(long)]
    psf: PathBuf,
    /// The restored image: float32 .npy or .tif, or an 8-bit .png preview of a 2D image.
    #[arg(short, long)]
    output: PathBuf,
    /// Richardson-Lucy iterations (at most; see --stop-tolerance).
    #[arg(short = 'n', long, default_value_t = 20)]
    iterations: usize,
    /// The first estimate: `observed` (the image) or a positive constant such as 0.5.
    #[arg(long, default_value = "observed", value_parser = parse_init, allow_negative_numbers = true)]
    init: Init,
    /// zero: linear convolution, nothing outside the image; periodic: circular convolution;
    /// extended: Bertero-Boccacci, the object reconstructed past the image's edges by the PSF's
    /// reach (fewer artefacts where bright structure crosses the border).
    #[arg(long, value_enum, default_value_t = BoundaryArg::Zero)]
    boundary: BoundaryArg,
    /// Use the PSF as given instead of dividing it by its sum.
    #[arg(long)]
    no_normalize_psf: bool,
    /// Stop early once the relative change of the estimate falls below this.
    #[arg(long)]
    stop_tolerance: Option<f64>,
    /// With --stop-tolerance: measure the change every this many iterations.
    #[arg(long, default_value_t = 5, requires = "stop_tolerance")]
    check_every: usize,
    /// Where the blurred estimate is below this, the ratio is 0 (scikit-image's filter_epsilon).
    #[arg(long)]
    filter_epsilon: Option<f32>,
    /// Total-variation regularisation (RL-TV, Dey et al. 2006) with this weight λ, e.g. 0.002;
    /// below 1/(2 × spatial axes).
    #[arg(long)]
    tv: Option<f32>,
    /// Biggs-Andrews acceleration: start each update from an extrapolation of the last two
    /// estimates (fewer iterations for the same result; three more arrays of the padded shape).
    #[arg(long)]
    accelerate: bool,
    /// A spatially variant PSF: the PSF file holds a GY × GX grid of PSFs, shaped (GY, GX, py,
    /// px) or (GY, GX, pz, py, px), one per region of a GY × GX grid over the image's last two
    /// axes; each region is deconvolved with its PSF and the regions are blended smoothly.
    #[arg(long, value_name = "GY,GX", value_parser = parse_grid)]
    psf_grid: Option<[usize; 2]>,
}

fn parse_grid(s: &str) -> Result<[usize; 2], String> {
    let parts: Vec<Option<usize>> = s.split(',').map(|v| v.trim().parse().ok().filter(|&n| n > 0)).collect();
    match parts[..] {
        [Some(gy), Some(gx)] => Ok([gy, gx]),
        _ => Err(format!("expected two positive counts GY,GX such as 2,3; got `{s}`")),
    }
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum BoundaryArg {
    Zero,
    Periodic,
    Extended,
}

fn parse_init(s: &str) -> Result<Init, String> {
    if s == "observed" {
        return Ok(Init::Observed);
    }
    match s.parse::<f32>() {
        Ok(c) if c.is_finite() && c > 0.0 => Ok(Init::Constant(c)),
        _ => Err(format!("expected `observed` or a positive number, got `{s}`")),
    }
}

impl Args {
    fn options(&self) -> RlOptions {
        RlOptions {
            boundary: match self.boundary {
                BoundaryArg::Zero => RlBoundary::Zero,
                BoundaryArg::Periodic => RlBoundary::Periodic,
                BoundaryArg::Extended => RlBoundary::Extended,
            },
            init: self.init,
            normalize_psf: !self.no_normalize_psf,
            filter_epsilon: self.filter_epsilon,
            stop: self.stop_tolerance.map(|tolerance| StopRule { tolerance, every: self.check_every }),
            tv: self.tv,
            accelerate: self.accelerate,
            ..Default::default()
        }
    }
}

pub fn run(global: &Global, args: &Args) -> Result<(), Error> {
    let start = Instant::now();
    let image = io::read_real(&args.input)?;
    let psf = io::read_real(&args.psf)?;
    let read_ms = ms_since(start);
    let opts = args.options();
    // Everything that can be wrong is reported before the device is opened.
    let grid = args.psf_grid.map(|g| PsfGrid::new(psf.view(), g)).transpose()?;
    match &grid {
        Some(g) => {
            tiles::plan(&image.view(), g, args.iterations, &opts, &TileOptions::default(), None)?;
        }
        None => {
            deconvolve::validate(&image.view(), &psf.view(), args.iterations, &opts)?;
        }
    }
    check_output(&args.output, image.ndim())?;

    let gpu = global.gpu()?;
    let too_large = match (&gpu, &grid) {
        (Some(g), None) => !tiles::fits_whole(g, image.shape(), psf.shape(), &opts)?,
        _ => false,
    };
    if grid.is_some() || too_large {
        let psfs = grid.unwrap_or_else(|| PsfGrid::single(psf.view()));
        return run_tiled(global, args, gpu.as_ref(), &image.view(), &psfs, &opts, (start, read_ms));
    }
    let result = restore(global, gpu.as_ref(), &image.view(), &psf.view(), args.iterations, &opts)?;
    let t = Instant::now();
    io::write_real(&args.output, &result.estimate.view())?;
    let write_ms = ms_since(t);

    let r = &result.report;
    if global.json {
        let report = json!({
            "command": "deconvolve",
            "input": args.input.display().to_string(),
            "psf": args.psf.display().to_string(),
            "output": args.output.display().to_string(),
            "options": opts,
            "report": report_json(r, args.iterations),
            "ms": { "read": read_ms, "write": write_ms, "total": ms_since(start) },
        });
        println!("{report}");
    } else if !global.quiet {
        println!("{}; wrote {}", summary(r), args.output.display());
    }
    Ok(())
}

/// Tiled deconvolution (a PSF grid, or an image too large for one GPU buffer), written and
/// reported like `run`; the progress bar counts iterations over all tiles.
fn run_tiled(
    global: &Global,
    args: &Args,
    gpu: Option<&Gpu>,
    image: &ArrayViewD<f32>,
    psfs: &PsfGrid,
    opts: &RlOptions,
    (start, read_ms): (Instant, f64),
) -> Result<(), Error> {
    let bar = progress_bar(global, 0);
    bar.set_style(
        ProgressStyle::with_template("Richardson-Lucy {bar:30} {pos}/{len} iterations over all tiles {msg} [{elapsed_precise}, {eta} left]")
            .expect("a valid template"),
    );
    let show = |p: TileProgress| {
        let (done, total) = p.overall();
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        bar.set_message(format!("tile {}/{}", p.tile + 1, p.tiles));
    };
    let none = TileOptions::default();
    let (estimate, report) = match gpu {
        Some(gpu) => {
            let r = tiles::richardson_lucy_tiled(gpu, image, psfs, args.iterations, opts, &none, show)?;
            (r.estimate, r.report)
        }
        None => {
            let (e, r) = tiles::richardson_lucy_tiled_cpu(image, psfs, args.iterations, opts, &none, show)?;
            (e.mapv(|v| v as f32), r)
        }
    };
    bar.finish_and_clear();
    let t = Instant::now();
    io::write_real(&args.output, &estimate.view())?;
    let write_ms = ms_since(t);
    if global.json {
        let report = json!({
            "command": "deconvolve",
            "input": args.input.display().to_string(),
            "psf": args.psf.display().to_string(),
            "output": args.output.display().to_string(),
            "options": opts,
            "iterations": args.iterations,
            "tiles": report,
            "ms": { "read": read_ms, "write": write_ms, "total": ms_since(start) },
        });
        println!("{report}");
    } else if !global.quiet {
        println!(
            "Richardson-Lucy {:?} in {} tiles (guard bands {:?}): {} iterations each on {} in {:.1} ms; wrote {}",
            image.shape(),
            report.tiles,
            report.guard,
            args.iterations,
            report.device,
            report.total_ms,
            args.output.display()
        );
    }
    Ok(())
}

/// Deconvolves on `gpu`, or on the CPU reference when there is none, with a progress bar.
pub fn restore(
    global: &Global,
    gpu: Option<&Gpu>,
    image: &ArrayViewD<f32>,
    psf: &ArrayViewD<f32>,
    iterations: usize,
    opts: &RlOptions,
) -> Result<RlResult, Error> {
    let bar = progress_bar(global, iterations);
    let show = |p: deconvolve::Progress| {
        bar.set_position(p.done as u64);
        if let Some(c) = p.relative_change {
            bar.set_message(format!("change {c:.2e}"));
        }
    };
    let result = match gpu {
        Some(gpu) => RichardsonLucy::new(gpu, image, psf, iterations, opts)?.run(show),
        None => on_cpu(image, psf, iterations, opts, show),
    };
    bar.finish_and_clear();
    result
}

fn on_cpu(
    image: &ArrayViewD<f32>,
    psf: &ArrayViewD<f32>,
    iterations: usize,
    opts: &RlOptions,
    progress: impl FnMut(deconvolve::Progress),
) -> Result<RlResult, Error> {
    let t = Instant::now();
    let r = cpu::richardson_lucy_with(image, psf, iterations, opts, progress)?;
    let iterate_ms = ms_since(t);
    let report = RlReport {
        device: "cpu (f64 reference)".into(),
        geometry: Some(deconvolve::Geometry::new(image.shape(), psf.shape(), opts.boundary)?),
        iterations: r.iterations,
        stopped_early: r.stopped_early,
        changes: r.changes,
        iterate_ms,
        ms_per_iteration: iterate_ms / r.iterations as f64,
        ..Default::default()
    };
    Ok(RlResult { estimate: r.estimate.mapv(|v| v as f32), report })
}

fn progress_bar(global: &Global, iterations: usize) -> ProgressBar {
    if global.quiet {
        return ProgressBar::hidden();
    }
    // Drawn on stderr, and only when it is a terminal.
    let bar = ProgressBar::new(iterations as u64);
    bar.set_style(
        ProgressStyle::with_template("Richardson-Lucy {bar:30} {pos}/{len} iterations {msg} [{elapsed_precise}, {eta} left]")
            .expect("a valid template"),
    );
    bar
}

/// The report as JSON, times in ms.
pub fn report_json(r: &RlReport, asked: usize) -> serde_json::Value {
    json!({
        "device": r.device,
        "geometry": r.geometry,
        "iterations": { "asked": asked, "done": r.iterations, "stopped_early": r.stopped_early },
        "changes": r.changes,
        "ms": {
            "setup": r.setup_ms,
            "iterate": r.iterate_ms,
            "per_iteration": r.ms_per_iteration,
            "gpu_per_iteration": r.gpu_ms_per_iteration,
            "download": r.download_ms,
        },
        "peak_bytes": r.peak_bytes,
        "setup_peak_bytes": r.setup_peak_bytes,
        "dispatches_per_iteration": r.dispatches_per_iteration,
    })
}

/// One line: iterations, device, times and memory.
pub fn summary(r: &RlReport) -> String {
    let shape = r.geometry.as_ref().map_or(String::new(), |g| format!(" {:?} (padded {:?})", g.image, g.padded));
    let mut s = format!(
        "Richardson-Lucy{shape}: {} iterations{} on {} in {:.1} ms ({:.3} ms per iteration",
        r.iterations,
        if r.stopped_early { " (converged)" } else { "" },
        r.device,
        r.setup_ms + r.iterate_ms + r.download_ms,
        r.ms_per_iteration
    );
    if let Some(g) = r.gpu_ms_per_iteration {
        s += &format!(", {g:.3} ms on the GPU");
    }
    s += ")";
    if r.peak_bytes > 0 {
        s += &format!(", {:.1} MiB of device memory", r.peak_bytes as f64 / (1 << 20) as f64);
    }
    s
}

/// Fails before any work when the output could not be written.
fn check_output(path: &Path, ndim: usize) -> Result<(), Error> {
    let wrong = |message: String| Error::File { path: path.display().to_string(), message };
    if io::Format::from_path(path)? == io::Format::Png && ndim != 2 {
        return Err(wrong(format!("a PNG holds a 2D image; this result has {ndim} axes (write .npy or .tif)")));
    }
    match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) if !dir.is_dir() => Err(wrong(format!("the directory {} does not exist", dir.display()))),
        _ => Ok(()),
    }
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}
