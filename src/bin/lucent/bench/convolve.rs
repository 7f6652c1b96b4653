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
    rows.extend(split_suite(gpu, args, global, roof)?);
    Ok(rows)
}

/// "split": host-to-host 'same' convolutions of a 3D volume, in core (one run) and split along
/// axis 0 with the part budget lowered to 1/4 of the in-core run's measured device memory, and,
/// on a host with several GPUs of the best type, split over all of them. Wall times (median of
/// 3 after a warm-up run) include the host's folding and recombination and every transfer; the
/// throughput ratio split / in-core is the in-core time over the split time.
fn split_suite(gpu: &Gpu, args: &Args, global: &Global, roof: f64) -> Result<Vec<Row>, Error> {
    use lucent::ops::convolve::split::{convolve_split, SplitOptions};
    let mut rows = Vec::new();
    for (edge, kedge) in [(256usize, 31usize), (64, 15)] {
        let tag = format!("convolve_split_{edge}_k{kedge}");
        let dims = vec![edge; 3];
        let bytes = (edge * edge * edge * 4) as u64;
        if args.filter.as_deref().is_some_and(|f| !tag.contains(f) && f != "convolve") || bytes > args.max_mib << 20 {
            continue;
        }
        let image = ArrayD::from_shape_fn(IxDyn(&dims), |i| ((i[0] * 7 + i[1] * 3 + i[2]) % 17) as f32 - 8.0);
        let kernel = smooth_kernel(&[kedge; 3]);
        let time = |gpus: &[Gpu], opts: &SplitOptions| -> Result<(f64, lucent::ops::convolve::split::SplitReport), Error> {
            let mut runs = Vec::new();
            for _ in 0..4 {
                runs.push(convolve_split(gpus, &image.view(), &kernel.view(), Mode::Same, opts)?.1);
            }
            runs.remove(0); // warm-up: pipelines and first-touch buffers
            runs.sort_by(|a, b| a.total_ms.total_cmp(&b.total_ms));
            let median = runs.swap_remove(1);
            Ok((median.total_ms, median))
        };
        let one = std::slice::from_ref(gpu);
        let (incore_ms, incore) = time(one, &SplitOptions { parts: Some(1), ..Default::default() })?;
        let budget = SplitOptions { max_part_bytes: Some(incore.peak_bytes / 4), ..Default::default() };
        let (split_ms, split) = time(one, &budget)?;
        rows.push(row(&format!("{tag}_incore"), &dims, bytes, incore_ms, "wall", roof));
        rows.push(row(&format!("{tag}_P{}", split.parts), &dims, bytes, split_ms, "wall", roof));
        let mut line = format!(
            "{tag}: in core {incore_ms:.1} ms ({} bytes); P = {} ({} computed, peak {} bytes per part) {split_ms:.1} ms: split/in-core throughput {:.2} (prepare {:.1} ms, recombine {:.1} ms, summed over parts)",
            incore.peak_bytes, split.parts, split.computed_parts, split.peak_bytes, incore_ms / split_ms, split.prepare_ms, split.recombine_ms
        );
        let all = Gpu::open_all().unwrap_or_default();
        if all.len() > 1 {
            let (all_ms, multi) = time(&all, &budget)?;
            rows.push(row(&format!("{tag}_P{}_gpus{}", multi.parts, all.len()), &dims, bytes, all_ms, "wall", roof));
            line += &format!("; on {} GPUs {all_ms:.1} ms (speedup {:.2} over one)", all.len(), split_ms / all_ms);
        }
        if !global.quiet && !global.json {
            eprintln!("{line}");
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
