//! `lucent spline-filter`: scipy.ndimage.spline_filter of array files — the B-spline
//! coefficients (orders 2-5, cubic by default) along every axis — on the GPU, or with
//! `--device cpu` or no adapter on the f64 reference.

use std::path::{Path, PathBuf};

use clap::builder::{PossibleValuesParser, TypedValueParser};
use lucent::ndimage::cpu;
use lucent::ndimage::{self, SplineMode};
use lucent::{io, Error};
use ndarray::ArrayD;
use serde_json::json;

use crate::batch::{self, Batch, Device, Outcome};
use crate::report::Stages;
use crate::Global;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  lucent spline-filter volume.npy -o coefficients.npy
  lucent spline-filter image.tif -o coefficients.tif --mode grid-wrap --order 5 --json")]
pub struct Args {
    /// Input arrays: .npy (any real dtype), .tif/.tiff or .png.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Output: float32 .npy or .tif. With several inputs, a directory.
    #[arg(short, long)]
    output: PathBuf,
    /// B-spline order, 2 to 5 (3: cubic).
    #[arg(long, default_value_t = 3, value_parser = PossibleValuesParser::new(["2", "3", "4", "5"]).map(|s| s.parse::<u32>().unwrap()))]
    order: u32,
    /// The boundary the coefficients assume, as scipy.ndimage names it.
    #[arg(long, default_value = "mirror", value_parser = PossibleValuesParser::new(SplineMode::NAMES))]
    mode: String,
}

pub fn run(global: &Global, args: &Args) -> Result<(), Error> {
    let mode = SplineMode::parse(&args.mode)?;
    let order = args.order;
    let batch = Batch { command: "spline-filter", global, options: json!({ "order": order, "mode": args.mode }) };
    batch.run(
        &args.inputs,
        &args.output,
        batch::real_ext,
        || global.device(),
        |input| io::read_real(input),
        |image, _, output, device, stages| one(order, mode, image, output, device, stages),
    )
}

fn one(order: u32, mode: SplineMode, image: ArrayD<f32>, output: &Path, device: &Device, stages: &mut Stages) -> Result<Outcome, Error> {
    lucent::Shape::new(image.shape())?;
    batch::check_format(output, image.ndim(), false)?;
    let y = stages.compute(|| match device.gpu() {
        Some(gpu) => ndimage::spline_filter(gpu, &image, order, mode),
        None => {
            lucent::check::check_finite(&image.view(), "input")?;
            lucent::host::check_host_array("the reference's arrays", image.shape(), 16)?;
            Ok(cpu::spline_filter(&image.mapv(|v| v as f64), order, mode).mapv(|v| v as f32))
        }
    })?;
    batch::check_result(&y.view())?;
    stages.write(|| io::write_real(output, &y.view()))?;
    Ok(Outcome {
        placement: None,
        shape_in: image.shape().to_vec(),
        shape_out: y.shape().to_vec(),
        details: json!({}),
        summary: format!("order-{order} B-spline coefficients of {:?} ({mode:?})", image.shape()),
    })
}
