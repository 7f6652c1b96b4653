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
    let two = devices(2, None);
    assert!(slabs::plan(&two, &g, &opts).is_some());
    assert!(slabs::plan(&two, &g, &RlOptions { accelerate: true, ..Default::default() }).is_none());
    assert!(slabs::plan(&two, &g, &RlOptions { boundary: deconvolve::RlBoundary::Periodic, ..Default::default() }).is_none());
    assert!(slabs::plan(&two[..1], &g, &opts).is_none());
    // Slabs thinner than the halo their neighbour reads cannot be exact: three GPUs' slabs of 4
    // rows under a halo of 6 leave one GPU out (two slabs of 6), a halo of 8 refuses.
    let (x, p) = (image(&[12, 9]), psf(&[7, 3]));
    let (got, report) = richardson_lucy_slabs(&devices(3, None), &x.view(), &p.view(), 2, &opts, |_| {}).unwrap();
    assert_eq!(report.owned, vec![0..6, 6..12]);
    check(&got, &x, &p, 2, &opts, "three GPUs, two slabs");
    let thin = richardson_lucy_slabs(&devices(3, None), &x.view(), &psf(&[9, 3]).view(), 2, &opts, |_| {});
    assert!(matches!(thin, Err(lucent::Error::Invalid(_))), "{thin:?}");
}

#[test]
fn gpus_of_unequal_memory_own_rows_their_budgets_hold() {
    // One device as it is and one whose budget holds about a third of the rows, in either
    // order: the limited one owns what fits and the other the rest; exact either way.
    let (x, p) = (image(&[60, 21, 19]), psf(&[5, 5, 5]));
    let opts = RlOptions::default();
    let one = devices(1, None);
    let slab_bytes = |rows: usize| {
        deconvolve::RichardsonLucy::new(&one[0], &x.slice(ndarray::s![..rows, .., ..]).into_dyn(), &p.view(), 1, &opts).unwrap().report().peak_bytes
    };
    let limited = || open(GpuOptions { poison: true, device_memory_bytes: Some(slab_bytes(28)), ..GpuOptions::from_env().unwrap() });
    let full = || devices(1, None).pop().unwrap();
    let g = deconvolve::validate(&x.view(), &p.view(), 4, &opts).unwrap();
    for gpus in [vec![full(), limited()], vec![limited(), full()]] {
        let plan = slabs::plan(&gpus, &g, &opts).unwrap();
        let small = usize::from(gpus[0].memory_budget_bytes() > gpus[1].memory_budget_bytes());
        let rows_of = |gpu: usize| plan.iter().find(|s| s.gpu == gpu).map(|s| s.owned.len()).unwrap();
        // The limited GPU owns as many rows as its budget holds with the halo of 4 rows on its
        // one inner side (both slabs are at an end of the volume).
        let run = |rows: usize| deconvolve::RichardsonLucy::new(&gpus[small], &image(&[rows, 21, 19]).view(), &p.view(), 1, &opts).map(|_| ());
        let own = rows_of(small);
        assert!((4..30).contains(&own), "{plan:?}");
        assert!(run(own + 4).is_ok() && matches!(run(own + 5), Err(lucent::Error::TooLarge { .. })), "{plan:?}");
        assert_eq!(rows_of(small) + rows_of(1 - small), 60, "{plan:?}");
        let (got, report) = richardson_lucy_slabs(&gpus, &x.view(), &p.view(), 4, &opts, |_| {}).unwrap();
        check(&got, &x, &p, 4, &opts, &format!("unequal budgets, limited GPU {small}"));
        assert_eq!(report.owned, plan.iter().map(|s| s.owned.clone()).collect::<Vec<_>>());
        assert_eq!((report.adapters.len(), report.step_ms.len()), (2, 2));
        let budget_of = |gpu: usize| gpus[gpu].memory_budget_bytes();
        assert_eq!(report.budgets, plan.iter().map(|s| budget_of(s.gpu)).collect::<Vec<_>>());
    }
    // Equal budgets: even slabs. A GPU that cannot hold a halo's worth of rows is left out.
    let even = slabs::plan(&devices(2, Some(slab_bytes(40))), &g, &opts).unwrap();
    assert_eq!(even.iter().map(|s| s.owned.clone()).collect::<Vec<_>>(), vec![0..30, 30..60]);
    let tiny = open(GpuOptions { device_memory_bytes: Some(16), ..GpuOptions::from_env().unwrap() });
    let three = vec![full(), tiny, full()];
    let plan = slabs::plan(&three, &g, &opts).unwrap();
    assert_eq!(plan.iter().map(|s| s.gpu).collect::<Vec<_>>(), vec![0, 2]);
    // Budgets that together hold less than the image: no slabs, and restore takes tiles.
    let both = vec![limited(), limited()];
    assert!(slabs::plan(&both, &deconvolve::validate(&image(&[90, 21, 19]).view(), &p.view(), 4, &opts).unwrap(), &opts).is_none());
}

#[test]
fn restore_puts_the_whole_image_on_the_gpu_with_the_most_memory() {
    let (x, p) = (image(&[30, 17, 13]), psf(&[5, 5, 3]));
    let opts = RlOptions::default();
    let tiny = open(GpuOptions { device_memory_bytes: Some(16), ..GpuOptions::from_env().unwrap() });
    let gpus = vec![tiny, devices(1, None).pop().unwrap()];
    let (got, run, _) = deconvolve::restore(&gpus, &x.view(), &PsfGrid::single(p.view()), 3, &opts, |_| {}).unwrap();
    assert!(matches!(run, RlRun::Whole(_)), "{run:?}");
    check(&got, &x, &p, 3, &opts, "whole on the second GPU");
}

#[test]
fn device_memory_budgets_per_adapter_parse() {
    use lucent::gpu::memory_budgets;
    assert_eq!(memory_budgets("17179869184").unwrap(), (Some(17179869184), vec![]));
    assert_eq!(memory_budgets(" , 16000000000").unwrap(), (None, vec![None, Some(16000000000)]));
    assert_eq!(memory_budgets("100,200,").unwrap(), (None, vec![Some(100), Some(200), None]));
    for bad in ["", ",", "12", "1e9", "100,x", "-5"] {
        assert!(memory_budgets(bad).is_err(), "{bad}");
    }
    let options = GpuOptions { device_memory_bytes: Some(64), device_memory_per_adapter: vec![None, Some(32)], ..GpuOptions::default() };
    assert_eq!((options.budget_of(0), options.budget_of(1), options.budget_of(5)), (Some(64), Some(32), Some(64)));
    // The opened adapter's budget resolved into its options.
    let gpu = open(GpuOptions { device_memory_per_adapter: vec![Some(1 << 20); 8], ..GpuOptions::from_env().unwrap() });
    assert_eq!(gpu.memory_budget_bytes(), 1 << 20);
}
