//! The Richardson-Lucy suite of `lucent bench`: one iteration (two real FFT round trips, two
//! spectrum products, the ratio and the in-place update, on resident arrays) at the shapes of the
//! RL issue, circular (`rl_periodic`, the image's own shape, as .device/rl_reference.py's cuFFT
//! periodic case) and zero-padded (`rl_zero`, a PSF of 31 per axis, padded as lucent pads),
//! and at the 3D size 16×512×512 Bertero-Boccacci's extended domain (`rl_extended`, the
//! same PSF, padded to at least n + 30 per axis, the update also reading the inverse weights).
//! Bandwidth counts an ideal iteration's traffic on the padded shape of L reals: per transformed
//! axis, each of the four real transforms reads and writes the half spectrum (4·L bytes each
//! way, as the FFT suite counts), and the products, the ratio and the update read two arrays and
//! write one (3·4·L bytes each): 4·L·(8·axes + 12) bytes, plus 4·L for the extended case's
//! weights.

use lucent::restoration::{RichardsonLucy, RlBoundary, RlOptions};
use lucent::{Error, Gpu};
use ndarray::{ArrayD, IxDyn};

use super::{time_repeated, Args, Row};
use crate::Global;

fn shapes() -> Vec<Vec<usize>> {
    vec![vec![512, 512], vec![16, 512, 512], vec![64, 512, 512], vec![256, 256, 256]]
}

/// The zero-padded case's PSF edge (capped by the image).
const PSF_EDGE: usize = 31;

pub fn suite(gpu: &Gpu, args: &Args, roof_gbs: f64, global: &Global) -> Result<Vec<Row>, Error> {
    let wanted = |case: &str| args.filter.as_deref().is_none_or(|f| case.contains(f) || f == "rl");
    let mut rows = Vec::new();
    for dims in shapes() {
        let n: usize = dims.iter().product();
        let bytes = n as u64 * 4;
        if bytes > args.max_mib << 20 {
            continue;
        }
        let image = positive_image(&dims);
        for (case, boundary) in [("rl_periodic", RlBoundary::Periodic), ("rl_zero", RlBoundary::Zero), ("rl_extended", RlBoundary::Extended)] {
            // The extended domain at the paper's 3D size only (it costs about what rl_zero does).
            if !wanted(case) || (boundary == RlBoundary::Extended && dims != [16, 512, 512]) {
                continue;
            }
            let psf_dims: Vec<usize> = dims.iter().map(|&d| d.min(PSF_EDGE)).collect();
            let opts = RlOptions { boundary, ..Default::default() };
            let rl = match RichardsonLucy::new(gpu, &image.view(), &gaussian(&psf_dims).view(), 1, &opts) {
                Ok(rl) => rl,
                // Beyond this device's buffer limit: skip the shape, as the other suites do.
                Err(Error::TooLarge { .. }) => continue,
                Err(e) => return Err(e),
            };
            let reps = ((1u64 << 31) / bytes).clamp(2, 50);
            let (ms, timer) = time_repeated(gpu, reps, |rec| rl.record_iteration(rec))?;
            let padded: usize = rl.geometry().padded.iter().product();
            let weights = if boundary == RlBoundary::Extended { 1 } else { 0 };
            let moved = 4.0 * padded as f64 * (8 * dims.len() + 12 + weights) as f64;
            let gbs = moved / (ms * 1e6);
            let peak_mib = rl.report().peak_bytes as f64 / (1 << 20) as f64;
            if !global.quiet && !global.json {
                eprintln!(
                    "{case:<12} {:>16} (padded {:?}) {ms:>10.4} ms {gbs:>8.1} GB/s {:>6.1}% of copy, peak {peak_mib:.0} MiB, {} dispatches",
                    dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("x"),
                    rl.geometry().padded,
                    100.0 * gbs / roof_gbs,
                    rl.report().dispatches_per_iteration
                );
            }
            rows.push(Row { case: case.to_string(), shape: dims.clone(), mib: bytes >> 20, ms, gb_per_s: gbs, percent_of_copy: 100.0 * gbs / roof_gbs, timer });
        }
    }
    Ok(rows)
}

/// Deterministic values in [0.5, 1.5): positive, as RL needs, and not constant.
fn positive_image(dims: &[usize]) -> ArrayD<f32> {
    super::uniform(dims, 0x9E37_79B9_7F4A_7C15).mapv(|v| v + 0.5)
}

/// A Gaussian of width 2 centred on element (m - 1) / 2 of each axis.
fn gaussian(dims: &[usize]) -> ArrayD<f32> {
    ArrayD::from_shape_fn(IxDyn(dims), |i| {
        let r2: f64 = (0..dims.len()).map(|d| (i[d] as f64 - ((dims[d] - 1) / 2) as f64).powi(2)).sum();
        (-r2 / 8.0).exp() as f32
    })
}
