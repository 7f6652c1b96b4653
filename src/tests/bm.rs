//! Block matching (BM3D/BM4D): the transforms; each stage on the device against the f64
//! reference of the same algorithm (same groups, same thresholds) on integer data, where every
//! block distance is exact in f32 and f64 alike, so the groups match exactly and only hard-
//! thresholding decisions within rounding of the threshold may differ (the reference reports
//! those; the device must equal the reference with some subset of them taken the other way);
//! both stages on noisy phantoms against the reference and against bm4d 4.2.5's PSNR.

use crate::tests::common;
use common::*;

use lucent::denoise::{Bm4dNoise, Bm4dProfile, Bm4dStage};
use lucent::ops::denoise::bm::Covariance;
use lucent::ops::denoise::bm::{self, cpu, transform};
use ndarray::{Array4, ArrayD, Ix4, IxDyn};
use rand::Rng;

#[test]
fn transforms_invert_and_windows_are_numpys() {
    for (kind, n) in
        [(transform::Local::Bior15, 4), (transform::Local::Bior15, 8), (transform::Local::Dct, 5), (transform::Local::Dct, 4), (transform::Local::Bior15, 1)]
    {
        let (f, i) = transform::matrices(kind, n).unwrap();
        for r in 0..n {
            for c in 0..n {
                let p: f64 = (0..n).map(|k| i[r * n + k] * f[k * n + c]).sum();
                assert!((p - if r == c { 1.0 } else { 0.0 }).abs() < 1e-12, "{kind:?} {n}");
            }
        }
    }
    // The DCT is orthonormal: its inverse is its transpose.
    let (f, i) = transform::matrices(transform::Local::Dct, 5).unwrap();
    assert!((0..25).all(|k| (i[k] - f[(k % 5) * 5 + k / 5]).abs() < 1e-12));
    // numpy.kaiser(5, 2.0) and numpy.kaiser(4, 2.0).
    let want5 = [0.4386762798370488, 0.8347614334011666, 1.0, 0.8347614334011666, 0.4386762798370488];
    let want4 = [0.4386762798370488, 0.9243138756260791, 0.9243138756260791, 0.4386762798370488];
    for (got, want) in [(transform::kaiser(5, 2.0), &want5[..]), (transform::kaiser(4, 2.0), &want4[..])] {
        assert!(got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-14), "{got:?}");
    }
    let mut x: Vec<f64> = (0..16).map(|i| (i as f64 * 0.7).sin()).collect();
    let before = x.clone();
    transform::haar(&mut x);
    assert!((x.iter().map(|v| v * v).sum::<f64>() - before.iter().map(|v| v * v).sum::<f64>()).abs() < 1e-12);
    transform::haar_inverse(&mut x);
    assert!(x.iter().zip(&before).all(|(a, b)| (a - b).abs() < 1e-14));
}

/// Integers in 0..=levels, as f32.
fn integers(shape: &[usize], levels: u32) -> ArrayD<f32> {
    let mut rng = rand::rng();
    ArrayD::from_shape_fn(IxDyn(shape), |_| rng.random_range(0..=levels) as f32)
}

fn four(x: &ArrayD<f64>) -> Array4<f64> {
    let s = bm::as4(x.shape()).unwrap();
    x.clone().into_shape_with_order(IxDyn(&s)).unwrap().into_dimensionality::<Ix4>().unwrap()
}

fn small(image: bool) -> Bm4dProfile {
    let mut p = if image { Bm4dProfile::image() } else { Bm4dProfile::volume() };
    p.search_window_ht = [3, 4, if image { 0 } else { 2 }];
    p.search_window_wiener = [4, 3, if image { 0 } else { 3 }];
    p.step_ht = [3, 2, if image { 1 } else { 3 }];
    p
}

/// f32's error on a group's estimate: 1e-6 of the largest group's norm (√(blocks · voxels) ·
/// the data's largest value), as [`cpu::NEAR`] measures closeness to the threshold: the
/// transforms' sums carry about 16 roundings of 6e-8 of that norm.
fn f32_bound(spec: &bm::Spec, largest: f64) -> f64 {
    1e-6 * ((spec.maxn * spec.bs.iter().product::<usize>()) as f64).sqrt() * largest
}

/// The largest difference between the device's estimate and the reference's with some subset
/// of its near decisions flipped (the best subset).
fn best_match(got: &ArrayD<f32>, noisy: &Array4<f64>, pilot: &Array4<f64>, spec: &bm::Spec, noise: &Covariance, near: &[u64]) -> f64 {
    let got = four(&to64(got));
    (0..1usize << near.len())
        .map(|mask| {
            let flip: Vec<u64> = near.iter().enumerate().filter(|(i, _)| mask >> i & 1 == 1).map(|(_, &d)| d).collect();
            let (want, _) = cpu::stage(&noisy.view(), &pilot.view(), spec, noise, &flip).unwrap();
            got.iter().zip(&want).map(|(g, w)| (g - w).abs()).fold(0.0, f64::max)
        })
        .fold(f64::INFINITY, f64::min)
}

/// The device's first stage against the reference on integers in 0..=15 (redrawn while more
/// than three decisions sit within rounding of the threshold).
fn check_hard_thresholding(shape: &[usize], profile: &Bm4dProfile, noise: &Bm4dNoise) {
    let gpu = poisoned_gpu();
    let cov = Covariance::of(noise, bm::as4(shape).unwrap(), profile.lags(bm::as4(shape).unwrap())).unwrap();
    let (z, near, spec) = (0..50)
        .find_map(|_| {
            let z = integers(shape, 15);
            let z4 = four(&to64(&z));
            let spec = profile.spec(false, cpu::range(&to64(&z).view()));
            let (_, near) = cpu::stage(&z4.view(), &z4.view(), &spec, &cov, &[]).unwrap();
            (near.len() <= 3).then_some((z, near, spec))
        })
        .expect("data with few near decisions");
    let got = lucent::denoise::bm4d(gpu, &z, noise, Some(profile), Bm4dStage::HardThresholding).unwrap();
    let z4 = four(&to64(&z));
    let err = best_match(&got, &z4, &z4, &spec, &cov, &near);
    assert!(err < f32_bound(&spec, 15.0), "{shape:?}: {err} ({} near)", near.len());
}

/// The PSD (bm4d's convention: N · σ² for white noise) of white noise of `sigma` filtered by
/// `taps` (offsets over the data's axes, weights), by direct DFT.
fn filtered_psd(shape: &[usize], sigma: f64, taps: &[(&[isize], f64)]) -> ArrayD<f32> {
    let n: f64 = shape.iter().product::<usize>() as f64;
    ArrayD::from_shape_fn(IxDyn(shape), |f| {
        let (mut re, mut im) = (0.0, 0.0);
        for (o, w) in taps {
            let phase: f64 = (0..shape.len()).map(|a| -2.0 * std::f64::consts::PI * f[a] as f64 * o[a] as f64 / shape[a] as f64).sum();
            re += w * phase.cos();
            im += w * phase.sin();
        }
        (n * sigma * sigma * (re * re + im * im)) as f32
    })
}

/// Noise correlated along every axis of a volume, and of an image.
const VOLUME_TAPS: &[(&[isize], f64)] = &[(&[0, 0, 0], 1.0), (&[0, 0, 1], 0.6), (&[0, 1, 0], -0.3), (&[1, 0, 1], 0.4), (&[2, 1, 0], 0.2)];
const IMAGE_TAPS: &[(&[isize], f64)] = &[(&[0, 0], 1.0), (&[0, 1], 0.7), (&[1, 0], 0.5), (&[1, 2], -0.25)];

#[test]
fn hard_thresholding_is_the_reference() {
    for (shape, image, sigma) in [
        (&[17usize, 13, 11][..], false, 2.3),
        (&[23, 19][..], true, 2.9),
        (&[9, 14, 7][..], false, 1.7),
        (&[8, 9][..], true, 3.3),
        (&[3, 9, 8, 7][..], false, 2.2),
    ] {
        check_hard_thresholding(shape, &small(image), &Bm4dNoise::Sigma(sigma));
    }
    // A search window of more blocks than workgroup memory holds at once (3757: two chunks).
    let wide = Bm4dProfile { search_window_ht: [16, 16, 12], step_ht: [4, 4, 4], ..Bm4dProfile::volume() };
    check_hard_thresholding(&[20, 20, 16], &wide, &Bm4dNoise::Sigma(2.4));
    // Correlated noise: each coefficient's threshold from the PSD.
    let psd = filtered_psd(&[13, 12, 11], 1.9, VOLUME_TAPS);
    check_hard_thresholding(&[13, 12, 11], &small(false), &Bm4dNoise::Psd(psd.view()));
    let psd = filtered_psd(&[22, 19], 2.2, IMAGE_TAPS);
    check_hard_thresholding(&[22, 19], &small(true), &Bm4dNoise::Psd(psd.view()));
}

#[test]
fn wiener_filtering_is_the_reference() {
    let gpu = poisoned_gpu();
    let psd3 = filtered_psd(&[11, 10, 9], 2.5, VOLUME_TAPS);
    let psd2 = filtered_psd(&[19, 17], 2.0, IMAGE_TAPS);
    for (shape, image, noise) in [
        (&[15usize, 12, 13][..], false, Bm4dNoise::Sigma(2.1)),
        (&[21, 25][..], true, Bm4dNoise::Sigma(2.6)),
        (&[10, 9, 6][..], false, Bm4dNoise::Sigma(4.0)),
        (&[4, 7, 6, 9][..], false, Bm4dNoise::Sigma(3.1)),
        (&[11, 10, 9][..], false, Bm4dNoise::Psd(psd3.view())),
        (&[19, 17][..], true, Bm4dNoise::Psd(psd2.view())),
    ] {
        let profile = small(image);
        let z = integers(shape, 15);
        let pilot = integers(shape, 15);
        let spec = profile.spec(true, cpu::range(&to64(&pilot).view()));
        // Integer distances against a cap away from every integer: the same matches in f32.
        assert!((spec.cap - spec.cap.round()).abs() > 1e-3, "cap {}", spec.cap);
        let got = lucent::denoise::bm4d(gpu, &z, &noise, Some(&profile), Bm4dStage::Wiener(pilot.view())).unwrap();
        let cov = Covariance::of(&noise, bm::as4(shape).unwrap(), profile.lags(bm::as4(shape).unwrap())).unwrap();
        let (want, _) = cpu::stage(&four(&to64(&z)).view(), &four(&to64(&pilot)).view(), &spec, &cov, &[]).unwrap();
        let err = four(&to64(&got)).iter().zip(&want).map(|(g, w)| (g - w).abs()).fold(0.0, f64::max);
        assert!(err < f32_bound(&spec, 15.0), "{shape:?}: {err}");
    }
}

#[test]
fn noise_variances_are_exact_for_a_psd() {
    // The autocovariance at a block's lags from a filtered-noise PSD equals the filter's own
    // autocorrelation times σ² (the data larger than twice the reach: no wrap-around).
    let (shape, sigma) = ([9usize, 10, 11], 0.7);
    let psd = filtered_psd(&shape, sigma, VOLUME_TAPS);
    let cov = Covariance::of(&Bm4dNoise::Psd(psd.view()), bm::as4(&shape).unwrap(), [0, 4, 4, 4]).unwrap();
    for d in [[0isize, 0, 0], [0, 0, 1], [1, 0, 1], [-2, -1, 0], [1, -1, 1], [3, 3, 3], [2, 1, -1]] {
        let mut want = 0.0;
        for (o, w) in VOLUME_TAPS {
            for (p, v) in VOLUME_TAPS {
                if (0..3).all(|a| o[a] - p[a] == d[a]) {
                    want += sigma * sigma * w * v;
                }
            }
        }
        let got = cov.at([0, d[0], d[1], d[2]]);
        assert!((got - want).abs() < 1e-6 * sigma * sigma, "lag {d:?}: {got} against {want}");
    }
    // Each coefficient's variance against the frequency-domain sum (1/N²) Σ PSD · |T̂ₖ|² of its
    // basis block, for both stages' transforms.
    let profile = Bm4dProfile::volume();
    let n: f64 = shape.iter().product::<usize>() as f64;
    for wiener in [false, true] {
        let spec = profile.spec(wiener, 1.0);
        let tables = spec.tables(&cov, bm::as4(&shape).unwrap()).unwrap();
        let voxels: usize = spec.bs.iter().product();
        for k in 0..voxels {
            let kc = spec.coords(k);
            let basis = |u: [usize; 4]| -> f64 { (0..4).map(|a| tables.forward[a][kc[a] * spec.bs[a] + u[a]]).product() };
            let mut want = 0.0;
            for (f, p) in psd.indexed_iter() {
                let (mut re, mut im) = (0.0, 0.0);
                for u in 0..voxels {
                    let uc = spec.coords(u);
                    let phase: f64 = (0..3).map(|a| -2.0 * std::f64::consts::PI * f[a] as f64 * uc[a + 1] as f64 / shape[a] as f64).sum();
                    re += basis(uc) * phase.cos();
                    im += basis(uc) * phase.sin();
                }
                want += *p as f64 * (re * re + im * im);
            }
            want /= n * n;
            assert!((tables.variance[k] - want).abs() < 1e-5 * want.max(1e-3), "coefficient {k}: {} against {want}", tables.variance[k]);
        }
    }
    // The covariance between blocks Δ apart against its direct sum Σᵤ Σ_w tᵥ(u) tᵥ(w) C(u − w + Δ).
    let spec = profile.spec(false, 1.0);
    let reach = [0, 3, 2, 4];
    let wide = Covariance::of(&Bm4dNoise::Psd(psd.view()), bm::as4(&shape).unwrap(), [0, 6, 5, 7]).unwrap();
    let (forward, _) = transform::matrices(spec.local, 4).unwrap();
    let forward = vec![vec![1.0], forward.clone(), forward.clone(), forward];
    let spread = wide.spread(spec.bs, &forward, reach).unwrap();
    for (v, d) in [(0usize, [0isize, 0, 0, 0]), (5, [0, 1, -2, 3]), (63, [0, -3, 2, -4]), (22, [0, 2, 0, 1])] {
        let (kc, mut want) = (spec.coords(v), 0.0);
        let basis = |u: [usize; 4]| -> f64 { (0..4).map(|a| forward[a][kc[a] * spec.bs[a] + u[a]]).product() };
        for u in 0..64 {
            for w in 0..64 {
                let (cu, cw) = (spec.coords(u), spec.coords(w));
                want += basis(cu) * basis(cw) * wide.at(std::array::from_fn(|a| cu[a] as isize - cw[a] as isize + d[a]));
            }
        }
        let i = v * 7 * 5 * 9 + (((d[1] + 3) as usize * 5 + (d[2] + 2) as usize) * 9) + (d[3] + 4) as usize;
        assert!((spread[i] - want).abs() < 1e-12, "coefficient {v} at {d:?}: {} against {want}", spread[i]);
    }
    // A flat PSD is white noise: the same variances, shares 1.
    let flat = ArrayD::from_elem(IxDyn(&shape), (n * sigma * sigma) as f32);
    let from_flat = Covariance::of(&Bm4dNoise::Psd(flat.view()), bm::as4(&shape).unwrap(), [0, 3, 3, 3]).unwrap();
    for wiener in [false, true] {
        let spec = Bm4dProfile::volume().spec(wiener, 1.0);
        let four = bm::as4(&shape).unwrap();
        let (a, b) = (spec.tables(&from_flat, four).unwrap(), spec.tables(&Covariance::White(sigma), four).unwrap());
        assert!(a.variance.iter().zip(&b.variance).all(|(x, y)| (x - y).abs() < 1e-6 * y));
        assert!(a.variance.iter().zip(&a.white).all(|(x, y)| (x - y).abs() < 1e-6 * y));
    }
    // A series' PSD of one time point equals the series' own, independent in time (n_t · the
    // frame's PSD at every temporal frequency).
    let frame = filtered_psd(&[8, 9, 7], 1.3, VOLUME_TAPS);
    let series = ndarray::Array4::from_shape_fn((5, 8, 9, 7), |(_, a, b, c)| 5.0 * frame[[a, b, c]]).into_dyn();
    let of = |p: &ArrayD<f32>| Covariance::of(&Bm4dNoise::Psd(p.view()), [5, 8, 9, 7], [0, 3, 3, 3]).unwrap();
    let (a, b) = (of(&frame), of(&series));
    for d in [[0isize, 0, 0, 0], [0, 1, 0, 1], [0, 2, 1, 0], [0, -1, 1, 1]] {
        assert!((a.at(d) - b.at(d)).abs() < 1e-6, "{d:?}");
    }
}

/// splitmix64 normal deviates (Box-Muller, one per two uniforms), as the Python generator of
/// the bm4d figures below draws them.
fn noise(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed;
    let mut uniform = || {
        s = s.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^= z >> 31;
        (z >> 11) as f64 * 2f64.powi(-53)
    };
    (0..n)
        .map(|_| {
            let (a, b) = (uniform(), uniform());
            (-2.0 * (1.0 - a).ln()).sqrt() * (2.0 * std::f64::consts::PI * b).cos()
        })
        .collect()
}

fn phantom(shape: &[usize]) -> ArrayD<f64> {
    ArrayD::from_shape_fn(IxDyn(shape), |i| {
        let c: Vec<f64> = (0..shape.len()).map(|a| i[a] as f64 / shape[a] as f64).collect();
        if shape.len() == 3 {
            let (z, y, x) = (c[0], c[1], c[2]);
            let inside = (x - 0.5).powi(2) / 0.12 + (y - 0.45).powi(2) / 0.08 + (z - 0.5).powi(2) / 0.1 < 1.0;
            let ball = (x - 0.4).powi(2) + (y - 0.6).powi(2) + (z - 0.45).powi(2) < 0.02;
            0.2 + 0.5 * inside as u8 as f64 + 0.3 * ball as u8 as f64 + 0.2 * x
        } else {
            let (y, x) = (c[0], c[1]);
            let square = (x - 0.4).abs() < 0.25 && (y - 0.5).abs() < 0.2;
            let disc = (x - 0.7).powi(2) + (y - 0.3).powi(2) < 0.03;
            0.3 + 0.4 * square as u8 as f64 + 0.15 * (20.0 * x).sin() * (9.0 * y).cos() + 0.2 * disc as u8 as f64
        }
    })
}

fn psnr(x: &ArrayD<f64>, truth: &ArrayD<f64>) -> f64 {
    let range = truth.fold(f64::NEG_INFINITY, |m, &v| m.max(v)) - truth.fold(f64::INFINITY, |m, &v| m.min(v));
    let mse = x.iter().zip(truth).map(|(a, b)| (a - b).powi(2)).sum::<f64>() / x.len() as f64;
    10.0 * (range * range / mse).log10()
}

#[test]
fn both_stages_match_bm4d_on_phantoms() {
    // bm4d 4.2.5's bm4d(z, 0.1) on these inputs (the noisy data in f32, as here): PSNR it
    // scored, and the noisy data's.
    let gpu = gpu();
    for (shape, seed, noisy_psnr, bm4d_psnr) in
        [(&[32usize, 30, 28][..], 11u64, 19.180455726688344, 32.15519215607527), (&[64, 56][..], 12, 19.101884383349358, 29.771724870134904)]
    {
        let truth = phantom(shape);
        let z = ArrayD::from_shape_vec(IxDyn(shape), truth.iter().zip(noise(truth.len(), seed)).map(|(t, n)| (t + 0.1 * n) as f32).collect()).unwrap();
        assert!((psnr(&to64(&z), &truth) - noisy_psnr).abs() < 1e-6, "the inputs are bm4d's");
        let white = Bm4dNoise::Sigma(0.1);
        let once = lucent::denoise::bm4d(gpu, &z, &white, None, Bm4dStage::All).unwrap();
        // Integer sums: the same bits every run, whatever order the groups add in.
        assert_eq!(once, lucent::denoise::bm4d(gpu, &z, &white, None, Bm4dStage::All).unwrap(), "deterministic");
        let got = to64(&once);
        let want = cpu::bm4d(&to64(&z).view(), &white, None, false, None).unwrap();
        let (g, w) = (psnr(&got, &truth), psnr(&want, &truth));
        // Second-stage matching on the first estimate may swap a near-tied block: PSNR, not
        // voxels, agree.
        assert!((g - w).abs() < 0.02, "{shape:?}: device {g} dB, reference {w} dB");
        assert!(g > bm4d_psnr - 0.3, "{shape:?}: {g} dB against bm4d's {bm4d_psnr}");
    }
}

#[test]
fn bad_input_is_refused() {
    let gpu = gpu();
    let z = rand_array(&[12, 12, 12]);
    let run = |z: &ArrayD<f32>, sigma: f64, p: Option<&Bm4dProfile>| lucent::denoise::bm4d(gpu, z, &Bm4dNoise::Sigma(sigma), p, Bm4dStage::All);
    assert!(run(&z, 0.0, None).is_err());
    assert!(run(&z, f64::NAN, None).is_err());
    assert!(run(&rand_array(&[3, 3, 3]), 0.1, None).is_err(), "smaller than a block");
    assert!(run(&rand_array(&[12]), 0.1, None).is_err());
    assert!(run(&rand_array(&[2, 2, 5, 5, 5]), 0.1, None).is_err());
    let mut nan = z.clone();
    nan[[1, 2, 3]] = f32::NAN;
    assert!(run(&nan, 0.1, None).is_err());
    let mut p = Bm4dProfile::volume();
    p.max_stack_size_wiener = 64;
    assert!(run(&z, 0.1, Some(&p)).is_err());
    let p2 = Bm4dProfile { bs_ht: [9, 4, 4], ..Bm4dProfile::volume() };
    assert!(run(&z, 0.1, Some(&p2)).is_err());
    let pilot = rand_array(&[12, 12, 11]);
    assert!(lucent::denoise::bm4d(gpu, &z, &Bm4dNoise::Sigma(0.1), None, Bm4dStage::Wiener(pilot.view())).is_err());
    // PSDs of another shape, negative or not finite, or of no power.
    let psd = |shape: &[usize], v: f32| ArrayD::from_elem(IxDyn(shape), v);
    for bad in [psd(&[12, 12, 11], 1.0), psd(&[12, 12, 12], -1.0), psd(&[12, 12, 12], f32::INFINITY), psd(&[12, 12, 12], 0.0), psd(&[12, 12, 12, 1], 1.0)] {
        assert!(lucent::denoise::bm4d(gpu, &z, &Bm4dNoise::Psd(bad.view()), None, Bm4dStage::All).is_err(), "{:?}", bad.shape());
    }
    // Data far from 1 is filtered near 1 and scaled back.
    let big = z.mapv(|v| v * 2f32.powi(40));
    let a = run(&z, 0.1, None).unwrap();
    let b = run(&big, 0.1 * 2f64.powi(40), None).unwrap();
    assert!(a.iter().zip(&b).all(|(x, y)| *y == x * 2f32.powi(40)));
}

#[test]
fn matching_across_time_beats_each_frame_alone_on_series() {
    // The moving-edge and textured series (lucent phantom --series), σ as BENCHMARKS' 4D
    // comparisons: groups from the neighbouring time points (±1) against each frame as its own
    // volume (bm4d per frame).
    use lucent::phantom::dynamic;
    let gpu = gpu();
    for (name, clean, sigma) in [("moving-edge", dynamic::moving_edge([6, 14, 18, 17], 0.5), 0.25), ("textured", dynamic::textured([5, 16, 15, 17], 3), 0.2)] {
        let z = dynamic::noisy(&clean, sigma, 7).mapv(|v| v as f32).into_dyn();
        let truth = clean.into_dyn();
        let series = to64(&lucent::denoise::bm4d(gpu, &z, &Bm4dNoise::Sigma(sigma), None, Bm4dStage::All).unwrap());
        let alone = Bm4dProfile { search_window_time: 0, ..Bm4dProfile::volume() };
        let frames = to64(&lucent::denoise::bm4d(gpu, &z, &Bm4dNoise::Sigma(sigma), Some(&alone), Bm4dStage::All).unwrap());
        let (s, f) = (psnr(&series, &truth), psnr(&frames, &truth));
        eprintln!("{name}: {s:.2} dB across time, {f:.2} dB frame by frame, noisy {:.2}", psnr(&to64(&z), &truth));
        assert!(s > f + 0.3, "{name}: {s} dB across time, {f} dB frame by frame");
    }
}

#[test]
fn strongly_correlated_noise_picks_its_profile() {
    // White noise and short-range correlation keep the volume profile; noise through a 3³
    // Gaussian (its 4³ block mean's variance many times white noise's) gets the correlated one;
    // images keep theirs.
    let shape = [12usize, 11, 10];
    let g = [(-1isize, (-0.5f64).exp()), (0, 1.0), (1, (-0.5f64).exp())];
    let mut gauss: Vec<([isize; 3], f64)> = Vec::new();
    for (a, wa) in g {
        for (b, wb) in g {
            for (c, wc) in g {
                gauss.push(([a + 1, b + 1, c + 1], wa * wb * wc));
            }
        }
    }
    let gauss: Vec<(&[isize], f64)> = gauss.iter().map(|(o, w)| (&o[..], *w)).collect();
    let psd = |taps: &[(&[isize], f64)]| filtered_psd(&shape, 0.1, taps);
    let pick = |noise: &Bm4dNoise| Bm4dProfile::for_noise(&shape, noise).unwrap();
    assert_eq!(pick(&Bm4dNoise::Sigma(0.1)), Bm4dProfile::volume());
    assert_eq!(pick(&Bm4dNoise::Psd(psd(VOLUME_TAPS).view())), Bm4dProfile::volume());
    assert_eq!(pick(&Bm4dNoise::Psd(psd(&gauss).view())), Bm4dProfile::correlated_volume());
    let image = filtered_psd(&[20, 17], 0.1, IMAGE_TAPS);
    assert_eq!(Bm4dProfile::for_noise(&[20, 17], &Bm4dNoise::Psd(image.view())).unwrap(), Bm4dProfile::image());
    assert!(Bm4dProfile::for_noise(&shape, &Bm4dNoise::Sigma(-1.0)).is_err());
}
