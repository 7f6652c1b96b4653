//! `lucent deskew`: stage-scanned light-sheet stacks deskewed as pycudadecon's deskewGPU
//! (its names and defaults), or turned to coverslip coordinates with `--rotate`, on the GPU, or
//! with `--device cpu` or no adapter on the f64 reference (map_coordinates at the map's
//! coordinates).

use std::path::{Path, PathBuf};

use clap::builder::{PossibleValuesParser, TypedValueParser};
use lucent::ndimage::{self, cpu, Deskew, Sampler, Sampling, SplineMode};
use lucent::{io, Error};
use ndarray::{ArrayD, Ix3};
use serde_json::json;

use crate::batch::{self, Batch, Device, Outcome};
use crate::report::Stages;
use crate::Global;

#[derive(clap::Args)]
#[command(after_help = "The stack is (planes, rows, columns): planes one stage step apart, the columns along the
stage's motion. Lengths in µm; names and defaults as pycudadecon's deskewGPU.

Examples:
  lucent deskew raw.tif -o deskewed.tif --angle 31.5 --dzdata 0.4 --dxdata 0.104
  lucent deskew raw.npy -o coverslip.npy --dzdata 0.4 --dxdata 0.104 --rotate --order 3 --json")]
pub struct Args {
    /// Input stacks: .npy (any real dtype), .tif/.tiff or .zarr, 3 axes.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Output: float32 .npy, .tif or .zarr. With several inputs, a directory.
    #[arg(short, long)]
    output: PathBuf,
    /// Degrees between the light sheet and the stage's motion (negative: the other side).
    #[arg(long, default_value_t = Deskew::default().angle, allow_hyphen_values = true)]
    angle: f64,
    /// The stage's step between planes.
    #[arg(long, default_value_t = Deskew::default().dzdata)]
    dzdata: f64,
    /// The camera's pixel size in the sample.
    #[arg(long, default_value_t = Deskew::default().dxdata)]
    dxdata: f64,
    /// Output width in pixels (0: the whole stack).
    #[arg(long, default_value_t = 0)]
    width: usize,
    /// Move the output's centre by this many pixels along x.
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    shift: f64,
    /// The value outside the stack (default: the median of the last plane, as pycudadecon).
    #[arg(long, allow_hyphen_values = true)]
    pad_val: Option<f32>,
    /// Coverslip coordinates (Z, Y, X) with isotropic voxels of --dxdata, in one interpolation.
    #[arg(long)]
    rotate: bool,
    /// B-spline order, 0 to 5: 1 (linear, as pycudadecon), 3 (cubic).
    #[arg(long, default_value_t = 1, value_parser = PossibleValuesParser::new(["0", "1", "2", "3", "4", "5"]).map(|s| s.parse::<u32>().unwrap()))]
    order: u32,
    /// Values beyond the edges, as scipy.ndimage names them (constant: --pad-val).
    #[arg(long, default_value = "constant", value_parser = PossibleValuesParser::new(SplineMode::NAMES))]
    mode: String,
}

pub fn run(global: &Global, args: &Args) -> Result<(), Error> {
    let geometry = Deskew { angle: args.angle, dzdata: args.dzdata, dxdata: args.dxdata, width: args.width, shift: args.shift, rotate: args.rotate };
    // The geometry's own checks before any file is read.
    ndimage::deskew_map(&[1, 1, 1], &geometry)?;
    let mode = SplineMode::parse(&args.mode)?;
    let options = json!({
        "angle": args.angle, "dzdata": args.dzdata, "dxdata": args.dxdata, "width": args.width, "shift": args.shift,
        "pad_val": args.pad_val, "rotate": args.rotate, "order": args.order, "mode": args.mode,
    });
    let batch = Batch { command: "deskew", global, options };
    batch.run(
        &args.inputs,
        &args.output,
        batch::real_ext,
        || global.device(),
        |input| io::read_real(input),
        |stack, _, output, device, stages| one(args, &geometry, mode, stack, output, device, stages),
    )
}

fn one(args: &Args, geometry: &Deskew, mode: SplineMode, stack: ArrayD<f32>, output: &Path, device: &Device, stages: &mut Stages) -> Result<Outcome, Error> {
    let (map, out) = ndimage::deskew_map(stack.shape(), geometry)?;
    batch::check_format(output, 3, false)?;
    let stack = stack.into_dimensionality::<Ix3>().map_err(|e| Error::Shape(e.to_string()))?;
    let pad = args.pad_val.unwrap_or_else(|| ndimage::deskew_pad_default(&stack) as f32);
    let how = Sampling { order: args.order, mode, cval: pad, prefilter: true, sampler: Sampler::Buffer };
    let y = stages.compute(|| match device.gpu() {
        Some(gpu) => ndimage::deskew(gpu, &stack, geometry, &how).map(|y| y.into_dyn()),
        None => {
            lucent::check::check_finite(&stack.view().into_dyn(), "input")?;
            lucent::host::check_host_array("the reference's coordinates", &[3, out[0], out[1], out[2]], 8)?;
            let coords = ndimage::coordinates(&map, &out);
            Ok(cpu::map_coordinates(&stack.mapv(|v| v as f64).into_dyn(), &coords, &how).mapv(|v| v as f32))
        }
    })?;
    batch::check_result(&y.view())?;
    stages.write(|| io::write_real(output, &y.view()))?;
    Ok(Outcome {
        placement: None,
        shape_in: stack.shape().to_vec(),
        shape_out: y.shape().to_vec(),
        details: json!({ "pad_val": pad, "deskewed_dz": geometry.deskewed_dz(), "frame": if geometry.rotate { "coverslip" } else { "deskewed" } }),
        summary: format!(
            "deskew of {:?} -> {:?} ({}, order {}, pad {pad})",
            stack.shape(),
            y.shape(),
            if geometry.rotate { "coverslip coordinates" } else { "deskewed" },
            args.order
        ),
    })
}
