//! scipy.ndimage's spatial filters of f32 arrays (f64 on devices with it) of 1-4 axes: [`correlate`], [`convolve`],
//! [`correlate1d`], [`convolve1d`], [`gaussian_filter`] (truncate = 4) and [`uniform_filter`],
//! output shaped like the input, outside values from a [`Boundary`], each output's window summed
//! directly (`ops::convolve::window`: `kernels::correlate_tiled` or `kernels::correlate_window`).
//! Gaussian and uniform kernels longer than their axis are folded onto it ([`gaussian_weights`],
//! [`uniform_weights`]); arrays beyond one buffer are filtered in slabs along axis 0
//! ([`slabs`]). Also **normalised convolution** (Knutsson and Westin):
//! [`normalized_convolution`], made of scipy.signal convolutions.
//!
//! [`cpu`] holds the f64 references, written with direct sums over explicitly padded arrays.

pub mod cpu;
pub mod derivatives;
pub mod fourier;
pub mod morphology;
pub mod slabs;

use ndarray::{ArrayD, ArrayViewD, IxDyn};

use super::per_axis;
use crate::check::check_finite;
use crate::error::{Error, Result};
use crate::gpu::{Dtype, Real, Shape};
use crate::graph::{Buf, Recording};
use crate::kernels::binary::{self, BinaryOp};
use crate::kernels::boundary::Boundary;
use crate::kernels::copy_vec4;
use crate::kernels::unary::{self, UnaryOp};
use crate::ops::convolve::{self, Geometry, KernelSpectrum, Method, Mode};

// ---------------------------------------------------------------------------------------------
// scipy.ndimage: spatial filters

/// scipy.ndimage.correlate(x, kernel, mode, cval, origin=0): `y[i] = Σ_j kernel[j] ·
/// x[i + j - m/2]` per axis (m/2 rounded down, so an even kernel reaches one further back),
/// outside values from `boundary`. The kernel has x's rank and finite values.
pub fn correlate<W: Real>(rec: &mut Recording, x: Buf, kernel: &ArrayViewD<W>, boundary: Boundary) -> Result<Buf> {
    check_filter_kernel(rec, x, kernel)?;
    boundary.check()?;
    let origin: Vec<i64> = kernel.shape().iter().map(|&m| -((m / 2) as i64)).collect();
    let dims = rec.dims(x).to_vec();
    convolve::window(rec, x, kernel, &dims, &origin, boundary)
}

/// scipy.ndimage.convolve(x, kernel, mode, cval, origin=0): `y[i] = Σ_j kernel[j] · x[i - j + m/2]`
/// (a correlation with the reversed kernel, which scipy shifts by one on even axes).
pub fn convolve<W: Real>(rec: &mut Recording, x: Buf, kernel: &ArrayViewD<W>, boundary: Boundary) -> Result<Buf> {
    check_filter_kernel(rec, x, kernel)?;
    boundary.check()?;
    let origin: Vec<i64> = kernel.shape().iter().map(|&m| -(((m - 1) / 2) as i64)).collect();
    let dims = rec.dims(x).to_vec();
    convolve::window(rec, x, &convolve::reverse(kernel).view(), &dims, &origin, boundary)
}

/// scipy.ndimage.correlate1d(x, weights, axis, mode, cval, origin=0).
pub fn correlate1d<W: Real>(rec: &mut Recording, x: Buf, weights: &[W], axis: usize, boundary: Boundary) -> Result<Buf> {
    let kernel = along_axis(rec.dims(x), weights, axis)?;
    correlate(rec, x, &kernel.view(), boundary)
}

/// scipy.ndimage.convolve1d(x, weights, axis, mode, cval, origin=0).
pub fn convolve1d<W: Real>(rec: &mut Recording, x: Buf, weights: &[W], axis: usize, boundary: Boundary) -> Result<Buf> {
    let kernel = along_axis(rec.dims(x), weights, axis)?;
    convolve(rec, x, &kernel.view(), boundary)
}

/// scipy.ndimage.gaussian_filter(x, sigma, mode, cval, truncate=4.0): one correlate1d per axis
/// with [`gaussian_kernel1d`] (folded onto the axis when longer: [`gaussian_weights`]); `sigma`
/// has one value for every axis or one per axis, axes with sigma ≤ 1e-15 are left alone (as
/// scipy does).
pub fn gaussian_filter(rec: &mut Recording, x: Buf, sigma: &[f32], boundary: Boundary) -> Result<Buf> {
    let passes = gaussian_passes(sigma, rec.dims(x), boundary)?;
    separable(rec, x, &passes, boundary)
}

/// The one-axis passes of [`gaussian_filter`] on an array of shape `dims`: (axis, weights) for
/// every axis whose sigma is above 1e-15, the weights folded by [`gaussian_weights`].
pub fn gaussian_passes(sigma: &[f32], dims: &[usize], boundary: Boundary) -> Result<Vec<(usize, Vec<f64>)>> {
    let sigma = per_axis(sigma, dims.len(), "sigma")?;
    if let Some(s) = sigma.iter().find(|s| !s.is_finite() || **s < 0.0) {
        return Err(Error::Invalid(format!("gaussian_filter: sigma must be finite and non-negative, got {s}")));
    }
    boundary.check()?;
    sigma.iter().enumerate().filter(|(_, &s)| s as f64 > 1e-15).map(|(axis, &s)| Ok((axis, gaussian_weights(s as f64, dims[axis], boundary)?))).collect()
}

/// scipy.ndimage.uniform_filter(x, size, mode, cval): the mean over `size` samples per axis
/// (centred as correlate1d centres), one pass per axis; size 1 leaves an axis alone.
pub fn uniform_filter(rec: &mut Recording, x: Buf, size: &[usize], boundary: Boundary) -> Result<Buf> {
    let passes = uniform_passes(size, rec.dims(x), boundary)?;
    separable(rec, x, &passes, boundary)
}

/// The one-axis passes of [`uniform_filter`] on an array of shape `dims`, folded by
/// [`uniform_weights`].
pub fn uniform_passes(size: &[usize], dims: &[usize], boundary: Boundary) -> Result<Vec<(usize, Vec<f64>)>> {
    let size = per_axis(size, dims.len(), "size")?;
    if size.contains(&0) {
        return Err(Error::Invalid(format!("uniform_filter: sizes must be at least 1, got {size:?}")));
    }
    boundary.check()?;
    Ok(size.iter().enumerate().filter(|(_, &n)| n > 1).map(|(axis, &m)| (axis, uniform_weights(m, dims[axis], boundary))).collect())
}

/// A separable filter along one axis, as [`filter_halo`] takes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AxisFilter {
    /// [`gaussian_filter`]'s standard deviation along the axis (truncate = 4).
    Gaussian(f64),
    /// [`uniform_filter`]'s size along the axis.
    Uniform(usize),
}

/// The halo of a chunk of a separable filter along one axis: the samples beyond its own, on each
/// side, that a chunk reads so that its outputs equal the whole array's (the CLI's streamed
/// slabs, lucent.dask's chunks). Gaussian: the kernel's radius ⌊4σ + 0.5⌋, as
/// [`gaussian_kernel1d`] makes it; uniform: half the box plus one (the reach is size/2).
pub fn filter_halo(filter: AxisFilter) -> usize {
    match filter {
        AxisFilter::Gaussian(sigma) => (GAUSSIAN_TRUNCATE * sigma + 0.5) as usize,
        AxisFilter::Uniform(size) => size / 2 + 1,
    }
}

/// One correlate1d per pass, in order (a copy of x when there is none).
pub fn separable(rec: &mut Recording, x: Buf, passes: &[(usize, Vec<f64>)], boundary: Boundary) -> Result<Buf> {
    let mut cur = None;
    for (axis, weights) in passes {
        // f64 weights, sent in x's type.
        cur = Some(correlate1d(rec, cur.unwrap_or(x), weights, *axis, boundary)?);
    }
    cur.map_or_else(|| copy(rec, x), Ok)
}

// ---------------------------------------------------------------------------------------------
// Kernels longer than the axis, folded onto it
//
// A correlate1d tap at offset q (tap j of m: q = j - m/2) reads the input at i + q, i in 0..n.
// Beyond the edges the boundary repeats the input (reflect: period 2n, mirror: 2n - 2, wrap: n)
// or holds it (nearest: x[0] for every q ≤ -n, x[n-1] for every q ≥ n; constant: cval there),
// so every tap's weight can be added to a tap of a kernel of at most 2n + 1 taps that reads the
// same value for every output: the same result, with work and memory bounded by the axis, not
// by sigma or size. The folded kernel is centred as correlate1d centres it (tap t: offset
// t - len/2).

/// The most Gaussian taps summed on the host (sigma up to about 8.4e6): each one is evaluated.
pub const MAX_GAUSSIAN_TAPS: u64 = 1 << 26;

/// Length of the kernel a longer one folds to along an axis of `n` samples.
pub fn folded_len(n: usize, boundary: Boundary) -> usize {
    match boundary {
        Boundary::Reflect => 2 * n,
        Boundary::Mirror => (2 * n).saturating_sub(2).max(1),
        Boundary::Wrap => n,
        Boundary::Constant(_) | Boundary::Nearest => 2 * n + 1,
    }
}

/// The tap of the folded kernel (length [`folded_len`]) that reads what offset `q` reads.
fn fold_slot(q: i128, n: usize, boundary: Boundary) -> usize {
    let len = folded_len(n, boundary) as i128;
    match boundary {
        // Offsets ≤ -n (≥ n) all read cval or x[0] (x[n-1]): the end taps, offsets ∓n.
        Boundary::Constant(_) | Boundary::Nearest => (q.clamp(-(n as i128), n as i128) + n as i128) as usize,
        _ => (q + len / 2).rem_euclid(len) as usize,
    }
}

/// scipy's Gaussian weights ([`gaussian_kernel1d`], truncate = 4) for an axis of `n` samples,
/// folded onto at most [`folded_len`] taps when the kernel is longer (summed in f64 without
/// making the long kernel). A kernel beyond [`MAX_GAUSSIAN_TAPS`] is an error.
pub fn gaussian_weights(sigma: f64, n: usize, boundary: Boundary) -> Result<Vec<f64>> {
    let radius = (GAUSSIAN_TRUNCATE * sigma + 0.5).floor();
    // In f64 first: the radius of a huge sigma overflows any integer.
    // Written so that a NaN radius is refused too.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    if !(2.0 * radius + 1.0 <= MAX_GAUSSIAN_TAPS as f64) {
        return Err(Error::Invalid(format!(
            "gaussian_filter: sigma {sigma} needs a kernel of {:.3e} taps, more than the limit of {MAX_GAUSSIAN_TAPS} (sigma up to about {:.2e})",
            2.0 * radius + 1.0,
            MAX_GAUSSIAN_TAPS as f64 / (2.0 * GAUSSIAN_TRUNCATE)
        )));
    }
    let radius = radius as i64;
    let len = folded_len(n, boundary);
    if 2 * (radius as u64) < len as u64 {
        return Ok(gaussian_kernel1d(sigma, GAUSSIAN_TRUNCATE));
    }
    let mut w = vec![0.0; len];
    let mut sum = 0.0;
    for x in -radius..=radius {
        let phi = (-0.5 / (sigma * sigma) * (x * x) as f64).exp();
        w[fold_slot(x as i128, n, boundary)] += phi;
        sum += phi;
    }
    Ok(w.iter().map(|v| v / sum).collect())
}

/// The uniform filter's weights (`size` taps of 1/size) for an axis of `n` samples, folded onto
/// at most [`folded_len`] taps when longer: each folded tap counts the offsets it takes, in
/// closed form (any size, up to usize::MAX).
pub fn uniform_weights(size: usize, n: usize, boundary: Boundary) -> Vec<f64> {
    let len = folded_len(n, boundary);
    if size <= len {
        return vec![1.0 / size as f64; size];
    }
    let (m, l, n) = (size as i128, len as i128, n as i128);
    let (lo, hi) = (-(m / 2), m - 1 - m / 2);
    let counts: Vec<i128> = match boundary {
        // m > 2n + 1: lo < -n and hi ≥ n, so the end taps take the offsets beyond ±n.
        Boundary::Constant(_) | Boundary::Nearest => (0..l)
            .map(|t| {
                if t == 0 {
                    -n - lo + 1
                } else if t == l - 1 {
                    hi - n + 1
                } else {
                    1
                }
            })
            .collect(),
        // Offsets q ≡ t - l/2 (mod l) in lo..=hi.
        _ => (0..l)
            .map(|t| {
                let c = t - l / 2;
                (hi - c).div_euclid(l) - (lo - 1 - c).div_euclid(l)
            })
            .collect(),
    };
    counts.iter().map(|&c| c as f64 / size as f64).collect()
}

/// scipy.ndimage's default truncation of the Gaussian, in standard deviations.
pub const GAUSSIAN_TRUNCATE: f64 = 4.0;

/// scipy.ndimage's Gaussian weights: radius ⌊truncate·σ + 0.5⌋, exp(-x²/2σ²) normalised to sum 1
/// (in f64, as scipy computes them).
pub fn gaussian_kernel1d(sigma: f64, truncate: f64) -> Vec<f64> {
    let radius = (truncate * sigma + 0.5) as i64;
    let phi: Vec<f64> = (-radius..=radius).map(|x| (-0.5 / (sigma * sigma) * (x * x) as f64).exp()).collect();
    let sum: f64 = phi.iter().sum();
    phi.iter().map(|p| p / sum).collect()
}

// ---------------------------------------------------------------------------------------------
// Normalised convolution

/// Normalised convolution (Knutsson and Westin 1993): `(k ⊛ (c·x)) / (k ⊛ c + eps)`, each ⊛ a
/// scipy.signal convolution in 'same' mode (zero outside the array: no certainty there), so
/// samples of low certainty `c` (0 for missing, 1 for trusted) are filled from their
/// neighbours. With an odd kernel this equals scipy.ndimage.convolve(mode='constant'). The
/// kernel (the applicability) should be non-negative; `eps` ≥ 0 keeps the ratio finite where no
/// certainty reaches.
pub fn normalized_convolution(rec: &mut Recording, x: Buf, certainty: Buf, kernel: &ArrayViewD<f32>, method: Method, eps: f32) -> Result<Buf> {
    rec.expect_same_shape(x, certainty, "normalized convolution: signal and certainty")?;
    if !(eps.is_finite() && eps >= 0.0) {
        return Err(Error::Invalid(format!("normalized convolution: eps must be finite and non-negative, got {eps}")));
    }
    let g = Geometry::new(rec.dims(x), kernel.shape(), Mode::Same)?;
    check_finite(kernel, "normalized convolution kernel")?;
    let weighted = binary::record(rec, BinaryOp::Mul, certainty, x)?;
    let (num, den) = match method.resolve(&g) {
        Method::Direct => (convolve::direct(rec, weighted, kernel, &g, false)?, convolve::direct(rec, certainty, kernel, &g, false)?),
        _ => {
            let spectrum = KernelSpectrum::new(rec.gpu(), kernel, rec.dims(x), Mode::Same)?;
            (spectrum.record(rec, weighted)?, spectrum.record(rec, certainty)?)
        }
    };
    let den = unary::record(rec, UnaryOp::Offset(eps), den)?;
    binary::record(rec, BinaryOp::Div, num, den)
}

// ---------------------------------------------------------------------------------------------
// Helpers

/// A filter kernel: x's rank, not empty, finite; x real (f32, or f64 on devices with it).
fn check_filter_kernel<W: Real>(rec: &Recording, x: Buf, kernel: &ArrayViewD<W>) -> Result<()> {
    if !matches!(rec.dtype(x), Dtype::F32 | Dtype::F64) {
        return Err(Error::Dtype(format!("filter input: expected F32 or F64, got {:?}", rec.dtype(x))));
    }
    check_filter_weights(rec.dims(x), kernel)
}

/// The checks of [`correlate`] and [`convolve`] on their weights, for an input of shape `dims`.
pub fn check_filter_weights<W: Real>(dims: &[usize], kernel: &ArrayViewD<W>) -> Result<()> {
    Shape::new(kernel.shape())?;
    if kernel.ndim() != dims.len() {
        return Err(Error::Shape(format!("filter kernel {:?} must have the rank of the input {dims:?}", kernel.shape())));
    }
    check_finite(kernel, "filter kernel")
}

/// `weights` as a kernel of x's rank lying along `axis`.
pub fn along_axis<W: Clone>(dims: &[usize], weights: &[W], axis: usize) -> Result<ArrayD<W>> {
    if axis >= dims.len() {
        return Err(Error::Invalid(format!("axis {axis} is out of range for an array of shape {dims:?}")));
    }
    if weights.is_empty() {
        return Err(Error::Empty("filter weights are empty".into()));
    }
    let mut kdims = vec![1; dims.len()];
    kdims[axis] = weights.len();
    Ok(ArrayD::from_shape_vec(IxDyn(&kdims), weights.to_vec()).unwrap())
}

/// A copy of `x` (a filter that leaves every axis alone still returns a new array).
fn copy(rec: &mut Recording, x: Buf) -> Result<Buf> {
    let y = rec.temp_like(x, rec.dtype(x))?;
    copy_vec4::record(rec, x, y)?;
    Ok(y)
}
