//! Phase correlation (ops::registration): the f64 reference and the GPU against values
//! scikit-image 0.26.0 printed (/tmp-generated from the same deterministic images: xorshift
//! values, rolled, blended with a neighbour for sub-sample shifts), the GPU against the reference
//! on random images of awkward shapes, known sub-sample shifts recovered, bad input refused.
//!
//! Tolerance: scikit-image computes in f32 (complex64) and so does the GPU: shifts equal to
//! 1e-4 (they are multiples of 1/upsample), error and phase difference within 1e-4.

use crate::tests::common;
use common::*;

use lucent::ops::registration::cpu;
use lucent::registration::{phase_cross_correlation, Normalization, PhaseCorrelation, PhaseCorrelator, Registration};
use lucent::Error;
use ndarray::{ArrayD, Axis, IxDyn};
use num_complex::Complex64;

/// scikit-image's generator of the golden cases: xorshift64 values in [0, 1).
fn xorshift(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f64 / (1u64 << 24) as f64
        })
        .collect()
}

/// numpy.roll over every axis.
fn roll(x: &ArrayD<f64>, shift: &[isize]) -> ArrayD<f64> {
    let dims = x.shape().to_vec();
    ArrayD::from_shape_fn(IxDyn(&dims), |at| {
        let from: Vec<usize> = (0..dims.len()).map(|a| (at[a] as isize - shift[a]).rem_euclid(dims[a] as isize) as usize).collect();
        x[IxDyn(&from)]
    })
}

/// The golden cases' images: `moving` is the reference rolled by `shift`, blended with its
/// neighbour along the last axis by `frac`.
fn case(dims: &[usize], shift: &[isize], frac: f64, seed: u64) -> (ArrayD<f32>, ArrayD<f32>) {
    let reference = ArrayD::from_shape_vec(IxDyn(dims), xorshift(dims.iter().product(), seed)).unwrap();
    let a = roll(&reference, shift);
    let mut one = vec![0; dims.len()];
    one[dims.len() - 1] = 1;
    let b = roll(&a, &one);
    let moving = &a * (1.0 - frac) + &b * frac;
    (reference.mapv(|v| v as f32), moving.mapv(|v| v as f32))
}

type Golden = (&'static [usize], &'static [isize], f64, f64, bool, &'static [f64], f64, f64);

// skimage.registration.phase_cross_correlation(reference, moving, upsample_factor=u,
// normalization="phase" or None), scikit-image 0.26.0, float32 images; case i seeded
// 0x9E3779B97F4A7C15 + i.
const GOLDEN: &[Golden] = &[
    (&[20, 17], &[3, -5], 0.0, 1.0, true, &[-3.0, 5.0], 0.9999558329582214, 1.7681342501241204e-10),
    (&[20, 17], &[3, -5], 0.3, 10.0, true, &[-3.0, 4.800000190734863], 0.9999570250511169, -1.5008351894607586e-08),
    (&[20, 17], &[-2, 7], 0.45, 100.0, true, &[2.0, -7.349999904632568], 0.9999569058418274, -2.717299718568711e-09),
    (&[31], &[4], 0.6, 20.0, true, &[-4.75], 0.994804322719574, -3.433363593430272e-09),
    (&[6, 9, 8], &[1, -2, 3], 0.25, 4.0, false, &[-1.0, 2.0, -3.0], 0.1883903592824936, 2.4203543613765532e-09),
    (&[6, 9, 8], &[1, -2, 3], 0.25, 1.0, false, &[-1.0, 2.0, -3.0], 0.17565761506557465, 3.9384264621279697e-13),
    (&[5, 4, 6, 7], &[2, 1, -1, 3], 0.4, 3.0, true, &[-2.0, -1.0, 1.0, -3.3333332538604736], 0.9999925494194031, 2.032829193865382e-08),
    (&[16, 15], &[-6, 7], 0.35, 2.5, true, &[6.0, -7.199999809265137], 0.9999330043792725, -1.8422866787659586e-08),
    (&[1, 12], &[0, 5], 0.2, 8.0, true, &[0.0, -5.125], 0.9866945743560791, 0.0321802981197834),
];

fn how(u: f64, phase: bool) -> PhaseCorrelation {
    PhaseCorrelation { upsample_factor: u, normalization: if phase { Normalization::Phase } else { Normalization::None } }
}

fn compare(got: &Registration, shift: &[f64], error: f64, phasediff: f64, what: &str) {
    assert_eq!(got.shift.len(), shift.len(), "{what}");
    for (g, w) in got.shift.iter().zip(shift) {
        assert!((g - w).abs() <= 1e-4, "{what}: shift {:?} vs {shift:?}", got.shift);
    }
    let e = got.error.expect("an error value");
    assert!((e - error).abs() <= 1e-4, "{what}: error {e} vs {error}");
    let p = got.phasediff.expect("a phase difference");
    // ±π are one angle.
    let d = (p - phasediff).rem_euclid(2.0 * std::f64::consts::PI);
    assert!(d.min(2.0 * std::f64::consts::PI - d) <= 1e-4, "{what}: phasediff {p} vs {phasediff}");
}

#[test]
fn reference_and_gpu_match_scikit_image() {
    for (i, &(dims, shift, frac, u, phase, want, error, phasediff)) in GOLDEN.iter().enumerate() {
        let (reference, moving) = case(dims, shift, frac, 0x9E37_79B9_7F4A_7C15u64.wrapping_add(i as u64));
        let what = format!("case {i}: {dims:?} u {u}");
        let on_cpu = cpu::phase_cross_correlation(&reference.mapv(|v| v as f64), &moving.mapv(|v| v as f64), &how(u, phase));
        compare(&on_cpu, want, error, phasediff, &format!("{what} (reference)"));
        // scikit-image's values at a fractional factor (2.5) are off the true shift (the grid is
        // misplaced); the f64 reference reproduces them, the library refuses the factor.
        if u.fract() != 0.0 {
            let refused = phase_cross_correlation(poisoned_gpu(), &reference, &moving, &how(u, phase));
            assert!(matches!(&refused, Err(lucent::Error::Invalid(m)) if m.contains("whole number")), "{what}: {refused:?}");
            continue;
        }
        let on_gpu = phase_cross_correlation(poisoned_gpu(), &reference, &moving, &how(u, phase)).unwrap();
        compare(&on_gpu, want, error, phasediff, &format!("{what} (GPU)"));
    }
}

/// Values up to f32's limit (either image, not a power of two) register as the f64 reference
/// registers them: the shift as at ordinary scale, and the error and phase difference
/// scikit-image's of the images as given (with phase normalisation the error depends on their
/// scale). The sums of squares once overflowed ("non-finite value"), and were refused for the
/// moving image only.
#[test]
fn images_near_f32_limits_register_as_the_f64_reference() {
    for (i, &(dims, shift, frac, u, phase, want, ..)) in GOLDEN.iter().enumerate().filter(|(_, g)| g.3.fract() == 0.0) {
        let (reference, moving) = case(dims, shift, frac, 0x9E37_79B9_7F4A_7C15u64.wrapping_add(i as u64));
        for (r, m) in [(3.1e38f32, 1.0f32), (1.0, 2.9e37), (5e30, 3e-3), (7e22, 1e25)] {
            let what = format!("case {i}: {dims:?} u {u}, reference × {r:e}, moving × {m:e}");
            let (rs, ms) = (reference.mapv(|v| v * r), moving.mapv(|v| v * m));
            let on_cpu = cpu::phase_cross_correlation(&rs.mapv(|v| v as f64), &ms.mapv(|v| v as f64), &how(u, phase));
            assert!(on_cpu.shift.iter().zip(want).all(|(a, b)| (a - b).abs() <= 1e-4), "{what}: the reference's shift {:?}", on_cpu.shift);
            let got = phase_cross_correlation(poisoned_gpu(), &rs, &ms, &how(u, phase)).unwrap();
            compare(&got, want, on_cpu.error.unwrap(), on_cpu.phasediff.unwrap(), &what);
        }
    }
    let (reference, moving) = case(&[23, 19], &[4, -6], 0.0, 17);
    let masks = ArrayD::from_elem(IxDyn(&[23, 19]), true);
    let plain = lucent::registration::masked_phase_cross_correlation(poisoned_gpu(), &reference, &moving, &masks, &masks, 0.3, 1.0).unwrap();
    let big = lucent::registration::masked_phase_cross_correlation(
        poisoned_gpu(),
        &reference.mapv(|v| v * 3e38),
        &moving.mapv(|v| v * 1e-29),
        &masks,
        &masks,
        0.3,
        1.0,
    )
    .unwrap();
    assert_eq!(plain, vec![-4.0, 6.0]);
    assert_eq!(big, plain, "masked, scaled");
}

/// `x` moved by `shift` samples (periodically, sub-sample through the Fourier shift theorem), f64.
fn fourier_shifted(x: &ArrayD<f64>, shift: &[f64]) -> ArrayD<f64> {
    let axes: Vec<usize> = (0..x.ndim()).collect();
    let mut s = lucent::fft::cpu::c2c(&x.mapv(|v| Complex64::new(v, 0.0)), &axes, false, lucent::fft::Norm::Backward);
    let factors = lucent::ops::interpolate::phase_factors(x.shape(), shift, None).unwrap();
    let mut start = 0;
    for (a, &n) in x.shape().iter().enumerate() {
        for (k, mut plane) in s.axis_iter_mut(Axis(a)).enumerate() {
            plane.mapv_inplace(|v| v * factors[start + k]);
        }
        start += n;
    }
    lucent::fft::cpu::c2c(&s, &axes, true, lucent::fft::Norm::Backward).mapv(|v| v.re)
}

#[test]
fn sub_sample_shifts_are_recovered() {
    // Smooth random images (a periodic blur of noise) moved by known shifts on the 1/u grid (off
    // it, two grid points may tie): the shift that registers the moving image back is minus the
    // motion.
    let cases: &[(&[usize], &[f64], f64, f64)] = &[
        (&[64, 45], &[3.37, -7.81], 100.0, 0.02),
        (&[23, 30, 19], &[-2.45, 4.12, 1.7], 100.0, 0.02),
        (&[10, 12, 9, 14], &[1.3, -2.6, 0.4, 3.2], 10.0, 0.1),
        (&[97], &[-11.28], 50.0, 0.03),
    ];
    for &(dims, motion, u, tolerance) in cases {
        let noise = ArrayD::from_shape_vec(IxDyn(dims), random(dims.iter().product()).iter().map(|&v| v as f64).collect()).unwrap();
        let smooth = (0..3).fold(noise, |x, _| {
            let mut y = x.clone();
            for a in 0..dims.len() {
                let mut back = vec![0isize; dims.len()];
                back[a] = 1;
                let fwd: Vec<isize> = back.iter().map(|v| -v).collect();
                y = &y * 0.5 + &(&roll(&y, &back) + &roll(&y, &fwd)) * 0.25;
            }
            y
        });
        let moving = fourier_shifted(&smooth, motion);
        let got = phase_cross_correlation(poisoned_gpu(), &smooth.mapv(|v| v as f32), &moving.mapv(|v| v as f32), &how(u, true)).unwrap();
        for (g, m) in got.shift.iter().zip(motion) {
            assert!((g + m).abs() <= tolerance, "{dims:?}: found {:?} for the motion {motion:?}", got.shift);
        }
        let want = cpu::phase_cross_correlation(&smooth, &moving, &how(u, true));
        assert_eq!(got.shift, want.shift, "{dims:?}: the GPU and the reference");
    }
}

#[test]
fn one_reference_many_moving_images() {
    let gpu = poisoned_gpu();
    let dims = [37usize, 41];
    let reference = rand_array(&dims);
    // Unnormalised, so the error of an exact roll is ~0 (phase normalisation makes it ~1).
    let correlator = PhaseCorrelator::new(gpu, &reference.view(), &how(20.0, false)).unwrap();
    for (k, shift) in [[3isize, -4], [-17, 20], [0, 0], [18, -20]].iter().enumerate() {
        let moving = roll(&reference.mapv(|v| v as f64), shift).mapv(|v| v as f32);
        let got = correlator.register(&moving.view()).unwrap();
        let wrapped: Vec<f64> = shift
            .iter()
            .zip(&dims)
            .map(|(&s, &n)| {
                let s = (-s).rem_euclid(n as isize);
                if s > n as isize / 2 {
                    (s - n as isize) as f64
                } else {
                    s as f64
                }
            })
            .collect();
        assert_eq!(got.shift, wrapped, "moving image {k}");
        assert!(got.error.unwrap() < 1e-3, "an exact roll: error {:?}", got.error);
    }
}

#[test]
fn bad_input_is_refused_and_empty_images_have_no_error() {
    let gpu = gpu();
    let x = rand_array(&[8, 9]);
    let default = PhaseCorrelation::default();
    assert!(matches!(phase_cross_correlation(gpu, &x, &rand_array(&[9, 8]), &default), Err(Error::Shape(_))));
    let mut nan = x.clone();
    nan[[2, 3]] = f32::NAN;
    assert!(matches!(phase_cross_correlation(gpu, &x, &nan, &default), Err(Error::NonFinite(_))));
    assert!(matches!(phase_cross_correlation(gpu, &nan, &x, &default), Err(Error::NonFinite(_))));
    let empty = ArrayD::<f32>::zeros(IxDyn(&[0, 4]));
    assert!(matches!(phase_cross_correlation(gpu, &empty, &empty, &default), Err(Error::Empty(_))));
    let five = rand_array(&[2, 2, 2, 2, 2]);
    assert!(matches!(phase_cross_correlation(gpu, &five, &five, &default), Err(Error::Shape(_))));
    for u in [0.5, f64::NAN, f64::INFINITY] {
        assert!(matches!(phase_cross_correlation(gpu, &x, &x, &how(u, true)), Err(Error::Invalid(_))), "upsample {u}");
    }
    // All zeros: a defined shift (none), no error value (scikit-image's is NaN).
    let zeros = ArrayD::<f32>::zeros(IxDyn(&[8, 9]));
    for u in [1.0, 10.0] {
        let got = phase_cross_correlation(gpu, &zeros, &x, &how(u, true)).unwrap();
        assert!(got.shift.iter().all(|s| s.is_finite()), "{:?}", got.shift);
        assert_eq!(got.error, None);
    }
}

// skimage.registration.phase_cross_correlation(fftn(reference), fftn(moving), space="fourier"),
// scikit-image 0.26.0, the spectra computed in f64 and rounded to complex64: the golden images
// above (case i's seed), and complex images (real and imaginary parts from seeds s and s + 1000).
type GoldenSpectra = (bool, &'static [usize], &'static [isize], f64, f64, bool, u64, &'static [f64], f64, f64);
const GOLDEN_SPECTRA: &[GoldenSpectra] = &[
    (false, &[20, 17], &[3, -5], 0.3, 10.0, true, 1, &[-3.0, 4.800000190734863], 0.9999570250511169, -9.854478122406363e-09),
    (false, &[6, 9, 8], &[1, -2, 3], 0.25, 4.0, false, 4, &[-1.0, 2.0, -3.0], 0.1883903592824936, 2.5059435429519716e-11),
    (false, &[20, 17], &[3, -5], 0.0, 1.0, true, 0, &[-3.0, 5.0], 0.9999558329582214, -9.82919301506513e-11),
    (true, &[11, 13], &[2, -4], 0.35, 20.0, true, 77, &[-2.0, 3.799999952316284], 0.9999428987503052, 2.1982806686082768e-08),
    (true, &[7, 5, 6], &[1, 2, -2], 0.2, 1.0, true, 78, &[-1.0, -2.0, 2.0], 0.9999710917472839, 8.2303364123959e-09),
];

#[test]
fn fourier_space_matches_scikit_image() {
    let spectrum = |x: &ArrayD<Complex64>| {
        let axes: Vec<usize> = (0..x.ndim()).collect();
        lucent::fft::cpu::c2c(x, &axes, false, lucent::fft::Norm::Backward).mapv(|v| num_complex::Complex32::new(v.re as f32, v.im as f32))
    };
    let widen = |x: &ArrayD<f32>| x.mapv(|v| Complex64::new(v as f64, 0.0));
    for &(complex, dims, shift, frac, u, phase, seed, want, error, phasediff) in GOLDEN_SPECTRA {
        let (reference, moving) = if complex {
            let (rr, rm) = case(dims, shift, frac, seed);
            let (ir, im) = case(dims, shift, frac, seed + 1000);
            let join = |re: &ArrayD<f32>, im: &ArrayD<f32>| ndarray::Zip::from(re).and(im).map_collect(|&a, &b| Complex64::new(a as f64, b as f64));
            (join(&rr, &ir), join(&rm, &im))
        } else {
            let seed = 0x9E37_79B9_7F4A_7C15u64.wrapping_add(seed);
            let (r, m) = case(dims, shift, frac, seed);
            (widen(&r), widen(&m))
        };
        let (r, m) = (spectrum(&reference), spectrum(&moving));
        let what = format!("{dims:?} u {u} complex {complex}");
        let to64 = |x: &ArrayD<num_complex::Complex32>| x.mapv(|v| Complex64::new(v.re as f64, v.im as f64));
        compare(&cpu::phase_cross_correlation_spectra(&to64(&r), &to64(&m), &how(u, phase)), want, error, phasediff, &format!("{what} (reference)"));
        let got = lucent::registration::phase_cross_correlation_spectra(poisoned_gpu(), &r, &m, &how(u, phase)).unwrap();
        compare(&got, want, error, phasediff, &format!("{what} (GPU)"));
    }
    // A Fourier-space correlator takes spectra only.
    let x = rand_array(&[6, 5]);
    let spec = spectrum(&widen(&x));
    let correlator = PhaseCorrelator::from_spectrum(gpu(), &spec.view(), &PhaseCorrelation::default()).unwrap();
    assert!(matches!(correlator.register(&x.view()), Err(Error::Shape(_))));
    assert!(correlator.register_spectrum(&spec.view()).is_ok());
}

// Masked registration, scikit-image 0.26.0: the reference from xorshift seed s (float32), the
// moving image its roll, masks of values > 0.25 from seeds s + 100 (reference) and s + 200
// (moving); phase_cross_correlation(..., reference_mask, moving_mask, overlap_ratio) and, for
// the same images, cross_correlate_masked(moving, reference, moving_mask, reference_mask)'s
// shape, largest value and values at seven flat indices.
type GoldenMasked = (&'static [usize], &'static [isize], f64, u64, &'static [f64]);
const GOLDEN_MASKED: &[GoldenMasked] = &[
    (&[20, 17], &[3, -5], 0.3, 11, &[-3.0, 5.0]),
    (&[16, 16], &[-4, 6], 0.5, 12, &[4.0, -3.0]),
    (&[9, 11, 8], &[2, -3, 1], 0.3, 13, &[-2.0, 3.0, -1.0]),
    (&[30], &[7], 0.3, 14, &[-7.0]),
    (&[12, 13], &[0, 0], 0.1, 15, &[0.0, 0.0]),
];
type GoldenMap = (u64, &'static [usize], f64, &'static [(usize, f64)]);
const GOLDEN_MAPS: &[GoldenMap] = &[
    (11, &[39, 33], 1.0, &[(0, 0.0), (214, -0.12684908509254456), (429, 0.0), (643, 0.02667910046875477), (857, 0.0), (1072, 0.288280725479126), (1286, 0.0)]),
    (12, &[31, 31], 0.3261425793170929, &[(0, 0.0), (160, 0.0), (320, 0.0), (480, -0.0028185457922518253), (640, 0.0), (800, 0.0), (960, 0.0)]),
    (13, &[17, 21, 15], 1.0, &[(0, 0.0), (892, 0.0), (1785, 0.0), (2677, 0.0018043421441689134), (3569, 0.0), (4462, 0.0), (5354, 0.0)]),
    (
        14,
        &[59],
        0.9999985098838806,
        &[(0, 0.0), (10, 0.0), (19, 0.42627912759780884), (29, -0.16233187913894653), (39, -0.22296522557735443), (48, 0.984946072101593), (58, 0.0)],
    ),
    (
        15,
        &[23, 25],
        0.9999995827674866,
        &[
            (0, 0.0),
            (96, -0.20882035791873932),
            (191, 0.11015141755342484),
            (287, 0.9999995827674866),
            (383, -0.012998715974390507),
            (478, 0.15405809879302979),
            (574, 0.0),
        ],
    ),
];

#[test]
fn masked_reference_matches_scikit_image() {
    for (&(dims, shift, ratio, seed, want), &(map_seed, map_dims, map_max, picks)) in GOLDEN_MASKED.iter().zip(GOLDEN_MAPS) {
        assert_eq!(seed, map_seed);
        let n: usize = dims.iter().product();
        let reference = ArrayD::from_shape_vec(IxDyn(dims), xorshift(n, seed).iter().map(|&v| v as f32 as f64).collect()).unwrap();
        let moving = roll(&reference, shift);
        let mask = |s: u64| ArrayD::from_shape_vec(IxDyn(dims), xorshift(n, s).iter().map(|&v| v > 0.25).collect()).unwrap();
        let (rm, mm) = (mask(seed + 100), mask(seed + 200));
        let map = cpu::cross_correlate_masked(&moving, &reference, &mm, &rm, ratio);
        assert_eq!(map.shape(), map_dims, "seed {seed}");
        let max = map.iter().fold(f64::MIN, |m, &v| m.max(v));
        assert!((max - map_max).abs() <= 1e-4, "seed {seed}: largest {max} vs {map_max}");
        for &(i, v) in picks {
            let got = map.iter().nth(i).copied().unwrap();
            assert!((got - v).abs() <= 1e-4, "seed {seed}: value {i} is {got}, scikit-image's {v}");
        }
        let got = cpu::masked_phase_cross_correlation(&reference, &moving, &rm, &mm, ratio, 1.0);
        assert_eq!(got, want, "seed {seed}: shift");
        // The GPU: the same map (f32, as scikit-image's) and shift.
        let (r32, m32) = (reference.mapv(|v| v as f32), moving.mapv(|v| v as f32));
        let gpu_map = lucent::registration::cross_correlate_masked(poisoned_gpu(), &m32, &r32, &mm, &rm, ratio).unwrap();
        assert_eq!(gpu_map.shape(), map_dims, "seed {seed} (GPU)");
        let worst = gpu_map.iter().zip(map.iter()).fold(0.0f64, |w, (&g, &r)| w.max((g as f64 - r).abs()));
        assert!(worst <= 1e-4, "seed {seed}: the GPU's map differs from the reference by {worst}");
        for &(i, v) in picks {
            let got = gpu_map.iter().nth(i).copied().unwrap() as f64;
            assert!((got - v).abs() <= 1e-4, "seed {seed}: GPU value {i} is {got}, scikit-image's {v}");
        }
        let got = lucent::registration::masked_phase_cross_correlation(poisoned_gpu(), &r32, &m32, &rm, &mm, ratio, 1.0).unwrap();
        assert_eq!(got, want, "seed {seed}: shift (GPU)");
    }
}

/// Overlap counts exactly at `overlap_ratio × largest` are kept, as scikit-image keeps them (its
/// threshold is in f64): full masks of 10 samples give counts 10 − |lag|, so the lags ±7 count
/// 3 = 0.3 × 10. With 0.3 rounded up to an f32 they fell below it on the GPU and read 0.
#[test]
fn masked_overlap_exactly_at_the_ratio_is_kept() {
    let (f, g) = (rand_array(&[10]), rand_array(&[10]));
    let mask = ArrayD::from_elem(IxDyn(&[10]), true);
    let want = cpu::cross_correlate_masked(&to64(&f), &to64(&g), &mask, &mask, 0.3);
    let got = lucent::registration::cross_correlate_masked(poisoned_gpu(), &f, &g, &mask, &mask, 0.3).unwrap();
    for lag in [2, 16] {
        assert!(want[lag] != 0.0, "the reference keeps lag index {lag}");
        assert!((got[lag] as f64 - want[lag]).abs() <= 1e-4, "lag index {lag}: GPU {} vs reference {}", got[lag], want[lag]);
    }
    assert_eq!((got[1], want[1]), (0.0, 0.0), "a count of 2 is below the ratio");
}

#[test]
fn masked_correlation_of_unequal_shapes_and_bad_masks() {
    // Fixed and moving of different shapes (prime, odd, axes of 1), random masks: the GPU
    // against the reference over the whole map. (A moving image of one sample has no variance
    // anywhere: every denominator is rounding noise, in scikit-image's f32 too.)
    for (f, m) in [(&[23usize, 17][..], &[9usize, 12][..]), (&[7, 6, 5], &[3, 8, 2]), (&[41], &[3]), (&[5, 1, 9], &[4, 3, 3])] {
        let (x, y) = (rand_array(f), rand_array(m));
        let mask = |d: &[usize]| ArrayD::from_shape_vec(IxDyn(d), random(d.iter().product()).iter().map(|&v| v > -0.5).collect::<Vec<bool>>()).unwrap();
        let (fm, mm) = (mask(f), mask(m));
        let (condition, want) = cpu::masked_parts(&x.mapv(|v| v as f64), &y.mapv(|v| v as f64), &fm, &mm, 0.2);
        let got = lucent::registration::cross_correlate_masked(poisoned_gpu(), &x, &y, &fm, &mm, 0.2).unwrap();
        assert_eq!(got.shape(), want.shape());
        // 1e-4, or 250 ε × the value's condition where that is more (an ill-conditioned value
        // rounds by ~100-170 ε × its condition in f32, measured over 180 fresh runs; a flat 1e-4
        // failed about one run in ten, before this session too).
        let tolerance = |c: f64| 1e-4f64.max(250.0 * f32::EPSILON as f64 * c);
        let worst = ndarray::Zip::from(&got).and(&want).and(&condition).fold(0.0f64, |w, &g, &r, &c| w.max((g as f64 - r).abs() / tolerance(c)));
        assert!(worst <= 1.0, "{f:?} ⋆ {m:?}: largest difference {worst} of its tolerance");
    }
    let x = rand_array(&[6, 7]);
    let all = ArrayD::from_elem(IxDyn(&[6, 7]), true);
    let none = ArrayD::from_elem(IxDyn(&[6, 7]), false);
    let wrong = ArrayD::from_elem(IxDyn(&[7, 6]), true);
    let call = |rm: &ArrayD<bool>, mm: &ArrayD<bool>, ratio: f64| lucent::registration::masked_phase_cross_correlation(gpu(), &x, &x, rm, mm, ratio, 1.0);
    assert!(matches!(call(&none, &all, 0.3), Err(Error::Invalid(_))), "an empty mask");
    assert!(matches!(call(&all, &wrong, 0.3), Err(Error::Shape(_))), "a mask of another shape");
    assert!(matches!(call(&all, &all, 1.5), Err(Error::Invalid(_))), "overlap ratio");
    let mut nan = x.clone();
    nan[[0, 0]] = f32::NAN;
    assert!(matches!(lucent::registration::masked_phase_cross_correlation(gpu(), &x, &nan, &all, &all, 0.3, 1.0), Err(Error::NonFinite(_))));
    assert_eq!(call(&all, &all, 0.3).unwrap(), vec![0.0, 0.0], "an image onto itself");
    // Constant where the mask is true (elsewhere anything): no variance, refused.
    let mut flat = ArrayD::from_elem(IxDyn(&[6, 7]), 2.5f32);
    flat[[0, 0]] = 9.0;
    let mut most = all.clone();
    most[[0, 0]] = false;
    for (r, m) in [(&x, &flat), (&flat, &x)] {
        let got = lucent::registration::masked_phase_cross_correlation(gpu(), r, m, &most, &most, 0.3, 1.0);
        assert!(matches!(&got, Err(Error::Invalid(e)) if e.contains("constant")), "{got:?}");
    }
}

#[test]
fn record_form_registers_several_images_in_one_submission() {
    // The coarse stage recorded twice into one pipeline (the reference's spectrum made there too):
    // the same peaks as the one-call form's whole-sample shifts.
    let gpu = poisoned_gpu();
    let dims = [19usize, 26];
    let reference = rand_array(&dims);
    let shifts = [[4isize, -7], [-9, 11]];
    let movings: Vec<ArrayD<f32>> = shifts.iter().map(|s| roll(&reference.mapv(|v| v as f64), s).mapv(|v| v as f32)).collect();
    let mut rec = lucent::Recording::new(gpu);
    let r = rec.upload_f32(&reference.view()).unwrap();
    let spectrum = lucent::fft::FftPlan::cached(gpu, &dims, &[0, 1], lucent::fft::Transform::RealForward, lucent::fft::Norm::Backward)
        .unwrap()
        .record(&mut rec, r)
        .unwrap();
    let peaks: Vec<_> = movings
        .iter()
        .map(|m| {
            let m = rec.upload_f32(&m.view()).unwrap();
            let peak = lucent::registration::record_phase_correlation(&mut rec, spectrum, m, &dims, Normalization::Phase, None).unwrap();
            rec.download(peak.index)
        })
        .collect();
    let results = rec.run().unwrap();
    for ((peak, moving), shift) in peaks.into_iter().zip(&movings).zip(&shifts) {
        let flat = results.u32(peak).unwrap()[[0]] as usize;
        let at = [flat / dims[1], flat % dims[1]];
        let want = phase_cross_correlation(gpu, &reference, moving, &PhaseCorrelation::default()).unwrap().shift;
        let got: Vec<f64> = at.iter().zip(&dims).map(|(&i, &n)| if i > n / 2 { i as f64 - n as f64 } else { i as f64 }).collect();
        assert_eq!(got, want, "shift {shift:?}");
    }
}

#[test]
fn masked_registration_of_device_arrays_checks_on_the_device() {
    use lucent::gpu::GpuArray;
    use lucent::ops::registration::masked;
    let gpu = poisoned_gpu();
    let dims = [37usize, 29];
    let reference = rand_array(&dims);
    let moving = roll(&reference.mapv(f64::from), &[4, -3]).mapv(|v| v as f32);
    let mask = ArrayD::from_shape_vec(IxDyn(&dims), random(37 * 29).iter().map(|&v| v > -0.5).collect::<Vec<bool>>()).unwrap();
    let up = |x: &ArrayD<f32>| GpuArray::upload_f32(gpu, &x.view()).unwrap();
    let weights = masked::as_weights(&mask.view());
    let (r, m, w) = (up(&reference), up(&moving), up(&weights));
    let want = cpu::masked_phase_cross_correlation(&reference.mapv(f64::from), &moving.mapv(f64::from), &mask, &mask, 0.3, 1.0);
    assert_eq!(masked::masked_phase_cross_correlation_resident(gpu, &r, &m, &w, &w, 0.3, 1.0).unwrap(), want);
    let mut nan = moving.clone();
    nan[[5, 5]] = f32::NAN;
    assert!(matches!(masked::masked_phase_cross_correlation_resident(gpu, &r, &up(&nan), &w, &w, 0.3, 1.0), Err(Error::NonFinite(_))));
    let none = up(&ArrayD::zeros(IxDyn(&dims)));
    assert!(matches!(masked::masked_phase_cross_correlation_resident(gpu, &r, &m, &w, &none, 0.3, 1.0), Err(Error::Invalid(_))));
    // Constant where the mask is true, different outside it.
    let flat = ArrayD::from_shape_fn(IxDyn(&dims), |i| if mask[&i] { 2.5f32 } else { i[0] as f32 });
    let refused = masked::masked_phase_cross_correlation_resident(gpu, &up(&flat), &m, &w, &w, 0.3, 1.0).unwrap_err().to_string();
    assert!(refused.contains("constant"), "{refused}");
    let other = up(&rand_array(&[37, 28]));
    assert!(matches!(masked::masked_phase_cross_correlation_resident(gpu, &r, &other, &w, &w, 0.3, 1.0), Err(Error::Shape(_))));
}

#[test]
fn count_equal_counts_ties_of_the_value_at_an_index() {
    use lucent::kernels::count_equal;
    let gpu = poisoned_gpu();
    let mut x: Vec<f32> = random(70_001);
    for at in [3, 500, 69_999, 70_000] {
        x[at] = 7.0;
    }
    // A value no random element can equal (they lie in [-0.5, 0.5): one of 70 000 matched x[1]
    // by chance about once in a hundred runs).
    x[1] = 2.0;
    for (index, want) in [(500u32, 4u32), (1, 1)] {
        let mut rec = lucent::Recording::new(gpu);
        let b = rec.upload_f32(&arr(&[70_001], x.clone()).view()).unwrap();
        let i = rec.upload_f32(&arr(&[1], vec![f32::from_bits(index)]).view()).unwrap();
        let i = rec.reinterpret(i, &[1], lucent::Dtype::U32).unwrap();
        let n = count_equal::record(&mut rec, b, i).unwrap();
        let d = rec.download(n);
        assert_eq!(rec.run().unwrap().u32(d).unwrap().iter().next().copied(), Some(want), "index {index}");
    }
}

#[test]
fn masked_registration_refines_below_a_sample() {
    // A smooth image moved by a fraction of a sample (Fourier shift), 75% masks: the parabola
    // through the masked correlation's peak finds the motion within 0.15 sample, GPU and f64 CPU
    // alike (to the rounding at 1/20).
    let dims = [48usize, 61];
    let smooth = |i: &[usize]| {
        let (y, x) = (i[0] as f64, i[1] as f64);
        (0.21 * y).sin() + (0.17 * x + 0.3).cos() + 0.5 * (0.09 * x + 0.13 * y).sin()
    };
    let reference = ArrayD::from_shape_fn(IxDyn(&dims), |i| smooth(&[i[0], i[1]]));
    let motion = [2.3, -4.6];
    // moving(p) = reference(p + motion): the registering shift is +motion.
    let moving = ArrayD::from_shape_fn(IxDyn(&dims), |i| {
        let (y, x) = (i[0] as f64 + motion[0], i[1] as f64 + motion[1]);
        (0.21 * y).sin() + (0.17 * x + 0.3).cos() + 0.5 * (0.09 * x + 0.13 * y).sin()
    });
    let mask = |seed: u64| ArrayD::from_shape_vec(IxDyn(&dims), xorshift(48 * 61, seed).iter().map(|&v| v > 0.25).collect()).unwrap();
    let (rm, mm) = (mask(3), mask(4));
    let cpu_shift = cpu::masked_phase_cross_correlation(&reference, &moving, &rm, &mm, 0.3, 20.0);
    let (r32, m32) = (reference.mapv(|v| v as f32), moving.mapv(|v| v as f32));
    let gpu_shift = lucent::registration::masked_phase_cross_correlation(poisoned_gpu(), &r32, &m32, &rm, &mm, 0.3, 20.0).unwrap();
    let whole = cpu::masked_phase_cross_correlation(&reference, &moving, &rm, &mm, 0.3, 1.0);
    for a in 0..2 {
        assert!((cpu_shift[a] - motion[a]).abs() <= 0.15, "axis {a}: {cpu_shift:?} vs {motion:?}");
        assert!((gpu_shift[a] - cpu_shift[a]).abs() <= 0.05 + 1e-9, "axis {a}: GPU {gpu_shift:?}, CPU {cpu_shift:?}");
        assert!((gpu_shift[a] - whole[a]).abs() <= 0.5 + 1e-9);
    }
}
