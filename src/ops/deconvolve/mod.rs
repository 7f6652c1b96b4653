//! Richardson-Lucy deconvolution of 2D and 3D images (1D too), optionally a batch of them, with
//! scikit-image's update:
//!
//! ```text
//! estimate *= mirror(psf) ⊛ (image / (psf ⊛ estimate + eps))
//! ```
//!
//! Conventions, all shared by the GPU path ([`RichardsonLucy`]) and the f64 reference ([`cpu`]):
//! - `psf ⊛ x` is scipy.signal.convolve(x, psf, mode='same'): PSF element `(m - 1) / 2` (integer
//!   division) of each axis sits on the output element. With [`RlBoundary::Zero`] (the default) the
//!   estimate is zero outside the image, as in scipy; with [`RlBoundary::Periodic`] the convolution
//!   is circular over the image's own size.
//! - `mirror(psf) ⊛` is applied as the exact adjoint of `psf ⊛` (the conjugate of the OTF). For
//!   odd PSF sizes that is scikit-image's mirrored convolution; for an even size scikit-image's
//!   mirrored 'same' convolution is the adjoint shifted by one sample, which is not the EM update,
//!   so lucent keeps the adjoint.
//! - The ratio is `image / (blurred + eps)` with skimage's `eps` = 1e-12, and 0 where `blurred +
//!   eps < filter_epsilon` when that is given. Unlike skimage there is no final clip to [-1, 1]
//!   (that assumes images scaled to [0, 1]), and the PSF is normalised to sum 1 unless asked not
//!   to, and the first estimate is the observed image unless a constant is asked for (skimage: 0.5).
//! - A PSF with fewer axes than the image is applied to each slice along the leading (batch) axis.
//! - [`RlBoundary::Extended`] is Bertero & Boccacci's (2005) method against boundary artefacts: the
//!   object is reconstructed on the image extended by the PSF's reach on each side, the data
//!   exist only on the image (mask M), and the update is
//!   `x *= Hᵀ(M · image / (H x + eps)) / max(Hᵀ M, floor)`, the result cropped to the image
//!   (see [`WEIGHT_FLOOR`]).
//!
//! Both paths work on the padded arrays of [`Geometry`]: the image and the estimate are stored
//! in an array of fast FFT lengths (at its corner, or with [`RlBoundary::Extended`] at
//! [`Geometry::offset`] inside the estimate's larger [`Geometry::support`]), zero elsewhere, and
//! the PSF is wrapped around the origin of one of the same shape, so that a circular convolution
//! there equals the linear one on the image (for [`RlBoundary::Periodic`] the padded shape is the
//! image's own).

pub mod blind;
pub mod cpu;
mod gpu;
pub mod slabs;
pub mod tiles;
pub mod unsupervised;
pub mod wiener;

pub use crate::kernels::rl_predict::acceleration;

pub use gpu::RichardsonLucy;
use tiles::{PsfGrid, TileOptions, TiledReport};

use ndarray::{ArrayD, ArrayViewD, Dimension, IxDyn};
use rustfft::num_traits::Zero;
use serde::Serialize;

use crate::check::check_finite;
use crate::error::{Error, Result};
use crate::fft::plan::smooth_at_least;
use crate::gpu::Shape;
use crate::kernels::rl_ratio::Ratio;
use crate::placement::{Form, GiveWay, Ladder, Placement};
use crate::Gpu;

/// What the convolution assumes outside the image.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum RlBoundary {
    /// Zero outside the image: linear convolution (scipy's 'same'), computed on arrays padded by
    /// half the PSF to fast FFT lengths.
    #[default]
    Zero,
    /// The image repeats: circular convolution over the image's own shape (any length).
    Periodic,
    /// Bertero-Boccacci (A&A 437, 2005): the object extends past the image by the PSF's reach
    /// (`m/2` before and `(m-1)/2` after each spatial axis), so light that came from outside the
    /// field of view is explained by an object there instead of by artefacts at the border. The
    /// update divides by the weights w = Hᵀ M (how much of each object element's light reaches
    /// the image), clamped to at least [`WEIGHT_FLOOR`] × the PSF's sum; the estimate is cropped
    /// to the image at the end. The first estimate outside the image repeats its nearest edge
    /// element (a constant first estimate fills the whole extended domain).
    Extended,
}

/// With [`RlBoundary::Extended`], the weights w = Hᵀ M are clamped to at least this fraction of
/// the PSF's sum (w's maximum) before the update divides by them. Elements near the extended
/// domain's outer edge send almost none of their light into the image (w → 0 at its corners, for
/// a Gaussian PSF 1e-10 and below): the data cannot determine them, and dividing by their tiny,
/// w would amplify noise (and their updates would move by large steps). Where w is below the
/// floor the update factor is about w / floor times the usual ratio, below 1, so those elements
/// decay towards 0: in effect Bertero-Boccacci's "set to 0 where w is small", but continuous in
/// w (no element flips between two rules on a rounding). Such elements carry less than 0.1% of
/// their value into the data, so dropping them costs the image domain little.
pub const WEIGHT_FLOOR: f64 = 1e-3;

/// The first estimate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Init {
    /// The observed image.
    #[default]
    Observed,
    /// A constant (scikit-image starts from 0.5); it must be finite and positive.
    Constant(f32),
}

/// Stop when the estimate's relative change ‖xₖ − xₖ₋₁‖ / ‖xₖ‖ falls below `tolerance`, checked
/// every `every` iterations (each check costs one small download).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct StopRule {
    pub tolerance: f64,
    pub every: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RlOptions {
    pub boundary: RlBoundary,
    pub init: Init,
    /// Divide the PSF by its sum (in f64) before use.
    pub normalize_psf: bool,
    /// Added to the blurred estimate before dividing (scikit-image: 1e-12).
    pub eps: f32,
    /// Where the blurred estimate (plus `eps`) is below this, the ratio is 0 (skimage's
    /// `filter_epsilon`).
    pub filter_epsilon: Option<f32>,
    pub stop: Option<StopRule>,
    /// λ of Richardson-Lucy-TV (Dey et al. 2006): each update is divided by
    /// 1 − λ div(∇x/|∇x|) (zero-flux differences at the image's edges, per slice of a batch).
    /// 0 ≤ λ < 1/(2 × spatial axes) keeps that positive; 0.001 to 0.01 is typical.
    pub tv: Option<f32>,
    /// Biggs-Andrews acceleration (Biggs & Andrews 1997, as DeconvolutionLab2): each update
    /// starts from the prediction yₖ = max(xₖ + αₖ (xₖ − xₖ₋₁), 0) instead of xₖ; see
    /// [`acceleration`].
    pub accelerate: bool,
    /// Clip negative observed values to 0 (camera offsets, background subtraction). Otherwise an
    /// image with negative values is refused (Richardson-Lucy assumes non-negative data), unless
    /// `allow_negative`.
    pub clip_negative: bool,
    /// Take negative observed values as they are, as scikit-image does (its `richardson_lucy`
    /// runs on noisy data that dips below 0): the Python drop-in's default.
    pub allow_negative: bool,
}

impl Default for RlOptions {
    fn default() -> Self {
        RlOptions {
            boundary: RlBoundary::Zero,
            init: Init::Observed,
            normalize_psf: true,
            eps: 1e-12,
            filter_epsilon: None,
            stop: None,
            tv: None,
            accelerate: false,
            clip_negative: false,
            allow_negative: false,
        }
    }
}

impl RlOptions {
    pub(crate) fn ratio(&self) -> Ratio {
        Ratio { eps: self.eps, filter_eps: self.filter_epsilon }
    }
}

/// Where the working arrays come from: the image's shape, the PSF's, and the padded shape every
/// array of the iteration has.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Geometry {
    /// The image's shape, a leading batch axis included.
    pub image: Vec<usize>,
    /// The PSF's shape (the spatial axes: the image's last ones).
    pub psf: Vec<usize>,
    /// The shape of the estimate, the observed image and the PSF in the iteration (the batch
    /// axis unchanged).
    pub padded: Vec<usize>,
    /// Per spatial axis, the PSF element on the output element: `(m - 1) / 2`, as scipy's 'same'.
    pub centre: Vec<usize>,
    /// Where the image's first element sits in the padded arrays, per axis: 0, or with
    /// [`RlBoundary::Extended`] `m/2` along each spatial axis.
    pub offset: Vec<usize>,
    /// The estimate's domain, at the corner of the padded arrays: the image's shape, or with
    /// [`RlBoundary::Extended`] `n + m - 1` along each spatial axis. The estimate is zero beyond it.
    pub support: Vec<usize>,
}

impl Geometry {
    pub fn new(image: &[usize], psf: &[usize], boundary: RlBoundary) -> Result<Geometry> {
        Shape::new(image)?;
        Shape::new(psf)?;
        if psf.len() > 3 || !(image.len() == psf.len() || image.len() == psf.len() + 1) {
            return Err(Error::Shape(format!(
                "a PSF of shape {psf:?} does not fit an image of shape {image:?}: the PSF has 1 to 3 axes, the image as many or one more (a leading batch axis)"
            )));
        }
        let batch = image.len() - psf.len();
        for (d, (&m, &n)) in psf.iter().zip(&image[batch..]).enumerate() {
            if m > n {
                return Err(Error::Invalid(format!("the PSF (shape {psf:?}) is larger than the image (shape {image:?}) along axis {}: {m} > {n}", d + batch)));
            }
        }
        let (mut padded, mut offset, mut support) = (image.to_vec(), vec![0; image.len()], image.to_vec());
        for (d, &m) in psf.iter().enumerate() {
            let last = d + 1 == psf.len();
            padded[batch + d] = padded_len(image[batch + d], m, boundary, last);
            if boundary == RlBoundary::Extended {
                offset[batch + d] = m / 2;
                support[batch + d] = image[batch + d] + m - 1;
            }
        }
        let centre = psf.iter().map(|&m| (m - 1) / 2).collect();
        Ok(Geometry { image: image.to_vec(), psf: psf.to_vec(), padded, centre, offset, support })
    }

    /// The axes the PSF acts along (the FFT axes).
    pub fn spatial_axes(&self) -> Vec<usize> {
        (self.batch_axes()..self.image.len()).collect()
    }

    /// 1 with a leading batch axis, else 0.
    pub fn batch_axes(&self) -> usize {
        self.image.len() - self.psf.len()
    }

    pub fn is_padded(&self) -> bool {
        self.padded != self.image
    }

    pub fn is_extended(&self) -> bool {
        self.support != self.image
    }

    /// The image placed at [`Geometry::offset`] in a zero array of the padded shape.
    pub fn pad<T: Clone + Zero>(&self, x: &ArrayViewD<T>) -> ArrayD<T> {
        let mut out = ArrayD::from_elem(IxDyn(&self.padded), T::zero());
        self.window_mut(&mut out).assign(x);
        out
    }

    /// The image's window of a padded array.
    pub fn crop<T: Clone>(&self, x: &ArrayD<T>) -> ArrayD<T> {
        x.slice_each_axis(|ax| {
            let (start, n) = (self.offset[ax.axis.index()], self.image[ax.axis.index()]);
            (start..start + n).into()
        })
        .to_owned()
    }

    fn window_mut<'a, T>(&self, x: &'a mut ArrayD<T>) -> ndarray::ArrayViewMutD<'a, T> {
        x.slice_each_axis_mut(|ax| {
            let (start, n) = (self.offset[ax.axis.index()], self.image[ax.axis.index()]);
            (start..start + n).into()
        })
    }

    /// Bertero-Boccacci's 1 / max(w, floor) on the padded shape, w = Hᵀ M the weights of
    /// [`RlBoundary::Extended`] (M: 1 on the image's window) and floor = [`WEIGHT_FLOOR`] × the
    /// PSF's sum; 1/floor beyond the support, where w is 0 and the estimate too. M is a box, so
    /// w at element j is the sum of the PSF taps t whose image element j - c + t lies inside
    /// the image: a box of taps, summed exactly in f64 from the PSF's summed-area table (an f32
    /// transform of M would leave errors of ~5e-7, relative errors of 5e-4 where w is near the
    /// floor, which total-variation steps amplify).
    pub fn inverse_weights(&self, psf: &ArrayViewD<f64>) -> ArrayD<f64> {
        self.inverse_weights_rows(psf, 0..self.padded[0])
    }

    /// The rows `rows` (along axis 0) of [`Geometry::inverse_weights`].
    pub fn inverse_weights_rows(&self, psf: &ArrayViewD<f64>, rows: std::ops::Range<usize>) -> ArrayD<f64> {
        let batch = self.batch_axes();
        let table = summed_area(psf);
        let floor = WEIGHT_FLOOR * psf.sum();
        // Per spatial axis and padded coordinate j: the taps [lo, hi) that land on the image.
        let ranges: Vec<Vec<(usize, usize)>> = (0..self.psf.len())
            .map(|d| {
                let (n, m, c, s) = (self.image[batch + d] as isize, self.psf[d] as isize, self.centre[d] as isize, self.offset[batch + d] as isize);
                (0..self.padded[batch + d] as isize).map(|j| ((s + c - j).clamp(0, m) as usize, (s + n + c - j).clamp(0, m) as usize)).collect()
            })
            .collect();
        let mut spatial_dims = self.padded[batch..].to_vec();
        // Without a batch axis, axis 0 is the first spatial one: only `rows` of it.
        let first = if batch == 0 {
            spatial_dims[0] = rows.len();
            rows.start
        } else {
            0
        };
        let spatial = ArrayD::from_shape_fn(IxDyn(&spatial_dims), |mut j| {
            j[0] += first;
            let boxes: Vec<(usize, usize)> = (0..ranges.len()).map(|d| ranges[d][j[d]]).collect();
            if boxes.iter().any(|&(lo, hi)| lo >= hi) || (0..ranges.len()).any(|d| j[d] >= self.support[batch + d]) {
                return 1.0 / floor;
            }
            1.0 / box_sum(&table, &boxes).max(floor)
        });
        let mut dims = self.padded.clone();
        dims[0] = rows.len();
        spatial.broadcast(IxDyn(&dims)).expect("the spatial axes are the last ones").to_owned()
    }

    /// The first estimate from an image-shaped one: placed as [`Geometry::pad`] places it, and
    /// over the rest of the support the nearest image element (scipy's 'nearest' padding).
    pub fn first_estimate(&self, x: &ArrayViewD<f64>) -> ArrayD<f64> {
        ArrayD::from_shape_fn(IxDyn(&self.padded), |i| {
            let mut at = vec![0; i.ndim()];
            for d in 0..i.ndim() {
                if i[d] >= self.support[d] {
                    return 0.0;
                }
                at[d] = i[d].saturating_sub(self.offset[d]).min(self.image[d] - 1);
            }
            x[IxDyn(&at)]
        })
    }

    /// The PSF (already normalised as wanted) wrapped around the origin of a zero array of the
    /// padded shape: element `j` goes to `(j - centre) mod padded`, repeated along a batch axis.
    pub fn wrap_psf(&self, psf: &ArrayViewD<f64>) -> ArrayD<f64> {
        let batch = self.batch_axes();
        let mut out = ArrayD::zeros(IxDyn(&self.padded));
        for (idx, &v) in psf.indexed_iter() {
            let mut at: Vec<usize> = vec![0; self.padded.len()];
            for d in 0..self.psf.len() {
                let n = self.padded[batch + d] as isize;
                at[batch + d] = (idx[d] as isize - self.centre[d] as isize).rem_euclid(n) as usize;
            }
            for b in 0..if batch == 1 { self.image[0] } else { 1 } {
                if batch == 1 {
                    at[0] = b;
                }
                out[IxDyn(&at)] = v;
            }
        }
        out
    }
}

/// `t[a] = Σ x[b]` over `b < a` along every axis, one longer than `x` on each.
fn summed_area(x: &ArrayViewD<f64>) -> ArrayD<f64> {
    let mut t = ArrayD::zeros(IxDyn(&x.shape().iter().map(|&m| m + 1).collect::<Vec<_>>()));
    t.slice_each_axis_mut(|_| (1..).into()).assign(x);
    for axis in 0..x.ndim() {
        t.accumulate_axis_inplace(ndarray::Axis(axis), |&prev, cur| *cur += prev);
    }
    t
}

/// Σ x over the box `[lo, hi)` per axis from `x`'s summed-area table, by inclusion-exclusion.
fn box_sum(table: &ArrayD<f64>, boxes: &[(usize, usize)]) -> f64 {
    let mut sum = 0.0;
    for corner in 0..1usize << boxes.len() {
        let at: Vec<usize> = boxes.iter().enumerate().map(|(d, &(lo, hi))| if corner >> d & 1 == 1 { lo } else { hi }).collect();
        let sign = if corner.count_ones() % 2 == 1 { -1.0 } else { 1.0 };
        sum += sign * table[IxDyn(&at)];
    }
    sum
}

/// The length one axis of the working arrays has. Periodic: the image's own. Zero: at least
/// n + m/2, the least with which the circular products equal the linear ones on the image (the
/// blur reaches `m/2` elements past either edge of the estimate, the adjoint `(m-1)/2` into the
/// ratio's zeros). Extended: at least the support, n + m - 1 (the blur of the support onto the
/// image stays inside it; the adjoint of the image onto the support wraps no tap). Both rounded
/// up to a 2^a 3^b 5^c 7^d length, even on the last axis (where the real FFT takes the fast
/// half-length path).
pub fn padded_len(n: usize, m: usize, boundary: RlBoundary, last_axis: bool) -> usize {
    let least = match boundary {
        RlBoundary::Periodic => return n,
        RlBoundary::Zero => n + m / 2,
        RlBoundary::Extended => n + m - 1,
    };
    if last_axis {
        2 * smooth_at_least(least.div_ceil(2))
    } else {
        smooth_at_least(least)
    }
}

/// Checks everything before any work and returns the geometry. Errors: `Invalid` for 0
/// iterations, a PSF larger than the image, negative or all-zero PSFs and bad options; `Shape`
/// when the PSF's axes do not fit the image's; `NonFinite` for NaN or infinity in either array.
pub fn validate(image: &ArrayViewD<f32>, psf: &ArrayViewD<f32>, iterations: usize, opts: &RlOptions) -> Result<Geometry> {
    check_iterations(iterations)?;
    let geometry = Geometry::new(image.shape(), psf.shape(), opts.boundary)?;
    check_finite(psf, "the PSF")?;
    if opts.clip_negative || opts.allow_negative {
        check_finite(image, "the image")?;
    } else if let Some((idx, v)) = crate::check::first_where(image, |v| !(v >= 0.0 && v.is_finite())) {
        // One pass over the image for both checks; a non-finite value anywhere is the error.
        check_finite(image, "the image")?;
        let min = image.iter().copied().fold(f32::INFINITY, f32::min);
        return Err(negative_image(&format!("holds {v} at index {idx:?} (minimum {min})")));
    }
    check_psf_and_options(psf, opts)?;
    Ok(geometry)
}

/// [`validate`] of an image already on the device (f32): its finiteness and minimum measured
/// there, in one small submission.
pub fn validate_resident(gpu: &Gpu, image: &crate::gpu::GpuArray, psf: &ArrayViewD<f32>, iterations: usize, opts: &RlOptions) -> Result<Geometry> {
    check_iterations(iterations)?;
    image.expect_dtype(crate::gpu::Dtype::F32)?;
    let geometry = Geometry::new(image.dims(), psf.shape(), opts.boundary)?;
    check_finite(psf, "the PSF")?;
    let mut rec = crate::graph::Recording::new(gpu);
    let x = rec.input(image);
    let flag = crate::kernels::count_nonfinite::record(&mut rec, x)?;
    let (flag, min) = (rec.download(flag), crate::ops::reduce::record(&mut rec, x, crate::ops::reduce::Reduction::Min, None)?);
    let min = rec.download(min);
    let results = rec.run()?;
    if results.u32(flag)?.iter().any(|&v| v != 0) {
        return Err(Error::NonFinite("the image holds NaN or an infinity".into()));
    }
    let min = results.f32(min)?.iter().next().copied().unwrap_or(0.0);
    if !opts.clip_negative && !opts.allow_negative && min < 0.0 {
        return Err(negative_image(&format!("has minimum {min}")));
    }
    check_psf_and_options(psf, opts)?;
    Ok(geometry)
}

fn negative_image(what: &str) -> Error {
    Error::Invalid(format!(
        "Richardson-Lucy needs non-negative data; the image {what}. \
         Subtract the offset first, or clip negative values to 0 (RlOptions::clip_negative, --clip-negative)"
    ))
}

fn check_psf_and_options(psf: &ArrayViewD<f32>, opts: &RlOptions) -> Result<()> {
    if let Some((idx, v)) = crate::check::first_where(psf, |v| v < 0.0) {
        return Err(Error::Invalid(format!("the PSF must be non-negative; it holds {v} at index {idx:?}")));
    }
    if psf.iter().map(|&v| v as f64).sum::<f64>() <= 0.0 {
        return Err(Error::Invalid(format!("the PSF (shape {:?}) sums to 0; it needs a positive sum", psf.shape())));
    }
    check_options(opts)?;
    if let Some(lambda) = opts.tv {
        let limit = 1.0 / (2 * psf.ndim()) as f32;
        if !(lambda.is_finite() && (0.0..limit).contains(&lambda)) {
            return Err(Error::Invalid(format!(
                "the TV weight λ must be in [0, {limit}) for {} spatial axes (so that 1 − λ div stays positive), got {lambda}",
                psf.ndim()
            )));
        }
    }
    Ok(())
}

/// Most iterations a run may ask for: far beyond any use (hundreds are typical), short of a
/// request that would run for days.
pub const MAX_ITERATIONS: usize = 100_000;

/// 1 to [`MAX_ITERATIONS`] iterations.
pub fn check_iterations(iterations: usize) -> Result<()> {
    match iterations {
        0 => Err(Error::Invalid("Richardson-Lucy needs at least 1 iteration, got 0".into())),
        n if n > MAX_ITERATIONS => Err(Error::Invalid(format!("{n} iterations is beyond the maximum of {MAX_ITERATIONS}"))),
        _ => Ok(()),
    }
}

/// The observed image as the iteration takes it: negative values clipped to 0 where the options
/// ask for it ([`validate`] refuses them otherwise).
/// Scanned and clipped on every core: one thread's scan of a 256³ image took 14 ms, a third of a
/// 10-iteration run on an H200 (BENCHMARKS.md).
pub(crate) fn observed<'a>(image: &ArrayViewD<'a, f32>, opts: &RlOptions) -> ndarray::CowArray<'a, f32, ndarray::IxDyn> {
    match opts.clip_negative && crate::check::first_where(image, |v| v < 0.0).is_some() {
        true => {
            let mut clipped = image.to_owned();
            clipped.par_mapv_inplace(|v| v.max(0.0));
            clipped.into()
        }
        false => image.clone().into(),
    }
}

fn check_options(opts: &RlOptions) -> Result<()> {
    if let Init::Constant(c) = opts.init {
        if !(c.is_finite() && c > 0.0) {
            return Err(Error::Invalid(format!("the initial estimate must be a finite positive constant, got {c}")));
        }
    }
    if !(opts.eps.is_finite() && opts.eps >= 0.0) {
        return Err(Error::Invalid(format!("eps must be finite and non-negative, got {}", opts.eps)));
    }
    // (A negative one would never apply: the blurred estimate is never below it.)
    if let Some(f) = opts.filter_epsilon.filter(|f| !(f.is_finite() && *f >= 0.0)) {
        return Err(Error::Invalid(format!("filter_epsilon must be finite and non-negative, got {f}")));
    }
    if let Some(s) = opts.stop {
        if !(s.tolerance.is_finite() && s.tolerance > 0.0) || s.every == 0 {
            return Err(Error::Invalid(format!(
                "the stopping rule needs a finite positive tolerance and a check every 1 or more iterations, got {} every {}",
                s.tolerance, s.every
            )));
        }
    }
    Ok(())
}

/// The PSF in f64, divided by its sum when `normalize`.
pub fn prepared_psf(psf: &ArrayViewD<f32>, normalize: bool) -> ArrayD<f64> {
    let p = psf.mapv(|v| v as f64);
    if normalize {
        let sum: f64 = p.sum();
        p.mapv(|v| v / sum)
    } else {
        p
    }
}

/// After an iteration: stage "iterations", how many are done, of how many, and the relative
/// change when this iteration measured it (the one progress type of every long call; tiled runs
/// name the tile in `piece`).
pub use crate::placement::Progress;

/// One measurement of the stopping rule.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Change {
    pub iteration: usize,
    pub relative_change: f64,
}

/// Stage times and memory of a GPU run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RlReport {
    pub device: String,
    pub geometry: Option<Geometry>,
    /// Iterations done (fewer than asked when the stopping rule ended the run).
    pub iterations: usize,
    pub stopped_early: bool,
    pub changes: Vec<Change>,
    /// Validation, uploads, the OTF and compiling the iteration.
    pub setup_ms: f64,
    /// All iterations, host wall time (each iteration is one submission and one wait).
    pub iterate_ms: f64,
    pub ms_per_iteration: f64,
    /// GPU time of one iteration (median), when the adapter has timestamp queries.
    pub gpu_ms_per_iteration: Option<f64>,
    /// Cropping and copying the estimate back.
    pub download_ms: f64,
    /// Device memory the iteration holds: resident arrays, pooled temporaries, parameters
    /// (and the stopping rule's buffers).
    pub peak_bytes: u64,
    /// Device memory the setup (uploads, padding, the OTF) held at its peak.
    pub setup_peak_bytes: u64,
    /// Kernel dispatches per iteration.
    pub dispatches_per_iteration: usize,
    /// Chunks along axis 0 the arrays are held in (1: each array is one buffer).
    pub chunks: usize,
}

pub struct RlResult {
    pub estimate: ArrayD<f32>,
    pub report: RlReport,
}

/// Richardson-Lucy on the GPU, whole: `iterations` updates (fewer if `opts.stop` ends it), the
/// whole iteration resident on the device (`Error::TooLarge` when it does not fit; [`restore`]
/// tiles then). See [`RichardsonLucy`] for progress reporting.
#[cfg(test)]
pub fn richardson_lucy(gpu: &Gpu, image: &ArrayViewD<f32>, psf: &ArrayViewD<f32>, iterations: usize, opts: &RlOptions) -> Result<RlResult> {
    RichardsonLucy::new(gpu, image, psf, iterations, opts)?.run(|_| {})
}

/// How [`restore`] ran, with what it measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "path", rename_all = "lowercase")]
pub enum RlRun {
    /// The whole image resident on the GPU.
    Whole(RlReport),
    /// Tiles with guard bands (a PSF grid, or an image beyond the device's buffers).
    Tiled(TiledReport),
    /// Slabs of rows resident on several GPUs, their halos exchanged each iteration (exact).
    Slabs(slabs::SlabsReport),
}

/// Richardson-Lucy of a host image on `gpus`, deciding how: the whole image resident on the
/// GPU with the largest memory budget (in chunks where it exceeds one buffer) when it fits its memory and there is one
/// PSF, else slabs resident on every GPU with their halos exchanged ([`slabs`]) where the
/// options and sizes allow, else tiles spread over every GPU (each region of a PSF grid
/// deconvolved with its own PSF, tiles sized to the devices). `progress` sees iterations done
/// over all tiles. With the result: how the run went, and how it was placed.
pub fn restore(
    gpus: &[Gpu],
    image: &ArrayViewD<f32>,
    psfs: &PsfGrid,
    iterations: usize,
    opts: &RlOptions,
    mut progress: impl FnMut(Progress),
) -> Result<(ArrayD<f32>, RlRun, Placement)> {
    // The whole image goes to the GPU with the most memory (the first of equals).
    let gpu = gpus
        .iter()
        .min_by_key(|g| std::cmp::Reverse(g.memory_budget_bytes()))
        .ok_or_else(|| Error::Invalid("Richardson-Lucy needs at least one GPU".into()))?;
    let mut ladder = Ladder::new();
    if psfs.grid() == [1, 1] {
        let psf = psfs.psf([0, 0]);
        if let Some(rl) = ladder.attempt(Form::Whole, GiveWay::OnMisfit, || RichardsonLucy::new(gpu, image, &psf, iterations, opts))? {
            let r = rl.run(&mut progress)?;
            let chunks = r.report.chunks;
            let placement = ladder.placed(if chunks > 1 { Form::Chunks } else { Form::Whole }, chunks);
            return Ok((r.estimate, RlRun::Whole(r.report), placement));
        }
        // Beyond one GPU: slabs resident on every GPU, exact, where the options allow.
        if let Some(plan) = slabs::plan(gpus, &Geometry::new(image.shape(), psf.shape(), opts.boundary)?, opts) {
            let run = || slabs::richardson_lucy_slabs(gpus, image, &psf, iterations, opts, &mut progress);
            if let Some((estimate, report)) = ladder.attempt(Form::Slabs, GiveWay::OnMisfit, run)? {
                return Ok((estimate, RlRun::Slabs(report), ladder.placed(Form::Slabs, plan.len())));
            }
        } else if gpus.len() > 1 {
            ladder
                .rule_out(Form::Slabs, "exact slabs need the zero boundary, no acceleration or stopping rule, no batch axis, slabs at least a halo thick, and GPUs whose budgets hold them");
        }
    } else {
        ladder.rule_out(Form::Whole, "a PSF grid is deconvolved region by region, in tiles");
    }
    let r = tiles::richardson_lucy_tiled(gpus, image, psfs, iterations, opts, &TileOptions::default(), progress)?;
    let placement = ladder.placed(Form::Tiles, r.report.tiles);
    Ok((r.estimate, RlRun::Tiled(r.report), placement))
}
