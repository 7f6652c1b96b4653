//! scipy.ndimage's interpolation on the GPU: a volume shifted, zoomed and rotated with cubic
//! B-splines by the one-call forms, then a pipeline that prefilters once and samples the same
//! coefficients twice (the `record_*` forms with `prefilter: false`), in one submission.
//!
//! ```sh
//! cargo run --release --example resample
//! ```

use lucent::ndimage::{self, record_affine_transform, record_spline_filter, AffineMap, Sampling, SplineMode};
use ndarray::Array3;

fn main() -> Result<(), lucent::Error> {
    let gpu = lucent::Gpu::new()?;
    let volume = Array3::from_shape_fn((40, 96, 128), |(z, y, x)| ((x as f32 / 9.0).sin() + (y as f32 / 7.0).cos()) * (1.0 + z as f32 / 40.0));
    let cubic = Sampling { order: 3, mode: SplineMode::Mirror, ..Default::default() };
    let shifted = ndimage::shift(&gpu, &volume, &[0.0, 2.5, -1.25], &cubic)?;
    let zoomed = ndimage::zoom(&gpu, &volume, &[1.0, 0.5, 0.5], false, &cubic)?;
    let rotated = ndimage::rotate(&gpu, &volume, 30.0, [1, 2], true, &cubic)?;
    println!("shift (0, 2.5, -1.25): {:?} -> {:?}", volume.shape(), shifted.shape());
    println!("zoom (1, 0.5, 0.5):    {:?} -> {:?}", volume.shape(), zoomed.shape());
    println!("rotate 30° reshaped:   {:?} -> {:?}", volume.shape(), rotated.shape());

    // Two warps of one volume: the prefilter runs once.
    let mut rec = lucent::Recording::new(&gpu);
    let x = rec.upload_f32(&volume.view().into_dyn())?;
    let coefficients = record_spline_filter(&mut rec, x, 3, SplineMode::Mirror)?;
    let sample = Sampling { prefilter: false, ..cubic };
    let dims = volume.shape();
    let left = record_affine_transform(&mut rec, coefficients, &AffineMap::shift(&[0.0, 0.0, 0.5]), dims, &sample)?;
    let right = record_affine_transform(&mut rec, coefficients, &AffineMap::shift(&[0.0, 0.0, -0.5]), dims, &sample)?;
    let (left, right) = (rec.download(left), rec.download(right));
    let results = rec.run()?;
    let (left, right) = (results.f32(left)?, results.f32(right)?);
    let gap = left.iter().zip(&right).fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
    println!("one prefilter, two half-sample shifts: largest difference {gap:.4}");
    Ok(())
}
