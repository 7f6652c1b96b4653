//! Stripe-wise AO-OCT volume registration on synthetic volumes with known eye motion: the GPU
//! against the f64 reference (same statuses, shifts within 0.05 voxel), the truth recovered
//! (≥ 95% of B-scans within one voxel on every axis, through a micro-saccade), registered volumes
//! (whole-voxel shifts give the reference's rows exactly; cubic ones equal map_coordinates'
//! reference), the peak-gathering kernel against its twin, bad input.

use crate::tests::common;
use common::*;

use lucent::kernels::peak_neighbours;
use lucent::ops::registration::stripes::{self, BscanShift, Status, StripeRegistration};
use lucent::phantom::aooct::{self, EyeMotion};
use lucent::{Error, Recording};
use ndarray::{s, Array3};

/// The fraction of B-scans whose shift is within one voxel of the truth on every axis.
fn within_one(found: &[BscanShift], truth: &[[f64; 3]]) -> f64 {
    let good = found.iter().zip(truth).filter(|(b, t)| (0..3).all(|a| (b.shift[a] - t[a]).abs() <= 1.0)).count();
    good as f64 / truth.len() as f64
}

#[test]
fn known_motion_is_recovered_through_a_saccade_and_the_gpu_equals_the_reference() {
    for (shape, seed) in [([64, 48, 64], 5), ([83, 40, 56], 11)] {
        let series = aooct::series(shape, 1, &EyeMotion::default(), seed);
        let truth = &series.truth[0];
        let jump = truth.windows(3).map(|w| (w[2][0] - w[0][0]).hypot(w[2][2] - w[0][2])).fold(0.0, f64::max);
        assert!(jump > 4.0, "the motion has a micro-saccade ({jump} voxels in two B-scans)");
        let how = StripeRegistration::default();
        let (reference, moving) = (series.reference.view(), series.moving[0].view());
        let gpu = stripes::register_volume(poisoned_gpu(), &reference, &moving, &how).unwrap();
        let cpu = stripes::register_volume_reference(&reference, &moving, &how, &mut |_| {}).unwrap();
        assert_eq!(gpu.bscans.len(), shape[0]);
        for (g, c) in gpu.bscans.iter().zip(&cpu.bscans).chain(gpu.stripes.iter().zip(&cpu.stripes)) {
            assert_eq!((g.bscan, g.status), (c.bscan, c.status), "{shape:?}: B-scan {}", g.bscan);
            assert!((0..3).all(|a| (g.shift[a] - c.shift[a]).abs() <= 0.05), "{shape:?} B-scan {}: GPU {:?}, reference {:?}", g.bscan, g.shift, c.shift);
            assert!((g.peak - c.peak).abs() <= 1e-3 * c.peak.abs().max(1e-3), "{shape:?} B-scan {}: peak {} vs {}", g.bscan, g.peak, c.peak);
        }
        let fraction = within_one(&gpu.bscans, truth);
        assert!(fraction >= 0.95, "{shape:?}: {:.1}% of B-scans within one voxel", 100.0 * fraction);
        assert!(gpu.bscans.iter().all(|b| b.shift.iter().all(|v| v.is_finite())));
    }
}

#[test]
fn a_volume_against_itself_is_still_at_every_bscan() {
    // The first B-scan once sat half a window from its window's first row, where a circular
    // correlation cannot tell +window/2 from −window/2: it came back a spike.
    let series = aooct::series([67, 24, 40], 1, &EyeMotion::default(), 7);
    let reference = series.reference.view();
    let how = StripeRegistration { window: 16, window_step: 8, ..StripeRegistration::default() };
    let gpu = stripes::register_volume(poisoned_gpu(), &reference, &reference, &how).unwrap();
    let cpu = stripes::register_volume_reference(&reference, &reference, &how, &mut |_| {}).unwrap();
    for found in [&gpu, &cpu] {
        for b in &found.bscans {
            assert_eq!(b.status, Status::Ok, "B-scan {}: {:?}", b.bscan, b.shift);
            assert!(b.shift.iter().all(|v| v.abs() <= 0.05), "B-scan {}: {:?}", b.bscan, b.shift);
        }
    }
}

#[test]
fn spikes_and_weak_peaks_are_replaced() {
    // A moving volume whose B-scans 20..23 are noise: their peaks are weak or their shifts wild,
    // and they must come back interpolated between their neighbours, not as measured.
    let mut series = aooct::series([64, 40, 48], 1, &EyeMotion { saccades: 0, ..EyeMotion::default() }, 3);
    // Seeded noise: the rejection is statistical, and about one fresh draw in tens let a noise
    // B-scan pass as measured (2026-11-26, a CI run), which then skews its neighbours'
    // interpolation; a fixed draw keeps this test about the replacement, not about the odds.
    let mut rng = lucent::phantom::Rng::new(0x5EED_2024);
    let noise = ndarray::ArrayD::from_shape_simple_fn(ndarray::IxDyn(&[4, 40, 48]), || rng.uniform() as f32 - 0.5);
    series.moving[0].slice_mut(s![20..24, .., ..]).assign(&noise.into_dimensionality::<ndarray::Ix3>().unwrap());
    let found = stripes::register_volume_reference(&series.reference.view(), &series.moving[0].view(), &StripeRegistration::default(), &mut |_| {}).unwrap();
    for b in &found.bscans[20..24] {
        assert_ne!(b.status, Status::Ok, "noise B-scan {} kept as measured: {:?}", b.bscan, b.shift);
        assert!(
            (0..3).all(|a| (b.shift[a] - series.truth[0][b.bscan][a]).abs() <= 1.0),
            "B-scan {} interpolated to {:?}, truth {:?}",
            b.bscan,
            b.shift,
            series.truth[0][b.bscan]
        );
    }
    assert!(within_one(&found.bscans, &series.truth[0]) >= 0.95);
}

/// A moving volume made of whole-voxel shifts of the reference's rows (zero outside).
fn shifted_rows(reference: &Array3<f32>, shifts: &[[i64; 3]]) -> Array3<f32> {
    let (slow, depth, width) = reference.dim();
    Array3::from_shape_fn((slow, depth, width), |(j, z, x)| {
        let [dy, dz, dx] = shifts[j];
        let (y, z, x) = (j as i64 + dy, z as i64 + dz, x as i64 + dx);
        let inside = (0..slow as i64).contains(&y) && (0..depth as i64).contains(&z) && (0..width as i64).contains(&x);
        if inside {
            reference[[y as usize, z as usize, x as usize]]
        } else {
            0.0
        }
    })
}

fn as_shifts(shifts: &[[f64; 3]]) -> Vec<BscanShift> {
    shifts.iter().enumerate().map(|(bscan, &shift)| BscanShift { bscan, shift, peak: 1.0, status: Status::Ok }).collect()
}

#[test]
fn whole_voxel_shifts_put_the_reference_back() {
    let (slow, depth, width) = (23, 17, 29);
    let reference = rand_array(&[slow, depth, width]).into_dimensionality().unwrap();
    // Every row but 7 lands somewhere; row 7 is skipped (B-scan 6 moves on to 8).
    let shifts: Vec<[i64; 3]> = (0..slow as i64).map(|j| [if j >= 7 { 1 } else { 0 }, j % 3 - 1, 2 - j % 5]).collect();
    let moving = shifted_rows(&reference, &shifts);
    let f: Vec<[f64; 3]> = shifts.iter().map(|s| s.map(|v| v as f64)).collect();
    for order in 0..=5 {
        let (registered, covered) = stripes::apply(poisoned_gpu(), &moving.view(), &as_shifts(&f), order).unwrap();
        for y in 0..slow {
            assert_eq!(covered[y], y != 7, "order {order}: row {y}");
            let j = if y >= 8 { y - 1 } else { y };
            let [_, dz, dx] = shifts[j];
            for z in 0..depth {
                for x in 0..width {
                    let want = if !covered[y] { 0.0 } else { reference[[y, z, x]] };
                    // Voxels whose source left the moving B-scan are zero there.
                    let inside = (0..depth as i64).contains(&(z as i64 - dz)) && (0..width as i64).contains(&(x as i64 - dx));
                    let inner = (2..depth as i64 - 2).contains(&(z as i64 - dz)) && (2..width as i64 - 2).contains(&(x as i64 - dx));
                    let got = registered[[y, z, x]];
                    if !covered[y] || (order < 2 && inside) || inner {
                        let tol = if order >= 2 { 2e-5 } else { 0.0 };
                        assert!((got - want).abs() <= tol, "order {order}: ({y}, {z}, {x}) {got} vs {want}");
                    }
                }
            }
        }
    }
}

#[test]
fn sub_voxel_shifts_equal_map_coordinates() {
    let (slow, depth, width) = (11, 19, 26);
    let moving = rand_array(&[slow, depth, width]).into_dimensionality::<ndarray::Ix3>().unwrap();
    let shifts: Vec<[f64; 3]> = (0..slow).map(|j| [0.2 * j as f64 - 0.9, 1.37 - 0.31 * j as f64, 0.73 * j as f64 - 2.1]).collect();
    for order in 0..=5 {
        let (registered, covered) = stripes::apply(poisoned_gpu(), &moving.view(), &as_shifts(&shifts), order).unwrap();
        let (want, want_covered) = stripes::apply_reference(&moving.view(), &as_shifts(&shifts), order).unwrap();
        assert_eq!(covered, want_covered);
        assert!(covered.iter().filter(|&&c| c).count() >= 5);
        let err = registered.iter().zip(&want).fold(0.0f32, |m, (g, w)| m.max((g - w).abs()));
        assert!(err <= 1e-5, "order {order}: max error {err}");
    }
}

#[test]
fn registered_series_average_is_closer_to_the_reference() {
    let series = aooct::series([48, 40, 48], 2, &EyeMotion::default(), 21);
    let how = StripeRegistration { coarse_step: 12, ..StripeRegistration::default() };
    let mut registered = vec![(series.reference.clone(), vec![true; 48])];
    for moving in &series.moving {
        let found = stripes::register_volume(gpu(), &series.reference.view(), &moving.view(), &how).unwrap();
        registered.push(stripes::apply(gpu(), &moving.view(), &found.bscans, 1).unwrap());
    }
    let correlation = |a: &Array3<f32>, b: &Array3<f32>| {
        let (a, b) = (a.slice(s![4..44, 4..36, 4..44]), b.slice(s![4..44, 4..36, 4..44]));
        let (ma, mb) = (a.mean().unwrap(), b.mean().unwrap());
        let num: f32 = a.iter().zip(b.iter()).map(|(x, y)| (x - ma) * (y - mb)).sum();
        num / (a.iter().map(|x| (x - ma).powi(2)).sum::<f32>() * b.iter().map(|y| (y - mb).powi(2)).sum::<f32>()).sqrt()
    };
    let moved = correlation(&series.moving[0], &series.reference);
    let one = correlation(&registered[1].0, &series.reference);
    assert!(one > moved + 0.2, "registered {one} vs unregistered {moved}");
    let average = stripes::average(&registered[1..]).unwrap();
    let average_other = correlation(&average, &series.reference);
    assert!(average_other > one, "the average of two registered volumes {average_other} vs one {one}");
}

#[test]
fn peak_neighbours_equal_their_twin() {
    for dims in [vec![7usize, 5, 6], vec![3, 11], vec![2, 3, 4, 5]] {
        let n: usize = dims.iter().product();
        let map = rand_array(&dims);
        for flat in [0, n - 1, n / 3] {
            let mut rec = Recording::new(poisoned_gpu());
            let m = rec.upload_f32(&map.view()).unwrap();
            let index = rec.upload_f32(&arr(&[1], vec![f32::from_bits(flat as u32)]).view()).unwrap();
            let index = rec.reinterpret(index, &[1], lucent::Dtype::U32).unwrap();
            let slots = peak_neighbours::slots(dims.len());
            let out = rec.temp(&[slots + 3], lucent::gpu::Dtype::F32).unwrap();
            peak_neighbours::record_into(&mut rec, m, index, out, 3).unwrap();
            let d = rec.download(out);
            let got = rec.run().unwrap().f32(d).unwrap();
            let got: Vec<f32> = got.iter().copied().collect();
            let want = peak_neighbours::cpu(map.mapv(f64::from).as_slice().unwrap(), &dims, flat);
            assert_eq!(got[3].to_bits() as usize, flat);
            for k in 1..slots {
                assert_eq!(got[3 + k] as f64, want[k], "{dims:?} at {flat}: slot {k}");
            }
        }
    }
}

#[test]
fn bad_input_is_refused() {
    let series = aooct::series([40, 24, 32], 1, &EyeMotion::default(), 1);
    let (r, m) = (series.reference.view(), series.moving[0].view());
    let how = StripeRegistration::default();
    let gpu = gpu();
    let other = Array3::<f32>::ones((40, 24, 31));
    assert!(matches!(stripes::register_volume(gpu, &r, &other.view(), &how), Err(Error::Shape(_))));
    let mut nan = series.moving[0].clone();
    nan[[3, 4, 5]] = f32::NAN;
    assert!(matches!(stripes::register_volume(gpu, &r, &nan.view(), &how), Err(Error::NonFinite(_))));
    let flat = Array3::<f32>::from_elem((40, 24, 32), 2.0);
    let refused = stripes::register_volume(gpu, &flat.view(), &m, &how).unwrap_err().to_string();
    assert!(refused.contains("constant"), "{refused}");
    for bad in [
        StripeRegistration { window: 0, ..how.clone() },
        StripeRegistration { median: 4, ..how.clone() },
        StripeRegistration { spike: f64::NAN, ..how.clone() },
        StripeRegistration { coarse_spike: -1.0, ..how.clone() },
        StripeRegistration { min_peak: 1.0, ..how.clone() },
    ] {
        assert!(matches!(stripes::register_volume(gpu, &r, &m, &bad), Err(Error::Invalid(_))), "{bad:?}");
    }
    let shifts = as_shifts(&vec![[0.0; 3]; 39]);
    assert!(matches!(stripes::apply(gpu, &m, &shifts, 1), Err(Error::Shape(_))));
    let shifts = as_shifts(&vec![[0.0; 3]; 40]);
    assert!(matches!(stripes::apply(gpu, &m, &shifts, 6), Err(Error::Invalid(_))));
    assert!(matches!(stripes::average(&[]), Err(Error::Empty(_))));
}

#[test]
fn small_volumes_register_without_panics() {
    // Fewer B-scans than a stripe, a window or a median: defined results (or clear errors).
    for shape in [[1usize, 12, 16], [2, 12, 16], [5, 16, 12], [10, 16, 20]] {
        let series = aooct::series(shape, 1, &EyeMotion { saccades: 0, ..EyeMotion::default() }, 2);
        let (r, m) = (series.reference.view(), series.moving[0].view());
        let how = StripeRegistration::default();
        let gpu = stripes::register_volume(gpu(), &r, &m, &how);
        let cpu = stripes::register_volume_reference(&r, &m, &how, &mut |_| {});
        match (gpu, cpu) {
            (Ok(g), Ok(c)) => {
                assert_eq!(g.bscans.len(), shape[0]);
                assert!(g.bscans.iter().chain(&c.bscans).all(|b| b.shift.iter().all(|v| v.is_finite())), "{shape:?}");
            }
            (Err(g), Err(c)) => assert_eq!(g.to_string(), c.to_string(), "{shape:?}"),
            (g, c) => panic!("{shape:?}: GPU {g:?}, CPU {c:?}"),
        }
    }
}
