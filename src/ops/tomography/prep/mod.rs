//! Preprocessing of raw projections for reconstruction, on the device, with TomoPy's names and
//! results ([`cpu`] holds the f64 references): outlier (zinger) replacement
//! (`remove_outlier`), flat and dark normalisation (`normalize`), −log with a floor
//! (`minus_log`), ring (stripe) removal on sinograms (Vo et al. 2018's sorting-based and
//! large-stripe methods, `remove_stripe_based_sorting`, `remove_large_stripe`) and
//! single-distance phase retrieval (Paganin et al. 2002, `retrieve_phase`).
//!
//! The order is tomocupy's: outliers on the raw counts, normalisation, phase retrieval on the
//! transmission (it needs whole projections), −log, then stripe removal on the sinograms.

pub mod cpu;

use crate::error::{Error, Result};
use crate::graph::{Buf, Recording};
use crate::kernels::boundary::Boundary;
use crate::kernels::prep_normalize::{self, Mode, Raw};
use crate::kernels::{multiply_lines, sort_columns, take};
use crate::ops::filter::morphology::{self, Footprint};

/// TomoPy's `remove_outlier(arr, dif, size)`: a raw value `dif` or more above the median of its
/// size × size neighbourhood within its projection becomes that median.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outliers {
    pub dif: f32,
    pub size: usize,
}

impl Outliers {
    pub fn check(&self) -> Result<()> {
        if !self.dif.is_finite() || self.dif < 0.0 {
            return Err(Error::Invalid(format!("an outlier threshold of {} (a finite value, 0 or more)", self.dif)));
        }
        if !(1..=31).contains(&self.size) {
            return Err(Error::Invalid(format!("an outlier median of size {} (1 to 31)", self.size)));
        }
        Ok(())
    }

    /// Rows above and below a band the median reads.
    pub fn halo(&self) -> usize {
        self.size / 2
    }
}

/// The median over `footprint`'s shape (all taps in) of an f32 array, scipy's median_filter
/// with mode 'reflect'.
fn record_median(rec: &mut Recording, x: Buf, shape: &[usize]) -> Result<Buf> {
    let ones = ndarray::ArrayD::from_elem(ndarray::IxDyn(shape), true);
    let f = Footprint::new(&ones.view(), None, &[])?;
    let rank = f.offsets.len() / 2;
    morphology::record_rank(rec, x, &f, rank, Boundary::Reflect)
}

/// How a band of raw rows becomes reconstruction input.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Normalize {
    pub outliers: Option<Outliers>,
    /// Transmission clipped above this (TomoPy's `cutoff`; +∞: none).
    pub cutoff: f32,
    /// −log of the transmission, floored at `floor`; None: the transmission itself.
    pub minus_log: Option<f32>,
    /// Output (rows, angles, cols) sinograms, else (angles, rows, cols) projections.
    pub sinograms: bool,
}

/// Rows `row0..row0 + rows` of the raw band `raw` (the rows around them are the outlier
/// median's halo), normalised by `flat_dark` (the flat and dark means of those rows, (2, rows,
/// cols)).
pub fn record_normalize(rec: &mut Recording, raw: Raw, row0: usize, rows: usize, flat_dark: Buf, n: &Normalize) -> Result<Buf> {
    let outliers = match n.outliers {
        Some(o) => {
            o.check()?;
            let values = prep_normalize::record(rec, raw, 0, raw.dims[1], None, flat_dark, Mode::Raw, false)?;
            let median = record_median(rec, values, &[1, o.size, o.size])?;
            Some((median, o.dif, values))
        }
        None => None,
    };
    let mode = match n.minus_log {
        Some(floor) => Mode::MinusLog { cutoff: n.cutoff, floor },
        None => Mode::Transmission { cutoff: n.cutoff },
    };
    // With the outlier test the raw values are read back as f32.
    let source = match outliers {
        Some((_, _, values)) => Raw { buf: values, u16: false, dims: raw.dims },
        None => raw,
    };
    prep_normalize::record(rec, source, row0, rows, outliers.map(|(m, d, _)| (m, d)), flat_dark, mode, n.sinograms)
}

/// Vo et al. 2018's sorting-based stripe removal (TomoPy's and algotom's
/// `remove_stripe_based_sorting`) of sinograms (slices, angles, cols): each detector column
/// sorted along the angles, the sorted image median filtered (`dim` 1: along the detector over
/// `size`; 2: size × size), and put back in place.
pub fn record_stripe_sorting(rec: &mut Recording, sinograms: Buf, size: usize, dim: usize) -> Result<Buf> {
    check_stripe_size(size, dim)?;
    let (sorted, position) = sort_columns::record(rec, sinograms)?;
    let shape = if dim == 1 { [1, 1, size] } else { [1, size, size] };
    let smooth = record_median(rec, sorted, &shape)?;
    take::record(rec, smooth, position)
}

fn check_stripe_size(size: usize, dim: usize) -> Result<()> {
    if !(1..=255).contains(&size) {
        return Err(Error::Invalid(format!("a stripe filter of size {size} (1 to 255)")));
    }
    if !(1..=2).contains(&dim) {
        return Err(Error::Invalid(format!("a stripe filter of dim {dim} (1: along the detector, 2: 2D)")));
    }
    Ok(())
}

/// Single-distance phase retrieval (Paganin et al. 2002) as TomoPy's `retrieve_phase`: pixel
/// size and distance in cm, energy in keV, `alpha` the regularisation; `pad` extends each
/// projection by edge values to the power of two past its size plus the Fresnel width.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Paganin {
    pub pixel_size: f64,
    pub distance: f64,
    pub energy: f64,
    pub alpha: f64,
    pub pad: bool,
}

impl Paganin {
    pub fn check(&self) -> Result<()> {
        cpu::check_phase(self.pixel_size, self.distance, self.energy, self.alpha)?;
        let (r, c) = (self.pad_width(1 << 16), self.pad_width(1 << 16));
        if r.max(c) > 1 << 20 {
            return Err(Error::Invalid(format!("phase retrieval pads of {r} pixels (distance {} cm, pixel {} cm)", self.distance, self.pixel_size)));
        }
        Ok(())
    }

    /// The padding on each side of an axis of `n` pixels (TomoPy's `_calc_pad_width`).
    pub fn pad_width(&self, n: usize) -> usize {
        if !self.pad {
            return 0;
        }
        cpu::phase_pad_width(n, self.pixel_size, cpu::wavelength(self.energy), self.distance).clamp(0.0, (1u64 << 40) as f64) as usize
    }

    /// The filter at the half spectrum's bins (n1, n2/2 + 1) of an (n1, n2) padded grid:
    /// TomoPy's ([`cpu::phase_filter`]) made even, the mean of bins m and −m, which is what
    /// TomoPy's real part of the inverse transform applies.
    pub fn filter(&self, n1: usize, n2: usize) -> ndarray::Array2<f64> {
        let h = cpu::phase_filter(n1, n2, self.pixel_size, self.distance, self.energy, self.alpha);
        ndarray::Array2::from_shape_fn((n1, n2 / 2 + 1), |(m1, m2)| 0.5 * (h[(m1, m2)] + h[((n1 - m1) % n1, (n2 - m2) % n2)]))
    }
}

/// Paganin's filter for projections of one size, on the device: made once per run (its table
/// is the padded grid's size, 4096² for 2048² projections, computed in f64 on the host).
pub struct PaganinPlan {
    rows: usize,
    cols: usize,
    pads: (usize, usize),
    filter: crate::gpu::GpuArray,
}

impl PaganinPlan {
    pub fn new(gpu: &crate::gpu::Gpu, paganin: &Paganin, rows: usize, cols: usize) -> Result<PaganinPlan> {
        paganin.check()?;
        let pads = (paganin.pad_width(rows), paganin.pad_width(cols));
        let (n1, n2) = (rows + 2 * pads.0, cols + 2 * pads.1);
        crate::host::check_host_array("the phase filter", &[n1, n2], 16)?;
        let filter = paganin.filter(n1, n2).mapv(|v| v as f32).into_dyn();
        Ok(PaganinPlan { rows, cols, pads, filter: crate::gpu::GpuArray::upload_f32(gpu, &filter.view())? })
    }

    /// The padded projection's shape.
    pub fn padded(&self) -> [usize; 2] {
        [self.rows + 2 * self.pads.0, self.cols + 2 * self.pads.1]
    }
}

/// Paganin phase retrieval of projections (count, rows, cols) of transmission.
pub fn record_paganin(rec: &mut Recording, projections: Buf, plan: &PaganinPlan) -> Result<Buf> {
    use crate::fft::{record_transform, Norm, Transform};
    let &[count, rows, cols] = rec.dims(projections) else {
        return Err(Error::Shape(format!("projections {:?} for phase retrieval: (count, rows, cols) expected", rec.dims(projections))));
    };
    if (rows, cols) != (plan.rows, plan.cols) {
        return Err(Error::Shape(format!("projections of {rows} × {cols} for a phase filter made for {} × {}", plan.rows, plan.cols)));
    }
    let (pr, pc) = plan.pads;
    let padded = crate::ops::layout::pad(rec, projections, &[(0, 0), (pr, pr), (pc, pc)], Boundary::Nearest)?;
    let spectrum = record_transform(rec, padded, Some(&[1, 2]), Transform::RealForward, Norm::Backward)?;
    let filter = rec.input(&plan.filter);
    let filtered = multiply_lines::record(rec, spectrum, filter)?;
    let image = record_transform(rec, filtered, Some(&[1, 2]), Transform::RealInverse { len: plan.padded()[1] }, Norm::Backward)?;
    crate::ops::layout::crop(rec, image, &[0, pr, pc], &[count, rows, cols])
}

/// Vo et al. 2018's removal of large stripes (TomoPy's `remove_large_stripe`, [`cpu`]'s
/// reference), in two recordings with the stripe detection on the host between them: here the
/// columns sorted and median filtered along the detector (`smooth`), and the means of the
/// sorted and of the smoothed values over the rows kept by `drop_ratio` (slices, cols).
pub fn record_large_stripe_means(rec: &mut Recording, sinograms: Buf, size: usize, drop_ratio: f64) -> Result<(Buf, Buf, Buf)> {
    check_stripe_size(size, 1)?;
    let &[slices, angles, cols] = rec.dims(sinograms) else {
        return Err(Error::Shape(format!("sinograms {:?}: (slices, angles, cols) expected", rec.dims(sinograms))));
    };
    let (sorted, _) = sort_columns::record(rec, sinograms)?;
    let smooth = record_median(rec, sorted, &[1, 1, size])?;
    let drop = large_stripe_drop(angles, drop_ratio);
    let kept = |rec: &mut Recording, x: Buf| -> Result<Buf> {
        let rows = crate::ops::layout::crop(rec, x, &[0, drop, 0], &[slices, angles - 2 * drop, cols])?;
        crate::ops::reduce::record(rec, rows, crate::ops::reduce::Reduction::Mean, Some(1))
    };
    let (sorted_mean, smooth_mean) = (kept(rec, sorted)?, kept(rec, smooth)?);
    Ok((smooth, sorted_mean, smooth_mean))
}

/// The rows TomoPy leaves out at each end of the sorted columns' means.
fn large_stripe_drop(angles: usize, drop_ratio: f64) -> usize {
    (0.5 * drop_ratio.clamp(0.0, 0.8) * angles as f64) as usize
}

/// The host step between the two: per slice, each column's factor ([`cpu::large_stripe_factor`])
/// and whether it is a stripe ([`cpu::detect_stripe`], dilated by
/// one column), both (slices, 1, cols) for the second recording.
pub fn large_stripe_columns(sorted_mean: &ndarray::Array2<f32>, smooth_mean: &ndarray::Array2<f32>, snr: f64) -> (ndarray::Array3<f32>, ndarray::Array3<f32>) {
    let (slices, cols) = sorted_mean.dim();
    let mut factors = ndarray::Array3::<f32>::ones((slices, 1, cols));
    let mut stripes = ndarray::Array3::<f32>::zeros((slices, 1, cols));
    for s in 0..slices {
        let f: Vec<f64> = (0..cols).map(|c| cpu::large_stripe_factor(sorted_mean[(s, c)] as f64, smooth_mean[(s, c)] as f64)).collect();
        let found = cpu::detect_stripe(&f, snr);
        for c in 0..cols {
            factors[(s, 0, c)] = f[c] as f32;
            stripes[(s, 0, c)] = if found[c.saturating_sub(1)..(c + 2).min(cols)].iter().any(|&b| b) { 1.0 } else { 0.0 };
        }
    }
    (factors, stripes)
}

/// The second recording: the sinograms divided by the factors (`norm`), and in the stripes'
/// columns the smoothed sorted values put back in the order of the divided columns.
pub fn record_large_stripe_fill(rec: &mut Recording, sinograms: Buf, smooth: Buf, factors: Buf, stripes: Buf, norm: bool) -> Result<Buf> {
    use crate::kernels::broadcast::{self, BroadcastOp};
    let x = if norm { broadcast::record(rec, BroadcastOp::Divide, sinograms, factors)? } else { sinograms };
    let (_, position) = sort_columns::record(rec, x)?;
    let corrected = take::record(rec, smooth, position)?;
    // x where no stripe, the corrected values where one: products with 0 and 1 are exact.
    let keep = crate::kernels::unary::record(rec, crate::kernels::unary::UnaryOp::Affine { scale: -1.0, offset: 1.0 }, stripes)?;
    let a = broadcast::record(rec, BroadcastOp::Multiply, x, keep)?;
    let b = broadcast::record(rec, BroadcastOp::Multiply, corrected, stripes)?;
    broadcast::record(rec, BroadcastOp::Add, a, b)
}

/// Münch et al. 2009's Fourier-wavelet ring removal (TomoPy's `remove_stripe_fw`, wavelet
/// db5, [`cpu::remove_stripe_fw`]) of sinograms (slices, angles, cols): zero-padded by
/// ⌊angles/8⌋ along the angles (`pad`), `level` levels of the 2-D wavelet transform (None:
/// ⌈log2 max(angles, cols)⌉), each level's vertical detail damped along the angles in Fourier
/// space by 1 − exp(−ŷ²/2σ²), and back.
pub fn record_stripe_fw(rec: &mut Recording, sinograms: Buf, level: Option<usize>, sigma: f64, pad: bool) -> Result<Buf> {
    use crate::kernels::wavelet_axis::{self, record_forward, record_inverse};
    let &[slices, angles, cols] = rec.dims(sinograms) else {
        return Err(Error::Shape(format!("sinograms {:?}: (slices, angles, cols) expected", rec.dims(sinograms))));
    };
    if !(sigma.is_finite() && sigma > 0.0) {
        return Err(Error::Invalid(format!("a Fourier-wavelet sigma of {sigma} (finite, more than 0)")));
    }
    let level = level.unwrap_or_else(|| (angles.max(cols) as f64).log2().ceil() as usize);
    if level > 64 {
        return Err(Error::Invalid(format!("{level} wavelet levels (at most 64)")));
    }
    let padded = if pad { angles + angles / 8 } else { angles };
    let shift = (padded - angles) / 2;
    let mut approx = crate::ops::layout::pad(rec, sinograms, &[(0, 0), (shift, padded - angles - shift), (0, 0)], Boundary::Constant(0.0))?;
    let filters =
        rec.upload_f32(&ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[40]), wavelet_axis::filters(&cpu::DB5_DEC_LO).to_vec()).expect("40").view())?;
    let mut details = Vec::with_capacity(level);
    for _ in 0..level {
        let (lo, hi) = record_forward(rec, filters, approx, 1)?;
        let (aa, vertical) = record_forward(rec, filters, lo, 2)?;
        let (horizontal, diagonal) = record_forward(rec, filters, hi, 2)?;
        details.push((horizontal, damp_vertical(rec, vertical, sigma)?, diagonal));
        approx = aa;
    }
    for &(horizontal, vertical, diagonal) in details.iter().rev() {
        let dims = rec.dims(horizontal).to_vec();
        let a = crate::ops::layout::crop(rec, approx, &[0, 0, 0], &dims)?;
        let low = record_inverse(rec, filters, a, vertical, 2)?;
        let high = record_inverse(rec, filters, horizontal, diagonal, 2)?;
        approx = record_inverse(rec, filters, low, high, 1)?;
    }
    crate::ops::layout::crop(rec, approx, &[0, shift, 0], &[slices, angles, cols])
}

/// TomoPy's damping of a vertical detail band (slices, m, n) along its rows: the FFT along
/// them times 1 − exp(−ŷ²/2σ²), row k's ŷ = (2j − m + 1)/2 with j = (k + ⌊m/2⌋) mod m (TomoPy
/// multiplies the shifted spectrum by the unshifted coordinates), the real part of the inverse.
fn damp_vertical(rec: &mut Recording, band: Buf, sigma: f64) -> Result<Buf> {
    use crate::fft::{record_transform, Norm, Transform};
    use crate::kernels::complex_to_real::{self, ComplexToReal};
    let (m, n) = (rec.dims(band)[1], rec.dims(band)[2]);
    let table = ndarray::Array2::from_shape_fn((m, n), |(k, _)| {
        let j = (k + m / 2) % m;
        let y = (2.0 * j as f64 - m as f64 + 1.0) / 2.0;
        -(-(y * y) / (2.0 * sigma * sigma)).exp_m1() as f32
    });
    let damp = rec.upload_f32(&table.into_dyn().view())?;
    let complex = crate::kernels::real_to_complex::record(rec, band)?;
    let spectrum = record_transform(rec, complex, Some(&[1]), Transform::Forward, Norm::Backward)?;
    let damped = multiply_lines::record(rec, spectrum, damp)?;
    let back = record_transform(rec, damped, Some(&[1]), Transform::Inverse, Norm::Backward)?;
    complex_to_real::record(rec, ComplexToReal::Re, back)
}
