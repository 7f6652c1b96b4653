//! `lucent radon`, `lucent backproject`, `lucent fbp`, `lucent em`: parallel-beam projection,
//! back-projection, filtered back-projection and MLEM of images and sinograms (2D, or stacks of slices in 3D), on the
//! GPU, or with `--device cpu` or no adapter on the f64 reference.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::builder::PossibleValuesParser;
use lucent::tomography::{cpu, Filter, Geometry, Method};
use lucent::{io, Error};
use ndarray::{ArrayD, Ix3};
use serde_json::{json, Value};

use crate::report::{self, Report, Stages};
use crate::Global;

/// Where the angles come from.
#[derive(clap::Args)]
pub struct Angles {
    /// Angles in radians (.npy, one axis); otherwise equally spaced over [0, π).
    #[arg(long)]
    angles_file: Option<PathBuf>,
    /// The rotation centre in detector coordinates (default: the detector's middle).
    #[arg(long, allow_hyphen_values = true)]
    center: Option<f64>,
    /// The projector pair: the log-polar method where it applies (angles equally spaced over
    /// [0, π), the centre at the detector's middle) and the image is 256² or more, else direct.
    #[arg(long, default_value = "auto", value_parser = PossibleValuesParser::new(Method::NAMES))]
    method: String,
}

impl Angles {
    /// The geometry with the method asked for; the f64 reference on the CPU is the direct
    /// method only.
    fn geometry(&self, size: usize, angles: Vec<f64>, detectors: Option<usize>, gpu: bool) -> Result<Geometry, Error> {
        let method = Method::parse(&self.method)?;
        if matches!(method, Method::LogPolar | Method::Gridrec) && !gpu {
            return Err(Error::Invalid(format!("the {} method runs on a GPU; the CPU reference is the direct method", self.method)));
        }
        Geometry::new(size, angles, detectors, self.center).map(|g| g.with_method(method))
    }

    /// The report's options: these flags' and the command's own (`more`, an object).
    fn options(&self, more: Value) -> Value {
        let mut o = json!({ "angles_file": self.angles_file.as_ref().map(report::path), "center": self.center, "method": self.method });
        o.as_object_mut().expect("an object").extend(more.as_object().cloned().unwrap_or_default());
        o
    }
}

#[derive(clap::Args)]
#[command(after_help = "Example:
  lucent phantom -o phantom.npy --size 512 && lucent radon phantom.npy -o sinogram.npy --angles 768")]
pub struct RadonArgs {
    /// The image (N×N) or a stack of slices (S×N×N): .npy or TIFF.
    input: PathBuf,
    /// The sinogram(s): (angles, detectors) or (S, angles, detectors).
    #[arg(short, long)]
    output: PathBuf,
    /// Equally spaced angles over [0, π) (default: N).
    #[arg(long)]
    angles: Option<usize>,
    /// Detector bins (default: N).
    #[arg(long)]
    detectors: Option<usize>,
    #[command(flatten)]
    geometry: Angles,
    #[command(flatten)]
    astra: crate::beam::GeometryArgs,
}

#[derive(clap::Args)]
#[command(after_help = "Examples:
  lucent backproject sinogram.npy -o backprojection.npy
  lucent fbp sinogram.npy -o reconstruction.npy --filter shepp-logan")]
pub struct BackArgs {
    /// The sinogram (angles, detectors) or a stack (S, angles, detectors): .npy or TIFF.
    input: PathBuf,
    /// The image(s): N×N or S×N×N.
    #[arg(short, long)]
    output: PathBuf,
    /// The image side N (default: the detector count).
    #[arg(long)]
    size: Option<usize>,
    /// FBP's filter (fbp only).
    #[arg(long, default_value = "ramp", value_parser = PossibleValuesParser::new(Filter::NAMES))]
    filter: String,
    #[command(flatten)]
    geometry: Angles,
    #[command(flatten)]
    astra: crate::beam::GeometryArgs,
}

#[derive(clap::Args)]
#[command(after_help = "Example:
  lucent em counts.npy -o estimate.npy --iterations 100 --json")]
pub struct EmArgs {
    /// The sinogram of counts (angles, detectors) or a stack: .npy or TIFF, values ≥ 0.
    input: PathBuf,
    /// The estimate(s): N×N or S×N×N.
    #[arg(short, long)]
    output: PathBuf,
    /// EM iterations.
    #[arg(short = 'n', long)]
    iterations: usize,
    /// The image side N (default: the detector count).
    #[arg(long)]
    size: Option<usize>,
    #[command(flatten)]
    geometry: Angles,
    #[command(flatten)]
    astra: crate::beam::GeometryArgs,
}

#[derive(clap::Args)]
#[command(after_help = "Example:
  lucent find-center sinogram.npy --radius 20 --json")]
pub struct FindCenterArgs {
    /// The sinogram (angles, detectors), or a stack whose --slice is searched: .npy or TIFF.
    input: PathBuf,
    /// Search this far (detector bins) either side of the detector's middle (at most to its ends).
    #[arg(long, default_value_t = 16.0, allow_hyphen_values = true)]
    radius: f64,
    /// The slice of a stack to search.
    #[arg(long, default_value_t = 0)]
    slice: usize,
    /// Angles in radians (.npy, one axis); otherwise equally spaced over [0, π).
    #[arg(long)]
    angles_file: Option<PathBuf>,
    /// A circular fan or cone geometry (ASTRA's fanflat or cone dict as JSON): the detector's
    /// offset along its rows is searched instead (columns; the mid-plane's fan-beam FBP).
    #[arg(long = "geometry", value_name = "G.json")]
    astra_geometry: Option<PathBuf>,
}

/// What the commands do.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Backproject,
    Fbp,
}

fn read_angles(path: &Path) -> Result<Vec<f64>, Error> {
    let a = io::read_real(path)?;
    if a.ndim() != 1 {
        return Err(Error::Shape(format!("{}: angles of shape {:?} (one axis)", path.display(), a.shape())));
    }
    Ok(a.iter().map(|&v| v as f64).collect())
}

/// With --geometry, the parallel-beam geometry's own flags have no meaning: refused.
fn parallel_flags_absent(a: &Angles, others: bool) -> Result<(), Error> {
    if others || a.angles_file.is_some() || a.center.is_some() || a.method != "auto" {
        return Err(Error::Invalid(
            "--geometry describes the whole geometry: leave out --angles, --angles-file, --detectors, --size, --center and --method".into(),
        ));
    }
    Ok(())
}

/// `x` seen as a stack (S, ., .) of 2D slices.
fn as_stack(x: ArrayD<f32>, what: &str) -> Result<(ndarray::Array3<f32>, bool), Error> {
    let shape = x.shape().to_vec();
    match shape.len() {
        2 => Ok((x.into_shape_with_order((1, shape[0], shape[1])).map_err(|e| Error::Shape(e.to_string()))?, true)),
        3 => Ok((x.into_dimensionality::<Ix3>().map_err(|e| Error::Shape(e.to_string()))?, false)),
        _ => Err(Error::Shape(format!("{what} of shape {shape:?}: 2 axes, or 3 for a stack of slices"))),
    }
}

fn write(path: &Path, y: ndarray::Array3<f32>, single: bool) -> Result<Vec<usize>, Error> {
    let y = if single { y.index_axis_move(ndarray::Axis(0), 0).into_dyn() } else { y.into_dyn() };
    crate::batch::check_result(&y.view().into_dyn())?;
    io::write_real(path, &y.view())?;
    Ok(y.shape().to_vec())
}

pub fn radon(global: &Global, args: &RadonArgs) -> Result<(), Error> {
    if args.astra.given() {
        parallel_flags_absent(&args.geometry, args.angles.is_some() || args.detectors.is_some())?;
        return crate::beam::run(global, crate::beam::Operation::Project, &args.input, &args.output, &args.astra, None);
    }
    let start = Instant::now();
    let mut stages = Stages::default();
    let input = stages.read(|| io::read_real(&args.input))?;
    let shape_in = input.shape().to_vec();
    let (images, single) = as_stack(input, "the image")?;
    let (_, h, w) = images.dim();
    if h != w {
        return Err(Error::Shape(format!("images of {h}×{w}: radon takes square images (N×N)")));
    }
    let angles = match (&args.geometry.angles_file, args.angles) {
        (Some(_), Some(_)) => return Err(Error::Invalid("--angles and --angles-file: give one".into())),
        (Some(path), None) => stages.read(|| read_angles(path))?,
        // The count's range before its angles are made.
        (None, Some(n)) if !(1..=Geometry::MAX_ANGLES).contains(&n) => return Err(Error::Invalid(format!("--angles {n}: 1 to 2^20 angles"))),
        (None, count) => Geometry::equally_spaced(count.unwrap_or(h)),
    };
    let gpu = stages.open(|| global.gpu())?;
    let g = args.geometry.geometry(h, angles, args.detectors, gpu.is_some())?;
    lucent::host::check_host_array("the sinograms", &[images.dim().0, g.angles.len(), g.detectors], 4)?;
    let sinograms = stages.compute(|| match &gpu {
        Some(gpu) => {
            let bar = progress_bar(global, images.dim().0, "projecting");
            let out = lucent::tomography::apply(gpu, lucent::tomography::Operation::Radon, &images, &g, &mut |p| bar.set_position(p.done as u64))?;
            bar.finish_and_clear();
            Ok(out)
        }
        None => {
            lucent::check::check_finite(&images.view().into_dyn(), "the image")?;
            Ok(cpu::project(&images.mapv(f64::from).view(), &g).mapv(|v| v as f32))
        }
    })?;
    let shape_out = stages.write(|| write(&args.output, sinograms, single))?;
    let options = args.geometry.options(json!({ "angles": args.angles, "detectors": args.detectors }));
    let run = Run { command: "radon", input: &args.input, output: &args.output, shape_in, shape_out, options, gpu: gpu.as_ref() };
    run.report(global, &g, stages.total(start), json!({}));
    Ok(())
}

/// A sinogram (stack) and the geometry it was taken in; the stack's shape as read.
fn read_sinograms(
    input: &Path,
    size: Option<usize>,
    geometry: &Angles,
    gpu: bool,
    stages: &mut Stages,
) -> Result<(ndarray::Array3<f32>, bool, Geometry, Vec<usize>), Error> {
    let x = stages.read(|| io::read_real(input))?;
    let shape = x.shape().to_vec();
    let (sinograms, single) = as_stack(x, "the sinogram")?;
    let (_, rows, detectors) = sinograms.dim();
    let angles = match &geometry.angles_file {
        Some(path) => stages.read(|| read_angles(path))?,
        None => Geometry::equally_spaced(rows),
    };
    if angles.len() != rows {
        return Err(Error::Shape(format!("{} angles for a sinogram of {rows} rows", angles.len())));
    }
    let g = geometry.geometry(size.unwrap_or(detectors), angles, Some(detectors), gpu)?;
    lucent::host::check_host_array("the images", &[sinograms.dim().0, g.size, g.size], 4)?;
    Ok((sinograms, single, g, shape))
}

pub fn em(global: &Global, args: &EmArgs) -> Result<(), Error> {
    if args.astra.given() {
        parallel_flags_absent(&args.geometry, args.size.is_some())?;
        let iterative = crate::beam::IterativeArgs { iterations: args.iterations, relaxation: 1.0, ..Default::default() };
        let op = crate::beam::Operation::Iterative(lucent::tomography::Algorithm::Mlem);
        return crate::beam::run(global, op, &args.input, &args.output, &args.astra, Some(&iterative));
    }
    let start = Instant::now();
    let mut stages = Stages::default();
    let gpu = stages.open(|| global.gpu())?;
    let (sinograms, single, g, shape_in) = read_sinograms(&args.input, args.size, &args.geometry, gpu.is_some(), &mut stages)?;
    let (estimate, kl) = stages.compute(|| match &gpu {
        Some(gpu) => {
            let bar = progress_bar(global, sinograms.dim().0, "EM");
            let out = lucent::tomography::mlem_with(gpu, &sinograms, &g, args.iterations, &mut |p| bar.set_position(p.done as u64))?;
            bar.finish_and_clear();
            Ok(out)
        }
        None => {
            lucent::check::check_finite(&sinograms.view().into_dyn(), "the sinogram")?;
            if sinograms.iter().any(|&v| v < 0.0) || !(1..=100_000).contains(&args.iterations) {
                return Err(Error::Invalid("EM takes counts of 0 or more and 1 to 100000 iterations".into()));
            }
            let (f, kl) = cpu::mlem(&sinograms.mapv(f64::from).view(), &g, args.iterations, lucent::tomography::EM_EPSILON as f64);
            Ok((f.mapv(|v| v as f32), kl))
        }
    })?;
    let shape_out = stages.write(|| write(&args.output, estimate, single))?;
    let options = args.geometry.options(json!({ "iterations": args.iterations, "size": args.size }));
    let run = Run { command: "em", input: &args.input, output: &args.output, shape_in, shape_out, options, gpu: gpu.as_ref() };
    run.report(global, &g, stages.total(start), json!({ "kl_divergence": kl }));
    Ok(())
}

pub fn back(global: &Global, args: &BackArgs, op: Operation) -> Result<(), Error> {
    if args.astra.given() {
        parallel_flags_absent(&args.geometry, args.size.is_some())?;
        let filter = Filter::parse(&args.filter)?;
        let what = match op {
            Operation::Fbp => crate::beam::Operation::Fdk(filter),
            Operation::Backproject if filter != Filter::Ramp => return Err(Error::Invalid("--filter belongs to fbp".into())),
            Operation::Backproject => crate::beam::Operation::Backproject,
        };
        return crate::beam::run(global, what, &args.input, &args.output, &args.astra, None);
    }
    let start = Instant::now();
    let mut stages = Stages::default();
    let gpu = stages.open(|| global.gpu())?;
    let (sinograms, single, g, shape_in) = read_sinograms(&args.input, args.size, &args.geometry, gpu.is_some(), &mut stages)?;
    let filter = Filter::parse(&args.filter)?;
    if op == Operation::Backproject && filter != Filter::Ramp {
        return Err(Error::Invalid("--filter belongs to fbp".into()));
    }
    let images = stages.compute(|| match (&gpu, op) {
        (Some(gpu), op) => {
            let what = if op == Operation::Fbp { lucent::tomography::Operation::Fbp(filter) } else { lucent::tomography::Operation::Backproject };
            let bar = progress_bar(global, sinograms.dim().0, "reconstructing");
            let out = lucent::tomography::apply(gpu, what, &sinograms, &g, &mut |p| bar.set_position(p.done as u64))?;
            bar.finish_and_clear();
            Ok(out)
        }
        (None, _) => {
            lucent::check::check_finite(&sinograms.view().into_dyn(), "the sinogram")?;
            let s = sinograms.mapv(f64::from);
            let y = if op == Operation::Fbp { cpu::fbp(&s.view(), &g, filter) } else { cpu::backproject(&s.view(), &g) };
            Ok(y.mapv(|v| v as f32))
        }
    })?;
    let shape_out = stages.write(|| write(&args.output, images, single))?;
    let command = if op == Operation::Fbp { "fbp" } else { "backproject" };
    let options = match op {
        Operation::Fbp => args.geometry.options(json!({ "size": args.size, "filter": args.filter })),
        Operation::Backproject => args.geometry.options(json!({ "size": args.size })),
    };
    let run = Run { command, input: &args.input, output: &args.output, shape_in, shape_out, options, gpu: gpu.as_ref() };
    run.report(global, &g, stages.total(start), json!({}));
    Ok(())
}

/// The method that ran (FBP back-projects in its own geometry).
fn method_name(command: &str, g: &Geometry, gpu: Option<&lucent::Gpu>) -> &'static str {
    let g = if command == "fbp" { g.fbp_geometry().0 } else { g.clone() };
    if gpu.is_some() && g.uses_logpolar().unwrap_or(false) {
        "logpolar"
    } else {
        "direct"
    }
}

/// What a projection or reconstruction ran on and wrote, for its report.
struct Run<'a> {
    command: &'static str,
    input: &'a Path,
    output: &'a Path,
    shape_in: Vec<usize>,
    shape_out: Vec<usize>,
    options: Value,
    gpu: Option<&'a lucent::Gpu>,
}

impl Run<'_> {
    /// The JSON report (the geometry and the method that ran in `details`, with `more`), or a
    /// line on stderr.
    fn report(self, global: &Global, g: &Geometry, ms: Stages, more: Value) {
        let method = method_name(self.command, g, self.gpu);
        if global.json {
            let mut details = json!({ "size": g.size, "angles": g.angles.len(), "detectors": g.detectors, "center": g.center, "method": method });
            details.as_object_mut().expect("an object").extend(more.as_object().cloned().unwrap_or_default());
            Report {
                input: report::path(self.input),
                output: report::path(self.output),
                shape_in: Some(self.shape_in),
                shape_out: Some(self.shape_out),
                options: self.options,
                ms,
                details,
                ..Report::new(self.command, report::device(self.gpu))
            }
            .print();
        } else if !global.quiet {
            let device = Global::device_name(self.gpu);
            let ms = ms.compute.unwrap_or(0.0) + ms.write.unwrap_or(0.0);
            eprintln!(
                "lucent: {}: {} angles, {} detectors, {}² images ({method}) on {device} in {ms:.1} ms; wrote {}",
                self.command,
                g.angles.len(),
                g.detectors,
                g.size,
                self.output.display()
            );
        }
    }
}

pub fn find_center(global: &Global, args: &FindCenterArgs) -> Result<(), Error> {
    if let Some(path) = &args.astra_geometry {
        return find_offset(global, args, path);
    }
    let start = Instant::now();
    let mut stages = Stages::default();
    let geometry = Angles { angles_file: args.angles_file.clone(), center: None, method: "direct".into() };
    let (sinograms, _, g, shape_in) = read_sinograms(&args.input, None, &geometry, true, &mut stages)?;
    if args.slice >= sinograms.dim().0 {
        return Err(Error::Invalid(format!("--slice {} of a stack of {}", args.slice, sinograms.dim().0)));
    }
    let sinogram = sinograms.index_axis(ndarray::Axis(0), args.slice);
    let gpu = stages.open(|| global.gpu())?;
    let (centre, scores) = stages.compute(|| match &gpu {
        Some(gpu) => lucent::tomography::find_center(gpu, &sinogram, &g, args.radius),
        None => cpu::find_center(&sinogram, &g, args.radius),
    })?;
    if global.json {
        let tried: Vec<_> = scores.iter().map(|(c, e)| json!({ "center": c, "entropy": e })).collect();
        let options = json!({ "radius": args.radius, "slice": args.slice, "angles_file": args.angles_file.as_ref().map(report::path) });
        Report {
            input: report::path(&args.input),
            shape_in: Some(shape_in),
            options,
            ms: stages.total(start),
            details: json!({ "center": centre, "middle": (g.detectors as f64 - 1.0) / 2.0, "tried": tried }),
            ..Report::new("find-center", report::device(&gpu))
        }
        .print();
    } else {
        println!("{centre:.2}");
    }
    Ok(())
}

/// `find-center --geometry`: the detector offset of fan- or cone-beam projections.
fn find_offset(global: &Global, args: &FindCenterArgs, geometry: &Path) -> Result<(), Error> {
    if args.angles_file.is_some() || args.slice != 0 {
        return Err(Error::Invalid("--geometry describes the angles and the mid-plane: leave out --angles-file and --slice".into()));
    }
    let start = Instant::now();
    let mut stages = Stages::default();
    let g = stages.read(|| io::astra::projection_geometry(&io::astra::read_json(geometry)?))?;
    let data = stages.read(|| io::read_real(&args.input))?;
    let shape_in = data.shape().to_vec();
    let gpu = stages.open(|| global.gpu())?;
    let Some(gpu) = gpu else { return Err(Error::Invalid("the detector offset search runs on a GPU (no adapter: see lucent info)".into())) };
    let (offset, scores) = stages.compute(|| lucent::tomography::find_offset(&gpu, &data.view(), &g, args.radius))?;
    if global.json {
        let tried: Vec<_> = scores.iter().map(|(c, e)| json!({ "offset": c, "entropy": e })).collect();
        let options = json!({ "radius": args.radius, "geometry": report::path(geometry) });
        Report {
            input: report::path(&args.input),
            shape_in: Some(shape_in),
            options,
            ms: stages.total(start),
            details: json!({ "offset": offset, "geometry": g.kind(), "tried": tried }),
            ..Report::new("find-center", report::device(Some(&gpu)))
        }
        .print();
    } else {
        println!("{offset:.2}");
    }
    Ok(())
}

/// A bar over a stack's slices (hidden for one slice, --quiet or --json); drawn on stderr when
/// it is a terminal.
pub fn progress_bar(global: &Global, slices: usize, what: &str) -> indicatif::ProgressBar {
    counted_bar(global, slices, what, "slices")
}

/// A bar over `count` things called `unit` (hidden for one, --quiet or --json).
pub fn counted_bar(global: &Global, count: usize, what: &str, unit: &str) -> indicatif::ProgressBar {
    if global.quiet || global.json || count < 2 {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(count as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(&format!("{what} {{bar:30}} {{pos}}/{{len}} {unit} [{{elapsed_precise}}, {{eta}} left]"))
            .expect("a valid template"),
    );
    bar
}
