//! `lucent fft`: numpy-convention FFTs of array files (numpy.fft.fftn, ifftn, rfftn, irfftn), on
//! the GPU or, with `--device cpu` or no adapter, on the CPU reference in f32.

use std::path::{Path, PathBuf};

use crate::batch::{self, Batch, Device, Outcome};
use crate::report::Stages;

use lucent::check::check_finite;
use lucent::fft::{self, Norm};
use lucent::io::{self, Loaded};
use lucent::{Error, Gpu, Shape};
use ndarray::ArrayD;
use num_complex::Complex32;
use serde_json::json;

use crate::Global;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  lucent fft volume.npy -o spectrum.npy                        complex64 in, fftn over all axes
  lucent fft image.npy -o half.npy --real --axes 0,1 --norm ortho
  lucent fft half.npy -o image.npy --real --inverse --len 255 --json
  lucent fft a.npy b.npy c.npy -o spectra/ --real              one .npy per input in spectra/")]
pub struct Args {
    /// Input .npy files: complex64/complex128 for complex transforms (real input is taken as
    /// complex, as numpy.fft.fftn takes it) and --real --inverse, any real dtype for --real (TIFF
    /// and PNG are accepted too).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Output: complex64 .npy; float32 (.npy, .tif, .png) for --real --inverse. With several
    /// inputs, a directory.
    #[arg(short, long)]
    output: PathBuf,
    /// Inverse transform (ifftn; irfftn with --real).
    #[arg(long)]
    inverse: bool,
    /// Real transform: rfftn (the last transformed axis keeps n/2+1 values), irfftn with --inverse.
    #[arg(long)]
    real: bool,
    /// Axes to transform, comma-separated, negative counting from the end (default: all).
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    axes: Option<Vec<isize>>,
    /// numpy's norm: which direction carries the 1/n.
    #[arg(long, value_enum, default_value_t = Norm::Backward)]
    norm: Norm,
    /// With --real --inverse: the output length along the last transformed axis (default
    /// 2*(m-1) for m input values, like numpy).
    #[arg(long)]
    len: Option<usize>,
}

/// One transform with its input, checked before any device work.
enum Job {
    Complex { x: ArrayD<Complex32>, inverse: bool },
    RealForward { x: ArrayD<f32> },
    RealInverse { x: ArrayD<Complex32>, len: usize },
}

impl Job {
    fn name(&self) -> &'static str {
        match self {
            Job::Complex { inverse: false, .. } => "fftn",
            Job::Complex { inverse: true, .. } => "ifftn",
            Job::RealForward { .. } => "rfftn",
            Job::RealInverse { .. } => "irfftn",
        }
    }

    fn on_gpu(&self, gpu: &Gpu, axes: &[usize], norm: Norm) -> Result<Loaded, Error> {
        Ok(match self {
            Job::Complex { x, inverse } => Loaded::Complex(if *inverse { fft::ifftn(gpu, x, Some(axes), norm)? } else { fft::fftn(gpu, x, Some(axes), norm)? }),
            Job::RealForward { x } => Loaded::Complex(fft::rfftn(gpu, x, Some(axes), norm)?),
            Job::RealInverse { x, len } => Loaded::Real(fft::irfftn(gpu, x, Some(axes), Some(*len), norm)?),
        })
    }

    /// (The GPU functions check for NaN and infinities themselves.)
    fn on_cpu(&self, axes: &[usize], norm: Norm) -> Result<Loaded, Error> {
        let what = "the FFT's input";
        Ok(match self {
            Job::Complex { x, inverse } => {
                check_finite(&x.view(), what)?;
                Loaded::Complex(fft::cpu::c2c(x, axes, *inverse, norm))
            }
            Job::RealForward { x } => {
                check_finite(&x.view(), what)?;
                Loaded::Complex(fft::cpu::r2c(x, axes, norm))
            }
            Job::RealInverse { x, len } => {
                check_finite(&x.view(), what)?;
                Loaded::Real(fft::cpu::c2r(x, axes, *len, norm))
            }
        })
    }
}

impl Args {
    fn transform(&self) -> &'static str {
        match (self.real, self.inverse) {
            (false, false) => "fftn",
            (false, true) => "ifftn",
            (true, false) => "rfftn",
            (true, true) => "irfftn",
        }
    }
}

pub fn run(global: &Global, args: &Args) -> Result<(), Error> {
    if args.len.is_some() && !(args.real && args.inverse) {
        return Err(Error::Invalid("--len applies only to --real --inverse".into()));
    }
    let options = json!({ "transform": args.transform(), "axes": args.axes, "norm": args.norm, "len": args.len });
    let batch = Batch { command: "fft", global, options };
    let ext = |input: &Path| if args.real && args.inverse { batch::real_ext(input) } else { "npy" };
    batch.run(
        &args.inputs,
        &args.output,
        ext,
        || global.device(),
        |input| io::read(input),
        |loaded, input, output, device, stages| one(args, loaded, input, output, device, stages),
    )
}

fn one(args: &Args, loaded: Loaded, input: &Path, output: &Path, device: &Device, stages: &mut Stages) -> Result<Outcome, Error> {
    let shape_in = loaded.shape().to_vec();
    Shape::new(&shape_in)?;
    let axes = resolve_axes(args.axes.as_deref(), shape_in.len())?;
    let job = make_job(args, input, loaded, &axes)?;
    batch::check_format(output, shape_in.len(), !matches!(job, Job::RealInverse { .. }))?;

    let result = stages.compute(|| match device.gpu() {
        Some(gpu) => job.on_gpu(gpu, &axes, args.norm),
        None => job.on_cpu(&axes, args.norm),
    })?;
    stages.write(|| match &result {
        Loaded::Real(y) => batch::check_result(&y.view()).and_then(|()| io::write_real(output, &y.view())),
        Loaded::Complex(y) => batch::check_result(&y.view()).and_then(|()| io::write_complex(output, &y.view())),
    })?;
    let dtype = if matches!(result, Loaded::Real(_)) { "float32" } else { "complex64" };
    Ok(Outcome {
        placement: None,
        summary: format!("{} {:?} -> {:?} over axes {:?}", job.name(), shape_in, result.shape(), axes),
        shape_out: result.shape().to_vec(),
        shape_in,
        details: json!({ "axes": axes, "dtype_out": dtype }),
    })
}

/// numpy's axes: default all, negative from the end; then distinct and in range, sorted.
fn resolve_axes(axes: Option<&[isize]>, ndim: usize) -> Result<Vec<usize>, Error> {
    let Some(axes) = axes else {
        return Ok((0..ndim).collect());
    };
    let resolved = axes
        .iter()
        .map(|&a| {
            let r = if a < 0 { a + ndim as isize } else { a };
            usize::try_from(r).map_err(|_| Error::Invalid(format!("axis {a} out of range for a {ndim}-D array")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    fft::check_axes(&resolved, ndim)
}

/// Pairs the flags with what the file held; wrong kinds are reported against the input path.
fn make_job(args: &Args, path: &Path, input: Loaded, axes: &[usize]) -> Result<Job, Error> {
    let wrong = |message: &str| Error::File { path: path.display().to_string(), message: message.to_string() };
    match (input, args.real, args.inverse) {
        (Loaded::Complex(x), false, inverse) => Ok(Job::Complex { x, inverse }),
        // numpy.fft.fftn/ifftn take real input as complex with zero imaginary parts.
        (Loaded::Real(x), false, inverse) => {
            lucent::host::check_host_array("the complex copy of the real input", x.shape(), 8)?;
            Ok(Job::Complex { x: x.mapv(|v| Complex32::new(v, 0.0)), inverse })
        }
        (Loaded::Real(x), true, false) => Ok(Job::RealForward { x }),
        (Loaded::Complex(_), true, false) => Err(wrong("holds complex data; --real (rfftn) needs real input")),
        (Loaded::Complex(x), true, true) => {
            let len = real_inverse_len(path, x.shape(), axes, args.len)?;
            Ok(Job::RealInverse { x, len })
        }
        (Loaded::Real(_), true, true) => Err(wrong("holds real data; --real --inverse (irfftn) needs a complex half spectrum")),
    }
}

/// The output length of irfftn along the last transformed axis, checked against the input.
fn real_inverse_len(path: &Path, dims: &[usize], axes: &[usize], len: Option<usize>) -> Result<usize, Error> {
    let last = *axes.last().unwrap();
    let m = dims[last];
    let len = match len {
        Some(0) => return Err(Error::Invalid("--len must be at least 1".into())),
        Some(n) => n,
        None if m < 2 => {
            return Err(Error::Invalid(format!("the output length along axis {last} would be 0 ({} has {m} value there); give it with --len", path.display())))
        }
        None => 2 * (m - 1),
    };
    if len / 2 + 1 != m {
        return Err(Error::Invalid(format!("--len {len} needs {} values along axis {last}, {} has {m}", len / 2 + 1, path.display())));
    }
    Ok(len)
}
