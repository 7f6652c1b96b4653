//! FFT convolution in core with the arrays in chunks along axis 0 (ops::convolve::chunked), on
//! a GPU whose buffers are capped at a few KiB: every mode, convolution and correlation, 2-4
//! axes, prime and odd shapes, kernels longer than a chunk, against the f64 direct reference
//! (relative L2 ≤ 1e-6, as the whole FFT path). Beyond one buffer the host entry point picks
//! streamed slabs of rows, the chunked path where the halo leaves no slabs, then the
//! host-streamed split. Temporaries poisoned.

use crate::tests::common;
use common::*;

use lucent::gpu::GpuOptions;
use lucent::ops::convolve::host::{self, Signal};
use lucent::ops::convolve::split::SplitOptions;
use lucent::ops::convolve::{chunked, cpu, Method, Mode};
use lucent::Gpu;
use ndarray::ArrayD;

const CAP: u64 = 16 << 10;

fn chunky() -> Gpu {
    open(GpuOptions { poison: true, max_buffer_bytes: Some(CAP), ..GpuOptions::from_env().unwrap() })
}

fn rel_err(got: &ArrayD<f32>, want: &ArrayD<f64>) -> f64 {
    assert_eq!(got.shape(), want.shape());
    rel_l2(&got.iter().copied().collect::<Vec<_>>(), &want.iter().copied().collect::<Vec<_>>())
}

#[test]
fn every_mode_in_chunks_matches_the_direct_reference() {
    let gpu = chunky();
    let cases: &[(&[usize], &[usize])] = &[(&[97, 23], &[13, 5]), (&[41, 17, 13], &[9, 4, 3]), (&[29, 5, 6, 7], &[31, 6, 7, 8])];
    for &(dims, kdims) in cases {
        let (a, k) = (rand_array(dims), rand_array(kdims));
        for mode in [Mode::Full, Mode::Same, Mode::Valid] {
            for correlate in [false, true] {
                let (got, chunks) = chunked::convolve(&gpu, &a.view(), &k.view(), mode, correlate).unwrap();
                let want =
                    if correlate { cpu::signal_correlate(&to64(&a), &to64(&k), mode) } else { cpu::signal_convolve(&to64(&a), &to64(&k), mode) }.unwrap();
                let err = rel_err(&got, &want);
                assert!(err <= 1e-6, "{dims:?} ⊛ {kdims:?} {mode:?} correlate={correlate} in {chunks} chunks: {err:e}");
                assert!(chunks > 1, "{dims:?}: expected chunks under a {CAP}-byte cap");
            }
        }
    }
}

#[test]
fn host_convolve_takes_slabs_then_chunks_then_the_split() {
    let gpu = chunky();
    let (a, k) = (rand_array(&[131, 31]), rand_array(&[7, 7]));
    let op = Signal { mode: Mode::Same, method: Method::Fft, correlate: false };
    let (got, run) = host::convolve(std::slice::from_ref(&gpu), &a.view(), &k.view(), op, &SplitOptions::default(), &|_| {}).unwrap();
    assert!(run.slabs.is_some() && run.split.is_none(), "{run:?}");
    let want = cpu::signal_convolve(&to64(&a), &to64(&k), Mode::Same).unwrap();
    assert!(rel_err(&got, &want) <= 1e-6);
    // A halo (59 rows) larger than half the output rows (31) leaves no slabs: in chunks.
    let (ta, tk) = (rand_array(&[90, 61]), rand_array(&[60, 5]));
    let valid = Signal { mode: Mode::Valid, ..op };
    let (tall, run) = host::convolve(std::slice::from_ref(&gpu), &ta.view(), &tk.view(), valid, &SplitOptions::default(), &|_| {}).unwrap();
    assert!(run.chunks > 1 && run.slabs.is_none() && run.split.is_none(), "{run:?}");
    assert!(rel_err(&tall, &cpu::signal_convolve(&to64(&ta), &to64(&tk), Mode::Valid).unwrap()) <= 1e-6);
    // A device memory budget still allows slabs of rows, each in core; one below any slab whose
    // halo (6 rows) is no larger than its rows sends it to the split.
    for (budget, slabs) in [(4 * CAP, true), (CAP / 2, false)] {
        let small = open(GpuOptions { max_buffer_bytes: Some(CAP), device_memory_bytes: Some(budget), ..GpuOptions::from_env().unwrap() });
        let (got, run) = host::convolve(std::slice::from_ref(&small), &a.view(), &k.view(), op, &SplitOptions::default(), &|_| {}).unwrap();
        assert_eq!((run.slabs.is_some(), run.split.is_some()), (slabs, !slabs), "budget {budget}: {run:?}");
        assert!(rel_err(&got, &want) <= 1e-6, "budget {budget}");
    }
}
