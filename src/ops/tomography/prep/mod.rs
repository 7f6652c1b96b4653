//! Preprocessing of raw projections for reconstruction, on the device, with TomoPy's names and
//! results ([`cpu`] holds the f64 references): outlier (zinger) replacement
//! (`remove_outlier`), flat and dark normalisation (`normalize`), −log with a floor
//! (`minus_log`), ring (stripe) removal on sinograms (Vo et al. 2018's sorting-based and
//! large-stripe methods, `remove_stripe_based_sorting`, `remove_large_stripe`) and
//! single-distance phase retrieval (Paganin et al. 2002, `retrieve_phase`).
//!
//! The order is tomocupy's: outliers on the raw counts, normalisation, phase retrieval on the
//! transmission (it needs whole projections), −log, then stripe removal on the sinograms.

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

/// TomoPy's constants (tomopy/prep/phase.py): ħ in keV·s and c in cm/s, so energies are in
/// keV and lengths in cm.
const PLANCK_CONSTANT: f64 = 6.58211928e-19;
const SPEED_OF_LIGHT: f64 = 299792458e+2;

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
        for (name, v) in [("pixel size", self.pixel_size), ("distance", self.distance), ("energy", self.energy)] {
            if !v.is_finite() || v <= 0.0 {
                return Err(Error::Invalid(format!("a Paganin {name} of {v} (a positive number)")));
            }
        }
        if !self.alpha.is_finite() || self.alpha < 0.0 {
            return Err(Error::Invalid(format!("a Paganin alpha of {} (0 or more)", self.alpha)));
        }
        Ok(())
    }

    /// The X-ray wavelength in cm.
    pub fn wavelength(&self) -> f64 {
        2.0 * std::f64::consts::PI * PLANCK_CONSTANT * SPEED_OF_LIGHT / self.energy
    }

    /// The padding on each side of an axis of `n` pixels (TomoPy's `_calc_pad_width`).
    pub fn pad_width(&self, n: usize) -> usize {
        if !self.pad {
            return 0;
        }
        let pad_pix = (std::f64::consts::PI * self.wavelength() * self.distance / (self.pixel_size * self.pixel_size)).ceil();
        let total = 2f64.powf((n as f64 + pad_pix).log2().ceil());
        ((total - n as f64) * 0.5).max(0.0) as usize
    }

    /// The filter on an (n1, n2) padded grid at the half spectrum's bins (n1, n2/2 + 1):
    /// TomoPy's 1 / (λ d w² / 4π + α) on its reciprocal grid, normalised by its maximum, and
    /// made even (the mean of bins m and −m), which is what TomoPy's real part of the inverse
    /// transform applies.
    pub fn filter(&self, n1: usize, n2: usize) -> ndarray::Array2<f64> {
        let coordinate = |j: usize, n: usize| if n > 1 { (2.0 * j as f64 - (n - 1) as f64) * 0.5 / ((n - 1) as f64 * self.pixel_size) } else { 0.0 };
        // Bin m of the unshifted spectrum is TomoPy's grid point (m − n/2) mod n (fftshift).
        let shifted = |m: usize, n: usize| coordinate((m + n - n / 2) % n, n);
        let factor = self.wavelength() * self.distance / (4.0 * std::f64::consts::PI);
        let h = |m1: usize, m2: usize| {
            let w2 = shifted(m1, n1).powi(2) + shifted(m2, n2).powi(2);
            1.0 / (factor * w2 + self.alpha)
        };
        let mut max = 0f64;
        for m1 in 0..n1 {
            for m2 in 0..n2 {
                max = max.max(h(m1, m2));
            }
        }
        ndarray::Array2::from_shape_fn((n1, n2 / 2 + 1), |(m1, m2)| 0.5 * (h(m1, m2) + h((n1 - m1) % n1, (n2 - m2) % n2)) / max)
    }
}

/// Paganin phase retrieval of projections (count, rows, cols) of transmission.
pub fn record_paganin(rec: &mut Recording, projections: Buf, paganin: &Paganin) -> Result<Buf> {
    use crate::fft::{record_transform, Norm, Transform};
    paganin.check()?;
    let &[count, rows, cols] = rec.dims(projections) else {
        return Err(Error::Shape(format!("projections {:?} for phase retrieval: (count, rows, cols) expected", rec.dims(projections))));
    };
    let (pr, pc) = (paganin.pad_width(rows), paganin.pad_width(cols));
    let (n1, n2) = (rows + 2 * pr, cols + 2 * pc);
    let padded = crate::ops::layout::pad(rec, projections, &[(0, 0), (pr, pr), (pc, pc)], Boundary::Nearest)?;
    let spectrum = record_transform(rec, padded, Some(&[1, 2]), Transform::RealForward, Norm::Backward)?;
    let filter = paganin.filter(n1, n2).mapv(|v| v as f32).into_dyn();
    let filter = rec.upload_f32(&filter.view())?;
    let filtered = multiply_lines::record(rec, spectrum, filter)?;
    let image = record_transform(rec, filtered, Some(&[1, 2]), Transform::RealInverse { len: n2 }, Norm::Backward)?;
    crate::ops::layout::crop(rec, image, &[0, pr, pc], &[count, rows, cols])
}
