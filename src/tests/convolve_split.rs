//! The split convolution (ops::convolve::split): split == whole == the f64 direct reference, for
//! every mode, 1-4 axes, odd and prime shapes, kernels longer than a part along axis 0, P forced
//! and P chosen from a lowered budget; and the bad inputs. Fresh random inputs, temporaries
//! poisoned (NaN).
//!
//! Tolerances (relative L2 over the output):
//! - The algebra in f64 (`split::reference`), 1e-12: f64 transforms and twiddles err by ~1e-16
//!   times log N; any wrong twiddle, index or weight is an O(1) error.
//! - The GPU split, 1e-6, as the whole FFT path (tests/convolve.rs): f32 transforms err by a few
//!   f32 epsilons (6e-8) times log N, ~1e-7; the fold and the recombination add at most P f32
//!   roundings of terms no larger than the result (each part is a decimated copy of it, of norm
//!   ~√P times the result's, weighted by 1/P), ~2e-7 for P ≤ 4.

use crate::tests::common;
use common::*;

use lucent::gpu::GpuOptions;
use lucent::ops::convolve::split::{self, SplitOptions};
use lucent::ops::convolve::{self, cpu, Mode};
use lucent::{Error, Gpu};
use ndarray::{ArrayD, IxDyn};

const TOL: f64 = 1e-6;
const MODES: [Mode; 3] = [Mode::Full, Mode::Same, Mode::Valid];

/// (image, kernel): 1-4 axes, primes and odd lengths, kernels longer than M = N/P along axis 0
/// for P ≥ 3 (13 ⊛ 9: N ≥ 21), and a kernel larger than the image everywhere (valid mode).
const CASES: &[(&[usize], &[usize])] = &[(&[23], &[5]), (&[13, 7], &[9, 3]), (&[4, 3], &[7, 5]), (&[11, 6, 5], &[3, 4, 2]), (&[5, 3, 4, 6], &[4, 2, 3, 3])];

fn rel_err64(got: &ArrayD<f64>, want: &ArrayD<f64>) -> f64 {
    let num: f64 = got.iter().zip(want).map(|(g, w)| (g - w).powi(2)).sum();
    let den: f64 = want.iter().map(|w| w * w).sum();
    (num / den).sqrt()
}

fn check(got: &ArrayD<f32>, want: &ArrayD<f64>, what: &str) {
    assert_rel_l2(got, want, TOL, what);
}

/// Valid mode needs one array at least as large as the other on every axis.
fn valid_applies(a: &[usize], k: &[usize]) -> bool {
    a.iter().zip(k).all(|(x, y)| x >= y) || a.iter().zip(k).all(|(x, y)| y >= x)
}

fn forced(parts: usize) -> SplitOptions {
    SplitOptions { parts: Some(parts), poison: true, ..Default::default() }
}

#[test]
fn algebra_in_f64_matches_direct_sums() {
    for &(ad, kd) in CASES {
        let (a, k) = (to64(&rand_array(ad)), to64(&rand_array(kd)));
        for mode in MODES.into_iter().filter(|&m| m != Mode::Valid || valid_applies(ad, kd)) {
            let want = cpu::signal_convolve(&a, &k, mode).unwrap();
            let g = convolve::Geometry::new(ad, kd, mode).unwrap();
            for parts in [1, 2, 3, 4, 5, 8].into_iter().filter(|&p| p <= split::max_parts(&g)) {
                let got = split::reference(&a.view(), &k.view(), mode, parts).unwrap();
                let err = rel_err64(&got, &want);
                assert!(err < 1e-12, "{ad:?} ⊛ {kd:?} {mode:?} P={parts}: error {err:e}");
            }
        }
    }
}

#[test]
fn plans_split_axis_0_into_fast_parts() {
    // 256 ⊛ 31 'same' needs 271 circular samples along axis 0 (start 15 + 256 out).
    let g = convolve::Geometry::new(&[256, 40, 30], &[31, 5, 5], Mode::Same).unwrap();
    assert_eq!(split::max_parts(&g), 271);
    for parts in 1..=20 {
        let plan = split::SplitPlan::new(&g, parts).unwrap();
        let m = plan.part_len;
        assert_eq!(plan.len, parts * m);
        assert_eq!(m, lucent::fft::plan::smooth_at_least(271usize.div_ceil(parts)), "P = {parts}: the shortest fast M with P·M ≥ 271");
        assert_eq!(&plan.part_dims[1..], &g.padded[1..]);
        assert_eq!(plan.computed_parts().count(), parts / 2 + 1);
        let counted: f64 = plan.computed_parts().map(|p| plan.weight(p)).sum();
        assert_eq!(counted, parts as f64, "every part counted once, mirrors included");
    }
    assert!(split::SplitPlan::new(&g, 0).is_err() && split::SplitPlan::new(&g, 272).is_err());
}

#[test]
fn host_loops_cut_rows_between_threads() {
    // Parts and outputs of 31,500 elements in rows of 3,500: the host loops cut them into 4
    // ranges of 7,875, which begin and end inside rows.
    let (a, k) = (to64(&rand_array(&[9, 70, 50])), to64(&rand_array(&[4, 5, 3])));
    let want = cpu::signal_convolve(&a, &k, Mode::Same).unwrap();
    for parts in [2, 3] {
        let got = split::reference(&a.view(), &k.view(), Mode::Same, parts).unwrap();
        assert!(rel_err64(&got, &want) < 1e-12, "P = {parts}: error {:e}", rel_err64(&got, &want));
    }
    // Output rows of 9,000 and one part row (P = N): the recombination cuts each part row into
    // column ranges (2 ranges of 4,500) for the threads.
    let (a, k) = (to64(&rand_array(&[4, 90, 100])), to64(&rand_array(&[2, 3, 3])));
    let want = cpu::signal_convolve(&a, &k, Mode::Same).unwrap();
    let g = convolve::Geometry::new(a.shape(), k.shape(), Mode::Same).unwrap();
    let parts = split::max_parts(&g);
    let got = split::reference(&a.view(), &k.view(), Mode::Same, parts).unwrap();
    assert!(rel_err64(&got, &want) < 1e-12, "P = {parts}: error {:e}", rel_err64(&got, &want));
}

#[test]
fn fold_into_reused_buffers_overwrites_them() {
    // The pipeline folds into the slabs of earlier parts: NaN-filled spares (and one of another
    // length, which must be left alone) give exactly the parts folded into fresh buffers.
    let a = rand_array(&[37, 11, 13]);
    let g = convolve::Geometry::new(a.shape(), &[5, 3, 3], Mode::Full).unwrap();
    let plan = split::SplitPlan::new(&g, 5).unwrap();
    let len: usize = plan.slab_dims(a.shape()).iter().product();
    let nan = num_complex::Complex32::new(f32::NAN, f32::NAN);
    let mut spare = vec![vec![nan; len + 1], vec![nan; len], vec![nan; len]];
    let got = split::fold_reusing(&a.view(), &plan, &[0, 1, 2], &mut spare);
    assert_eq!(got, split::fold(&a.view(), &plan, &[0, 1, 2]));
    assert_eq!(spare.len(), 0, "both spares of the right length used, the other dropped");
}

#[test]
fn forced_splits_match_the_reference() {
    for &(ad, kd) in CASES {
        let (a, k) = (rand_array(ad), rand_array(kd));
        for mode in MODES.into_iter().filter(|&m| m != Mode::Valid || valid_applies(ad, kd)) {
            let want = cpu::signal_convolve(&to64(&a), &to64(&k), mode).unwrap();
            for parts in [2, 3, 4] {
                let (got, report) = split::convolve_split(std::slice::from_ref(gpu()), &a.view(), &k.view(), mode, &forced(parts)).unwrap();
                let what = format!("{ad:?} ⊛ {kd:?} {mode:?} P={parts}");
                check(&got, &want, &what);
                assert_eq!((report.parts, report.computed_parts, report.per_part.len()), (parts, parts / 2 + 1, parts / 2 + 1), "{what}");
                assert_eq!(report.padded_len, parts * report.part_len, "{what}");
            }
        }
    }
}

#[test]
fn one_row_per_part() {
    // P = N: parts of M = 1 row (length-1 transforms along axis 0).
    let (a, k) = (rand_array(&[5, 6]), rand_array(&[2, 3]));
    let g = convolve::Geometry::new(a.shape(), k.shape(), Mode::Full).unwrap();
    let parts = split::max_parts(&g);
    let (got, report) = split::convolve_split(std::slice::from_ref(gpu()), &a.view(), &k.view(), Mode::Full, &forced(parts)).unwrap();
    assert_eq!((report.parts, report.part_len), (6, 1));
    check(&got, &cpu::signal_convolve(&to64(&a), &to64(&k), Mode::Full).unwrap(), "one row per part");
}

#[test]
fn one_part_is_the_whole_path() {
    let (a, k) = (rand_array(&[9, 14, 5]), rand_array(&[4, 3, 3]));
    for mode in MODES {
        let whole = convolve::convolve_host(gpu(), &a.view(), &k.view(), mode).unwrap();
        for opts in [forced(1), SplitOptions::default()] {
            let (got, report) = split::convolve_split(std::slice::from_ref(gpu()), &a.view(), &k.view(), mode, &opts).unwrap();
            assert_eq!(report.parts, 1, "{mode:?}: everything fits, no split");
            assert_eq!(got, whole, "{mode:?}: the whole path must give convolve_host's numbers");
        }
    }
}

#[test]
fn parts_chosen_from_a_memory_budget() {
    let (a, k) = (rand_array(&[60, 10, 9]), rand_array(&[7, 3, 4]));
    let want = cpu::signal_convolve(&to64(&a), &to64(&k), Mode::Same).unwrap();
    let gpus = std::slice::from_ref(gpu());
    let (_, whole) = split::convolve_split(gpus, &a.view(), &k.view(), Mode::Same, &SplitOptions::default()).unwrap();
    let budget = whole.peak_bytes / 4;
    let opts = SplitOptions { max_part_bytes: Some(budget), in_flight: Some(1), poison: true, ..Default::default() };
    let (got, report) = split::convolve_split(gpus, &a.view(), &k.view(), Mode::Same, &opts).unwrap();
    check(&got, &want, "budget of 1/4 of the whole run");
    assert!(report.parts > 1 && report.peak_bytes <= budget, "P = {}, peak {} > budget {budget}", report.parts, report.peak_bytes);
}

/// The device memory budget (`GpuOptions::device_memory_bytes`, LUCENT_DEVICE_MEMORY_BYTES)
/// bounds the split as the buffer limit does: with no budget per part asked, the whole run does
/// not fit a third of its peak, and every part's working set fits the budget, however many parts
/// are asked in flight (a GPU holds only those its budget has room for).
#[test]
fn parts_fit_the_device_memory_budget() {
    let (a, k) = (rand_array(&[60, 10, 9]), rand_array(&[7, 3, 4]));
    let want = cpu::signal_convolve(&to64(&a), &to64(&k), Mode::Same).unwrap();
    let (_, whole) = split::convolve_split(std::slice::from_ref(gpu()), &a.view(), &k.view(), Mode::Same, &SplitOptions::default()).unwrap();
    assert_eq!(whole.parts, 1);
    let memory = whole.peak_bytes / 3;
    let small = common::open(GpuOptions { device_memory_bytes: Some(memory), ..GpuOptions::from_env().unwrap() });
    assert_eq!(small.memory_budget_bytes(), memory);
    for in_flight in [None, Some(1), Some(3)] {
        let opts = SplitOptions { in_flight, poison: true, ..Default::default() };
        let (got, report) = split::convolve_split(std::slice::from_ref(&small), &a.view(), &k.view(), Mode::Same, &opts).unwrap();
        let what = format!("device memory {memory} bytes, {in_flight:?} in flight: P = {}", report.parts);
        check(&got, &want, &what);
        assert!(report.parts > 1 && report.per_part.len() == report.computed_parts, "{what}");
        for part in &report.per_part {
            assert!(part.peak_bytes > 0 && part.peak_bytes <= memory, "{what}: part {} holds {} bytes", part.part, part.peak_bytes);
        }
    }
    // A budget below every part's working set is an error naming it, not a part run beyond it.
    let tiny = common::open(GpuOptions { device_memory_bytes: Some(256), ..GpuOptions::from_env().unwrap() });
    let e = split::convolve_split(std::slice::from_ref(&tiny), &a.view(), &k.view(), Mode::Same, &SplitOptions::default()).unwrap_err();
    assert!(matches!(e, Error::TooLarge { .. }) && e.to_string().contains("device memory budget 256"), "{e}");
}

#[test]
fn parts_chosen_from_a_lowered_buffer_limit() {
    let (a, k) = (rand_array(&[48, 16, 10]), rand_array(&[5, 5, 3]));
    let mut small = Gpu::new().unwrap();
    // Half the padded real volume: the whole run's spectrum does not fit, a part of it does.
    let g = convolve::Geometry::new(a.shape(), k.shape(), Mode::Full).unwrap();
    let limit = g.padded.iter().product::<usize>() as u64 * 2;
    small.lower_max_buffer_bytes(limit);
    let (got, report) =
        split::convolve_split(std::slice::from_ref(&small), &a.view(), &k.view(), Mode::Full, &SplitOptions { poison: true, ..Default::default() }).unwrap();
    check(&got, &cpu::signal_convolve(&to64(&a), &to64(&k), Mode::Full).unwrap(), "lowered buffer limit");
    assert!(report.parts > 1, "the whole run should not fit {limit} bytes per buffer");
    assert_eq!(report.adapters, vec![format!("{}: {}", small.summary().index, small.summary().name)]);
}

#[test]
fn parts_spread_over_two_devices() {
    // Two devices on the one test adapter stand in for two GPUs, with three parts in flight on
    // each (more workers than parts): every worker pulls parts from the one queue.
    let gpus = [Gpu::new().unwrap(), Gpu::new().unwrap()];
    let (a, k) = (rand_array(&[30, 9, 8]), rand_array(&[6, 4, 3]));
    let done = std::sync::Mutex::new(Vec::new());
    let progress = |p: lucent::signal::Progress| done.lock().unwrap().push((p.done, p.total));
    let opts = SplitOptions { in_flight: Some(3), ..forced(6) };
    let (got, report) = split::convolve_split_with_progress(&gpus, &a.view(), &k.view(), Mode::Same, &opts, &progress).unwrap();
    check(&got, &cpu::signal_convolve(&to64(&a), &to64(&k), Mode::Same).unwrap(), "two devices, P = 6");
    assert_eq!(*done.lock().unwrap(), vec![(1, 4), (2, 4), (3, 4), (4, 4)]);
    let mut parts: Vec<usize> = report.per_part.iter().map(|p| p.part).collect();
    parts.sort();
    assert_eq!(parts, vec![0, 1, 2, 3]);
    assert!(report.per_part.iter().all(|p| p.worker < 2));
}

#[test]
fn bad_input_is_an_error() {
    let gpus = std::slice::from_ref(gpu());
    let (a, mut k) = (rand_array(&[8, 8]), rand_array(&[3, 3]));
    let no = SplitOptions::default();
    k[[1, 1]] = f32::NAN;
    assert!(matches!(split::convolve_split(gpus, &a.view(), &k.view(), Mode::Same, &no), Err(Error::NonFinite(_))));
    let k = rand_array(&[3, 3]);
    let empty = ArrayD::<f32>::zeros(IxDyn(&[0, 8]));
    assert!(matches!(split::convolve_split(gpus, &empty.view(), &k.view(), Mode::Same, &no), Err(Error::Empty(_))));
    // 64 bytes cannot hold even one row of 8 × 8 complex samples.
    let tiny = SplitOptions { max_part_bytes: Some(64), ..Default::default() };
    let e = split::convolve_split(gpus, &a.view(), &k.view(), Mode::Same, &tiny).unwrap_err();
    assert!(matches!(e, Error::TooLarge { .. }) && e.to_string().contains("one part"), "{e}");
    assert!(matches!(split::convolve_split(gpus, &a.view(), &k.view(), Mode::Same, &forced(0)), Err(Error::Invalid(_))));
    assert!(matches!(split::convolve_split(&[], &a.view(), &k.view(), Mode::Same, &no), Err(Error::Invalid(_))));
}
