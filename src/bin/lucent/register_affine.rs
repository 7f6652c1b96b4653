//! `lucent register --transform ...`: intensity-based registration of each moving image onto the
//! reference (lucent::registration::register_affine: SimpleITK's transforms, metrics, masks and
//! pyramid), the transform reported (scipy.ndimage.affine_transform's matrix and offset) and
//! optionally written as an ITK transform file, the registered image written. On the GPU only.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::builder::PossibleValuesParser;
use lucent::registration::{itk_transform, parse_itk_transform, register_affine_masked, similarity_start, AffineOptions, Metric, Optimizer, TransformKind};
use lucent::{io, Error};
use serde_json::json;

use crate::report::{self, Report, Stages};
use crate::Global;

#[derive(clap::Args)]
pub struct Args {
    /// Intensity-based registration instead of phase correlation: translation, rigid,
    /// similarity or affine (turns and scales about the reference's centre), 2D or 3D images.
    #[arg(long, value_parser = PossibleValuesParser::new(["translation", "rigid", "similarity", "affine"]))]
    pub transform: Option<String>,
    /// With --transform: mean squares (ms), normalised correlation (ncc) or Mattes mutual
    /// information (mi: images of different modalities or contrasts).
    #[arg(long, value_parser = PossibleValuesParser::new(["ms", "ncc", "mi"]))]
    metric: Option<String>,
    /// With --metric mi: the joint histogram's bins (SimpleITK's numberOfHistogramBins).
    #[arg(long)]
    bins: Option<usize>,
    /// With --transform: auto (Levenberg-Marquardt for ms, L-BFGS otherwise), lm, lbfgs or
    /// regular-step (SimpleITK's regular-step gradient descent).
    #[arg(long, value_parser = PossibleValuesParser::new(["auto", "lm", "lbfgs", "regular-step"]))]
    optimizer: Option<String>,
    /// With --optimizer regular-step: the first step, in pixels of motion, the smallest, and
    /// the factor a step shrinks by when the gradient turns back.
    #[arg(long, num_args = 3, value_names = ["LEARNING_RATE", "MIN_STEP", "RELAXATION"])]
    steps: Option<Vec<f64>>,
    /// With --transform: the pyramid's shrink factors, coarsest first [default: 4,2,1].
    #[arg(long, value_delimiter = ',')]
    shrink_factors: Option<Vec<usize>>,
    /// With --transform: each level's Gaussian sigma in pixels of the full image [default: 2,1,0].
    #[arg(long, value_delimiter = ',')]
    smoothing_sigmas: Option<Vec<f64>>,
    /// With --transform: most steps per level [default: 100].
    #[arg(long)]
    iterations: Option<usize>,
    /// With --transform: a level ends when a step moves no point by this many pixels [default: 1e-4].
    #[arg(long)]
    tolerance: Option<f64>,
    /// With --transform: the starting transform, an ITK transform file (AffineTransform), or
    /// `similarity`: the Fourier-Mellin estimate (2D; any turn, scales 0.5-2) for motion beyond
    /// the pyramid's reach.
    #[arg(long)]
    initial: Option<PathBuf>,
    /// With --transform: the registered moving image (cubic spline, zeros beyond it), one moving
    /// image.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// With --transform: the transform as an ITK transform file (.tfm, .txt), which SimpleITK's
    /// ReadTransform reads; one moving image.
    #[arg(long)]
    itk: Option<PathBuf>,
}

/// Phase correlation takes none of the intensity registration's options.
pub fn refuse_options(a: &Args) -> Result<(), Error> {
    let given = [
        ("--metric", a.metric.is_some()),
        ("--bins", a.bins.is_some()),
        ("--optimizer", a.optimizer.is_some()),
        ("--steps", a.steps.is_some()),
        ("--shrink-factors", a.shrink_factors.is_some()),
        ("--smoothing-sigmas", a.smoothing_sigmas.is_some()),
        ("--iterations", a.iterations.is_some()),
        ("--tolerance", a.tolerance.is_some()),
        ("--initial", a.initial.is_some()),
        ("--output", a.output.is_some()),
        ("--itk", a.itk.is_some()),
    ];
    match given.iter().find(|(_, g)| *g) {
        Some((name, _)) => Err(Error::Invalid(format!("{name} is an option of intensity-based registration: add --transform"))),
        None => Ok(()),
    }
}

fn options(a: &Args) -> Result<AffineOptions, Error> {
    let d = AffineOptions::default();
    let kind = match a.transform.as_deref() {
        Some("translation") => TransformKind::Translation,
        Some("rigid") => TransformKind::Rigid,
        Some("similarity") => TransformKind::Similarity,
        _ => TransformKind::Affine,
    };
    let metric = match a.metric.as_deref() {
        Some("ncc") => Metric::Correlation,
        Some("mi") => Metric::MattesMutualInformation { bins: a.bins.unwrap_or(50) },
        _ => Metric::MeanSquares,
    };
    if a.bins.is_some() && !matches!(metric, Metric::MattesMutualInformation { .. }) {
        return Err(Error::Invalid("--bins is the mutual information's: add --metric mi".into()));
    }
    let optimizer = match (a.optimizer.as_deref(), &a.steps) {
        (Some("regular-step"), Some(s)) => Optimizer::RegularStep { learning_rate: s[0], min_step: s[1], relaxation: s[2] },
        (Some("regular-step"), None) => Optimizer::RegularStep { learning_rate: 1.0, min_step: 1e-3, relaxation: 0.5 },
        (_, Some(_)) => return Err(Error::Invalid("--steps sets regular steps: add --optimizer regular-step".into())),
        (Some("lm"), _) => Optimizer::LevenbergMarquardt,
        (Some("lbfgs"), _) => Optimizer::Lbfgs,
        _ => Optimizer::Auto,
    };
    let initial = match &a.initial {
        Some(path) if path.as_os_str() == "similarity" => None,
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| Error::File { path: path.display().to_string(), message: format!("cannot read the initial transform: {e}") })?;
            Some(parse_itk_transform(&text).map_err(|e| Error::File { path: path.display().to_string(), message: e.to_string() })?)
        }
        None => None,
    };
    Ok(AffineOptions {
        kind,
        metric,
        optimizer,
        shrink_factors: a.shrink_factors.clone().unwrap_or(d.shrink_factors),
        smoothing_sigmas: a.smoothing_sigmas.clone().unwrap_or(d.smoothing_sigmas),
        iterations: a.iterations.unwrap_or(d.iterations),
        tolerance: a.tolerance.unwrap_or(d.tolerance),
        initial,
    })
}

pub fn run(global: &Global, outer: &crate::register::Args, a: &Args) -> Result<(), Error> {
    let o = options(a)?;
    if outer.moving.len() > 1 && (a.output.is_some() || a.itk.is_some()) {
        return Err(Error::Invalid("--output and --itk write one moving image's results: register one at a time".into()));
    }
    let start = Instant::now();
    let mut first = Stages::default();
    let mask = |path: &Path| io::read_real(path).map(|m| m.mapv(|v| v != 0.0));
    let reference = first.read(|| io::read_real(&outer.reference))?;
    if let Some(out) = &a.output {
        io::check_output(out, reference.ndim(), false)?;
    }
    if let Some(itk) = &a.itk {
        io::check_directory(itk)?;
    }
    let reference_mask = first.read(|| outer.reference_mask.as_deref().map(mask).transpose())?;
    let moving_mask = first.read(|| outer.moving_mask.as_deref().map(mask).transpose())?;
    let gpu = first.open(|| global.gpu())?.ok_or_else(|| Error::Invalid("intensity-based registration (--transform) runs on the GPU only".into()))?;
    for (k, path) in outer.moving.iter().enumerate() {
        let (mut stages, t) = if k == 0 { (std::mem::take(&mut first), start) } else { (Stages::default(), Instant::now()) };
        let moving = stages.read(|| io::read_real(path))?;
        let found = stages.compute(|| {
            let mut o = o.clone();
            if a.initial.as_ref().is_some_and(|p| p.as_os_str() == "similarity") {
                if reference.ndim() != 2 {
                    return Err(Error::Invalid("--initial similarity starts 2D registrations (the Fourier-Mellin method is 2D)".into()));
                }
                o.initial = Some(similarity_start(&gpu, &reference.view(), &moving.view(), &Default::default())?);
            }
            register_affine_masked(
                &gpu,
                &reference.view(),
                &moving.view(),
                reference_mask.as_ref().map(|m| m.view()).as_ref(),
                moving_mask.as_ref().map(|m| m.view()).as_ref(),
                &o,
            )
        })?;
        if let Some(out) = &a.output {
            let registered = stages.compute(|| {
                let matrix = ndarray::Array2::from_shape_fn((reference.ndim(), reference.ndim()), |(i, j)| found.map.matrix[i][j]).into_dyn();
                let how = lucent::ndimage::Sampling::default();
                lucent::ndimage::affine_transform(&gpu, &moving, &matrix.view(), &found.map.offset, Some(reference.shape()), &how)
            })?;
            stages.write(|| io::write_real_like(out, &registered.view(), path))?;
        }
        if let Some(itk) = &a.itk {
            let text = itk_transform(&found.map);
            stages.write(|| lucent::host::write_atomic(itk, |w| Ok(w.write_all(text.as_bytes())?)))?;
        }
        if global.json {
            let options = json!({
                "reference": report::path(&outer.reference),
                "transform": a.transform,
                "metric": a.metric.as_deref().unwrap_or("ms"),
                "optimizer": a.optimizer.as_deref().unwrap_or("auto"),
                "shrink_factors": o.shrink_factors,
                "smoothing_sigmas": o.smoothing_sigmas,
                "iterations": o.iterations,
                "tolerance": o.tolerance,
                "reference_mask": outer.reference_mask.as_ref().map(report::path),
                "moving_mask": outer.moving_mask.as_ref().map(report::path),
                "initial": a.initial.as_ref().map(report::path),
                "itk": a.itk.as_ref().map(report::path),
            });
            let details = json!({ "matrix": found.map.matrix, "offset": found.map.offset, "metric": found.metric, "iterations": found.iterations });
            Report {
                input: report::path(path),
                output: a.output.as_ref().map_or(serde_json::Value::Null, report::path),
                shape_in: Some(moving.shape().to_vec()),
                shape_out: a.output.as_ref().map(|_| reference.shape().to_vec()),
                options,
                ms: stages.total(t),
                details,
                ..Report::new("register", report::device([&gpu]))
            }
            .print();
        } else {
            println!(
                "{}: matrix {:?} offset {:?} metric {:.6e} after {} steps",
                path.display(),
                found.map.matrix,
                found.map.offset,
                found.metric,
                found.iterations
            );
        }
    }
    Ok(())
}
