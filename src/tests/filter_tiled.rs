//! The tiled direct correlation (`kernels::correlate_tiled`) against the f64 references of
//! `ops::filter::cpu` (direct sums over explicitly padded arrays): 1-4D, awkward shapes, every
//! boundary, kernels larger than the input, 7⁴ and 11⁴ kernels, tilings forced small so kernel
//! rows are loaded in chunks and tiles repeat along every axis. Fresh random inputs, poisoned
//! temporaries.
//!
//! Tolerance: direct sums in f32 are accurate relative to Σ|w|·|x| (the result itself may cancel).
//! Accumulating T products with FMA, each step rounds by ≤ u = 6e-8 of a partial sum; for
//! zero-mean data those errors add up like a random walk to about u·Σ|w||x|, independently of T
//! (the worst case T·u is never approached by random data). 1e-6 of that magnitude leaves a
//! margin of ~10 even for the 14641 taps of 11⁴, and catches any wrong tap, fold or index.

use crate::tests::common;
use common::*;

use lucent::kernels::correlate_axis;
use lucent::kernels::correlate_tiled::{self, Tiling};

use lucent::kernels::boundary::Boundary;
use lucent::ops::convolve::{self, cpu, Method, Mode};
use lucent::ops::filter::{self, cpu as filter_cpu};
use lucent::{Buf, Error, Gpu, Recording};
use ndarray::{ArrayD, IxDyn};

const TOL: f64 = 1e-6;

const BOUNDARIES: [Boundary; 6] = [Boundary::Constant(0.0), Boundary::Constant(0.7), Boundary::Nearest, Boundary::Reflect, Boundary::Mirror, Boundary::Wrap];

/// Error relative to Σ|w||x| (see the module's comment).
fn check(got: &ArrayD<f32>, want: &ArrayD<f64>, magnitude: &ArrayD<f64>, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    assert!(got.iter().all(|v| v.is_finite()), "{what}: non-finite output (an element left unwritten?)");
    let err: f64 = got.iter().zip(want).map(|(&g, &w)| (g as f64 - w).powi(2)).sum::<f64>().sqrt();
    let scale: f64 = magnitude.iter().map(|m| m * m).sum::<f64>().sqrt();
    assert!(err <= TOL * scale, "{what}: error {:e} relative to Σ|w||x|", err / scale);
}

fn run_gpu(x: &ArrayD<f32>, f: impl FnOnce(&mut Recording, Buf) -> Result<Buf, Error>) -> Result<ArrayD<f32>, Error> {
    run_gpu_kernels(x, f).map(|(y, _)| y)
}

/// The GPU of this binary with every run profiled, so that `RunReport::nodes` names each
/// dispatch's kernel.
fn profiled() -> &'static Gpu {
    let g = profiled_gpu();
    assert!(g.has_timestamps(), "these tests read the dispatched kernels from the profile, which needs timestamp queries");
    g
}

/// Records `f` on an uploaded (poisoned-temporaries) recording; its result and the names of the
/// kernels the run dispatched.
fn run_gpu_kernels(x: &ArrayD<f32>, f: impl FnOnce(&mut Recording, Buf) -> Result<Buf, Error>) -> Result<(ArrayD<f32>, Vec<String>), Error> {
    let mut rec = Recording::new(profiled());
    rec.set_poison(true);
    let xb = rec.upload_f32(&x.view())?;
    let y = f(&mut rec, xb)?;
    let d = rec.download(y);
    let results = rec.run()?;
    let kernels: Vec<String> = results.report.nodes.iter().map(|n| n.label.clone()).collect();
    assert!(!kernels.is_empty(), "no profile: the GPU was not opened with profiling");
    Ok((results.f32(d)?, kernels))
}

/// Which direct-correlation kernel a run dispatched: `Some(true)` tiled, `Some(false)` window,
/// `None` neither (the FFT path).
fn tiled(kernels: &[String]) -> Option<bool> {
    let tiled = kernels.iter().any(|k| k == "correlate_tiled");
    let window = kernels.iter().any(|k| k == "correlate_window");
    assert!(!(tiled && window), "both correlation kernels dispatched: {kernels:?}");
    (tiled || window).then_some(tiled)
}

/// ndimage.correlate through the tiled kernel itself (origin -m/2, output shaped like x).
fn tiled_correlate(x: &ArrayD<f32>, k: &ArrayD<f32>, b: Boundary, tiling: Option<Tiling>) -> Result<ArrayD<f32>, Error> {
    let origin: Vec<i64> = k.shape().iter().map(|&m| -((m / 2) as i64)).collect();
    run_gpu(x, |rec, xb| match tiling {
        Some(t) => correlate_tiled::record_with(rec, xb, &k.view(), x.shape(), &origin, b, t),
        None => correlate_tiled::record(rec, xb, &k.view(), x.shape(), &origin, b),
    })
}

fn check_correlate(xd: &[usize], kd: &[usize], boundaries: &[Boundary], tiling: Option<Tiling>) {
    let (x, k) = (rand_array(xd), rand_array(kd));
    let (x64, k64) = (to64(&x), to64(&k));
    let (xa, ka) = (x64.mapv(f64::abs), k64.mapv(f64::abs));
    for &b in boundaries {
        let got = tiled_correlate(&x, &k, b, tiling).unwrap();
        let (want, magnitude) = (filter_cpu::correlate(&x64, &k64, b), filter_cpu::correlate(&xa, &ka, abs_boundary(b)));
        check(&got, &want, &magnitude, &format!("tiled {xd:?} ⋆ {kd:?} {b:?} {tiling:?}"));
    }
}

#[test]
fn tiled_matches_reference_on_awkward_shapes() {
    // 1-4D; a single element; primes; even kernel axes; a kernel larger than the input; a
    // kernel longer than one row of tile; a single-row input.
    let cases: &[(&[usize], &[usize])] = &[
        (&[1021], &[13]),
        (&[1], &[5]),
        (&[7], &[3]),
        (&[17, 31], &[5, 7]),
        (&[64, 129], &[3, 4]),
        (&[3, 5], &[7, 9]),
        (&[1, 300], &[1, 11]),
        (&[5, 6, 7], &[2, 3, 3]),
        (&[9, 20, 33], &[3, 5, 6]),
        (&[2, 3, 5, 7], &[3, 2, 3, 5]),
        (&[5, 1, 13, 4], &[3, 1, 5, 3]),
    ];
    for &(xd, kd) in cases {
        check_correlate(xd, kd, &BOUNDARIES, None);
    }
}

/// The 4D denoising kernels (7⁴ and 11⁴) on small volumes: every slow tap reloads a plane.
#[test]
fn tiled_4d_denoising_kernels() {
    check_correlate(&[3, 4, 9, 20], &[7, 7, 7, 7], &BOUNDARIES, None);
    check_correlate(&[2, 3, 6, 16], &[11, 11, 11, 11], &[Boundary::Reflect, Boundary::Constant(0.3)], None);
}

/// Tilings forced small: kernel rows in chunks of 1-3, several tiles along x and y, narrow and
/// wide rows of threads.
#[test]
fn forced_tilings_chunk_kernel_rows() {
    let (xd, kd): (&[usize], &[usize]) = (&[2, 37, 45], &[3, 7, 6]);
    for (threads_x, chunk) in [(1, 1), (2, 3), (4, 2), (8, 7), (32, 1), (256, 3)] {
        let tiling = Tiling::new(threads_x, chunk, kd);
        check_correlate(xd, kd, &[Boundary::Mirror, Boundary::Constant(-0.4), Boundary::Wrap], Some(tiling));
    }
}

/// The planner stays within the memory it is given and fits a whole chunk; halos that cannot
/// fit get no plan.
#[test]
fn plans_fit_the_budget() {
    for (out, k) in [(vec![20, 64, 64, 64], vec![11, 11, 11, 11]), (vec![4096, 4096], vec![63, 63]), (vec![1021], vec![13]), (vec![3, 5], vec![7, 9])] {
        for memory in [16384u32, 32768, 49152] {
            let t = Tiling::plan(&out, &k, memory).unwrap();
            let rows = 256 / t.threads_x;
            let needed = (rows + t.chunk_rows - 1) * (2 * t.threads_x + k.last().unwrap().div_ceil(4) as u32);
            assert!(needed <= t.tile_vec4s && t.tile_vec4s * 16 <= memory, "{out:?} {k:?} {memory}: {t:?}");
            let kernel_rows = if k.len() > 1 { k[k.len() - 2] } else { 1 };
            assert!(t.chunk_rows >= 1 && t.chunk_rows as usize <= kernel_rows, "{t:?}");
        }
    }
    // 11⁴ on 64³ rows: one load per slow tap (all 11 kernel rows at once).
    assert_eq!(Tiling::plan(&[20, 64, 64, 64], &[11, 11, 11, 11], 32768).unwrap().chunk_rows, 11);
    assert_eq!(Tiling::plan(&[100], &[40000], 32768), None);
    assert!(correlate_tiled::pays(&[7, 7, 7, 7]) && correlate_tiled::pays(&[1, 15]) && !correlate_tiled::pays(&[15, 1]));
}

/// ops::convolve's ndimage filters and scipy.signal's direct method route through the tiled
/// kernel when it pays (and never the window kernel); the results are the references'.
#[test]
fn ops_use_the_tiled_path() {
    let (x, k) = (rand_array(&[4, 19, 40]), rand_array(&[3, 5, 4]));
    let (x64, k64) = (to64(&x), to64(&k));
    let (xa, ka) = (x64.mapv(f64::abs), k64.mapv(f64::abs));
    let tiled_run = |what: &str, f: &dyn Fn(&mut Recording, Buf) -> Result<Buf, Error>| {
        let (got, kernels) = run_gpu_kernels(&x, f).unwrap();
        assert_eq!(tiled(&kernels), Some(true), "{what}: dispatched {kernels:?}, not the tiled kernel");
        got
    };
    for b in [Boundary::Reflect, Boundary::Constant(0.2)] {
        let got = tiled_run(&format!("correlate {b:?}"), &|rec, xb| filter::correlate(rec, xb, &k.view(), b));
        check(&got, &filter_cpu::correlate(&x64, &k64, b), &filter_cpu::correlate(&xa, &ka, abs_boundary(b)), &format!("correlate {b:?}"));
        let got = tiled_run(&format!("convolve {b:?}"), &|rec, xb| filter::convolve(rec, xb, &k.view(), b));
        check(&got, &filter_cpu::convolve(&x64, &k64, b), &filter_cpu::convolve(&xa, &ka, abs_boundary(b)), &format!("convolve {b:?}"));
    }
    for mode in [Mode::Full, Mode::Same, Mode::Valid] {
        let got = tiled_run(&format!("signal_convolve {mode:?}"), &|rec, xb| convolve::signal_convolve(rec, xb, &k.view(), mode, Method::Direct));
        let want = cpu::signal_convolve(&x64, &k64, mode).unwrap();
        check(&got, &want, &cpu::signal_convolve(&xa, &ka, mode).unwrap(), &format!("signal_convolve {mode:?}"));
        let got = tiled_run(&format!("signal_correlate {mode:?}"), &|rec, xb| convolve::signal_correlate(rec, xb, &k.view(), mode, Method::Direct));
        let want = cpu::signal_correlate(&x64, &k64, mode).unwrap();
        check(&got, &want, &cpu::signal_correlate(&xa, &ka, mode).unwrap(), &format!("signal_correlate {mode:?}"));
    }
}

#[test]
fn bad_input_is_reported() {
    let x = rand_array(&[6, 5]);
    let k = rand_array(&[3, 3]);
    let line = rand_array(&[3]);
    let shape = |r: Result<ArrayD<f32>, Error>| matches!(r, Err(Error::Shape(_)));
    assert!(shape(run_gpu(&x, |rec, xb| correlate_tiled::record(rec, xb, &line.view(), &[6, 5], &[-1, -1], Boundary::Wrap))));
    assert!(shape(run_gpu(&x, |rec, xb| correlate_tiled::record(rec, xb, &k.view(), &[6], &[-1], Boundary::Wrap))));
    // A tiling larger than the adapter's workgroup memory, or too small for its chunk.
    let huge = Tiling { threads_x: 8, chunk_rows: 1, tile_vec4s: gpu().workgroup_memory_bytes() / 16 + 256 };
    let small = Tiling { threads_x: 8, chunk_rows: 3, tile_vec4s: 16 };
    for t in [huge, small] {
        let r = run_gpu(&x, |rec, xb| correlate_tiled::record_with(rec, xb, &k.view(), &[6, 5], &[-1, -1], Boundary::Wrap, t));
        assert!(matches!(r, Err(Error::Invalid(_))), "{t:?}");
    }
    // A halo wider than workgroup memory: no plan, a clear error (callers fall back).
    let long = ArrayD::from_elem(IxDyn(&[1, 200_000]), 0.5f32);
    let r = run_gpu(&x, |rec, xb| correlate_tiled::record(rec, xb, &long.view(), &[6, 5], &[0, 0], Boundary::Wrap));
    assert!(matches!(r, Err(Error::Invalid(_))));
    // The ops fall back to the window kernel for it.
    let long_w = ArrayD::from_shape_vec(IxDyn(&[1, 9000]), random(9000)).unwrap();
    let got = run_gpu(&x, |rec, xb| filter::correlate(rec, xb, &long_w.view(), Boundary::Wrap)).unwrap();
    let (x64, k64) = (to64(&x), to64(&long_w));
    check(
        &got,
        &filter_cpu::correlate(&x64, &k64, Boundary::Wrap),
        &filter_cpu::correlate(&x64.mapv(f64::abs), &k64.mapv(f64::abs), Boundary::Wrap),
        "long kernel falls back",
    );
}

/// The ops choose the axis kernel for weights along one axis other than the last (the separable
/// passes), else the tiled kernel exactly where `correlate_tiled` says it pays: at least 3 taps
/// along the contiguous axis and at least `MIN_PLANE_TAPS` in the plane of the last two axes,
/// with a halo that fits workgroup memory; the window kernel everywhere else. Checked against the
/// kernel each run dispatched, for kernels on both sides of each threshold, 1-4D.
#[test]
fn tiled_exactly_where_it_pays() {
    let kernels: &[&[usize]] = &[
        &[2],
        &[3],
        &[8],
        &[9],
        &[13],
        &[1, 2],
        &[1, 8],
        &[1, 9],
        &[1, 15],
        &[15, 1],
        &[9, 2],
        &[2, 4],
        &[2, 5],
        &[3, 3],
        &[3, 2],
        &[4, 3],
        &[5, 1, 1],
        &[3, 1, 9],
        &[2, 3, 3],
        &[2, 2, 4],
        &[2, 1, 3, 3],
        &[1, 2, 1, 9],
        // A halo wider than workgroup memory: the window kernel whatever the taps.
        &[1, 9000],
    ];
    let (mut seen_tiled, mut seen_window, mut seen_axis) = (false, false, false);
    for &kd in kernels {
        let xd: Vec<usize> = match kd.len() {
            1 => vec![300],
            2 => vec![6, 40],
            3 => vec![3, 5, 12],
            _ => vec![2, 3, 4, 10],
        };
        let (x, k) = (rand_array(&xd), rand_array(kd));
        let x_taps = kd[kd.len() - 1];
        let plane = x_taps * if kd.len() > 1 { kd[kd.len() - 2] } else { 1 };
        let claimed = x_taps >= 3 && plane >= correlate_tiled::MIN_PLANE_TAPS;
        assert_eq!(correlate_tiled::pays(kd), claimed, "pays({kd:?})");
        let fits = Tiling::for_gpu(profiled(), &xd, kd).is_some();
        for b in [Boundary::Nearest, Boundary::Constant(0.3)] {
            let (got, dispatched) = run_gpu_kernels(&x, |rec, xb| filter::correlate(rec, xb, &k.view(), b)).unwrap();
            // Weights along one slow axis go to the axis kernel; else tiled exactly where it pays.
            let origin: Vec<i64> = kd.iter().map(|&m| -((m / 2) as i64)).collect();
            let along = correlate_axis::axis_of(&xd, kd, &xd, &origin).is_some();
            let one_axis = kd.iter().filter(|&&m| m > 1).count() == 1;
            assert_eq!(along, one_axis && (kd[kd.len() - 1] == 1 || !claimed), "axis_of({kd:?})");
            let want = if along {
                "correlate_axis"
            } else if claimed && fits {
                "correlate_tiled"
            } else {
                "correlate_window"
            };
            let direct: Vec<&String> = dispatched.iter().filter(|k| k.starts_with("correlate_")).collect();
            assert_eq!(direct, [want], "{xd:?} ⋆ {kd:?} {b:?}: dispatched {dispatched:?}");
            let (x64, k64) = (to64(&x), to64(&k));
            let magnitude = filter_cpu::correlate(&x64.mapv(f64::abs), &k64.mapv(f64::abs), abs_boundary(b));
            check(&got, &filter_cpu::correlate(&x64, &k64, b), &magnitude, &format!("{xd:?} ⋆ {kd:?} {b:?}"));
        }
        let along = kd.iter().filter(|&&m| m > 1).count() == 1 && (kd[kd.len() - 1] == 1 || !claimed);
        seen_tiled |= claimed && fits && !along;
        seen_window |= !(along || claimed && fits);
        seen_axis |= along;
    }
    assert!(seen_tiled && seen_window && seen_axis, "the cases must reach the three kernels");
}

/// The axis kernel (`correlate_axis`: eight outputs a thread from shared loads) gives the window
/// kernel's sums bit for bit: 1-4D awkward shapes, every axis (the last with short windows), outputs not a multiple of
/// eight, 'same', 'full' and 'valid' windows along the axis, every boundary, poisoned
/// temporaries; and the f64 twin where the device has it.
#[test]
fn axis_kernel_equals_the_window_kernel() {
    use lucent::kernels::correlate_window;
    let gpu = poisoned_gpu();
    // (20 × 23 × 17: 391 columns across axis 0, two workgroups of 256 a run.)
    for xd in [vec![37usize, 5], vec![9, 13, 7], vec![3, 17, 4, 6], vec![300, 2], vec![301], vec![20, 23, 17]] {
        for axis in 0..xd.len() {
            // Along the last axis only below the tiled kernel's threshold.
            let taps_here: &[usize] = if axis + 1 < xd.len() { &[2, 3, 15, 40] } else { &[2, 3, 5, 8] };
            for &taps in taps_here {
                let n = xd[axis];
                let x = rand_array(&xd);
                let w = rand_array(&[taps]);
                // (output length, origin): same, full, valid where it exists.
                let mut windows = vec![(n, -((taps / 2) as i64)), (n + taps - 1, -(taps as i64 - 1))];
                if n >= taps {
                    windows.push((n - taps + 1, 0));
                }
                for (len, o) in windows {
                    let mut out = xd.clone();
                    out[axis] = len;
                    let mut k_dims = vec![1; xd.len()];
                    k_dims[axis] = taps;
                    let mut origin = vec![0i64; xd.len()];
                    origin[axis] = o;
                    assert_eq!(correlate_axis::axis_of(&xd, &k_dims, &out, &origin), Some(axis));
                    for b in BOUNDARIES {
                        for dtype in [lucent::Dtype::F32, lucent::Dtype::F64] {
                            if dtype == lucent::Dtype::F64 && !gpu.has_f64() {
                                continue;
                            }
                            let mut rec = Recording::new(gpu);
                            rec.set_poison(true);
                            let xb = rec.upload_as(&to64(&x).view(), dtype).unwrap();
                            let wb = rec.upload_as(&to64(&w).view(), dtype).unwrap();
                            let w4 = rec.upload_as(&to64(&w).into_shape_with_order(IxDyn(&k_dims)).unwrap().view(), dtype).unwrap();
                            let along = correlate_axis::record(&mut rec, xb, wb, axis, &out, o, b).unwrap();
                            let window = correlate_window::record(&mut rec, xb, w4, &out, &origin, b).unwrap();
                            let (da, dw) = (rec.download(along), rec.download(window));
                            let mut results = rec.run().unwrap();
                            let (got, want): (ArrayD<f64>, ArrayD<f64>) = match dtype {
                                lucent::Dtype::F64 => (results.take_real(da).unwrap(), results.take_real(dw).unwrap()),
                                _ => (to64(&results.take_f32(da).unwrap()), to64(&results.take_f32(dw).unwrap())),
                            };
                            assert_eq!(got, want, "{xd:?} axis {axis}, {taps} taps, output {out:?} from {o}, {b:?}, {dtype:?}");
                        }
                    }
                }
            }
        }
    }
    // Refused where it does not apply: the last axis where the tiled kernel pays, two axes, a
    // touched other axis, too many taps.
    let x = rand_array(&[6, 40]);
    assert_eq!(correlate_axis::axis_of(&[6, 40], &[1, 9], &[6, 40], &[0, -4]), None);
    assert_eq!(correlate_axis::axis_of(&[6, 40], &[3, 5], &[6, 40], &[-1, -2]), None);
    assert_eq!(correlate_axis::axis_of(&[6, 40], &[3, 1], &[6, 39], &[-1, 0]), None);
    assert_eq!(correlate_axis::axis_of(&[600, 4], &[300, 1], &[600, 4], &[-150, 0]), None);
    let mut rec = Recording::new(gpu);
    let xb = rec.upload_f32(&x.view()).unwrap();
    let wb = rec.upload_f32(&rand_array(&[5]).view()).unwrap();
    assert!(correlate_axis::record(&mut rec, xb, wb, 0, &[6, 39], -2, Boundary::Wrap).is_err());
}
