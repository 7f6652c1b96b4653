//! The pipeline's preprocessing on the device against TomoPy's f64 references
//! (ops::tomography::prep::cpu, themselves checked against TomoPy's printed values in prep.rs):
//! normalisation with −log and outliers from 16-bit counts and from f32, in both orders; the
//! column sort against its twin (ties included); the sorting-based stripe removal; Paganin's
//! phase retrieval. Fresh random inputs of awkward sizes, temporaries poisoned.

use crate::tests::common;
use common::*;

use lucent::graph::Recording;
use lucent::kernels::prep_normalize::{Mode, Raw};
use lucent::kernels::sort_columns;
use lucent::ops::tomography::prep::{self, cpu, Normalize, Outliers, Paganin};
use lucent::GpuArray;
use ndarray::{s, Array3, Axis};
use rand::Rng;

fn run3(rec: Recording, y: lucent::Buf) -> Array3<f32> {
    let mut rec = rec;
    let d = rec.download(y);
    rec.run().unwrap().into_f32(d).unwrap().into_dimensionality().unwrap()
}

/// Counts around `level` (a few far above it: zingers).
fn counts(shape: (usize, usize, usize), level: f32) -> Array3<u16> {
    let mut rng = rand::rng();
    Array3::from_shape_fn(shape, |_| {
        let v = level * (0.6 + 0.4 * rng.random::<f32>());
        (if rng.random::<f32>() < 0.03 { v + 3000.0 } else { v }) as u16
    })
}

#[test]
fn normalize_matches_tomopy() {
    let gpu = poisoned_gpu();
    // (angles, rows, cols): odd, prime, one row.
    for (angles, rows, cols) in [(7, 11, 13), (3, 1, 29), (12, 6, 5)] {
        let raw = counts((angles, rows, cols), 2000.0);
        let flat = counts((4, rows, cols), 3000.0).mapv(|v| v.min(3500));
        let dark = Array3::from_shape_fn((2, rows, cols), |(i, r, c)| (90 + (i + r + 3 * c) % 17) as u16);
        let flat_dark =
            ndarray::stack![Axis(0), flat.mapv(f64::from).mean_axis(Axis(0)).unwrap(), dark.mapv(f64::from).mean_axis(Axis(0)).unwrap()].mapv(|v| v as f32);
        let f64s = |a: &Array3<u16>| a.mapv(f64::from);
        for (outliers, sinograms, u16) in
            [(None, true, true), (Some(Outliers { dif: 500.0, size: 3 }), true, true), (Some(Outliers { dif: 800.0, size: 5 }), false, false)]
        {
            let mut rec = Recording::new(gpu);
            let buf = match u16 {
                true => GpuArray::upload_u16(gpu, raw.as_slice().unwrap()).unwrap(),
                false => GpuArray::upload_f32(gpu, &raw.mapv(f32::from).into_dyn().view()).unwrap(),
            };
            let r = Raw { buf: rec.input(&buf), u16, dims: [angles, rows, cols] };
            let fd = rec.upload_f32(&flat_dark.view().into_dyn()).unwrap();
            let n = Normalize { outliers, cutoff: 1.2, minus_log: Some(1e-6), sinograms };
            let y = prep::record_normalize(&mut rec, r, 0, rows, fd, &n).unwrap();
            let got = run3(rec, y);
            let cleaned = match outliers {
                Some(o) => cpu::remove_outlier(f64s(&raw).view(), o.dif as f64, o.size).unwrap(),
                None => f64s(&raw),
            };
            let t = cpu::normalize(cleaned.view(), f64s(&flat).view(), f64s(&dark).view(), Some(1.2)).unwrap();
            let mut want = cpu::minus_log(t.view(), 1e-6).unwrap();
            if sinograms {
                want = want.permuted_axes([1, 0, 2]).as_standard_layout().to_owned();
            }
            assert_rel_l2(&got.into_dyn(), &want.into_dyn(), 1e-6, &format!("{angles}x{rows}x{cols} outliers {outliers:?}"));
        }
    }
}

#[test]
fn a_band_with_its_halo_equals_the_whole() {
    // Rows 3..7 of 10, the outlier median reading one row either side: the whole's rows.
    let gpu = poisoned_gpu();
    let (angles, rows, cols) = (5, 10, 17);
    let raw = counts((angles, rows, cols), 1500.0);
    let fd = Array3::from_shape_fn((2, rows, cols), |(i, r, c)| if i == 0 { 2500.0 + (r * c) as f32 } else { 100.0 });
    let n = Normalize { outliers: Some(Outliers { dif: 400.0, size: 3 }), cutoff: f32::INFINITY, minus_log: Some(1e-6), sinograms: true };
    let run = |lo: usize, hi: usize, row0: usize, count: usize, fd: ndarray::ArrayView3<f32>| {
        let mut rec = Recording::new(gpu);
        let band = raw.slice(s![.., lo..hi, ..]).to_owned();
        let buf = GpuArray::upload_u16(gpu, band.as_slice().unwrap()).unwrap();
        let r = Raw { buf: rec.input(&buf), u16: true, dims: [angles, hi - lo, cols] };
        let fd = rec.upload_f32(&fd.to_owned().into_dyn().view()).unwrap();
        let y = prep::record_normalize(&mut rec, r, row0, count, fd, &n).unwrap();
        run3(rec, y)
    };
    let whole = run(0, rows, 0, rows, fd.view());
    let band = run(2, 8, 1, 4, fd.slice(s![.., 3..7, ..]));
    assert_eq!(band, whole.slice(s![3..7, .., ..]));
}

#[test]
fn sort_columns_matches_its_twin() {
    let gpu = poisoned_gpu();
    let mut rng = rand::rng();
    for (slices, rows, cols) in [(2, 37, 5), (1, 1, 3), (3, 256, 2), (1, 300, 7), (2, 1000, 1)] {
        // Quantised: ties, which keep their row order.
        let x = Array3::from_shape_fn((slices, rows, cols), |_| (rng.random::<f32>() * 20.0).floor());
        let mut rec = Recording::new(gpu);
        let b = rec.upload_f32(&x.view().into_dyn()).unwrap();
        let (sorted, position) = sort_columns::record(&mut rec, b).unwrap();
        let (ds, dp) = (rec.download(sorted), rec.download(position));
        let results = rec.run().unwrap();
        let (want_sorted, want_position) = sort_columns::cpu(&x.view());
        assert_eq!(results.f32(ds).unwrap(), want_sorted.into_dyn(), "{slices}x{rows}x{cols}: values");
        assert_eq!(results.u32(dp).unwrap(), want_position.into_dyn(), "{slices}x{rows}x{cols}: positions");
    }
    let mut rec = Recording::new(gpu);
    let b = rec.upload_f32(&ndarray::ArrayD::zeros(ndarray::IxDyn(&[1, sort_columns::CAPACITY + 1, 2])).view()).unwrap();
    let e = sort_columns::record(&mut rec, b).unwrap_err().to_string();
    assert!(e.contains("4097 values"), "{e}");
}

#[test]
fn stripe_sorting_matches_tomopy() {
    let gpu = poisoned_gpu();
    let mut rng = rand::rng();
    for (slices, angles, cols, size, dim) in [(2, 41, 29, 5, 1), (1, 64, 23, 3, 2), (3, 17, 40, 21, 1), (1, 9, 6, 7, 1)] {
        let mut x = Array3::from_shape_fn((slices, angles, cols), |_| 2.0 + rng.random::<f32>());
        x.slice_mut(s![.., .., cols / 3]).mapv_inplace(|v| v + 0.7);
        let mut rec = Recording::new(gpu);
        let b = rec.upload_f32(&x.view().into_dyn()).unwrap();
        let y = prep::record_stripe_sorting(&mut rec, b, size, dim).unwrap();
        let got = run3(rec, y);
        for (i, g) in got.outer_iter().enumerate() {
            let want = cpu::remove_stripe_based_sorting(x.index_axis(Axis(0), i).mapv(f64::from).view(), Some(size), dim).unwrap();
            assert_rel_l2(&g.to_owned().into_dyn(), &want.into_dyn(), 1e-7, &format!("{slices}x{angles}x{cols} size {size} dim {dim}"));
        }
    }
}

#[test]
fn paganin_matches_tomopy() {
    let gpu = poisoned_gpu();
    let mut rng = rand::rng();
    // Sizes padded to 64 and 128; distances from none to far; a projection of one row.
    for ((count, rows, cols), distance, alpha) in [((3, 19, 24), 50.0, 1e-3), ((2, 1, 33), 10.0, 1e-2), ((1, 30, 7), 0.0, 1e-3)] {
        let x = Array3::from_shape_fn((count, rows, cols), |_| 0.5 + 0.4 * rng.random::<f32>());
        let p = Paganin { pixel_size: 1e-4, distance, energy: 20.0, alpha, pad: true };
        let mut rec = Recording::new(gpu);
        let b = rec.upload_f32(&x.view().into_dyn()).unwrap();
        let plan = prep::PaganinPlan::new(gpu, &p, rows, cols).unwrap();
        let y = prep::record_paganin(&mut rec, b, &plan).unwrap();
        let got = run3(rec, y);
        let want = cpu::retrieve_phase(x.mapv(f64::from).view(), 1e-4, distance, 20.0, alpha, true).unwrap();
        assert_rel_l2(&got.into_dyn(), &want.into_dyn(), 2e-6, &format!("{count}x{rows}x{cols} at {distance} cm"));
    }
}

#[test]
fn the_kernel_twin_is_the_kernel() {
    // Mode::Raw and Mode::Transmission, which the pipeline's other paths use.
    let gpu = poisoned_gpu();
    let raw = Array3::from_shape_fn((4, 6, 9), |(a, r, c)| (a * 7 + r * 3 + c) as f32 * 1.5);
    let flat = ndarray::Array2::from_shape_fn((3, 9), |(r, c)| 60.0 + (r + c) as f32);
    let dark = ndarray::Array2::from_elem((3, 9), 2.0f32);
    for (mode, sinograms) in [(Mode::Raw, false), (Mode::Transmission { cutoff: 0.7 }, true), (Mode::MinusLog { cutoff: 2.0, floor: 0.05 }, false)] {
        let mut rec = Recording::new(gpu);
        let b = rec.upload_f32(&raw.view().into_dyn()).unwrap();
        let fd = rec.upload_f32(&ndarray::stack![Axis(0), flat, dark].into_dyn().view()).unwrap();
        let rows = if mode == Mode::Raw { 6 } else { 3 };
        let row0 = if mode == Mode::Raw { 0 } else { 2 };
        let y = lucent::kernels::prep_normalize::record(&mut rec, Raw { buf: b, u16: false, dims: [4, 6, 9] }, row0, rows, None, fd, mode, sinograms).unwrap();
        let got = run3(rec, y);
        let want = lucent::kernels::prep_normalize::cpu(&raw.view(), row0, rows, None, &flat.view(), &dark.view(), mode, sinograms);
        let worst = (&got - &want).iter().fold(0f32, |m, d| m.max(d.abs()));
        assert!(worst <= 1e-6 * want.iter().fold(1f32, |m, v| m.max(v.abs())), "{mode:?}: {worst}");
    }
}

#[test]
fn large_stripe_removal_matches_tomopy() {
    let gpu = poisoned_gpu();
    let mut rng = rand::rng();
    for (slices, angles, cols, size, norm) in [(2, 60, 50, 11, true), (1, 33, 41, 7, false)] {
        let mut x = Array3::from_shape_fn((slices, angles, cols), |(_, a, c)| {
            1.0 + 0.3 * ((a as f32 * 0.2).sin() + (c as f32 * 0.13).cos()) + 0.01 * rng.random::<f32>()
        });
        // Wide stripes, one partial: what the sorting method alone leaves.
        x.slice_mut(s![.., .., 20..24]).mapv_inplace(|v| v * 1.3);
        x.slice_mut(s![.., ..angles / 2, 30..32]).mapv_inplace(|v| v * 0.8);
        let mut rec = Recording::new(gpu);
        let b = rec.upload_f32(&x.view().into_dyn()).unwrap();
        let (smooth, m1, m2) = prep::record_large_stripe_means(&mut rec, b, size, 0.1).unwrap();
        let (ks, d1, d2) = (rec.output(smooth), rec.download(m1), rec.download(m2));
        let results = rec.run().unwrap();
        let two = |d| results.f32(d).unwrap().into_dimensionality::<ndarray::Ix2>().unwrap();
        let (factors, stripes) = prep::large_stripe_columns(&two(d1), &two(d2), 3.0);
        let mut rec = Recording::new(gpu);
        let (xb, sb) = (rec.upload_f32(&x.view().into_dyn()).unwrap(), rec.input(&results.array(ks)));
        let (f, st) = (rec.upload_f32(&factors.into_dyn().view()).unwrap(), rec.upload_f32(&stripes.clone().into_dyn().view()).unwrap());
        let y = prep::record_large_stripe_fill(&mut rec, xb, sb, f, st, norm).unwrap();
        let got = run3(rec, y);
        assert!(stripes.iter().filter(|&&v| v > 0.0).count() >= 4 * slices, "stripes found: {stripes:?}");
        for (i, g) in got.outer_iter().enumerate() {
            let want = cpu::remove_large_stripe(x.index_axis(Axis(0), i).mapv(f64::from).view(), 3.0, size, 0.1, norm).unwrap();
            assert_rel_l2(&g.to_owned().into_dyn(), &want.into_dyn(), 1e-6, &format!("{slices}x{angles}x{cols} size {size} norm {norm}"));
        }
    }
}

#[test]
fn fourier_wavelet_removal_matches_tomopy() {
    let gpu = poisoned_gpu();
    let mut rng = rand::rng();
    // Odd and even lengths at every level, padding on and off, a level count below the default.
    for (slices, angles, cols, level, pad) in [(2, 45, 37, None, true), (1, 64, 20, Some(3), false), (1, 9, 31, None, true)] {
        let mut x = Array3::from_shape_fn((slices, angles, cols), |(_, a, c)| {
            1.0 + 0.3 * ((a as f32 * 0.3).sin() * (c as f32 * 0.2).cos()) + 0.05 * rng.random::<f32>()
        });
        x.slice_mut(s![.., .., cols / 3]).mapv_inplace(|v| v + 0.4);
        let mut rec = Recording::new(gpu);
        let b = rec.upload_f32(&x.view().into_dyn()).unwrap();
        let y = prep::record_stripe_fw(&mut rec, b, level, 2.0, pad).unwrap();
        let got = run3(rec, y);
        for (i, g) in got.outer_iter().enumerate() {
            let want = cpu::remove_stripe_fw(x.index_axis(Axis(0), i).mapv(f64::from).view(), level, 2.0, pad).unwrap();
            assert_rel_l2(&g.to_owned().into_dyn(), &want.into_dyn(), 2e-6, &format!("{slices}x{angles}x{cols} level {level:?} pad {pad}"));
        }
    }
}
