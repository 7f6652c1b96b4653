//! The convolution suite of `lucent bench`: scipy.signal 'same' convolutions by FFT at the sizes
//! of the convolution issue (256³ with 31³, 4096² with 63²), with the kernel's spectrum cached
//! (the per-iteration cost in deconvolution) and with both arrays transformed, then direct sums
//! against the FFT path on small kernels, the rows that calibrate `Method::Auto` (the cost
//! model's constants in `ops::convolve`), and a separable Gaussian. Bandwidth is the
//! minimum traffic, one read of the image and one write of the result, against the copy roof.

use lucent::engine::{correlate_tiled, correlate_window};
use lucent::ndimage::{self, Boundary};
use lucent::signal::{self, FilterBank, Geometry, KernelSpectrum, Method, Mode};
use lucent::{Dtype, Error, Gpu, GpuArray};
use ndarray::{ArrayD, IxDyn};

use super::{random_array, roof_gb_per_s, shape_name, time_repeated, Args, Row};
use crate::Global;

/// (image, kernel edge, methods): FFT at the sizes, then direct-vs-FFT pairs.
fn cases() -> Vec<(Vec<usize>, usize, &'static [Method])> {
    const FFT: &[Method] = &[Method::Fft];
    const BOTH: &[Method] = &[Method::Direct, Method::Fft];
    vec![
        (vec![256, 256, 256], 31, FFT),
        (vec![512, 512, 512], 31, FFT),
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
                    time(format!("convolve_direct_same_{tag}"), &mut |rec, xb| signal::record_convolve(rec, xb, &kernel.view(), Mode::Same, Method::Direct))?;
                }
                _ => {
                    let spectrum = KernelSpectrum::new(gpu, &kernel.view(), &dims, Mode::Same)?;
                    time(format!("convolve_fft_same_cached_{tag}"), &mut |rec, xb| spectrum.record(rec, xb))?;
                    let k = lucent::GpuArray::upload_f32(gpu, &kernel.view())?;
                    time(format!("convolve_fft_same_{tag}"), &mut |rec, xb| {
                        let kb = rec.input(&k);
                        signal::record_fftconvolve(rec, xb, kb, Mode::Same)
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
                    ndimage::record_gaussian_filter(rec, xb, &sigma, Boundary::Reflect).map(|_| ())
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
    use lucent::signal::{convolve_split, SplitOptions};
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
        let time = |gpus: &[Gpu], opts: &SplitOptions| -> Result<(f64, lucent::signal::SplitReport), Error> {
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
        // The GPU holds 1/4 of the in-core memory either way: one part of 1/4 at a time, or two
        // parts of 1/8 in flight (upload and download of one overlap the other's transforms).
        let one_part = SplitOptions { max_part_bytes: Some(incore.peak_bytes / 4), in_flight: Some(1), ..Default::default() };
        let budget = SplitOptions { max_part_bytes: Some(incore.peak_bytes / 8), in_flight: Some(2), ..Default::default() };
        let (serial_ms, serial) = time(one, &one_part)?;
        let (split_ms, split) = time(one, &budget)?;
        rows.push(row(&format!("{tag}_incore"), &dims, bytes, incore_ms, "wall", roof));
        rows.push(row(&format!("{tag}_P{}_inflight1", serial.parts), &dims, bytes, serial_ms, "wall", roof));
        rows.push(row(&format!("{tag}_P{}_inflight2", split.parts), &dims, bytes, split_ms, "wall", roof));
        let mut line = format!(
            "{tag}: in core {incore_ms:.1} ms ({} bytes); P = {} one at a time {serial_ms:.1} ms (throughput {:.2} of in core); P = {} two in flight (peak {} bytes each) {split_ms:.1} ms (throughput {:.2}; prepare {:.1} ms, recombine {:.1} ms, summed over parts)",
            incore.peak_bytes, serial.parts, incore_ms / serial_ms, split.parts, split.peak_bytes, incore_ms / split_ms, split.prepare_ms, split.recombine_ms
        );
        let all = Gpu::open_all().unwrap_or_default();
        if all.len() > 1 {
            let (all_ms, multi) = time(&all, &budget)?;
            rows.push(row(&format!("{tag}_P{}_inflight2_gpus{}", multi.parts, all.len()), &dims, bytes, all_ms, "wall", roof));
            line += &format!("; on {} GPUs {all_ms:.1} ms (speedup {:.2} over one)", all.len(), split_ms / all_ms);
        }
        if !global.quiet && !global.json {
            eprintln!("{line}");
        }
    }
    direct_tiled_vs_window(gpu, args, global, roof, &mut rows)?;
    direct_4d(gpu, args, global, roof, &mut rows)?;
    bank_vs_separate(gpu, args, global, roof, &mut rows)?;
    Ok(rows)
}

/// Times `run` (repeated in one recording) on `x` as a row named `case`, if the filter wants it.
fn time_case(
    gpu: &Gpu,
    args: &Args,
    x: &GpuArray,
    case: &str,
    roof: f64,
    run: &mut dyn FnMut(&mut lucent::Recording, lucent::Buf) -> Result<(), Error>,
) -> Result<Option<Row>, Error> {
    if !args.filter.as_deref().is_none_or(|f| case.contains(f) || f == "convolve") {
        return Ok(None);
    }
    let bytes = x.bytes();
    let reps = ((1u64 << 31) / bytes).clamp(2, 20);
    let (ms, timer) = time_repeated(gpu, reps, |rec| {
        let xb = rec.input(x);
        run(rec, xb)
    })?;
    Ok(Some(row(case, x.dims(), bytes, ms, timer, roof)))
}

/// Direct sums' throughput, 2·taps·outputs per second, with the cost model's estimate.
fn report_direct(global: &Global, r: &Row, g: &Geometry, model_ms: f64) {
    let flop = 2.0 * g.taps() as f64 * g.out.iter().product::<usize>() as f64;
    if !global.quiet {
        eprintln!("{:<34} {:>14} {:>10.4} ms {:>9.1} GFLOP/s   model {:.4} ms", r.case, shape_name(&r.shape), r.ms, flop / (r.ms * 1e6), model_ms);
    }
}

/// The tiled direct kernel against the one-thread-per-output window kernel (scipy.signal
/// 'same', zero outside), at the sizes of the direct-vs-FFT rows above: the rows that calibrate
/// `DIRECT_TILED_PS_PER_TAP`, `DIRECT_WINDOW_PS_PER_TAP` and `correlate_tiled::MIN_PLANE_TAPS`.
fn direct_tiled_vs_window(gpu: &Gpu, args: &Args, global: &Global, roof: f64, rows: &mut Vec<Row>) -> Result<(), Error> {
    let cases: [(&[usize], &[usize]); 8] = [
        (&[4096, 4096], &[3, 3]),
        (&[4096, 4096], &[7, 7]),
        (&[4096, 4096], &[15, 15]),
        (&[4096, 4096], &[1, 15]),
        (&[4096, 4096], &[31, 31]),
        (&[256, 256, 256], &[3, 3, 3]),
        (&[256, 256, 256], &[5, 5, 5]),
        (&[256, 256, 256], &[7, 7, 7]),
    ];
    for (dims, kdims) in cases {
        let n: usize = dims.iter().product();
        if (n as u64 * 4) > (args.max_mib << 20) || (n as u64 * 4) > gpu.max_buffer_bytes() {
            continue;
        }
        let x = random_array(gpu, n, Dtype::F32, 7)?.reinterpret(dims, Dtype::F32)?;
        let kernel = smooth_kernel(kdims);
        let g = Geometry::new(dims, kdims, Mode::Same)?;
        let tag = format!("{}_k{}", shape_name(dims), shape_name(kdims));
        let w = lucent::GpuArray::upload_f32(gpu, &kernel.view())?;
        let origin = g.window_origin();
        let model = |per_tap: f64| g.out.iter().product::<usize>() as f64 * (signal::DIRECT_PS_PER_OUTPUT + g.taps() as f64 * per_tap) * 1e-9;
        if let Some(tiling) = correlate_tiled::Tiling::for_gpu(gpu, &g.out, kdims) {
            let case = format!("filter_direct_tiled_{tag}");
            if let Some(r) = time_case(gpu, args, &x, &case, roof, &mut |rec, xb| {
                correlate_tiled::record_with(rec, xb, &kernel.view(), &g.out, &origin, Boundary::Constant(0.0), tiling).map(|_| ())
            })? {
                report_direct(global, &r, &g, model(signal::DIRECT_TILED_PS_PER_TAP));
                rows.push(r);
            }
        }
        let case = format!("filter_direct_window_{tag}");
        if let Some(r) = time_case(gpu, args, &x, &case, roof, &mut |rec, xb| {
            let wb = rec.input(&w);
            correlate_window::record(rec, xb, wb, &g.out, &origin, Boundary::Constant(0.0)).map(|_| ())
        })? {
            report_direct(global, &r, &g, model(signal::DIRECT_WINDOW_PS_PER_TAP));
            rows.push(r);
        }
    }
    Ok(())
}

/// The 4D denoising sizes: 20×64×64×64 (t, z, y, x) with 7⁴ and 11⁴ kernels, 'same': direct
/// sums (tiled, then the window kernel) in GFLOP/s, the FFT path (kernel spectrum cached, and
/// both arrays transformed) and the ratio; with the cost model's estimates for `Method::Auto`.
fn direct_4d(gpu: &Gpu, args: &Args, global: &Global, roof: f64, rows: &mut Vec<Row>) -> Result<(), Error> {
    let dims = [20usize, 64, 64, 64];
    let n: usize = dims.iter().product();
    if n as u64 * 4 > args.max_mib << 20 {
        return Ok(());
    }
    let x = random_array(gpu, n, Dtype::F32, 9)?.reinterpret(&dims, Dtype::F32)?;
    for edge in [7usize, 11] {
        let kdims = [edge; 4];
        let kernel = smooth_kernel(&kdims);
        let g = Geometry::new(&dims, &kdims, Mode::Same)?;
        let mut direct_ms = None;
        let case = format!("convolve_direct4d_tiled_k{edge}");
        if let Some(r) =
            time_case(gpu, args, &x, &case, roof, &mut |rec, xb| signal::record_convolve(rec, xb, &kernel.view(), Mode::Same, Method::Direct).map(|_| ()))?
        {
            report_direct(global, &r, &g, g.direct_cost_ns() * 1e-6);
            direct_ms = Some(r.ms);
            rows.push(r);
        }
        let w = lucent::GpuArray::upload_f32(gpu, &convolve_reversed(&kernel).view())?;
        let case = format!("convolve_direct4d_window_k{edge}");
        if let Some(r) = time_case(gpu, args, &x, &case, roof, &mut |rec, xb| {
            let wb = rec.input(&w);
            correlate_window::record(rec, xb, wb, &g.out, &g.window_origin(), Boundary::Constant(0.0)).map(|_| ())
        })? {
            report_direct(global, &r, &g, 0.0);
            rows.push(r);
        }
        let spectrum = KernelSpectrum::new(gpu, &kernel.view(), &dims, Mode::Same)?;
        let k = lucent::GpuArray::upload_f32(gpu, &kernel.view())?;
        let cached = time_case(gpu, args, &x, &format!("convolve_direct4d_fft_cached_k{edge}"), roof, &mut |rec, xb| spectrum.record(rec, xb).map(|_| ()))?;
        let uncached = time_case(gpu, args, &x, &format!("convolve_direct4d_fft_k{edge}"), roof, &mut |rec, xb| {
            let kb = rec.input(&k);
            signal::record_fftconvolve(rec, xb, kb, Mode::Same).map(|_| ())
        })?;
        for r in [cached, uncached].into_iter().flatten() {
            if !global.quiet {
                let ratio = direct_ms.map_or(String::new(), |d| format!("direct/fft {:.2}", d / r.ms));
                eprintln!("{:<34} {:>14} {:>10.4} ms   model {:.4} ms   {ratio}", r.case, shape_name(&dims), r.ms, g.fft_cost_ns() * 1e-6);
            }
            rows.push(r);
        }
    }
    Ok(())
}

/// The kernel reversed along every axis (a convolution as the window kernel's correlation).
fn convolve_reversed(kernel: &ArrayD<f32>) -> ArrayD<f32> {
    let mut v = kernel.view();
    for a in 0..v.ndim() {
        v.invert_axis(ndarray::Axis(a));
    }
    v.as_standard_layout().into_owned()
}

/// A bank of 6 kernels of 15³ on a 128³ volume ('same'): one `FilterBank` (one complex forward
/// transform, three inverse ones) against 6 fftconvolves with cached spectra and 6 uncached.
fn bank_vs_separate(gpu: &Gpu, args: &Args, global: &Global, roof: f64, rows: &mut Vec<Row>) -> Result<(), Error> {
    let dims = [128usize, 128, 128];
    let kdims = [15usize; 3];
    if dims.iter().product::<usize>() as u64 * 4 > args.max_mib << 20 {
        return Ok(());
    }
    let x = random_array(gpu, dims.iter().product(), Dtype::F32, 11)?.reinterpret(&dims, Dtype::F32)?;
    let kernels: Vec<ArrayD<f32>> = (0..6).map(|i| smooth_kernel(&kdims).mapv(|v| v * (1.0 + i as f32))).collect();
    let views: Vec<_> = kernels.iter().map(|k| k.view()).collect();
    let bank = FilterBank::new(gpu, &views, &dims, Mode::Same)?;
    let spectra = kernels.iter().map(|k| KernelSpectrum::new(gpu, &k.view(), &dims, Mode::Same)).collect::<Result<Vec<_>, _>>()?;
    let uploaded = kernels.iter().map(|k| lucent::GpuArray::upload_f32(gpu, &k.view())).collect::<Result<Vec<_>, _>>()?;
    let timed = [
        time_case(gpu, args, &x, "convolve_bank6_k15", roof, &mut |rec, xb| bank.record(rec, xb).map(|_| ()))?,
        time_case(gpu, args, &x, "convolve_bank6_separate_cached_k15", roof, &mut |rec, xb| spectra.iter().try_for_each(|s| s.record(rec, xb).map(|_| ())))?,
        time_case(gpu, args, &x, "convolve_bank6_separate_k15", roof, &mut |rec, xb| {
            uploaded.iter().try_for_each(|k| {
                let kb = rec.input(k);
                signal::record_fftconvolve(rec, xb, kb, Mode::Same).map(|_| ())
            })
        })?,
    ];
    for r in timed.into_iter().flatten() {
        if !global.quiet {
            eprintln!("{:<34} {:>14} {:>10.4} ms", r.case, shape_name(&dims), r.ms);
        }
        rows.push(r);
    }
    Ok(())
}

/// A separable bump (finite, positive, not trivially sparse).
fn smooth_kernel(dims: &[usize]) -> ArrayD<f32> {
    ArrayD::from_shape_fn(IxDyn(dims), |i| (0..dims.len()).map(|d| 1.0 + (i[d] as f32 * 0.7).sin().abs()).product::<f32>())
}

/// One read of the image and one write of the result, in `ms`.
fn row(case: &str, dims: &[usize], bytes: u64, ms: f64, timer: &'static str, roof_gbs: f64) -> Row {
    let gbs = (2 * bytes) as f64 / (ms * 1e6);
    Row { case: case.to_string(), shape: dims.to_vec(), mib: bytes >> 20, ms, gb_per_s: gbs, percent_of_copy: 100.0 * gbs / roof_gbs, timer }
}
