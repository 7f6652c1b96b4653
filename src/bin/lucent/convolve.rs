//! `lucent convolve`: scipy.signal.convolve (or, with --correlate, scipy.signal.correlate) of an
//! array file with a kernel file, by FFT or direct sums, on the GPU or, with `--device cpu` or no
//! adapter, on the f64 CPU reference.

use std::path::PathBuf;
use std::time::Instant;

use lucent::io;
use lucent::ops::convolve::{self, cpu, Geometry, Method, Mode};
use lucent::{Error, Gpu, Recording};
use ndarray::ArrayD;
use serde_json::json;

use crate::Global;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  lucent convolve image.npy psf.npy -o blurred.npy --mode same
  lucent convolve volume.tif kernel.npy -o out.tif --mode valid --method fft --json
  lucent convolve image.png template.npy -o match.npy --correlate --mode same")]
pub struct Args {
    /// Input array: .npy (any real dtype), .tif/.tiff or .png.
    input: PathBuf,
    /// Kernel array with as many axes as the input.
    kernel: PathBuf,
    /// Output: float32 .npy or .tif, or a .png preview (2D).
    #[arg(short, long)]
    output: PathBuf,
    /// scipy.signal's mode: full (input + kernel - 1), same (the input's shape, centred) or
    /// valid (complete overlaps only).
    #[arg(long, value_enum, default_value_t = ModeArg::Full)]
    mode: ModeArg,
    /// fft, direct sums, or auto: direct while taps × outputs is small against the FFT's size.
    #[arg(long, value_enum, default_value_t = MethodArg::Auto)]
    method: MethodArg,
    /// Correlate instead of convolving (the kernel not reversed).
    #[arg(long)]
    correlate: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum ModeArg {
    Full,
    Same,
    Valid,
}

impl ModeArg {
    fn mode(self) -> Mode {
        match self {
            ModeArg::Full => Mode::Full,
            ModeArg::Same => Mode::Same,
            ModeArg::Valid => Mode::Valid,
        }
    }
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum MethodArg {
    Auto,
    Fft,
    Direct,
}

impl MethodArg {
    fn method(self) -> Method {
        match self {
            MethodArg::Auto => Method::Auto,
            MethodArg::Fft => Method::Fft,
            MethodArg::Direct => Method::Direct,
        }
    }
}

pub fn run(global: &Global, args: &Args) -> Result<(), Error> {
    let start = Instant::now();
    let image = io::read_real(&args.input)?;
    let kernel = io::read_real(&args.kernel)?;
    let read_ms = ms_since(start);
    let mode = args.mode.mode();
    let geometry = Geometry::new(image.shape(), kernel.shape(), mode)?;
    convolve::check_finite(&image.view(), &args.input.display().to_string())?;
    convolve::check_finite(&kernel.view(), &args.kernel.display().to_string())?;
    io::Format::from_path(&args.output)?;
    let method = args.method.method().resolve(&geometry);

    let gpu = global.gpu()?;
    let t = Instant::now();
    let output = match &gpu {
        Some(gpu) => on_gpu(gpu, &image, &kernel, mode, method, args.correlate)?,
        None => on_cpu(&image, &kernel, mode, method, args.correlate)?,
    };
    let compute_ms = ms_since(t);

    let t = Instant::now();
    io::write_real(&args.output, &output.view())?;
    let write_ms = ms_since(t);

    let device = gpu.as_ref().map_or("cpu".to_string(), |g| format!("gpu: {}", g.summary().name));
    let op = if args.correlate { "correlate" } else { "convolve" };
    if global.json {
        let report = json!({
            "command": "convolve",
            "operation": op,
            "device": device,
            "mode": mode.name(),
            "method": method.name(),
            "input": args.input.display().to_string(),
            "kernel": args.kernel.display().to_string(),
            "output": args.output.display().to_string(),
            "shape_in": image.shape(),
            "shape_kernel": kernel.shape(),
            "shape_out": output.shape(),
            "fft_shape": geometry.padded,
            // compute: transforms, upload and download on the GPU; the reference on the CPU.
            "ms": { "read": read_ms, "compute": compute_ms, "write": write_ms, "total": ms_since(start) },
        });
        println!("{report}");
    } else if !global.quiet {
        println!(
            "{op} {:?} with {:?} ({}, {}) -> {:?} on {device}: {compute_ms:.2} ms; wrote {}",
            image.shape(),
            kernel.shape(),
            mode.name(),
            method.name(),
            output.shape(),
            args.output.display()
        );
    }
    Ok(())
}

fn on_gpu(gpu: &Gpu, image: &ArrayD<f32>, kernel: &ArrayD<f32>, mode: Mode, method: Method, correlate: bool) -> Result<ArrayD<f32>, Error> {
    let mut rec = Recording::new(gpu);
    let x = rec.upload_f32(&image.view())?;
    let y = if correlate {
        convolve::signal_correlate(&mut rec, x, &kernel.view(), mode, method)?
    } else {
        convolve::signal_convolve(&mut rec, x, &kernel.view(), mode, method)?
    };
    let d = rec.download(y);
    rec.run()?.f32(d)
}

/// The CPU reference in f64: direct sums, or the same FFT path on rustfft.
fn on_cpu(image: &ArrayD<f32>, kernel: &ArrayD<f32>, mode: Mode, method: Method, correlate: bool) -> Result<ArrayD<f32>, Error> {
    let (a, k) = (image.mapv(|v| v as f64), kernel.mapv(|v| v as f64));
    let y = match (method, correlate) {
        (Method::Direct, false) => cpu::signal_convolve(&a, &k, mode)?,
        (Method::Direct, true) => cpu::signal_correlate(&a, &k, mode)?,
        (_, correlate) => cpu::fft_signal(&a, &k, mode, correlate)?,
    };
    Ok(y.mapv(|v| v as f32))
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}
