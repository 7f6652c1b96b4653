//! FFT passes whose workgroups loop over several line groups, loading the next group's first
//! stage while they transform the current one. They loop only with many groups (large arrays);
//! this test opens a GPU tuned with `min_threads: Some(1)` so that every looping pass does at
//! every size, then checks each kind of pass against the f64 reference (as tests/fft.rs): contiguous and
//! strided lines, in place or not, Rader, Bluestein, four-step and split-exchange axes, real
//! transforms two lines to a complex one, and a convolution (padding, spectrum product and crop
//! fused).

use crate::tests::common;
use common::fft_check::*;
use common::*;

use lucent::fft::{plan, Norm};
use lucent::gpu::{GpuOptions, Tuning};
use lucent::ops::convolve::{self, cpu, Mode};
use ndarray::{ArrayD, IxDyn};

#[test]
fn looping_workgroups_every_kind_of_pass() {
    let tuning = Tuning { min_threads: Some(1), loops: Some(4), ..Default::default() };
    let gpu = &open(GpuOptions { tuning, ..GpuOptions::from_env().expect("valid LUCENT_* variables") });
    // Contiguous lines of 4096 (256 threads), strided columns of 512 and 375, 3D all axes.
    check_c2c(gpu, &[9, 4096], &[1], false, Norm::Backward);
    check_c2c(gpu, &[512, 21], &[0], true, Norm::Ortho);
    check_c2c(gpu, &[13, 375, 9], &[0, 1, 2], false, Norm::Forward);
    check_c2c(gpu, &[40, 243, 11], &[1], true, Norm::Backward);
    // Rader (256 = 257 − 1) and Bluestein (83), strided; four-step columns; split exchange (lines; columns, lavapipe: 729).
    check_c2c(gpu, &[257, 19], &[0], false, Norm::Backward);
    check_c2c(gpu, &[83, 40], &[0], true, Norm::Backward);
    check_c2c(gpu, &[8192, 5], &[0], false, Norm::Backward);
    check_c2c(gpu, &[3, 8192], &[1], true, Norm::Backward);
    check_c2c(gpu, &[729, 20], &[0], true, Norm::Backward);
    // With MIN_THREADS=1 every transform is wide: columns of 8 elements a thread read 16 at
    // once (64 points: 8 threads a line; 100: 20).
    let limits = plan::DeviceLimits::of(gpu);
    for (n, columns) in [(64, 40), (100, 24)] {
        assert!(plan::wide_columns(n * columns, tuning));
        assert!(matches!(plan::plan_axis(n, limits, columns, true), Some(plan::AxisPlan::Single(p)) if p.batch == 16), "{n}");
        check_c2c(gpu, &[n, columns], &[0], n == 64, Norm::Backward);
        check_c2c(gpu, &[3, n, columns], &[1, 2], n == 100, Norm::Ortho);
    }
    // In place: strided and contiguous axes.
    check_in_place(gpu, &[512, 21], &[0], false, true);
    check_in_place(gpu, &[6, 4096], &[1], true, true);
    // Real transforms: even contiguous, odd (two lines per complex one), strided real axes.
    check_real(gpu, &[7, 4096], &[1], Norm::Backward);
    check_real(gpu, &[9, 1001], &[1], Norm::Ortho);
    check_real(gpu, &[375, 20], &[0], Norm::Forward);
    check_real(gpu, &[17, 257, 6], &[0, 1, 2], Norm::Backward);
    // FFT convolution: zero padding in the load, the kernel's spectrum product, the crop.
    let (a, k) = (random(300 * 41), random(25 * 7));
    let a = ArrayD::from_shape_vec(IxDyn(&[41, 300]), a).unwrap();
    let k = ArrayD::from_shape_vec(IxDyn(&[7, 25]), k).unwrap();
    let got = convolve::convolve_host(gpu, &a.view(), &k.view(), Mode::Same).unwrap();
    let want = cpu::signal_convolve(&a.mapv(|v| v as f64), &k.mapv(|v| v as f64), Mode::Same).unwrap();
    let err = rel_l2(&got.iter().copied().collect::<Vec<_>>(), &want.iter().copied().collect::<Vec<_>>());
    assert!(err <= 1e-6, "convolution: relative L2 {err:e}");
}
