//! Tomography preprocessing's f64 references (ops::tomography::prep::cpu) against TomoPy's
//! code and algotom, whose values `benches/tomopy_reference.py` printed into
//! prep_reference.txt (numpy 2.4.6, scipy 1.17.1, PyWavelets 1.8.0, algotom 1.7.0; TomoPy's
//! functions copied from commit 2c94ed18 and run in float64, so the same arithmetic on both
//! sides). Then the refusals of bad arguments.

use lucent::kernels::boundary::Boundary;
use lucent::ops::filter::cpu::gaussian_filter;
use lucent::ops::tomography::prep::cpu::{self as prep, MINUS_LOG_FLOOR};
use ndarray::{Array2, Array3, ArrayD, IxDyn};

/// Relative L2 errors allowed: the same f64 operations in the same order (they agree to the
/// bit today; the margin is for libm's sin and cos in the inputs), and through FFTs and wavelet
/// sums, whose order of operations differs (5e-16 to 3e-15 seen).
const EXACT: f64 = 1e-14;
const FFT: f64 = 1e-12;

const REFERENCE: &str = include_str!("prep_reference.txt");

/// The values printed under the heading that starts with `name` (its shape, then one a line).
fn reference(name: &str) -> ArrayD<f64> {
    let mut lines = REFERENCE.lines().skip_while(|l| !(l.starts_with(name) && l.ends_with(']')));
    let heading = lines.next().unwrap_or_else(|| panic!("no reference '{name}'"));
    let dims: Vec<usize> = heading[heading.rfind('[').unwrap() + 1..heading.len() - 1].split(", ").map(|d| d.parse().unwrap()).collect();
    let values: Vec<f64> = lines.map_while(|l| l.trim_end_matches(',').parse().ok()).collect();
    ArrayD::from_shape_vec(IxDyn(&dims), values).unwrap()
}

/// The number printed at the end of the line that starts with `name`.
fn reference_value(name: &str) -> f64 {
    let line = REFERENCE.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("no reference '{name}'"));
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

/// ‖got − want‖₂ / ‖want‖₂ ≤ tol.
fn assert_close(got: &ArrayD<f64>, want: &ArrayD<f64>, tol: f64, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    let err = (got - want).mapv(|d| d * d).sum().sqrt() / want.mapv(|w| w * w).sum().sqrt();
    assert!(err <= tol, "{what}: relative L2 error {err:e} > {tol:e}");
}

/// sin(1.7 i) + 0.3 cos(0.37 i²) in C order (the script's `formula`, as tv.rs).
fn formula(shape: &[usize]) -> ArrayD<f64> {
    let n: usize = shape.iter().product();
    ArrayD::from_shape_vec(IxDyn(shape), (0..n).map(|i| (1.7 * i as f64).sin() + 0.3 * (0.37 * (i * i) as f64).cos()).collect()).unwrap()
}

fn formula3(shape: [usize; 3]) -> Array3<f64> {
    formula(&shape).into_dimensionality().unwrap()
}

/// The script's `striped`: 2 + formula (angles, columns) with full stripes at columns 4
/// (+0.8) and 11 (−0.6) and one at column 7 (+0.5) over the first half of the angles.
fn striped(angles: usize, cols: usize) -> Array2<f64> {
    let mut s: Array2<f64> = formula(&[angles, cols]).into_dimensionality::<ndarray::Ix2>().unwrap() + 2.0;
    s.column_mut(4).mapv_inplace(|v| v + 0.8);
    s.column_mut(11).mapv_inplace(|v| v - 0.6);
    s.slice_mut(ndarray::s![..angles / 2, 7]).mapv_inplace(|v| v + 0.5);
    s
}

/// The script's `blobs`: three Gaussian blobs turning about `centre` over [0, π), + 0.05 formula.
fn blobs(angles: usize, cols: usize, centre: f64) -> Array2<f64> {
    let noise = formula(&[angles, cols]);
    Array2::from_shape_fn((angles, cols), |(i, x)| {
        let theta = i as f64 * std::f64::consts::PI / angles as f64;
        let sum: f64 = [(9.0, 0.3, 1.0, 2.5), (5.0, 2.1, 0.7, 1.5), (14.0, 4.0, 0.5, 3.0)]
            .iter()
            .map(|&(r, phi, a, w): &(f64, f64, f64, f64)| a * (-((x as f64 - centre - r * (theta - phi).cos()) / w).powi(2)).exp())
            .sum();
        sum + 0.05 * noise[[i, x]]
    })
}

#[test]
fn normalize_is_tomopys() {
    let proj = formula3([3, 4, 5]) + 2.0;
    let mut flat = formula3([2, 4, 5]) * 0.5 + 3.0;
    let dark = formula3([3, 4, 5]) * 0.2;
    // flat − dark = 0 at (1, 2): the 1e-6 floor.
    let mean_dark = dark.slice(ndarray::s![.., 1, 2]).mean().unwrap();
    flat.slice_mut(ndarray::s![.., 1, 2]).fill(mean_dark);
    let got = prep::normalize(proj.view(), flat.view(), dark.view(), None).unwrap();
    assert_close(&got.into_dyn(), &reference("normalize [3, 4, 5]"), EXACT, "normalize");
    let got = prep::normalize(proj.view(), flat.view(), dark.view(), Some(1.1)).unwrap();
    assert_close(&got.into_dyn(), &reference("normalize cutoff=1.1"), EXACT, "normalize with a cutoff");
}

#[test]
fn minus_log_floors() {
    let mut x = formula(&[4, 5]);
    x[[0, 0]] = 0.0;
    x[[1, 1]] = 1e-9;
    let got = prep::minus_log(x.view(), MINUS_LOG_FLOOR).unwrap();
    assert_close(&got, &reference("minus_log floor=1e-6"), EXACT, "minus_log");
    assert_eq!(got[[0, 0]], -(1e-6f64).ln());
}

#[test]
fn remove_outlier_is_tomopys() {
    let mut arr = formula3([3, 11, 9]);
    arr[[0, 2, 3]] += 3.0;
    arr[[1, 10, 8]] += 2.0;
    arr[[2, 5, 0]] -= 3.0;
    // Odd and even windows, and one wider than the projection (reflected more than once).
    for (dif, size, name) in [(0.5, 3, "remove_outlier dif=0.5 size=3"), (0.3, 4, "remove_outlier dif=0.3 size=4"), (0.2, 13, "remove_outlier dif=0.2 size=13")]
    {
        let got = prep::remove_outlier(arr.view(), dif, size).unwrap();
        assert_close(&got.into_dyn(), &reference(name), EXACT, name);
    }
}

#[test]
fn sorting_is_tomopys_and_algotoms() {
    let sino = striped(23, 17);
    assert_eq!(prep::sorting_default_size(17), 5);
    for (size, dim, name) in [(None, 1, "sorting size=None dim=1"), (Some(3), 2, "sorting size=3 dim=2"), (Some(20), 1, "sorting size=20 dim=1")] {
        let got = prep::remove_stripe_based_sorting(sino.view(), size, dim).unwrap();
        assert_close(&got.into_dyn(), &reference(name), EXACT, name);
    }
    // algotom computes in f32: within a few f32 roundings (2^-24 ≈ 6e-8 each).
    let got = prep::remove_stripe_based_sorting(sino.view(), Some(5), 1).unwrap();
    assert_close(&got.into_dyn(), &reference("algotom sorting size=5 dim=1"), 1e-6, "algotom's sorting");
}

#[test]
fn large_stripe_is_tomopys() {
    let sino = striped(23, 17);
    // The defaults (a window of 51 over 17 columns), a small window, and no normalisation.
    for (snr, size, drop, norm) in [(3.0, 51, 0.1, true), (1.5, 5, 0.1, true), (1.5, 5, 0.3, false)] {
        let name = format!("large_stripe snr={snr} size={size} drop_ratio={drop} norm={}", if norm { "True" } else { "False" });
        let got = prep::remove_large_stripe(sino.view(), snr, size, drop, norm).unwrap();
        let want = reference(&name);
        assert_close(&got.clone().into_dyn(), &want, EXACT, &name);
        assert!((&got - &sino).iter().any(|d| d.abs() > 0.1), "{name}: the stripes are found");
    }
}

#[test]
fn detect_stripe_flags_both_ends() {
    let mut v: Vec<f64> = (0..20).map(|i| 1.0 + 0.001 * ((i * 7) % 20) as f64).collect();
    v[3] = 1.5;
    v[15] = 0.6;
    let mask = prep::detect_stripe(&v, 3.0);
    assert_eq!(mask.iter().enumerate().filter(|(_, &m)| m).map(|(i, _)| i).collect::<Vec<_>>(), vec![3, 15]);
}

#[test]
fn fourier_wavelet_is_tomopys() {
    let sino = striped(23, 17);
    let got = prep::remove_stripe_fw(sino.view(), None, 2.0, true).unwrap();
    assert_close(&got.into_dyn(), &reference("fw level=None sigma=2 pad=True"), FFT, "fw, 5 levels, padded");
    let got = prep::remove_stripe_fw(sino.view(), Some(2), 1.5, false).unwrap();
    assert_close(&got.into_dyn(), &reference("fw level=2 sigma=1.5 pad=False"), FFT, "fw, 2 levels");
}

#[test]
fn retrieve_phase_is_tomopys() {
    let tomo = formula3([3, 11, 9]) * 0.1 + 1.0;
    let lambda = prep::wavelength(20.0);
    assert_eq!([11, 9].map(|n| prep::phase_pad_width(n, 1e-4, lambda, 50.0)), [58.0, 59.0]);
    let got = prep::retrieve_phase(tomo.view(), 1e-4, 50.0, 20.0, 1e-3, true).unwrap();
    assert_close(&got.into_dyn(), &reference("retrieve_phase defaults"), FFT, "retrieve_phase");
    let got = prep::retrieve_phase(tomo.view(), 2e-4, 30.0, 25.0, 0.01, false).unwrap();
    assert_close(&got.into_dyn(), &reference("retrieve_phase pixel=2e-4"), FFT, "retrieve_phase unpadded");
}

#[test]
fn find_center_vo_is_tomopys() {
    let s = blobs(90, 64, 35.3);
    // The metrics of both searches (on the sinogram filtered as each search filters it).
    for (sigma, which) in [([3.0, 1.0], "coarse"), ([2.0, 2.0], "fine")] {
        let filtered = gaussian_filter(&s.clone().into_dyn(), &sigma, Boundary::Reflect).into_dimensionality::<ndarray::Ix2>().unwrap();
        let centres = reference(&format!("{which} centres"));
        let got = prep::vo_metrics(filtered.view(), centres.as_slice().unwrap(), 0.5, 20).unwrap();
        assert_close(&ArrayD::from_shape_vec(IxDyn(&[got.len()]), got).unwrap(), &reference(&format!("{which} metrics")), FFT, which);
    }
    assert_eq!(prep::find_center_vo(s.view(), -10.0, 10.0, 6.0, 0.25, 0.5, 20).unwrap(), reference_value("find_center_vo blobs(90, 64, 35.3)"));
    // numpy's arange: 32.5 + (−3 + 9 · 0.3) is 35.199999999999996.
    assert_eq!(prep::find_center_vo(s.view(), -8.0, 12.0, 3.0, 0.3, 0.7, 4).unwrap(), reference_value("find_center_vo smin=-8"));
    let s3 = blobs(40, 33, 14.6);
    assert_eq!(prep::find_center_vo(s3.view(), -6.0, 6.0, 6.0, 0.25, 0.5, 20).unwrap(), reference_value("find_center_vo blobs(40, 33, 14.6)"));
}

#[test]
fn bad_arguments_are_refused() {
    use lucent::error::Error;
    let shape = |r: lucent::error::Result<_>| matches!(r, Err(Error::Shape(_)));
    let invalid = |r: lucent::error::Result<_>| matches!(r, Err(Error::Invalid(_)));
    let (p, f) = (formula3([2, 3, 4]), formula3([1, 3, 5]));
    let empty = Array3::<f64>::zeros((0, 3, 4));
    assert!(shape(prep::normalize(p.view(), f.view(), p.view(), None).map(|_| ())));
    assert!(shape(prep::normalize(p.view(), p.view(), empty.view(), None).map(|_| ())));
    assert!(invalid(prep::normalize(p.view(), p.view(), p.view(), Some(f64::NAN)).map(|_| ())));
    for floor in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(invalid(prep::minus_log(p.view(), floor).map(|_| ())), "floor {floor}");
    }
    assert!(invalid(prep::remove_outlier(p.view(), 0.5, 0).map(|_| ())));
    assert!(invalid(prep::remove_outlier(p.view(), 0.5, prep::MAX_WINDOW + 1).map(|_| ())));
    assert!(invalid(prep::remove_outlier(p.view(), f64::NAN, 3).map(|_| ())));
    let sino = striped(23, 17);
    let thin = Array2::<f64>::zeros((5, 2));
    assert!(invalid(prep::remove_stripe_based_sorting(sino.view(), Some(0), 1).map(|_| ())));
    assert!(invalid(prep::remove_stripe_based_sorting(sino.view(), Some(3), 3).map(|_| ())));
    assert!(shape(prep::remove_stripe_based_sorting(Array2::zeros((0, 4)).view(), None, 1).map(|_| ())));
    assert!(shape(prep::remove_large_stripe(thin.view(), 3.0, 51, 0.1, true).map(|_| ())));
    assert!(invalid(prep::remove_large_stripe(sino.view(), f64::NAN, 51, 0.1, true).map(|_| ())));
    assert!(invalid(prep::remove_large_stripe(sino.view(), 3.0, 0, 0.1, true).map(|_| ())));
    for sigma in [0.0, -1.0, f64::NAN] {
        assert!(invalid(prep::remove_stripe_fw(sino.view(), None, sigma, true).map(|_| ())), "sigma {sigma}");
    }
    assert!(invalid(prep::remove_stripe_fw(sino.view(), Some(65), 2.0, true).map(|_| ())));
    let t = formula3([1, 4, 5]);
    for (pixel, dist, energy, alpha) in
        [(0.0, 50.0, 20.0, 1e-3), (1e-4, -1.0, 20.0, 1e-3), (1e-4, 50.0, 0.0, 1e-3), (1e-4, 50.0, 20.0, 0.0), (1e-4, f64::NAN, 20.0, 1e-3)]
    {
        assert!(invalid(prep::retrieve_phase(t.view(), pixel, dist, energy, alpha, true).map(|_| ())), "{pixel} {dist} {energy} {alpha}");
    }
    // Pads beyond any memory: refused, not allocated.
    assert!(invalid(prep::retrieve_phase(t.view(), 1e-9, 1e9, 20.0, 1e-3, true).map(|_| ())));
    assert!(shape(prep::retrieve_phase(Array3::zeros((1, 0, 5)).view(), 1e-4, 50.0, 20.0, 1e-3, true).map(|_| ())));
    let s = blobs(8, 16, 8.0);
    assert!(shape(prep::find_center_vo(Array2::zeros((1, 16)).view(), -5.0, 5.0, 6.0, 0.25, 0.5, 20).map(|_| ())));
    assert!(shape(prep::find_center_vo(Array2::zeros((8, 3)).view(), -5.0, 5.0, 6.0, 0.25, 0.5, 20).map(|_| ())));
    assert!(invalid(prep::find_center_vo(s.view(), 5.0, -5.0, 6.0, 0.25, 0.5, 20).map(|_| ())));
    assert!(invalid(prep::find_center_vo(s.view(), -5.0, 5.0, 6.0, 0.25, 0.0, 20).map(|_| ())));
    assert!(invalid(prep::find_center_vo(s.view(), f64::NAN, 5.0, 6.0, 0.25, 0.5, 20).map(|_| ())));
    assert!(invalid(prep::vo_metrics(s.view(), &[f64::INFINITY], 0.5, 20).map(|_| ())));
}
