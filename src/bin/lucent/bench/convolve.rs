//! The convolution suite of `lucent bench`: scipy.signal 'same' convolutions by FFT at the sizes
//! of the convolution issue (256³ with 31³, 4096² with 63²), with the kernel's spectrum cached
//! (the per-iteration cost in deconvolution) and with both arrays transformed, then direct sums
//! against the FFT path on small kernels, the rows that calibrate `Method::Auto`
//! (`convolve::DIRECT_TAPS_PER_FFT_ELEMENT`), and a separable Gaussian. Bandwidth is the
//! minimum traffic, one read of the image and one write of the result, against the copy roof.

use lucent::ops::convolve::{self, Boundary, Geometry, KernelSpectrum, Method, Mode};
use lucent::{Dtype, Error, Gpu};
use ndarray::{ArrayD, IxDyn};

use super::{random_array, roof_gb_per_s, time_repeated, Args, Row};
use crate::Global;

/// (image, kernel edge, methods): FFT at the sizes, then direct-vs-FFT pairs.
fn cases() -> Vec<(Vec<usize>, usize, &'static [Method])> {
    const FFT: &[Method] = &[Method::Fft];
    const BOTH: &[Method] = &[Method::Direct, Method::Fft];
    vec![
        (vec![256, 256, 256], 31, FFT),
        (vec![4096, 4096], 63, FFT),
        (vec![4096, 4096], 3, BOTH),
        (vec![4096, 4096], 7, BOTH),
        (vec![4096, 4096], 15, BOTH),
        (vec![256, 256, 256], 3, BOTH),
        (vec![256, 256, 256], 5, BOTH),
        (vec![256, 256, 256], 7, BOTH),
        (vec![1024, 1024], 15, BOTH),
    ]
}

pub fn suite(gpu: &Gpu, args: &Args, global: &Global) -> Result<Vec<Row>, Error> {
    let roof = roof_gb_per_s(gpu, args.max_mib)?;
    let wanted = |case: &str| args.filter.as_deref().is_none_or(|f| case.contains(f) || f == "convolve");
    let mut rows = Vec::new();
    for (dims, edge, methods) in cases() {
        let n: usize = dims.iter().product();
        let bytes = n as u64 * 4;
        let kdims = vec![edge; dims.len()];
        let g = Geometry::new(&dims, &kdims, Mode::Same)?;
        // The padded complex spectrum (about twice the padded real array) must fit.
        let spectrum_bytes = g.spectrum_dims().iter().product::<usize>() as u64 * 8;
        if bytes > args.max_mib << 20 || spectrum_bytes > gpu.max_buffer_bytes() {
            continue;
        }
        let x = random_array(gpu, n, Dtype::F32, 5)?.reinterpret(&dims, Dtype::F32)?;
        let kernel = smooth_kernel(&kdims);
        let reps = ((1u64 << 31) / bytes).clamp(2, 20);
        let tag = format!("k{edge}");
        for &method in methods {
            let mut time = |case: String, run: &mut dyn FnMut(&mut lucent::Recording, lucent::Buf) -> Result<lucent::Buf, Error>| -> Result<(), Error> {
                if !wanted(&case) {
                    return Ok(());
                }
                let (ms, timer) = time_repeated(gpu, reps, |rec| {
                    let xb = rec.input(&x);
                    run(rec, xb).map(|_| ())
                })?;
                rows.push(row(&case, &dims, bytes, ms, timer, roof));
                if !global.quiet && !global.json {
                    let r = rows.last().unwrap();
                    eprintln!("{:<34} {:>14} {:>10.4} ms {:>8.1} GB/s {:>6.1}% of copy", r.case, shape_name(&dims), r.ms, r.gb_per_s, r.percent_of_copy);
                }
                Ok(())
            };
            match method {
                Method::Direct => {
                    time(format!("convolve_direct_same_{tag}"), &mut |rec, xb| convolve::signal_convolve(rec, xb, &kernel.view(), Mode::Same, Method::Direct))?;
                }
                _ => {
                    let spectrum = KernelSpectrum::new(gpu, &kernel.view(), &dims, Mode::Same)?;
                    time(format!("convolve_fft_same_cached_{tag}"), &mut |rec, xb| spectrum.record(rec, xb))?;
                    let k = lucent::GpuArray::upload_f32(gpu, &kernel.view())?;
                    time(format!("convolve_fft_same_{tag}"), &mut |rec, xb| {
                        let kb = rec.input(&k);
                        convolve::fftconvolve(rec, xb, kb, Mode::Same)
                    })?;
                }
            }
        }
        if edge == 31 || edge == 63 {
            // A Gaussian of about the kernel's width: sigma = edge / 8 (truncated at 4 sigma).
            let sigma = [edge as f32 / 8.0];
            let case = format!("filter_gaussian_sigma{}", sigma[0]);
            if wanted(&case) {
                let (ms, timer) = time_repeated(gpu, reps, |rec| {
                    let xb = rec.input(&x);
                    convolve::gaussian_filter(rec, xb, &sigma, Boundary::Reflect).map(|_| ())
                })?;
                rows.push(row(&case, &dims, bytes, ms, timer, roof));
            }
        }
    }
    Ok(rows)
}

/// A separable bump (finite, positive, not trivially sparse).
fn smooth_kernel(dims: &[usize]) -> ArrayD<f32> {
    ArrayD::from_shape_fn(IxDyn(dims), |i| {
        (0..dims.len()).map(|d| 1.0 + (i[d] as f32 * 0.7).sin().abs()).product::<f32>()
    })
}

fn shape_name(dims: &[usize]) -> String {
    dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("x")
}

/// One read of the image and one write of the result, in `ms`.
fn row(case: &str, dims: &[usize], bytes: u64, ms: f64, timer: &'static str, roof_gbs: f64) -> Row {
    let gbs = (2 * bytes) as f64 / (ms * 1e6);
    Row { case: case.to_string(), shape: dims.to_vec(), mib: bytes >> 20, ms, gb_per_s: gbs, percent_of_copy: 100.0 * gbs / roof_gbs, timer }
}
