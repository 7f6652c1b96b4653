//! Tiled Richardson-Lucy: the tile plan (cores partition the image, windows of one shape, blend
//! weights summing to 1), a spatially variant PSF (each region as whole-image RL with its own PSF
//! away from region borders; equal PSFs as whole-image RL), the default guard width within 1e-3 of
//! whole-image RL on noisy beads, tiles chosen from a lowered buffer limit, GPU against the CPU
//! twin (the same tiling with the f64 reference), progress, and bad input.
//! Temporaries are poisoned (NaN) so an element no kernel writes fails the comparison.

use crate::tests::common;
use common::specimens::*;
use common::*;

use lucent::gpu::GpuOptions;
use lucent::ops::deconvolve::tiles::{self, PsfGrid, TileOptions, TilePlan};
use lucent::ops::deconvolve::{self, cpu, RlBoundary, RlOptions, StopRule};
use lucent::{Error, Gpu};
use ndarray::{ArrayD, Axis, IxDyn};

/// Every recording (the setup, the iteration, the crop) starts its temporaries as NaN.
fn gpu() -> &'static Gpu {
    poisoned_gpu()
}

/// GPU against the f64 reference after `iterations` (tests/deconvolve.rs derives it: four f32
/// transforms per iteration within 2e-6 each, adding in quadrature).
fn tolerance(iterations: usize) -> f64 {
    2e-6 * (4.0 * iterations as f64).sqrt()
}

// ---------------------------------------------------------------------------------------------
// The plan, without a device.

/// Every image element is owned by exactly one core, windows share one shape and hold their
/// core, blend and guard bands, and the blend weights sum to 1 everywhere.
#[test]
fn plan_partitions_the_image_and_weights_sum_to_one() {
    let cases: &[(&[usize], &[usize], [usize; 2], &[usize], &[usize], &[usize])] = &[
        (&[50, 47], &[5, 5], [2, 3], &[1, 2], &[6, 4], &[5, 4]),
        (&[31, 64], &[7, 3], [1, 1], &[3, 5], &[9, 0], &[0, 3]),
        (&[3, 40, 33], &[5, 4], [2, 2], &[2, 1], &[3, 100], &[4, 4]),
        (&[9, 30, 29], &[3, 5, 5], [3, 2], &[2, 1, 2], &[2, 7, 7], &[3, 5, 5]),
        (&[61], &[5], [1, 1], &[4], &[8], &[5]),
    ];
    for &(image, psf, grid, counts, guard, overlap) in cases {
        let plan = TilePlan::new(image, psf, grid, counts, guard, overlap).unwrap();
        let b = image.len() - psf.len();
        let mut sum = ArrayD::<f64>::zeros(IxDyn(&image[b..]));
        let mut owners = ArrayD::<u32>::zeros(IxDyn(&image[b..]));
        let window = plan.window_shape();
        for tile in plan.tiles() {
            for d in 0..psf.len() {
                let (n, w, c) = (image[b + d], &tile.window[d], &tile.core[d]);
                assert_eq!(w.len(), window[b + d], "{image:?}: windows differ along axis {d}");
                let reach = |inner: bool, o: usize| if inner { o + guard[d] } else { 0 };
                let lo = c.start.saturating_sub(reach(c.start > 0, overlap[d] / 2));
                let hi = (c.end + reach(c.end < n, overlap[d] - overlap[d] / 2)).min(n);
                assert!(w.start <= lo && hi <= w.end, "{image:?} axis {d}: window {w:?} misses {lo}..{hi}");
            }
            let weights = plan.weights(&tile);
            let mut target = sum.slice_each_axis_mut(|ax| tile.window[ax.axis.index()].clone().into());
            target += &weights;
            let mut owned = owners.slice_each_axis_mut(|ax| tile.core[ax.axis.index()].clone().into());
            owned += 1;
        }
        assert!(owners.iter().all(|&o| o == 1), "{image:?}: cores do not partition the image");
        let worst = sum.iter().map(|s| (s - 1.0).abs()).fold(0.0, f64::max);
        assert!(worst < 1e-12, "{image:?}: weights sum to 1 ± {worst:e}");
        assert_eq!(plan.len(), plan.tiles().len());
    }
}

#[test]
fn guard_width_is_never_more_than_exact() {
    for m in [1, 2, 5, 13, 31] {
        for k in [1, 2, 10, 100] {
            assert!(tiles::guard_width(m, k) <= tiles::exact_guard(m, k), "m {m} iterations {k}");
        }
    }
    assert_eq!(tiles::exact_guard(5, 3), 12);
}

// ---------------------------------------------------------------------------------------------
// A spatially variant PSF.

/// With guard bands of `exact_guard`, the interior of each region (weight 1: the core less half
/// a blend) is whole-image RL with that region's PSF, up to f32 round-off.
fn check_regions(image: &[usize], pdims: &[usize], grid: [usize; 2], iterations: usize) {
    let psfs = psf_grid(grid, pdims);
    let x = specimen(image, 20, 4).mapv(|v| v as f32);
    let grid_view = PsfGrid::new(psfs.view(), grid).unwrap();
    let guard: Vec<usize> = pdims.iter().map(|&m| tiles::exact_guard(m, iterations)).collect();
    let opts = RlOptions::default();
    let tile_opts = TileOptions { guard: Some(guard), ..Default::default() };
    let got = tiles::richardson_lucy_tiled(std::slice::from_ref(gpu()), &x.view(), &grid_view, iterations, &opts, &tile_opts, |_| {}).unwrap();
    assert_eq!(got.report.tiles, grid[0] * grid[1]);
    let plan = tiles::plan(&x.view(), &grid_view, iterations, &opts, &tile_opts, None).unwrap();
    let b = image.len() - pdims.len();
    for tile in plan.tiles() {
        let want = cpu::richardson_lucy(&x.view(), &grid_view.psf(tile.region), iterations, &opts).unwrap().estimate;
        let inner = |ax: ndarray::AxisDescription| -> ndarray::Slice {
            let i = ax.axis.index();
            if i < b {
                return (..).into();
            }
            let (c, o, n) = (&tile.core[i - b], plan.overlap[i - b], image[i]);
            let lo = if c.start > 0 { c.start + o - o / 2 } else { 0 };
            let hi = if c.end < n { c.end - o / 2 } else { n };
            (lo..hi).into()
        };
        let g = got.estimate.slice_each_axis(inner).to_owned();
        let w = want.slice_each_axis(inner).to_owned();
        let err = rel_l2(&flat(&g), &flat64(&w));
        let tol = tolerance(iterations);
        assert!(err <= tol, "{image:?} region {:?}: relative L2 {err:e} > {tol:e}", tile.region);
    }
}

#[test]
fn each_region_is_whole_image_rl_with_its_psf() {
    check_regions(&[40, 37], &[5, 5], [2, 2], 3);
    check_regions(&[31, 45], &[4, 7], [1, 3], 2);
    check_regions(&[2, 30, 28], &[5, 4], [2, 1], 3); // a batch of 2D images
    check_regions(&[6, 26, 24], &[3, 5, 5], [2, 2], 2); // 3D, the PSF varying laterally
}

/// All PSFs equal and exact guards: the blended result is whole-image RL everywhere.
#[test]
fn equal_psfs_give_whole_image_rl() {
    for (image, pdims, grid) in [(&[44usize, 39][..], &[5usize, 6][..], [3, 2]), (&[5, 22, 27], &[3, 4, 5], [2, 2])] {
        let iterations = 3;
        let p = gaussian(pdims, &pdims.iter().map(|&m| 0.25 * m as f64).collect::<Vec<_>>());
        let views = vec![p.view(); grid[0] * grid[1]];
        let stacked = ndarray::stack(Axis(0), &views).unwrap();
        let shape: Vec<usize> = grid.iter().chain(pdims).copied().collect();
        let psfs = stacked.into_shape_with_order(IxDyn(&shape)).unwrap();
        let x = specimen(image, 20, 3).mapv(|v| v as f32);
        let guard = Some(pdims.iter().map(|&m| tiles::exact_guard(m, iterations)).collect());
        let tile_opts = TileOptions { guard, ..Default::default() };
        let opts = RlOptions::default();
        let grid_view = PsfGrid::new(psfs.view(), grid).unwrap();
        let got = tiles::richardson_lucy_tiled(std::slice::from_ref(gpu()), &x.view(), &grid_view, iterations, &opts, &tile_opts, |_| {}).unwrap();
        let want = cpu::richardson_lucy(&x.view(), &p.view(), iterations, &opts).unwrap().estimate;
        let err = rel_l2(&flat(&got.estimate), &flat64(&want));
        assert!(err <= tolerance(iterations), "{image:?}: relative L2 {err:e}");
    }
}

/// The GPU tiles against the CPU twin (the same plan, the f64 reference per tile), with the
/// default (short) guard so the tiles' artificial edges matter, a PSF grid, TV, and the
/// extended boundary.
#[test]
fn gpu_tiles_match_the_cpu_twin() {
    let cases: &[(&[usize], &[usize], [usize; 2], &[usize], Option<f32>)] = &[
        (&[48, 45], &[5, 5], [2, 2], &[1, 2], None),
        (&[33, 50], &[4, 5], [1, 2], &[2, 1], Some(0.002)),
        (&[4, 24, 26], &[3, 5, 4], [2, 2], &[1, 1, 2], None),
    ];
    let extended = (cases[0].0, cases[0].1, cases[0].2, cases[0].3, None);
    for (i, &(image, pdims, grid, counts, tv)) in cases.iter().chain([&extended]).enumerate() {
        let boundary = if i == cases.len() { RlBoundary::Extended } else { RlBoundary::Zero };
        let iterations = 4;
        let psfs = psf_grid(grid, pdims);
        let grid_view = PsfGrid::new(psfs.view(), grid).unwrap();
        let x = specimen(image, 15, 3).mapv(|v| v as f32);
        let opts = RlOptions { tv, boundary, ..Default::default() };
        let tile_opts = TileOptions { tiles: Some(counts.to_vec()), ..Default::default() };
        let got = tiles::richardson_lucy_tiled(std::slice::from_ref(gpu()), &x.view(), &grid_view, iterations, &opts, &tile_opts, |_| {}).unwrap();
        let (want, report) = tiles::richardson_lucy_tiled_cpu(&x.view(), &grid_view, iterations, &opts, &tile_opts, |_| {}).unwrap();
        assert_eq!(got.report.tiles, report.tiles);
        assert_eq!(got.report.tiles, grid[0] * grid[1] * counts.iter().product::<usize>());
        let err = rel_l2(&flat(&got.estimate), &flat64(&want));
        assert!(err <= tolerance(iterations), "{image:?} {boundary:?}: relative L2 {err:e}");
        assert_eq!(got.report.tile_ms.len(), got.report.tiles);
    }
}

#[test]
fn progress_covers_tiles_times_iterations() {
    let p = gaussian(&[5, 5], &[1.2, 1.2]);
    let x = specimen(&[30, 31], 5, 1).mapv(|v| v as f32);
    let mut seen = Vec::new();
    let tile_opts = TileOptions { tiles: Some(vec![2, 3]), ..Default::default() };
    let r = tiles::richardson_lucy_tiled(std::slice::from_ref(gpu()), &x.view(), &PsfGrid::single(p.view()), 3, &RlOptions::default(), &tile_opts, |t| {
        seen.push((t.done, t.total))
    })
    .unwrap();
    assert_eq!(r.report.tiles, 6);
    let want: Vec<(usize, usize)> = (1..=18).map(|i| (i, 18)).collect();
    assert_eq!(seen, want);
}

// ---------------------------------------------------------------------------------------------
// The default guard width, and images larger than a buffer.

/// Noisy beads and blobs, 3 × 3 tiles with the default guard: within 1e-3 of whole-image RL.
#[test]
fn default_guard_stays_within_1e_3() {
    for (dims, sigma, iterations) in [(&[96usize, 90][..], 1.5, 12), (&[10, 64, 60], 1.0, 8)] {
        let pd: Vec<usize> = dims.iter().map(|_| extent(sigma)).collect();
        let p = gaussian(&pd, &vec![sigma; pd.len()]);
        let x = observed(&specimen(dims, dims.iter().product::<usize>() / 200, 6), &p);
        let opts = RlOptions::default();
        let mut counts = vec![3; pd.len()];
        counts[0] = if pd.len() == 3 { 1 } else { 3 }; // a thin stack stays whole along z
        let tile_opts = TileOptions { tiles: Some(counts), ..Default::default() };
        let got =
            tiles::richardson_lucy_tiled(std::slice::from_ref(gpu()), &x.view(), &PsfGrid::single(p.view()), iterations, &opts, &tile_opts, |_| {}).unwrap();
        let want = cpu::richardson_lucy(&x.view(), &p.view(), iterations, &opts).unwrap().estimate;
        let (l2, max) = errors32(&got.estimate, &want);
        assert!(l2 <= 1e-3 && max <= 1e-3, "{dims:?} σ {sigma}: relative L2 {l2:e}, max {max:e}");
        let window = &got.report.window;
        assert!(window.iter().zip(dims).any(|(w, n)| w < n), "{dims:?}: the windows {window:?} are the whole image");
    }
}

/// A device the whole image does not fit: whole-image RL fails with `TooLarge`, the tiled
/// run picks several tiles, matches its CPU twin and stays within 1e-3 of whole-image RL.
#[test]
fn tiles_fit_a_lowered_buffer_limit() {
    let limit = 24 * 1024;
    // Device memory for a few windows: the whole image fits neither one buffer nor the device.
    let small = open(GpuOptions {
        max_buffer_bytes: Some(limit),
        device_memory_bytes: Some(8 * limit),
        poison: true,
        ..GpuOptions::from_env().expect("valid LUCENT_* variables")
    });
    assert_eq!(small.max_buffer_bytes(), limit);

    let (sigma, iterations) = (1.2, 6);
    let p = gaussian(&[extent(sigma); 2], &[sigma; 2]);
    let x = observed(&specimen(&[120, 110], 60, 8), &p);
    let opts = RlOptions::default();
    let whole = deconvolve::richardson_lucy(&small, &x.view(), &p.view(), iterations, &opts);
    assert!(matches!(whole, Err(Error::TooLarge { .. })), "whole-image RL under a {limit}-byte limit: {:?}", whole.err());
    assert!(!tiles::fits_whole(&small, x.shape(), p.shape(), &opts).unwrap());

    let psfs = PsfGrid::single(p.view());
    let got = tiles::richardson_lucy_tiled(std::slice::from_ref(&small), &x.view(), &psfs, iterations, &opts, &TileOptions::default(), |_| {}).unwrap();
    let r = &got.report;
    assert!(r.tiles > 1, "{r:?}");
    assert!(tiles::spectrum_bytes(&r.window, p.shape(), opts.boundary).unwrap() <= limit, "{r:?}");
    let same = TileOptions { tiles: Some(r.tiles_per_region.clone()), ..Default::default() };
    let (twin, _) = tiles::richardson_lucy_tiled_cpu(&x.view(), &psfs, iterations, &opts, &same, |_| {}).unwrap();
    let err = rel_l2(&flat(&got.estimate), &flat64(&twin));
    assert!(err <= tolerance(iterations), "against the CPU twin: {err:e}");
    let want = cpu::richardson_lucy(&x.view(), &p.view(), iterations, &opts).unwrap().estimate;
    let (l2, max) = errors32(&got.estimate, &want);
    assert!(l2 <= 1e-3 && max <= 1e-3, "against whole-image RL: relative L2 {l2:e}, max {max:e}");

    // A limit below what the smallest tile (no smaller than the PSF) needs.
    let tiny = TileOptions { memory_bytes: Some(1024), ..Default::default() };
    let e = tiles::richardson_lucy_tiled(std::slice::from_ref(&small), &x.view(), &psfs, iterations, &opts, &tiny, |_| {}).err();
    assert!(matches!(e, Some(Error::TooLarge { .. })), "{e:?}");
}

/// Tiles spread over two GPUs (two devices on the one test adapter): both take tiles from the
/// queue, the result matches one GPU's and the CPU twin, progress counts every iteration of
/// every tile once, in order, and `restore` uses all the GPUs it is given.
#[test]
fn tiles_spread_over_several_gpus() {
    let options = || GpuOptions { poison: true, ..GpuOptions::from_env().expect("valid LUCENT_* variables") };
    let gpus = [open(options()), open(options())];
    let (sigma, iterations) = (1.2, 4);
    let p = gaussian(&[extent(sigma); 2], &[sigma; 2]);
    let x = observed(&specimen(&[61, 57], 30, 5), &p);
    let (opts, psfs) = (RlOptions::default(), PsfGrid::single(p.view()));
    let counts = TileOptions { tiles: Some(vec![3, 2]), ..Default::default() };
    let mut seen = Vec::new();
    let two = tiles::richardson_lucy_tiled(&gpus, &x.view(), &psfs, iterations, &opts, &counts, |t| seen.push((t.done, t.total))).unwrap();
    let one = tiles::richardson_lucy_tiled(&gpus[..1], &x.view(), &psfs, iterations, &opts, &counts, |_| {}).unwrap();
    let (twin, _) = tiles::richardson_lucy_tiled_cpu(&x.view(), &psfs, iterations, &opts, &counts, |_| {}).unwrap();
    let r = &two.report;
    assert_eq!((r.tiles, r.tile_ms.len(), r.tile_worker.len(), r.adapters.len()), (6, 6, 6, 2), "{r:?}");
    assert!(r.tile_worker.contains(&0) && r.tile_worker.contains(&1), "both GPUs take tiles: {r:?}");
    assert_eq!(seen, (1..=6 * iterations).map(|d| (d, 6 * iterations)).collect::<Vec<_>>());
    // Blending order differs between runs where tiles overlap: equal to rounding.
    assert!(rel_l2(&flat(&two.estimate), &flat64(&one.estimate.mapv(|v| v as f64))) <= 1e-6);
    assert!(rel_l2(&flat(&two.estimate), &flat64(&twin)) <= tolerance(iterations));

    // restore(): the whole image on the first GPU when it fits, else slabs resident on all of
    // them (exact; tests/deconvolve_slabs.rs), else tiles over all of them (here: acceleration,
    // whose sums span the image).
    let (whole, run, _) = deconvolve::restore(&gpus, &x.view(), &psfs, iterations, &opts, |_| {}).unwrap();
    assert!(matches!(run, deconvolve::RlRun::Whole(_)), "{run:?}");
    let want = cpu::richardson_lucy(&x.view(), &p.view(), iterations, &opts).unwrap().estimate;
    assert!(errors32(&whole, &want).0 <= tolerance(iterations));
    let small = || open(GpuOptions { max_buffer_bytes: Some(8 << 10), device_memory_bytes: Some(64 << 10), ..options() });
    let small = [small(), small()];
    let (slabs, run, _) = deconvolve::restore(&small, &x.view(), &psfs, iterations, &opts, |_| {}).unwrap();
    assert!(matches!(run, deconvolve::RlRun::Slabs(_)), "{run:?}");
    assert!(errors32(&slabs, &want).0 <= tolerance(iterations));
    let accelerated = RlOptions { accelerate: true, ..opts };
    let small = || open(GpuOptions { max_buffer_bytes: Some(8 << 10), device_memory_bytes: Some(80 << 10), ..options() });
    let (tiled, run, _) = deconvolve::restore(&[small(), small()], &x.view(), &psfs, iterations, &accelerated, |_| {}).unwrap();
    match run {
        deconvolve::RlRun::Tiled(r) => assert!(r.tiles > 1 && r.adapters.len() == 2, "{r:?}"),
        other => panic!("expected tiles: {other:?}"),
    }
    // (Each tile accelerates with its own step sums: the tiles' CPU twin is the reference.)
    assert_eq!(tiled.shape(), x.shape());
}

/// Tiles are sized by the device's memory, not its buffer limit: a tile larger than one
/// buffer holds its arrays in chunks.
#[test]
fn tiles_beyond_one_buffer_run_in_chunks() {
    let (limit, memory) = (8u64 << 10, 200_000u64);
    let gpu = open(GpuOptions { max_buffer_bytes: Some(limit), device_memory_bytes: Some(memory), poison: true, ..GpuOptions::from_env().unwrap() });
    let (sigma, iterations) = (1.2, 5);
    let p = gaussian(&[extent(sigma); 2], &[sigma; 2]);
    let x = observed(&specimen(&[120, 110], 60, 8), &p);
    let opts = RlOptions::default();
    let (got, run, _) = deconvolve::restore(std::slice::from_ref(&gpu), &x.view(), &PsfGrid::single(p.view()), iterations, &opts, |_| {}).unwrap();
    let deconvolve::RlRun::Tiled(r) = run else { panic!("expected tiles under a {memory}-byte budget: {run:?}") };
    assert!(r.tiles > 1, "{r:?}");
    assert!(tiles::spectrum_bytes(&r.window, p.shape(), opts.boundary).unwrap() > limit, "tiles fit one buffer: {r:?}");
    assert!(tiles::working_set_bytes(&r.window, p.shape(), &opts).unwrap() <= memory, "{r:?}");
    let want = cpu::richardson_lucy(&x.view(), &p.view(), iterations, &opts).unwrap().estimate;
    let (l2, max) = errors32(&got, &want);
    assert!(l2 <= 1e-3 && max <= 1e-3, "against whole-image RL: relative L2 {l2:e}, max {max:e}");
}

/// The working-set estimate the tiles are sized by bounds what RL really holds.
#[test]
fn working_set_estimate_bounds_the_peak() {
    for (dims, pdims) in [(&[64usize, 60][..], &[7usize, 7][..]), (&[9, 40, 33], &[3, 5, 5]), (&[3, 50, 20], &[5, 5])] {
        let extended = RlOptions { boundary: RlBoundary::Extended, accelerate: true, tv: Some(0.002), ..Default::default() };
        for opts in [RlOptions::default(), RlOptions { accelerate: true, tv: Some(0.002), ..Default::default() }, extended] {
            let x = specimen(dims, 5, 1).mapv(|v| v as f32);
            let p = gaussian(pdims, &vec![1.0; pdims.len()]);
            let r = deconvolve::richardson_lucy(gpu(), &x.view(), &p.view(), 1, &opts).unwrap().report;
            let estimate = tiles::working_set_bytes(dims, pdims, &opts).unwrap();
            assert!(estimate >= r.peak_bytes && estimate >= r.setup_peak_bytes, "{dims:?}: {estimate} < {} or {}", r.peak_bytes, r.setup_peak_bytes);
            assert!(estimate <= 2 * r.peak_bytes, "{dims:?}: {estimate} is far above {}", r.peak_bytes);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Bad input.

#[test]
fn bad_input_is_an_error() {
    let p = gaussian(&[5, 5], &[1.0, 1.0]);
    let x = specimen(&[40, 40], 5, 1).mapv(|v| v as f32);
    let grid = psf_grid([2, 2], &[5, 5]);
    let opts = RlOptions::default();
    let run = |psfs: &PsfGrid, opts: &RlOptions, t: &TileOptions| {
        tiles::richardson_lucy_tiled(std::slice::from_ref(gpu()), &x.view(), psfs, 3, opts, t, |_| {}).err()
    };
    let shape = |e: &Error| matches!(e, Error::Shape(_));
    let invalid = |e: &Error| matches!(e, Error::Invalid(_));

    // The PSF array's grid axes must be the grid asked for.
    let e = PsfGrid::new(grid.view(), [2, 3]).err().unwrap();
    assert!(shape(&e), "{e}");
    let e = PsfGrid::new(p.view(), [1, 1]).err().unwrap();
    assert!(shape(&e), "a single PSF as a grid: {e}");
    assert!(invalid(&PsfGrid::new(grid.view(), [0, 2]).err().unwrap()));

    let psfs = PsfGrid::new(grid.view(), [2, 2]).unwrap();
    let none = TileOptions::default();
    // Tiles smaller than the PSF.
    let e = run(&psfs, &opts, &TileOptions { tiles: Some(vec![5, 1]), ..Default::default() }).unwrap();
    assert!(invalid(&e) && e.to_string().contains("smaller than the PSF"), "{e}");
    // A global stopping rule; periodic with several tiles.
    let e = run(&psfs, &RlOptions { stop: Some(StopRule { tolerance: 1e-3, every: 1 }), ..opts }, &none).unwrap();
    assert!(invalid(&e), "{e}");
    let e = run(&psfs, &RlOptions { boundary: RlBoundary::Periodic, ..opts }, &none).unwrap();
    assert!(invalid(&e), "{e}");
    // A bad PSF in a later region is found before any work.
    let mut bad = grid.clone();
    bad[[1, 1, 2, 2]] = f32::NAN;
    let e = run(&PsfGrid::new(bad.view(), [2, 2]).unwrap(), &opts, &none).unwrap();
    assert!(matches!(e, Error::NonFinite(_)) && e.to_string().contains("(1, 1)"), "{e}");
    let mut zero = grid.clone();
    zero.index_axis_mut(Axis(0), 0).index_axis_mut(Axis(0), 1).fill(0.0);
    assert!(invalid(&run(&PsfGrid::new(zero.view(), [2, 2]).unwrap(), &opts, &none).unwrap()));
    // Per-axis options of the wrong length; a grid on a 1D image.
    let e = run(&psfs, &opts, &TileOptions { guard: Some(vec![3]), ..Default::default() }).unwrap();
    assert!(shape(&e), "{e}");
    let line = specimen(&[50], 3, 0).mapv(|v| v as f32);
    let g1 = ArrayD::<f32>::ones(IxDyn(&[2, 2, 3]));
    assert!(PsfGrid::new(g1.view(), [2, 2]).is_err());
    let single = tiles::richardson_lucy_tiled(std::slice::from_ref(gpu()), &line.view(), &PsfGrid::single(p.index_axis(Axis(0), 2)), 2, &opts, &none, |_| {});
    assert!(single.is_ok(), "a 1D image with one PSF: {:?}", single.err());
}

// ---------------------------------------------------------------------------------------------
// The CLI: --psf-grid, automatic tiling, the JSON report.
