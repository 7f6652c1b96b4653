//! Filter banks: several real kernels applied to one real image with one forward transform.
//!
//! Kernels are taken in pairs (a, b) and packed into one complex array `k_a + i·k_b`, whose full
//! complex spectrum is `K_a + i·K_b` (the transform is linear). With the image's full spectrum
//! `A`, the inverse transform of `A·(K_a + i·K_b)` is `a⊛k_a + i·(a⊛k_b)`, and both terms are
//! real, so one inverse complex transform yields response a in the real part and response b in
//! the imaginary part. A bank of n kernels costs one complex forward transform of the image and
//! ⌈n/2⌉ products and inverse transforms, where n separate fftconvolves take n real forward and n
//! real inverse transforms (a real transform costs about half a complex one). The packed
//! spectra are made once, in [`FilterBank::new`], and reused by every [`FilterBank::record`].
//!
//! Rounding in the shared transforms is relative to the pair's larger response, so a small
//! response next to a large one would lose accuracy: the second kernel of a pair is scaled by a
//! power of two to about the first one's L2 norm before packing, and its response scaled back
//! (both exact). Responses still differ in magnitude where the kernels' spectra do (a high-pass
//! next to a low-pass kernel on a smooth image); such a response carries an error relative to
//! its partner's (about 1e-7 of it).

use ndarray::{ArrayD, ArrayViewD, IxDyn};
use num_complex::Complex32;

use super::{check_finite, Geometry, Mode};
use crate::error::{Error, Result};
use crate::fft::{FftPlan, Norm, Transform};
use crate::gpu::{Dtype, Gpu, GpuArray};
use crate::graph::{Buf, Recording};
use crate::kernels::binary::{self, BinaryOp};
use crate::kernels::boundary::Boundary;
use crate::kernels::complex_to_real::{self, ComplexToReal};
use crate::kernels::gather::{self, AxisMap};
use crate::kernels::real_to_complex;
use crate::kernels::unary::{self, UnaryOp};
use crate::ops::layout;

/// Kernels of one shape, packed in pairs as complex spectra for images of one shape and a
/// scipy.signal mode (full, same, valid as fftconvolve). Recordings that use it must be on the
/// `Gpu` it was made on.
pub struct FilterBank {
    geometry: Geometry,
    kernels: usize,
    forward: FftPlan,
    inverse: FftPlan,
    /// Spectrum of `k_2i + i·s_i·k_2i+1` zero-padded to the geometry's lengths (the odd one
    /// out alone), and the power of two s_i.
    packed: Vec<(GpuArray, f32)>,
}

impl FilterBank {
    /// Transforms the kernels (at least one, finite, all of one shape and of the images' rank)
    /// for images of shape `image_dims` (runs one submission).
    pub fn new(gpu: &Gpu, kernels: &[ArrayViewD<f32>], image_dims: &[usize], mode: Mode) -> Result<FilterBank> {
        let first = kernels.first().ok_or_else(|| Error::Empty("filter bank: no kernels".into()))?;
        let geometry = Geometry::new(image_dims, first.shape(), mode)?;
        for (i, k) in kernels.iter().enumerate() {
            if k.shape() != first.shape() {
                return Err(Error::Shape(format!("filter bank: kernel {i} has shape {:?}, kernel 0 {:?}", k.shape(), first.shape())));
            }
            check_finite(k, &format!("filter bank kernel {i}"))?;
        }
        let axes: Vec<usize> = (0..geometry.padded.len()).collect();
        let forward = FftPlan::new(gpu, &geometry.padded, &axes, Transform::Forward, Norm::Backward)?;
        let inverse = FftPlan::new(gpu, &geometry.padded, &axes, Transform::Inverse, Norm::Backward)?;
        let mut rec = Recording::new(gpu);
        let mut outputs = Vec::new();
        for pair in kernels.chunks(2) {
            let scale = pair.get(1).map_or(1.0, |b| balance(&pair[0], b));
            let packed = rec.upload_c32(&pack(&pair[0], pair.get(1), scale).view())?;
            let spectrum = padded_spectrum(&mut rec, &forward, &geometry, packed)?;
            outputs.push((rec.output(spectrum), scale));
        }
        let results = rec.run()?;
        let packed = outputs.into_iter().map(|(o, scale)| (results.array(o), scale)).collect();
        Ok(FilterBank { geometry, kernels: kernels.len(), forward, inverse, packed })
    }

    /// Number of kernels (and of responses).
    pub fn len(&self) -> usize {
        self.kernels
    }

    pub fn is_empty(&self) -> bool {
        self.kernels == 0
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// Shape of every response.
    pub fn output_dims(&self) -> &[usize] {
        &self.geometry.out
    }

    /// scipy.signal.fftconvolve(image, kernel_i, mode) for every kernel, in order, from one
    /// forward transform of the f32 image (of the planned shape).
    pub fn record(&self, rec: &mut Recording, image: Buf) -> Result<Vec<Buf>> {
        let mut responses = Vec::with_capacity(self.kernels);
        let kernels = self.kernels;
        self.record_pairs(rec, image, |rec, pair, window, scale| {
            responses.push(complex_to_real::record(rec, ComplexToReal::Re, window)?);
            if 2 * pair + 1 < kernels {
                let im = complex_to_real::record(rec, ComplexToReal::Im, window)?;
                responses.push(if scale == 1.0 { im } else { unary::record(rec, UnaryOp::Scale(1.0 / scale), im)? });
            }
            Ok(())
        })?;
        Ok(responses)
    }

    /// The responses still packed, handed to `consume` pair by pair as they are recorded: for
    /// pair q, the complex array (the output's shape) whose real part is response 2q and whose
    /// imaginary part is response 2q + 1 times the given power of two (a consumer that is done
    /// with a pair when it returns keeps one pair alive at a time).
    pub fn record_pairs(&self, rec: &mut Recording, image: Buf, mut consume: impl FnMut(&mut Recording, usize, Buf, f32) -> Result<()>) -> Result<()> {
        rec.expect_dtype(image, Dtype::F32, "filter bank image")?;
        if rec.dims(image) != self.geometry.image.as_slice() {
            return Err(Error::Shape(format!("filter bank made for images of shape {:?}, given {:?}", self.geometry.image, rec.dims(image))));
        }
        let complex = real_to_complex::record(rec, image)?;
        let spectrum = padded_spectrum(rec, &self.forward, &self.geometry, complex)?;
        let g = &self.geometry;
        let maps: Vec<AxisMap> = (0..g.out.len()).map(|d| AxisMap { len: g.out[d], src_axis: d, origin: g.start[d] as i64, step: 1 }).collect();
        for (pair, (packed, scale)) in self.packed.iter().enumerate() {
            let kernel = rec.input(packed);
            let product = binary::record(rec, BinaryOp::ComplexMul, spectrum, kernel)?;
            let full = self.inverse.record(rec, product)?;
            let window = gather::record(rec, full, &maps, Boundary::Wrap)?;
            consume(rec, pair, window, *scale)?;
        }
        Ok(())
    }
}

/// The power of two nearest ‖a‖/‖b‖ (1 when either is zero): scaling b by it is exact.
fn balance(a: &ArrayViewD<f32>, b: &ArrayViewD<f32>) -> f32 {
    let norm = |k: &ArrayViewD<f32>| k.iter().map(|&v| v as f64 * v as f64).sum::<f64>().sqrt();
    let (na, nb) = (norm(a), norm(b));
    if na == 0.0 || nb == 0.0 {
        return 1.0;
    }
    // Within f32's exponent range with room for the kernel's own values.
    2f32.powi((na / nb).log2().round().clamp(-60.0, 60.0) as i32)
}

/// `a + i·scale·b` (b zero when absent).
fn pack(a: &ArrayViewD<f32>, b: Option<&ArrayViewD<f32>>, scale: f32) -> ArrayD<Complex32> {
    let re: Vec<f32> = a.iter().copied().collect();
    let im: Vec<f32> = b.map_or_else(|| vec![0.0; re.len()], |b| b.iter().map(|&v| v * scale).collect());
    let values = re.into_iter().zip(im).map(|(r, i)| Complex32::new(r, i)).collect();
    ArrayD::from_shape_vec(IxDyn(a.shape()), values).unwrap()
}

/// The full complex spectrum of complex `x` zero-padded (at the end of each axis) to the
/// geometry's lengths.
fn padded_spectrum(rec: &mut Recording, forward: &FftPlan, g: &Geometry, x: Buf) -> Result<Buf> {
    let pads: Vec<(usize, usize)> = rec.dims(x).iter().zip(&g.padded).map(|(&n, &l)| (0, l - n)).collect();
    let padded = if pads.iter().all(|&(_, after)| after == 0) { x } else { layout::pad(rec, x, &pads, Boundary::Constant(0.0))? };
    forward.record(rec, padded)
}
