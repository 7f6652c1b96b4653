//! The registration panel of `lucent demo`: a synthetic AO-OCT series (one retina, a reference
//! and moving volumes under eye motion with micro-saccades) registered stripe-wise B-scan by
//! B-scan; en-face views of the average before and after registration, and the found shifts
//! plotted over the true motion.

use std::path::Path;
use std::time::Instant;

use lucent::phantom::aooct::{self, EyeMotion};
use lucent::registration::{self, BscanShift, StripeRegistration};
use lucent::{io, Error, Gpu};
use ndarray::{Array2, Array3, Axis};
use serde_json::{json, Value};

use crate::report::ms_since;

/// The series' volume shape (slow, depth, fast) and its moving volumes.
const SHAPE: [usize; 3] = [96, 64, 96];
const MOVING: usize = 3;

/// Registers the series, writes its images into `dir` and returns the report's section.
pub fn run(gpu: Option<&Gpu>, dir: &Path, seed: u64) -> Result<Value, Error> {
    let start = Instant::now();
    let series = aooct::series(SHAPE, MOVING, &EyeMotion::default(), seed);
    let simulate_ms = ms_since(start);
    let how = StripeRegistration::default();
    let t = Instant::now();
    let mut registered = vec![(series.reference.clone(), vec![true; SHAPE[0]])];
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
    let bscans = MOVING * SHAPE[0];

    let mut unregistered = series.reference.clone();
    for m in &series.moving {
        unregistered += m;
    }
    unregistered /= (MOVING + 1) as f32;
    let average = registration::average_registered(&registered)?;
    let panels = [en_face(&unregistered), en_face(&average), en_face(&series.reference)];
    let mut files = Vec::new();
    let mut write = |name: &str, x: &Array2<f32>| -> Result<(), Error> {
        io::write_real(dir.join(name), &x.view().into_dyn())?;
        files.push(name.to_string());
        Ok(())
    };
    write("registration.png", &crate::demo::montage(&panels))?;
    write("registration_trace.png", &trace(&found[0], &series.truth[0]))?;
    for (name, x) in [("aooct_reference.npy", &series.reference), ("aooct_moving.npy", &series.moving[0]), ("aooct_average.npy", &average)] {
        io::write_real(dir.join(name), &x.view().into_dyn())?;
        files.push(name.to_string());
    }
    Ok(json!({
        "shape": SHAPE,
        "moving_volumes": MOVING,
        "bscans_within_one_voxel": within,
        "bscans": bscans,
        "ms": { "simulate": simulate_ms, "register_and_apply": register_ms },
        "files": files,
        "panels": "registration.png: en-face means of the series averaged unregistered | registered | the reference; registration_trace.png: dz, dy, dx of the first moving volume per B-scan, truth as lines, found as dots",
    }))
}

/// The mean over depth: an en-face view (slow, fast).
fn en_face(x: &Array3<f32>) -> Array2<f32> {
    x.mean_axis(Axis(1)).expect("depth is not empty")
}

/// Three stacked plots (dz, dy, dx) over the B-scans: the truth as a line (grey), the found
/// shifts as dots (white).
fn trace(found: &[BscanShift], truth: &[[f64; 3]]) -> Array2<f32> {
    const H: usize = 80;
    const STEP: usize = 4;
    let w = truth.len() * STEP;
    let mut out = Array2::<f32>::zeros((3 * H + 8, w));
    for (panel, axis) in [1usize, 0, 2].into_iter().enumerate() {
        let values = truth.iter().map(|t| t[axis]).chain(found.iter().map(|b| b.shift[axis]));
        let (lo, hi) = values.fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
        let span = (hi - lo).max(1.0);
        let row = |v: f64| panel * (H + 4) + (H - 3) - ((v - lo) / span * (H - 6) as f64).round().clamp(0.0, (H - 6) as f64) as usize;
        for (j, t) in truth.iter().enumerate() {
            let (a, b) = (row(t[axis]), row(truth.get(j + 1).unwrap_or(t)[axis]));
            for x in j * STEP..(j + 1) * STEP {
                let y = a as f64 + (b as f64 - a as f64) * (x - j * STEP) as f64 / STEP as f64;
                out[[y.round() as usize, x]] = 0.5;
            }
        }
        for (j, b) in found.iter().enumerate() {
            let y = row(b.shift[axis]);
            out.slice_mut(ndarray::s![y - 1..=y, j * STEP + 1..j * STEP + 3]).fill(1.0);
        }
    }
    out
}
