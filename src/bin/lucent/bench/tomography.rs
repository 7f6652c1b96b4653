//! The tomography suite of `lucent bench`, against ASTRA: ASTRA's cases (`astra_reference.py`), an
//! N×N random image with 3N/2 angles over [0, π) and N detectors, host arrays in and out as a
//! user calls the one-calls: forward projection, back-projection, FBP (ramp) at N = 256 to 2048,
//! and 100 EM iterations at N ≤ 512; with `--filter tomo_stack`, a stack of 512 slices of 1024²
//! by FBP. Host wall clock, median after warm-up.

use lucent::tomography::{backproject, fbp, mlem, radon, Filter, Geometry, Method};
use lucent::{Error, Gpu};
use ndarray::Ix2;

use super::register::median_after_warm_up;
use super::{Args, Row};
use crate::Global;

/// A case: its name, repetitions, and the call timed.
type Case<'a> = (&'static str, usize, Box<dyn FnMut() -> Result<(), Error> + 'a>);

pub fn suite(gpu: &Gpu, args: &Args, global: &Global) -> Result<Vec<Row>, Error> {
    let wanted = |case: &str| args.filter.as_deref().is_none_or(|f| case.contains(f) || "tomography".starts_with(f));
    let mut rows = Vec::new();
    for n in [256usize, 512, 1024, 2048] {
        let bytes = (n * n) as u64 * 4;
        if bytes > args.max_mib << 20 || bytes < args.min_mib << 20 {
            continue;
        }
        let geometry = Geometry::new(n, Geometry::equally_spaced(3 * n / 2), None, None)?;
        let (lp, direct) = (&geometry.clone().with_method(Method::LogPolar), &geometry.with_method(Method::Direct));
        let image = super::uniform(&[n, n], 0x2545_F491_4F6C_DD1D).into_dimensionality::<Ix2>().map_err(|e| Error::Shape(e.to_string()))?;
        let sinogram = radon(gpu, &image, direct)?;
        let mut cases: Vec<Case> = vec![
            ("tomo_fp_logpolar", 5, Box::new(|| radon(gpu, &image, lp).map(drop))),
            ("tomo_bp_logpolar", 5, Box::new(|| backproject(gpu, &sinogram, lp).map(drop))),
            ("tomo_fbp_logpolar", 5, Box::new(|| fbp(gpu, &sinogram, lp, Filter::Ramp).map(drop))),
            ("tomo_fp_direct", 5, Box::new(|| radon(gpu, &image, direct).map(drop))),
            ("tomo_bp_direct", 5, Box::new(|| backproject(gpu, &sinogram, direct).map(drop))),
            ("tomo_fbp_direct", 5, Box::new(|| fbp(gpu, &sinogram, direct, Filter::Ramp).map(drop))),
        ];
        if n <= 512 {
            let counts = sinogram.mapv(|v| v.max(0.0));
            let counts2 = counts.clone();
            cases.push(("tomo_em100_logpolar", 3, Box::new(move || mlem(gpu, &counts, lp, 100).map(drop))));
            cases.push(("tomo_em100_direct", 3, Box::new(move || mlem(gpu, &counts2, direct, 100).map(drop))));
        }
        for (case, reps, mut run) in cases {
            if !wanted(case) {
                continue;
            }
            let ms = median_after_warm_up(reps, &mut run)?;
            if !global.quiet && !global.json {
                eprintln!("{case:<36} {:>12} {ms:>10.3} ms  {} angles", format!("{n}x{n}"), 3 * n / 2);
            }
            rows.push(Row { case: case.into(), shape: vec![n, n], mib: bytes >> 20, ms, gb_per_s: 0.0, percent_of_copy: 0.0, timer: "wall" });
        }
    }
    // A stack of 512 slices of 1024² by FBP (the case; ASTRA slice by slice ≈ 13.6 s):
    // only when asked for (--filter tomo_stack), as it takes many seconds.
    if args.filter.as_deref().is_some_and(|f| f.contains("stack")) {
        let (slices, n) = (512usize, 1024usize);
        let geometry = Geometry::new(n, Geometry::equally_spaced(3 * n / 2), None, None)?;
        let g = &geometry;
        let image = super::uniform(&[n, n], 0x2545_F491_4F6C_DD1D).into_dimensionality::<Ix2>().map_err(|e| Error::Shape(e.to_string()))?;
        let one = radon(gpu, &image, g)?;
        let stack = ndarray::Array3::from_shape_fn((slices, 3 * n / 2, n), |(_, a, k)| one[[a, k]]);
        let ms = median_after_warm_up(1, || fbp(gpu, &stack, g, Filter::Ramp).map(drop))?;
        if !global.quiet && !global.json {
            eprintln!("{:<36} {:>12} {ms:>10.3} ms  {} angles", "tomo_stack_fbp", format!("{slices}x{n}x{n}"), 3 * n / 2);
        }
        rows.push(Row {
            case: "tomo_stack_fbp".into(),
            shape: vec![slices, n, n],
            mib: (slices * n * n * 4) as u64 >> 20,
            ms,
            gb_per_s: 0.0,
            percent_of_copy: 0.0,
            timer: "wall",
        });
    }
    Ok(rows)
}
