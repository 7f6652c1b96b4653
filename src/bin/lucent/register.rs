//! `lucent register`: scikit-image's phase_cross_correlation of moving images against a
//! reference (array files), on the GPU (the reference's spectrum computed once), or with
//! `--device cpu` or no adapter on the f64 reference.

use std::path::PathBuf;
use std::time::Instant;

use clap::builder::PossibleValuesParser;
use lucent::registration::cpu;
use lucent::registration::{Normalization, PhaseCorrelation, PhaseCorrelator, Registration};
use lucent::{io, Error};
use ndarray::ArrayD;
use num_complex::{Complex32, Complex64};
use serde_json::json;

use crate::register_affine;
use crate::report::{self, Report, Stages};
use crate::Global;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  lucent register reference.npy moving.npy
  lucent register reference.tif frame1.tif frame2.tif --upsample 100 --json
  lucent register ref.npy mov.npy --normalization none
  lucent register ref_fft.npy mov_fft.npy --space fourier --upsample 20
  lucent register ref.npy mov.npy --reference-mask rm.npy --moving-mask mm.npy --overlap-ratio 0.3
  lucent register fixed.tif moving.tif --transform affine -o registered.tif --itk affine.tfm
  lucent register ct.npy mr.npy --transform rigid --metric mi --bins 50 --reference-mask body.npy --json")]
pub struct Args {
    /// The reference (fixed) image: .npy (any real dtype), .tif/.tiff or .png; 1 to 4 axes.
    pub reference: PathBuf,
    /// Images to register onto it, each of the reference's shape.
    #[arg(required = true)]
    pub moving: Vec<PathBuf>,
    /// Shifts to 1/N of a sample (scikit-image's upsample_factor; 1: whole samples).
    #[arg(long, default_value_t = 1.0, allow_hyphen_values = true)]
    upsample: f64,
    /// The cross-power spectrum's normalisation: phase (phase correlation) or none.
    #[arg(long, default_value = "phase", value_parser = PossibleValuesParser::new(["phase", "none"]))]
    normalization: String,
    /// real: the files hold images; fourier: they hold the images' full spectra (numpy.fft.fftn,
    /// complex .npy), as scikit-image's space="fourier".
    #[arg(long, default_value = "real", value_parser = PossibleValuesParser::new(["real", "fourier"]))]
    space: String,
    /// Masked registration (Padfield): the reference's mask (.npy or TIFF, nonzero = valid), of
    /// its shape. Whole-sample shifts as scikit-image's; with --upsample above 1, refined below a
    /// sample (a parabola through the correlation's peak; scikit-image refines none).
    /// With --transform: the metric counts the reference's points where this mask is nonzero.
    #[arg(long)]
    pub reference_mask: Option<PathBuf>,
    /// With --reference-mask: the moving images' mask. With --transform: the metric counts the
    /// points that map where this mask is nonzero.
    #[arg(long)]
    pub moving_mask: Option<PathBuf>,
    /// With masks: overlaps below this fraction of the largest are left out (scikit-image's
    /// overlap_ratio).
    #[arg(long, default_value_t = 0.3, allow_hyphen_values = true)]
    overlap_ratio: f64,
    #[command(flatten)]
    intensity: register_affine::Args,
}

/// The masked registration of each moving image (scikit-image's phase_cross_correlation with
/// reference_mask and moving_mask): shifts only, error and phase difference none.
fn run_masked(global: &Global, args: &Args, reference_mask: &std::path::Path, moving_mask: &std::path::Path) -> Result<(), Error> {
    if args.space != "real" {
        return Err(Error::Invalid("masked registration takes real-space images: drop --space".into()));
    }
    let start = Instant::now();
    let mut first = Stages::default();
    let mask = |path: &std::path::Path| io::read_real(path).map(|m| m.mapv(|v| v != 0.0));
    let (rm, mm) = first.read(|| Ok((mask(reference_mask)?, mask(moving_mask)?)))?;
    let reference = first.read(|| io::read_real(&args.reference))?;
    let gpu = first.open(|| global.gpu())?;
    for (k, path) in args.moving.iter().enumerate() {
        // The first moving image's report counts the reference's reading and the device's opening.
        let (mut stages, t) = if k == 0 { (std::mem::take(&mut first), start) } else { (Stages::default(), Instant::now()) };
        let moving = stages.read(|| io::read_real(path))?;
        let shift = stages.compute(|| {
            Ok(match &gpu {
                Some(g) => lucent::registration::masked_phase_cross_correlation(g, &reference, &moving, &rm, &mm, args.overlap_ratio, args.upsample)?,
                None => {
                    // The GPU path's checks, then the reference in f64.
                    lucent::registration::check_masked_registration(&reference.view(), &moving.view(), &rm.view(), &mm.view(), args.overlap_ratio)?;
                    let full: Vec<usize> = reference.shape().iter().map(|&n| 2 * n - 1).collect();
                    lucent::host::check_host_array("the masked correlation's arrays", &full, 16 * 8)?;
                    cpu::masked_phase_cross_correlation(&reference.mapv(|v| v as f64), &moving.mapv(|v| v as f64), &rm, &mm, args.overlap_ratio, args.upsample)
                }
            })
        })?;
        if global.json {
            let found = json!({ "shift": shift, "error": null, "phasediff": null, "masked": true });
            print_report(args, path, reference.shape(), &gpu, stages.total(t), found);
        } else {
            println!("{}: shift {shift:?} (masked)", path.display());
        }
    }
    Ok(())
}

/// The reference and moving images as read: images, or spectra.
enum Images {
    Real(ArrayD<f32>),
    Fourier(ArrayD<Complex32>),
}

impl Images {
    fn read(path: &std::path::Path, fourier: bool) -> Result<Images, Error> {
        Ok(if fourier { Images::Fourier(io::read_complex(path)?) } else { Images::Real(io::read_real(path)?) })
    }
    fn shape(&self) -> &[usize] {
        match self {
            Images::Real(x) => x.shape(),
            Images::Fourier(x) => x.shape(),
        }
    }
    fn check(&self, what: &str) -> Result<(), Error> {
        match self {
            Images::Real(x) => lucent::check::check_finite(&x.view(), what),
            Images::Fourier(x) => lucent::check::check_finite(&x.view(), what),
        }
    }
    /// In f64, as spectra, for the reference.
    fn spectrum64(&self) -> ArrayD<Complex64> {
        match self {
            Images::Real(x) => {
                let axes: Vec<usize> = (0..x.ndim()).collect();
                lucent::fft::cpu::c2c(&x.mapv(|v| Complex64::new(v as f64, 0.0)), &axes, false, lucent::fft::Norm::Backward)
            }
            Images::Fourier(x) => x.mapv(|v| Complex64::new(v.re as f64, v.im as f64)),
        }
    }
}

pub fn run(global: &Global, args: &Args) -> Result<(), Error> {
    // (Before any file is read, for the CPU reference too.)
    lucent::registration::check_upsample_factor(args.upsample)?;
    if args.intensity.transform.is_some() {
        return register_affine::run(global, args, &args.intensity);
    }
    register_affine::refuse_options(&args.intensity)?;
    match (&args.reference_mask, &args.moving_mask) {
        (Some(r), Some(m)) => return run_masked(global, args, r, m),
        (None, None) => {}
        _ => return Err(Error::Invalid("masked phase correlation takes both --reference-mask and --moving-mask".into())),
    }
    let how = PhaseCorrelation { upsample_factor: args.upsample, normalization: Normalization::parse(&args.normalization)? };
    let fourier = args.space == "fourier";
    let start = Instant::now();
    let mut first = Stages::default();
    let reference = first.read(|| Images::read(&args.reference, fourier))?;
    let gpu = first.open(|| global.gpu())?;
    let correlator = first.compute(|| {
        Ok(match (&gpu, &reference) {
            (Some(g), Images::Real(x)) => Some(PhaseCorrelator::new(g, &x.view(), &how)?),
            (Some(g), Images::Fourier(x)) => Some(PhaseCorrelator::from_spectrum(g, &x.view(), &how)?),
            (None, _) => None,
        })
    })?;
    let reference64 = first.compute(|| match correlator {
        Some(_) => Ok(None),
        None => {
            reference.check("the reference")?;
            lucent::host::check_host_array("the reference's arrays", reference.shape(), 64)?;
            if how.upsample_factor > 1.0 {
                for shape in lucent::registration::refinement_shapes(reference.shape(), how.upsample_factor) {
                    lucent::host::check_host_array(&format!("the refinement at upsample factor {}", how.upsample_factor), &shape, 16)?;
                }
            }
            Ok(Some(reference.spectrum64()))
        }
    })?;
    for (k, path) in args.moving.iter().enumerate() {
        // The first moving image's report counts the reference's reading and the device's opening.
        let (mut stages, t) = if k == 0 { (std::mem::take(&mut first), start) } else { (Stages::default(), Instant::now()) };
        let moving = stages.read(|| Images::read(path, fourier))?;
        let found: Registration = stages.compute(|| {
            Ok(match (&correlator, &moving) {
                (Some(c), Images::Real(m)) => c.register(&m.view())?,
                (Some(c), Images::Fourier(m)) => c.register_spectrum(&m.view())?,
                (None, _) => {
                    if moving.shape() != reference.shape() {
                        return Err(Error::Shape(format!(
                            "{}: the moving image {:?} and the reference {:?} differ",
                            path.display(),
                            moving.shape(),
                            reference.shape()
                        )));
                    }
                    moving.check("the moving image")?;
                    cpu::phase_cross_correlation_spectra(reference64.as_ref().expect("made without a GPU"), &moving.spectrum64(), &how)
                }
            })
        })?;
        if global.json {
            let details = json!({ "shift": found.shift, "error": found.error, "phasediff": found.phasediff, "masked": false });
            print_report(args, path, reference.shape(), &gpu, stages.total(t), details);
        } else {
            let opt = |v: Option<f64>| v.map_or("none".to_string(), |v| format!("{v:.6}"));
            println!("{}: shift {:?} error {} phasediff {}", path.display(), found.shift, opt(found.error), opt(found.phasediff));
        }
    }
    Ok(())
}

/// One moving image's report: its file the input, the reference among the options, the shift
/// found in `details`.
fn print_report(args: &Args, moving: &std::path::Path, shape: &[usize], gpu: &Option<lucent::Gpu>, ms: Stages, details: serde_json::Value) {
    let options = json!({
        "reference": report::path(&args.reference),
        "upsample": args.upsample,
        "normalization": args.normalization,
        "space": args.space,
        "reference_mask": args.reference_mask.as_ref().map(report::path),
        "moving_mask": args.moving_mask.as_ref().map(report::path),
        "overlap_ratio": args.overlap_ratio,
    });
    Report { input: report::path(moving), shape_in: Some(shape.to_vec()), options, ms, details, ..Report::new("register", report::device(gpu)) }.print();
}
