//! `lucent deconvolve`: Richardson-Lucy deconvolution of image files with a PSF file, on the
//! GPU (the library decides: the whole iteration resident, or tiles with guard bands) or, with
//! `--device cpu` or no adapter, on the f64 CPU reference. A progress bar on stderr; `--json`
//! prints the report (device, stage times, peak device memory) on stdout.

use std::path::{Path, PathBuf};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use lucent::io;
use lucent::restoration::{self, cpu, Init, PsfGrid, RichardsonLucy, RlBoundary, RlOptions, RlReport, RlResult, RlRun, StopRule, TileOptions};
use lucent::{Error, Gpu};
use ndarray::{ArrayD, ArrayViewD};
use serde_json::json;

use crate::batch::{self, Batch, Device, Input, Outcome};
use crate::report::{ms_since, Stages};
use crate::Global;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  lucent deconvolve stack.tif --psf psf.tif -o restored.tif
  lucent deconvolve image.npy --psf psf.npy -o restored.npy --iterations 50 --boundary periodic
  lucent deconvolve stack.npy --psf psf.npy -o restored.npy --stop-tolerance 1e-3 --json
  lucent deconvolve noisy.tif --psf psf.tif -o restored.tif --tv 0.002 -n 50
  lucent deconvolve stack.tif --psf psfs.npy --psf-grid 3,4 -o restored.tif
  lucent deconvolve field.tif --psf psf.tif -o restored.tif --boundary extended
  lucent deconvolve t*.tif --psf psf.tif -o restored/ -n 30
  lucent deconvolve raw.tif --psf-model vectorial --na 1.1 --ni 1.33 --ni0 1.33 --ns 1.33 --wvl 0.53 \
      --dxy 0.104 --dz 0.4 --deskew 31.5 -o deskewed.tif -n 15

A PSF with one axis fewer than the image deconvolves each slice along the first axis.
An image whose working set exceeds the GPU's buffer limit is deconvolved in tiles with guard
bands (see --json for the tiles, guard widths and per-tile times).")]
pub struct Args {
    /// The observed images: .npy, .tif/.tiff (multi-page = 3D), .png, or a Zarr array or OME-Zarr
    /// image (`in.zarr/0`; one beyond the host memory budget, LUCENT_HOST_BUDGET_BYTES, is
    /// deconvolved slab by slab, halos around each, into a .zarr output).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The point spread function, no larger than the image along any axis (its element
    /// (m-1)/2 on each axis is the centre, as scipy's 'same' convolution).
    #[arg(long, required_unless_present = "psf_model")]
    psf: Option<PathBuf>,
    /// No PSF file: a model of the microscope (psfmodels' vectorial, scalar or gaussian; see
    /// `lucent psf`) from --dxy (and --dz for a 3D image), --na, --wvl, --ni, --ns, --pz, ...;
    /// computed on the host in f64, centred, with the image's axes.
    #[arg(long, value_enum, conflicts_with_all = ["psf", "psf_grid"], requires = "dxy")]
    psf_model: Option<lucent::psf::Model>,
    /// With --psf-model or --deskew: the image's pixel size along y and x (µm).
    #[arg(long, allow_hyphen_values = true)]
    dxy: Option<f64>,
    /// With --psf-model and a 3D image, or --deskew: its step along z (µm; with --deskew the
    /// stage's step between raw planes, pycudadecon's dzdata).
    #[arg(long, allow_hyphen_values = true)]
    dz: Option<f64>,
    /// Raw stage-scanned light-sheet stacks, the sheet at this angle (degrees) to the stage's
    /// motion: deconvolved as acquired, then deskewed (`lucent deskew`'s geometry, linear,
    /// outside the stack the last plane's median) with --dxy as the pixel size and --dz as the
    /// stage step. A --psf-model is made in the deskewed frame (planes --dz·sin θ apart) and
    /// skewed into the raw stack's; a --psf file is taken as measured the same way as the data.
    #[arg(long, allow_hyphen_values = true)]
    deskew: Option<f64>,
    /// With --deskew: the result in coverslip coordinates (`lucent deskew --rotate`).
    #[arg(long, requires = "deskew")]
    coverslip: bool,
    /// With --psf-model: the model's size, NZ,NX planes and pixels (default: the image's, odd,
    /// at most 65 planes and 65 pixels).
    #[arg(long, value_name = "NZ,NX", value_delimiter = ',', requires = "psf_model")]
    psf_size: Option<Vec<usize>>,
    #[command(flatten)]
    optics: crate::psf::Optics,
    /// The restored image: float32 .npy or .tif, an OME-Zarr image (.zarr), or an 8-bit .png
    /// preview of a 2D image. With
    /// several inputs, a directory.
    #[arg(short, long)]
    output: PathBuf,
    /// Richardson-Lucy iterations (at most; see --stop-tolerance).
    #[arg(short = 'n', long, default_value_t = 20)]
    iterations: usize,
    /// The first estimate: `observed` (the image) or a positive constant such as 0.5.
    #[arg(long, default_value = "observed", value_parser = parse_init, allow_negative_numbers = true)]
    init: Init,
    /// zero: linear convolution, nothing outside the image; periodic: circular convolution;
    /// extended: Bertero-Boccacci, the object reconstructed past the image's edges by the PSF's
    /// reach (fewer artefacts where bright structure crosses the border).
    #[arg(long, value_enum, default_value_t = RlBoundary::Zero)]
    boundary: RlBoundary,
    /// Use the PSF as given instead of dividing it by its sum.
    #[arg(long)]
    no_normalize_psf: bool,
    /// Stop early once the relative change of the estimate falls below this.
    #[arg(long, allow_hyphen_values = true)]
    stop_tolerance: Option<f64>,
    /// With --stop-tolerance: measure the change every this many iterations.
    #[arg(long, default_value_t = 5, requires = "stop_tolerance")]
    check_every: usize,
    /// Where the blurred estimate is below this, the ratio is 0 (scikit-image's filter_epsilon).
    #[arg(long, allow_hyphen_values = true)]
    filter_epsilon: Option<f32>,
    /// Total-variation regularisation (RL-TV, Dey et al. 2006) with this weight λ, e.g. 0.002;
    /// below 1/(2 × spatial axes).
    #[arg(long, allow_hyphen_values = true)]
    tv: Option<f32>,
    /// Clip negative values of the image to 0 (Richardson-Lucy needs non-negative data; without
    /// this an image with negative values is refused).
    #[arg(long)]
    clip_negative: bool,
    /// Biggs-Andrews acceleration: start each update from an extrapolation of the last two
    /// estimates (fewer iterations for the same result; three more arrays of the padded shape).
    #[arg(long)]
    accelerate: bool,
    /// GPUs to spread tiles over (an image beyond one GPU's memory, or a PSF grid): `all`
    /// (every adapter of the best type) or indices/names `I,J`. A run that fits uses the first.
    #[arg(long)]
    adapters: Option<String>,
    /// A spatially variant PSF: the PSF file holds a GY × GX grid of PSFs, shaped (GY, GX, py,
    /// px) or (GY, GX, pz, py, px), one per region of a GY × GX grid over the image's last two
    /// axes; each region is deconvolved with its PSF and the regions are blended smoothly.
    #[arg(long, value_name = "GY,GX", value_parser = parse_grid)]
    psf_grid: Option<[usize; 2]>,
    /// rl: Richardson-Lucy; wiener: Wiener-Hunt deconvolution (scikit-image's `wiener`, the
    /// Laplacian regulariser, circular), one pass, with --balance; unsupervised-wiener: the
    /// same with the balance and the noise estimated by a Gibbs sampler (scikit-image's
    /// `unsupervised_wiener`, --seed); blind: blind Richardson-Lucy (MATLAB's deconvblind), the
    /// PSF refined from --psf or --psf-model as a start.
    #[arg(long, value_enum, default_value_t = Method::Rl)]
    method: Method,
    /// With --method wiener: the regularisation weight λ (scikit-image's balance), e.g. 0.01;
    /// larger trades resolution for less noise.
    #[arg(long, allow_hyphen_values = true)]
    balance: Option<f64>,
    /// With --method blind: PSF updates per iteration (after each object update).
    #[arg(long, default_value_t = 1)]
    psf_iterations: usize,
    /// With --method blind: pull the PSF towards the starting one after each update,
    /// h = (h + λ h₀)/(1 + λ) (0: none).
    #[arg(long, allow_hyphen_values = true)]
    psf_prior: Option<f64>,
    /// With --method blind: write the recovered PSF here (float32 .npy or .tif; one input).
    #[arg(long)]
    psf_out: Option<PathBuf>,
    /// With --method unsupervised-wiener: the seed of the sampler's draws (default: a fresh one,
    /// reported).
    #[arg(long)]
    seed: Option<u64>,
    /// With --method wiener or unsupervised-wiener: clip the result to [-1, 1] (scikit-image's default clip=True,
    /// for data scaled to [0, 1]).
    #[arg(long)]
    clip: bool,
}

/// `--method`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Method {
    Rl,
    Wiener,
    UnsupervisedWiener,
    Blind,
}

fn parse_grid(s: &str) -> Result<[usize; 2], String> {
    let parts: Vec<Option<usize>> = s.split(',').map(|v| v.trim().parse().ok().filter(|&n| n > 0)).collect();
    match parts[..] {
        [Some(gy), Some(gx)] => Ok([gy, gx]),
        _ => Err(format!("expected two positive counts GY,GX such as 2,3; got `{s}`")),
    }
}

fn parse_init(s: &str) -> Result<Init, String> {
    if s == "observed" {
        return Ok(Init::Observed);
    }
    match s.parse::<f32>() {
        Ok(c) if c.is_finite() && c > 0.0 => Ok(Init::Constant(c)),
        _ => Err(format!("expected `observed` or a positive number, got `{s}`")),
    }
}

impl Args {
    fn options(&self) -> RlOptions {
        RlOptions {
            boundary: self.boundary,
            init: self.init,
            normalize_psf: !self.no_normalize_psf,
            filter_epsilon: self.filter_epsilon,
            stop: self.stop_tolerance.map(|tolerance| StopRule { tolerance, every: self.check_every }),
            tv: self.tv,
            accelerate: self.accelerate,
            clip_negative: self.clip_negative,
            ..Default::default()
        }
    }
}

/// The PSF: the file's, or a model made for each image.
enum PsfSource {
    File(ArrayD<f32>),
    Model(lucent::psf::Model),
}

impl Args {
    /// The PSF file, or (with --psf-model) the model to make for each image.
    fn psf_source(&self) -> Result<PsfSource, Error> {
        if self.psf_model.is_none() && !self.optics.is_default() {
            return Err(Error::Invalid("the microscope's options (--na, --wvl, --ni, ...) belong to --psf-model".into()));
        }
        match (&self.psf, self.psf_model) {
            (Some(path), None) => Ok(PsfSource::File(io::read_real(path)?)),
            (None, Some(model)) => Ok(PsfSource::Model(model)),
            _ => Err(Error::Invalid("give --psf FILE or --psf-model MODEL".into())),
        }
    }

    /// The PSF for an image of `dims`: the file's, or the model's (2D: the focal plane at pz;
    /// 3D: planes --dz apart centred on pz), odd sizes no larger than the image's.
    fn psf_for(&self, source: &PsfSource, dims: &[usize]) -> Result<ArrayD<f32>, Error> {
        let model = match source {
            PsfSource::File(psf) => return Ok(psf.clone()),
            PsfSource::Model(model) => *model,
        };
        let fitting = lucent::psf::size_for_image(dims)?;
        let (nz, nx) = match self.psf_size.as_deref() {
            Some(&[nz, nx]) => (nz, nx),
            Some(other) => return Err(Error::Invalid(format!("--psf-size {other:?}: two counts NZ,NX"))),
            None => fitting,
        };
        let dxy = self.dxy.ok_or_else(|| Error::Invalid("--psf-model needs --dxy, the image's pixel size (µm)".into()))?;
        let z = match (dims.len(), self.dz, self.geometry()?) {
            (2, None, _) => lucent::psf::Planes::Positions(vec![self.optics.pz()]),
            (2, Some(_), _) => return Err(Error::Invalid("--dz belongs to a 3D image; this one is 2D".into())),
            (_, Some(_), Some(g)) => lucent::psf::Planes::Count { nz, dz: g.deskewed_dz() },
            (_, Some(dz), None) => lucent::psf::Planes::Count { nz, dz },
            (_, None, _) => return Err(Error::Invalid("--psf-model with a 3D image needs --dz, its step along z (µm)".into())),
        };
        let psf = crate::psf::make(None, &self.optics.options(model, z, nx, dxy, true))?;
        if let Some(g) = self.geometry()? {
            let skewed = lucent::ndimage::skew_psf(&psf.mapv(|v| v as f64).view(), &g)?;
            if skewed.shape()[2] > dims[2] {
                return Err(Error::Invalid(format!(
                    "the model PSF skewed into the raw stack's frame is {} columns wide, beyond the image's {}: fewer planes with --psf-size",
                    skewed.shape()[2],
                    dims[2]
                )));
            }
            return Ok(skewed.mapv(|v| v as f32).into_dyn());
        }
        Ok(match dims.len() {
            2 => psf.index_axis_move(ndarray::Axis(0), 0).into_dyn(),
            _ => psf.into_dyn(),
        })
    }

    /// With --deskew: the geometry (--dxy the pixel size, --dz the stage step), checked.
    fn geometry(&self) -> Result<Option<lucent::ndimage::Deskew>, Error> {
        let Some(angle) = self.deskew else { return Ok(None) };
        let (Some(dxdata), Some(dzdata)) = (self.dxy, self.dz) else {
            return Err(Error::Invalid("--deskew needs --dxy (the pixel size) and --dz (the stage step), in µm".into()));
        };
        let g = lucent::ndimage::Deskew { angle, dzdata, dxdata, rotate: self.coverslip, ..Default::default() };
        lucent::ndimage::deskew_map(&[1, 1, 1], &g)?;
        Ok(Some(g))
    }

    /// Checks the options that belong to others: --dxy and --dz to a model or the deskew.
    fn check_pairs(&self) -> Result<(), Error> {
        if self.psf_model.is_none() && self.deskew.is_none() {
            for (given, name) in [(self.dxy.is_some(), "--dxy"), (self.dz.is_some(), "--dz")] {
                if given {
                    return Err(Error::Invalid(format!("{name} belongs to --psf-model or --deskew")));
                }
            }
        }
        if self.psf_model.is_none() && self.psf_size.is_some() {
            return Err(Error::Invalid("--psf-size belongs to --psf-model".into()));
        }
        self.geometry().map(drop)
    }

    /// With --deskew: a stack of 3 axes, and a deskewed shape within the limits.
    fn check_deskewable(&self, dims: &[usize]) -> Result<(), Error> {
        if let Some(g) = self.geometry()? {
            let (_, out) = lucent::ndimage::deskew_map(dims, &g)?;
            lucent::host::check_host_array("the deskewed stack", &out, 4)?;
        }
        Ok(())
    }

    /// With --deskew: the restored raw stack deskewed (on the GPU, or the f64 reference).
    fn deskewed(&self, estimate: ArrayD<f32>, device: &Device) -> Result<ArrayD<f32>, Error> {
        let Some(g) = self.geometry()? else { return Ok(estimate) };
        let stack = estimate.into_dimensionality::<ndarray::Ix3>().map_err(|_| Error::Shape("--deskew takes stacks of 3 axes".into()))?;
        let how = lucent::ndimage::Sampling { order: 1, cval: lucent::ndimage::deskew_pad_default(&stack) as f32, ..Default::default() };
        match device.gpu() {
            Some(gpu) => Ok(lucent::ndimage::deskew(gpu, &stack, &g, &how)?.into_dyn()),
            None => {
                let (map, out) = lucent::ndimage::deskew_map(stack.shape(), &g)?;
                lucent::host::check_host_array("the reference's coordinates", &[3, out[0], out[1], out[2]], 8)?;
                let coords = lucent::ndimage::coordinates(&map, &out);
                Ok(lucent::ndimage::cpu::map_coordinates(&stack.mapv(|v| v as f64).into_dyn(), &coords, &how).mapv(|v| v as f32))
            }
        }
    }

    /// The PSF as the report names it: its file, or the model's options.
    fn psf_json(&self) -> serde_json::Value {
        match (&self.psf, self.psf_model) {
            (Some(path), _) => json!(path.display().to_string()),
            (None, Some(model)) => {
                let o = self.optics.options(model, lucent::psf::Planes::Positions(vec![]), 0, self.dxy.unwrap_or(f64::NAN), true);
                let mut model = crate::psf::options_json(&o);
                // The planes and size are the image's (or --psf-size), the scale the sum's.
                for key in ["z", "nx", "normalize"] {
                    model.as_object_mut().expect("an object").remove(key);
                }
                json!({ "model": model, "dz": self.geometry().ok().flatten().map_or(self.dz, |g| Some(g.deskewed_dz())), "size": self.psf_size })
            }
            (None, None) => serde_json::Value::Null,
        }
    }
}

pub fn run(global: &Global, args: &Args) -> Result<(), Error> {
    args.check_pairs()?;
    if args.method != Method::Blind && (args.psf_iterations != 1 || args.psf_prior.is_some() || args.psf_out.is_some()) {
        return Err(Error::Invalid("--psf-iterations, --psf-prior and --psf-out belong to --method blind".into()));
    }
    if args.method != Method::UnsupervisedWiener && args.seed.is_some() {
        return Err(Error::Invalid("--seed belongs to --method unsupervised-wiener".into()));
    }
    match args.method {
        Method::Wiener | Method::UnsupervisedWiener => return wiener(global, args),
        Method::Blind => return blind(global, args),
        Method::Rl => {}
    }
    if args.balance.is_some() || args.clip {
        return Err(Error::Invalid("--balance and --clip belong to --method wiener".into()));
    }
    let source = args.psf_source()?;
    // A file's PSF (or grid) serves every image; a model is made for each image's shape.
    let psfs = match (&source, args.psf_grid) {
        (PsfSource::File(psf), Some(g)) => Some(PsfGrid::new(psf.view(), g)?),
        (PsfSource::File(psf), None) => Some(PsfGrid::single(psf.view())),
        (PsfSource::Model(_), _) => None,
    };
    let opts = args.options();
    let mut options = serde_json::to_value(opts).expect("options serialise");
    let more = json!({ "psf": args.psf_json(), "psf_grid": args.psf_grid, "iterations": args.iterations, "deskew": deskew_json(args)? });
    options.as_object_mut().unwrap().extend(more.as_object().unwrap().clone());
    let batch = Batch { command: "deconvolve", global, options };
    batch.run(
        &args.inputs,
        &args.output,
        batch::real_ext,
        || global.devices(args.adapters.as_deref()),
        batch::read_input,
        |data, input, output, device, stages| match (data, &psfs) {
            (Input::Whole(image), Some(psfs)) => one(global, args, (psfs, &opts), image, (input, output), device, stages),
            (Input::Rows(rows), Some(psfs)) => streamed(args, (psfs, &opts), &rows, output, device, stages),
            (Input::Whole(image), None) => {
                args.check_deskewable(image.shape())?;
                let psf = stages.compute(|| args.psf_for(&source, image.shape()))?;
                one(global, args, (&PsfGrid::single(psf.view()), &opts), image, (input, output), device, stages)
            }
            (Input::Rows(_), None) => Err(Error::Invalid(
                "--psf-model needs the whole image; this Zarr input is beyond the host memory budget (make the PSF with `lucent psf`, then give it with --psf)"
                    .into(),
            )),
        },
    )
}

/// The whole image of a one-pass method (`what` names it), refused for a Zarr input beyond the
/// host memory budget.
fn whole(data: Input, what: &str) -> Result<ArrayD<f32>, Error> {
    match data {
        Input::Whole(image) => Ok(image),
        Input::Rows(_) => Err(Error::Invalid(format!("{what} needs the whole image; this Zarr input is beyond the host memory budget"))),
    }
}

/// The deskew as the report names it (null without --deskew).
fn deskew_json(args: &Args) -> Result<serde_json::Value, Error> {
    Ok(args.geometry()?.map_or(
        serde_json::Value::Null,
        |g| json!({ "angle": g.angle, "dzdata": g.dzdata, "dxdata": g.dxdata, "coverslip": g.rotate, "deskewed_dz": g.deskewed_dz() }),
    ))
}

/// `--method wiener`: each image restored in one pass, whole (on the GPU, or the f64 reference).
fn wiener(global: &Global, args: &Args) -> Result<(), Error> {
    let unsupervised = args.method == Method::UnsupervisedWiener;
    let balance = match (args.balance, unsupervised) {
        (Some(_), true) => return Err(Error::Invalid("--method unsupervised-wiener estimates the balance: drop --balance".into())),
        (Some(b), false) => b,
        (None, true) => 0.0,
        (None, false) => return Err(Error::Invalid("--method wiener needs --balance (e.g. 0.01)".into())),
    };
    let seed = args.seed.unwrap_or_else(|| std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64));
    let method_name = if unsupervised { "unsupervised-wiener" } else { "wiener" };
    // Richardson-Lucy's options mean nothing here: refused rather than ignored.
    let rl_only = [
        ("--iterations", args.iterations != 20),
        ("--init", args.init != Init::Observed),
        ("--boundary", args.boundary != RlBoundary::Zero),
        ("--stop-tolerance", args.stop_tolerance.is_some()),
        ("--filter-epsilon", args.filter_epsilon.is_some()),
        ("--tv", args.tv.is_some()),
        ("--clip-negative", args.clip_negative),
        ("--accelerate", args.accelerate),
        ("--adapters", args.adapters.is_some()),
        ("--psf-grid", args.psf_grid.is_some()),
    ];
    if let Some((name, _)) = rl_only.iter().find(|(_, given)| *given) {
        return Err(Error::Invalid(format!("{name} belongs to Richardson-Lucy, not --method {method_name}")));
    }
    let source = args.psf_source()?;
    // As for Richardson-Lucy, the PSF divided by its sum unless asked not to (scikit-image's
    // wiener takes it as given: --no-normalize-psf).
    let normalized = |psf: ArrayD<f32>| -> Result<ArrayD<f32>, Error> {
        if args.no_normalize_psf {
            return Ok(psf);
        }
        let total: f64 = psf.iter().map(|&v| v as f64).sum();
        if !(total.is_finite() && total != 0.0) {
            return Err(Error::Invalid(format!("the PSF sums to {total}: it cannot be normalised (--no-normalize-psf to take it as given)")));
        }
        Ok(psf.mapv(|v| (v as f64 / total) as f32))
    };
    let options = match unsupervised {
        false => json!({
            "method": "wiener", "psf": args.psf_json(), "balance": balance, "clip": args.clip, "normalize_psf": !args.no_normalize_psf, "deskew": deskew_json(args)?,
        }),
        true => json!({
            "method": "unsupervised-wiener", "psf": args.psf_json(), "user_params": restoration::GibbsParams::default(), "seed": seed, "clip": args.clip,
            "normalize_psf": !args.no_normalize_psf, "deskew": deskew_json(args)?,
        }),
    };
    let batch = Batch { command: "deconvolve", global, options };
    batch.run(
        &args.inputs,
        &args.output,
        batch::real_ext,
        || global.device(),
        batch::read_input,
        |data, input, output, device, stages| {
            let image = whole(data, "--method wiener")?;
            args.check_deskewable(image.shape())?;
            batch::check_format(output, image.ndim(), false)?;
            let psf = normalized(args.psf_for(&source, image.shape())?)?;
            let mut chains = serde_json::Value::Null;
            let y = stages.compute(|| match (device.gpu(), unsupervised) {
                (Some(gpu), false) => restoration::wiener(gpu, &image.view(), &psf.view(), balance, args.clip),
                (None, false) => {
                    restoration::check_wiener(image.shape(), &psf.view(), balance)?;
                    lucent::check::check_finite(&image.view(), "the image")?;
                    lucent::host::check_host_array("the reference's spectra", image.shape(), 48)?;
                    Ok(cpu::wiener(&image.mapv(|v| v as f64), &psf.mapv(|v| v as f64), balance, args.clip)?.mapv(|v| v as f32))
                }
                (Some(gpu), true) => {
                    let r = restoration::unsupervised_wiener(gpu, &image.view(), &psf.view(), &restoration::GibbsParams::default(), args.clip, seed)?;
                    chains = json!({ "noise": r.noise, "prior": r.prior });
                    Ok(r.estimate)
                }
                (None, true) => {
                    lucent::host::check_host_array("the reference's spectra", image.shape(), 48)?;
                    let r =
                        cpu::unsupervised_wiener(&image.mapv(|v| v as f64), &psf.mapv(|v| v as f64), &restoration::GibbsParams::default(), args.clip, seed)?;
                    chains = json!({ "noise": r.noise, "prior": r.prior });
                    Ok(r.estimate.mapv(|v| v as f32))
                }
            })?;
            let y = stages.compute(|| args.deskewed(y, device))?;
            batch::check_result(&y.view())?;
            stages.write(|| io::write_real_like(output, &y.view(), input))?;
            Ok(Outcome {
                shape_in: image.shape().to_vec(),
                shape_out: y.shape().to_vec(),
                placement: None,
                summary: match unsupervised {
                    false => format!("Wiener-Hunt deconvolution of {:?} (balance {balance})", image.shape()),
                    true => format!(
                        "unsupervised Wiener-Hunt deconvolution of {:?}: {} Gibbs iterations (seed {seed})",
                        image.shape(),
                        chains["noise"].as_array().map_or(0, |c| c.len().saturating_sub(1))
                    ),
                },
                details: json!({ "chains": chains }),
            })
        },
    )
}

/// `--method blind`: each image and its PSF restored together from the starting PSF (on the
/// GPU, or the f64 reference), `--psf-out` the recovered PSF.
fn blind(global: &Global, args: &Args) -> Result<(), Error> {
    if args.balance.is_some() || args.clip {
        return Err(Error::Invalid("--balance and --clip belong to --method wiener".into()));
    }
    let not_blind = [
        ("--stop-tolerance", args.stop_tolerance.is_some()),
        ("--tv", args.tv.is_some()),
        ("--accelerate", args.accelerate),
        ("--adapters", args.adapters.is_some()),
        ("--psf-grid", args.psf_grid.is_some()),
        ("--boundary extended", args.boundary == RlBoundary::Extended),
    ];
    if let Some((name, _)) = not_blind.iter().find(|(_, given)| *given) {
        return Err(Error::Invalid(format!("{name} is not available with --method blind")));
    }
    if args.psf_out.is_some() && args.inputs.len() > 1 {
        return Err(Error::Invalid("--psf-out takes one input (one recovered PSF)".into()));
    }
    let source = args.psf_source()?;
    let o = restoration::BlindOptions {
        iterations: args.iterations,
        object_iterations: 1,
        psf_iterations: args.psf_iterations,
        psf_prior: args.psf_prior.unwrap_or(0.0),
        rl: args.options(),
    };
    let options = json!({ "method": "blind", "psf": args.psf_json(), "blind": o, "deskew": deskew_json(args)? });
    let batch = Batch { command: "deconvolve", global, options };
    batch.run(
        &args.inputs,
        &args.output,
        batch::real_ext,
        || global.device(),
        batch::read_input,
        |data, input, output, device, stages| {
            let image = whole(data, "--method blind")?;
            args.check_deskewable(image.shape())?;
            batch::check_format(output, image.ndim(), false)?;
            let psf = args.psf_for(&source, image.shape())?;
            restoration::check_blind(&image.view(), &psf.view(), &o)?;
            if let Some(path) = &args.psf_out {
                batch::check_format(path, psf.ndim(), false)?;
            }
            let bar = progress_bar(global, o.iterations);
            let (estimate, recovered, report) = stages.compute(|| match device.gpu() {
                Some(gpu) => restoration::blind_richardson_lucy_with(gpu, &image.view(), &psf.view(), &o, |p| bar.set_position(p.done as u64))
                    .map(|r| (r.estimate, r.psf, serde_json::to_value(&r.report).expect("reports serialise"))),
                None => {
                    let (e, p) = cpu::blind_richardson_lucy(&image.view(), &psf.view(), &o)?;
                    Ok((e.mapv(|v| v as f32), p.mapv(|v| v as f32), json!({ "device": "cpu (f64 reference)" })))
                }
            })?;
            bar.finish_and_clear();
            let estimate = stages.compute(|| args.deskewed(estimate, device))?;
            batch::check_result(&estimate.view())?;
            batch::check_result(&recovered.view())?;
            stages.write(|| match &args.psf_out {
                Some(path) => lucent::host::all_or_nothing(|| {
                    io::write_real_like(output, &estimate.view(), input)?;
                    io::write_real(path, &recovered.view())
                }),
                None => io::write_real_like(output, &estimate.view(), input),
            })?;
            Ok(Outcome {
                shape_in: image.shape().to_vec(),
                shape_out: estimate.shape().to_vec(),
                placement: None,
                details: report,
                summary: format!("blind Richardson-Lucy of {:?}: {} iterations, PSF {:?} recovered", image.shape(), o.iterations, recovered.shape()),
            })
        },
    )
}

/// A Zarr input beyond the host memory budget, deconvolved in slabs of rows, each with halos of
/// `tiles::halo_width` rows (none where the PSF has fewer axes and axis 0 is a batch).
fn streamed(
    args: &Args,
    (psfs, opts): (&PsfGrid, &RlOptions),
    source: &io::zarr::Source,
    output: &Path,
    device: &Device,
    stages: &mut Stages,
) -> Result<Outcome, Error> {
    if psfs.grid() != [1, 1] || opts.boundary == RlBoundary::Periodic || args.deskew.is_some() {
        return Err(Error::Invalid(
            "a PSF grid, the periodic boundary or --deskew needs the whole image; this Zarr input is beyond the host memory budget".into(),
        ));
    }
    let psf = psfs.psf([0, 0]);
    let shape = source.shape();
    let halo = match psf.ndim() == shape.len() {
        true => restoration::rl_halo(psf.shape()[0], args.iterations),
        false => 0,
    };
    let what = format!("Richardson-Lucy {shape:?} ({} iterations)", args.iterations);
    // On a CPU adapter RL's device working set is host memory: its float32 copies of a slab of
    // (about) six halos' rows, padded spectra included, so that a slab runs whole.
    let mut window = shape.clone();
    window[0] = (6 * halo).clamp(1, shape[0]);
    let elements = window.iter().product::<usize>() as u64;
    let device_copies = restoration::working_set_bytes(&window, psf.shape(), opts)?.div_ceil(4 * elements);
    batch::stream(source, output, ([halo, halo], batch::slab_copies(device, device_copies)), what, stages, |slab| {
        let estimate = match device.gpus.is_empty() {
            false => restoration::richardson_lucy_on(&device.gpus, &slab.view(), psfs, args.iterations, opts, |_| {})?.0,
            true => on_cpu_any(&slab.view(), psfs, args.iterations, opts, |_| {})?.0,
        };
        Ok(estimate)
    })
}

fn one(
    global: &Global,
    args: &Args,
    (psfs, opts): (&PsfGrid, &RlOptions),
    image: ArrayD<f32>,
    (input, output): (&Path, &Path),
    device: &Device,
    stages: &mut Stages,
) -> Result<Outcome, Error> {
    args.check_deskewable(image.shape())?;
    batch::check_format(output, image.ndim(), false)?;

    let bar = progress_bar(global, args.iterations);
    let show = |p: restoration::Progress| {
        bar.set_length(p.total as u64);
        bar.set_position(p.done as u64);
        if let Some(c) = p.relative_change {
            bar.set_message(format!("change {c:.2e}"));
        }
    };
    let (estimate, run, placement) = stages.compute(|| match device.gpus.is_empty() {
        false => restoration::richardson_lucy_on(&device.gpus, &image.view(), psfs, args.iterations, opts, show).map(|(e, run, p)| (e, run, Some(p))),
        true => on_cpu_any(&image.view(), psfs, args.iterations, opts, show).map(|(e, run)| (e, run, None)),
    })?;
    bar.finish_and_clear();
    let estimate = stages.compute(|| args.deskewed(estimate, device))?;
    batch::check_result(&estimate.view())?;
    stages.write(|| io::write_real_like(output, &estimate.view(), input))?;
    let summary = match &run {
        RlRun::Whole(r) => summary(r),
        RlRun::Tiled(r) => format!(
            "Richardson-Lucy {:?} in {} tiles (guard bands {:?}) on {}: {} iterations each in {:.1} ms",
            image.shape(),
            r.tiles,
            r.guard,
            r.adapters.join(", "),
            args.iterations,
            r.total_ms
        ),
        RlRun::Slabs(r) => format!(
            "Richardson-Lucy {:?} in {} slabs of rows resident on {} ({} halo rows exchanged each iteration): {} iterations in {:.1} ms ({:.1} ms exchanging)",
            image.shape(),
            r.owned.len(),
            r.adapters.join(", "),
            r.halo_rows,
            r.iterations,
            r.total_ms,
            r.exchange_ms
        ),
    };
    Ok(Outcome {
        shape_in: image.shape().to_vec(),
        shape_out: estimate.shape().to_vec(),
        placement,
        // path: whole or tiled, with what that path measured.
        details: serde_json::to_value(&run).expect("reports serialise"),
        summary,
    })
}

/// The CPU reference, whole for one PSF, in tiles for a PSF grid.
fn on_cpu_any(
    image: &ArrayViewD<f32>,
    psfs: &PsfGrid,
    iterations: usize,
    opts: &RlOptions,
    progress: impl FnMut(restoration::Progress),
) -> Result<(ArrayD<f32>, RlRun), Error> {
    if psfs.grid() == [1, 1] {
        let r = on_cpu(image, &psfs.psf([0, 0]), iterations, opts, progress)?;
        return Ok((r.estimate, RlRun::Whole(r.report)));
    }
    let (e, r) = cpu::richardson_lucy_tiled_cpu(image, psfs, iterations, opts, &TileOptions::default(), progress)?;
    Ok((e.mapv(|v| v as f32), RlRun::Tiled(r)))
}

/// Deconvolves on `gpu`, or on the CPU reference when there is none, with a progress bar.
pub fn restore(
    global: &Global,
    gpu: Option<&Gpu>,
    image: &ArrayViewD<f32>,
    psf: &ArrayViewD<f32>,
    iterations: usize,
    opts: &RlOptions,
) -> Result<RlResult, Error> {
    let bar = progress_bar(global, iterations);
    let show = |p: restoration::Progress| {
        bar.set_position(p.done as u64);
        if let Some(c) = p.relative_change {
            bar.set_message(format!("change {c:.2e}"));
        }
    };
    let result = match gpu {
        Some(gpu) => RichardsonLucy::new(gpu, image, psf, iterations, opts)?.run(show),
        None => on_cpu(image, psf, iterations, opts, show),
    };
    bar.finish_and_clear();
    result
}

fn on_cpu(
    image: &ArrayViewD<f32>,
    psf: &ArrayViewD<f32>,
    iterations: usize,
    opts: &RlOptions,
    progress: impl FnMut(restoration::Progress),
) -> Result<RlResult, Error> {
    let t = Instant::now();
    let r = cpu::richardson_lucy_with(image, psf, iterations, opts, progress)?;
    let iterate_ms = ms_since(t);
    let report = RlReport {
        device: "cpu (f64 reference)".into(),
        geometry: Some(restoration::Geometry::new(image.shape(), psf.shape(), opts.boundary)?),
        iterations: r.iterations,
        stopped_early: r.stopped_early,
        changes: r.changes,
        iterate_ms,
        ms_per_iteration: iterate_ms / r.iterations as f64,
        ..Default::default()
    };
    Ok(RlResult { estimate: r.estimate.mapv(|v| v as f32), report })
}

fn progress_bar(global: &Global, iterations: usize) -> ProgressBar {
    if global.quiet {
        return ProgressBar::hidden();
    }
    // Drawn on stderr, and only when it is a terminal.
    let bar = ProgressBar::new(iterations as u64);
    bar.set_style(
        ProgressStyle::with_template("Richardson-Lucy {bar:30} {pos}/{len} iterations {msg} [{elapsed_precise}, {eta} left]").expect("a valid template"),
    );
    bar
}

/// One line: iterations, device, times and memory.
pub fn summary(r: &RlReport) -> String {
    let shape = r.geometry.as_ref().map_or(String::new(), |g| format!(" {:?} (padded {:?})", g.image, g.padded));
    let mut s = format!(
        "Richardson-Lucy{shape}: {} iterations{} on {} in {:.1} ms ({:.3} ms per iteration",
        r.iterations,
        if r.stopped_early { " (converged)" } else { "" },
        r.device,
        r.setup_ms + r.iterate_ms + r.download_ms,
        r.ms_per_iteration
    );
    if let Some(g) = r.gpu_ms_per_iteration {
        s += &format!(", {g:.3} ms on the GPU");
    }
    s += ")";
    if r.peak_bytes > 0 {
        s += &format!(", {:.1} MiB of device memory", r.peak_bytes as f64 / (1 << 20) as f64);
    }
    s
}
