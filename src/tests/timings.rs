//! Timings and measurements run by hand on a real GPU (ignored tests that print what they
//! measure; they assert nothing about time):
//!
//!   cargo test --release --lib -- --ignored --nocapture timings::            # all of them
//!   cargo test --release --lib -- --ignored --nocapture timings::rl_tiles    # one
//!
//! - `fft_sweep`: the full accuracy sweep of the FFT issue: every length 1..=1024, every prime up
//!   to 4096, 2^k up to 2^20, both directions; prints the worst errors per class and fails on an
//!   error beyond the gate of tests/it/fft.rs (LUCENT_SWEEP_FROM=N resumes at length N).
//! - `split_host`: host time of the fold and the recombination of 256³ ⊛ 31³ 'same' (what bounds
//!   the split pipeline on fast GPUs), best of 3.
//! - `rl_tiles`: a 2048² image, 30 iterations, σ = 2: whole-image RL, then tiles forced by a
//!   buffer limit of 1/4 and 1/16 of the spectrum, and a 4 × 4 PSF grid
//!   (LUCENT_TILED_TIMING_N sets a smaller size for a try on lavapipe).
//! - `rl_guard_rule`: the measurements behind `tiles::guard_width` (CPU, f64; minutes).
//! - `api_calls`: the one-call functions on host arrays, the cases of benches/python_calls.py
//!   (median ms of repeated calls after a warm-up), for the Python package's call overhead.

use crate::tests::common;
use common::fft_check::{errors, flat_c, flat_c64, max_bound, uses_bluestein};
use common::specimens::{extent, flat64, gaussian, observed, specimen};
use common::{gpu, rand_array, random_complex, to64};

use lucent::fft::{self, cpu as fft_cpu, plan, Norm, Transform};
use lucent::ops::convolve::{self, split, Mode};
use lucent::ops::deconvolve::tiles::{self, PsfGrid, TileOptions};
use lucent::ops::deconvolve::{self, cpu as rl_cpu, RlOptions};
use lucent::Gpu;
use lucent::GpuOptions;
use ndarray::{ArrayD, Axis, IxDyn};

/// The median milliseconds of `reps` calls of `f` after two warm-up calls.
fn median_ms(reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    f();
    let mut ms: Vec<f64> = (0..reps)
        .map(|_| {
            let t = std::time::Instant::now();
            f();
            lucent::host::ms_since(t)
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    ms[reps / 2]
}

/// The cases of benches/python_calls.py through the Rust one-call API (host arrays in and out).
#[test]
#[ignore = "a timing, run by hand on a GPU"]
fn api_calls() {
    let g = gpu();
    let small = ArrayD::from_shape_vec(IxDyn(&[64, 64]), random_complex(64 * 64)).unwrap();
    println!("fftn 64x64 c64: {:.3} ms", median_ms(200, || drop(fft::fftn(g, &small, None, Norm::Backward).unwrap())));
    let image = rand_array(&[256, 256]);
    let b = lucent::ndimage::Boundary::Reflect;
    println!("gaussian_filter 256x256 sigma 2: {:.3} ms", median_ms(100, || drop(lucent::ndimage::gaussian_filter(g, &image, &[2.0, 2.0], b).unwrap())));
    let (a, k) = (rand_array(&[512, 512]), rand_array(&[15, 15]));
    println!("fftconvolve 512x512 * 15x15 same: {:.3} ms", median_ms(50, || drop(lucent::signal::fftconvolve(g, &a, &k, Mode::Same).unwrap())));
    let volume = rand_array(&[256, 256, 256]).mapv(|v| v + 0.5); // RL takes non-negative data
    let psf = ArrayD::from_elem(IxDyn(&[31, 31, 31]), 1.0 / 29791.0f32);
    let o = RlOptions { init: deconvolve::Init::Constant(0.5), normalize_psf: false, ..RlOptions::default() };
    println!("richardson_lucy 256^3 psf 31^3 10 it: {:.3} ms", median_ms(5, || drop(lucent::restoration::richardson_lucy(g, &volume, &psf, 10, &o).unwrap())));
}

/// The full accuracy sweep of the FFT issue (was tests/it/fft.rs, `--ignored`).
#[test]
#[ignore = "a timing, run by hand on a GPU"]
fn fft_sweep() {
    let primes: Vec<usize> = (2..=4096).filter(|&p| (2..p).take_while(|d| d * d <= p).all(|d| p % d != 0)).collect();
    let mut lengths: Vec<usize> = (1..=1024).collect();
    lengths.extend(primes.iter().copied().filter(|&p| p > 1024));
    lengths.extend((11..=20).map(|k| 1usize << k));
    // LUCENT_SWEEP_FROM=N resumes a sweep cut short at length N (in the order above).
    if let Some(from) = std::env::var("LUCENT_SWEEP_FROM").ok().and_then(|s| s.parse::<usize>().ok()) {
        let at = lengths.iter().position(|&n| n == from).expect("LUCENT_SWEEP_FROM is a length of the sweep");
        lengths.drain(..at);
    }
    let mut worst = std::collections::BTreeMap::new();
    for &n in &lengths {
        for inverse in [false, true] {
            let batch = (1 << 16) / n + 1;
            let x = ArrayD::from_shape_vec(IxDyn(&[batch.min(64), n]), random_complex(batch.min(64) * n)).unwrap();
            let got = if inverse { fft::ifftn(gpu(), &x, Some(&[1]), Norm::Backward) } else { fft::fftn(gpu(), &x, Some(&[1]), Norm::Backward) }.unwrap();
            let want = fft_cpu::c2c(&to64(&x), &[1], inverse, Norm::Backward);
            let e = errors(&flat_c(&got), &flat_c64(&want));
            let bluestein = uses_bluestein(gpu(), &[1, n], &[1], Transform::Forward);
            let class = if bluestein {
                "bluestein"
            } else if plan::factor(n, gpu().options().tuning).is_none() {
                "rader"
            } else if n.is_power_of_two() {
                "pow2"
            } else {
                "smooth"
            };
            let w = worst.entry(class).or_insert((0.0f64, 0.0f64, 0usize));
            if e.rel_l2 > w.0 {
                *w = (e.rel_l2, w.1, n);
            }
            w.1 = w.1.max(e.rel_max);
            if !inverse && [64, 1000, 1024, 4096, 257, 509, 1021, 4093, 2039, 1 << 16, 1 << 20].contains(&n) {
                println!("lucent_accuracy n={n} rel_l2={:.3e} rel_max={:.3e}", e.rel_l2, e.rel_max);
            }
            assert!(e.rel_l2 <= 1e-6, "n={n} inverse={inverse}: relative L2 {:e}", e.rel_l2);
            assert!(e.rel_max < max_bound(n, bluestein), "n={n} inverse={inverse}: max {:e}", e.rel_max);
        }
        // How far a sweep cut short by a time limit got (resume with LUCENT_SWEEP_FROM).
        println!("swept n={n}");
    }
    for (class, (l2, max, n)) in worst {
        println!("sweep {class}: worst relative L2 {l2:.3e} (n={n}), worst max|d|/max|ref| {max:.3e}");
    }
}

/// Host time of the split pipeline's fold and recombination (was tests/it/convolve_split.rs).
#[test]
#[ignore = "a timing, run by hand on a GPU"]
fn split_host() {
    let (a, k) = (rand_array(&[256, 256, 256]), rand_array(&[31, 31, 31]));
    let g = convolve::Geometry::new(a.shape(), k.shape(), Mode::Same).unwrap();
    for parts in [8, 14] {
        let plan = split::SplitPlan::new(&g, parts).unwrap();
        let computed: Vec<usize> = plan.computed_parts().collect();
        let zs: Vec<ArrayD<num_complex::Complex32>> = computed
            .iter()
            .map(|_| {
                let re = rand_array(&plan.out_part_dims());
                re.mapv(|v| num_complex::Complex32::new(v, 0.5 * v))
            })
            .collect();
        let best = |f: &mut dyn FnMut()| {
            (0..3)
                .map(|_| {
                    let t = std::time::Instant::now();
                    f();
                    lucent::host::ms_since(t)
                })
                .fold(f64::INFINITY, f64::min)
        };
        let mut out = ArrayD::<f32>::zeros(IxDyn(&g.out));
        // Groups of 1 (the old pipeline), 3 (one GPU, two parts in flight), 5 (two GPUs).
        for group in [1, 3, 5] {
            let fold_ms = best(&mut || {
                for parts in computed.chunks(group) {
                    std::hint::black_box(split::fold(&a.view(), &plan, parts));
                }
            });
            // As the pipeline does: the slabs of the previous group reused.
            let mut spare = Vec::new();
            let reuse_ms = best(&mut || {
                for parts in computed.chunks(group) {
                    let slabs = split::fold_reusing(&a.view(), &plan, parts, &mut spare);
                    spare.extend(slabs.into_iter().map(|y| y.into_raw_vec_and_offset().0));
                }
            });
            let recombine_ms = best(&mut || {
                for (parts, zs) in computed.chunks(group).zip(zs.chunks(group)) {
                    split::recombine(&mut out, &parts.iter().copied().zip(zs).collect::<Vec<_>>(), &plan);
                }
            });
            println!("256³ ⊛ 31³ same, P = {parts} ({} parts computed, M = {}), groups of {group}: fold {fold_ms:.1} ms (fresh buffers) {reuse_ms:.1} ms (reused), recombine {recombine_ms:.1} ms (all parts)", computed.len(), plan.part_len);
        }
    }
}

/// Whole-image RL against tiles (was tests/it/deconvolve_tiles.rs).
#[test]
#[ignore = "a timing, run by hand on a GPU"]
fn rl_tiles() {
    // LUCENT_TILED_TIMING_N sets a smaller size for a try on lavapipe.
    let n = std::env::var("LUCENT_TILED_TIMING_N").ok().and_then(|v| v.parse().ok()).unwrap_or(2048);
    let (sigma, iterations) = (2.0, 30);
    let p = gaussian(&[extent(sigma); 2], &[sigma; 2]);
    let x = observed(&specimen(&[n, n], n * n / 400, 40), &p);
    let opts = RlOptions::default();
    let t = std::time::Instant::now();
    let whole = deconvolve::richardson_lucy(gpu(), &x.view(), &p.view(), iterations, &opts).unwrap();
    let whole_ms = lucent::host::ms_since(t);
    println!("whole {n}²: {whole_ms:.1} ms ({:.3} ms per iteration, peak {} MiB)", whole.report.ms_per_iteration, whole.report.peak_bytes >> 20);
    let want = whole.estimate.mapv(|v| v as f64);
    let spectrum = tiles::spectrum_bytes(x.shape(), p.shape(), opts.boundary).unwrap();
    for fraction in [4, 16] {
        let small =
            Gpu::open(&GpuOptions { max_buffer_bytes: Some(spectrum / fraction), ..GpuOptions::from_env().expect("valid LUCENT_* variables") }).unwrap();
        let r = match tiles::richardson_lucy_tiled(
            std::slice::from_ref(&small),
            &x.view(),
            &PsfGrid::single(p.view()),
            iterations,
            &opts,
            &TileOptions::default(),
            |_| {},
        ) {
            Ok(r) => r,
            Err(e) => {
                println!("limit 1/{fraction}: {e}");
                continue;
            }
        };
        let (l2, max) = common::specimens::errors32(&r.estimate, &want);
        let rep = &r.report;
        println!(
            "limit 1/{fraction}: {} tiles of {:?} (guard {:?}), {:.1} ms in all ({:.2}× whole), per tile {:?} ms; vs whole: L2 {l2:.1e}, max {max:.1e}",
            rep.tiles,
            rep.window,
            rep.guard,
            rep.total_ms,
            rep.total_ms / whole_ms,
            rep.tile_ms.iter().map(|v| v.round()).collect::<Vec<_>>()
        );
    }
    let grid: Vec<ArrayD<f32>> = (0..16).map(|i| gaussian(&[extent(sigma); 2], &[sigma * (0.8 + 0.03 * i as f64); 2])).collect();
    let views: Vec<_> = grid.iter().map(|g| g.view()).collect();
    let stacked = ndarray::stack(Axis(0), &views).unwrap().into_shape_with_order(IxDyn(&[4, 4, extent(sigma), extent(sigma)])).unwrap();
    let r = tiles::richardson_lucy_tiled(
        std::slice::from_ref(gpu()),
        &x.view(),
        &PsfGrid::new(stacked.view(), [4, 4]).unwrap(),
        iterations,
        &opts,
        &TileOptions::default(),
        |_| {},
    )
    .unwrap();
    println!("4×4 PSF grid: {} tiles of {:?}, {:.1} ms ({:.2}× whole)", r.report.tiles, r.report.window, r.report.total_ms, r.report.total_ms / whole_ms);
}

/// The smallest guard keeping 2 × 2 tiles within 1e-3 (relative L2 and max/max) of whole-image
/// RL, for Gaussian PSFs cut at 3σ, on noisy specimens of two kinds: bright beads (200-1000
/// photons) and blobs over a background of 5, and blobs alone (20-100), where max/max is the
/// stricter measure (was tests/it/deconvolve_tiles.rs).
#[test]
#[ignore = "a timing, run by hand on a GPU"]
fn rl_guard_rule() {
    println!("| specimen | σ | m | iterations | smallest guard | guard / (r·k^¼) | rule |");
    println!("|---|---|---|---|---|---|---|");
    // Per kind: beads and blobs per 10,000 elements.
    for (kind, beads, blobs) in [("beads", 50, 1), ("blobs", 0, 25)] {
        for sigma in [1.0, 2.0, 3.0] {
            let m = extent(sigma);
            let p = gaussian(&[m, m], &[sigma, sigma]);
            for k in [5, 10, 20, 50, 100] {
                let n = 128 + 2 * tiles::exact_guard(m, k).min(160);
                let x = observed(&specimen(&[n, n], n * n * beads / 10_000, n * n * blobs / 10_000), &p);
                let want = rl_cpu::richardson_lucy(&x.view(), &p.view(), k, &RlOptions::default()).unwrap().estimate;
                let within = |g: usize| {
                    let t = TileOptions { tiles: Some(vec![2, 2]), guard: Some(vec![g, g]), ..Default::default() };
                    let (got, _) = tiles::richardson_lucy_tiled_cpu(&x.view(), &PsfGrid::single(p.view()), k, &RlOptions::default(), &t, |_| {}).unwrap();
                    let (l2, max) = common::specimens::errors(&flat64(&got), &flat64(&want));
                    l2 <= 1e-3 && max <= 1e-3
                };
                // Bisection on g (the error falls with the guard). Beyond about n/4 the windows
                // reach across the image and the measure means nothing.
                let cap = (n / 2 - m) / 2;
                let (mut lo, mut hi) = (0, tiles::exact_guard(m, k).min(cap));
                while lo < hi {
                    let mid = (lo + hi) / 2;
                    if within(mid) {
                        hi = mid
                    } else {
                        lo = mid + 1
                    }
                }
                let r = m as f64 / 2.0;
                let note = if lo == cap { " (capped)" } else { "" };
                let ratio = lo as f64 / (r * (k as f64).powf(0.25));
                println!("| {kind} | {sigma} | {m} | {k} | {lo}{note} | {ratio:.2} | {} |", tiles::guard_width(m, k));
            }
        }
    }
}
