//! The blind Richardson-Lucy suite of `lucent bench`: 10 iterations (one object and one PSF
//! update each) of a 256³ volume from a 15³ Gaussian start, host arrays in and out as a user
//! calls it, and the per-iteration time the run reports. No GPU peer offers blind RL (cuCIM and
//! pycudadecon do not); the row is lucent's own record. Host wall clock, median after warm-up.

use lucent::restoration::{blind_richardson_lucy, BlindOptions};
use lucent::{Error, Gpu};
use ndarray::{ArrayD, IxDyn};

use super::register::median_after_warm_up;
use super::{Args, Row};
use crate::Global;

pub fn suite(gpu: &Gpu, args: &Args, global: &Global) -> Result<Vec<Row>, Error> {
    let case = "blind_rl_3d";
    if args.filter.as_deref().is_some_and(|f| !case.contains(f)) {
        return Ok(Vec::new());
    }
    let dims = [256usize, 256, 256];
    let image = super::uniform(&dims, 0x9E37_79B9_7F4A_7C15).mapv(|v| v + 0.1);
    let psf = ArrayD::from_shape_fn(IxDyn(&[15, 15, 15]), |i| (-0.5 * (0..3).map(|d| ((i[d] as f64 - 7.0) / 2.5).powi(2)).sum::<f64>()).exp() as f32);
    let o = BlindOptions { iterations: 10, ..Default::default() };
    let mut per_iteration = 0.0;
    let ms = median_after_warm_up(5, || {
        let r = blind_richardson_lucy(gpu, &image.view(), &psf.view(), &o)?;
        per_iteration = r.report.ms_per_iteration;
        Ok(())
    })?;
    if !global.quiet && !global.json {
        eprintln!("{case:<36} {:>12} {ms:>10.3} ms ({per_iteration:.2} ms per iteration inside)", super::shape_name(&dims));
    }
    let n: usize = dims.iter().product();
    Ok(vec![Row { case: case.into(), shape: dims.to_vec(), mib: (n * 4) as u64 >> 20, ms, gb_per_s: 0.0, percent_of_copy: 0.0, timer: "wall" }])
}
