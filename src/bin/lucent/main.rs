//! `lucent`: the command-line tool over the library. One file per subcommand.

mod bench;
mod convolve;
mod deconvolve;
mod demo;
mod fft;
mod filter;
mod info;

use clap::{Parser, Subcommand, ValueEnum};
use lucent::{Error, Gpu};

#[derive(Parser)]
#[command(name = "lucent", version, about = "GPU imaging engine (wgpu + WGSL)", propagate_version = true)]
pub struct Cli {
    /// Where to compute: auto uses the GPU and falls back to the CPU reference with a warning.
    #[arg(long, value_enum, global = true, default_value_t = DeviceChoice::Auto)]
    device: DeviceChoice,
    /// Adapter to use: a name substring or an index from `lucent info` (overrides LUCENT_ADAPTER).
    #[arg(long, global = true)]
    adapter: Option<String>,
    /// Print a machine-readable JSON report on stdout.
    #[arg(long, global = true)]
    json: bool,
    /// No progress bars or warnings on stderr.
    #[arg(long, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DeviceChoice {
    Auto,
    Gpu,
    Cpu,
}

#[derive(Subcommand)]
enum Command {
    /// List adapters, the chosen one and its limits and features.
    ///
    /// Example: lucent info --json
    Info,
    /// Measure kernel bandwidth against a vec4 copy kernel (the roof), in one process.
    ///
    /// Example: lucent bench --filter reduce --json
    Bench(bench::Args),
    /// numpy-convention FFT of an array file (fftn, ifftn, rfftn, irfftn).
    ///
    /// Example: lucent fft volume.npy -o spectrum.npy --axes 1,2 --norm ortho --json
    Fft(fft::Args),
    /// scipy.signal.convolve / correlate of an array file with a kernel file (FFT or direct).
    ///
    /// Example: lucent convolve image.npy psf.npy -o blurred.npy --mode same --json
    Convolve(convolve::Args),
    /// scipy.ndimage spatial filters: Gaussian, uniform, or a kernel, with boundary modes.
    ///
    /// Example: lucent filter volume.tif -o smooth.tif --gaussian 2.0 --boundary nearest
    Filter(filter::Args),
    /// Richardson-Lucy deconvolution of an image with a PSF (2D, 3D, or a stack of 2D).
    ///
    /// Example: lucent deconvolve stack.tif --psf psf.tif -o restored.tif --iterations 30 --json
    Deconvolve(deconvolve::Args),
    /// Simulate a blurred, noisy 3D specimen, deconvolve it, and write images and a report.
    ///
    /// Example: lucent demo --out lucent-demo
    Demo(demo::Args),
}

/// Global options every subcommand sees.
pub struct Global {
    pub device: DeviceChoice,
    pub adapter: Option<String>,
    pub json: bool,
    pub quiet: bool,
}

impl Global {
    /// Opens the GPU as asked; `None` means compute on the CPU.
    pub fn gpu(&self) -> Result<Option<Gpu>, Error> {
        if self.device == DeviceChoice::Cpu {
            return Ok(None);
        }
        let selector = self.adapter.clone().or_else(|| std::env::var("LUCENT_ADAPTER").ok().filter(|s| !s.is_empty()));
        match Gpu::with_adapter(selector.as_deref()) {
            Ok(gpu) => Ok(Some(gpu)),
            Err(e) if self.device == DeviceChoice::Auto => {
                self.warn(&format!("{e}; falling back to the CPU reference"));
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// Like `gpu`, for commands that only make sense on a GPU.
    pub fn require_gpu(&self) -> Result<Gpu, Error> {
        if self.device == DeviceChoice::Cpu {
            return Err(Error::Invalid("this command needs a GPU; drop --device cpu".into()));
        }
        let selector = self.adapter.clone().or_else(|| std::env::var("LUCENT_ADAPTER").ok().filter(|s| !s.is_empty()));
        Gpu::with_adapter(selector.as_deref())
    }

    pub fn warn(&self, msg: &str) {
        if !self.quiet {
            eprintln!("lucent: warning: {msg}");
        }
    }
}

fn main() {
    let cli = Cli::parse();
    let global = Global { device: cli.device, adapter: cli.adapter, json: cli.json, quiet: cli.quiet };
    let result = match cli.command {
        Command::Info => info::run(&global),
        Command::Bench(args) => bench::run(&global, &args),
        Command::Fft(args) => fft::run(&global, &args),
        Command::Convolve(args) => convolve::run(&global, &args),
        Command::Filter(args) => filter::run(&global, &args),
        Command::Deconvolve(args) => deconvolve::run(&global, &args),
        Command::Demo(args) => demo::run(&global, &args),
    };
    if let Err(e) = result {
        eprintln!("lucent: error: {e}");
        std::process::exit(1);
    }
}
