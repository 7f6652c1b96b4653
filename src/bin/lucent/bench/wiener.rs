//! The Wiener suite of `lucent bench`, against cuCIM (.device/wiener_reference.py): scikit-image's
//! `wiener` (Laplacian regulariser, balance 0.05) of a 2048² image by a 15² Gaussian PSF and of a
//! 256³ volume by a 15³ one, host arrays in and out as a user calls it. Host wall clock, median
//! after warm-up.

use lucent::restoration::wiener;
use lucent::{Error, Gpu};
use ndarray::{ArrayD, IxDyn};

use super::register::median_after_warm_up;
use super::{Args, Row};
use crate::Global;

pub fn suite(gpu: &Gpu, args: &Args, global: &Global) -> Result<Vec<Row>, Error> {
    let mut rows = Vec::new();
    for (dims, edge) in [(vec![2048usize, 2048], 15usize), (vec![256, 256, 256], 15)] {
        let case = format!("wiener_{}d", dims.len());
        if args.filter.as_deref().is_some_and(|f| !case.contains(f)) {
            continue;
        }
        let image = super::uniform(&dims, 0x9E37_79B9_7F4A_7C15);
        let psf_dims = vec![edge; dims.len()];
        let psf = ArrayD::from_shape_fn(IxDyn(&psf_dims), |i| {
            (-0.5 * (0..psf_dims.len()).map(|d| ((i[d] as f64 - (edge / 2) as f64) / 2.0).powi(2)).sum::<f64>()).exp() as f32
        });
        let total: f32 = psf.sum();
        let psf = psf.mapv(|v| v / total);
        let ms = median_after_warm_up(7, || wiener(gpu, &image.view(), &psf.view(), 0.05, true).map(drop))?;
        let n: usize = dims.iter().product();
        if !global.quiet && !global.json {
            eprintln!("{case:<36} {:>12} {ms:>10.3} ms", super::shape_name(&dims));
        }
        rows.push(Row { case, shape: dims, mib: (n * 4) as u64 >> 20, ms, gb_per_s: 0.0, percent_of_copy: 0.0, timer: "wall" });
    }
    Ok(rows)
}
