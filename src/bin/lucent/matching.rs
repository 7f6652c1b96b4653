//! `lucent match`: scikit-image's match_template of a template against an image (array files),
//! the response map written to a file and its highest peaks printed; on the GPU, or with
//! `--device cpu` or no adapter on the f64 reference.

use std::path::PathBuf;
use std::time::Instant;

use clap::builder::PossibleValuesParser;
use lucent::registration::{self, PadMode, TemplateMatch};
use lucent::{io, Error};
use serde_json::json;

use crate::report::{self, Report, Stages};
use crate::Global;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  lucent match image.tif template.tif -o response.npy
  lucent match volume.npy cell.npy -o response.npy --pad-input --mode symmetric --peaks 10 --min-distance 8 --json")]
pub struct Args {
    /// The image: .npy (any real dtype), .tif/.tiff or .png; 1 to 4 axes.
    image: PathBuf,
    /// The template: as many axes, no larger than the image along any.
    template: PathBuf,
    /// Where the response map goes (.npy or .tif), float32 in [-1, 1].
    #[arg(short, long)]
    output: PathBuf,
    /// Pad the image so the map has its shape and each element is the window centred on it
    /// (scikit-image's pad_input); otherwise the map is image - template + 1, each element the
    /// window at its top-left corner.
    #[arg(long)]
    pad_input: bool,
    /// numpy.pad's mode for --pad-input.
    #[arg(long, default_value = "constant", value_parser = PossibleValuesParser::new(PadMode::NAMES))]
    mode: String,
    /// The value outside the image with --mode constant (scikit-image's constant_values).
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    cval: f32,
    /// Print the K highest responses (at least --min-distance apart).
    #[arg(long, default_value_t = 1)]
    peaks: usize,
    /// The least distance between two peaks, along some axis.
    #[arg(long, default_value_t = 1)]
    min_distance: usize,
}

pub fn run(global: &Global, args: &Args) -> Result<(), Error> {
    let how = TemplateMatch { pad_input: args.pad_input, mode: PadMode::parse(&args.mode, args.cval)? };
    let start = Instant::now();
    let mut stages = Stages::default();
    let image = stages.read(|| io::read_real(&args.image))?;
    let t = stages.read(|| io::read_real(&args.template))?;
    registration::check_template_shapes(image.shape(), t.shape())?;
    lucent::host::check_host_array("the response map", &registration::template_output_dims(image.shape(), t.shape(), args.pad_input), 8)?;
    let gpu = stages.open(|| global.gpu())?;
    let response = stages.compute(|| match &gpu {
        Some(g) => registration::match_template(g, &image.view(), &t.view(), &how),
        None => {
            lucent::check::check_finite(&image.view(), "the image")?;
            lucent::check::check_finite(&t.view(), "the template")?;
            Ok(registration::cpu::match_template(&image.mapv(|v| v as f64), &t.mapv(|v| v as f64), &how)?.mapv(|v| v.clamp(-1.0, 1.0) as f32))
        }
    })?;
    crate::batch::check_result(&response.view())?;
    stages.write(|| io::write_real(&args.output, &response.view()))?;
    let peaks = registration::peaks(&response.view(), args.peaks, args.min_distance);
    if global.json {
        let options = json!({
            "template": report::path(&args.template),
            "pad_input": args.pad_input,
            "mode": args.mode,
            "cval": args.cval,
            "peaks": args.peaks,
            "min_distance": args.min_distance,
        });
        let peaks: Vec<_> = peaks.iter().map(|(at, v)| json!({ "index": at, "response": v })).collect();
        Report {
            input: report::path(&args.image),
            output: report::path(&args.output),
            shape_in: Some(image.shape().to_vec()),
            shape_out: Some(response.shape().to_vec()),
            options,
            ms: stages.total(start),
            details: json!({ "shape_template": t.shape(), "peaks": peaks }),
            ..Report::new("match", report::device(&gpu))
        }
        .print();
    } else if !global.quiet {
        for (at, v) in &peaks {
            println!("{at:?} {v:.6}");
        }
        let device = Global::device_name(gpu.as_ref());
        let ms = stages.compute.unwrap_or(0.0);
        eprintln!("lucent: matched {:?} in {:?} on {device} in {ms:.1} ms; wrote {}", t.shape(), image.shape(), args.output.display());
    }
    Ok(())
}
