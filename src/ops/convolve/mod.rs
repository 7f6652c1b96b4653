//! Convolution and correlation of f32 arrays of 1-4 axes, with scipy's semantics.
//!
//! - **Linear convolution** as scipy.signal: [`fftconvolve`] and [`fftcorrelate`] (two device
//!   arrays), [`signal_convolve`] and [`signal_correlate`] (a host kernel, by FFT or by direct
//!   sums: [`Method`]), modes full, same and valid ([`Mode`]). The FFT path zero-pads to fast
//!   2^a3^b5^c7^d lengths just long enough that no wrap-around reaches the output ([`Geometry`]),
//!   takes real transforms, multiplies (by the conjugate for correlation) and crops. A
//!   [`KernelSpectrum`] keeps a kernel's transform on the device, so iterative algorithms
//!   (deconvolution) convolve and correlate with it without transforming it again.
//! - **Spatial filters** as scipy.ndimage: [`correlate`], [`convolve`], [`correlate1d`],
//!   [`convolve1d`], [`gaussian_filter`] (truncate = 4) and [`uniform_filter`], output shaped
//!   like the input, outside values from a [`Boundary`], in one kernel that sums each output's
//!   window directly (`kernels::correlate_window`).
//! - **Normalised convolution** (Knutsson and Westin): [`normalized_convolution`].
//!
//! [`cpu`] holds the f64 references, written with direct sums over explicitly padded arrays.

pub mod bank;
pub mod chunked;
pub mod cpu;
mod gpu;
pub mod host;
pub mod overlap;
pub mod slabs;
pub mod split;

pub use gpu::KernelSpectrum;

use ndarray::{ArrayD, ArrayViewD, IxDyn};
use serde::Serialize;

use crate::error::{Error, Result};
use crate::fft::plan::smooth_at_least;
use crate::gpu::{Dtype, Shape};
use crate::graph::{Buf, Recording};
use crate::kernels::binary::{self, BinaryOp};
use crate::kernels::copy_vec4;
use crate::kernels::unary::{self, UnaryOp};
#[cfg(test)]
use crate::Gpu;

pub use crate::ops::layout::Boundary;

/// scipy.signal's output modes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Every overlap: shape image + kernel - 1.
    #[default]
    Full,
    /// The image's shape, centred on the full result as scipy centres it (start (kernel - 1) / 2).
    Same,
    /// Complete overlaps only: shape |image - kernel| + 1; one array must be at least as large as
    /// the other along every axis.
    Valid,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Full => "full",
            Mode::Same => "same",
            Mode::Valid => "valid",
        }
    }
}

impl std::str::FromStr for Mode {
    type Err = Error;
    fn from_str(s: &str) -> Result<Mode> {
        match s {
            "full" => Ok(Mode::Full),
            "same" => Ok(Mode::Same),
            "valid" => Ok(Mode::Valid),
            other => Err(Error::Invalid(format!("mode must be full, same or valid, not `{other}`"))),
        }
    }
}

/// How [`signal_convolve`] computes: by FFT, by direct sums, or (`Auto`) whichever
/// [`Geometry::prefers_direct`] estimates to be faster. Both give the same result up to rounding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Method {
    #[default]
    Auto,
    Fft,
    Direct,
}

impl Method {
    /// `Fft` or `Direct` for this geometry.
    pub fn resolve(self, g: &Geometry) -> Method {
        match self {
            Method::Auto if g.prefers_direct() => Method::Direct,
            Method::Auto => Method::Fft,
            other => other,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Method::Auto => "auto",
            Method::Fft => "fft",
            Method::Direct => "direct",
        }
    }
}

impl std::str::FromStr for Method {
    type Err = Error;
    fn from_str(s: &str) -> Result<Method> {
        match s {
            "auto" => Ok(Method::Auto),
            "fft" => Ok(Method::Fft),
            "direct" => Ok(Method::Direct),
            other => Err(Error::Invalid(format!("method must be auto, fft or direct, not `{other}`"))),
        }
    }
}

// The cost model of `Method::Auto` ([`Geometry::direct_cost_ns`] against
// [`Geometry::fft_cost_ns`]), fitted to one H200 run of `lucent bench --filter convolve`
// (BENCHMARKS.md, "Convolution and Richardson-Lucy"); `lucent bench --filter filter_direct` and
// `--filter convolve_direct4d` print the measurements and the model's estimates side by side to refit.

/// Direct sums, per output: reading the input and writing the result, the part that does not
/// grow with the kernel, fit to the window kernel on 4096² (measured: BENCHMARKS.md).
pub const DIRECT_PS_PER_OUTPUT: f64 = 8.0;

/// Direct sums, per tap and output, in the one-thread-per-output window kernel, fit on 4096²
/// and 256³ (measured: BENCHMARKS.md).
pub const DIRECT_WINDOW_PS_PER_TAP: f64 = 1.0;

/// Direct sums, per tap and output, in the tiled kernel (`correlate_tiled`). Not yet measured:
/// an estimate of 20 TFLOP/s (a third of the H200's f32 FMA peak: each vec4 of workgroup memory
/// feeds 32 FMAs, so workgroup-memory bandwidth and the weights' zero padding to whole vec4s cap
/// it near half), i.e. 0.1 ps per tap.
pub const DIRECT_TILED_PS_PER_TAP: f64 = 0.1;

/// FFT path (uncached: the kernel is transformed too, as `signal_convolve` does), per padded
/// element and log2 of the padded size, fit with the fixed cost below (measured:
/// BENCHMARKS.md).
pub const FFT_PS_PER_ELEMENT_LOG2: f64 = 3.5;

/// FFT path, fixed cost (a few dozen dispatches, the kernel's transform): 50 µs.
pub const FFT_FIXED_NS: f64 = 50_000.0;

/// The shapes of one linear convolution (or correlation) of an image with a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub image: Vec<usize>,
    pub kernel: Vec<usize>,
    pub mode: Mode,
    /// Output shape.
    pub out: Vec<usize>,
    /// Where the output starts in the full result (of shape image + kernel - 1).
    pub start: Vec<usize>,
    /// FFT lengths: per axis the shortest 2^a3^b5^c7^d length (even on the last axis) at which
    /// the circular convolution equals the linear one on the output window (shorter than the full
    /// length for same and valid).
    pub padded: Vec<usize>,
}

/// Output index j (full index start + j) receives the alias full[start + j ± L]; none exists
/// when L > start + out - 1 and L > full - 1 - start. Both arrays must also fit (a kernel
/// larger than the image in 'same' mode may not).
fn least_len(n: usize, m: usize, start: usize, out: usize) -> usize {
    (start + out).max(n + m - 1 - start).max(n).max(m)
}

impl Geometry {
    /// Checks the shapes (1-4 axes each, none empty, one rank; scipy's rule for valid).
    pub fn new(image: &[usize], kernel: &[usize], mode: Mode) -> Result<Geometry> {
        Shape::new(image)?;
        Shape::new(kernel)?;
        if image.len() != kernel.len() {
            return Err(Error::Shape(format!("image {image:?} and kernel {kernel:?} must have the same number of axes")));
        }
        let image_larger = image.iter().zip(kernel).all(|(i, k)| i >= k);
        let kernel_larger = image.iter().zip(kernel).all(|(i, k)| k >= i);
        if mode == Mode::Valid && !image_larger && !kernel_larger {
            return Err(Error::Shape(format!(
                "for 'valid' mode one of image {image:?} and kernel {kernel:?} must be at least as large as the other in every axis"
            )));
        }
        let (start, out) = image
            .iter()
            .zip(kernel)
            .map(|(&n, &m)| match mode {
                Mode::Full => (0, n + m - 1),
                Mode::Same => ((m - 1) / 2, n),
                Mode::Valid => (n.min(m) - 1, n.max(m) - n.min(m) + 1),
            })
            .unzip();
        Ok(Geometry::window(image, kernel, mode, start, out))
    }

    /// Any window `start .. start + out` of the full result (shapes checked by the caller):
    /// the FFT lengths are the shortest with no alias on it. `mode` only names the run.
    pub fn window(image: &[usize], kernel: &[usize], mode: Mode, start: Vec<usize>, out: Vec<usize>) -> Geometry {
        let last = image.len() - 1;
        let padded = (0..image.len())
            .map(|d| {
                let need = least_len(image[d], kernel[d], start[d], out[d]);
                // Even on the last axis, where the real FFT of an even length takes the half-length
                // complex path (about twice as fast as the odd path, for a few percent more samples).
                if d == last {
                    2 * smooth_at_least(need.div_ceil(2))
                } else {
                    smooth_at_least(need)
                }
            })
            .collect();
        Geometry { image: image.to_vec(), kernel: kernel.to_vec(), mode, out, start, padded }
    }

    /// The shortest circular length along axis `d` with no alias on the output window.
    pub fn least_len(&self, d: usize) -> usize {
        least_len(self.image[d], self.kernel[d], self.start[d], self.out[d])
    }

    /// Kernel elements.
    pub fn taps(&self) -> usize {
        self.kernel.iter().product()
    }

    /// Shape of the half spectrum of a padded array (rfftn layout: the last axis keeps n/2 + 1).
    pub fn spectrum_dims(&self) -> Vec<usize> {
        let mut d = self.padded.clone();
        let last = d.len() - 1;
        d[last] = d[last] / 2 + 1;
        d
    }

    /// Input coordinate, per axis, that output 0 reads with kernel element 0 when the output is
    /// written as a correlation (`Σ_j w[j] · image[origin + o + j]`; the flipped kernel for a
    /// convolution): the start in the full result minus kernel - 1.
    pub fn window_origin(&self) -> Vec<i64> {
        self.start.iter().zip(&self.kernel).map(|(&s, &m)| s as i64 - (m as i64 - 1)).collect()
    }

    /// Estimated time of the direct method: per output a fixed part and one per tap, the tap's
    /// cost that of the kernel `gpu::window` picks (tiled when it pays).
    pub fn direct_cost_ns(&self) -> f64 {
        let per_tap = if crate::kernels::correlate_tiled::pays(&self.kernel) { DIRECT_TILED_PS_PER_TAP } else { DIRECT_WINDOW_PS_PER_TAP };
        let outputs = self.out.iter().map(|&v| v as f64).product::<f64>();
        outputs * (DIRECT_PS_PER_OUTPUT + self.taps() as f64 * per_tap) * 1e-3
    }

    /// Estimated time of the FFT method: n log2 n in the padded size plus a fixed cost.
    pub fn fft_cost_ns(&self) -> f64 {
        let n = self.padded.iter().map(|&v| v as f64).product::<f64>();
        FFT_FIXED_NS + FFT_PS_PER_ELEMENT_LOG2 * n * n.log2().max(1.0) * 1e-3
    }

    /// Whether direct sums are estimated faster than the FFT path (the cost model above).
    pub fn prefers_direct(&self) -> bool {
        self.direct_cost_ns() <= self.fft_cost_ns()
    }
}

pub use crate::check::check_finite;

// ---------------------------------------------------------------------------------------------
// scipy.signal: linear convolution and correlation

/// scipy.signal.fftconvolve(a, k, mode) of two f32 device arrays of one rank. (Their values are
/// only known when the recording runs, so a NaN is not reported: it spreads over the output.)
pub fn fftconvolve(rec: &mut Recording, a: Buf, k: Buf, mode: Mode) -> Result<Buf> {
    let g = Geometry::new(rec.dims(a), rec.dims(k), mode)?;
    gpu::fft_pair(rec, a, k, &g, false)
}

/// scipy.signal.correlate(a, k, mode, method='fft') of two f32 device arrays: fftconvolve with
/// the kernel reversed, computed with the conjugate product on the kernel's own spectrum.
pub fn fftcorrelate(rec: &mut Recording, a: Buf, k: Buf, mode: Mode) -> Result<Buf> {
    let g = Geometry::new(rec.dims(a), rec.dims(k), mode)?;
    gpu::fft_pair(rec, a, k, &g, true)
}

/// scipy.signal.convolve(a, kernel, mode, method) with a host kernel (finite, same rank as `a`).
pub fn signal_convolve(rec: &mut Recording, a: Buf, kernel: &ArrayViewD<f32>, mode: Mode, method: Method) -> Result<Buf> {
    signal(rec, a, kernel, mode, method, false)
}

/// scipy.signal.correlate(a, kernel, mode, method) with a host kernel.
pub fn signal_correlate(rec: &mut Recording, a: Buf, kernel: &ArrayViewD<f32>, mode: Mode, method: Method) -> Result<Buf> {
    signal(rec, a, kernel, mode, method, true)
}

fn signal(rec: &mut Recording, a: Buf, kernel: &ArrayViewD<f32>, mode: Mode, method: Method, correlate: bool) -> Result<Buf> {
    rec.expect_dtype(a, Dtype::F32, "convolution input")?;
    let g = Geometry::new(rec.dims(a), kernel.shape(), mode)?;
    check_finite(kernel, "convolution kernel")?;
    match method.resolve(&g) {
        Method::Direct => gpu::direct(rec, a, kernel, &g, correlate),
        _ => {
            let spectrum = KernelSpectrum::new(rec.gpu(), kernel, rec.dims(a), mode)?;
            if correlate {
                spectrum.record_correlate(rec, a)
            } else {
                spectrum.record(rec, a)
            }
        }
    }
}

/// scipy.signal.fftconvolve on host arrays (both must be finite).
#[cfg(test)]
pub fn convolve_host(gpu: &Gpu, a: &ArrayViewD<f32>, k: &ArrayViewD<f32>, mode: Mode) -> Result<ArrayD<f32>> {
    host_pair(gpu, a, k, mode, false)
}

/// scipy.signal.correlate(method='fft') on host arrays (both must be finite).
#[cfg(test)]
pub fn correlate_host(gpu: &Gpu, a: &ArrayViewD<f32>, k: &ArrayViewD<f32>, mode: Mode) -> Result<ArrayD<f32>> {
    host_pair(gpu, a, k, mode, true)
}

#[cfg(test)]
fn host_pair(gpu: &Gpu, a: &ArrayViewD<f32>, k: &ArrayViewD<f32>, mode: Mode, correlate: bool) -> Result<ArrayD<f32>> {
    let g = Geometry::new(a.shape(), k.shape(), mode)?;
    check_finite(a, "convolution input")?;
    check_finite(k, "convolution kernel")?;
    let mut rec = Recording::new(gpu);
    let (ab, kb) = (rec.upload_f32(a)?, rec.upload_f32(k)?);
    let y = gpu::fft_pair(&mut rec, ab, kb, &g, correlate)?;
    let d = rec.download(y);
    rec.run()?.into_f32(d)
}

// ---------------------------------------------------------------------------------------------
// scipy.ndimage: spatial filters

/// scipy.ndimage.correlate(x, kernel, mode, cval, origin=0): `y[i] = Σ_j kernel[j] ·
/// x[i + j - m/2]` per axis (m/2 rounded down, so an even kernel reaches one further back),
/// outside values from `boundary`. The kernel has x's rank and finite values.
pub fn correlate(rec: &mut Recording, x: Buf, kernel: &ArrayViewD<f32>, boundary: Boundary) -> Result<Buf> {
    check_filter_kernel(rec, x, kernel)?;
    check_boundary(boundary)?;
    let origin: Vec<i64> = kernel.shape().iter().map(|&m| -((m / 2) as i64)).collect();
    let dims = rec.dims(x).to_vec();
    gpu::window(rec, x, kernel, &dims, &origin, boundary)
}

/// scipy.ndimage.convolve(x, kernel, mode, cval, origin=0): `y[i] = Σ_j kernel[j] · x[i - j + m/2]`
/// (a correlation with the reversed kernel, which scipy shifts by one on even axes).
pub fn convolve(rec: &mut Recording, x: Buf, kernel: &ArrayViewD<f32>, boundary: Boundary) -> Result<Buf> {
    check_filter_kernel(rec, x, kernel)?;
    check_boundary(boundary)?;
    let origin: Vec<i64> = kernel.shape().iter().map(|&m| -(((m - 1) / 2) as i64)).collect();
    let dims = rec.dims(x).to_vec();
    gpu::window(rec, x, &gpu::reverse(kernel).view(), &dims, &origin, boundary)
}

/// scipy.ndimage.correlate1d(x, weights, axis, mode, cval, origin=0).
pub fn correlate1d(rec: &mut Recording, x: Buf, weights: &[f32], axis: usize, boundary: Boundary) -> Result<Buf> {
    let kernel = along_axis(rec.dims(x), weights, axis)?;
    correlate(rec, x, &kernel.view(), boundary)
}

/// scipy.ndimage.convolve1d(x, weights, axis, mode, cval, origin=0).
pub fn convolve1d(rec: &mut Recording, x: Buf, weights: &[f32], axis: usize, boundary: Boundary) -> Result<Buf> {
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
    let sigma = super::per_axis(sigma, dims.len(), "sigma")?;
    if let Some(s) = sigma.iter().find(|s| !s.is_finite() || **s < 0.0) {
        return Err(Error::Invalid(format!("gaussian_filter: sigma must be finite and non-negative, got {s}")));
    }
    check_boundary(boundary)?;
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
    let size = super::per_axis(size, dims.len(), "size")?;
    if size.contains(&0) {
        return Err(Error::Invalid(format!("uniform_filter: sizes must be at least 1, got {size:?}")));
    }
    check_boundary(boundary)?;
    Ok(size.iter().enumerate().filter(|(_, &n)| n > 1).map(|(axis, &m)| (axis, uniform_weights(m, dims[axis], boundary))).collect())
}

/// One correlate1d per pass, in order (a copy of x when there is none).
pub fn separable(rec: &mut Recording, x: Buf, passes: &[(usize, Vec<f64>)], boundary: Boundary) -> Result<Buf> {
    let mut cur = None;
    for (axis, weights) in passes {
        let weights: Vec<f32> = weights.iter().map(|&w| w as f32).collect();
        cur = Some(correlate1d(rec, cur.unwrap_or(x), &weights, *axis, boundary)?);
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
        Method::Direct => (gpu::direct(rec, weighted, kernel, &g, false)?, gpu::direct(rec, certainty, kernel, &g, false)?),
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

/// A finite `cval`: a NaN or infinity outside would reach every output its kernel touches
/// (scipy's results differ by mode; lucent refuses it, as it refuses non-finite input).
pub fn check_boundary(boundary: Boundary) -> Result<()> {
    match boundary {
        Boundary::Constant(c) if !c.is_finite() => Err(Error::NonFinite(format!("filter cval: {c} (must be finite)"))),
        _ => Ok(()),
    }
}

/// A filter kernel: x's rank, not empty, finite.
fn check_filter_kernel(rec: &Recording, x: Buf, kernel: &ArrayViewD<f32>) -> Result<()> {
    rec.expect_dtype(x, Dtype::F32, "filter input")?;
    check_filter_weights(rec.dims(x), kernel)
}

/// The checks of [`correlate`] and [`convolve`] on their weights, for an input of shape `dims`.
pub fn check_filter_weights(dims: &[usize], kernel: &ArrayViewD<f32>) -> Result<()> {
    Shape::new(kernel.shape())?;
    if kernel.ndim() != dims.len() {
        return Err(Error::Shape(format!("filter kernel {:?} must have the rank of the input {dims:?}", kernel.shape())));
    }
    check_finite(kernel, "filter kernel")
}

/// `weights` as a kernel of x's rank lying along `axis`.
pub fn along_axis(dims: &[usize], weights: &[f32], axis: usize) -> Result<ArrayD<f32>> {
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
