//! Parallel-beam tomography in 2D (stacks of slices batched): the projector pair, filtered
//! back-projection and MLEM.
//!
//! Geometry (ASTRA's 2D `parallel`, detector spacing 1): an N×N image whose pixel (r, c) has its
//! centre at x = c − (N−1)/2, y = (N−1)/2 − r (pixel units, y up); a sinogram [angle][detector]
//! whose bin k measures the line x cos θ + y sin θ = k − center, the rotation centre `center`
//! in detector coordinates ((D−1)/2, the detector's middle, unless given). Values are line
//! integrals in pixel units. scikit-image's `radon(image, theta)` takes degrees, returns the
//! sinogram transposed (detector, angle) and puts the centre at N//2: for odd N the same as ours,
//! for even N half a pixel away.
//!
//! The direct projector pair (kernels::project) follows the strip model (ASTRA's `strip`): a
//! unit-square pixel projects onto the detector as a trapezoid of unit area, and each bin of
//! width 1 receives the part of it within the bin; back-projection is the exact adjoint, and
//! every projection of an image inside the detector's reach sums to the image's sum.
//!
//! The log-polar method ([`logpolar`]) computes the same operators for angles equally spaced over
//! [0, π) with the centre at the detector's middle, as convolutions on log-polar grids (cubic
//! B-splines between the grids: a slightly sharper model of the image than the strips'); its
//! results are 0 outside the object's disk (radius max(N, D)/2 + 1.5). [`Method`] chooses; FBP
//! takes it off the middle too (the filter shifts the projections). `cpu::logpolar` is its f64
//! reference, `cpu::backproject_spline` the exact back-projector it approximates.

pub mod cpu;
pub mod gridrec;
pub mod logpolar;
pub mod prep;
pub mod vector;

use ndarray::{ArrayD, IxDyn};

use crate::error::{Error, Result};
use crate::fft::{FftPlan, Norm, Transform};
use crate::graph::{Buf, Recording};
use crate::kernels::backproject;
use crate::kernels::project::{self, Setup};
use crate::kernels::unary::{self, UnaryOp};
use crate::kernels::{boundary::Boundary, em_ratio, em_update, multiply_lines};
use crate::ops::layout;
use crate::ops::reduce::{self, Reduction};

/// Where the rays are: the image side, the angles (radians), the detector count and the
/// rotation centre's detector coordinate.
#[derive(Clone, Debug, PartialEq)]
pub struct Geometry {
    pub size: usize,
    pub angles: Vec<f64>,
    pub detectors: usize,
    pub center: f64,
    /// How projections and back-projections are computed.
    pub method: Method,
}

/// The projector pair's algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Method {
    /// The log-polar method where it applies and pays (equally spaced angles over [0, π), the
    /// centre at the detector's middle, an image of 256² or more), else the direct one.
    #[default]
    Auto,
    /// Convolutions on log-polar grids ([`logpolar`]); an error where it does not apply.
    LogPolar,
    /// The strip-model projector pair, for any angles and centre.
    Direct,
    /// FBP by gridding ([`gridrec`]: TomoPy's gridrec, tomocupy's fourierrec) for angles equally
    /// spaced over [0, π), any centre; projections and back-projections by the direct pair.
    Gridrec,
}

impl Method {
    pub const NAMES: [&'static str; 4] = ["auto", "logpolar", "direct", "gridrec"];

    pub fn parse(name: &str) -> Result<Method> {
        match name {
            "auto" => Ok(Method::Auto),
            "logpolar" => Ok(Method::LogPolar),
            "direct" => Ok(Method::Direct),
            "gridrec" => Ok(Method::Gridrec),
            other => Err(Error::Invalid(format!("method '{other}' (one of {})", Method::NAMES.join(", ")))),
        }
    }
}

/// The smallest image the automatic choice gives to the log-polar method.
pub const LOGPOLAR_FROM: usize = 256;

impl Geometry {
    /// An N×N image seen at `angles`; `detectors` defaults to N, `center` to the detector's
    /// middle, (detectors − 1) / 2.
    /// The most projection angles a geometry takes.
    pub const MAX_ANGLES: usize = 1 << 20;

    pub fn new(size: usize, angles: Vec<f64>, detectors: Option<usize>, center: Option<f64>) -> Result<Geometry> {
        let detectors = detectors.unwrap_or(size);
        if !(1..=1 << 16).contains(&size) || !(1..=1 << 16).contains(&detectors) {
            return Err(Error::Invalid(format!("an image of {size}² and {detectors} detectors (1 to 65536 each)")));
        }
        if angles.is_empty() || angles.len() > Geometry::MAX_ANGLES {
            return Err(Error::Invalid(format!("{} angles (1 to 2^20)", angles.len())));
        }
        if let Some(bad) = angles.iter().find(|a| !a.is_finite()) {
            return Err(Error::NonFinite(format!("an angle of {bad}")));
        }
        let center = center.unwrap_or((detectors as f64 - 1.0) / 2.0);
        if !center.is_finite() {
            return Err(Error::NonFinite(format!("the rotation centre {center}")));
        }
        Ok(Geometry { size, angles, detectors, center, method: Method::Auto })
    }

    /// `count` angles iπ/count, equally spaced over [0, π).
    pub fn equally_spaced(count: usize) -> Vec<f64> {
        (0..count).map(|i| i as f64 * std::f64::consts::PI / count as f64).collect()
    }

    /// The centre (x, y) of pixel (r, c).
    pub fn pixel_centre(&self, r: usize, c: usize) -> (f64, f64) {
        let mid = (self.size as f64 - 1.0) / 2.0;
        (c as f64 - mid, mid - r as f64)
    }

    /// Each detector bin's coordinate t = k − center.
    pub fn detector_coordinates(&self) -> Vec<f64> {
        (0..self.detectors).map(|k| k as f64 - self.center).collect()
    }

    /// FBP's zero-padded projection length: a power of two, at least twice the detector count
    /// (and 64), so the filter's circular convolution does not wrap.
    pub fn padded_detectors(&self) -> usize {
        padded_length(self.detectors)
    }

    /// Per angle, the kernels' `Ray` (common/strip.wgsl), computed in f64: cos θ, sin θ, the
    /// footprint's half-widths w1 and w2, its height h and q = h / (2 (w2 − w1)), then 2 unused.
    fn rays(&self) -> ArrayD<f32> {
        let values = self
            .angles
            .iter()
            .flat_map(|t| {
                let (cos, sin) = (t.cos(), t.sin());
                let (a, b) = (cos.abs(), sin.abs());
                let (w1, w2, h) = (0.5 * (a - b).abs(), 0.5 * (a + b), 1.0 / a.max(b));
                let q = if w2 > w1 { h / (2.0 * (w2 - w1)) } else { 0.0 };
                [cos, sin, w1, w2, h, q, 0.0, 0.0].map(|v| v as f32)
            })
            .collect();
        ArrayD::from_shape_vec(IxDyn(&[self.angles.len(), 8]), values).expect("eight per angle")
    }

    /// The same geometry computed by `method`.
    pub fn with_method(self, method: Method) -> Geometry {
        Geometry { method, ..self }
    }

    /// Whether the log-polar method computes this geometry's projections (an error where it
    /// was asked for and does not apply).
    pub fn uses_logpolar(&self) -> Result<bool> {
        match self.method {
            Method::Direct | Method::Gridrec => Ok(false),
            Method::Auto => Ok(self.size >= LOGPOLAR_FROM && logpolar::unsuitable(self).is_none()),
            Method::LogPolar => match logpolar::unsuitable(self) {
                None => Ok(true),
                Some(why) => Err(Error::Invalid(format!("the log-polar method does not apply: {why}"))),
            },
        }
    }

    /// The geometry FBP back-projects in and the shift its filter applies: with the centre off
    /// the detector's middle (by up to a quarter of the detector) where the log-polar method
    /// would otherwise apply, the projections shifted to the middle; else this geometry.
    pub fn fbp_geometry(&self) -> (Geometry, f64) {
        let middle = (self.detectors as f64 - 1.0) / 2.0;
        let centred = Geometry { center: middle, ..self.clone() };
        let shift = self.center - middle;
        if shift != 0.0 && self.method != Method::Direct && shift.abs() <= self.detectors as f64 / 4.0 && centred.uses_logpolar().unwrap_or(false) {
            (centred, shift)
        } else {
            (self.clone(), 0.0)
        }
    }

    fn setup(&self, rec: &mut Recording) -> Result<Setup> {
        let rays = rec.upload_once_f32(&self.rays().view())?;
        Ok(Setup { size: self.size, detectors: self.detectors, center: self.center, rays })
    }
}

/// FBP's zero-padded projection length for `detectors` bins: a power of two, at least twice
/// the count (and 64), so the filter's circular convolution does not wrap.
pub fn padded_length(detectors: usize) -> usize {
    (2 * detectors).next_power_of_two().max(64)
}

/// FBP's filters (scikit-image's `filter_name`): the ramp, and the ramp times a window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Filter {
    #[default]
    Ramp,
    SheppLogan,
    Cosine,
    Hamming,
    Hann,
}

impl Filter {
    pub const NAMES: [&'static str; 5] = ["ramp", "shepp-logan", "cosine", "hamming", "hann"];

    pub fn parse(name: &str) -> Result<Filter> {
        match name {
            "ramp" => Ok(Filter::Ramp),
            "shepp-logan" => Ok(Filter::SheppLogan),
            "cosine" => Ok(Filter::Cosine),
            "hamming" => Ok(Filter::Hamming),
            "hann" => Ok(Filter::Hann),
            other => Err(Error::Invalid(format!("filter '{other}' (one of {})", Filter::NAMES.join(", ")))),
        }
    }
}

/// `x` seen with a leading batch axis: (N, N) → (1, N, N); (S, N, N) as it is.
fn batched(rec: &mut Recording, x: Buf, what: &str) -> Result<Buf> {
    let dims = rec.dims(x).to_vec();
    match dims.len() {
        2 => rec.reinterpret(x, &[1, dims[0], dims[1]], rec.dtype(x)),
        3 => Ok(x),
        _ => Err(Error::Shape(format!("{what} {dims:?}: 2 axes, or 3 for a stack of slices"))),
    }
}

/// The projections of an image (N, N) or a stack of them (S, N, N): (angles, detectors) or
/// (S, angles, detectors).
pub fn record_project(rec: &mut Recording, images: Buf, g: &Geometry) -> Result<Buf> {
    let single = rec.dims(images).len() == 2;
    let x = batched(rec, images, "images")?;
    let y = if g.uses_logpolar()? {
        logpolar::record_project(rec, x, &*logpolar::LogPolar::cached(rec.gpu(), g)?)?
    } else {
        let setup = g.setup(rec)?;
        project::record(rec, x, &setup)?
    };
    unbatched(rec, y, single)
}

/// The back-projection of a sinogram (angles, detectors) or a stack (S, angles, detectors).
pub fn record_backproject(rec: &mut Recording, sinograms: Buf, g: &Geometry) -> Result<Buf> {
    let single = rec.dims(sinograms).len() == 2;
    let x = batched(rec, sinograms, "sinograms")?;
    let y = if g.uses_logpolar()? {
        logpolar::record_backproject(rec, x, &*logpolar::LogPolar::cached(rec.gpu(), g)?)?
    } else {
        let setup = g.setup(rec)?;
        backproject::record(rec, x, &setup)?
    };
    unbatched(rec, y, single)
}

fn unbatched(rec: &mut Recording, y: Buf, single: bool) -> Result<Buf> {
    if !single {
        return Ok(y);
    }
    let dims = rec.dims(y)[1..].to_vec();
    rec.reinterpret(y, &dims, rec.dtype(y))
}

/// Each projection filtered along the detector axis (zero-padded to
/// [`Geometry::padded_detectors`]), as FBP filters it; sinograms of 2 or 3 axes.
pub fn record_filter(rec: &mut Recording, sinograms: Buf, g: &Geometry, filter: Filter) -> Result<Buf> {
    filter_shifted(rec, sinograms, g, filter, 0.0)
}

/// [`record_filter`], each filtered projection then read `shift` bins further on (a phase
/// ramp on its spectrum): bin k holds what was at k + shift.
fn filter_shifted(rec: &mut Recording, sinograms: Buf, g: &Geometry, filter: Filter, shift: f64) -> Result<Buf> {
    filter_lines(rec, sinograms, g.detectors, filter, shift)
}

/// Every line along the last axis (of `detectors` values) filtered as FBP filters a projection,
/// zero-padded to [`padded_length`], then read `shift` bins further on.
pub fn filter_lines(rec: &mut Recording, sinograms: Buf, detectors: usize, filter: Filter, shift: f64) -> Result<Buf> {
    let dims = rec.dims(sinograms).to_vec();
    let last = dims.len() - 1;
    if dims[last] != detectors {
        return Err(Error::Shape(format!("sinograms {dims:?} for {detectors} detectors")));
    }
    let padded = padded_length(detectors);
    let mut pads = vec![(0, 0); dims.len()];
    pads[last] = (0, padded - detectors);
    let x = layout::pad(rec, sinograms, &pads, Boundary::Constant(0.0))?;
    let mut full = dims.clone();
    full[last] = padded;
    let gpu = rec.gpu();
    let spectrum = FftPlan::cached(gpu, &full, &[last], Transform::RealForward, Norm::Backward)?.record(rec, x)?;
    let response = cpu::filter_response(filter, padded);
    let filtered = if shift == 0.0 {
        let response: Vec<f32> = response.iter().map(|&v| v as f32).collect();
        let response = rec.upload_once_f32(&ArrayD::from_shape_vec(IxDyn(&[response.len()]), response).expect("one axis").view())?;
        multiply_lines::record(rec, spectrum, response)?
    } else {
        let turn = 2.0 * std::f64::consts::PI * shift / padded as f64;
        let response: Vec<num_complex::Complex32> = response
            .iter()
            .enumerate()
            .map(|(k, &v)| {
                let (sin, cos) = (turn * k as f64).sin_cos();
                num_complex::Complex32::new((v * cos) as f32, (v * sin) as f32)
            })
            .collect();
        let response = rec.upload_once_c32(&ArrayD::from_shape_vec(IxDyn(&[response.len()]), response).expect("one axis").view())?;
        multiply_lines::record(rec, spectrum, response)?
    };
    let half = rec.dims(filtered).to_vec();
    let back = FftPlan::cached(gpu, &half, &[last], Transform::RealInverse { len: padded }, Norm::Backward)?.record(rec, filtered)?;
    layout::crop(rec, back, &vec![0; dims.len()], &dims)
}

/// Filtered back-projection of a sinogram or a stack: the filtered projections back-projected,
/// times π / (2 angles) (angles equally spaced over [0, π); the filter's response is twice the
/// ramp, as scikit-image's).
///
/// A rotation centre off the detector's middle does not keep FBP from the log-polar method
/// (`Auto` or `LogPolar`): the filter shifts each projection's centre to the middle on the way
/// (by up to a quarter of the detector).
pub fn record_fbp(rec: &mut Recording, sinograms: Buf, g: &Geometry, filter: Filter) -> Result<Buf> {
    if g.method == Method::Gridrec {
        let dims = rec.dims(sinograms).to_vec();
        if dims.len() == 2 {
            let stack = rec.reinterpret(sinograms, &[1, dims[0], dims[1]], crate::gpu::Dtype::F32)?;
            let image = gridrec::record_fbp(rec, stack, g, filter)?;
            return rec.reinterpret(image, &[g.size, g.size], crate::gpu::Dtype::F32);
        }
        return gridrec::record_fbp(rec, sinograms, g, filter);
    }
    let (at, shift) = g.fbp_geometry();
    let filtered = filter_shifted(rec, sinograms, g, filter, shift)?;
    let image = record_backproject(rec, filtered, &at)?;
    unary::record(rec, UnaryOp::Scale((std::f64::consts::PI / (2.0 * g.angles.len() as f64)) as f32), image)
}

/// MLEM's guard against division by zero: f ← f · R#(g / (Rf + ε)) / R#1.
pub const EM_EPSILON: f32 = 1e-6;

/// What [`record_mlem`] leaves: the estimate, per iteration Σ Rf and Σ g ln(g / (Rf + ε)) of
/// the iterate before its update (one element each), from which [`kl_divergence`] follows, and
/// the normalisation R#1 (to go on from the estimate with [`record_mlem_from`]).
pub struct Mlem {
    pub estimate: Buf,
    pub sums: Vec<(Buf, Buf)>,
    pub norm: Buf,
}

/// `iterations` of MLEM from a constant 1 on a sinogram or a stack (counts ≥ 0, unchecked
/// here): f ← f · R#(g / (Rf + ε)) / R#1, every step on the device (pixels no ray reaches stay
/// 0 after the first update).
pub fn record_mlem(rec: &mut Recording, sinograms: Buf, g: &Geometry, iterations: usize) -> Result<Mlem> {
    record_mlem_from(rec, sinograms, None, g, iterations)
}

/// [`record_mlem`] from `start`: an earlier run's estimate and its [`Mlem::norm`] (None: a
/// constant 1, the normalisation computed here), so that a long run can go on in several
/// recordings.
pub fn record_mlem_from(rec: &mut Recording, sinograms: Buf, start: Option<(Buf, Buf)>, g: &Geometry, iterations: usize) -> Result<Mlem> {
    let dims = rec.dims(sinograms).to_vec();
    let mut image_dims = dims[..dims.len() - 2].to_vec();
    image_dims.extend([g.size, g.size]);
    let (mut f, norm) = match start {
        Some(start) => start,
        None => {
            let ones = rec.temp(&dims, crate::gpu::Dtype::F32)?;
            crate::kernels::fill::record(rec, ones, 1.0);
            let norm = record_backproject(rec, ones, g)?;
            let norm = unary::record(rec, UnaryOp::MaxScalar(f32::MIN_POSITIVE), norm)?;
            let f = rec.temp(&image_dims, crate::gpu::Dtype::F32)?;
            crate::kernels::fill::record(rec, f, 1.0);
            (f, norm)
        }
    };
    let mut sums = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        // (The log-polar projections of a non-negative image may dip below 0 by a little:
        // the ratio takes them as 0.)
        let q = record_project(rec, f, g)?;
        let (ratio, terms) = em_ratio::record(rec, sinograms, q, EM_EPSILON)?;
        sums.push((sum_all(rec, q)?, sum_all(rec, terms)?));
        let back = record_backproject(rec, ratio, g)?;
        f = em_update::record(rec, f, back, norm)?;
    }
    Ok(Mlem { estimate: f, sums, norm })
}

fn sum_all(rec: &mut Recording, x: Buf) -> Result<Buf> {
    let n = rec.shape(x).len();
    let flat = rec.reinterpret(x, &[n], crate::gpu::Dtype::F32)?;
    reduce::record(rec, flat, Reduction::Sum, None)
}

/// The KL divergence Σ (Rf − g) + Σ g ln(g / (Rf + ε)) from [`Mlem`]'s sums and Σ g.
pub fn kl_divergence(sum_projections: f64, sum_log_terms: f64, sum_counts: f64) -> f64 {
    sum_projections - sum_counts + sum_log_terms
}

/// The entropy (bits) of the histogram of `values` over `range` in 64 bins (values outside it
/// fall into the end bins): low for a sharp, piecewise-constant reconstruction.
pub fn histogram_entropy(values: impl Iterator<Item = f64>, range: (f64, f64)) -> f64 {
    let mut bins = [0u64; 64];
    let width = (range.1 - range.0).max(f64::MIN_POSITIVE);
    let mut total = 0u64;
    for v in values {
        let b = (((v - range.0) / width) * 64.0).floor().clamp(0.0, 63.0) as usize;
        bins[b] += 1;
        total += 1;
    }
    bins.iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / total.max(1) as f64;
            -p * p.log2()
        })
        .sum()
}

/// Refuses sinograms that have no centre to find: fewer than 3 detectors, one angle repeated,
/// or no variation at all (the search would return its window's edge).
pub fn check_center_search(sinogram: &ndarray::ArrayView2<f32>, g: &Geometry) -> Result<()> {
    if g.detectors < 3 {
        return Err(Error::Invalid(format!("{} detector(s): a centre search needs 3 or more", g.detectors)));
    }
    let spread = g.angles.iter().fold(f64::MAX, |m, &a| m.min(a)) - g.angles.iter().fold(f64::MIN, |m, &a| m.max(a));
    if spread.abs() < 1e-9 {
        return Err(Error::Invalid("every projection has the same angle: a centre search needs angles spread over [0, π)".into()));
    }
    let (lo, hi) = sinogram.iter().fold((f32::MAX, f32::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    if hi <= lo {
        return Err(Error::Invalid(format!("the sinogram is constant ({lo}): there is no centre to find")));
    }
    Ok(())
}

/// Centres [`find_center`] reconstructs at once.
const CENTRES_AT_ONCE: usize = 8;

/// The rotation centre of a sinogram (angles over [0, π)), as TomoPy's `find_center`: the one
/// whose FBP reconstruction's histogram (inside the inscribed circle) has the least entropy,
/// searched in steps of ½ within `radius` of the detector's middle, then in steps of 0.05
/// around the best; `reconstruct(center)` reconstructs with that centre.
pub fn find_center(g: &Geometry, radius: f64, reconstruct: impl FnMut(&[f64]) -> Result<Vec<ndarray::ArrayD<f32>>>) -> Result<(f64, Vec<(f64, f64)>)> {
    search_center(g.detectors, g.size, radius, reconstruct)
}

/// [`find_center`]'s search for `detectors` bins and reconstructions of `size`² (any
/// geometry's: fan and cone beam search their detector's offset this way).
pub fn search_center(
    detectors: usize,
    size: usize,
    radius: f64,
    mut reconstruct: impl FnMut(&[f64]) -> Result<Vec<ndarray::ArrayD<f32>>>,
) -> Result<(f64, Vec<(f64, f64)>)> {
    let middle = (detectors as f64 - 1.0) / 2.0;
    if !(radius.is_finite() && radius > 0.0) {
        return Err(Error::Invalid(format!("the centre's search radius {radius} (more than 0)")));
    }
    // Centres off the detector reconstruct nothing: the search stays on it, which also bounds
    // the count of centres by the input's size.
    let radius = radius.min(middle.max(0.5));
    // The images scored at once (one batch of centres), each size² floats.
    crate::host::check_host_array("the centre search's reconstructions", &[CENTRES_AT_ONCE, size, size], 4)?;
    let mid = (size as f64 - 1.0) / 2.0;
    let inside = |i: usize| {
        let (r, c) = (i / size, i % size);
        (r as f64 - mid).powi(2) + (c as f64 - mid).powi(2) < (size as f64 / 2.0 - 1.0).powi(2)
    };
    let first = reconstruct(&[middle])?.remove(0);
    let values: Vec<f64> = first.iter().enumerate().filter(|(i, _)| inside(*i)).map(|(_, &v)| v as f64).collect();
    let range = values.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let mut scores = Vec::new();
    let mut search = |centres: Vec<f64>| -> Result<f64> {
        // A batch of centres at a time, each image scored and dropped: memory stays bounded.
        let mut tried = Vec::with_capacity(centres.len());
        for batch in centres.chunks(CENTRES_AT_ONCE) {
            let images = reconstruct(batch)?;
            let score = |image: &ndarray::ArrayD<f32>| histogram_entropy(image.iter().enumerate().filter(|(i, _)| inside(*i)).map(|(_, &v)| v as f64), range);
            tried.extend(batch.iter().zip(&images).map(|(&c, image)| (c, score(image))));
        }
        let best = tried.iter().min_by(|a, b| a.1.total_cmp(&b.1)).map_or(middle, |s| s.0);
        scores.extend(tried);
        Ok(best)
    };
    let steps = (radius / 0.5).floor() as i64;
    let coarse = search((-steps..=steps).map(|k| middle + 0.5 * k as f64).collect())?;
    let best = search((-10..=10).map(|k| coarse + 0.05 * k as f64).collect())?;
    Ok((best, scores))
}
