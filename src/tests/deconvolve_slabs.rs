//! Richardson-Lucy in slabs of rows resident on several GPUs (ops::deconvolve::slabs), their
//! halo rows exchanged each iteration; two and three devices on the one test adapter stand in
//! for GPUs. Against the f64 reference (the whole-image update, not an approximation of it) at
//! the whole GPU path's tolerance: 2D and 3D, odd and even PSFs, TV, a constant start; slabs
//! chosen by `restore` when the whole image does not fit one GPU; options whose sums span the
//! volume go to tiles. Temporaries poisoned.

use crate::tests::common;
use common::*;

use lucent::gpu::GpuOptions;
use lucent::ops::deconvolve::slabs::{self, richardson_lucy_slabs};
use lucent::ops::deconvolve::tiles::PsfGrid;
use lucent::ops::deconvolve::{self, cpu, Init, RlOptions, RlRun};
use lucent::Gpu;
use ndarray::{ArrayD, IxDyn};
use rand::Rng;

fn devices(n: usize, budget: Option<u64>) -> Vec<Gpu> {
    (0..n).map(|_| open(GpuOptions { poison: true, device_memory_bytes: budget, ..GpuOptions::from_env().unwrap() })).collect()
}

fn image(dims: &[usize]) -> ArrayD<f32> {
    ArrayD::from_shape_vec(IxDyn(dims), random_positive(dims.iter().product())).unwrap()
}

/// A blob with random multiplicative noise, not normalised.
fn psf(dims: &[usize]) -> ArrayD<f32> {
    let mut rng = rand::rng();
    ArrayD::from_shape_fn(IxDyn(dims), |idx| {
        let r2: f64 = (0..dims.len()).map(|d| (idx[d] as f64 - (dims[d] - 1) as f64 / 2.0).powi(2)).sum();
        ((-r2 / 4.0).exp() * rng.random_range(0.5..1.5)) as f32
    })
}

/// As tests/deconvolve.rs: four f32 transforms per iteration within 2e-6 each, in quadrature.
fn tolerance(iterations: usize) -> f64 {
    2e-6 * (4.0 * iterations as f64).sqrt()
}

fn check(got: &ArrayD<f32>, x: &ArrayD<f32>, p: &ArrayD<f32>, iterations: usize, opts: &RlOptions, what: &str) {
    let want = cpu::richardson_lucy(&x.view(), &p.view(), iterations, opts).unwrap();
    assert_eq!(got.shape(), x.shape(), "{what}");
    let err = rel_l2(&got.iter().copied().collect::<Vec<_>>(), &want.estimate.iter().copied().collect::<Vec<_>>());
    assert!(err <= tolerance(iterations), "{what}: relative L2 {err:e}");
}

#[test]
fn slabs_equal_the_whole_image_update() {
    let cases: &[(&[usize], &[usize], usize)] = &[(&[41, 19, 17], &[7, 5, 3], 3), (&[37, 29], &[9, 6], 2), (&[30, 11, 9], &[4, 3, 4], 2)];
    for &(dims, pdims, gpus) in cases {
        let (x, p) = (image(dims), psf(pdims));
        let opts_list =
            [RlOptions::default(), RlOptions { tv: Some(0.002), ..Default::default() }, RlOptions { init: Init::Constant(0.5), ..Default::default() }];
        for opts in opts_list {
            let gpus = devices(gpus, None);
            let iterations = 6;
            let done = std::cell::RefCell::new(Vec::new());
            let (got, report) = richardson_lucy_slabs(&gpus, &x.view(), &p.view(), iterations, &opts, |p| done.borrow_mut().push(p.done)).unwrap();
            let what = format!("{dims:?} psf {pdims:?} on {} GPUs, {opts:?}", gpus.len());
            check(&got, &x, &p, iterations, &opts, &what);
            assert_eq!(*done.borrow(), (1..=iterations).collect::<Vec<_>>(), "{what}");
            assert_eq!((report.owned.len(), report.halo_rows, report.iterations), (gpus.len(), pdims[0] - 1, iterations), "{what}");
            assert_eq!(report.owned.first().unwrap().start, 0);
            assert_eq!(report.owned.last().unwrap().end, dims[0]);
        }
    }
}

#[test]
fn restore_takes_slabs_beyond_one_gpu_where_the_options_allow() {
    let (x, p) = (image(&[48, 21, 19]), psf(&[5, 5, 5]));
    // A budget the whole image's run exceeds and each half's run (with its halo) fits.
    let whole = deconvolve::RichardsonLucy::new(&devices(1, None)[0], &x.view(), &p.view(), 1, &RlOptions::default()).unwrap().report().peak_bytes;
    let gpus = devices(2, Some(whole * 3 / 4));
    let opts = RlOptions::default();
    let (got, run, _) = deconvolve::restore(&gpus, &x.view(), &PsfGrid::single(p.view()), 5, &opts, |_| {}).unwrap();
    assert!(matches!(run, RlRun::Slabs(_)), "{run:?}");
    check(&got, &x, &p, 5, &opts, "restore in slabs");
    // Acceleration's step sums and the stopping rule's span the whole volume: no slabs (tiles).
    let g = deconvolve::validate(&x.view(), &p.view(), 5, &opts).unwrap();
    assert!(slabs::plan(2, &g, &opts).is_some());
    assert!(slabs::plan(2, &g, &RlOptions { accelerate: true, ..Default::default() }).is_none());
    assert!(slabs::plan(2, &g, &RlOptions { boundary: deconvolve::RlBoundary::Periodic, ..Default::default() }).is_none());
    assert!(slabs::plan(1, &g, &opts).is_none());
    // Slabs thinner than the halo their neighbour reads cannot be exact: refused.
    let thin = richardson_lucy_slabs(&devices(3, None), &image(&[12, 9]).view(), &psf(&[7, 3]).view(), 2, &opts, |_| {});
    assert!(matches!(thin, Err(lucent::Error::Invalid(_))), "{thin:?}");
}
