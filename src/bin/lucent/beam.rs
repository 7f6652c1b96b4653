//! Tomography in ASTRA's geometries (fan and cone beam, 3D parallel beam, and their vector
//! forms): `radon`, `backproject`, `fbp` and `em` with `--geometry G.json --volume V.json`, and
//! `fdk`, `sirt`, `cgls`. G.json and V.json are ASTRA's `create_proj_geom` and
//! `create_vol_geom` dicts as JSON; projections are (rows, angles, cols) in 3D, (angles, cols)
//! in 2D, volumes (slices, rows, cols) or (rows, cols), as ASTRA's.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::builder::PossibleValuesParser;
use lucent::tomography::{self as tomo, Algorithm, Filter, IterativeOptions, ProjectionGeometry, Projector, Views, VolumeGeometry};
use lucent::{io, Error};
use ndarray::{ArrayD, Ix3, IxDyn};
use serde_json::{json, Value};

use crate::report::{self, Report, Stages};
use crate::Global;

/// The geometry files, for the commands that also work without them.
#[derive(clap::Args, Clone, Default)]
pub struct GeometryArgs {
    /// An ASTRA projection geometry (`create_proj_geom`'s dict as JSON; type parallel,
    /// parallel_vec, fanflat, fanflat_vec, parallel3d, parallel3d_vec, cone or cone_vec).
    #[arg(long = "geometry", value_name = "G.json")]
    pub astra_geometry: Option<PathBuf>,
    /// The ASTRA volume geometry (`create_vol_geom`'s dict as JSON), with --geometry.
    #[arg(long = "volume", value_name = "V.json")]
    pub astra_volume: Option<PathBuf>,
    /// The back-projector with --geometry: matched (the forward projector's exact adjoint) or
    /// astra (voxel-driven as ASTRA's CUDA one: faster, adjoint approximately), or texture (that
    /// one, and the solvers' projections, through the texture unit as ASTRA samples).
    #[arg(long, default_value = "matched", value_parser = PossibleValuesParser::new(Projector::NAMES))]
    pub projector: String,
}

impl GeometryArgs {
    pub fn given(&self) -> bool {
        self.astra_geometry.is_some()
    }

    fn read(&self, stages: &mut Stages) -> Result<(ProjectionGeometry, VolumeGeometry), Error> {
        let (Some(g), Some(v)) = (&self.astra_geometry, &self.astra_volume) else {
            return Err(Error::Invalid("--geometry and --volume go together: the projection and the volume geometry".into()));
        };
        stages.read(|| Ok((io::astra::projection_geometry(&io::astra::read_json(g)?)?, io::astra::volume_geometry(&io::astra::read_json(v)?)?)))
    }

    fn options(&self) -> Value {
        json!({ "geometry": self.astra_geometry.as_ref().map(report::path), "volume": self.astra_volume.as_ref().map(report::path), "projector": self.projector })
    }
}

/// What a command computes.
#[derive(Clone, Copy, PartialEq)]
pub enum Operation {
    Project,
    Backproject,
    Fdk(Filter),
    Iterative(Algorithm),
}

impl Operation {
    fn command(self) -> &'static str {
        match self {
            Operation::Project => "radon",
            Operation::Backproject => "backproject",
            Operation::Fdk(_) => "fdk",
            Operation::Iterative(Algorithm::Sirt) => "sirt",
            Operation::Iterative(Algorithm::Cgls) => "cgls",
            Operation::Iterative(Algorithm::Mlem) => "em",
            Operation::Iterative(Algorithm::Sart { .. }) => "sart",
            Operation::Iterative(Algorithm::Osem { .. }) => "osem",
            Operation::Iterative(Algorithm::FistaTv { .. }) => "fista",
        }
    }
}

/// The iterative commands' options (ASTRA's).
#[derive(clap::Args, Clone, Default)]
pub struct IterativeArgs {
    /// Iterations.
    #[arg(short = 'n', long, default_value_t = 100)]
    pub iterations: usize,
    /// Lower bound after each update (SIRT, OS-SART, FISTA-TV; ASTRA's MinConstraint).
    #[arg(long, allow_hyphen_values = true)]
    pub min: Option<f32>,
    /// Upper bound after each update (SIRT, OS-SART, FISTA-TV; ASTRA's MaxConstraint).
    #[arg(long, allow_hyphen_values = true)]
    pub max: Option<f32>,
    /// SIRT's relaxation λ (0 < λ < 2).
    #[arg(long, default_value_t = 1.0)]
    pub relaxation: f32,
    /// The reconstruction mask (the volume's shape; 0 where voxels keep their start).
    #[arg(long)]
    pub mask: Option<PathBuf>,
    /// The projection mask (the projections' shape; 0 where values do not count).
    #[arg(long)]
    pub projection_mask: Option<PathBuf>,
    /// The starting volume (default 0; MLEM's 1).
    #[arg(long)]
    pub initial: Option<PathBuf>,
    /// Views per subset (TIGRE's blocksize; sart and osem).
    #[arg(long, default_value_t = lucent::tomography::SART_SUBSET_SIZE)]
    pub subset_size: usize,
}

#[derive(clap::Args)]
#[command(after_help = "Example:
  lucent fdk projections.npy --geometry cone.json --volume volume.json -o reconstruction.npy")]
pub struct FdkArgs {
    /// Cone-beam projections (rows, angles, cols), or a fan-beam sinogram (angles, cols).
    pub input: PathBuf,
    /// The reconstruction: (slices, rows, cols) or (rows, cols).
    #[arg(short, long)]
    pub output: PathBuf,
    /// The filter (scikit-image's names).
    #[arg(long, default_value = "ramp", value_parser = PossibleValuesParser::new(Filter::NAMES))]
    pub filter: String,
    #[command(flatten)]
    pub geometry: GeometryArgs,
}

#[derive(clap::Args)]
#[command(after_help = "Examples:
  lucent sirt projections.npy --geometry cone.json --volume volume.json -o x.npy -n 100 --min 0
  lucent cgls projections.npy --geometry cone.json --volume volume.json -o x.npy -n 30 --json
  lucent sart projections.npy --geometry cone.json --volume volume.json -o x.npy -n 10 --subset-size 20
  lucent osem counts.npy --geometry cone.json --volume volume.json -o x.npy -n 10 --subset-size 10")]
pub struct SolveArgs {
    /// Projections (rows, angles, cols) or a sinogram (angles, cols).
    pub input: PathBuf,
    /// The reconstruction: (slices, rows, cols) or (rows, cols).
    #[arg(short, long)]
    pub output: PathBuf,
    #[command(flatten)]
    pub iterative: IterativeArgs,
    #[command(flatten)]
    pub geometry: GeometryArgs,
}

#[derive(clap::Args)]
#[command(after_help = "Example:
  lucent fista projections.npy --geometry cone.json --volume volume.json -o x.npy -n 50 --tv-weight 0.5 --min 0")]
pub struct FistaArgs {
    #[command(flatten)]
    pub solve: SolveArgs,
    /// The weight w of TV(x) against ½‖Ax − b‖² (the projections' units × voxels).
    #[arg(long, allow_hyphen_values = true)]
    pub tv_weight: f32,
    /// Chambolle iterations of each proximal step (TIGRE's tviter).
    #[arg(long, default_value_t = lucent::tomography::FISTA_TV_ITERATIONS)]
    pub tv_iterations: usize,
}

fn read_optional(path: &Option<PathBuf>, stages: &mut Stages) -> Result<Option<ArrayD<f32>>, Error> {
    path.as_ref().map(|p| stages.read(|| io::read_real(p))).transpose()
}

/// `radon`/`backproject`/`fbp` (FDK)/`em`/`fdk`/`sirt`/`cgls` in an ASTRA geometry, file to
/// file.
pub fn run(global: &Global, op: Operation, input: &Path, output: &Path, geometry: &GeometryArgs, iterative: Option<&IterativeArgs>) -> Result<(), Error> {
    let start = Instant::now();
    let mut stages = Stages::default();
    let (g, v) = geometry.read(&mut stages)?;
    let views = Views::new(&g, &v)?;
    let projector = Projector::parse(&geometry.projector)?;
    let data = stages.read(|| io::read_real(input))?;
    let shape_in = data.shape().to_vec();
    let (want, out_shape) = match op {
        Operation::Project => (views.volume_shape(), views.projection_shape()),
        _ => (views.projection_shape(), views.volume_shape()),
    };
    if shape_in != want {
        return Err(Error::Shape(format!("{}: an array of {shape_in:?}; the geometry takes {want:?}", input.display())));
    }
    lucent::host::check_host_array("the result", &out_shape, 4)?;
    let mut options = IterativeOptions { projector, ..Default::default() };
    if let Some(a) = iterative {
        options.iterations = a.iterations;
        options.min = a.min;
        options.max = a.max;
        options.relaxation = a.relaxation;
        options.volume_mask = read_optional(&a.mask, &mut stages)?;
        options.projection_mask = read_optional(&a.projection_mask, &mut stages)?;
        options.initial = read_optional(&a.initial, &mut stages)?;
    }
    let gpu = stages.open(|| global.gpu())?;
    let (mut residuals, mut lipschitz) = (None, None);
    let result = stages.compute(|| match (&gpu, op) {
        (Some(gpu), Operation::Project) => tomo::forward_project(gpu, &data.view(), &g, &v),
        (Some(gpu), Operation::Backproject) => tomo::back_project(gpu, &data.view(), &g, &v, projector),
        (Some(gpu), Operation::Fdk(filter)) => tomo::fdk(gpu, &data.view(), &g, &v, filter),
        (Some(gpu), Operation::Iterative(algorithm)) => {
            let bar = progress_bar(global, options.iterations);
            let solution = tomo::iterative(gpu, algorithm, &data.view(), &g, &v, &options, &mut |p| bar.set_position(p.done as u64))?;
            bar.finish_and_clear();
            residuals = Some(solution.residuals);
            lipschitz = solution.lipschitz;
            Ok(solution.volume)
        }
        (None, op) => {
            lucent::check::check_finite(&data.view(), "the input")?;
            let x = data.mapv(f64::from);
            // 2D images and sinograms as one slice or one detector row.
            let as3 = |a: ndarray::ArrayD<f64>, s: &[usize]| -> Result<ndarray::Array3<f64>, Error> {
                let three = if s.len() == 3 { s.to_vec() } else { vec![1, s[0], s[1]] };
                a.into_shape_with_order(IxDyn(&three))
                    .map_err(|e| Error::Shape(e.to_string()))?
                    .into_dimensionality::<Ix3>()
                    .map_err(|e| Error::Shape(e.to_string()))
            };
            let x = as3(x, &shape_in)?;
            let y = match op {
                Operation::Project => tomo::vector_cpu::project(&x.view(), &views),
                Operation::Backproject => tomo::vector_cpu::backproject(&x.view(), &views, projector),
                Operation::Fdk(filter) => tomo::vector_cpu::fdk(&x.view(), &g, &views, filter)?,
                Operation::Iterative(algorithm) => {
                    algorithm.check()?;
                    if options.volume_mask.is_some() || options.projection_mask.is_some() || options.initial.is_some() || options.relaxation != 1.0 {
                        return Err(Error::Invalid("the CPU reference takes no masks, start or relaxation: run on a GPU".into()));
                    }
                    let bounds = (options.min.map_or(f64::MIN, f64::from), options.max.map_or(f64::MAX, f64::from));
                    let (y, r) = tomo::vector_cpu::solve(algorithm, &x.view(), &views, options.iterations, projector, bounds);
                    residuals = Some(r);
                    y
                }
            };
            y.mapv(|v| v as f32).into_shape_with_order(IxDyn(&out_shape)).map_err(|e| Error::Shape(e.to_string()))
        }
    })?;
    stages.write(|| {
        crate::batch::check_result(&result.view())?;
        io::write_real(output, &result.view())
    })?;
    let command = op.command();
    if global.json {
        let mut opts = geometry.options();
        if let Operation::Fdk(filter) = op {
            opts["filter"] = json!(Filter::NAMES[filter as usize]);
        }
        if let Some(a) = iterative {
            opts["iterations"] = json!(a.iterations);
            opts["min"] = json!(a.min);
            opts["max"] = json!(a.max);
            opts["relaxation"] = json!(a.relaxation);
            opts["mask"] = json!(a.mask.as_ref().map(report::path));
            opts["projection_mask"] = json!(a.projection_mask.as_ref().map(report::path));
            opts["initial"] = json!(a.initial.as_ref().map(report::path));
            match op {
                Operation::Iterative(Algorithm::Sart { subset_size } | Algorithm::Osem { subset_size }) => opts["subset_size"] = json!(subset_size),
                Operation::Iterative(Algorithm::FistaTv { weight, tv_iterations }) => {
                    opts["tv_weight"] = json!(weight);
                    opts["tv_iterations"] = json!(tv_iterations);
                }
                _ => {}
            }
        }
        let (rows, cols) = g.detector();
        let details = json!({ "geometry": g.kind(), "projections": g.projections(), "detector_rows": rows, "detector_cols": cols, "volume": v.shape(), "voxel": v.voxel(), "residuals": residuals, "lipschitz": lipschitz });
        Report {
            input: report::path(input),
            output: report::path(output),
            shape_in: Some(shape_in),
            shape_out: Some(out_shape),
            options: opts,
            ms: stages.total(start),
            details,
            ..Report::new(command, report::device(&gpu))
        }
        .print();
    } else if !global.quiet {
        let ms = stages.total(start);
        let ms = ms.compute.unwrap_or(0.0) + ms.write.unwrap_or(0.0);
        eprintln!(
            "lucent: {command}: {} geometry, {} projections, volume {:?} on {} in {ms:.1} ms; wrote {}",
            g.kind(),
            g.projections(),
            v.shape(),
            Global::device_name(gpu.as_ref()),
            output.display()
        );
    }
    Ok(())
}

/// A bar over iterations (hidden for --quiet or --json).
fn progress_bar(global: &Global, iterations: usize) -> indicatif::ProgressBar {
    if global.quiet || global.json || iterations < 2 {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(iterations as u64);
    bar.set_style(indicatif::ProgressStyle::with_template("iterating {bar:30} {pos}/{len} [{elapsed_precise}, {eta} left]").expect("a valid template"));
    bar
}
