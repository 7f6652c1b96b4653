//! scipy.signal's linear convolution and correlation of f32 arrays of 1-4 axes:
//! [`fftconvolve`] and [`fftcorrelate`] (two device arrays), [`signal_convolve`] and
//! [`signal_correlate`] (a host kernel, by FFT or by direct sums: [`Method`]), modes full, same
//! and valid ([`Mode`]). The FFT path zero-pads to fast 2^a3^b5^c7^d lengths just long enough
//! that no wrap-around reaches the output ([`Geometry`]), takes real transforms, multiplies (by
//! the conjugate for correlation) and crops. A [`KernelSpectrum`] keeps a kernel's transform on
//! the device, so iterative algorithms (deconvolution) convolve and correlate with it without
//! transforming it again. Beyond one buffer: in chunks ([`chunked`]), in slabs of output rows
//! ([`overlap`]) or split in frequency ([`split`]), chosen by [`host`]; several kernels on one
//! image: [`bank`]. scipy.ndimage's filters, which share the direct window sums
//! ([`window`]), are `ops::filter`.
//!
//! [`cpu`] holds the f64 references, written with direct sums over explicitly padded arrays.

pub mod bank;
pub mod chunked;
pub mod cpu;
mod gpu;
pub mod host;
pub mod overlap;
pub mod split;

pub use gpu::KernelSpectrum;
pub(crate) use gpu::{direct, reverse, window};

#[cfg(test)]
use ndarray::ArrayD;
use ndarray::ArrayViewD;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::fft::plan::smooth_at_least;
use crate::gpu::{Dtype, Shape};
use crate::graph::{Buf, Recording};
#[cfg(test)]
use crate::Gpu;

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
