//! `lucent register-volume`: stripe-wise registration of AO-OCT volumes (slow, depth, fast)
//! against a reference volume, per B-scan; the shifts written as CSV, optionally the registered
//! volume and the average of the registered series. On the GPU, or with `--device cpu` or no
//! adapter on the f64 reference.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use lucent::registration::{self, BscanShift, Status, StripeRegistration, VolumeRegistration};
use lucent::{io, Error};
use ndarray::{Array3, ArrayD, Ix3};
use serde_json::json;

use crate::report::{self, ms_since, Report, Stages};
use crate::Global;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  lucent register-volume reference.npy moving.npy -o shifts.csv
  lucent register-volume v0.npy v1.npy v2.npy v3.npy -o shifts.csv --average mean.npy --json
  lucent phantom --aooct -o ref.npy --moving mov.npy --truth truth.csv && lucent register-volume ref.npy mov.npy -o shifts.csv --apply registered.npy

The CSV has one row per B-scan: bscan,dz,dy,dx,peak,status (with several moving volumes a first
column `volume`, the moving file's index). Shifts register the B-scan onto the reference: B-scan j
shows the reference at slow position j + dy, depth z + dz, fast position x + dx. status: ok,
spike (measured but far from its neighbours: interpolated) or interpolated (a weak peak).")]
pub struct Args {
    /// The reference volume (slow, depth, fast): .npy (any real dtype) or a TIFF stack.
    reference: PathBuf,
    /// Volumes to register onto it, each of its shape.
    #[arg(required = true)]
    moving: Vec<PathBuf>,
    /// Where the per-B-scan shifts go (CSV).
    #[arg(short, long)]
    output: PathBuf,
    /// Write the registered moving volume here (.npy or .tif; one moving volume): each reference
    /// row holds the B-scan that lands there, shifted in depth and along the fast axis; rows no
    /// B-scan reaches are 0.
    #[arg(long)]
    apply: Option<PathBuf>,
    /// Write the average of the registered series here: the reference and every registered
    /// moving volume, each row over the volumes that reach it.
    #[arg(long)]
    average: Option<PathBuf>,
    /// Interpolation order of --apply and --average (0-5, scipy's B-spline orders).
    #[arg(long, default_value_t = 1)]
    order: u32,
    /// B-scans per coarse stripe.
    #[arg(long, default_value_t = 3)]
    stripe: usize,
    /// A coarse stripe every N B-scans.
    #[arg(long, default_value_t = 16)]
    coarse_step: usize,
    /// B-scans in each reference sub-volume of the fine stage.
    #[arg(long, default_value_t = 32)]
    window: usize,
    /// A sub-volume starts every N B-scans.
    #[arg(long, default_value_t = 16)]
    window_step: usize,
    /// A B-scan's shift further than this (voxels) from its neighbours' median is a spike.
    #[arg(long, default_value_t = 2.0, allow_hyphen_values = true)]
    spike: f64,
    /// The same for the coarse stripes.
    #[arg(long, default_value_t = 8.0, allow_hyphen_values = true)]
    coarse_spike: f64,
    /// Neighbours (odd, itself included) whose median a shift is compared with.
    #[arg(long, default_value_t = 5)]
    median: usize,
    /// A peak below this fraction of the median peak is no measurement.
    #[arg(long, default_value_t = 0.3, allow_hyphen_values = true)]
    min_peak: f64,
}

fn read_volume(path: &Path) -> Result<Array3<f32>, Error> {
    let x: ArrayD<f32> = io::read_real(path)?;
    let shape = x.shape().to_vec();
    x.into_dimensionality::<Ix3>()
        .map_err(|_| Error::Shape(format!("{}: a volume of shape {shape:?}; register-volume takes 3 axes (slow, depth, fast)", path.display())))
}

pub fn run(global: &Global, args: &Args) -> Result<(), Error> {
    let how = StripeRegistration {
        stripe: args.stripe,
        coarse_step: args.coarse_step,
        window: args.window,
        window_step: args.window_step,
        median: args.median,
        spike: args.spike,
        coarse_spike: args.coarse_spike,
        min_peak: args.min_peak,
    };
    if args.apply.is_some() && args.moving.len() > 1 {
        return Err(Error::Invalid("--apply writes one registered volume: give one moving volume (--average takes a series)".into()));
    }
    if args.order > 5 {
        return Err(Error::Invalid(format!("--order {} (0 to 5)", args.order)));
    }
    // Every output checked before anything is computed or written.
    for volume in [&args.apply, &args.average].into_iter().flatten() {
        io::check_output(volume, 3, false)?;
    }
    io::check_directory(&args.output)?;
    let start = Instant::now();
    let mut stages = Stages::default();
    let reference = stages.read(|| read_volume(&args.reference))?;
    let gpu = stages.open(|| global.gpu())?;
    let keep = args.apply.is_some() || args.average.is_some();
    // The reference belongs to the series it averages; registered volumes are added one by one.
    let mut mean = args.average.as_ref().map(|_| registration::Average::new(reference.dim()));
    if let Some(mean) = &mut mean {
        mean.add(&reference, &vec![true; reference.dim().0])?;
    }
    let mut applied = None;
    let mut found = Vec::new();
    let bar = progress_bar(global, args.moving.len() * reference.dim().0);
    for (v, path) in args.moving.iter().enumerate() {
        let moving = stages.read(|| read_volume(path))?;
        let base = v * reference.dim().0;
        let mut progress = |p: registration::Progress| bar.set_position((base + p.done) as u64);
        let t = Instant::now();
        let result = stages.compute(|| match &gpu {
            Some(g) => registration::register_volume_with(g, &reference.view(), &moving.view(), &how, &mut progress),
            None => registration::cpu::register_volume(&reference.view(), &moving.view(), &how, &mut progress),
        })?;
        let register_ms = ms_since(t);
        let t = Instant::now();
        if keep {
            let (volume, covered) = stages.compute(|| match &gpu {
                Some(g) => registration::apply_shifts(g, &moving.view(), &result.bscans, args.order),
                None => registration::cpu::apply_shifts(&moving.view(), &result.bscans, args.order),
            })?;
            if let Some(mean) = &mut mean {
                stages.compute(|| mean.add(&volume, &covered))?;
            }
            if args.apply.is_some() {
                applied = Some(volume);
            }
        }
        found.push((path, result, register_ms, ms_since(t)));
    }
    bar.finish_and_clear();
    let mean = mean.map(|m| stages.compute(|| Ok(m.finish()))).transpose()?;
    for result in applied.iter().chain(&mean) {
        crate::batch::check_result(&result.view().into_dyn())?;
    }
    // The shifts, the registered volume and the mean: all written, or none.
    lucent::host::all_or_nothing(|| {
        stages.write(|| write_csv(&args.output, &found.iter().map(|f| &f.1).collect::<Vec<_>>()))?;
        if let (Some(out), Some(volume)) = (&args.apply, &applied) {
            stages.write(|| io::write_real(out, &volume.view().into_dyn()))?;
        }
        if let (Some(out), Some(mean)) = (&args.average, &mean) {
            stages.write(|| io::write_real(out, &mean.view().into_dyn()))?;
        }
        Ok(())
    })?;
    let counts = |r: &VolumeRegistration, s: Status| r.bscans.iter().filter(|b| b.status == s).count();
    if global.json {
        let volumes: Vec<_> = found
            .iter()
            .map(|(path, r, register_ms, apply_ms)| {
                json!({
                    "moving": report::path(path),
                    "ok": counts(r, Status::Ok), "spike": counts(r, Status::Spike), "interpolated": counts(r, Status::Interpolated),
                    "stripes": r.stripes,
                    "ms": { "upload": r.upload_ms, "coarse": r.coarse_ms, "fine": r.fine_ms, "register": register_ms, "apply": apply_ms },
                })
            })
            .collect();
        let options = json!({
            "reference": report::path(&args.reference),
            "apply": args.apply.as_ref().map(report::path),
            "average": args.average.as_ref().map(report::path),
            "order": args.order,
            "stripe": args.stripe,
            "coarse_step": args.coarse_step,
            "window": args.window,
            "window_step": args.window_step,
            "spike": args.spike,
            "coarse_spike": args.coarse_spike,
            "median": args.median,
            "min_peak": args.min_peak,
        });
        Report {
            input: report::paths(&args.moving),
            output: report::path(&args.output),
            shape_in: Some(reference.shape().to_vec()),
            options,
            ms: stages.total(start),
            details: json!({ "volumes": volumes }),
            ..Report::new("register-volume", report::device(&gpu))
        }
        .print();
    } else if !global.quiet {
        let device = Global::device_name(gpu.as_ref());
        for (path, r, register_ms, _) in &found {
            eprintln!(
                "lucent: {}: {} B-scans ok, {} spikes, {} interpolated; registered on {device} in {register_ms:.0} ms (coarse {:.0}, fine {:.0})",
                path.display(),
                counts(r, Status::Ok),
                counts(r, Status::Spike),
                counts(r, Status::Interpolated),
                r.coarse_ms,
                r.fine_ms
            );
        }
        eprintln!("lucent: wrote {}", args.output.display());
    }
    Ok(())
}

/// One row per B-scan: bscan,dz,dy,dx,peak,status, after a `volume` column when there are
/// several volumes.
fn write_csv(path: &Path, volumes: &[&VolumeRegistration]) -> Result<(), Error> {
    let several = volumes.len() > 1;
    lucent::host::write_atomic(path, |w| {
        let row = |w: &mut dyn Write, v: usize, b: &BscanShift| {
            if several {
                write!(w, "{v},")?;
            }
            let [dy, dz, dx] = b.shift;
            writeln!(w, "{},{dz:.4},{dy:.4},{dx:.4},{:.6},{}", b.bscan, b.peak, b.status.name())
        };
        let header = if several { "volume,bscan,dz,dy,dx,peak,status" } else { "bscan,dz,dy,dx,peak,status" };
        (|| -> std::io::Result<()> {
            writeln!(w, "{header}")?;
            for (v, r) in volumes.iter().enumerate() {
                for b in &r.bscans {
                    row(w, v, b)?;
                }
            }
            Ok(())
        })()
        .map_err(Error::Io)
    })
}

fn progress_bar(global: &Global, bscans: usize) -> ProgressBar {
    if global.quiet || global.json {
        return ProgressBar::hidden();
    }
    // Drawn on stderr, and only when it is a terminal.
    let bar = ProgressBar::new(bscans as u64);
    bar.set_style(ProgressStyle::with_template("registering {bar:30} {pos}/{len} B-scans [{elapsed_precise}, {eta} left]").expect("a valid template"));
    bar
}
