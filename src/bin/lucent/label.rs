//! `lucent label`: scipy.ndimage.label of array files (connected components of the elements above
//! a threshold, or of the non-zero ones), written as a label image, with a table of the regions
//! (scipy.ndimage's measurements: size, centre of mass, bounding box, and the input's sum, mean,
//! minimum and maximum over each region). On the GPU (lucent::ndimage::label) or, with
//! `--device cpu` or no adapter, by the flood-fill reference; the numbering is scipy's either way.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use lucent::ndimage::{self, measurements, Regions};
use lucent::{io, Error};
use ndarray::ArrayD;
use serde_json::json;

use crate::batch::{self, Batch, Input, Outcome};
use crate::Global;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  lucent label mask.tif -o labels.tif
  lucent label nuclei.tif -o labels.npy --threshold 120 --connectivity 3 --regions regions.csv --json
  lucent label t*.tif -o labels/ --threshold 0.5")]
pub struct Args {
    /// Input arrays of 1-4 axes: .npy (any real dtype), .tif/.tiff, .png, or a Zarr array within
    /// the host memory budget.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Output labels (0: background, 1..: regions in scipy's order): int32 .npy or uint32 .tif.
    /// With several inputs, a directory.
    #[arg(short, long)]
    output: PathBuf,
    /// Foreground: elements above this value (default: the non-zero elements, as scipy).
    #[arg(long, allow_hyphen_values = true)]
    threshold: Option<f32>,
    /// Neighbours joined: 1 (faces, scipy's default) up to the number of axes (corners too), as
    /// scipy.ndimage.generate_binary_structure's connectivity.
    #[arg(long, default_value_t = 1)]
    connectivity: usize,
    /// Also write a CSV of the regions: label, voxels, centre of mass and bounding box per axis,
    /// and the input's sum, mean, minimum and maximum over the region. One input: this path;
    /// several: a directory, one CSV per input.
    #[arg(long)]
    regions: Option<PathBuf>,
}

pub fn run(global: &Global, args: &Args) -> Result<(), Error> {
    let options = json!({ "threshold": args.threshold, "connectivity": args.connectivity, "regions": args.regions });
    if args.inputs.len() > 1 {
        if let Some(dir) = &args.regions {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::File { path: dir.display().to_string(), message: format!("cannot create the regions directory: {e}") })?;
        }
    }
    let batch = Batch { command: "label", global, options };
    batch.run(
        &args.inputs,
        &args.output,
        labels_ext,
        || global.device(),
        batch::read_input,
        |data, input, output, device, stages| {
            let Input::Whole(image) = data else {
                return Err(Error::Invalid("labelling needs the whole array: this Zarr input is beyond the host memory budget".into()));
            };
            lucent::Shape::new(image.shape())?;
            if !matches!(io::Format::from_path(output)?, io::Format::Npy | io::Format::Tiff) {
                return Err(Error::File { path: output.display().to_string(), message: "labels are written to .npy (int32) or .tif (uint32)".into() });
            }
            if matches!(io::Format::from_path(output)?, io::Format::Tiff) && !(2..=3).contains(&image.ndim()) {
                return Err(Error::File {
                    path: output.display().to_string(),
                    message: format!("TIFF holds 2D images or 3D stacks; this input has {} axes (write .npy)", image.ndim()),
                });
            }
            let regions_path = args.regions.as_ref().map(|r| if args.inputs.len() > 1 { r.join(csv_name(input)) } else { r.clone() });
            let shape = image.shape().to_vec();
            let structure = ndimage::generate_binary_structure(image.ndim(), args.connectivity)?;
            if args.connectivity > image.ndim() || args.connectivity == 0 {
                return Err(Error::Invalid(format!("connectivity {} for a {}-axis input: 1 to {}", args.connectivity, image.ndim(), image.ndim())));
            }
            let (labels, count) = stages.compute(|| {
                lucent::check::check_finite(&image.view(), "label input")?;
                let mask = image.mapv(|v| match args.threshold {
                    Some(t) => v > t,
                    None => v != 0.0,
                });
                match device.gpu() {
                    Some(gpu) => ndimage::label(gpu, &mask.view(), &structure.view()),
                    None => ndimage::cpu::label(&mask.view(), &structure.view()),
                }
            })?;
            stages.write(|| io::write_labels(output, &labels.view()))?;
            if let Some(path) = &regions_path {
                stages.write(|| write_regions(path, &image, &labels, count))?;
            }
            Ok(Outcome {
                placement: None,
                shape_in: shape.clone(),
                shape_out: shape.clone(),
                details: json!({ "regions": count, "regions_csv": regions_path }),
                summary: format!("{count} region{} in {shape:?} (connectivity {})", if count == 1 { "" } else { "s" }, args.connectivity),
            })
        },
    )
}

/// Labels keep the input's kind of file: TIFF in, TIFF out; .npy otherwise.
fn labels_ext(input: &Path) -> &'static str {
    match io::Format::from_path(input) {
        Ok(io::Format::Tiff) => "tif",
        _ => "npy",
    }
}

fn csv_name(input: &Path) -> String {
    let stem = input.file_stem().map_or_else(|| "regions".into(), |s| s.to_string_lossy().into_owned());
    format!("{stem}.csv")
}

/// One row per region, in label order: scipy.ndimage's measurements of the input over it.
fn write_regions(path: &Path, image: &ArrayD<f32>, labels: &ArrayD<u32>, count: usize) -> Result<(), Error> {
    let index: Vec<i64> = (1..=count as i64).collect();
    let regions = Regions::Each(labels.view(), &index);
    let x = image.view();
    let sums = measurements::sum_labels(&x, &regions)?;
    let voxels = measurements::sum_labels(&labels.mapv(|_| 1u8).view(), &regions)?;
    let extrema = measurements::extrema(&x, &regions)?;
    let centres = measurements::center_of_mass(&labels.mapv(|l| u8::from(l > 0)).view(), &regions)?;
    let boxes = measurements::find_objects(&labels.view(), count)?;
    let d = image.ndim();
    lucent::host::write_atomic(path, |w| {
        let io = |e: std::io::Error| Error::File { path: path.display().to_string(), message: format!("write failed: {e}") };
        let axes = |what: &str| (0..d).map(|a| format!("{what}{a}")).collect::<Vec<_>>().join(",");
        writeln!(w, "label,voxels,{},{},{},sum,mean,min,max", axes("centre"), axes("start"), axes("stop")).map_err(io)?;
        for i in 0..count {
            let b = boxes[i].as_ref().expect("every label 1..=count has elements");
            let e = extrema[i].as_ref().expect("every label 1..=count has elements");
            let centre: Vec<String> = centres[i].iter().map(|c| format!("{c:.4}")).collect();
            let start: Vec<String> = b.iter().map(|r| r.start.to_string()).collect();
            let stop: Vec<String> = b.iter().map(|r| r.end.to_string()).collect();
            writeln!(
                w,
                "{},{},{},{},{},{},{},{},{}",
                i + 1,
                voxels[i],
                centre.join(","),
                start.join(","),
                stop.join(","),
                sums[i],
                sums[i] / voxels[i],
                e.min,
                e.max
            )
            .map_err(io)?;
        }
        Ok(())
    })
}
