//! The registration panel of `lucent demo`: a synthetic AO-OCT series (one retina, a reference
//! and moving volumes under eye motion with micro-saccades) registered stripe-wise B-scan by
//! B-scan; en-face views of the average before and after registration, and the found shifts
//! plotted over the true motion (the first moving volume's).

use std::path::Path;
use std::time::Instant;

use lucent::phantom::aooct::{self, EyeMotion};
use lucent::registration::{self, BscanShift, Status, StripeRegistration};
use lucent::{Error, Gpu};
use ndarray::{Array2, Array3, Axis};
use serde_json::{json, Value};

use crate::demo::Size;
use crate::demo_figure::{self, Figure, Mark, Panel, Plot, Series, COLOURS};
use crate::demo_report::Section;
use crate::report::ms_since;

/// The series' volume shape (slow, depth, fast) and its moving volumes.
fn shape(size: Size) -> ([usize; 3], usize) {
    match size {
        Size::Full => ([96, 64, 96], 3),
        Size::Small => ([48, 32, 48], 1),
    }
}

/// Registers the series, writes its images into `dir` and returns the report's section (JSON)
/// and the page's.
pub fn run(gpu: Option<&Gpu>, dir: &Path, seed: u64, size: Size) -> Result<(Value, Section), Error> {
    let start = Instant::now();
    let (shape, moving_volumes) = shape(size);
    let series = aooct::series(shape, moving_volumes, &EyeMotion::default(), seed);
    let simulate_ms = ms_since(start);
    let how = StripeRegistration::default();
    let t = Instant::now();
    let mut registered = vec![(series.reference.clone(), vec![true; shape[0]])];
    let mut found: Vec<Vec<BscanShift>> = Vec::new();
    for moving in &series.moving {
        let (r, m) = (series.reference.view(), moving.view());
        let shifts = match gpu {
            Some(g) => registration::register_volume(g, &r, &m, &how)?.bscans,
            None => registration::cpu::register_volume(&r, &m, &how, &mut |_| {})?.bscans,
        };
        registered.push(match gpu {
            Some(g) => registration::apply_shifts(g, &m, &shifts, 1)?,
            None => registration::cpu::apply_shifts(&m, &shifts, 1)?,
        });
        found.push(shifts);
    }
    let register_ms = ms_since(t);
    let within: usize =
        found.iter().zip(&series.truth).map(|(f, t)| f.iter().zip(t).filter(|(b, t)| (0..3).all(|a| (b.shift[a] - t[a]).abs() <= 1.0)).count()).sum();
    let bscans = moving_volumes * shape[0];

    let mut unregistered = series.reference.clone();
    for m in &series.moving {
        unregistered += m;
    }
    unregistered /= (moving_volumes + 1) as f32;
    let average = registration::average_registered(&registered)?;
    let axes = ("B-scan (slow axis, pixels)", "fast axis (pixels)");
    let bar = "reflectance (mean over depth)";
    let panels = [("Average, unregistered", &unregistered), ("Average, registered", &average), ("Reference volume", &series.reference)]
        .map(|(title, x)| Panel::new(title, en_face(x), (1.0, 1.0), axes, bar));
    let volumes = moving_volumes + 1;
    let figures = vec![
        demo_figure::images(
            "registration.png",
            "En-face views of the series",
            &format!("The mean over depth of the {volumes} volumes averaged as recorded (eye motion blurs and doubles the cones and vessels), averaged after registration, and the reference alone (noisier: one volume). Own grey scales; enlarged by nearest neighbour."),
            &panels,
            3,
        )?,
        trace(&found[0], &series.truth[0])?,
    ];
    let arrays = [
        ("aooct_reference.npy", series.reference.view().into_dyn()),
        ("aooct_moving.npy", series.moving[0].view().into_dyn()),
        ("aooct_average.npy", average.view().into_dyn()),
    ];
    let files = demo_figure::write_all(dir, &figures, &arrays)?;
    let section = Section {
        title: "Registration: AO-OCT volumes under eye motion".into(),
        text: format!(
            "A synthetic AO-OCT retina (layers, cones, vessels, speckle), a reference volume and {moving_volumes} moving one(s) of {shape:?} voxels (slow, depth, fast) recorded under drift, tremor, axial motion and a micro-saccade. \
             Each B-scan's shift found by stripe-wise phase correlation (spikes and weak peaks replaced by interpolation), the volumes resampled and averaged."
        ),
        numbers: vec![
            ("B-scans within one voxel of the true motion (all three axes)".into(), format!("{within} of {bscans}")),
            ("simulation".into(), format!("{simulate_ms:.0} ms")),
            ("registration and resampling".into(), format!("{register_ms:.0} ms")),
        ],
        figures,
    };
    let json = json!({
        "shape": shape,
        "moving_volumes": moving_volumes,
        "bscans_within_one_voxel": within,
        "bscans": bscans,
        "ms": { "simulate": simulate_ms, "register_and_apply": register_ms },
        "files": files,
        "panels": "registration.png: en-face means of the series averaged unregistered | registered | the reference; registration_trace.png: dz, dy, dx of the first moving volume per B-scan, truth as lines, found as dots",
    });
    Ok((json, section))
}

/// The mean over depth: an en-face view (slow, fast).
fn en_face(x: &Array3<f32>) -> Array2<f32> {
    x.mean_axis(Axis(1)).expect("depth is not empty")
}

/// Three stacked plots (dz, dy, dx) over the B-scans: the true motion as a line, the found
/// shifts as dots, those measured apart from those replaced by interpolation.
fn trace(found: &[BscanShift], truth: &[[f64; 3]]) -> Result<Figure, Error> {
    let plots: Vec<Plot> = [(1, "dz, along depth"), (0, "dy, along the slow axis"), (2, "dx, along the fast axis")]
        .into_iter()
        .map(|(axis, name)| {
            let dots = |keep: fn(Status) -> bool| found.iter().filter(|b| keep(b.status)).map(|b| (b.bscan as f64, b.shift[axis])).collect::<Vec<_>>();
            Plot {
                title: format!("Shift {name}"),
                x: "B-scan".into(),
                y: "shift (voxels)".into(),
                series: vec![
                    Series {
                        name: "true motion".into(),
                        points: truth.iter().enumerate().map(|(j, t)| (j as f64, t[axis])).collect(),
                        mark: Mark::Line,
                        colour: COLOURS[0],
                    },
                    Series { name: "found (measured)".into(), points: dots(|s| s == Status::Ok), mark: Mark::Dots, colour: COLOURS[1] },
                    Series { name: "found (interpolated)".into(), points: dots(|s| s != Status::Ok), mark: Mark::Dots, colour: COLOURS[3] },
                ],
                log_y: false,
            }
        })
        .collect();
    demo_figure::plots(
        "registration_trace.png",
        "Registration trace",
        "Each B-scan's registering shift of the first moving volume against the eye motion that made it: the micro-saccade is the jump; dots off the line are errors.",
        &plots,
        (1100, 330),
    )
}
