//! `lucent phantom`: Toft's modified Shepp-Logan phantom (N×N, values in [0, 1]); with
//! `--aooct`, synthetic AO-OCT volumes of one retina with known eye motion (the reference without
//! motion, moving volumes with their own), and the true shifts as CSV.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use lucent::phantom::aooct::{EyeMotion, Retina};
use lucent::{io, Error};
use serde_json::{json, Value};

use crate::report::{self, Report, Stages};
use crate::Global;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  lucent phantom -o phantom.npy --size 512
  lucent phantom --aooct --size 128,96,128 -o ref.npy --moving m1.npy --moving m2.npy --truth truth.csv
  lucent register-volume ref.npy m1.npy m2.npy -o shifts.csv
  lucent phantom --series moving-edge --size 16,32,48,48 -o clean.npy --noisy noisy.npy --sigma 0.25

The truth CSV has one row per B-scan of each moving volume: volume,bscan,dz,dy,dx, the shift that
registers the B-scan onto the reference (B-scan j shows the retina at slow position j + dy).")]
pub struct Args {
    /// A synthetic DXchange scan (HDF5: 16-bit projections of Shepp-Logan slices with rings,
    /// flats, darks, theta) of --size N columns, --angles and --rows, to -o scan.h5.
    #[arg(long)]
    pub scan: bool,
    /// With --scan: projections over [0, 180) degrees (default: N).
    #[arg(long)]
    pub angles: Option<usize>,
    /// With --scan: detector rows, the volume's slices (default: N).
    #[arg(long)]
    pub rows: Option<usize>,
    /// AO-OCT volumes instead of the Shepp-Logan phantom.
    #[arg(long)]
    aooct: bool,
    /// The 3D modified Shepp-Logan phantom (Schabel's ellipsoids): a volume of --size N (N³
    /// voxels) or of an ASTRA volume geometry (--volume), each voxel the phantom's average.
    #[arg(long = "3d")]
    three_d: bool,
    /// With --3d: an ASTRA volume geometry (`create_vol_geom`'s dict as JSON) instead of --size;
    /// the phantom's radius is half the smaller of its window's x and y extents.
    #[arg(long, value_name = "V.json")]
    volume: Option<PathBuf>,
    /// With --3d: an ASTRA 3D projection geometry whose exact projections (each pixel's central
    /// ray's line integral) go to --projections.
    #[arg(long, value_name = "G.json")]
    geometry: Option<PathBuf>,
    /// With --3d and --geometry: where the exact projections (rows, angles, cols) go.
    #[arg(long)]
    projections: Option<PathBuf>,
    /// A 4D (t, z, y, x) series for denoising instead: the moving edge (an intensity ramp, a
    /// step moving along y, a thin tube) or a smooth textured one.
    #[arg(long, value_parser = ["moving-edge", "textured"])]
    series: Option<String>,
    /// With --series: the series plus Gaussian noise of --sigma goes here.
    #[arg(long)]
    noisy: Option<PathBuf>,
    /// With --series: the noise's standard deviation.
    #[arg(long, default_value_t = 0.25, allow_hyphen_values = true)]
    sigma: f64,
    /// With --series moving-edge: the edge's speed in voxels per frame.
    #[arg(long, default_value_t = 0.5, allow_hyphen_values = true)]
    speed: f64,
    /// The phantom, or with --aooct the reference volume (no motion): .npy or .tif.
    #[arg(short, long)]
    pub output: PathBuf,
    /// A moving volume of the same retina under its own eye motion (repeatable).
    #[arg(long)]
    moving: Vec<PathBuf>,
    /// Where the moving volumes' true shifts go (CSV).
    #[arg(long)]
    truth: Option<PathBuf>,
    /// The Shepp-Logan image's side N (default 256), or with --aooct the volume's shape: slow
    /// (B-scans), depth, fast (default 128,96,128).
    #[arg(long, value_delimiter = ',')]
    pub size: Option<Vec<usize>>,
    /// Seed of the retina, the motion and the noise.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Peak drift along the slow and fast axes (voxels).
    #[arg(long, default_value_t = 2.5, allow_hyphen_values = true)]
    drift: f64,
    /// Tremor's standard deviation per B-scan (voxels).
    #[arg(long, default_value_t = 0.15, allow_hyphen_values = true)]
    tremor: f64,
    /// Amplitude of the axial motion (voxels).
    #[arg(long, default_value_t = 1.5, allow_hyphen_values = true)]
    axial: f64,
    /// Micro-saccades per volume.
    #[arg(long, default_value_t = 1)]
    saccades: usize,
    /// Length of each micro-saccade (voxels).
    #[arg(long, default_value_t = 6.0, allow_hyphen_values = true)]
    saccade: f64,
}

pub fn run(global: &Global, args: &Args) -> Result<(), Error> {
    if args.scan {
        return crate::phantom_scan::run(global, args);
    }
    if let Some(kind) = &args.series {
        return series(global, args, kind);
    }
    if args.noisy.is_some() {
        return Err(Error::Invalid("--noisy belongs to --series".into()));
    }
    if args.three_d {
        return shepp_logan_3d(global, args);
    }
    if args.volume.is_some() || args.geometry.is_some() || args.projections.is_some() {
        return Err(Error::Invalid("--volume, --geometry and --projections belong to --3d".into()));
    }
    if !args.aooct {
        return shepp_logan(global, args);
    }
    let size = args.size.clone().unwrap_or(vec![128, 96, 128]);
    let [slow, depth, width] = size[..] else {
        return Err(Error::Invalid(format!("--size {size:?}: three lengths (slow, depth, fast) with --aooct")));
    };
    if [slow, depth, width].iter().any(|&n| !(2..=4096).contains(&n)) {
        return Err(Error::Invalid(format!("--size {size:?}: each length from 2 to 4096")));
    }
    let motion = EyeMotion { drift: args.drift, tremor: args.tremor, axial: args.axial, saccades: args.saccades, saccade: args.saccade };
    let amplitudes = [motion.drift, motion.tremor, motion.axial, motion.saccade];
    if amplitudes.iter().any(|v| !(v.is_finite() && *v >= 0.0 && *v <= 1e4)) {
        return Err(Error::Invalid(format!("motion amplitudes {amplitudes:?}: finite, from 0 to 10000 voxels")));
    }
    if motion.saccades > slow {
        return Err(Error::Invalid(format!("--saccades {}: at most one per B-scan ({slow})", motion.saccades)));
    }
    lucent::host::check_host_array("each volume", &[slow, depth, width], 4)?;
    // Every output checked before the first is written.
    for volume in std::iter::once(&args.output).chain(&args.moving) {
        io::check_output(volume, 3, false)?;
    }
    let start = Instant::now();
    let retina = Retina::new([slow, depth, width], args.seed);
    // The reference, the moving volumes and the truth: all written, or none.
    lucent::host::all_or_nothing(|| {
        io::write_real(&args.output, &retina.reference(args.seed).view().into_dyn())?;
        let mut truth = Vec::new();
        // One volume in memory at a time.
        for (v, path) in args.moving.iter().enumerate() {
            let (volume, shifts) = retina.moving(v, &motion, args.seed);
            io::write_real(path, &volume.view().into_dyn())?;
            truth.push(shifts);
        }
        if let Some(path) = &args.truth {
            lucent::host::write_atomic(path, |w| {
                (|| -> std::io::Result<()> {
                    writeln!(w, "volume,bscan,dz,dy,dx")?;
                    for (v, shifts) in truth.iter().enumerate() {
                        for (j, [dy, dz, dx]) in shifts.iter().enumerate() {
                            writeln!(w, "{v},{j},{dz:.6},{dy:.6},{dx:.6}")?;
                        }
                    }
                    Ok(())
                })()
                .map_err(Error::Io)
            })?;
        }
        Ok(())
    })?;
    let options = json!({
        "phantom": "aooct",
        "size": [slow, depth, width],
        "seed": args.seed,
        "moving": report::paths(&args.moving),
        "truth": args.truth.as_ref().map(report::path),
        "drift": args.drift,
        "tremor": args.tremor,
        "axial": args.axial,
        "saccades": args.saccades,
        "saccade": args.saccade,
    });
    let ms = print_report(global, args, &[slow, depth, width], options, start);
    if !global.json && !global.quiet {
        eprintln!("lucent: wrote an AO-OCT reference {:?} and {} moving volume(s) in {ms:.0} ms", [slow, depth, width], args.moving.len());
    }
    Ok(())
}

/// Toft's modified Shepp-Logan phantom, N×N.
fn shepp_logan(global: &Global, args: &Args) -> Result<(), Error> {
    if !args.moving.is_empty() || args.truth.is_some() {
        return Err(Error::Invalid("--moving and --truth belong to --aooct".into()));
    }
    let size = args.size.clone().unwrap_or(vec![256]);
    let [n] = size[..] else { return Err(Error::Invalid(format!("--size {size:?}: one side N for the Shepp-Logan phantom"))) };
    if !(1..=65536).contains(&n) {
        return Err(Error::Invalid(format!("--size {n}: from 1 to 65536")));
    }
    lucent::host::check_host_array("the phantom", &[n, n], 12)?;
    let start = Instant::now();
    let image = lucent::phantom::shepp_logan::image(n).mapv(|v| v as f32);
    io::write_real(&args.output, &image.view().into_dyn())?;
    let ms = print_report(global, args, &[n, n], json!({ "phantom": "shepp-logan", "size": n }), start);
    if !global.json && !global.quiet {
        eprintln!("lucent: wrote Toft's modified Shepp-Logan phantom {n}×{n} in {ms:.0} ms");
    }
    Ok(())
}

/// The 3D Shepp-Logan phantom and, with --geometry, its exact projections.
fn shepp_logan_3d(global: &Global, args: &Args) -> Result<(), Error> {
    if args.aooct || args.series.is_some() || !args.moving.is_empty() || args.truth.is_some() {
        return Err(Error::Invalid("--3d makes one phantom: not with --aooct, --series, --moving or --truth".into()));
    }
    let v = match (&args.volume, &args.size) {
        (Some(_), Some(_)) => return Err(Error::Invalid("--volume and --size: give one".into())),
        (Some(path), None) => io::astra::volume_geometry(&io::astra::read_json(path)?)?,
        (None, size) => {
            let size = size.clone().unwrap_or(vec![128]);
            let [n] = size[..] else { return Err(Error::Invalid(format!("--size {size:?}: one side N with --3d"))) };
            lucent::tomography::VolumeGeometry::new(n, n, Some(n))?
        }
    };
    if v.slices.is_none() {
        return Err(Error::Invalid("--3d takes a 3D volume geometry (with GridSliceCount)".into()));
    }
    let g = match (&args.geometry, &args.projections) {
        (Some(g), Some(_)) => Some(io::astra::projection_geometry(&io::astra::read_json(g)?)?),
        (None, None) => None,
        _ => return Err(Error::Invalid("--geometry and --projections go together".into())),
    };
    if let Some(g) = &g {
        if !g.is_3d() {
            return Err(Error::Invalid(format!("--3d projects in 3D geometries, not {}", g.kind())));
        }
        lucent::host::check_host_array("the projections", &g.shape(), 12)?;
        io::check_output(args.projections.as_ref().expect("given"), 3, false)?;
    }
    lucent::host::check_host_array("the phantom", &v.shape(), 12)?;
    io::check_output(&args.output, 3, false)?;
    let start = Instant::now();
    lucent::host::all_or_nothing(|| {
        io::write_real(&args.output, &lucent::tomography::shepp_logan_volume(&v, 2)?.mapv(|x| x as f32).into_dyn().view())?;
        if let (Some(g), Some(path)) = (&g, &args.projections) {
            io::write_real(path, &lucent::tomography::shepp_logan_projections(&v, g)?.mapv(|x| x as f32).into_dyn().view())?;
        }
        Ok(())
    })?;
    let details =
        json!({ "phantom": "shepp-logan-3d", "volume": v.shape(), "geometry": g.as_ref().map(|g| g.kind()), "projections": g.as_ref().map(|g| g.shape()) });
    let ms = print_report(global, args, &v.shape(), details, start);
    if !global.json && !global.quiet {
        eprintln!("lucent: wrote the 3D Shepp-Logan phantom {:?} in {ms:.0} ms", v.shape());
    }
    Ok(())
}

/// A 4D series for denoising, clean and (with --noisy) with Gaussian noise.
fn series(global: &Global, args: &Args, kind: &str) -> Result<(), Error> {
    use lucent::phantom::dynamic;
    if args.aooct || !args.moving.is_empty() || args.truth.is_some() {
        return Err(Error::Invalid("--series makes one series: not with --aooct, --moving or --truth".into()));
    }
    let size = args.size.clone().unwrap_or(vec![16, 32, 48, 48]);
    let [t, z, y, x] = size[..] else { return Err(Error::Invalid(format!("--size {size:?}: four lengths (t, z, y, x) with --series"))) };
    if size.iter().any(|&n| !(1..=65536).contains(&n)) || !(args.sigma.is_finite() && args.sigma >= 0.0) || !args.speed.is_finite() {
        return Err(Error::Invalid(format!("--size {size:?} (each 1 to 65536), --sigma {} (0 or more), --speed {} (finite)", args.sigma, args.speed)));
    }
    lucent::host::check_host_array("the series", &size, 12)?;
    let start = Instant::now();
    let shape = [t, z, y, x];
    let clean = if kind == "textured" { dynamic::textured(shape, args.seed) } else { dynamic::moving_edge(shape, args.speed) };
    lucent::host::all_or_nothing(|| {
        io::write_real(&args.output, &clean.mapv(|v| v as f32).into_dyn().view())?;
        if let Some(path) = &args.noisy {
            io::write_real(path, &dynamic::noisy(&clean, args.sigma, args.seed).mapv(|v| v as f32).into_dyn().view())?;
        }
        Ok(())
    })?;
    let options = json!({
        "phantom": kind,
        "size": size,
        "seed": args.seed,
        "noisy": args.noisy.as_ref().map(report::path),
        "sigma": args.sigma,
        "speed": args.speed,
    });
    let ms = print_report(global, args, &size, options, start);
    if !global.json && !global.quiet {
        eprintln!("lucent: wrote a {kind} series {size:?} in {ms:.0} ms");
    }
    Ok(())
}

/// With --json the report (no input; the -o array's shape; the others written are among the
/// options); returns the milliseconds since `start`.
fn print_report(global: &Global, args: &Args, shape: &[usize], options: Value, start: Instant) -> f64 {
    let ms = Stages::default().total(start);
    let total = ms.total;
    if global.json {
        Report {
            output: report::path(&args.output),
            shape_out: Some(shape.to_vec()),
            options,
            ms,
            ..Report::new("phantom", report::device(None::<&lucent::Gpu>))
        }
        .print();
    }
    total
}
