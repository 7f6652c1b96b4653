//! `lucent flow`: scikit-image's optical flow of a moving image against a reference (2D or 3D
//! array files): optical_flow_tvl1 or optical_flow_ilk with their options, the flow (ndim,
//! *shape) written, such that sampling the moving image at the grid plus the flow gives the
//! reference. On the GPU only.

use std::path::PathBuf;
use std::time::Instant;

use clap::builder::PossibleValuesParser;
use lucent::registration::{optical_flow_ilk, optical_flow_tvl1, IlkOptions, Tvl1Options};
use lucent::{io, Error};
use serde_json::json;

use crate::report::{self, Report, Stages};
use crate::Global;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  lucent flow frame0.tif frame1.tif -o flow.npy
  lucent flow ref.npy mov.npy -o flow.npy --method ilk --radius 5 --gaussian --json")]
pub struct Args {
    /// The reference image: .npy, .tif/.tiff or .png; 2 or 3 axes.
    reference: PathBuf,
    /// The moving image, of the reference's shape.
    moving: PathBuf,
    /// The flow, (ndim, *shape) float32: .npy (or .tif for 2D images).
    #[arg(short, long)]
    output: PathBuf,
    /// tvl1 (scikit-image's optical_flow_tvl1) or ilk (optical_flow_ilk).
    #[arg(long, default_value = "tvl1", value_parser = PossibleValuesParser::new(["tvl1", "ilk"]))]
    method: String,
    /// Warps per pyramid level [default: 5 for tvl1, 10 for ilk].
    #[arg(long)]
    num_warp: Option<usize>,
    /// A 3-wide median filter of the flow before each warp.
    #[arg(long)]
    prefilter: bool,
    /// tvl1: the attachment (data term) weight.
    #[arg(long, default_value_t = 15.0)]
    attachment: f64,
    /// tvl1: the coupling of the flow and its auxiliary.
    #[arg(long, default_value_t = 0.3)]
    tightness: f64,
    /// tvl1: iterations per warp.
    #[arg(long, default_value_t = 10)]
    num_iter: usize,
    /// tvl1: a level ends when a warp changes the flow by less than this (squared, per point).
    #[arg(long, default_value_t = 1e-4)]
    tol: f64,
    /// ilk: the window's radius.
    #[arg(long, default_value_t = 7)]
    radius: usize,
    /// ilk: a Gaussian window instead of a uniform one.
    #[arg(long)]
    gaussian: bool,
}

pub fn run(global: &Global, args: &Args) -> Result<(), Error> {
    let start = Instant::now();
    let mut stages = Stages::default();
    let reference = stages.read(|| io::read_real(&args.reference))?;
    io::check_output(&args.output, reference.ndim() + 1, false)?;
    let moving = stages.read(|| io::read_real(&args.moving))?;
    let gpu = stages.open(|| global.gpu())?.ok_or_else(|| Error::Invalid("optical flow runs on the GPU only".into()))?;
    let flow = stages.compute(|| match args.method.as_str() {
        "ilk" => {
            let o = IlkOptions { radius: args.radius, num_warp: args.num_warp.unwrap_or(10), gaussian: args.gaussian, prefilter: args.prefilter };
            optical_flow_ilk(&gpu, &reference.view(), &moving.view(), &o)
        }
        _ => {
            let o = Tvl1Options {
                attachment: args.attachment,
                tightness: args.tightness,
                num_warp: args.num_warp.unwrap_or(5),
                num_iter: args.num_iter,
                tol: args.tol,
                prefilter: args.prefilter,
            };
            optical_flow_tvl1(&gpu, &reference.view(), &moving.view(), &o)
        }
    })?;
    stages.write(|| io::write_real(&args.output, &flow.view()))?;
    if global.json {
        let options = json!({
            "moving": report::path(&args.moving),
            "method": args.method,
            "num_warp": args.num_warp,
            "prefilter": args.prefilter,
            "attachment": args.attachment,
            "tightness": args.tightness,
            "num_iter": args.num_iter,
            "tol": args.tol,
            "radius": args.radius,
            "gaussian": args.gaussian,
        });
        let largest = flow.iter().fold(0f32, |m, v| m.max(v.abs()));
        Report {
            input: report::path(&args.reference),
            output: report::path(&args.output),
            shape_in: Some(reference.shape().to_vec()),
            shape_out: Some(flow.shape().to_vec()),
            options,
            ms: stages.total(start),
            details: json!({ "largest_displacement": largest }),
            ..Report::new("flow", report::device([&gpu]))
        }
        .print();
    } else {
        println!("{}: flow {:?} written to {}", args.moving.display(), flow.shape(), args.output.display());
    }
    Ok(())
}
