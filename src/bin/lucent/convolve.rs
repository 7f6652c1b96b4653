//! `lucent convolve`: scipy.signal.convolve (or, with --correlate, scipy.signal.correlate) of
//! array files with a kernel file, by FFT or direct sums, on the GPU or, with `--device cpu` or
//! no adapter, on the f64 CPU reference. The library decides how (ops::convolve::host): direct
//! or FFT, whole or split along the slowest axis, over several GPUs with `--adapters`. The
//! kernel's spectrum is made once for all inputs of one shape.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use indicatif::{ProgressBar, ProgressStyle};

use lucent::io;
use lucent::signal::{self, cpu, Geometry, Method, Mode, SplitOptions};
use lucent::Error;
use ndarray::ArrayD;
use serde_json::json;

use crate::batch::{self, Batch, Device, Input, Outcome};
use crate::report::Stages;
use crate::Global;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  lucent convolve image.npy psf.npy -o blurred.npy --mode same
  lucent convolve volume.tif kernel.npy -o out.tif --mode valid --method fft --json
  lucent convolve image.png template.npy -o match.npy --correlate --mode same
  lucent convolve big.npy psf.npy -o out.npy --mode same --adapters all --max-part-bytes 4000000000 --json
  lucent convolve t0.tif t1.tif t2.tif psf.tif -o blurred/ --mode same")]
pub struct Args {
    /// Input arrays (.npy of any real dtype, .tif/.tiff, .png or .zarr: one beyond the host memory
    /// budget streams slab by slab with --mode same), then the kernel, with as many
    /// axes as each input: INPUT... KERNEL.
    #[arg(required = true, num_args = 2.., value_name = "INPUT... KERNEL")]
    paths: Vec<PathBuf>,
    /// Output: float32 .npy or .tif, an OME-Zarr image (.zarr), or a .png preview (2D). With
    /// several inputs, a directory.
    #[arg(short, long)]
    output: PathBuf,
    /// scipy.signal's mode: full (input + kernel - 1), same (the input's shape, centred) or
    /// valid (complete overlaps only).
    #[arg(long, value_enum, default_value_t = Mode::Full)]
    mode: Mode,
    /// fft, direct sums, or auto: direct while taps × outputs is small against the FFT's size.
    #[arg(long, value_enum, default_value_t = Method::Auto)]
    method: Method,
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

pub fn run(global: &Global, args: &Args) -> Result<(), Error> {
    let (kernel_path, inputs) = args.paths.split_last().expect("clap asks for two paths");
    let kernel = io::read_real(kernel_path)?;
    lucent::check::check_finite(&kernel.view(), &kernel_path.display().to_string())?;
    let opts = SplitOptions { parts: args.parts, max_part_bytes: args.max_part_bytes, in_flight: args.in_flight, ..Default::default() };
    let options = json!({
        "kernel": kernel_path.display().to_string(),
        "mode": args.mode,
        "method": args.method,
        "correlate": args.correlate,
        "parts": args.parts,
        "max_part_bytes": args.max_part_bytes,
        "in_flight": args.in_flight,
    });
    let batch = Batch { command: "convolve", global, options };
    let open = || global.devices(args.adapters.as_deref());
    batch.run(inputs, &args.output, batch::real_ext, open, batch::read_input, |data, input, output, device, stages| match data {
        Input::Whole(image) => one(global, args, (&kernel, &opts), (image, input), output, device, stages),
        Input::Rows(source) => {
            // 'same' keeps the shape, so slabs of rows map onto slabs of rows: output row i reads
            // input rows i - m/2 .. i + (m-1)/2 for a kernel of m rows.
            if args.mode != Mode::Same {
                return Err(Error::Invalid("a Zarr input beyond the host memory budget is convolved with --mode same".into()));
            }
            let m = kernel.shape()[0];
            let what = format!("{} {:?} with {:?} (same)", if args.correlate { "correlate" } else { "convolve" }, source.shape(), kernel.shape());
            batch::stream(&source, output, ([m / 2, m / 2], batch::slab_copies(device, 8)), what, stages, |slab| match device.gpus.is_empty() {
                false => {
                    let op = signal::Signal { mode: args.mode, method: args.method, correlate: args.correlate };
                    Ok(signal::convolve_on(&device.gpus, &slab.view(), &kernel.view(), op, &opts, &|_| {})?.0)
                }
                true => {
                    let method = args.method.resolve(&Geometry::new(slab.shape(), kernel.shape(), args.mode)?);
                    on_cpu(&slab, &kernel, args.mode, method, args.correlate)
                }
            })
        }
    })
}

fn one(
    global: &Global,
    args: &Args,
    (kernel, opts): (&ArrayD<f32>, &SplitOptions),
    (image, input): (ArrayD<f32>, &Path),
    output: &Path,
    device: &Device,
    stages: &mut Stages,
) -> Result<Outcome, Error> {
    let geometry = Geometry::new(image.shape(), kernel.shape(), args.mode)?;
    batch::check_format(output, image.ndim(), false)?;

    let (y, method, split, chunks, slabs, placement) = stages.compute(|| match device.gpus.is_empty() {
        false => {
            let bar = PartsBar::new(global);
            let op = signal::Signal { mode: args.mode, method: args.method, correlate: args.correlate };
            let progress = |p: signal::Progress| bar.show(p.done, p.total);
            let (y, run) = signal::convolve_on(&device.gpus, &image.view(), &kernel.view(), op, opts, &progress)?;
            Ok((y, run.method, run.split, run.chunks, run.slabs, Some(run.placement)))
        }
        true => {
            // (The library's path makes these checks itself.) The reference works in f64 on the
            // padded shape, complex for the FFT.
            lucent::check::check_finite(&image.view(), &input.display().to_string())?;
            lucent::host::check_host_array("the reference's padded arrays", &geometry.padded, 16)?;
            let method = args.method.resolve(&geometry);
            Ok((on_cpu(&image, kernel, args.mode, method, args.correlate)?, method, None, 1, None, None))
        }
    })?;
    batch::check_result(&y.view())?;
    stages.write(|| io::write_real_like(output, &y.view(), input))?;

    let op = if args.correlate { "correlate" } else { "convolve" };
    let mut summary = format!("{op} {:?} with {:?} ({}, {}) -> {:?}", image.shape(), kernel.shape(), args.mode.name(), method.name(), y.shape());
    if chunks > 1 {
        summary += &format!("; in core in {chunks} chunks along axis 0");
    }
    if let Some(r) = &slabs {
        summary += &format!("; in {} slabs of rows along axis 0 ({} halo rows each) on {}", r.slabs, r.halo_rows, r.adapters.join(", "));
    }
    if let Some(r) = split.as_ref().filter(|r| r.parts > 1) {
        summary += &format!(
            "; split into {} parts along axis 0 ({} computed, {} rows each) on {}, peak {} bytes per part, {} in flight per GPU",
            r.parts,
            r.computed_parts,
            r.part_len,
            r.adapters.join(", "),
            r.peak_bytes,
            r.in_flight
        );
    }
    Ok(Outcome {
        shape_in: image.shape().to_vec(),
        shape_out: y.shape().to_vec(),
        placement,
        // method: what auto chose; chunks: buffers per array on the device (1: whole); slabs:
        // the slabs of rows over the GPUs; split: the parts of a split FFT run (None: in core,
        // or direct).
        details: json!({ "method": method, "fft_shape": geometry.padded, "shape_kernel": kernel.shape(), "chunks": chunks, "slabs": slabs, "split": split }),
        summary,
    })
}

/// A bar over the slabs or parts of a run spread over them (more than one), never with --quiet.
struct PartsBar<'a> {
    global: &'a Global,
    bar: OnceLock<ProgressBar>,
}

impl<'a> PartsBar<'a> {
    fn new(global: &'a Global) -> Self {
        PartsBar { global, bar: OnceLock::new() }
    }

    fn show(&self, done: usize, total: usize) {
        if total > 1 && !self.global.quiet {
            let bar = self.bar.get_or_init(|| {
                let bar = ProgressBar::new(total as u64);
                bar.set_style(
                    ProgressStyle::with_template("convolution {bar:30} {pos}/{len} slabs or parts [{elapsed_precise}, {eta} left]").expect("a valid template"),
                );
                bar
            });
            bar.set_position(done as u64);
        }
    }
}

impl Drop for PartsBar<'_> {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.get() {
            bar.finish_and_clear();
        }
    }
}

/// The CPU reference in f64: direct sums, or the same FFT path on rustfft.
fn on_cpu(image: &ArrayD<f32>, kernel: &ArrayD<f32>, mode: Mode, method: Method, correlate: bool) -> Result<ArrayD<f32>, Error> {
    let (a, k) = (image.mapv(|v| v as f64), kernel.mapv(|v| v as f64));
    let y = match (method, correlate) {
        (Method::Direct, false) => cpu::convolve(&a, &k, mode)?,
        (Method::Direct, true) => cpu::correlate(&a, &k, mode)?,
        (_, correlate) => cpu::fft_signal(&a, &k, mode, correlate)?,
    };
    Ok(y.mapv(|v| v as f32))
}
