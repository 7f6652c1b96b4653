//! `lucent resample`: scipy.ndimage's shift, zoom, affine_transform, rotate and map_coordinates
//! of array files (B-spline orders 0-5; scipy's modes), on the GPU, or with `--device cpu` or no
//! adapter on the f64 reference (map_coordinates at the transform's coordinates).

use std::path::{Path, PathBuf};

use clap::builder::{PossibleValuesParser, TypedValueParser};
use lucent::ndimage::{self, cpu, AffineMap, Sampler, Sampling, SplineMode};
use lucent::{io, Error};
use ndarray::ArrayD;
use serde_json::json;

use crate::batch::{self, Batch, Device, Outcome};
use crate::report::Stages;
use crate::Global;

#[derive(clap::Args)]
#[command(
    group = clap::ArgGroup::new("transform").required(true).multiple(false).args(["shift", "zoom", "affine", "rotate", "coordinates"]),
    after_help = "Examples:
  lucent resample volume.npy -o moved.npy --shift -4.7,2,0.5
  lucent resample image.tif -o big.tif --zoom 2 --order 1
  lucent resample image.npy -o turned.npy --rotate 30 --mode nearest
  lucent resample volume.npy -o warped.npy --affine m.npy --offset 1.5,0,-2 --output-shape 64,64,64
  lucent resample image.npy -o values.npy --coordinates c.npy --order 3 --json"
)]
pub struct Args {
    /// Input arrays: .npy (any real dtype), .tif/.tiff or .png.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Output: float32 .npy or .tif. With several inputs, a directory.
    #[arg(short, long)]
    output: PathBuf,
    /// scipy.ndimage.shift: one shift for every axis, or one per axis (output o reads o − shift).
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    shift: Option<Vec<f64>>,
    /// scipy.ndimage.zoom: one factor for every axis, or one per axis (the corners' samples
    /// aligned unless --grid-mode).
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    zoom: Option<Vec<f64>>,
    /// With --zoom: align the pixels' outer edges (scipy's grid_mode=True; with the modes
    /// grid-constant or grid-wrap for values outside).
    #[arg(long, requires = "zoom")]
    grid_mode: bool,
    /// scipy.ndimage.affine_transform with the matrix in this .npy: (d,) diagonal, (d, d),
    /// (d, d+1) or homogeneous (d+1, d+1); it maps output indices to input coordinates.
    #[arg(long)]
    affine: Option<PathBuf>,
    /// With --affine: the offset (ignored with a homogeneous matrix, as scipy ignores it).
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true, requires = "affine")]
    offset: Option<Vec<f64>>,
    /// scipy.ndimage.rotate by this many degrees (reshape=False unless --reshape).
    #[arg(long, allow_hyphen_values = true)]
    rotate: Option<f64>,
    /// With --rotate: the plane's axes (default 1,0, as scipy).
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true, requires = "rotate")]
    axes: Option<Vec<isize>>,
    /// With --rotate: grow the output to hold the whole rotated input.
    #[arg(long, requires = "rotate")]
    reshape: bool,
    /// scipy.ndimage.map_coordinates at the coordinates in this .npy, shaped (d, ...).
    #[arg(long)]
    coordinates: Option<PathBuf>,
    /// B-spline order, 0 (nearest) to 5: 1 linear, 3 cubic.
    #[arg(long, default_value_t = 3, value_parser = PossibleValuesParser::new(["0", "1", "2", "3", "4", "5"]).map(|s| s.parse::<u32>().unwrap()))]
    order: u32,
    /// Values beyond the edges, as scipy.ndimage names them.
    #[arg(long, default_value = "constant", value_parser = PossibleValuesParser::new(SplineMode::NAMES))]
    mode: String,
    /// The value outside the array for the constant modes.
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    cval: f32,
    /// The output's shape for --affine (default: the input's).
    #[arg(long, value_delimiter = ',', requires = "affine")]
    output_shape: Option<Vec<usize>>,
    /// Sample the input as it is, without the B-spline prefilter (scipy's prefilter=False).
    #[arg(long)]
    no_prefilter: bool,
    /// Where samples are read: a storage buffer (f32 weights; 1-4 axes, every adapter) or the
    /// texture unit's linear filter (2-3 axes; faster for map_coordinates and zoom, but its
    /// weights have 8 fraction bits on NVIDIA: errors up to ~2% of the range). auto: the
    /// buffer (BENCHMARKS.md).
    #[arg(long, default_value = "auto", value_parser = PossibleValuesParser::new(Sampler::NAMES))]
    sampler: String,
}

/// The transform asked for, its parameters read.
enum Transform {
    /// The matrix as read, the offset, the output shape.
    Affine(ArrayD<f64>, Vec<f64>, Option<Vec<usize>>),
    Coordinates(ArrayD<f32>),
    Shift(Vec<f64>),
    /// The factors, grid_mode.
    Zoom(Vec<f64>, bool),
    Rotate(f64, [isize; 2], bool),
}

impl Transform {
    fn name(&self) -> &'static str {
        match self {
            Transform::Affine(..) => "affine_transform",
            Transform::Coordinates(_) => "map_coordinates",
            Transform::Shift(_) => "shift",
            Transform::Zoom(..) => "zoom",
            Transform::Rotate(..) => "rotate",
        }
    }

    /// The affine map and the output shape for an input of shape `dims` (None: map_coordinates).
    fn map(&self, dims: &[usize]) -> Result<Option<(AffineMap, Vec<usize>)>, Error> {
        Ok(Some(match self {
            Transform::Coordinates(_) => return Ok(None),
            Transform::Affine(matrix, offset, shape) => {
                let out = shape.clone().unwrap_or_else(|| dims.to_vec());
                lucent::Shape::new(&out)?;
                if out.len() != dims.len() {
                    return Err(Error::Shape(format!("--output-shape {out:?} must have the input's {} axes (the input is {dims:?})", dims.len())));
                }
                (AffineMap::new(&matrix.view(), offset, dims.len())?, out)
            }
            Transform::Shift(s) => ndimage::shift_map(dims, s)?,
            Transform::Zoom(z, grid) => ndimage::zoom_map(dims, z, *grid)?,
            Transform::Rotate(angle, axes, reshape) => ndimage::rotate_map(dims, *angle, *axes, *reshape)?,
        }))
    }
}

pub fn run(global: &Global, args: &Args) -> Result<(), Error> {
    if args.affine.is_none() {
        for (given, option) in [(args.offset.is_some(), "--offset"), (args.output_shape.is_some(), "--output-shape")] {
            if given {
                return Err(Error::Invalid(format!("{option} applies to --affine")));
            }
        }
    }
    let transform = match (&args.shift, &args.zoom, &args.affine, args.rotate, &args.coordinates) {
        (Some(s), ..) => Transform::Shift(s.clone()),
        (_, Some(z), ..) => Transform::Zoom(z.clone(), args.grid_mode),
        (_, _, Some(path), ..) => {
            Transform::Affine(io::read_real(path)?.mapv(|v| v as f64), args.offset.clone().unwrap_or_default(), args.output_shape.clone())
        }
        (_, _, _, Some(angle), _) => {
            let axes = match args.axes.as_deref() {
                None => [1, 0],
                Some(&[a, b]) => [a, b],
                Some(other) => return Err(Error::Invalid(format!("--axes takes two axes, got {other:?}"))),
            };
            Transform::Rotate(angle, axes, args.reshape)
        }
        (_, _, _, _, Some(path)) => Transform::Coordinates(io::read_real(path)?),
        _ => return Err(Error::Invalid("give one of --shift, --zoom, --affine, --rotate or --coordinates".into())),
    };
    let sampler = Sampler::parse(&args.sampler)?;
    let how = Sampling { order: args.order, mode: SplineMode::parse(&args.mode)?, cval: args.cval, prefilter: !args.no_prefilter, sampler };
    let mut options = json!({ "transform": transform.name(), "order": args.order, "mode": args.mode, "cval": args.cval, "prefilter": !args.no_prefilter, "sampler": args.sampler });
    if args.grid_mode {
        options["grid_mode"] = json!(true);
    }
    let batch = Batch { command: "resample", global, options };
    batch.run(
        &args.inputs,
        &args.output,
        batch::real_ext,
        || global.device(),
        |input| io::read_real(input),
        |image, _, output, device, stages| one(&transform, &how, image, output, device, stages),
    )
}

fn one(transform: &Transform, how: &Sampling, image: ArrayD<f32>, output: &Path, device: &Device, stages: &mut Stages) -> Result<Outcome, Error> {
    lucent::Shape::new(image.shape())?;
    let map = transform.map(image.shape())?;
    let out_rank = match (&map, transform) {
        (Some((_, out)), _) => out.len(),
        (None, Transform::Coordinates(c)) => c.ndim() - 1,
        _ => unreachable!("a map or coordinates"),
    };
    batch::check_format(output, out_rank, false)?;
    let y = stages.compute(|| match (device.gpu(), &map, transform) {
        // (Zoom's own call: an axis of one sample zooms with factor 0, a map affine_transform
        // refuses as singular.)
        (Some(gpu), Some(_), Transform::Zoom(z, grid)) => ndimage::zoom(gpu, &image, z, *grid, how),
        (Some(gpu), Some((m, out)), _) => {
            let matrix = ArrayD::from_shape_fn(ndarray::IxDyn(&[out.len(), out.len()]), |at| m.matrix[at[0]][at[1]]);
            ndimage::affine_transform(gpu, &image, &matrix.view(), &m.offset, Some(out), how)
        }
        (Some(gpu), None, Transform::Coordinates(c)) => ndimage::map_coordinates(gpu, &image, c, how),
        (None, map, _) => {
            lucent::check::check_finite(&image.view(), "input")?;
            let coords = match (map, transform) {
                (Some((m, out)), _) => ndimage::coordinates(m, out),
                (None, Transform::Coordinates(c)) => c.mapv(|v| v as f64),
                _ => unreachable!("a map or coordinates"),
            };
            lucent::host::check_host_array("the reference's arrays", coords.shape(), 16)?;
            Ok(cpu::map_coordinates(&image.mapv(|v| v as f64), &coords, how).mapv(|v| v as f32))
        }
        _ => unreachable!("a map or coordinates"),
    })?;
    batch::check_result(&y.view())?;
    stages.write(|| io::write_real(output, &y.view()))?;
    Ok(Outcome {
        placement: None,
        shape_in: image.shape().to_vec(),
        shape_out: y.shape().to_vec(),
        details: json!({}),
        summary: format!("{} of {:?} -> {:?} (order {}, {:?})", transform.name(), image.shape(), y.shape(), how.order, how.mode),
    })
}
