//! The FFT suite of `lucent bench`: complex forward transforms and real round trips
//! (rfftn + irfftn) at the shapes the FFT issue names, in milliseconds and effective bandwidth
//! (each dispatch reads and writes the whole array once), against the copy roof of the same run.
//! cuFFT's times for the same shapes come from bench/cufft_reference.py in the same device run.

use lucent::fft::{FftPlan, Norm, Transform};
use lucent::{Dtype, Error, Gpu, GpuArray};

use super::{print_passes, random_array, shape_name, time_repeated, Args, Row};
use crate::Global;

/// (shape, transformed axes): batched 1D lines, then numpy's default of the last up-to-3 axes
/// (as .device/cufft_bench.py does for cuFFT).
fn shapes() -> Vec<(Vec<usize>, Vec<usize>)> {
    let mut s = Vec::new();
    // Batched 1D: 2^20 and 2^24 points in lines of 64 .. 16384; at 2^24 also lines of 1 and 8,
    // the cost of the load/store frame alone and of one stage.
    for n in [64usize, 1024, 16384] {
        s.push((vec![(1 << 20) / n, n], vec![1]));
    }
    for n in [1usize, 8, 64, 256, 1024, 4096, 16384] {
        s.push((vec![(1 << 24) / n, n], vec![1]));
    }
    let mut nd = |dims: Vec<usize>| {
        let k = dims.len();
        let axes = (k.saturating_sub(3)..k).collect();
        s.push((dims, axes));
    };
    for n in [512usize, 2048, 4096, 8192] {
        nd(vec![n, n]);
    }
    for n in [64usize, 128, 256, 512] {
        nd(vec![n, n, n]);
    }
    // [100, 375, 243]: the awkward volume with its odd axis last, where real transforms pack two
    // rows into one complex transform.
    for dims in [vec![16, 512, 512], vec![20, 64, 128, 128], vec![243, 375, 100], vec![100, 375, 243], vec![257, 257, 64], vec![509, 509]] {
        nd(dims);
    }
    s
}

/// (shape, one axis): each axis of the large shapes transformed alone, timed like the copy roof
/// (repeated back to back in one recording), so a single-dispatch axis is compared with the roof
/// on equal terms. (Per-pass timestamps, LUCENT_BENCH_PASSES=1, time each dispatch in its own
/// compute pass: that adds its ramp and drain, about 10 µs on an H100.)
fn single_axes() -> Vec<(Vec<usize>, usize)> {
    let mut s = Vec::new();
    for dims in [vec![256usize, 256, 256], vec![512, 512, 512], vec![243, 375, 100]] {
        for axis in (0..3).rev() {
            s.push((dims.clone(), axis));
        }
    }
    // 4096-point lines (as in the suite's batched rows); 8192-point lines exchange through
    // workgroup memory in halves; 8192-point columns are two four-step passes, as are
    // 16384-point lines.
    s.extend([(vec![4096, 4096], 1), (vec![8192, 8192], 1), (vec![8192, 8192], 0), (vec![1024, 16384], 1)]);
    s
}

pub fn suite(gpu: &Gpu, args: &Args, own_shapes: &[Vec<usize>], roof_gbs: f64, global: &Global) -> Result<Vec<Row>, Error> {
    let (shapes, single_axes) = if own_shapes.is_empty() {
        (shapes(), single_axes())
    } else {
        let axes_of = |dims: &Vec<usize>| args.fft_axes.clone().unwrap_or_else(|| (dims.len().saturating_sub(3)..dims.len()).collect::<Vec<_>>());
        let whole = own_shapes.iter().map(|d| (d.clone(), axes_of(d))).collect();
        let single = own_shapes.iter().flat_map(|d| axes_of(d).into_iter().rev().map(move |a| (d.clone(), a))).collect();
        (whole, single)
    };
    let mut rows = Vec::new();
    for (dims, axes) in shapes {
        let Some(bytes) = complex_bytes(gpu, args, &dims) else { continue };
        let n: usize = dims.iter().product();
        let shape = shape_name(&dims);
        let wanted = |case: &str| args.filter.as_deref().is_none_or(|f| case.contains(f) || f == "fft");
        if wanted("fft_c2c") {
            let (plan, x, ms, timer) = time_c2c(gpu, &dims, &axes, 3)?;
            rows.push(row("fft_c2c", &dims, bytes, plan.dispatches(), ms, timer, roof_gbs));
            print_passes(gpu, &format!("fft_c2c {shape}"), |rec| {
                let xb = rec.input(&x);
                plan.record(rec, xb).map(|_| ())
            })?;
        }
        if wanted("fft_real_round_trip") {
            let fwd = FftPlan::new(gpu, &dims, &axes, Transform::RealForward, Norm::Backward)?;
            let last = *axes.last().unwrap();
            let inv = FftPlan::new(gpu, fwd.output_dims(), &axes, Transform::RealInverse { len: dims[last] }, Norm::Backward)?;
            let x = random_array(gpu, n, Dtype::F32, 4)?.reinterpret(&dims, Dtype::F32)?;
            let (ms, timer) = time_repeated(gpu, reps(bytes), |rec| {
                let xb = rec.input(&x);
                let s = fwd.record(rec, xb)?;
                inv.record(rec, s).map(|_| ())
            })?;
            // Effective traffic: the real round trip at its ideal, 2 × (read + write) of the half spectrum per axis.
            rows.push(row("fft_real_round_trip", &dims, bytes / 2, 2 * axes.len(), ms, timer, roof_gbs));
        }
        if !global.quiet && !global.json {
            for r in rows.iter().rev().take(2).rev() {
                eprintln!("{:<22} {:>16} {:>10.4} ms {:>8.1} GB/s {:>6.1}% of copy", r.case, shape, r.ms, r.gb_per_s, r.percent_of_copy);
            }
        }
    }
    if args.filter.as_deref().is_none_or(|f| "fft_axis".contains(f)) {
        for (dims, axis) in single_axes {
            let Some(bytes) = complex_bytes(gpu, args, &dims) else { continue };
            let (plan, _, ms, timer) = time_c2c(gpu, &dims, &[axis], 5)?;
            let r = row(&format!("fft_axis{axis}"), &dims, bytes, plan.dispatches(), ms, timer, roof_gbs);
            if !global.quiet && !global.json {
                eprintln!(
                    "{:<22} {:>16} {:>10.4} ms {:>8.1} GB/s {:>6.1}% of copy ({} passes)",
                    r.case,
                    shape_name(&dims),
                    r.ms,
                    r.gb_per_s,
                    r.percent_of_copy,
                    plan.dispatches()
                );
            }
            rows.push(r);
        }
    }
    Ok(rows)
}

/// A forward complex transform over `axes` of random `dims`: the plan, its input, and its time
/// per transform repeated in one recording (as the copy roof is timed).
fn time_c2c(gpu: &Gpu, dims: &[usize], axes: &[usize], seed: u64) -> Result<(FftPlan, GpuArray, f64, &'static str), Error> {
    let n: usize = dims.iter().product();
    let plan = FftPlan::new(gpu, dims, axes, Transform::Forward, Norm::Backward)?;
    let x = random_array(gpu, n, Dtype::C32, seed)?.reinterpret(dims, Dtype::C32)?;
    let (ms, timer) = time_repeated(gpu, reps(n as u64 * 8), |rec| {
        let xb = rec.input(&x);
        plan.record(rec, xb).map(|_| ())
    })?;
    Ok((plan, x, ms, timer))
}

/// Bytes of a complex array of `dims`, if the run's size cap and the device allow it.
fn complex_bytes(gpu: &Gpu, args: &Args, dims: &[usize]) -> Option<u64> {
    let bytes = dims.iter().product::<usize>() as u64 * 8;
    (bytes <= args.max_mib << 20 && bytes <= gpu.max_buffer_bytes()).then_some(bytes)
}

/// Repetitions per recording: about 2 GiB of arrays transformed.
fn reps(bytes: u64) -> u64 {
    ((1u64 << 31) / bytes).clamp(2, 50)
}

/// `passes` full reads and writes of `bytes` each, in `ms`.
fn row(case: &str, dims: &[usize], bytes: u64, passes: usize, ms: f64, timer: &'static str, roof_gbs: f64) -> Row {
    let gbs = (2 * passes as u64 * bytes) as f64 / (ms * 1e6);
    Row { case: case.to_string(), shape: dims.to_vec(), mib: bytes >> 20, ms, gb_per_s: gbs, percent_of_copy: 100.0 * gbs / roof_gbs, timer }
}
