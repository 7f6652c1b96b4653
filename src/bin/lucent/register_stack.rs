//! `lucent register-stack`: pystackreg's register_transform_stack of stacks in array files (the
//! frames along the first axis): each frame registered onto a reference (the previous frame,
//! the mean of the first frames, or the mean of all) by translation, rigid body or scaled
//! rotation (lucent::registration::register_stack), the registered stack written, and the 3 × 3
//! matrices (pystackreg's form) in a CSV. On the GPU only.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use clap::builder::PossibleValuesParser;
use lucent::registration::{register_stack, transform_stack, StackReference, StackTransform, Tmat};
use lucent::Error;
use serde_json::json;

use crate::batch::{self, Batch, Input, Outcome};
use crate::Global;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  lucent register-stack timelapse.tif -o registered.tif
  lucent register-stack frames.npy -o aligned.npy --transformation rigid-body --reference first --n-frames 5 --tmats tmats.csv --json")]
pub struct Args {
    /// Stacks of 3 axes (frames, rows, columns): .npy (any real dtype), .tif/.tiff, or a Zarr
    /// array within the host memory budget.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The registered stack (cubic spline, zeros beyond each frame). With several inputs, a
    /// directory.
    #[arg(short, long)]
    output: PathBuf,
    /// translation, rigid-body (turns and shifts), scaled-rotation (and a scale) or affine.
    #[arg(long, default_value = "translation", value_parser = PossibleValuesParser::new(["translation", "rigid-body", "scaled-rotation", "affine"]))]
    transformation: String,
    /// What each frame is registered onto: previous (the matrices chained), first (the mean of
    /// the first --n-frames; the first frame unchanged) or mean (of all frames).
    #[arg(long, default_value = "previous", value_parser = PossibleValuesParser::new(["previous", "first", "mean"]))]
    reference: String,
    /// With --reference first: how many frames the reference averages.
    #[arg(long, default_value_t = 1)]
    n_frames: usize,
    /// Peaks to 1/N of a sample.
    #[arg(long, default_value_t = 100.0)]
    upsample: f64,
    /// Also write the matrices: one CSV row per frame (frame, then the 3 × 3 matrix row by row,
    /// pystackreg's form over homogeneous (x, y)). One input: this path; several: a directory.
    #[arg(long)]
    tmats: Option<PathBuf>,
}

pub fn run(global: &Global, args: &Args) -> Result<(), Error> {
    let transform = match args.transformation.as_str() {
        "rigid-body" => StackTransform::RigidBody,
        "scaled-rotation" => StackTransform::ScaledRotation,
        "affine" => StackTransform::Affine,
        _ => StackTransform::Translation,
    };
    let reference = match args.reference.as_str() {
        "first" => StackReference::First(args.n_frames),
        "mean" => StackReference::Mean,
        _ => StackReference::Previous,
    };
    let options = json!({ "transformation": args.transformation, "reference": args.reference, "n_frames": args.n_frames, "upsample": args.upsample, "tmats": args.tmats });
    if args.inputs.len() > 1 {
        if let Some(dir) = &args.tmats {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::File { path: dir.display().to_string(), message: format!("cannot create the tmats directory: {e}") })?;
        }
    }
    let batch = Batch { command: "register-stack", global, options };
    batch.run(
        &args.inputs,
        &args.output,
        batch::real_ext,
        || global.device(),
        batch::read_input,
        |data, input, output, device, stages| {
            let Input::Whole(image) = data else {
                return Err(Error::Invalid("stack registration needs the whole stack: this Zarr input is beyond the host memory budget".into()));
            };
            let stack = image
                .view()
                .into_dimensionality::<ndarray::Ix3>()
                .map_err(|_| Error::Shape(format!("register-stack takes stacks of 3 axes (frames, rows, columns), got {:?}", image.shape())))?;
            let Some(gpu) = device.gpu() else {
                return Err(Error::Invalid("register-stack runs on the GPU only (no CPU reference yet); drop --device cpu".into()));
            };
            let tmats_path = args.tmats.as_ref().map(|t| if args.inputs.len() > 1 { t.join(csv_name(input)) } else { t.clone() });
            let (tmats, registered) = stages.compute(|| {
                let tmats = register_stack(gpu, &stack, transform, reference, args.upsample)?;
                let registered = transform_stack(gpu, &stack, &tmats, 3)?;
                Ok((tmats, registered))
            })?;
            stages.write(|| lucent::io::write_real(output, &registered.view().into_dyn()))?;
            if let Some(path) = &tmats_path {
                stages.write(|| write_tmats(path, &tmats))?;
            }
            let shape = image.shape().to_vec();
            Ok(Outcome {
                placement: None,
                shape_in: shape.clone(),
                shape_out: shape.clone(),
                details: json!({ "tmats": tmats, "tmats_csv": tmats_path }),
                summary: format!("{} frames registered ({}, reference {})", shape[0], args.transformation, args.reference),
            })
        },
    )
}

fn csv_name(input: &Path) -> String {
    let stem = input.file_stem().map_or_else(|| "tmats".into(), |s| s.to_string_lossy().into_owned());
    format!("{stem}.csv")
}

/// frame, m00 .. m22: written atomically.
fn write_tmats(path: &Path, tmats: &[Tmat]) -> Result<(), Error> {
    lucent::host::write_atomic(path, |w| {
        writeln!(w, "frame,m00,m01,m02,m10,m11,m12,m20,m21,m22")?;
        for (k, t) in tmats.iter().enumerate() {
            let row: Vec<String> = t.iter().flatten().map(|v| format!("{v}")).collect();
            writeln!(w, "{k},{}", row.join(","))?;
        }
        Ok(())
    })
}
