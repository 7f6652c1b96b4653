//! The scipy.ndimage suite of `lucent bench` (issue 39's rows), against cupyx.scipy.ndimage
//! (.device/ndimage_reference.py) on the same inputs: gaussian_gradient_magnitude (σ 2), median
//! filters of 3³ and 7³ and the exact distance transform of 512³ resident on the device (GPU time), and label of a 512³ mask
//! with host arrays in and out (its rounds read a flag back; wall clock). The masks: 1% zeros for
//! the distance transform, 30% foreground for label (both uniform random, fixed seeds).

use lucent::ndimage::{self, Boundary, GaussianFilter};
use lucent::{Error, Gpu, GpuArray};

use super::register::median_after_warm_up;
use super::{time_repeated, Args, Row};
use crate::Global;

pub fn suite(gpu: &Gpu, args: &Args, global: &Global) -> Result<Vec<Row>, Error> {
    let wanted = |case: &str| args.filter.as_deref().is_none_or(|f| case.contains(f) || f == "ndimage");
    let dims = vec![512usize; 3];
    let n: usize = dims.iter().product();
    let mut rows = Vec::new();
    let mut push = |case: &str, ms: f64, timer: &'static str| {
        if !global.quiet && !global.json {
            eprintln!("{case:<36} {:>12} {ms:>10.3} ms ({timer})", super::shape_name(&dims));
        }
        rows.push(Row { case: case.into(), shape: dims.clone(), mib: (n * 4) as u64 >> 20, ms, gb_per_s: 0.0, percent_of_copy: 0.0, timer });
    };
    if wanted("ndimage_gradient_magnitude") {
        let x = GpuArray::upload_f32(gpu, &super::uniform(&dims, 3).view())?;
        let terms = ndimage::gradient_magnitude_terms(&GaussianFilter::new(&[2.0]), &dims, Boundary::Reflect)?;
        let (ms, timer) = time_repeated(gpu, 1, |rec| {
            let input = rec.input(&x);
            ndimage::record_terms(rec, input, &terms, Boundary::Reflect).map(drop)
        })?;
        push("ndimage_gradient_magnitude", ms, timer);
    }
    for size in [3usize, 7] {
        let case = format!("ndimage_median_{size}");
        if wanted(&case) {
            let x = GpuArray::upload_f32(gpu, &super::uniform(&dims, 4).view())?;
            let f = ndimage::Footprint::new(&ndarray::ArrayD::from_elem(ndarray::IxDyn(&[size; 3]), true).view(), None, &[])?;
            let (ms, timer) = time_repeated(gpu, 1, |rec| {
                let input = rec.input(&x);
                ndimage::record_rank(rec, input, &f, size * size * size / 2, Boundary::Reflect).map(drop)
            })?;
            push(&case, ms, timer);
        }
    }
    if wanted("ndimage_binary_erosion") {
        // One erosion by the cross of connectivity 1 (7 taps) of a 0/1 volume, 30% zeros.
        let mask = super::uniform(&dims, 6).mapv(|v| if v < 0.3 { 0.0 } else { 1.0 });
        let x = GpuArray::upload_f32(gpu, &mask.view())?;
        let f = ndimage::Footprint::new(&ndimage::generate_binary_structure(3, 1)?.view(), None, &[])?;
        let (ms, timer) = time_repeated(gpu, 1, |rec| {
            let input = rec.input(&x);
            ndimage::record_extreme(rec, input, &f, false, Boundary::Constant(0.0)).map(drop)
        })?;
        push("ndimage_binary_erosion", ms, timer);
    }
    if wanted("ndimage_edt") {
        let mask = super::uniform(&dims, 5).mapv(|v| if v < 0.01 { 0.0 } else { 1.0 });
        let x = GpuArray::upload_f32(gpu, &mask.view())?;
        let (ms, timer) = time_repeated(gpu, 1, |rec| {
            let input = rec.input(&x);
            ndimage::record_squared_distances(rec, input, &[]).map(drop)
        })?;
        push("ndimage_edt", ms, timer);
    }
    if wanted("ndimage_label") {
        let mask = super::uniform(&dims, 7).mapv(|v| v < 0.3);
        let s = ndimage::generate_binary_structure(3, 1)?;
        let ms = median_after_warm_up(3, || ndimage::label(gpu, &mask.view(), &s.view()).map(drop))?;
        push("ndimage_label_host", ms, "wall");
    }
    Ok(rows)
}
