//! `lucent filter`: scipy.ndimage spatial filters of an array file (gaussian_filter,
//! uniform_filter, correlate or convolve with a kernel file) with scipy's boundary modes, on the
//! GPU or, with `--device cpu` or no adapter, on the f64 CPU reference.

use std::path::PathBuf;
use std::time::Instant;

use lucent::io;
use lucent::ops::convolve::{self, cpu, Boundary};
use lucent::{Buf, Error, Gpu, Recording};
use ndarray::ArrayD;
use serde_json::json;

use crate::Global;

#[derive(clap::Args)]
#[command(
    group = clap::ArgGroup::new("filter").required(true).multiple(false).args(["gaussian", "uniform", "kernel"]),
    after_help = "Examples:
  lucent filter volume.tif -o smooth.tif --gaussian 2.0
  lucent filter image.npy -o mean.npy --uniform 5,3 --boundary nearest
  lucent filter image.npy -o edges.npy --kernel sobel.npy --boundary constant --cval 0 --json"
)]
pub struct Args {
    /// Input array: .npy (any real dtype), .tif/.tiff or .png.
    input: PathBuf,
    /// Output: float32 .npy or .tif, or a .png preview (2D).
    #[arg(short, long)]
    output: PathBuf,
    /// Gaussian filter (truncated at 4 sigma): one standard deviation for every axis, or one
    /// per axis, comma-separated.
    #[arg(long, value_delimiter = ',')]
    gaussian: Option<Vec<f32>>,
    /// Mean over a box: one size for every axis, or one per axis.
    #[arg(long, value_delimiter = ',')]
    uniform: Option<Vec<usize>>,
    /// Correlate with this kernel (as many axes as the input), as scipy.ndimage.correlate.
    #[arg(long)]
    kernel: Option<PathBuf>,
    /// With --kernel: convolve (scipy.ndimage.convolve, the kernel reversed) instead.
    #[arg(long, requires = "kernel")]
    convolve: bool,
    /// Values beyond the edges, as scipy.ndimage names them.
    #[arg(long, value_enum, default_value_t = BoundaryArg::Reflect)]
    boundary: BoundaryArg,
    /// The value outside the array for --boundary constant.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    cval: f32,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum BoundaryArg {
    Reflect,
    Constant,
    Nearest,
    Mirror,
    Wrap,
}

/// The chosen filter, its parameters checked against the input.
enum Filter {
    Gaussian(Vec<f32>),
    Uniform(Vec<usize>),
    Kernel { kernel: ArrayD<f32>, convolve: bool },
}

impl Filter {
    fn name(&self) -> &'static str {
        match self {
            Filter::Gaussian(_) => "gaussian",
            Filter::Uniform(_) => "uniform",
            Filter::Kernel { convolve: false, .. } => "correlate",
            Filter::Kernel { convolve: true, .. } => "convolve",
        }
    }

    fn record(&self, rec: &mut Recording, x: Buf, b: Boundary) -> Result<Buf, Error> {
        match self {
            Filter::Gaussian(sigma) => convolve::gaussian_filter(rec, x, sigma, b),
            Filter::Uniform(size) => convolve::uniform_filter(rec, x, size, b),
            Filter::Kernel { kernel, convolve: false } => convolve::correlate(rec, x, &kernel.view(), b),
            Filter::Kernel { kernel, convolve: true } => convolve::convolve(rec, x, &kernel.view(), b),
        }
    }

    fn on_gpu(&self, gpu: &Gpu, x: &ArrayD<f32>, b: Boundary) -> Result<ArrayD<f32>, Error> {
        let mut rec = Recording::new(gpu);
        let xb = rec.upload_f32(&x.view())?;
        let y = self.record(&mut rec, xb, b)?;
        let d = rec.download(y);
        rec.run()?.f32(d)
    }

    /// The f64 reference (parameters already validated by a dry recording's checks below).
    fn on_cpu(&self, x: &ArrayD<f32>, b: Boundary) -> ArrayD<f32> {
        let x = x.mapv(|v| v as f64);
        let per_axis = |v: &[f64]| if v.len() == 1 { vec![v[0]; x.ndim()] } else { v.to_vec() };
        let y = match self {
            Filter::Gaussian(sigma) => cpu::gaussian_filter(&x, &per_axis(&sigma.iter().map(|&s| s as f64).collect::<Vec<_>>()), b),
            Filter::Uniform(size) => {
                let size: Vec<usize> = if size.len() == 1 { vec![size[0]; x.ndim()] } else { size.clone() };
                cpu::uniform_filter(&x, &size, b)
            }
            Filter::Kernel { kernel, convolve } => {
                let k = kernel.mapv(|v| v as f64);
                if *convolve { cpu::convolve(&x, &k, b) } else { cpu::correlate(&x, &k, b) }
            }
        };
        y.mapv(|v| v as f32)
    }

    /// The checks the GPU path makes, without a device: counts per axis, ranges, finite kernel.
    fn check(&self, ndim: usize) -> Result<(), Error> {
        let count = |n: usize, what: &str| {
            if n == 1 || n == ndim {
                Ok(())
            } else {
                Err(Error::Invalid(format!("--{what}: {n} values for a {ndim}-D input (give 1 or {ndim})")))
            }
        };
        match self {
            Filter::Gaussian(sigma) => {
                count(sigma.len(), "gaussian")?;
                if let Some(s) = sigma.iter().find(|s| !s.is_finite() || **s < 0.0) {
                    return Err(Error::Invalid(format!("--gaussian: sigma must be finite and non-negative, got {s}")));
                }
            }
            Filter::Uniform(size) => {
                count(size.len(), "uniform")?;
                if size.contains(&0) {
                    return Err(Error::Invalid("--uniform: sizes must be at least 1".into()));
                }
            }
            Filter::Kernel { kernel, .. } => {
                lucent::Shape::new(kernel.shape())?;
                if kernel.ndim() != ndim {
                    return Err(Error::Shape(format!("the kernel {:?} must have the input's {ndim} axes", kernel.shape())));
                }
                convolve::check_finite(&kernel.view(), "the kernel")?;
            }
        }
        Ok(())
    }
}

pub fn run(global: &Global, args: &Args) -> Result<(), Error> {
    let start = Instant::now();
    let image = io::read_real(&args.input)?;
    let filter = match (&args.gaussian, &args.uniform, &args.kernel) {
        (Some(s), _, _) => Filter::Gaussian(s.clone()),
        (_, Some(n), _) => Filter::Uniform(n.clone()),
        (_, _, Some(path)) => Filter::Kernel { kernel: io::read_real(path)?, convolve: args.convolve },
        _ => return Err(Error::Invalid("give one of --gaussian, --uniform or --kernel".into())),
    };
    let read_ms = ms_since(start);
    lucent::Shape::new(image.shape())?;
    filter.check(image.ndim())?;
    io::Format::from_path(&args.output)?;
    let boundary = match args.boundary {
        BoundaryArg::Constant => Boundary::Constant(args.cval),
        _ if args.cval != 0.0 => return Err(Error::Invalid("--cval applies only to --boundary constant".into())),
        BoundaryArg::Reflect => Boundary::Reflect,
        BoundaryArg::Nearest => Boundary::Nearest,
        BoundaryArg::Mirror => Boundary::Mirror,
        BoundaryArg::Wrap => Boundary::Wrap,
    };

    let gpu = global.gpu()?;
    let t = Instant::now();
    let output = match &gpu {
        Some(gpu) => filter.on_gpu(gpu, &image, boundary)?,
        None => filter.on_cpu(&image, boundary),
    };
    let compute_ms = ms_since(t);

    let t = Instant::now();
    io::write_real(&args.output, &output.view())?;
    let write_ms = ms_since(t);

    let device = gpu.as_ref().map_or("cpu".to_string(), |g| format!("gpu: {}", g.summary().name));
    if global.json {
        let report = json!({
            "command": "filter",
            "filter": filter.name(),
            "device": device,
            "boundary": format!("{boundary:?}"),
            "input": args.input.display().to_string(),
            "output": args.output.display().to_string(),
            "shape": image.shape(),
            "ms": { "read": read_ms, "compute": compute_ms, "write": write_ms, "total": ms_since(start) },
        });
        println!("{report}");
    } else if !global.quiet {
        println!("{} filter {:?} ({boundary:?}) on {device}: {compute_ms:.2} ms; wrote {}", filter.name(), image.shape(), args.output.display());
    }
    Ok(())
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}
