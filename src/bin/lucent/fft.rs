//! `lucent fft`: numpy-convention FFTs of array files (numpy.fft.fftn, ifftn, rfftn, irfftn), on
//! the GPU or, with `--device cpu` or no adapter, on the CPU reference in f32.

use std::path::{Path, PathBuf};
use std::time::Instant;

use lucent::fft::{self, Norm};
use lucent::io::{self, Loaded};
use lucent::check::check_finite;
use lucent::{Error, Gpu, Shape};
use ndarray::ArrayD;
use num_complex::Complex32;
use serde_json::json;

use crate::Global;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  lucent fft volume.npy -o spectrum.npy                        complex64 in, fftn over all axes
  lucent fft image.npy -o half.npy --real --axes 0,1 --norm ortho
  lucent fft half.npy -o image.npy --real --inverse --len 255 --json")]
pub struct Args {
    /// Input .npy: complex64/complex128 for complex transforms and --real --inverse, any real
    /// dtype for --real (TIFF and PNG are accepted too).
    input: PathBuf,
    /// Output: complex64 .npy; float32 (.npy, .tif, .png) for --real --inverse.
    #[arg(short, long)]
    output: PathBuf,
    /// Inverse transform (ifftn; irfftn with --real).
    #[arg(long)]
    inverse: bool,
    /// Real transform: rfftn (the last transformed axis keeps n/2+1 values), irfftn with --inverse.
    #[arg(long)]
    real: bool,
    /// Axes to transform, comma-separated, negative counting from the end (default: all).
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    axes: Option<Vec<isize>>,
    /// numpy's norm: which direction carries the 1/n.
    #[arg(long, value_enum, default_value_t = NormArg::Backward)]
    norm: NormArg,
    /// With --real --inverse: the output length along the last transformed axis (default
    /// 2*(m-1) for m input values, like numpy).
    #[arg(long)]
    len: Option<usize>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum NormArg {
    Backward,
    Ortho,
    Forward,
}

impl NormArg {
    fn norm(self) -> Norm {
        match self {
            NormArg::Backward => Norm::Backward,
            NormArg::Ortho => Norm::Ortho,
            NormArg::Forward => Norm::Forward,
        }
    }
    fn name(self) -> &'static str {
        match self {
            NormArg::Backward => "backward",
            NormArg::Ortho => "ortho",
            NormArg::Forward => "forward",
        }
    }
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

pub fn run(global: &Global, args: &Args) -> Result<(), Error> {
    let start = Instant::now();
    let input = io::read(&args.input)?;
    let read_ms = ms_since(start);
    let shape_in = input.shape().to_vec();
    Shape::new(&shape_in)?;
    let axes = resolve_axes(args.axes.as_deref(), shape_in.len())?;
    let job = make_job(args, input, &axes)?;
    check_output(&args.output, matches!(job, Job::RealInverse { .. }))?;
    let norm = args.norm.norm();

    let gpu = global.gpu()?;
    let t = Instant::now();
    let output = match &gpu {
        Some(gpu) => job.on_gpu(gpu, &axes, norm)?,
        None => job.on_cpu(&axes, norm)?,
    };
    let compute_ms = ms_since(t);

    let t = Instant::now();
    match &output {
        Loaded::Real(y) => io::write_real(&args.output, &y.view())?,
        Loaded::Complex(y) => io::write_complex(&args.output, &y.view())?,
    }
    let write_ms = ms_since(t);

    let device = gpu.as_ref().map_or("cpu".to_string(), |g| format!("gpu: {}", g.summary().name));
    if global.json {
        let report = json!({
            "command": "fft",
            "transform": job.name(),
            "device": device,
            "axes": axes,
            "norm": args.norm.name(),
            "input": args.input.display().to_string(),
            "output": args.output.display().to_string(),
            "shape_in": shape_in,
            "shape_out": output.shape(),
            "dtype_out": if matches!(output, Loaded::Real(_)) { "float32" } else { "complex64" },
            // compute: plan, upload, transform and download on the GPU; the transform on the CPU.
            "ms": { "read": read_ms, "compute": compute_ms, "write": write_ms, "total": ms_since(start) },
        });
        println!("{report}");
    } else if !global.quiet {
        println!(
            "{} {:?} -> {:?} over axes {:?} on {device}: {compute_ms:.2} ms; wrote {}",
            job.name(),
            shape_in,
            output.shape(),
            axes,
            args.output.display()
        );
    }
    Ok(())
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
fn make_job(args: &Args, input: Loaded, axes: &[usize]) -> Result<Job, Error> {
    let wrong = |message: &str| Error::File { path: args.input.display().to_string(), message: message.to_string() };
    if args.len.is_some() && !(args.real && args.inverse) {
        return Err(Error::Invalid("--len applies only to --real --inverse".into()));
    }
    match (input, args.real, args.inverse) {
        (Loaded::Complex(x), false, inverse) => Ok(Job::Complex { x, inverse }),
        (Loaded::Real(_), false, _) => Err(wrong("holds real data; a complex transform needs complex64/complex128 input (use --real for rfftn)")),
        (Loaded::Real(x), true, false) => Ok(Job::RealForward { x }),
        (Loaded::Complex(_), true, false) => Err(wrong("holds complex data; --real (rfftn) needs real input")),
        (Loaded::Complex(x), true, true) => {
            let len = real_inverse_len(&args.input, x.shape(), axes, args.len)?;
            Ok(Job::RealInverse { x, len })
        }
        (Loaded::Real(_), true, true) => Err(wrong("holds real data; --real --inverse (irfftn) needs a complex half spectrum")),
    }
}

/// Fails before any work when the output could not be written: a complex result needs .npy.
fn check_output(path: &Path, real: bool) -> Result<(), Error> {
    let wrong = |message: String| Error::File { path: path.display().to_string(), message };
    if !real && io::Format::from_path(path)? != io::Format::Npy {
        return Err(wrong("a complex result can only be written to .npy".into()));
    }
    match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) if !dir.is_dir() => Err(wrong(format!("the directory {} does not exist", dir.display()))),
        _ => Ok(()),
    }
}

/// The output length of irfftn along the last transformed axis, checked against the input.
fn real_inverse_len(path: &Path, dims: &[usize], axes: &[usize], len: Option<usize>) -> Result<usize, Error> {
    let last = *axes.last().unwrap();
    let m = dims[last];
    let len = len.unwrap_or(2 * (m - 1));
    if len == 0 {
        return Err(Error::Invalid(format!(
            "the output length along axis {last} would be 0 ({} has {m} value there); pass --len",
            path.display()
        )));
    }
    if len / 2 + 1 != m {
        return Err(Error::Invalid(format!(
            "--len {len} needs {} values along axis {last}, {} has {m}",
            len / 2 + 1,
            path.display()
        )));
    }
    Ok(len)
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}
