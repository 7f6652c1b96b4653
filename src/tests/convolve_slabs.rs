//! FFT convolution in slabs of output rows along axis 0 (ops::convolve::overlap), each slab in
//! core on one of several GPUs (two devices on the one test adapter stand in for two GPUs):
//! every mode, convolution and correlation, 1-4 axes, prime and odd shapes, slab counts from one
//! to one row per slab, slabs that hold their arrays in chunks; against the f64 direct
//! reference (relative L2 ≤ 1e-6, as the whole FFT path). Temporaries poisoned.

use crate::tests::common;
use common::*;

use lucent::gpu::GpuOptions;
use lucent::ops::convolve::host::{self, Signal};
use lucent::ops::convolve::split::SplitOptions;
use lucent::ops::convolve::{cpu, overlap, Geometry, Method, Mode};
use lucent::Gpu;
use ndarray::ArrayD;

fn two(options: GpuOptions) -> [Gpu; 2] {
    [open(options.clone()), open(options)]
}

fn poisoned() -> GpuOptions {
    GpuOptions { poison: true, ..GpuOptions::from_env().unwrap() }
}

fn rel_err(got: &ArrayD<f32>, want: &ArrayD<f64>) -> f64 {
    assert_eq!(got.shape(), want.shape());
    rel_l2(&got.iter().copied().collect::<Vec<_>>(), &want.iter().copied().collect::<Vec<_>>())
}

fn reference(a: &ArrayD<f32>, k: &ArrayD<f32>, mode: Mode, correlate: bool) -> ArrayD<f64> {
    match correlate {
        false => cpu::signal_convolve(&to64(a), &to64(k), mode).unwrap(),
        true => cpu::signal_correlate(&to64(a), &to64(k), mode).unwrap(),
    }
}

#[test]
fn several_gpus_take_slabs_of_rows() {
    let gpus = two(poisoned());
    let cases: &[(&[usize], &[usize])] = &[(&[61, 13, 7], &[5, 3, 4]), (&[97, 31], &[9, 6]), (&[1009], &[17]), (&[23, 5, 4, 3], &[3, 2, 3, 2])];
    for &(ad, kd) in cases {
        let (a, k) = (rand_array(ad), rand_array(kd));
        for mode in [Mode::Full, Mode::Same, Mode::Valid] {
            for correlate in [false, true] {
                let op = Signal { mode, method: Method::Fft, correlate };
                let done = std::sync::Mutex::new(Vec::new());
                let progress = |p: lucent::signal::Progress| done.lock().unwrap().push((p.done, p.total));
                let (got, run) = host::convolve(&gpus, &a.view(), &k.view(), op, &SplitOptions::default(), &progress).unwrap();
                let what = format!("{ad:?} ⊛ {kd:?} {mode:?} correlate {correlate}");
                assert!(rel_err(&got, &reference(&a, &k, mode, correlate)) <= 1e-6, "{what}");
                let report = run.slabs.unwrap_or_else(|| panic!("{what}: not in slabs: {:?}", run.split));
                assert_eq!(report.slabs, 2, "{what}");
                assert_eq!(*done.lock().unwrap(), vec![(1, 2), (2, 2)], "{what}");
                let mut slabs: Vec<usize> = report.per_slab.iter().map(|s| s.slab).collect();
                slabs.sort();
                assert_eq!(slabs, vec![0, 1], "{what}");
                assert!(report.per_slab.iter().all(|s| s.worker < 2));
            }
        }
    }
}

#[test]
fn any_slab_count_matches_the_reference() {
    // From one slab to one output row per slab: the first and last slabs read fewer halo rows
    // (clipped at the image's edges), the middle ones the full halo.
    let gpus = two(poisoned());
    let (a, k) = (rand_array(&[19, 11, 6]), rand_array(&[4, 3, 5]));
    for mode in [Mode::Full, Mode::Same, Mode::Valid] {
        let want = reference(&a, &k, mode, false);
        let rows = want.shape()[0];
        for slabs in [1, 2, 3, 5, rows - 1, rows] {
            let (got, report) = overlap::convolve(&gpus, &a.view(), &k.view(), mode, slabs, &|_| {}).unwrap();
            assert_eq!(report.slabs, slabs, "{mode:?}");
            assert!(rel_err(&got, &want) <= 1e-6, "{mode:?} in {slabs} slabs");
        }
    }
}

#[test]
fn slabs_beyond_one_buffer_hold_their_arrays_in_chunks() {
    // Buffers capped at 16 KiB and a device budget below the whole run: slabs, each in chunks.
    const CAP: u64 = 16 << 10;
    let gpus = two(GpuOptions { max_buffer_bytes: Some(CAP), device_memory_bytes: Some(16 * CAP), ..poisoned() });
    let (a, k) = (rand_array(&[400, 37]), rand_array(&[7, 7]));
    let op = Signal { mode: Mode::Same, method: Method::Fft, correlate: true };
    let (got, run) = host::convolve(&gpus, &a.view(), &k.view(), op, &SplitOptions::default(), &|_| {}).unwrap();
    assert!(rel_err(&got, &reference(&a, &k, Mode::Same, true)) <= 1e-6);
    let report = run.slabs.expect("slabs");
    assert!(report.slabs >= 2 && report.per_slab.iter().any(|s| s.chunks > 1), "{report:?}");
    // The budget's slab count: each slab's in-core run within it.
    let g = Geometry::new(a.shape(), k.shape(), Mode::Same).unwrap();
    assert_eq!(overlap::slab_count(&gpus, &g, 1), Some(report.slabs));
}

#[test]
fn gpus_of_unequal_memory_share_the_slabs() {
    // One device as it is, one whose budget holds a slab of a third of the rows: slabs sized
    // for the smaller (each fits either GPU), taken by both, the result exact; with the
    // limited device alone the same count.
    let (a, k) = (rand_array(&[120, 37, 11]), rand_array(&[7, 5, 3]));
    let g = Geometry::new(a.shape(), k.shape(), Mode::Same).unwrap();
    let free = open(poisoned());
    let whole = overlap::slab_count(&[free], &g, 1).unwrap();
    assert_eq!(whole, 1);
    let third = Geometry::new(&[46, 37, 11], k.shape(), Mode::Same).unwrap();
    let budget = lucent::ops::convolve::chunked::bytes_in_core(&third.padded);
    let gpus = [open(poisoned()), open(GpuOptions { device_memory_bytes: Some(budget), ..poisoned() })];
    let count = overlap::slab_count(&gpus, &g, 1).unwrap();
    assert!(count >= 3, "{count}");
    assert_eq!(overlap::slab_count(&gpus[1..], &g, 1), Some(count));
    let op = Signal { mode: Mode::Same, method: Method::Fft, correlate: false };
    let (got, run) = host::convolve(&gpus, &a.view(), &k.view(), op, &SplitOptions::default(), &|_| {}).unwrap();
    assert!(rel_err(&got, &reference(&a, &k, Mode::Same, false)) <= 1e-6);
    let report = run.slabs.expect("slabs");
    assert_eq!(report.slabs, count);
    for worker in 0..2 {
        assert!(report.per_slab.iter().any(|s| s.worker == worker), "GPU {worker} took no slab: {report:?}");
    }
    assert!(report.per_slab.iter().all(|s| s.chunks == 1), "{report:?}");
    assert_eq!(report.budgets, vec![gpus[0].memory_budget_bytes(), budget]);
}

#[test]
fn halos_larger_than_slabs_go_to_the_split() {
    // 40 output rows, a 33-row kernel: two slabs would read 32 halo rows for 20 of their own.
    let gpus = two(poisoned());
    let (a, k) = (rand_array(&[40, 9]), rand_array(&[33, 3]));
    let g = Geometry::new(a.shape(), k.shape(), Mode::Same).unwrap();
    assert_eq!(overlap::slab_count(&gpus, &g, 1), None);
    let op = Signal { mode: Mode::Same, method: Method::Fft, correlate: false };
    let (got, run) = host::convolve(&gpus, &a.view(), &k.view(), op, &SplitOptions::default(), &|_| {}).unwrap();
    assert!(run.slabs.is_none() && run.split.is_some(), "{run:?}");
    assert!(rel_err(&got, &reference(&a, &k, Mode::Same, false)) <= 1e-6);
}

#[test]
fn one_gpu_streams_many_slabs_in_small_pieces() {
    // One GPU takes every slab in order: each slab's halo rows come from the previous slab's
    // input on the device, the rest streams up in pieces of a few KiB at an offset.
    let gpu = [open(GpuOptions { stream_piece_bytes: 4096, ..poisoned() })];
    let (a, k) = (rand_array(&[83, 17, 29]), rand_array(&[7, 4, 3]));
    for mode in [Mode::Full, Mode::Same, Mode::Valid] {
        let want = reference(&a, &k, mode, false);
        for slabs in [3, 10] {
            let (got, report) = overlap::convolve(&gpu, &a.view(), &k.view(), mode, slabs, &|_| {}).unwrap();
            assert_eq!(report.per_slab.iter().map(|s| s.slab).collect::<Vec<_>>(), (0..slabs).collect::<Vec<_>>());
            assert!(rel_err(&got, &want) <= 1e-6, "{mode:?} in {slabs} slabs");
        }
    }
}
