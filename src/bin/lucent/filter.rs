//! `lucent filter`: scipy.ndimage spatial filters of array files (gaussian_filter,
//! uniform_filter, correlate or convolve with a kernel file, median, minimum and maximum filters
//! over a box, the Euclidean distance transform) with scipy's boundary modes, on the
//! GPU (lucent::ndimage, in chunks when an array exceeds a buffer) or, with `--device cpu` or no
//! adapter, on the f64 CPU reference. Parameters are checked by the library's own checks.

use std::path::{Path, PathBuf};

use clap::builder::PossibleValuesParser;
use lucent::check::check_finite;
use lucent::ndimage::{self, Boundary};
use lucent::ndimage::{check_filter_weights, cpu, filter_halo, gaussian_passes, uniform_passes, AxisFilter};
use lucent::{io, Error, Gpu};
use ndarray::ArrayD;
use serde_json::json;

use crate::batch::{self, Batch, Input, Outcome};
use crate::report::Stages;
use crate::Global;

#[derive(clap::Args)]
#[command(
    group = clap::ArgGroup::new("filter").required(true).multiple(false).args(["gaussian", "uniform", "kernel", "median", "minimum", "maximum", "distance"]),
    after_help = "Examples:
  lucent filter volume.tif -o smooth.tif --gaussian 2.0
  lucent filter image.npy -o mean.npy --uniform 5,3 --boundary nearest
  lucent filter noisy.tif -o clean.tif --median 3
  lucent filter image.npy -o edges.npy --kernel sobel.npy --boundary constant --cval 0 --json
  lucent filter mask.tif -o distance.tif --distance --sampling 2,0.5,0.5
  lucent filter t*.tif -o smooth/ --gaussian 1.5,2,2"
)]
pub struct Args {
    /// Input arrays: .npy (any real dtype), .tif/.tiff, .png, or a Zarr array or OME-Zarr image
    /// (`in.zarr/0`; one beyond the host memory budget, LUCENT_HOST_BUDGET_BYTES, is filtered
    /// slab by slab into a .zarr output).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Output: float32 .npy or .tif, an OME-Zarr image (.zarr, metadata from a Zarr input), or a
    /// .png preview (2D). With several inputs, a directory.
    #[arg(short, long)]
    output: PathBuf,
    /// Gaussian filter (truncated at 4 sigma): one standard deviation for every axis, or one
    /// per axis, comma-separated.
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    gaussian: Option<Vec<f32>>,
    /// Mean over a box: one size for every axis, or one per axis.
    #[arg(long, value_delimiter = ',')]
    uniform: Option<Vec<usize>>,
    /// Median over a box (scipy.ndimage.median_filter with `size`, at most 343 elements): one
    /// size for every axis, or one per axis.
    #[arg(long, value_delimiter = ',')]
    median: Option<Vec<usize>>,
    /// Minimum over a box (scipy.ndimage.minimum_filter with `size`).
    #[arg(long, value_delimiter = ',')]
    minimum: Option<Vec<usize>>,
    /// Maximum over a box (scipy.ndimage.maximum_filter with `size`).
    #[arg(long, value_delimiter = ',')]
    maximum: Option<Vec<usize>>,
    /// The Euclidean distance of every non-zero element to the nearest zero element
    /// (scipy.ndimage.distance_transform_edt, exact; needs the whole array and a zero).
    #[arg(long)]
    distance: bool,
    /// With --distance: the spacing of the elements along each axis (one value, or one per axis).
    #[arg(long, value_delimiter = ',', requires = "distance")]
    sampling: Option<Vec<f64>>,
    /// Correlate with this kernel (as many axes as the input), as scipy.ndimage.correlate.
    #[arg(long)]
    kernel: Option<PathBuf>,
    /// With --kernel: convolve (scipy.ndimage.convolve, the kernel reversed) instead.
    #[arg(long, requires = "kernel")]
    convolve: bool,
    /// Values beyond the edges, as scipy.ndimage names them.
    #[arg(long, default_value = "reflect", value_parser = PossibleValuesParser::new(Boundary::NAMES))]
    boundary: String,
    /// The value outside the array for --boundary constant.
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    cval: f32,
}

/// The chosen filter, its parameters checked against the input.
enum Filter {
    Gaussian(Vec<f32>),
    Uniform(Vec<usize>),
    Kernel {
        kernel: ArrayD<f32>,
        convolve: bool,
    },
    /// Median, minimum or maximum over a box of these sizes.
    Rank {
        which: Rank,
        size: Vec<usize>,
    },
    /// The Euclidean distance transform with this sampling.
    Distance(Vec<f64>),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Rank {
    Median,
    Minimum,
    Maximum,
}

/// A box of `size` (one for every axis or one per axis) over an array of `ndim` axes, as the
/// footprint scipy makes of `size`.
fn box_footprint(size: &[usize], ndim: usize) -> Result<ArrayD<bool>, Error> {
    let size = match size.len() {
        1 => vec![size[0]; ndim],
        n if n == ndim => size.to_vec(),
        n => return Err(Error::Invalid(format!("a box of {n} sizes for an array of {ndim} axes (give one, or one per axis)"))),
    };
    if size.contains(&0) {
        return Err(Error::Invalid(format!("box sizes must be at least 1, got {size:?}")));
    }
    lucent::host::check_host_array("the box", &size, 1)?;
    Ok(ArrayD::from_elem(ndarray::IxDyn(&size), true))
}

impl Filter {
    fn name(&self) -> &'static str {
        match self {
            Filter::Gaussian(_) => "gaussian",
            Filter::Uniform(_) => "uniform",
            Filter::Kernel { convolve: false, .. } => "correlate",
            Filter::Kernel { convolve: true, .. } => "convolve",
            Filter::Rank { which: Rank::Median, .. } => "median",
            Filter::Rank { which: Rank::Minimum, .. } => "minimum",
            Filter::Rank { which: Rank::Maximum, .. } => "maximum",
            Filter::Distance(_) => "distance",
        }
    }

    fn on_gpu(&self, gpu: &Gpu, x: &ArrayD<f32>, b: Boundary) -> Result<ArrayD<f32>, Error> {
        match self {
            Filter::Gaussian(sigma) => ndimage::gaussian_filter(gpu, x, sigma, b),
            Filter::Uniform(size) => ndimage::uniform_filter(gpu, x, size, b),
            Filter::Kernel { kernel, convolve: false } => ndimage::correlate(gpu, x, kernel, b),
            Filter::Kernel { kernel, convolve: true } => ndimage::convolve(gpu, x, kernel, b),
            Filter::Rank { which, size } => {
                let fp = box_footprint(size, x.ndim())?;
                match which {
                    Rank::Median => ndimage::median_filter(gpu, x, &fp.view(), &[], b),
                    Rank::Minimum => ndimage::minimum_filter(gpu, x, &fp.view(), &[], b),
                    Rank::Maximum => ndimage::maximum_filter(gpu, x, &fp.view(), &[], b),
                }
            }
            Filter::Distance(sampling) => ndimage::distance_transform_edt(gpu, x, sampling),
        }
    }

    /// The f64 reference, with the library's checks (the GPU path's one-calls make them
    /// themselves): the separable filters with the library's folded passes, as the GPU applies
    /// them.
    fn on_cpu(&self, x: &ArrayD<f32>, b: Boundary) -> Result<ArrayD<f32>, Error> {
        check_finite(&x.view(), "filter input")?;
        if let Filter::Kernel { kernel, .. } = self {
            check_filter_weights(x.shape(), &kernel.view())?;
        }
        // The reference holds the input and the result in f64.
        lucent::host::check_host_array("the reference's arrays", x.shape(), 16)?;
        let x64 = x.mapv(|v| v as f64);
        let y = match self {
            Filter::Gaussian(sigma) => cpu::separable(&x64, &gaussian_passes(sigma, x.shape(), b)?, b),
            Filter::Uniform(size) => cpu::separable(&x64, &uniform_passes(size, x.shape(), b)?, b),
            Filter::Kernel { kernel, convolve } => {
                let k = kernel.mapv(|v| v as f64);
                if *convolve {
                    cpu::convolve(&x64, &k, b)
                } else {
                    cpu::correlate(&x64, &k, b)
                }
            }
            Filter::Rank { which, size } => {
                b.check()?;
                let f = ndimage::Footprint::new(&box_footprint(size, x.ndim())?.view(), None, &[])?;
                match which {
                    Rank::Median => cpu::footprint_rank(&x64, &f, ndimage::rank_within((f.offsets.len() / 2) as i64, f.offsets.len())?, b),
                    Rank::Minimum => cpu::footprint_extreme(&x64, &f, false, b),
                    Rank::Maximum => cpu::footprint_extreme(&x64, &f, true, b),
                }
            }
            Filter::Distance(sampling) => cpu::distance_transform_edt(&x64.view(), sampling)?,
        };
        Ok(y.mapv(|v| v as f32))
    }

    /// How far along axis 0 an output element reads its input (the halo of a streamed slab).
    fn reach(&self) -> usize {
        match self {
            Filter::Gaussian(sigma) => filter_halo(AxisFilter::Gaussian(sigma[0] as f64)),
            Filter::Uniform(size) => filter_halo(AxisFilter::Uniform(size[0])),
            Filter::Kernel { kernel, .. } => kernel.shape()[0],
            Filter::Rank { size, .. } => size[0] / 2 + 1,
            // A distance reads the whole array: never streamed (see `run`).
            Filter::Distance(_) => usize::MAX,
        }
    }

    fn options(&self) -> serde_json::Value {
        match self {
            Filter::Gaussian(sigma) => json!({ "sigma": sigma }),
            Filter::Uniform(size) => json!({ "size": size }),
            Filter::Kernel { kernel, .. } => json!({ "shape_kernel": kernel.shape() }),
            Filter::Rank { size, .. } => json!({ "size": size }),
            Filter::Distance(sampling) => json!({ "sampling": sampling }),
        }
    }
}

pub fn run(global: &Global, args: &Args) -> Result<(), Error> {
    if args.convolve && args.kernel.is_none() {
        return Err(Error::Invalid("--convolve applies to --kernel (the Gaussian and uniform filters are symmetric)".into()));
    }
    let rank = [(&args.median, Rank::Median), (&args.minimum, Rank::Minimum), (&args.maximum, Rank::Maximum)]
        .into_iter()
        .find_map(|(size, which)| size.as_ref().map(|size| Filter::Rank { which, size: size.clone() }));
    let filter = match (&args.gaussian, &args.uniform, &args.kernel, rank) {
        (Some(s), ..) => Filter::Gaussian(s.clone()),
        (_, Some(n), ..) => Filter::Uniform(n.clone()),
        (_, _, Some(path), _) => Filter::Kernel { kernel: io::read_real(path)?, convolve: args.convolve },
        (.., Some(rank)) => rank,
        _ if args.distance => Filter::Distance(args.sampling.clone().unwrap_or_default()),
        _ => return Err(Error::Invalid("give one of --gaussian, --uniform, --kernel, --median, --minimum, --maximum or --distance".into())),
    };
    let boundary = Boundary::from_name(&args.boundary, args.cval)?;
    let mut options = json!({ "filter": filter.name(), "boundary": boundary.name(), "cval": boundary.cval(), "kernel": args.kernel });
    options.as_object_mut().unwrap().extend(filter.options().as_object().unwrap().clone());
    let batch = Batch { command: "filter", global, options };
    batch.run(
        &args.inputs,
        &args.output,
        batch::real_ext,
        || global.device(),
        batch::read_input,
        |data, input, output, device, stages| {
            let apply = |x: ArrayD<f32>| match device.gpu() {
                Some(gpu) => filter.on_gpu(gpu, &x, boundary),
                None => filter.on_cpu(&x, boundary),
            };
            match data {
                Input::Whole(image) => one(&filter, boundary, image, (input, output), stages, apply),
                Input::Rows(source) => {
                    if matches!(filter, Filter::Distance(_)) {
                        return Err(Error::Invalid("the distance transform needs the whole array; this Zarr input is beyond the host memory budget".into()));
                    }
                    if matches!(boundary, Boundary::Wrap) {
                        return Err(Error::Invalid("the wrap boundary needs the whole array; this Zarr input is beyond the host memory budget".into()));
                    }
                    let what = format!("{} filter {:?} ({})", filter.name(), source.shape(), boundary.name());
                    let reach = filter.reach();
                    batch::stream(&source, output, ([reach, reach], batch::slab_copies(device, 4)), what, stages, apply)
                }
            }
        },
    )
}

fn one(
    filter: &Filter,
    boundary: Boundary,
    image: ArrayD<f32>,
    (input, output): (&Path, &Path),
    stages: &mut Stages,
    apply: impl FnOnce(ArrayD<f32>) -> Result<ArrayD<f32>, Error>,
) -> Result<Outcome, Error> {
    lucent::Shape::new(image.shape())?;
    batch::check_format(output, image.ndim(), false)?;
    let shape = image.shape().to_vec();
    let y = stages.compute(|| apply(image))?;
    batch::check_result(&y.view())?;
    stages.write(|| io::write_real_like(output, &y.view(), input))?;
    Ok(Outcome {
        placement: None,
        shape_in: shape.clone(),
        shape_out: y.shape().to_vec(),
        details: json!({}),
        summary: format!("{} filter {:?} ({})", filter.name(), shape, boundary.name()),
    })
}
