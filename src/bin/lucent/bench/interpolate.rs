//! The interpolation suite of `lucent bench`: the cases of ../shared/bench/cucim_reference.py
//! (cupyx.scipy.ndimage, device arrays in and out) on resident arrays: the cubic prefilter,
//! shift and affine_transform of 256³ and 512³, map_coordinates and rotate of 4096², zoom ×2 of
//! 256³. Bandwidth counts the output written and the input read once per prefilter pass and
//! once for the sampling (the roof a perfect kernel would need), against the copy kernel.

use lucent::ndimage::{self, AffineMap, Sampler, Sampling, SplineMode};
use lucent::GpuArray;
use lucent::{Error, Gpu, Recording};
use ndarray::{ArrayD, IxDyn};

use super::{time_repeated, Args, Row};
use crate::Global;

/// How one case records a repetition.
type Record<'a> = Box<dyn Fn(&mut Recording) -> Result<(), Error> + 'a>;

pub fn suite(gpu: &Gpu, args: &Args, roof_gbs: f64, global: &Global) -> Result<Vec<Row>, Error> {
    let wanted = |case: &str| args.filter.as_deref().is_none_or(|f| case.contains(f) || "interpolate".starts_with(f));
    let mut rows = Vec::new();
    let samplers = [("", Sampler::Buffer), ("_texture", Sampler::Texture)];
    let samplers = if gpu.filters_f32() { &samplers[..] } else { &samplers[..1] };
    let cubic = |mode, sampler| Sampling { order: 3, mode, cval: 0.0, prefilter: true, sampler };
    let linear = |sampler| Sampling { order: 1, mode: SplineMode::Constant, cval: 0.0, prefilter: true, sampler };
    let m = AffineMap::new(
        &ArrayD::from_shape_vec(IxDyn(&[3, 3]), vec![0.98, 0.17, 0.0, -0.17, 0.98, 0.05, 0.0, -0.04, 1.01]).unwrap().view(),
        &[2.0, -3.0, 1.5],
        3,
    )?;
    for edge in [256usize, 512] {
        let dims = vec![edge; 3];
        let bytes = (edge * edge * edge * 4) as u64;
        if bytes > args.max_mib << 20 || bytes > gpu.max_buffer_bytes() {
            continue;
        }
        let x = resident(gpu, &dims, 1.0)?;
        let shift = ndimage::shift_map(&dims, &[1.3, -2.7, 0.4])?;
        let mut cases: Vec<(String, f64, Record)> = vec![(
            "interp_spline_filter".into(),
            6.0,
            Box::new(|rec| {
                let input = rec.input(&x);
                ndimage::record_spline_filter(rec, input, 3, SplineMode::Mirror).map(|_| ())
            }),
        )];
        for &(suffix, sampler) in samplers {
            let (shift, m, dims, x) = (&shift, &m, &dims, &x);
            cases.push((
                format!("interp_shift_order3{suffix}"),
                8.0,
                Box::new(move |rec| {
                    let input = rec.input(x);
                    ndimage::record_affine_transform(rec, input, &shift.0, dims, &cubic(SplineMode::Mirror, sampler)).map(|_| ())
                }),
            ));
            cases.push((
                format!("interp_affine_order3{suffix}"),
                8.0,
                Box::new(move |rec| {
                    let input = rec.input(x);
                    ndimage::record_affine_transform(rec, input, m, dims, &cubic(SplineMode::Constant, sampler)).map(|_| ())
                }),
            ));
            cases.push((
                format!("interp_affine_order1{suffix}"),
                2.0,
                Box::new(move |rec| {
                    let input = rec.input(x);
                    ndimage::record_affine_transform(rec, input, m, dims, &linear(sampler)).map(|_| ())
                }),
            ));
        }
        // One pass per axis too: the goal is per pass.
        let x = &x;
        let axes: Vec<(String, Record)> = (0..3)
            .map(|axis| {
                let record: Record = Box::new(move |rec| {
                    let input = rec.input(x);
                    ndimage::record_spline_filter1d(rec, input, 3, axis, SplineMode::Mirror).map(|_| ())
                });
                (format!("interp_spline_filter1d_axis{axis}"), record)
            })
            .collect();
        for (case, record) in &axes {
            if wanted(case) {
                rows.push(row(gpu, case, &dims, 2.0, roof_gbs, global, |rec| record(rec))?);
            }
        }
        for (case, passes, record) in &cases {
            if wanted(case) {
                rows.push(row(gpu, case, &dims, *passes, roof_gbs, global, |rec| record(rec))?);
            }
        }
    }
    let plane = vec![4096usize, 4096];
    if (4096 * 4096 * 8) as u64 <= gpu.max_buffer_bytes() && 64 <= args.max_mib {
        let x = resident(gpu, &plane, 1.0)?;
        let coords = resident(gpu, &[2, 4096, 4096], 4095.0)?;
        let (rot, out) = ndimage::rotate_map(&plane, 17.0, [1, 0], false)?;
        for &(suffix, sampler) in samplers {
            let case = format!("interp_map_coordinates_order3{suffix}");
            if wanted(&case) {
                let how = cubic(SplineMode::Mirror, sampler);
                rows.push(row(gpu, &case, &plane, 6.0, roof_gbs, global, |rec| {
                    let (input, at) = (rec.input(&x), rec.input(&coords));
                    ndimage::record_map_coordinates(rec, input, at, &how).map(|_| ())
                })?);
            }
            let case = format!("interp_rotate_order3{suffix}");
            if wanted(&case) {
                let how = cubic(SplineMode::Constant, sampler);
                rows.push(row(gpu, &case, &plane, 6.0, roof_gbs, global, |rec| {
                    let input = rec.input(&x);
                    ndimage::record_affine_transform(rec, input, &rot, &out, &how).map(|_| ())
                })?);
            }
        }
    }
    if (512u64 * 512 * 512 * 4) <= gpu.max_buffer_bytes() {
        let dims = vec![256usize; 3];
        let x = resident(gpu, &dims, 1.0)?;
        let (map, out) = ndimage::zoom_map(&dims, &[2.0], false)?;
        for &(suffix, sampler) in samplers {
            let case = format!("interp_zoom_order3{suffix}");
            if wanted(&case) {
                let how = cubic(SplineMode::Constant, sampler);
                // 6 prefilter traffic of the input, and the 8× larger output written.
                rows.push(row(gpu, &case, &dims, 6.0 + 8.0, roof_gbs, global, |rec| {
                    let input = rec.input(&x);
                    ndimage::record_affine_transform(rec, input, &map, &out, &how).map(|_| ())
                })?);
            }
        }
        if wanted("interp_zoom_order5") {
            // Two poles: twice the cubic prefilter's traffic; 216 taps per output sample.
            let how = Sampling { order: 5, mode: SplineMode::Constant, cval: 0.0, prefilter: true, sampler: Sampler::Buffer };
            rows.push(row(gpu, "interp_zoom_order5", &dims, 12.0 + 8.0, roof_gbs, global, |rec| {
                let input = rec.input(&x);
                ndimage::record_affine_transform(rec, input, &map, &out, &how).map(|_| ())
            })?);
        }
    }
    Ok(rows)
}

/// One case's median time and bandwidth: `passes` × the input's bytes moved.
fn row(
    gpu: &Gpu,
    case: &str,
    dims: &[usize],
    passes: f64,
    roof_gbs: f64,
    global: &Global,
    mut build: impl FnMut(&mut Recording) -> Result<(), Error>,
) -> Result<Row, Error> {
    super::print_passes(gpu, case, &mut build)?;
    let bytes = dims.iter().product::<usize>() as u64 * 4;
    let reps = ((1u64 << 31) / bytes).clamp(2, 20);
    let (ms, timer) = time_repeated(gpu, reps, build)?;
    let gbs = passes * bytes as f64 / (ms * 1e6);
    let name = dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("x");
    if !global.quiet && !global.json {
        eprintln!(
            "{case:<32} {name:>12} {ms:>10.4} ms {gbs:>8.1} GB/s {:>6.1}% of copy, {:.3e} samples/s",
            100.0 * gbs / roof_gbs,
            bytes as f64 / 4.0 / (ms * 1e-3)
        );
    }
    Ok(Row { case: case.to_string(), shape: dims.to_vec(), mib: bytes >> 20, ms, gb_per_s: gbs, percent_of_copy: 100.0 * gbs / roof_gbs, timer })
}

/// Deterministic values in [0, scale) on the device.
fn resident(gpu: &Gpu, dims: &[usize], scale: f32) -> Result<GpuArray, Error> {
    GpuArray::upload_f32(gpu, &super::uniform(dims, 0x2545_F491_4F6C_DD1D).mapv(|v| v * scale).view())
}
