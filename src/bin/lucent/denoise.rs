//! `lucent denoise`: true 4D adaptive filtering (lucent::denoise) of a volume series, block
//! matching (BM3D/BM4D), non-local means or total variation of an image or a volume.

use std::path::PathBuf;
use std::time::Instant;

use lucent::denoise::cpu;
use lucent::denoise::{Bm4dNoise, Method, Options};
use lucent::engine::{Form, Placement};
use lucent::{io, Error};
use ndarray::{ArrayD, Axis};
use serde_json::json;

use crate::report::{self, Report, Stages};
use crate::Global;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  lucent denoise series.npy -o denoised.npy --dims 4 --json
  lucent denoise t0.tif t1.tif t2.tif t3.tif -o denoised.npy --dims 4
  lucent denoise volume.npy -o denoised.npy --method bm --sigma 0.1")]
pub struct Args {
    /// The data: one .npy (up to 4 axes, (t, z, y, x)) or TIFF (3D), or several TIFFs as time
    /// points of a series.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The result (.npy, or TIFF for up to 3 axes), written atomically.
    #[arg(short, long)]
    output: PathBuf,
    /// Axes filtered together, the last ones (2, 3 or 4; default: all, at most 4).
    #[arg(long)]
    dims: Option<usize>,
    /// The algorithm: adaptive filtering (series, up to 4 axes together), block matching
    /// (bm4d's BM3D/BM4D), non-local means or total variation (scikit-image's), the last three
    /// of an image or a volume.
    #[arg(long, value_enum, default_value_t = Algorithm::Adaptive)]
    method: Algorithm,
    /// The noise's standard deviation (bm: estimated as scikit-image's estimate_sigma when
    /// absent; nlm: scikit-image's sigma, 0 when absent).
    #[arg(long, allow_hyphen_values = true)]
    sigma: Option<f64>,
    /// Block matching of correlated noise: its power spectral density (bm4d's sigma_psd: an
    /// array of the data's shape, DC first, white noise of σ being N · σ² everywhere).
    #[arg(long, conflicts_with = "sigma")]
    psd: Option<PathBuf>,
    /// Block matching of a series (t, z, y, x): the time points either side each search
    /// window reaches (0: every time point on its own, as bm4d frame by frame).
    #[arg(long, default_value_t = 1)]
    time_window: usize,
    /// Non-local means' h (scikit-image's, 0.1).
    #[arg(long, default_value_t = 0.1, allow_hyphen_values = true)]
    h: f64,
    /// Total variation's weight (scikit-image's denoise_tv_chambolle, 0.1).
    #[arg(long, default_value_t = 0.1, allow_hyphen_values = true)]
    weight: f64,
    /// Adaptive filtering: the magnitude mapping's noise level, relative to the largest
    /// structure.
    #[arg(long, default_value_t = Options::default().sigma, allow_hyphen_values = true)]
    noise_level: f64,
    /// The magnitude mapping's slope above the noise level.
    #[arg(long, default_value_t = Options::default().alpha, allow_hyphen_values = true)]
    alpha: f64,
    /// The magnitude mapping's slope below the noise level.
    #[arg(long, default_value_t = Options::default().beta, allow_hyphen_values = true)]
    beta: f64,
    /// The isotropy mapping's half point (an eigenvalue ratio in (0, 1)).
    #[arg(long, default_value_t = Options::default().isotropy_alpha, allow_hyphen_values = true)]
    isotropy_alpha: f64,
    /// The isotropy mapping's slope.
    #[arg(long, default_value_t = Options::default().isotropy_beta, allow_hyphen_values = true)]
    isotropy_beta: f64,
    /// The control tensor's overall gain.
    #[arg(long, default_value_t = Options::default().gamma0, allow_hyphen_values = true)]
    gamma0: f64,
    /// The reconstruction lowpass's cutoff (radians per sample; default 1.8 over 2 or 3 axes,
    /// 2.2 over 4).
    #[arg(long, allow_hyphen_values = true)]
    lowpass: Option<f64>,
    /// σ of the structure tensor's smoothing (downsampled samples).
    #[arg(long, default_value_t = Options::default().tensor_sigma, allow_hyphen_values = true)]
    tensor_sigma: f64,
    /// σ of the control tensor's smoothing (downsampled samples).
    #[arg(long, default_value_t = Options::default().control_sigma, allow_hyphen_values = true)]
    control_sigma: f64,
    /// Taps per axis of the monomial (structure) filters.
    #[arg(long, default_value_t = Options::default().structure_taps)]
    structure_taps: usize,
    /// Taps per axis of the reconstruction filters.
    #[arg(long, default_value_t = Options::default().reconstruction_taps)]
    reconstruction_taps: usize,
    /// Estimate the structure at full resolution (default: half resolution in space).
    #[arg(long)]
    full_resolution: bool,
    /// Adaptive filtering: how the GPU applies each bank of filters: by FFT, by direct sums
    /// (spatial), or each by the cheaper (auto).
    #[arg(long, value_enum, default_value_t = Method::Auto)]
    bank: Method,
    /// Slab length along the slab axis (default: as long as the GPU holds).
    #[arg(long)]
    slab: Option<usize>,
}

impl Args {
    fn options(&self) -> Options {
        Options {
            dims: self.dims,
            sigma: self.noise_level,
            alpha: self.alpha,
            beta: self.beta,
            isotropy_alpha: self.isotropy_alpha,
            isotropy_beta: self.isotropy_beta,
            gamma0: self.gamma0,
            lowpass: self.lowpass,
            tensor_sigma: self.tensor_sigma,
            control_sigma: self.control_sigma,
            structure_taps: self.structure_taps,
            reconstruction_taps: self.reconstruction_taps,
            downsample: !self.full_resolution,
            slab_len: self.slab,
            method: self.bank,
            ..Options::default()
        }
    }

    /// The options as the report gives them (names as on the command line).
    fn json_options(&self) -> serde_json::Value {
        json!({
            "method": self.method,
            "sigma": self.sigma,
            "psd": self.psd,
            "h": self.h,
            "weight": self.weight,
            "time_window": self.time_window,
            "dims": self.dims,
            "noise_level": self.noise_level,
            "alpha": self.alpha,
            "beta": self.beta,
            "isotropy_alpha": self.isotropy_alpha,
            "isotropy_beta": self.isotropy_beta,
            "gamma0": self.gamma0,
            "lowpass": self.lowpass,
            "tensor_sigma": self.tensor_sigma,
            "control_sigma": self.control_sigma,
            "structure_taps": self.structure_taps,
            "reconstruction_taps": self.reconstruction_taps,
            "full_resolution": self.full_resolution,
            "bank": self.bank,
            "slab": self.slab,
        })
    }
}

/// `lucent denoise --method`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Algorithm {
    Adaptive,
    Bm,
    Nlm,
    Tv,
}

impl Algorithm {
    fn name(self) -> &'static str {
        match self {
            Algorithm::Adaptive => "adaptive",
            Algorithm::Bm => "bm",
            Algorithm::Nlm => "nlm",
            Algorithm::Tv => "tv",
        }
    }
}

/// One input, or several of one shape stacked as time points.
fn read(inputs: &[PathBuf]) -> Result<ArrayD<f32>, Error> {
    let first = io::read_real(&inputs[0])?;
    if inputs.len() == 1 {
        return Ok(first);
    }
    let mut frames = vec![first];
    for path in &inputs[1..] {
        let frame = io::read_real(path)?;
        if frame.shape() != frames[0].shape() {
            return Err(Error::Shape(format!("{}: shape {:?}, the first time point {:?}", path.display(), frame.shape(), frames[0].shape())));
        }
        frames.push(frame);
    }
    let views: Vec<_> = frames.iter().map(|f| f.view()).collect();
    ndarray::stack(Axis(0), &views).map_err(|e| Error::Shape(e.to_string()))
}

/// What a method's run gives the shared tail: the input, the result, the placement and the
/// report's details, and the summary line's middle.
type Outcome = (ArrayD<f32>, ArrayD<f32>, Option<Placement>, serde_json::Value, String);

pub fn run(global: &Global, args: &Args) -> Result<(), Error> {
    let start = Instant::now();
    // The arguments first, before the device opens.
    if args.method == Algorithm::Adaptive {
        if args.sigma.is_some() {
            return Err(Error::Invalid("--sigma is the noise's σ of --method bm or nlm; adaptive filtering's noise level is --noise-level".into()));
        }
        args.options().check()?;
    }
    if args.psd.is_some() && args.method != Algorithm::Bm {
        return Err(Error::Invalid("--psd is block matching's noise (--method bm)".into()));
    }
    if args.method != Algorithm::Adaptive && args.inputs.len() != 1 {
        return Err(Error::Invalid(format!("denoise --method {} takes one image or volume, not {} inputs", args.method.name(), args.inputs.len())));
    }
    let mut stages = Stages::default();
    let gpu = stages.open(|| global.gpu())?;
    let (x, y, placement, details, what) = match args.method {
        Algorithm::Adaptive => adaptive(global, args, &gpu, &mut stages)?,
        _ => other(args, &gpu, &mut stages)?,
    };
    crate::batch::check_result(&y.view())?;
    stages.write(|| io::write_real(&args.output, &y.view()))?;
    if global.json {
        Report {
            input: report::paths(&args.inputs),
            output: report::path(&args.output),
            shape_in: Some(x.shape().to_vec()),
            shape_out: Some(y.shape().to_vec()),
            options: args.json_options(),
            ms: stages.total(start),
            placement,
            details,
            ..Report::new("denoise", report::device(&gpu))
        }
        .print();
    } else if !global.quiet {
        let compute_s = stages.compute.unwrap_or(0.0) / 1e3;
        eprintln!("denoised {:?} {what} in {compute_s:.2} s → {}", y.shape(), args.output.display());
    }
    Ok(())
}

/// Adaptive filtering of a series, on the GPU or the CPU reference.
fn adaptive(global: &Global, args: &Args, gpu: &Option<lucent::Gpu>, stages: &mut Stages) -> Result<Outcome, Error> {
    let options = args.options();
    let x = stages.read(|| read(&args.inputs))?;
    // The output's format holds the result (4D: .npy or .zarr) before anything is computed.
    io::check_output(&args.output, x.ndim(), false)?;
    let (y, run) = stages.compute(|| match gpu {
        Some(gpu) => {
            let bar = if global.quiet || global.json { indicatif::ProgressBar::hidden() } else { indicatif::ProgressBar::new(1) };
            bar.set_style(indicatif::ProgressStyle::with_template("{msg} {bar:30} {pos}/{len} slabs [{elapsed_precise}]").expect("a valid template"));
            let out = lucent::denoise::adaptive_filter_with(gpu, &x.view(), &options, &mut |p| {
                bar.set_length(p.total as u64);
                bar.set_message(p.stage.to_string());
                bar.set_position(p.done as u64);
            })?;
            bar.finish_and_clear();
            Ok((out.0, Some(out.1)))
        }
        None => {
            lucent::check::check_finite(&x.view(), "the data to denoise")?;
            Ok((cpu::adaptive_filter(&x.mapv(f64::from), &options)?.mapv(|v| v as f32), None))
        }
    })?;
    let d = options.axes(x.ndim())?;
    // Slabs planned from the device's budgets, none larger tried first; dims: the axes filtered
    // together; report: the GPU run's slabs and timings.
    let placement = run.as_ref().map(|r| Placement::planned(Form::Slabs, r.slabs));
    Ok((x, y, placement, json!({ "dims": d, "report": run }), format!("over {d} axes")))
}

/// Block matching, non-local means or total variation of one image or volume, on the GPU.
fn other(args: &Args, gpu: &Option<lucent::Gpu>, stages: &mut Stages) -> Result<Outcome, Error> {
    let Some(gpu) = gpu else {
        return Err(Error::Invalid(format!("denoise --method {} runs on the GPU only (no --device cpu yet)", args.method.name())));
    };
    let x = stages.read(|| io::read_real(&args.inputs[0]))?;
    io::check_output(&args.output, x.ndim(), false)?;
    lucent::check::check_finite(&x.view(), "the data to denoise")?;
    let psd = args.psd.as_ref().map(|p| stages.read(|| io::read_real(p))).transpose()?;
    let mut sigma = args.sigma;
    let y = stages.compute(|| match args.method {
        Algorithm::Bm => {
            let noise = match (&psd, args.sigma) {
                (Some(p), _) => Bm4dNoise::Psd(p.view()),
                (None, Some(s)) => Bm4dNoise::Sigma(s),
                (None, None) => Bm4dNoise::Sigma(lucent::denoise::estimate_sigma(&x)?),
            };
            if let Bm4dNoise::Sigma(s) = noise {
                sigma = Some(s);
            }
            let profile = lucent::denoise::Bm4dProfile { search_window_time: args.time_window, ..lucent::denoise::Bm4dProfile::for_noise(x.shape(), &noise)? };
            lucent::denoise::bm4d(gpu, &x, &noise, Some(&profile), lucent::denoise::Bm4dStage::All)
        }
        Algorithm::Nlm => {
            let o = lucent::denoise::NlMeans { h: args.h, sigma: args.sigma.unwrap_or(0.0), ..lucent::denoise::NlMeans::default() };
            lucent::denoise::denoise_nl_means(gpu, &x, &o, None)
        }
        Algorithm::Tv => lucent::denoise::denoise_tv_chambolle(gpu, &x, args.weight, 2e-4, 200, None),
        Algorithm::Adaptive => unreachable!("adaptive filtering runs in adaptive()"),
    })?;
    // sigma: the noise level used (estimated where not given).
    Ok((x, y, None, json!({ "sigma": sigma }), format!("({})", args.method.name())))
}
