//! `lucent convolve`: scipy.signal.convolve (or, with --correlate, scipy.signal.correlate) of an
//! array file with a kernel file, by FFT or direct sums, on the GPU or, with `--device cpu` or no
//! adapter, on the f64 CPU reference. FFT convolutions whose working set does not fit the device
//! are split along the slowest axis (ops::convolve::split), over several GPUs with `--adapters`.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};

use lucent::io;
use lucent::ops::convolve::split::{self, SplitOptions, SplitReport};
use lucent::ops::convolve::{self, cpu, Geometry, Method, Mode};
use lucent::{Error, Gpu, Recording};
use ndarray::ArrayD;
use serde_json::json;

use crate::Global;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  lucent convolve image.npy psf.npy -o blurred.npy --mode same
  lucent convolve volume.tif kernel.npy -o out.tif --mode valid --method fft --json
  lucent convolve image.png template.npy -o match.npy --correlate --mode same
  lucent convolve big.npy psf.npy -o out.npy --mode same --adapters all --max-part-bytes 4000000000 --json")]
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
    /// GPUs for FFT convolutions: `all` (every adapter of the best type) or indices/names `I,J`.
    /// Parts of a split run are spread over them; a run that fits uses the first.
    #[arg(long)]
    adapters: Option<String>,
    /// Device memory one part of an FFT convolution may hold, in bytes: a larger run is split
    /// along the slowest axis. Buffers are also capped by LUCENT_MAX_BUFFER_BYTES.
    #[arg(long)]
    max_part_bytes: Option<u64>,
    /// Force the number of parts of an FFT convolution (1: never split).
    #[arg(long)]
    parts: Option<usize>,
    /// Parts each GPU holds at once in a split run (default 2: one computes while another is
    /// uploaded or read back); each holds up to --max-part-bytes.
    #[arg(long)]
    in_flight: Option<usize>,
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
    // Split options only apply to the FFT path: asking for them makes `auto` choose it.
    let split_asked = args.adapters.is_some() || args.max_part_bytes.is_some() || args.parts.is_some() || args.in_flight.is_some();
    let method = match args.method.method() {
        Method::Auto if split_asked => Method::Fft,
        m => m.resolve(&geometry),
    };

    let gpus = open_gpus(global, args)?;
    let t = Instant::now();
    let mut split_report = None;
    let mut method = method;
    let output = match gpus.first() {
        Some(gpu) if method == Method::Direct => match on_gpu(gpu, &image, &kernel, mode, method, args.correlate) {
            // Auto chose direct sums, but the arrays do not fit a buffer: the FFT path splits.
            Err(Error::TooLarge { .. }) if args.method.method() == Method::Auto => {
                method = Method::Fft;
                let (y, report) = on_gpus_split(global, &gpus, &image, &kernel, mode, args)?;
                split_report = Some(report);
                y
            }
            other => other?,
        },
        Some(_) => {
            let (y, report) = on_gpus_split(global, &gpus, &image, &kernel, mode, args)?;
            split_report = Some(report);
            y
        }
        None => on_cpu(&image, &kernel, mode, method, args.correlate)?,
    };
    let compute_ms = ms_since(t);

    let t = Instant::now();
    io::write_real(&args.output, &output.view())?;
    let write_ms = ms_since(t);

    let device = match gpus.len() {
        0 => "cpu".to_string(),
        _ => format!("gpu: {}", gpus.iter().map(|g| g.summary().name.as_str()).collect::<Vec<_>>().join(", ")),
    };
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
            // FFT runs on the GPU: parts (1 when the whole run fitted), per-part times and adapters.
            "split": split_report,
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
        if let Some(r) = split_report.as_ref().filter(|r| r.parts > 1) {
            println!(
                "split into {} parts along axis 0 ({} computed, {} rows each) on {}; peak {} bytes per part, {} in flight per GPU",
                r.parts,
                r.computed_parts,
                r.part_len,
                r.adapters.join(", "),
                r.peak_bytes,
                r.in_flight
            );
        }
    }
    Ok(())
}

/// The GPUs to use: `--adapters`, else the global choice (none: the CPU reference).
fn open_gpus(global: &Global, args: &Args) -> Result<Vec<Gpu>, Error> {
    match args.adapters.as_deref() {
        None => Ok(global.gpu()?.into_iter().collect()),
        Some(_) if global.device == crate::DeviceChoice::Cpu => Err(Error::Invalid("--adapters needs a GPU; drop --device cpu".into())),
        Some("all") => Gpu::open_all(),
        Some(list) => Gpu::open_list(&list.split(',').map(str::trim).collect::<Vec<_>>()),
    }
}

/// The FFT path on host arrays: whole when it fits, else split along axis 0 over `gpus`, with a
/// progress bar over the parts. A correlation is the convolution with the reversed kernel.
fn on_gpus_split(
    global: &Global,
    gpus: &[Gpu],
    image: &ArrayD<f32>,
    kernel: &ArrayD<f32>,
    mode: Mode,
    args: &Args,
) -> Result<(ArrayD<f32>, SplitReport), Error> {
    let kernel = if args.correlate { cpu::reverse(kernel) } else { kernel.clone() };
    let opts = SplitOptions { parts: args.parts, max_part_bytes: args.max_part_bytes, in_flight: args.in_flight, ..Default::default() };
    // Shown only for split runs (more than one part to compute), and never with --quiet.
    let bar: OnceLock<ProgressBar> = OnceLock::new();
    let progress = |done: usize, total: usize| {
        if total > 1 && !global.quiet {
            let bar = bar.get_or_init(|| {
                let bar = ProgressBar::new(total as u64);
                bar.set_style(ProgressStyle::with_template("split convolution {bar:30} {pos}/{len} parts [{elapsed_precise}, {eta} left]").expect("a valid template"));
                bar
            });
            bar.set_position(done as u64);
        }
    };
    let result = split::convolve_split_with_progress(gpus, &image.view(), &kernel.view(), mode, &opts, &progress);
    if let Some(bar) = bar.get() {
        bar.finish_and_clear();
    }
    result
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
