//! `lucent recon`: the beamline pipeline, raw projections (a DXchange HDF5 file, or array files
//! with --flat and --dark) to a volume, every slice, streamed band by band.

use std::path::PathBuf;
use std::time::Instant;

use lucent::tomography::{self, ArrayScan, Center, Filter, Outliers, Paganin, Precision, ReconstructOptions, Samples, ScanSource, Stripe};
use lucent::{io, Error};
use serde_json::json;

use crate::report::{self, Report, Stages};
use crate::Global;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  lucent recon scan.h5 -o volume.zarr --center auto --stripe sorting --outliers 500
  lucent recon scan.h5 -o volume.tif --paganin --energy 25 --distance 30 --pixel 6.5e-5 --alpha 1e-3
  lucent recon projections.npy --flat flats.npy --dark darks.npy -o volume.npy --center 1023.5
  lucent recon scan.h5 -o volume.npy --center 1023.5 --method gridrec --dtype float16")]
pub struct Args {
    /// Raw projections (angles, rows, cols): a DXchange HDF5 file (/exchange/data, data_white,
    /// data_dark, theta in degrees; read by bands of rows), a Zarr array (read by bands too) or
    /// an array file (.npy, .tif: read whole).
    input: PathBuf,
    /// The volume (rows, cols, cols): .zarr (OME-Zarr), .npy or .tif, written as it is computed.
    #[arg(short, long)]
    output: PathBuf,
    /// Flat fields (count, rows, cols) for an array input (an HDF5 scan holds its own).
    #[arg(long)]
    flat: Option<PathBuf>,
    /// Dark fields (count, rows, cols) for an array input.
    #[arg(long)]
    dark: Option<PathBuf>,
    /// The rotation centre: `auto` (Vo's method on the middle row, TomoPy's find_center_vo) or
    /// a detector coordinate.
    #[arg(long, default_value = "auto", allow_hyphen_values = true)]
    center: String,
    /// Ring removal on the sinograms: none, sorting or large (Vo et al. 2018's
    /// remove_stripe_based_sorting, remove_large_stripe), fw (Münch et al. 2009's
    /// remove_stripe_fw, db5).
    #[arg(long, default_value = "none", value_parser = ["none", "sorting", "large", "fw"])]
    stripe: String,
    /// The Fourier-wavelet method's levels (default: ⌈log2 max(angles, cols)⌉).
    #[arg(long)]
    fw_level: Option<usize>,
    /// The Fourier-wavelet method's damping width.
    #[arg(long, default_value_t = 2.0)]
    sigma: f64,
    /// The median's size along the detector (sorting: 21 by default, large: 51).
    #[arg(long)]
    stripe_size: Option<usize>,
    /// The sorting method's median: 1 along the detector, 2 in 2D.
    #[arg(long, default_value_t = 1)]
    stripe_dim: usize,
    /// The large-stripe method's threshold in noise levels.
    #[arg(long, default_value_t = 3.0)]
    snr: f64,
    /// The large-stripe method's share of extreme values left out of the column means.
    #[arg(long, default_value_t = 0.1)]
    drop_ratio: f64,
    /// Replace raw values this much above their 3×3 median (TomoPy's remove_outlier `dif`).
    #[arg(long, allow_hyphen_values = true)]
    outliers: Option<f32>,
    /// The outlier median's size.
    #[arg(long, default_value_t = 3)]
    outlier_size: usize,
    /// Clip the transmission above this (TomoPy's normalize `cutoff`).
    #[arg(long)]
    cutoff: Option<f32>,
    /// Single-distance phase retrieval (Paganin, TomoPy's retrieve_phase) before −log.
    #[arg(long)]
    paganin: bool,
    /// Paganin: the X-ray energy in keV.
    #[arg(long, default_value_t = 20.0)]
    energy: f64,
    /// Paganin: the sample-detector distance in cm.
    #[arg(long, default_value_t = 50.0)]
    distance: f64,
    /// Paganin: the detector pixel size in cm.
    #[arg(long, default_value_t = 1e-4)]
    pixel: f64,
    /// Paganin: the regularisation.
    #[arg(long, default_value_t = 1e-3)]
    alpha: f64,
    /// FBP's method: auto (the log-polar method where it applies), gridrec (gridding, any
    /// centre), direct.
    #[arg(long, default_value = "auto", value_parser = ["auto", "logpolar", "direct", "gridrec"])]
    method: String,
    /// The volume's values: float32, or float16 (tomocupy's --dtype float16: half the bytes to
    /// write, 11 significant bits, |values| up to 65504; .npy and .tif).
    #[arg(long, default_value = "float32", value_parser = ["float32", "float16"])]
    dtype: String,
    /// FBP's filter.
    #[arg(long, default_value = "ramp", value_parser = clap::builder::PossibleValuesParser::new(Filter::NAMES))]
    filter: String,
}

pub fn run(global: &Global, args: &Args) -> Result<(), Error> {
    let start = Instant::now();
    let mut stages = Stages::default();
    let options = options(args)?;
    let h5 = matches!(io::Format::from_path(&args.input), Ok(io::Format::Hdf5));
    if h5 && (args.flat.is_some() || args.dark.is_some()) {
        return Err(Error::Invalid("an HDF5 scan holds its own flat and dark fields: leave out --flat and --dark".into()));
    }
    io::check_output(&args.output, 3, false)?;
    let scan: Box<dyn ScanSource> = stages.read(|| -> Result<Box<dyn ScanSource>, Error> {
        if h5 {
            return Ok(Box::new(io::hdf5::Scan::open(&args.input)?));
        }
        let three = |path: &PathBuf| -> Result<Samples, Error> {
            let a = io::read_real(path)?;
            let a = a.into_dimensionality::<ndarray::Ix3>().map_err(|_| Error::Shape(format!("{} is not 3D (count, rows, cols)", path.display())))?;
            Ok(Samples::F32(a))
        };
        let flat = args.flat.as_ref().map(three).transpose()?;
        let dark = args.dark.as_ref().map(three).transpose()?;
        // A Zarr array is read band by band; other files whole (within the host budget).
        if io::is_zarr(&args.input) {
            return Ok(Box::new(io::zarr::ZarrScan::new(io::zarr::Source::open(&args.input)?, flat, dark)?));
        }
        Ok(Box::new(ArrayScan::new(three(&args.input)?, flat, dark, None)?))
    })?;
    let [angles, rows, cols] = scan.shape();
    let gpu = stages.open(|| global.gpu())?;
    let Some(gpu) = gpu else { return Err(Error::Invalid("lucent recon runs on a GPU (no adapter: see lucent info)".into())) };
    // A bar per stage: phase retrieval's projections, then the slices.
    let bar_for = |stage: &str, count: usize| match stage {
        "projections" => super::tomography::counted_bar(global, count, "phase retrieval", "projections"),
        _ => super::tomography::counted_bar(global, count, "recon", "slices"),
    };
    let mut bar = if args.paganin { bar_for("projections", angles) } else { bar_for("slices", rows) };
    let mut stage = if args.paganin { "projections" } else { "slices" };
    let shape = [rows, cols, cols];
    let t = Instant::now();
    let result = io::volume::write_streamed(&args.output, shape, options.precision, |write| {
        let mut progress = |p: lucent::tomography::Progress| {
            if p.stage != stage {
                bar.finish_and_clear();
                bar = bar_for(p.stage, p.total);
                stage = p.stage;
            }
            bar.set_position(p.done as u64);
        };
        tomography::reconstruct(&gpu, scan.as_ref(), &options, &mut progress, write)
    });
    bar.finish_and_clear();
    let recon = result?;
    stages.compute = Some(report::ms_since(t) - recon.write_ms);
    stages.write = Some(recon.write_ms);
    if global.json {
        Report {
            input: report::path(&args.input),
            output: report::path(&args.output),
            shape_in: Some(vec![angles, rows, cols]),
            shape_out: Some(shape.to_vec()),
            options: json!({
                "center": args.center, "stripe": args.stripe, "stripe_size": args.stripe_size, "stripe_dim": args.stripe_dim, "snr": args.snr, "drop_ratio": args.drop_ratio, "fw_level": args.fw_level, "sigma": args.sigma,
                "outliers": args.outliers, "outlier_size": args.outlier_size, "cutoff": args.cutoff, "paganin": args.paganin,
                "energy": args.energy, "distance": args.distance, "pixel": args.pixel, "alpha": args.alpha, "filter": args.filter, "method": args.method, "dtype": args.dtype,
                "flat": args.flat.as_ref().map(report::path), "dark": args.dark.as_ref().map(report::path),
            }),
            ms: stages.total(start),
            details: serde_json::to_value(&recon).expect("a report"),
            ..Report::new("recon", report::device(Some(&gpu)))
        }
        .print();
    } else if !global.quiet {
        eprintln!("centre {:.2}; {} slices of {cols}² in {} bands", recon.center, rows, recon.bands);
    }
    Ok(())
}

fn options(args: &Args) -> Result<ReconstructOptions, Error> {
    let center = match args.center.as_str() {
        "auto" => Center::Auto,
        v => Center::At(v.parse::<f64>().map_err(|_| Error::Invalid(format!("--center {v} (auto or a number)")))?),
    };
    let stripe = match args.stripe.as_str() {
        "sorting" => Stripe::Sorting { size: args.stripe_size.unwrap_or(21), dim: args.stripe_dim },
        "fw" => Stripe::Fw { level: args.fw_level, sigma: args.sigma, pad: true },
        "large" => Stripe::Large { snr: args.snr, size: args.stripe_size.unwrap_or(51), drop_ratio: args.drop_ratio, norm: true },
        _ => Stripe::None,
    };
    let paganin = args.paganin.then_some(Paganin { pixel_size: args.pixel, distance: args.distance, energy: args.energy, alpha: args.alpha, pad: true });
    Ok(ReconstructOptions {
        outliers: args.outliers.map(|dif| Outliers { dif, size: args.outlier_size }),
        cutoff: args.cutoff,
        stripe,
        paganin,
        center,
        filter: Filter::parse(&args.filter)?,
        method: lucent::tomography::Method::parse(&args.method)?,
        precision: if args.dtype == "float16" { Precision::F16 } else { Precision::F32 },
        ..ReconstructOptions::default()
    })
}
