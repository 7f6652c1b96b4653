//! `lucent`: the command-line tool over the library. One file per subcommand.

mod batch;
mod beam;
mod bench;
mod convolve;
mod deconvolve;
mod demo;
mod demo_conebeam;
mod demo_denoise;
mod demo_figure;
mod demo_register;
mod demo_report;
mod demo_similarity;
mod demo_tomography;
mod denoise;
mod deskew;
mod fft;
mod filter;
mod flow;
mod info;
mod label;
mod matching;
mod phantom;
mod phantom_scan;
mod psf;
mod recon;
mod register;
mod register_affine;
mod register_stack;
mod register_volume;
mod report;
mod resample;
mod spline;
mod tomography;

use clap::{Parser, Subcommand, ValueEnum};
use lucent::GpuOptions;
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
    /// scipy.ndimage spatial filters: Gaussian, uniform, a kernel, median, minimum or maximum, with boundary modes.
    ///
    /// Example: lucent filter volume.tif -o smooth.tif --gaussian 2.0 --boundary nearest
    Filter(filter::Args),
    /// scipy.ndimage.label: connected components above a threshold as a label image, with a
    /// CSV of the regions' measurements.
    ///
    /// Example: lucent label nuclei.tif -o labels.tif --threshold 120 --regions regions.csv
    Label(label::Args),
    /// scipy.ndimage.spline_filter: cubic B-spline coefficients along every axis.
    SplineFilter(spline::Args),
    /// A widefield PSF model (psfmodels' make_psf: vectorial, scalar or Gaussian), no measured PSF needed.
    Psf(psf::Args),
    /// scipy.ndimage's shift, zoom, affine_transform, rotate and map_coordinates.
    ///
    /// Example: lucent resample volume.npy -o moved.npy --shift -4.7,2,0.5
    Resample(resample::Args),
    /// Deskew stage-scanned light-sheet stacks (pycudadecon's deskewGPU), or turn them to
    /// coverslip coordinates.
    ///
    /// Example: lucent deskew raw.tif -o deskewed.tif --angle 31.5 --dzdata 0.4 --dxdata 0.104
    Deskew(deskew::Args),
    /// pystackreg's register_transform_stack: every frame of a stack registered (translation,
    /// rigid body, scaled rotation or affine) onto the previous frame, the first frames or the mean.
    ///
    /// Example: lucent register-stack timelapse.tif -o registered.tif --transformation rigid-body
    RegisterStack(register_stack::Args),
    /// scikit-image's optical flow (TV-L1 or iterative Lucas-Kanade) of a moving image against a
    /// reference, 2D or 3D: the flow (ndim, *shape).
    ///
    /// Example: lucent flow frame0.tif frame1.tif -o flow.npy --method tvl1
    Flow(flow::Args),
    /// skimage.registration.phase_cross_correlation: the shift registering each moving image
    /// onto the reference; with --transform, SimpleITK-style intensity-based registration
    /// (rigid, similarity, affine; mean squares, correlation or mutual information).
    ///
    /// Example: lucent register reference.npy moving.npy --upsample 100 --json
    Register(register::Args),
    /// skimage.feature.match_template: the normalised cross-correlation of a template with every
    /// window of an image, written as a map; its highest peaks printed.
    ///
    /// Example: lucent match image.tif template.tif -o response.npy --peaks 5 --json
    Match(matching::Args),
    /// Stripe-wise registration of AO-OCT volumes (slow, depth, fast) under eye motion: the
    /// shift of every B-scan onto a reference volume, as CSV; the registered volume and the
    /// average of a registered series.
    ///
    /// Example: lucent register-volume reference.npy moving.npy -o shifts.csv --apply registered.npy
    RegisterVolume(register_volume::Args),
    /// Synthetic test objects with known truth: Toft's modified Shepp-Logan phantom, or AO-OCT
    /// volumes of a retina under eye motion (--aooct).
    ///
    /// Example: lucent phantom --aooct -o ref.npy --moving mov.npy --truth truth.csv
    Phantom(phantom::Args),
    /// Parallel-beam projections (the Radon transform) of an image or a stack of slices.
    ///
    /// Example: lucent radon phantom.npy -o sinogram.npy --angles 768
    Radon(tomography::RadonArgs),
    /// Parallel-beam back-projection of a sinogram (the adjoint of radon).
    ///
    /// Example: lucent backproject sinogram.npy -o image.npy
    Backproject(tomography::BackArgs),
    /// Filtered back-projection of a sinogram (scikit-image's filters).
    ///
    /// Example: lucent fbp sinogram.npy -o reconstruction.npy --filter hann
    Fbp(tomography::BackArgs),
    /// MLEM reconstruction of a sinogram of counts, its KL divergence per iteration reported.
    ///
    /// Example: lucent em counts.npy -o estimate.npy --iterations 100 --json
    Em(tomography::EmArgs),
    /// FDK reconstruction of circular cone-beam projections, or fan-beam FBP, in an ASTRA
    /// geometry (Parker's weights for short scans); FBP for parallel and parallel3d.
    ///
    /// Example: lucent fdk projections.npy --geometry cone.json --volume volume.json -o x.npy
    Fdk(beam::FdkArgs),
    /// SIRT in an ASTRA geometry (ASTRA's SIRT3D_CUDA: min/max constraints, masks), the
    /// residual per iteration reported.
    ///
    /// Example: lucent sirt projections.npy --geometry cone.json --volume volume.json -o x.npy -n 100
    Sirt(beam::SolveArgs),
    /// CGLS in an ASTRA geometry (ASTRA's CGLS3D_CUDA), the residual per iteration reported.
    ///
    /// Example: lucent cgls projections.npy --geometry cone.json --volume volume.json -o x.npy -n 30
    Cgls(beam::SolveArgs),
    /// OS-SART (ordered subsets, TIGRE's OS_SART) in an ASTRA geometry: min/max constraints,
    /// masks, the residual per sweep reported.
    ///
    /// Example: lucent sart projections.npy --geometry cone.json --volume volume.json -o x.npy -n 10
    Sart(beam::SolveArgs),
    /// OSEM (ordered-subsets MLEM) of counts in an ASTRA geometry, the residual per sweep
    /// reported.
    ///
    /// Example: lucent osem counts.npy --geometry cone.json --volume volume.json -o x.npy -n 10
    Osem(beam::SolveArgs),
    /// FISTA with a total-variation proximal step (TIGRE's FISTA) in an ASTRA geometry: the
    /// minimiser of ½‖Ax − b‖² + w·TV(x), min/max constraints, a projection mask, the residual
    /// per iteration and the step's L reported.
    ///
    /// Example: lucent fista projections.npy --geometry cone.json --volume volume.json -o x.npy -n 50 --tv-weight 0.5
    Fista(beam::FistaArgs),
    /// The beamline pipeline: raw projections (DXchange HDF5, or arrays with flats and darks)
    /// to a volume: outliers, normalisation, phase retrieval, −log, ring removal, the centre,
    /// FBP of every slice, streamed to .zarr, .npy or .tif.
    ///
    /// Example: lucent recon scan.h5 -o volume.zarr --center auto --stripe sorting
    Recon(recon::Args),
    /// The rotation centre of a sinogram (detector coordinate), as TomoPy's find_center.
    ///
    /// Example: lucent find-center sinogram.npy --radius 20
    FindCenter(tomography::FindCenterArgs),
    /// True 4D adaptive-filtering denoising of a volume series (or 2D/3D data).
    ///
    /// Example: lucent denoise series.npy -o denoised.npy --dims 4 --json
    Denoise(denoise::Args),
    /// Richardson-Lucy deconvolution of an image with a PSF (2D, 3D, or a stack of 2D).
    ///
    /// Example: lucent deconvolve stack.tif --psf psf.tif -o restored.tif --iterations 30 --json
    Deconvolve(deconvolve::Args),
    /// Simulate a blurred, noisy 3D specimen and deconvolve it, register a synthetic AO-OCT
    /// series under eye motion, reconstruct a phantom from noisy projections, and write images
    /// and a report.
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
    /// The GPU options: the environment's, the adapter from `--adapter` if given.
    pub fn options(&self) -> Result<GpuOptions, Error> {
        let env = GpuOptions::from_env()?;
        Ok(GpuOptions { adapter: self.adapter.clone().or(env.adapter.clone()), ..env })
    }

    /// Opens the GPU as asked; `None` means compute on the CPU.
    pub fn gpu(&self) -> Result<Option<Gpu>, Error> {
        if self.device == DeviceChoice::Cpu {
            return Ok(None);
        }
        match Gpu::open(&self.options()?) {
            Ok(gpu) => Ok(Some(gpu)),
            // No adapter at all, or one that fails to open: the CPU reference. An adapter asked
            // for by name that does not exist is the user's error, not a reason to fall back.
            Err(e @ (Error::NoAdapter(_) | Error::Device(_))) if self.device == DeviceChoice::Auto => {
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
        Gpu::open(&self.options()?)
    }

    /// The device of a file command: the GPU, or the CPU reference.
    pub fn device(&self) -> Result<batch::Device, Error> {
        Ok(batch::Device { gpus: self.gpu()?.into_iter().collect() })
    }

    /// The GPUs of a command that spreads work over several (`--adapters`: `all`, every adapter
    /// of the best type, or indices/names `I,J`), else [`Global::device`].
    pub fn devices(&self, adapters: Option<&str>) -> Result<batch::Device, Error> {
        let gpus = match adapters {
            None => return self.device(),
            Some(_) if self.device == DeviceChoice::Cpu => return Err(Error::Invalid("--adapters needs a GPU; drop --device cpu".into())),
            Some("all") => Gpu::open_all()?,
            Some(list) => Gpu::open_list(&list.split(',').map(str::trim).collect::<Vec<_>>())?,
        };
        Ok(batch::Device { gpus })
    }

    /// The device a command's report names: the GPU's name, or the CPU reference.
    pub fn device_name(gpu: Option<&Gpu>) -> String {
        gpu.map_or("cpu (f64 reference)".to_string(), |g| g.summary().name.clone())
    }

    pub fn warn(&self, msg: &str) {
        if !self.quiet {
            eprintln!("lucent: warning: {msg}");
        }
    }
}

/// On SIGINT, SIGTERM or SIGHUP the unfinished outputs' temporaries are removed, then the
/// process ends as the signal would end it. The signals are blocked here, before any other
/// thread starts (threads inherit the mask), and taken by one thread with `sigwait`, where
/// removing files is safe (a signal handler may not allocate or walk directories).
#[cfg(target_os = "linux")]
fn clean_up_on_signals() {
    // SAFETY: plain signal-mask calls on a sigset_t this function initialises; the waiting
    // thread only removes files, then restores the default action and raises the signal.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, signal);
        }
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            return;
        }
        std::thread::spawn(move || {
            let mut signal = 0;
            if libc::sigwait(&set, &mut signal) == 0 {
                lucent::host::temporaries::remove_tracked();
                libc::signal(signal, libc::SIG_DFL);
                libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
                libc::raise(signal);
                std::process::exit(128 + signal);
            }
        });
    }
}

fn main() {
    private_runtime_dir();
    #[cfg(target_os = "linux")]
    clean_up_on_signals();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => e.exit(), // --help, --version
        Err(e) => {
            // One line, exit 1, like every other refusal (clap's own is several lines, exit 2).
            let message = e.to_string();
            let what: Vec<&str> = message.lines().map(str::trim).take_while(|l| !l.is_empty() && !l.starts_with("Usage:")).collect();
            eprintln!("lucent: error: {} (see lucent --help)", what.join(" ").trim_start_matches("error: "));
            std::process::exit(1);
        }
    };
    let global = Global { device: cli.device, adapter: cli.adapter, json: cli.json, quiet: cli.quiet };
    let result = match cli.command {
        Command::Info => info::run(&global),
        Command::Bench(args) => bench::run(&global, &args),
        Command::Fft(args) => fft::run(&global, &args),
        Command::Convolve(args) => convolve::run(&global, &args),
        Command::Filter(args) => filter::run(&global, &args),
        Command::Label(args) => label::run(&global, &args),
        Command::RegisterStack(args) => register_stack::run(&global, &args),
        Command::Flow(args) => flow::run(&global, &args),
        Command::SplineFilter(args) => spline::run(&global, &args),
        Command::Psf(args) => psf::run(&global, &args),
        Command::Resample(args) => resample::run(&global, &args),
        Command::Deskew(args) => deskew::run(&global, &args),
        Command::Register(args) => register::run(&global, &args),
        Command::Match(args) => matching::run(&global, &args),
        Command::RegisterVolume(args) => register_volume::run(&global, &args),
        Command::Phantom(args) => phantom::run(&global, &args),
        Command::Radon(args) => tomography::radon(&global, &args),
        Command::Backproject(args) => tomography::back(&global, &args, tomography::Operation::Backproject),
        Command::Fbp(args) => tomography::back(&global, &args, tomography::Operation::Fbp),
        Command::Em(args) => tomography::em(&global, &args),
        Command::Denoise(args) => denoise::run(&global, &args),
        Command::Fdk(args) => lucent::tomography::Filter::parse(&args.filter)
            .and_then(|f| beam::run(&global, beam::Operation::Fdk(f), &args.input, &args.output, &args.geometry, None)),
        Command::Sirt(args) => beam::run(
            &global,
            beam::Operation::Iterative(lucent::tomography::Algorithm::Sirt),
            &args.input,
            &args.output,
            &args.geometry,
            Some(&args.iterative),
        ),
        Command::Sart(args) => {
            let op = beam::Operation::Iterative(lucent::tomography::Algorithm::Sart { subset_size: args.iterative.subset_size });
            beam::run(&global, op, &args.input, &args.output, &args.geometry, Some(&args.iterative))
        }
        Command::Osem(args) => {
            let op = beam::Operation::Iterative(lucent::tomography::Algorithm::Osem { subset_size: args.iterative.subset_size });
            beam::run(&global, op, &args.input, &args.output, &args.geometry, Some(&args.iterative))
        }
        Command::Fista(args) => {
            let op = beam::Operation::Iterative(lucent::tomography::Algorithm::FistaTv { weight: args.tv_weight, tv_iterations: args.tv_iterations });
            let a = &args.solve;
            beam::run(&global, op, &a.input, &a.output, &a.geometry, Some(&a.iterative))
        }
        Command::Cgls(args) => beam::run(
            &global,
            beam::Operation::Iterative(lucent::tomography::Algorithm::Cgls),
            &args.input,
            &args.output,
            &args.geometry,
            Some(&args.iterative),
        ),
        Command::Recon(args) => recon::run(&global, &args),
        Command::FindCenter(args) => tomography::find_center(&global, &args),
        Command::Deconvolve(args) => deconvolve::run(&global, &args),
        Command::Demo(args) => demo::run(&global, &args),
    };
    if let Err(e) = result {
        eprintln!("lucent: error: {e}");
        if matches!(e, Error::NoAdapter(_)) {
            eprintln!("lucent: hint: --device cpu computes on the CPU reference instead");
        }
        std::process::exit(1);
    }
}

/// Mesa's drivers print "XDG_RUNTIME_DIR is invalid or not set" when there is none: give them
/// a private one, so a user sees only lucent's own output.
fn private_runtime_dir() {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, MetadataExt};
        if std::env::var_os("XDG_RUNTIME_DIR").is_some_and(|d| std::path::Path::new(&d).is_dir()) {
            return;
        }
        let uid = std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(0);
        let dir = std::env::temp_dir().join(format!("lucent-xdg-{uid}"));
        let made = std::fs::DirBuilder::new().mode(0o700).create(&dir).or_else(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => Ok(()),
            _ => Err(e),
        });
        // Only a directory of ours, private: never one another user made.
        let ours = std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir() && m.uid() == uid && m.mode() & 0o077 == 0);
        if made.is_ok() && ours {
            // Before any thread starts: nothing else reads the environment concurrently.
            std::env::set_var("XDG_RUNTIME_DIR", &dir);
        }
    }
}
