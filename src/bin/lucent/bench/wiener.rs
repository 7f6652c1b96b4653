//! The Wiener suite of `lucent bench`, against cuCIM (.device/wiener_reference.py): scikit-image's
//! `wiener` (Laplacian regulariser, balance 0.05) of a 2048² image by a 15² Gaussian PSF and of a
//! 256³ volume by a 15³ one, and `unsupervised_wiener` of the 2048² image with 60 Gibbs
//! iterations exactly (threshold 0, so both stop at max_num_iter), host arrays in and out as a
//! user calls them. Host wall clock, median after warm-up.

use lucent::restoration::{unsupervised_wiener, wiener, GibbsParams};
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
        rows.push(Row { case, shape: dims.clone(), mib: (n * 4) as u64 >> 20, ms, gb_per_s: 0.0, percent_of_copy: 0.0, timer: "wall" });
        if dims.len() == 2 && args.filter.as_deref().is_none_or(|f| "unsupervised_wiener_2d".contains(f) || f == "wiener") {
            let p = GibbsParams { threshold: 0.0, max_num_iter: 60, min_num_iter: 30, burnin: 15 };
            let ms = median_after_warm_up(3, || unsupervised_wiener(gpu, &image.view(), &psf.view(), &p, true, 1).map(drop))?;
            if !global.quiet && !global.json {
                eprintln!("{:<36} {:>12} {ms:>10.3} ms", "unsupervised_wiener_2d", super::shape_name(&dims));
            }
            rows.push(Row {
                case: "unsupervised_wiener_2d".into(),
                shape: dims,
                mib: (n * 4) as u64 >> 20,
                ms,
                gb_per_s: 0.0,
                percent_of_copy: 0.0,
                timer: "wall",
            });
        }
    }
    Ok(rows)
}
