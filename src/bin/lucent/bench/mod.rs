//! `lucent bench`: bandwidth of the primitive kernels, each against the vec4 copy kernel measured
//! in the same process at the same size (the roof), then the FFT suite (`fft.rs`). Times come
//! from GPU timestamps when the adapter has them (else host wall time), as the median of several
//! runs of a recording that repeats the work many times in one compute pass.

mod blind;
mod convolve;
mod denoise;
mod deskew;
mod fft;
mod interpolate;
mod io;
mod ndimage;
mod psf;
mod register;
mod rl;
mod tomography;
mod transfer;
mod wiener;

use lucent::engine::binary::{self, BinaryOp};
use lucent::engine::unary::{self, UnaryOp};
use lucent::engine::{copy_vec4, reduce, scan};
use lucent::{Buf, Dtype, Error, Gpu, GpuArray, Recording};
use serde::Serialize;

use crate::report::{self, Report};
use crate::Global;

#[derive(clap::Args)]
pub struct Args {
    /// Run only the cases whose name contains this text.
    #[arg(long)]
    filter: Option<String>,
    /// Largest array size in MiB (also capped by the device's buffer limit).
    #[arg(long, default_value_t = 1024)]
    max_mib: u64,
    /// Smallest array size in MiB.
    #[arg(long, default_value_t = 1)]
    min_mib: u64,
    /// The FFT suite on these shapes instead of its own (e.g. 243x375x100,509x509): the
    /// transform over `--fft-axes`, then each axis alone.
    #[arg(long, value_delimiter = ',')]
    fft_shape: Vec<String>,
    /// Axes of each `--fft-shape`'s transform (default: the last three, as numpy's fftn).
    #[arg(long, value_delimiter = ',', requires = "fft_shape")]
    fft_axes: Option<Vec<usize>>,
}

/// "243x375x100".
fn shape_name(dims: &[usize]) -> String {
    dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("x")
}

/// `--fft-shape`'s dimensions: 1 to 4 positive sizes joined by 'x'.
fn parse_shape(s: &str) -> Result<Vec<usize>, Error> {
    let dims: Option<Vec<usize>> = s.split('x').map(|d| d.trim().parse::<usize>().ok().filter(|&d| d > 0)).collect();
    dims.filter(|d| d.len() <= 4).ok_or_else(|| Error::Invalid(format!("--fft-shape {s}: 1 to 4 positive sizes joined by 'x' (e.g. 243x375x100)")))
}

/// One benchmark: a name, the bytes it must move per element of input (reads + writes), and how
/// to record one repetition.
struct Case {
    name: &'static str,
    bytes_per_elem: f64,
    dtype: Dtype,
    record: fn(&mut Recording, &Inputs) -> Result<(), Error>,
}

struct Inputs {
    a: Buf,
    b: Buf,
    out: Buf,
}

fn cases() -> Vec<Case> {
    vec![
        Case { name: "copy_vec4", bytes_per_elem: 8.0, dtype: Dtype::F32, record: |r, i| copy_vec4::record(r, i.a, i.out) },
        Case { name: "unary_scale", bytes_per_elem: 8.0, dtype: Dtype::F32, record: |r, i| unary::record_into(r, UnaryOp::Scale(1.5), i.a, i.out) },
        Case { name: "unary_exp", bytes_per_elem: 8.0, dtype: Dtype::F32, record: |r, i| unary::record_into(r, UnaryOp::Exp, i.a, i.out) },
        Case { name: "binary_add", bytes_per_elem: 12.0, dtype: Dtype::F32, record: |r, i| binary::record_into(r, BinaryOp::Add, i.a, i.b, i.out) },
        Case { name: "complex_mul", bytes_per_elem: 24.0, dtype: Dtype::C32, record: |r, i| binary::record_into(r, BinaryOp::ComplexMul, i.a, i.b, i.out) },
        // Reductions and scans: the minimum traffic (one read; a read and a write).
        Case { name: "reduce_sum", bytes_per_elem: 4.0, dtype: Dtype::F32, record: |r, i| reduce::record(r, i.a, reduce::Reduction::Sum, None).map(|_| ()) },
        Case {
            name: "reduce_argmax",
            bytes_per_elem: 4.0,
            dtype: Dtype::F32,
            record: |r, i| reduce::record(r, i.a, reduce::Reduction::ArgMax, None).map(|_| ()),
        },
        Case { name: "scan_cumsum", bytes_per_elem: 8.0, dtype: Dtype::F32, record: |r, i| scan::cumsum(r, i.a, 0, false).map(|_| ()) },
    ]
}

#[derive(Serialize)]
pub struct Row {
    case: String,
    shape: Vec<usize>,
    mib: u64,
    ms: f64,
    gb_per_s: f64,
    percent_of_copy: f64,
    timer: &'static str,
}

pub fn run(global: &Global, args: &Args) -> Result<(), Error> {
    let start = std::time::Instant::now();
    // `--fft-shape` runs the FFT suite alone, on those shapes.
    let fft_shapes = args.fft_shape.iter().map(|s| parse_shape(s)).collect::<Result<Vec<_>, _>>()?;
    if let Some(axes) = &args.fft_axes {
        for dims in &fft_shapes {
            lucent::fft::check_axes(axes, dims.len()).map_err(|e| match e {
                Error::Invalid(why) => Error::Invalid(format!("--fft-axes for {}: {why}", shape_name(dims))),
                other => other,
            })?;
        }
    }
    if args.max_mib < args.min_mib.max(1) {
        return Err(Error::Invalid(format!("--max-mib {} is below --min-mib {} (at least 1): no size to measure", args.max_mib, args.min_mib.max(1))));
    }
    // The file I/O suite needs no GPU: `--filter io...` runs it alone.
    if fft_shapes.is_empty() && args.filter.as_deref().is_some_and(|f| f.starts_with("io")) {
        let rows = io::suite(args, global)?;
        print_rows(global, args, start, serde_json::json!({ "kind": "host", "adapters": [] }), "host", &rows);
        return Ok(());
    }
    let gpu = global.require_gpu()?;
    let all = cases();
    let selected: Vec<&Case> = all.iter().filter(|c| fft_shapes.is_empty() && args.filter.as_deref().is_none_or(|f| c.name.contains(f))).collect();
    let copy = &all[0];
    warm_up(&gpu)?;
    let mut rows = Vec::new();
    let mut mib = args.min_mib.max(1);
    while mib <= args.max_mib {
        // Each array must fit one buffer (checked: --max-mib may be anything).
        let Some(bytes) = mib.checked_mul(1 << 20).filter(|&b| b <= gpu.max_buffer_bytes()) else {
            break;
        };
        let roof = measure(&gpu, copy, bytes)?;
        for case in &selected {
            let (ms, timer) = if case.name == copy.name { roof } else { measure(&gpu, case, bytes)? };
            let gbs = case.bytes_per_elem * (bytes / 4) as f64 / case.dtype.bytes() as f64 * 4.0 / (ms * 1e6);
            let roof_gbs = copy.bytes_per_elem * (bytes / 4) as f64 / (roof.0 * 1e6);
            rows.push(Row {
                case: case.name.to_string(),
                shape: vec![(bytes / case.dtype.bytes()) as usize],
                mib,
                ms,
                gb_per_s: gbs,
                percent_of_copy: 100.0 * gbs / roof_gbs,
                timer,
            });
            if !global.quiet && !global.json {
                eprintln!("{:<16} {:>6} MiB {:>10.4} ms {:>9.1} GB/s {:>6.1}% of copy", case.name, mib, ms, gbs, 100.0 * gbs / roof_gbs);
            }
        }
        mib = mib.saturating_mul(4);
    }
    // The suites the filter names (a prefix of a suite's name, or a case of it); with
    // `--fft-shape`, the FFT suite alone.
    let suite = |name: &str| args.filter.as_deref().is_none_or(|f| name.contains(f) || f.starts_with(name));
    if suite("fft") || !fft_shapes.is_empty() {
        // LUCENT_BENCH_GAP_MIB: an idle buffer allocated first moves every later one (to tell
        // address-dependent timings from the kernels' own).
        let gap_mib: usize = std::env::var("LUCENT_BENCH_GAP_MIB").ok().and_then(|s| s.parse().ok()).unwrap_or(0);
        let _gap = (gap_mib > 0).then(|| GpuArray::empty(&gpu, &[gap_mib << 18], Dtype::F32)).transpose()?;
        let roof = roof_gb_per_s(&gpu, args.max_mib)?;
        rows.extend(fft::suite(&gpu, args, &fft_shapes, roof, global)?);
    }
    if fft_shapes.is_empty() && (suite("convolve") || suite("filter")) {
        rows.extend(convolve::suite(&gpu, args, global)?);
    }
    if fft_shapes.is_empty() && suite("rl") {
        let roof = roof_gb_per_s(&gpu, args.max_mib)?;
        rows.extend(rl::suite(&gpu, args, roof, global)?);
    }
    if fft_shapes.is_empty() && suite("interp") {
        let roof = roof_gb_per_s(&gpu, args.max_mib)?;
        rows.extend(interpolate::suite(&gpu, args, roof, global)?);
    }
    if fft_shapes.is_empty() && suite("register") {
        rows.extend(register::suite(&gpu, args, global)?);
    }
    if fft_shapes.is_empty() && suite("tomo") {
        rows.extend(tomography::suite(&gpu, args, global)?);
    }
    if fft_shapes.is_empty() && suite("denoise") {
        rows.extend(denoise::suite(&gpu, args, global)?);
    }
    if fft_shapes.is_empty() && suite("psf") {
        rows.extend(psf::suite(&gpu, args, global)?);
    }
    if fft_shapes.is_empty() && suite("blind") {
        rows.extend(blind::suite(&gpu, args, global)?);
    }
    if fft_shapes.is_empty() && suite("ndimage") {
        rows.extend(ndimage::suite(&gpu, args, global)?);
    }
    if fft_shapes.is_empty() && suite("deskew") {
        rows.extend(deskew::suite(&gpu, args, global)?);
    }
    if fft_shapes.is_empty() && suite("wiener") {
        rows.extend(wiener::suite(&gpu, args, global)?);
    }
    if fft_shapes.is_empty() && suite("transfer") {
        rows.extend(transfer::suite(&gpu, args, global)?);
    }
    if fft_shapes.is_empty() && suite("io") {
        rows.extend(io::suite(args, global)?);
    }
    if rows.is_empty() {
        return Err(Error::Invalid(format!(
            "no case ran: none matches --filter, or none fits this device's buffers ({} bytes each){}",
            gpu.max_buffer_bytes(),
            if fft_shapes.is_empty() { "" } else { " (every --fft-shape is too large)" }
        )));
    }
    let summary = gpu.summary();
    let device = format!("{} ({})", summary.name, summary.backend);
    print_rows(global, args, start, report::device([&gpu]), &device, &rows);
    Ok(())
}

/// The table on stdout, or one JSON report with `--json` (the rows in `details`).
fn print_rows(global: &Global, args: &Args, start: std::time::Instant, device_json: serde_json::Value, device: &str, rows: &[Row]) {
    if global.json {
        let options = serde_json::json!({
            "filter": args.filter,
            "max_mib": args.max_mib,
            "min_mib": args.min_mib,
            "fft_shape": args.fft_shape,
            "fft_axes": args.fft_axes,
        });
        Report { options, ms: report::Stages::default().total(start), details: serde_json::json!({ "rows": rows }), ..Report::new("bench", device_json) }
            .print();
    } else {
        println!("device: {device}");
        println!("{:<22} {:>18} {:>8} {:>12} {:>10} {:>9}", "case", "shape", "MiB", "ms", "GB/s", "% copy");
        for r in rows {
            println!("{:<22} {:>18} {:>8} {:>12.4} {:>10.2} {:>8.1}%", r.case, shape_name(&r.shape), r.mib, r.ms, r.gb_per_s, r.percent_of_copy);
        }
    }
}

/// About a second of copies before anything is timed: GPUs raise their clocks, and drivers map
/// fresh memory, only under load (first measurements on an idle H200 ran at half speed).
fn warm_up(gpu: &Gpu) -> Result<(), Error> {
    let bytes = (64u64 << 20).min(gpu.max_buffer_bytes());
    let case = &cases()[0];
    let start = std::time::Instant::now();
    while start.elapsed().as_secs_f64() < 1.0 {
        measure(gpu, case, bytes)?;
    }
    Ok(())
}

/// The copy kernel's bandwidth on the largest size that fits (at most 256 MiB), the roof the FFT
/// passes are compared with.
fn roof_gb_per_s(gpu: &Gpu, max_mib: u64) -> Result<f64, Error> {
    let mut mib = 256.min(max_mib).max(1);
    while (mib << 20) * 2 > gpu.max_buffer_bytes() && mib > 1 {
        mib /= 2;
    }
    let copy = &cases()[0];
    let (ms, _) = measure(gpu, copy, mib << 20)?;
    Ok(copy.bytes_per_elem * ((mib << 20) / 4) as f64 / (ms * 1e6))
}

/// With `LUCENT_BENCH_PASSES=1`: the GPU time of every dispatch of one repetition (median of 5
/// runs), printed to stderr, to see which pass of a pipeline is slow.
pub fn print_passes(gpu: &Gpu, what: &str, build: impl FnOnce(&mut Recording) -> Result<(), Error>) -> Result<(), Error> {
    if std::env::var("LUCENT_BENCH_PASSES").map_or(true, |v| v != "1") || !gpu.has_timestamps() {
        return Ok(());
    }
    let mut rec = Recording::new(gpu);
    rec.set_profile(true);
    build(&mut rec)?;
    let compiled = rec.compile()?;
    let mut runs = (0..6).map(|_| compiled.run(gpu).map(|r| r.report.nodes)).collect::<Result<Vec<_>, _>>()?;
    runs.remove(0);
    for (k, node) in runs[0].iter().enumerate() {
        let mut ms: Vec<f64> = runs.iter().map(|r| r[k].ms).collect();
        ms.sort_by(f64::total_cmp);
        eprintln!("  pass {what} {k}: {:<44} {:.4} ms", node.label, ms[2]);
    }
    Ok(())
}

/// Median time of one repetition of `build` (recorded `reps` times into one recording).
pub fn time_repeated(gpu: &Gpu, reps: u64, mut build: impl FnMut(&mut Recording) -> Result<(), Error>) -> Result<(f64, &'static str), Error> {
    let mut rec = Recording::new(gpu);
    for _ in 0..reps {
        build(&mut rec)?;
    }
    let compiled = rec.compile()?;
    // Warm-up: fresh large buffers ran at half speed for tens of milliseconds on an H200.
    let start = std::time::Instant::now();
    for k in 0.. {
        compiled.run(gpu)?;
        if k >= 2 && start.elapsed().as_secs_f64() > 0.5 {
            break;
        }
    }
    let mut times: Vec<(f64, bool)> =
        (0..7).map(|_| compiled.run(gpu).map(|r| (r.report.gpu_ms.unwrap_or(r.report.wall_ms), r.report.gpu_ms.is_some()))).collect::<Result<_, _>>()?;
    times.sort_by(|x, y| x.0.total_cmp(&y.0));
    let (ms, gpu_timer) = times[times.len() / 2];
    Ok((ms / reps as f64, if gpu_timer { "gpu" } else { "wall" }))
}

/// Median time of one repetition of `case` on inputs of `bytes` bytes (random, not zeros).
fn measure(gpu: &Gpu, case: &Case, bytes: u64) -> Result<(f64, &'static str), Error> {
    let n = (bytes / case.dtype.bytes()) as usize;
    let a = random_array(gpu, n, case.dtype, 1)?;
    let b = random_array(gpu, n, case.dtype, 2)?;
    let out = GpuArray::empty(gpu, &[n], case.dtype)?;
    // Enough repetitions to move ~4 GiB, so per-pass overheads vanish.
    let reps = ((4u64 << 30) / (bytes * 2)).clamp(3, 200);
    let mut inputs = None;
    time_repeated(gpu, reps, |rec| {
        let i = inputs.get_or_insert_with(|| Inputs { a: rec.input(&a), b: rec.input(&b), out: rec.input(&out) });
        (case.record)(rec, i)
    })
}

/// Deterministic values in [0, 1) from an xorshift generator started at `state`: the values
/// only need to be non-trivial (nothing compresses or short-cuts), and the same each run.
pub fn uniform(dims: &[usize], state: u64) -> ndarray::ArrayD<f32> {
    let mut s = state;
    ndarray::ArrayD::from_shape_simple_fn(ndarray::IxDyn(dims), || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 40) as f32 / (1u64 << 24) as f32
    })
}

pub fn random_array(gpu: &Gpu, n: usize, dtype: Dtype, seed: u64) -> Result<GpuArray, Error> {
    let words = n * dtype.words() as usize;
    let data = uniform(&[words], seed.wrapping_mul(0x9E3779B97F4A7C15) | 1).mapv(|v| v + 0.5);
    let flat = GpuArray::upload_f32(gpu, &data.view())?;
    Ok(match dtype {
        Dtype::F32 => flat,
        _ => flat.reinterpret(&[n], dtype)?,
    })
}
