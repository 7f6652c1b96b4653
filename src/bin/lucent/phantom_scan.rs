//! `lucent phantom --scan`: a synthetic DXchange scan (HDF5) for the beamline pipeline's tests
//! and benchmarks: 16-bit counts of a stack of Shepp-Logan slices (each row's slice the phantom
//! scaled by a smooth profile along the rows), flat and dark fields, detector columns with gain
//! errors the flats do not show (rings), theta in degrees over [0, 180).

use std::time::Instant;

use lucent::io::hdf5::{Part, ScanWriter};
use lucent::tomography::{self, Geometry};
use lucent::Error;
use ndarray::{Array3, Axis};
use rayon::prelude::*;
use serde_json::json;

use crate::phantom::Args;
use crate::report::{Report, Stages};
use crate::Global;

/// Open-beam counts, and the dark level.
const OPEN: f64 = 20000.0;
const DARK: f64 = 100.0;

pub fn run(global: &Global, args: &Args) -> Result<(), Error> {
    let start = Instant::now();
    let mut stages = Stages::default();
    let size = args.size.clone().unwrap_or(vec![256]);
    let [n] = size[..] else { return Err(Error::Invalid(format!("--size {size:?}: one side N (the detector's columns) with --scan"))) };
    let angles = args.angles.unwrap_or(n);
    let rows = args.rows.unwrap_or(n);
    if !(8..=1 << 15).contains(&n) || !(1..=1 << 16).contains(&angles) || !(1..=1 << 16).contains(&rows) {
        return Err(Error::Invalid(format!("--size {n} (8 to 32768), --angles {angles}, --rows {rows} (1 to 65536)")));
    }
    let gpu = stages.open(|| global.gpu())?.ok_or_else(|| Error::Invalid("lucent phantom --scan projects on a GPU (no adapter: see lucent info)".into()))?;
    // One sinogram of the phantom, scaled per row: line integrals of up to ~2.
    let g = Geometry::new(n, Geometry::equally_spaced(angles), None, None)?;
    let image = lucent::phantom::shepp_logan::image(n).mapv(|v| (v * 4.0 / n as f64) as f32);
    let sinogram = stages.compute(|| tomography::radon(&gpu, &image, &g))?;
    let profile = |r: usize| 0.6 + 0.4 * (std::f64::consts::PI * (r as f64 + 0.5) / rows as f64).sin();
    // Every 97th column, from 13: a gain error of ±4% (a ring).
    let gain = |c: usize| if c % 97 == 13 { 1.0 + 0.04 * if (c / 97).is_multiple_of(2) { 1.0 } else { -1.0 } } else { 1.0 };
    let theta: Vec<f64> = (0..angles).map(|a| a as f64 * 180.0 / angles as f64).collect();
    let (flats, darks) = (10, 5);
    let writer = ScanWriter::create(&args.output, [angles, rows, n], flats, darks, &theta)?;
    let band = (256 << 20) / (angles * n * 2).max(1);
    let band = band.clamp(1, rows);
    let t = Instant::now();
    for r0 in (0..rows).step_by(band) {
        let r1 = (r0 + band).min(rows);
        let mut data = Array3::<u16>::zeros((angles, r1 - r0, n));
        data.axis_iter_mut(Axis(0)).into_par_iter().enumerate().for_each(|(a, mut plane)| {
            for (i, mut row) in plane.outer_iter_mut().enumerate() {
                let scale = profile(r0 + i);
                for (c, v) in row.iter_mut().enumerate() {
                    let p = scale * sinogram[[a, c]] as f64;
                    // A little deterministic noise, so that no two counts repeat a pattern.
                    let noise = ((a * 7919 + c * 104729 + (r0 + i) * 1299709) % 17) as f64 - 8.0;
                    *v = (OPEN * gain(c) * (-p).exp() + DARK + noise).round().clamp(0.0, 65535.0) as u16;
                }
            }
        });
        writer.write(Part::Data, [0, r0], &data.view())?;
    }
    let flat = Array3::from_shape_fn((flats, rows, n), |(i, r, c)| (OPEN + DARK + ((i + r + c) % 5) as f64 - 2.0) as u16);
    let dark = Array3::from_shape_fn((darks, rows, n), |(i, r, c)| (DARK + ((i * 3 + r + c) % 3) as f64 - 1.0) as u16);
    writer.write(Part::Flat, [0, 0], &flat.view())?;
    writer.write(Part::Dark, [0, 0], &dark.view())?;
    writer.finish()?;
    stages.write = Some(crate::report::ms_since(t));
    if global.json {
        Report {
            output: crate::report::path(&args.output),
            shape_out: Some(vec![angles, rows, n]),
            options: json!({ "scan": true, "size": n, "angles": angles, "rows": rows, "flats": flats, "darks": darks }),
            ms: stages.total(start),
            ..Report::new("phantom", crate::report::device(Some(&gpu)))
        }
        .print();
    }
    Ok(())
}
