//! `lucent register`: scikit-image's phase_cross_correlation of moving images against a
//! reference (array files), on the GPU (the reference's spectrum computed once), or with
//! `--device cpu` or no adapter on the f64 reference.

use std::path::PathBuf;
use std::time::Instant;

use clap::builder::PossibleValuesParser;
use lucent::ops::registration::cpu;
use lucent::registration::{Normalization, PhaseCorrelation, PhaseCorrelator, Registration};
use lucent::{io, Error};
use serde_json::json;

use crate::Global;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  lucent register reference.npy moving.npy
  lucent register reference.tif frame1.tif frame2.tif --upsample 100 --json
  lucent register ref.npy mov.npy --normalization none")]
pub struct Args {
    /// The reference image: .npy (any real dtype), .tif/.tiff or .png; 1 to 4 axes.
    reference: PathBuf,
    /// Images to register onto it, each of the reference's shape.
    #[arg(required = true)]
    moving: Vec<PathBuf>,
    /// Shifts to 1/N of a sample (scikit-image's upsample_factor; 1: whole samples).
    #[arg(long, default_value_t = 1.0)]
    upsample: f64,
    /// The cross-power spectrum's normalisation: phase (phase correlation) or none.
    #[arg(long, default_value = "phase", value_parser = PossibleValuesParser::new(["phase", "none"]))]
    normalization: String,
}

pub fn run(global: &Global, args: &Args) -> Result<(), Error> {
    let how = PhaseCorrelation { upsample_factor: args.upsample, normalization: Normalization::parse(&args.normalization)? };
    let reference = io::read_real(&args.reference)?;
    let gpu = global.gpu()?;
    let device = gpu.as_ref().map_or("cpu (f64 reference)".to_string(), |g| g.summary().name.clone());
    let correlator = gpu.as_ref().map(|g| PhaseCorrelator::new(g, &reference.view(), &how)).transpose()?;
    if correlator.is_none() {
        lucent::check::check_finite(&reference.view(), "the reference image")?;
        io::check_host_array("the reference's arrays", reference.shape(), 64)?;
    }
    for path in &args.moving {
        let moving = io::read_real(path)?;
        let start = Instant::now();
        let found: Registration = match &correlator {
            Some(c) => c.register(&moving.view())?,
            None => {
                if moving.shape() != reference.shape() {
                    return Err(Error::Shape(format!("{}: the moving image {:?} and the reference {:?} differ", path.display(), moving.shape(), reference.shape())));
                }
                lucent::check::check_finite(&moving.view(), "the moving image")?;
                cpu::phase_cross_correlation(&reference.mapv(|v| v as f64), &moving.mapv(|v| v as f64), &how)
            }
        };
        let ms = start.elapsed().as_secs_f64() * 1e3;
        if global.json {
            println!("{}", json!({ "moving": path, "reference": args.reference, "shift": found.shift, "error": found.error, "phasediff": found.phasediff, "upsample": args.upsample, "normalization": args.normalization, "device": device, "ms": ms }));
        } else {
            let opt = |v: Option<f64>| v.map_or("none".to_string(), |v| format!("{v:.6}"));
            println!("{}: shift {:?} error {} phasediff {}", path.display(), found.shift, opt(found.error), opt(found.phasediff));
        }
    }
    Ok(())
}
