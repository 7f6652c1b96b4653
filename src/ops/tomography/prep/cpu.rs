//! f64 references of TomoPy's preprocessing (TomoPy commit 2c94ed18, Dec 2024), the
//! semantics the GPU versions are tested against: flat/dark normalisation, −log, outlier
//! removal, Vo's stripe removal (sorting, large stripes), Münch's Fourier-wavelet stripe
//! removal, Paganin's phase retrieval and Vo's centre search. Sinograms are (angles, columns),
//! projection stacks (angles, rows, columns). Each follows TomoPy in f64 where TomoPy computes
//! in f32; the differences that are deliberate are named at each function.

use ndarray::{s, Array, Array1, Array2, Array3, ArrayD, ArrayView, ArrayView2, ArrayView3, Axis, Dimension, IxDyn, Zip};
use num_complex::Complex64;

use crate::error::{Error, Result};
use crate::fft::{cpu::c2c, Norm};
use crate::kernels::boundary::Boundary;
use crate::ops::filter::cpu::gaussian_filter;
use crate::ops::filter::morphology::{rank_reference, Footprint};
use crate::ops::interpolate::{cpu::map_coordinates, Sampling};

/// [`minus_log`]'s default floor: values below it are taken as it (TomoPy takes the log of
/// anything, so a zero gives +∞).
pub const MINUS_LOG_FLOOR: f64 = 1e-6;

/// [`normalize`]'s smallest denominator flat − dark (TomoPy's `np.float32(1e-6)`).
pub const NORMALIZE_FLOOR: f64 = 1e-6;

/// The largest median window the references take (their cost grows with its square).
pub const MAX_WINDOW: usize = 1025;

/// TomoPy's constants (prep/phase.py), π included: its `PI` is 3.14159265359, not `std`'s.
pub const PLANCK_CONSTANT: f64 = 6.58211928e-19; // keV·s (ħ, hence the 2π in the wavelength)
pub const SPEED_OF_LIGHT: f64 = 299792458e+2; // cm/s
#[allow(clippy::approx_constant)] // TomoPy's own rounding of π
pub const TOMOPY_PI: f64 = 3.14159265359;

/// tomopy.prep.normalize.normalize (averaging 'mean'): (proj − dark) / max(flat − dark, 1e-6)
/// with flat and dark averaged over their first axis, then values above `cutoff` set to it.
pub fn normalize(proj: ArrayView3<f64>, flat: ArrayView3<f64>, dark: ArrayView3<f64>, cutoff: Option<f64>) -> Result<Array3<f64>> {
    let frame = &proj.shape()[1..];
    for (what, a) in [("flat", flat.shape()), ("dark", dark.shape())] {
        if a[1..] != *frame || a[0] == 0 {
            return Err(Error::Shape(format!("{what} {a:?} for projections {:?}: (n ≥ 1, rows, columns) as theirs", proj.shape())));
        }
    }
    if cutoff.is_some_and(f64::is_nan) {
        return Err(Error::Invalid("a NaN cutoff".into()));
    }
    let flat = flat.mean_axis(Axis(0)).expect("n ≥ 1");
    let dark = dark.mean_axis(Axis(0)).expect("m ≥ 1");
    let denom = (&flat - &dark).mapv(|d| if d < NORMALIZE_FLOOR { NORMALIZE_FLOOR } else { d });
    let mut out = (&proj - &dark) / &denom;
    if let Some(c) = cutoff {
        out.mapv_inplace(|v| if v > c { c } else { v });
    }
    Ok(out)
}

/// tomopy.prep.normalize.minus_log with a floor: −ln(max(x, floor)), `floor` > 0
/// ([`MINUS_LOG_FLOOR`] by default). TomoPy has none (−ln 0 = ∞, −ln of a negative is NaN).
pub fn minus_log<D: Dimension>(x: ArrayView<f64, D>, floor: f64) -> Result<Array<f64, D>> {
    if !(floor.is_finite() && floor > 0.0) {
        return Err(Error::Invalid(format!("a floor of {floor} (finite, more than 0)")));
    }
    Ok(x.mapv(|v| -(if v < floor { floor } else { v }).ln()))
}

/// tomopy.misc.corr.remove_outlier(arr, dif, size, axis=0): each value that exceeds the median
/// of its size × size neighbourhood in its own projection (scipy's median_filter, mode
/// 'reflect') by `dif` or more replaced by that median. Only bright outliers go.
pub fn remove_outlier(arr: ArrayView3<f64>, dif: f64, size: usize) -> Result<Array3<f64>> {
    check_window(size)?;
    if dif.is_nan() {
        return Err(Error::Invalid("a NaN dif".into()));
    }
    let median = median_filter(&arr.to_owned().into_dyn(), &[1, size, size])?;
    let mut out = arr.to_owned();
    Zip::from(&mut out).and(&median.into_dimensionality().expect("three axes")).for_each(|v, &m| {
        if *v - m >= dif {
            *v = m
        }
    });
    Ok(out)
}

/// TomoPy's window for [`remove_stripe_based_sorting`] when none is given: 21 above 2000
/// columns, else max(5, ⌊0.01 columns⌋).
pub fn sorting_default_size(columns: usize) -> usize {
    if columns > 2000 {
        21
    } else {
        5.max(columns / 100)
    }
}

/// tomopy.prep.stripe.remove_stripe_based_sorting (Vo et al. 2018, algorithm 3; algotom's
/// remove_stripe_based_sorting is the same in f32): each column sorted along the angles, the
/// sorted image median filtered (dim 1: a window of 1 × size along the detector; dim 2:
/// size × size; mode 'reflect'), then each column put back in its original order. Equal values
/// within a column keep their order (a stable sort; numpy's quicksort may swap them for more
/// than 16 angles, which moves the filtered values between them).
pub fn remove_stripe_based_sorting(sinogram: ArrayView2<f64>, size: Option<usize>, dim: usize) -> Result<Array2<f64>> {
    check_sinogram(&sinogram, 1, 1)?;
    let size = size.unwrap_or_else(|| sorting_default_size(sinogram.ncols()));
    check_window(size)?;
    let window = match dim {
        1 => [1, size],
        2 => [size, size],
        _ => return Err(Error::Invalid(format!("dim {dim} (1 or 2)"))),
    };
    let (sorted, order) = sort_columns(&sinogram.to_owned());
    let smooth = median_filter2(&sorted, window)?;
    Ok(unsort_columns(&smooth, &order))
}

/// tomopy.prep.stripe.remove_large_stripe (Vo et al. 2018, algorithm 5), TomoPy's defaults
/// snr 3, size 51, drop_ratio 0.1, norm true: the columns sorted and median filtered along the
/// detector (1 × size); each column's factor mean(sorted) / mean(filtered) over the rows
/// without the drop_ratio/2 smallest and largest; the stripes where [`detect_stripe`] finds
/// the factors stand out, widened by one column each side; with `norm` every column divided by
/// its factor; the stripes' columns replaced by the filtered sorted values in the (normalised)
/// column's order.
///
/// algotom's remove_large_stripe differs in its detect_stripe (see there), raises instead of
/// flooring a noise level below 1e-5, and orders by the column before normalising (the same
/// unless a factor is negative).
pub fn remove_large_stripe(sinogram: ArrayView2<f64>, snr: f64, size: usize, drop_ratio: f64, norm: bool) -> Result<Array2<f64>> {
    check_sinogram(&sinogram, 1, 3)?;
    check_window(size)?;
    if !snr.is_finite() || drop_ratio.is_nan() {
        return Err(Error::Invalid(format!("snr {snr}, drop_ratio {drop_ratio} (finite)")));
    }
    let rows = sinogram.nrows();
    let drop = (0.5 * drop_ratio.clamp(0.0, 0.8) * rows as f64) as usize;
    let (sorted, _) = sort_columns(&sinogram.to_owned());
    let smooth = median_filter2(&sorted, [1, size])?;
    let kept = s![drop..rows - drop, ..];
    let list1 = sorted.slice(kept).mean_axis(Axis(0)).expect("rows kept");
    let list2 = smooth.slice(kept).mean_axis(Axis(0)).expect("rows kept");
    let factors: Array1<f64> = Zip::from(&list1).and(&list2).map_collect(|&a, &b| large_stripe_factor(a, b));
    let found = detect_stripe(factors.as_slice().expect("contiguous"), snr);
    let stripes: Vec<bool> = (0..found.len()).map(|i| found[i.saturating_sub(1)..(i + 2).min(found.len())].iter().any(|&b| b)).collect();
    let mut out = sinogram.to_owned();
    if norm {
        out /= &factors;
    }
    let (_, order) = sort_columns(&out);
    let corrected = unsort_columns(&smooth, &order);
    for (c, _) in stripes.iter().enumerate().filter(|(_, &b)| b) {
        out.column_mut(c).assign(&corrected.column(c));
    }
    Ok(out)
}

/// A column's factor in the large-stripe method: the sorted over the smoothed mean, 1 where
/// that is not a usable divisor. TomoPy's takes 1 only where the smoothed mean is 0; a column
/// of zeros beside non-zero neighbours (air next to the object) gives it 0, and its division
/// then fills the column with infinities.
pub fn large_stripe_factor(sorted_mean: f64, smooth_mean: f64) -> f64 {
    let f = sorted_mean / smooth_mean;
    if smooth_mean != 0.0 && f != 0.0 && f.is_finite() {
        f
    } else {
        1.0
    }
}

/// TomoPy's _detect_stripe (Vo et al. 2018, algorithm 4): the values sorted in decreasing
/// order, a line fitted to them without the first ⌊n/4⌋ and the last ⌊n/4⌋ + 1; the noise level
/// is the line's drop over the whole list (at least 1e-6). If the largest value is `snr` noise
/// levels or more above the line's start, the values above start + snr/2 levels are stripes;
/// the same for the smallest below its end. algotom's detect_stripe sorts in increasing order,
/// so its fit leaves out the other end's extra value: the masks may differ.
pub fn detect_stripe(values: &[f64], snr: f64) -> Vec<bool> {
    let n = values.len();
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| b.total_cmp(a));
    let drop = n / 4;
    let (slope, intercept) = fit_line(drop, &sorted[drop..n.saturating_sub(drop + 1).max(drop)]);
    let end = intercept + slope * (n - 1) as f64;
    let noise = (end - intercept).abs().max(1e-6);
    let mut mask = vec![false; n];
    if (sorted[0] - intercept).abs() / noise >= snr {
        let upper = intercept + noise * snr * 0.5;
        mask.iter_mut().zip(values).for_each(|(m, &v)| *m |= v > upper);
    }
    if (sorted[n - 1] - end).abs() / noise >= snr {
        let lower = end - noise * snr * 0.5;
        mask.iter_mut().zip(values).for_each(|(m, &v)| *m |= v <= lower);
    }
    mask
}

/// The least-squares line (slope, intercept) through (first + i, y[i]) (numpy's polyfit of
/// degree 1); a single point gives a flat line.
fn fit_line(first: usize, y: &[f64]) -> (f64, f64) {
    let n = y.len() as f64;
    let xm = first as f64 + (n - 1.0) / 2.0;
    let ym = y.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, &v) in y.iter().enumerate() {
        let dx = (first + i) as f64 - xm;
        sxy += dx * (v - ym);
        sxx += dx * dx;
    }
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    (slope, ym - slope * xm)
}

/// pywt's 'db5' decomposition low-pass filter (PyWavelets 1.8, `pywt.Wavelet('db5').dec_lo`);
/// the others follow from it as in pywt: rec_lo reversed, dec_hi[j] = (−1)^(j+1) dec_lo[9 − j].
pub const DB5_DEC_LO: [f64; 10] = [
    0.0033357252854737712,
    -0.012580751999081999,
    -0.006241490212798274,
    0.07757149384004572,
    -0.032244869584638375,
    -0.24229488706638203,
    0.13842814590132074,
    0.7243085284377729,
    0.6038292697971896,
    0.16010239797419293,
];

/// tomopy.prep.stripe.remove_stripe_fw with wavelet 'db5' (Münch et al. 2009): the sinogram
/// zero-padded by ⌊angles/8⌋ along the angles (split as TomoPy does) when `pad`; `level`
/// levels of pywt's dwt2 (mode 'symmetric'); each level's vertical detail band (detail along
/// the detector) damped along the angles in Fourier space by 1 − exp(−k²/2σ²); then idwt2 back.
/// The default level is ⌈log2(max(angles, columns))⌉: TomoPy takes the maximum over the 3-D
/// stack's shape, rows included.
pub fn remove_stripe_fw(sinogram: ArrayView2<f64>, level: Option<usize>, sigma: f64, pad: bool) -> Result<Array2<f64>> {
    check_sinogram(&sinogram, 1, 1)?;
    if !(sigma.is_finite() && sigma > 0.0) {
        return Err(Error::Invalid(format!("sigma {sigma} (finite, more than 0)")));
    }
    let (rows, cols) = sinogram.dim();
    let level = level.unwrap_or_else(|| (rows.max(cols) as f64).log2().ceil() as usize);
    if level > 64 {
        return Err(Error::Invalid(format!("{level} wavelet levels (at most 64)")));
    }
    let padded = if pad { rows + rows / 8 } else { rows };
    let shift = (padded - rows) / 2;
    let mut approx = Array2::zeros((padded, cols));
    approx.slice_mut(s![shift..shift + rows, ..]).assign(&sinogram);
    let mut details = Vec::with_capacity(level);
    for _ in 0..level {
        let (lo, hi) = (dwt(&approx, 0, false), dwt(&approx, 0, true));
        let (cv, ch, cd) = (dwt(&lo, 1, true), dwt(&hi, 1, false), dwt(&hi, 1, true));
        approx = dwt(&lo, 1, false);
        details.push((ch, damp_vertical(&cv, sigma), cd));
    }
    for (ch, cv, cd) in details.iter().rev() {
        let a = approx.slice(s![..ch.nrows(), ..ch.ncols()]).to_owned();
        approx = idwt(&idwt(&a, cv, 1), &idwt(ch, cd, 1), 0);
    }
    Ok(approx.slice(s![shift..shift + rows, ..cols]).to_owned())
}

/// One level of pywt.dwt (mode 'symmetric', db5) along `axis`: out[k] = Σ_j f[j] x[2k + 1 − j],
/// x extended by half-sample symmetry, ⌊(n + 9)/2⌋ outputs; `high`: the detail band.
fn dwt(x: &Array2<f64>, axis: usize, high: bool) -> Array2<f64> {
    let f: Vec<f64> = (0..10).map(|j| if high { (if j % 2 == 0 { -1.0 } else { 1.0 }) * DB5_DEC_LO[9 - j] } else { DB5_DEC_LO[j] }).collect();
    let n = x.len_of(Axis(axis)) as i64;
    let outputs = (n as usize + 9) / 2;
    let mut dims = [x.nrows(), x.ncols()];
    dims[axis] = outputs;
    let mut out = Array2::zeros(dims);
    for (mut o, lane) in out.lanes_mut(Axis(axis)).into_iter().zip(x.lanes(Axis(axis))) {
        for (k, v) in o.iter_mut().enumerate() {
            *v = f.iter().enumerate().map(|(j, &w)| w * lane[Boundary::Reflect.fold(2 * k as i64 + 1 - j as i64, n).expect("reflect folds") as usize]).sum();
        }
    }
    out
}

/// pywt.idwt (mode 'symmetric', db5) along `axis`: the approximation and detail upsampled
/// (a[k] at 2k), convolved with rec_lo and rec_hi, outputs 8 ..= 2n − 1 of the full
/// convolution (2n − 8 values).
fn idwt(a: &Array2<f64>, d: &Array2<f64>, axis: usize) -> Array2<f64> {
    let rec_lo: Vec<f64> = (0..10).map(|j| DB5_DEC_LO[9 - j]).collect();
    let rec_hi: Vec<f64> = (0..10).map(|j| (if j % 2 == 0 { 1.0 } else { -1.0 }) * DB5_DEC_LO[j]).collect();
    let n = a.len_of(Axis(axis));
    let mut dims = [a.nrows(), a.ncols()];
    dims[axis] = 2 * n - 8;
    let mut out = Array2::zeros(dims);
    for ((mut o, la), ld) in out.lanes_mut(Axis(axis)).into_iter().zip(a.lanes(Axis(axis))).zip(d.lanes(Axis(axis))) {
        for (m, v) in o.iter_mut().enumerate() {
            // Full-convolution index t = m + 8 = 2k + j.
            let t = m + 8;
            *v = (0..10).filter(|j| (t - j) % 2 == 0 && (t - j) / 2 < n).map(|j| rec_lo[j] * la[(t - j) / 2] + rec_hi[j] * ld[(t - j) / 2]).sum();
        }
    }
    out
}

/// TomoPy's damping of a vertical detail band: its FFT along the angles times
/// 1 − exp(−ŷ²/2σ²), ŷ = (2j − m + 1)/2 on the fftshifted frequencies j, transformed back (the
/// real part).
fn damp_vertical(band: &Array2<f64>, sigma: f64) -> Array2<f64> {
    let m = band.nrows();
    let spectrum = c2c(&band.mapv(|v| Complex64::new(v, 0.0)).into_dyn(), &[0], false, Norm::Backward);
    let mut spectrum = spectrum.into_dimensionality::<ndarray::Ix2>().expect("two axes");
    for (k, mut row) in spectrum.rows_mut().into_iter().enumerate() {
        let j = (k + m / 2) % m;
        let y = (2.0 * j as f64 - m as f64 + 1.0) / 2.0;
        let damp = -(-(y * y) / (2.0 * sigma * sigma)).exp_m1();
        row.mapv_inplace(|c| c * damp);
    }
    c2c(&spectrum.into_dyn(), &[0], true, Norm::Backward).mapv(|c| c.re).into_dimensionality().expect("two axes")
}

/// TomoPy's x-ray wavelength (cm) at `energy` keV: 2π ħ c / E, with TomoPy's π.
pub fn wavelength(energy: f64) -> f64 {
    2.0 * TOMOPY_PI * PLANCK_CONSTANT * SPEED_OF_LIGHT / energy
}

/// TomoPy's _calc_pad_width: half the way from `dim` to the power of two at or above
/// dim + ⌈π λ dist / pixel²⌉ (rounded down), on each side.
pub fn phase_pad_width(dim: usize, pixel_size: f64, wavelength: f64, dist: f64) -> f64 {
    let pad = (TOMOPY_PI * wavelength * dist / (pixel_size * pixel_size)).ceil();
    ((2f64.powf((dim as f64 + pad).log2().ceil()) - dim as f64) * 0.5).floor()
}

/// tomopy.prep.phase.retrieve_phase (Paganin et al. 2002), pixel size and distance in cm,
/// energy in keV, TomoPy's defaults 1e-4, 50, 20, 1e-3, true. Each projection, padded with
/// `pad` by [`phase_pad_width`] on each side (the mean of the stack's first and last columns,
/// then its edge rows and columns replicated outwards), is multiplied in Fourier space by
/// 1 / (λ dist w² / 4π + alpha) normalised by its maximum, w² on TomoPy's reciprocal grid
/// ((2j − n + 1) / (2 (n − 1) pixel) per axis, which has no zero for an even n; 0 for n = 1,
/// where TomoPy divides by zero), and cropped back. A pad width of 0 replicates nothing
/// (TomoPy's `prj[-0:]` overwrites the whole projection with its last row, and so
/// `pad=False` returns a constant).
pub fn retrieve_phase(proj: ArrayView3<f64>, pixel_size: f64, dist: f64, energy: f64, alpha: f64, pad: bool) -> Result<Array3<f64>> {
    let (count, rows, cols) = proj.dim();
    if count == 0 || rows == 0 || cols == 0 {
        return Err(Error::Shape(format!("projections {:?}: none empty", proj.shape())));
    }
    check_phase(pixel_size, dist, energy, alpha)?;
    let lambda = wavelength(energy);
    let (pr, pc, fill) = if pad {
        let (pr, pc) = (phase_pad_width(rows, pixel_size, lambda, dist), phase_pad_width(cols, pixel_size, lambda, dist));
        if !(pr.is_finite() && pc.is_finite()) || pr.max(pc) > (1u64 << 20) as f64 {
            return Err(Error::Invalid(format!("phase retrieval pads of {pr} and {pc} pixels (distance {dist} cm, pixel {pixel_size} cm)")));
        }
        let edges = proj.slice(s![.., .., 0]).to_owned() + proj.slice(s![.., .., cols - 1]);
        (pr as usize, pc as usize, (edges * 0.5).mean().expect("not empty"))
    } else {
        (0, 0, 0.0)
    };
    let (ny, nz) = (rows + 2 * pr, cols + 2 * pc);
    crate::host::check_host_array("a padded projection's spectrum", &[ny, nz], 16)?;
    let filter = phase_filter(ny, nz, pixel_size, dist, energy, alpha);
    let mut out = Array3::zeros((count, rows, cols));
    for (p, mut o) in proj.outer_iter().zip(out.outer_iter_mut()) {
        let mut prj = Array2::from_elem((ny, nz), fill);
        prj.slice_mut(s![pr..pr + rows, pc..pc + cols]).assign(&p);
        // Edge replication: rows first, then whole columns (corners from the replicated rows).
        for r in (0..pr).chain(pr + rows..ny) {
            let from = prj.row(r.clamp(pr, pr + rows - 1)).to_owned();
            prj.row_mut(r).assign(&from);
        }
        for c in (0..pc).chain(pc + cols..nz) {
            let from = prj.column(c.clamp(pc, pc + cols - 1)).to_owned();
            prj.column_mut(c).assign(&from);
        }
        let spectrum = c2c(&prj.mapv(|v| Complex64::new(v, 0.0)).into_dyn(), &[0, 1], false, Norm::Backward);
        let filtered = spectrum * &filter.view().into_dyn();
        let back = c2c(&filtered, &[0, 1], true, Norm::Backward);
        o.assign(&back.slice(s![pr..pr + rows, pc..pc + cols]).mapv(|c| c.re));
    }
    Ok(out)
}

/// Fails unless the phase retrieval's parameters are usable: pixel size, energy and alpha
/// more than 0, the distance 0 or more.
pub fn check_phase(pixel_size: f64, dist: f64, energy: f64, alpha: f64) -> Result<()> {
    let positive = |v: f64| v.is_finite() && v > 0.0;
    if !(positive(pixel_size) && positive(energy) && positive(alpha) && dist.is_finite() && dist >= 0.0) {
        return Err(Error::Invalid(format!("pixel size {pixel_size}, energy {energy}, alpha {alpha} (more than 0), distance {dist} (0 or more)")));
    }
    Ok(())
}

/// TomoPy's Paganin filter on an (ny, nz) padded grid in the unshifted spectrum's order:
/// 1 / (λ d w² / 4π + α) on its reciprocal grid (no zero frequency for even sizes), divided by
/// its maximum.
pub fn phase_filter(ny: usize, nz: usize, pixel_size: f64, dist: f64, energy: f64, alpha: f64) -> Array2<f64> {
    let lambda = wavelength(energy);
    let coord = |j: usize, n: usize| if n > 1 { (2.0 * j as f64 - (n - 1) as f64) * (0.5 / ((n - 1) as f64 * pixel_size)) } else { 0.0 };
    let filter = Array2::from_shape_fn((ny, nz), |(a, b)| {
        // fftshift: entry (a, b) holds the grid's ((a − ny/2) mod ny, (b − nz/2) mod nz).
        let (i, j) = ((a + ny - ny / 2) % ny, (b + nz - nz / 2) % nz);
        let w2 = coord(i, ny).powi(2) + coord(j, nz).powi(2);
        1.0 / (lambda * dist * w2 / (4.0 * TOMOPY_PI) + alpha)
    });
    let max = filter.fold(f64::MIN, |m, &v| m.max(v));
    filter / max
}

/// tomopy.recon.rotation.find_center_vo (Vo et al. 2014) on one sinogram over 180° (the
/// caller picks or averages the rows), TomoPy's defaults smin −50, smax 50, srad 6, step 0.25,
/// ratio 0.5, drop 20: a coarse search in half pixels over [smin, smax] around the middle on
/// the sinogram Gaussian filtered by σ (3, 1), then a fine one in `step`s within `srad` of it on
/// the sinogram filtered by σ (2, 2), each the centre of the least [`vo_metrics`]. Above 4·10⁶
/// values the coarse search runs on columns binned by 4 (TomoPy's C binning runs on across
/// rows when the columns are not a multiple of 4; here each row bins its own columns, the
/// remainder dropped). TomoPy computes in f32, which may break near ties differently.
#[allow(clippy::too_many_arguments)]
pub fn find_center_vo(sinogram: ArrayView2<f64>, smin: f64, smax: f64, srad: f64, step: f64, ratio: f64, drop: usize) -> Result<f64> {
    check_sinogram(&sinogram, 2, 4)?;
    if !([smin, smax, srad, step].iter().all(|v| v.is_finite()) && ratio.is_finite() && ratio > 0.0) {
        return Err(Error::Invalid(format!("smin {smin}, smax {smax}, srad {srad}, step {step} (finite), ratio {ratio} (more than 0)")));
    }
    let x = sinogram.to_owned().into_dyn();
    let coarse = to2(gaussian_filter(&x, &[3.0, 1.0], Boundary::Reflect));
    let fine = to2(gaussian_filter(&x, &[2.0, 2.0], Boundary::Reflect));
    let (rows, cols) = sinogram.dim();
    let init = if (rows * cols) as f64 > 4e6 {
        let binned = Array2::from_shape_fn((rows, cols / 4), |(r, c)| (0..4).map(|p| coarse[(r, 4 * c + p)] / 4.0).sum::<f64>());
        4.0 * search(&binned, coarse_centres(cols / 4, smin / 4.0, smax / 4.0)?, ratio, drop)?
    } else {
        search(&coarse, coarse_centres(cols, smin, smax)?, ratio, drop)?
    };
    search(&fine, fine_centres(cols, srad, step, init), ratio, drop)
}

/// The coarse search's centres: smin and smax kept on the sinogram and truncated to integers
/// (TomoPy's np.int16), then every half pixel from columns/2 + smin to columns/2 + smax.
fn coarse_centres(cols: usize, smin: f64, smax: f64) -> Result<Vec<f64>> {
    let mid = (cols as f64 - 1.0) / 2.0;
    let within = |s: f64| ((s + mid).clamp(0.0, cols as f64 - 1.0) - mid).trunc();
    let (start, stop) = ((cols / 2) as f64 + within(smin), (cols / 2) as f64 + within(smax));
    let centres = arange(start, stop + 0.5, 0.5);
    if centres.is_empty() {
        return Err(Error::Invalid(format!("smin {smin} above smax {smax}")));
    }
    Ok(centres)
}

/// The fine search's centres: TomoPy's clips of srad to [1, columns/4], step to [0.1, srad]
/// and the start to [srad, columns − srad − 1], then numpy's arange(−srad, srad + step, step).
fn fine_centres(cols: usize, srad: f64, step: f64, init: f64) -> Vec<f64> {
    let srad = srad.abs().max(1.0).min(cols as f64 / 4.0);
    let step = step.abs().max(0.1).min(srad);
    let init = init.max(srad).min(cols as f64 - srad - 1.0);
    arange(-srad, srad + step, step).into_iter().map(|v| init + v).collect()
}

/// numpy's arange for floats: ⌈(stop − start)/step⌉ values start + i·δ, δ = (start + step) −
/// start (its fill), the second value start + step.
fn arange(start: f64, stop: f64, step: f64) -> Vec<f64> {
    let n = ((stop - start) / step).ceil().max(0.0) as usize;
    let delta = (start + step) - start;
    (0..n).map(|i| if i == 1 { start + step } else { start + i as f64 * delta }).collect()
}

/// The first centre of least metric (np.argmin).
fn search(sinogram: &Array2<f64>, centres: Vec<f64>, ratio: f64, drop: usize) -> Result<f64> {
    let metrics = vo_metrics(sinogram.view(), &centres, ratio, drop)?;
    let best = (0..metrics.len()).fold(0, |b, i| if metrics[i] < metrics[b] { i } else { b });
    Ok(centres[best])
}

/// Vo's metric for each candidate centre (TomoPy's _calculate_metric on an already filtered
/// sinogram): the sinogram flipped left-right and shifted by 2 (centre − (columns − 1)/2)
/// (np.roll for whole shifts, else scipy.ndimage.shift, order 3, mode 'constant'), the
/// columns it vacates filled from the sinogram flipped upside down, stacked below the
/// sinogram; the mean of its centred 2-D spectrum's magnitude inside the double wedge of
/// TomoPy's _create_mask (radius ratio·columns/2, `drop` rows about the centre left out).
pub fn vo_metrics(sinogram: ArrayView2<f64>, centres: &[f64], ratio: f64, drop: usize) -> Result<Vec<f64>> {
    check_sinogram(&sinogram, 2, 4)?;
    if !(ratio.is_finite() && ratio > 0.0) || centres.iter().any(|c| !c.is_finite()) {
        return Err(Error::Invalid(format!("ratio {ratio} (more than 0) or a centre not finite")));
    }
    let (rows, cols) = sinogram.dim();
    let mask = vo_mask(2 * rows, cols, 0.5 * ratio * cols as f64, drop);
    let flipped = sinogram.slice(s![.., ..;-1]).to_owned();
    let upside_down = sinogram.slice(s![..;-1, ..]);
    let mid = (cols as f64 - 1.0) / 2.0;
    let n = cols as i64;
    // Centres on all cores: a 2048² sinogram's fine search is 49 transforms of 4096 × 2048.
    use rayon::prelude::*;
    Ok(centres
        .par_iter()
        .map(|&centre| {
            let shift = 2.0 * (centre - mid);
            let mut moved = if shift.fract() == 0.0 {
                let k = shift as i64;
                Array2::from_shape_fn((rows, cols), |(r, c)| flipped[(r, (c as i64 - k).rem_euclid(n) as usize)])
            } else {
                shifted_rows(&flipped, shift)
            };
            // The vacated columns: [0, ⌈shift⌉) or [columns + ⌊shift⌋, columns).
            let vacated = if shift >= 0.0 { 0..(shift.ceil() as i64).min(n) } else { (n + shift.floor() as i64).max(0)..n };
            for c in vacated.map(|c| c as usize) {
                moved.column_mut(c).assign(&upside_down.column(c));
            }
            let stacked = ndarray::concatenate![Axis(0), sinogram, moved];
            let spectrum = c2c(&stacked.mapv(|v| Complex64::new(v, 0.0)).into_dyn(), &[0, 1], false, Norm::Backward);
            let (h, w) = (2 * rows, cols);
            let sum: f64 = mask.indexed_iter().filter(|(_, &m)| m).map(|((r, c), _)| spectrum[[(r + h - h / 2) % h, (c + w - w / 2) % w]].norm()).sum();
            sum / (h * w) as f64
        })
        .collect())
}

/// scipy.ndimage.shift(x, (0, shift), order=3, mode='constant') row by row (the spline along
/// the angles, sampled at its own nodes, returns the rows as they are).
fn shifted_rows(x: &Array2<f64>, shift: f64) -> Array2<f64> {
    let cols = x.ncols();
    let coords = ArrayD::from_shape_fn(IxDyn(&[1, cols]), |i| i[1] as f64 - shift);
    let mut out = Array2::zeros(x.dim());
    for (row, mut o) in x.rows().into_iter().zip(out.rows_mut()) {
        o.assign(&map_coordinates(&row.to_owned().into_dyn(), &coords, &Sampling::default()));
    }
    out
}

/// TomoPy's _create_mask: per row i, the columns within ⌈(i − centre row)·dv / radius / du⌉
/// of the centre column (du = 1/columns, dv = (rows − 1)/(2π rows)); then the 2·drop + 1 rows
/// about the centre row (drop at most ⌈rows/20⌉) and the 3 columns about the centre column off.
fn vo_mask(rows: usize, cols: usize, radius: f64, drop: usize) -> Array2<bool> {
    let du = 1.0 / cols as f64;
    let dv = (rows as f64 - 1.0) / (rows as f64 * 2.0 * std::f64::consts::PI);
    let (cen_row, cen_col) = ((rows as f64 / 2.0).ceil() as i64 - 1, (cols as f64 / 2.0).ceil() as i64 - 1);
    let drop = (drop as i64).min((0.05 * rows as f64).ceil() as i64);
    let last = cols as i64 - 1;
    Array2::from_shape_fn((rows, cols), |(i, c)| {
        let pos = (((i as i64 - cen_row) as f64 * dv / radius) / du).ceil() as i64;
        let (a, b) = ((cen_col - pos).clamp(0, last), (cen_col + pos).clamp(0, last));
        let (i, c) = (i as i64, c as i64);
        (a.min(b)..=a.max(b)).contains(&c) && !(cen_row - drop..=cen_row + drop).contains(&i) && !(cen_col - 1..=cen_col + 1).contains(&c)
    })
}

// ---------------------------------------------------------------------------------------------
// Helpers

fn to2(x: ArrayD<f64>) -> Array2<f64> {
    x.into_dimensionality().expect("two axes")
}

fn check_sinogram(x: &ArrayView2<f64>, rows: usize, cols: usize) -> Result<()> {
    if x.nrows() < rows || x.ncols() < cols {
        return Err(Error::Shape(format!("a sinogram {:?}: at least {rows} angles and {cols} columns", x.shape())));
    }
    Ok(())
}

fn check_window(size: usize) -> Result<()> {
    if !(1..=MAX_WINDOW).contains(&size) {
        return Err(Error::Invalid(format!("a window of {size} (1 to {MAX_WINDOW})")));
    }
    Ok(())
}

/// scipy.ndimage.median_filter(x, size, mode='reflect'): the (taps/2)-th smallest value.
fn median_filter(x: &ArrayD<f64>, size: &[usize]) -> Result<ArrayD<f64>> {
    let footprint = ArrayD::from_elem(IxDyn(size), true);
    let f = Footprint::new(&footprint.view(), None, &[])?;
    Ok(rank_reference(x, &f, f.offsets.len() / 2, Boundary::Reflect))
}

fn median_filter2(x: &Array2<f64>, size: [usize; 2]) -> Result<Array2<f64>> {
    Ok(to2(median_filter(&x.clone().into_dyn(), &size)?))
}

/// Each column sorted (a stable sort), with the original row of each sorted value.
fn sort_columns(x: &Array2<f64>) -> (Array2<f64>, Array2<usize>) {
    let mut sorted = x.clone();
    let mut order = Array2::zeros(x.dim());
    for ((col, mut s), mut o) in x.columns().into_iter().zip(sorted.columns_mut()).zip(order.columns_mut()) {
        let mut idx: Vec<usize> = (0..col.len()).collect();
        idx.sort_by(|&a, &b| col[a].total_cmp(&col[b]));
        for (k, &i) in idx.iter().enumerate() {
            s[k] = col[i];
            o[k] = i;
        }
    }
    (sorted, order)
}

/// The inverse of [`sort_columns`]: value k of column c goes back to row order[k, c].
fn unsort_columns(x: &Array2<f64>, order: &Array2<usize>) -> Array2<f64> {
    let mut out = Array2::zeros(x.dim());
    for ((k, c), &r) in order.indexed_iter() {
        out[(r, c)] = x[(k, c)];
    }
    out
}
