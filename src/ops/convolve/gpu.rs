//! Recording the convolutions: the FFT path (pad, real forward transform, product, real inverse,
//! crop) and the direct path (one `correlate_window` dispatch).

use std::sync::Arc;

use ndarray::{ArrayD, ArrayViewD, Axis};

use super::{check_finite, Geometry, Mode};
use crate::error::{Error, Result};
use crate::fft::{FftPlan, Fusion, Norm, Product, Transform, Window};
use crate::gpu::{content_hash, Dtype, Gpu, GpuArray, Real};
use crate::graph::{Buf, Recording};
use crate::kernels::boundary::Boundary;
use crate::kernels::{correlate_axis, correlate_tiled, correlate_window};

/// A kernel's spectrum on the device, made once for one image shape and mode: the real FFT of
/// the kernel zero-padded to the geometry's fast lengths, with the transform plans for images of
/// that shape. [`record`](Self::record) convolves an image with the kernel,
/// [`record_correlate`](Self::record_correlate) correlates it (the conjugate product), so an
/// iterative algorithm (Richardson-Lucy: convolve with the PSF, correlate with it) transforms the
/// kernel once. Recordings that use it must be on the `Gpu` it was made on.
pub struct KernelSpectrum {
    geometry: Geometry,
    forward: FftPlan,
    convolve: FftPlan,
    correlate: FftPlan,
    spectrum: GpuArray,
}

impl KernelSpectrum {
    /// Transforms `kernel` (finite, the rank of the images) for images of shape `image_dims`
    /// (runs one submission).
    pub fn new(gpu: &Gpu, kernel: &ArrayViewD<f32>, image_dims: &[usize], mode: Mode) -> Result<KernelSpectrum> {
        KernelSpectrum::for_geometry(gpu, kernel, Geometry::new(image_dims, kernel.shape(), mode)?)
    }

    /// [`KernelSpectrum::new`] for any output window ([`Geometry::window`]).
    pub fn for_geometry(gpu: &Gpu, kernel: &ArrayViewD<f32>, geometry: Geometry) -> Result<KernelSpectrum> {
        if kernel.shape() != geometry.kernel.as_slice() {
            return Err(Error::Shape(format!("kernel {:?} given for a geometry of kernel {:?}", kernel.shape(), geometry.kernel)));
        }
        check_finite(kernel, "convolution kernel")?;
        let forward = forward_plan(gpu, &geometry, &geometry.image, Dtype::F32)?;
        let mut rec = Recording::new(gpu);
        let k = rec.upload_f32(kernel)?;
        let spectrum = forward_plan(gpu, &geometry, &geometry.kernel, Dtype::F32)?.record(&mut rec, k)?;
        let out = rec.output(spectrum);
        let spectrum = rec.run()?.array(out);
        let convolve = inverse_plan(gpu, &geometry, false, Dtype::F32)?;
        let correlate = inverse_plan(gpu, &geometry, true, Dtype::F32)?;
        Ok(KernelSpectrum { geometry, forward, convolve, correlate, spectrum })
    }

    /// The same kernel's spectrum for another image shape or output window at the same FFT
    /// lengths (only the transforms are planned again; the spectrum is shared).
    pub fn for_window(&self, gpu: &Gpu, geometry: Geometry) -> Result<KernelSpectrum> {
        let g = &self.geometry;
        if (&geometry.kernel, &geometry.padded) != (&g.kernel, &g.padded) {
            return Err(Error::Shape(format!(
                "a spectrum of kernel {:?} at lengths {:?} given kernel {:?} at {:?}",
                g.kernel, g.padded, geometry.kernel, geometry.padded
            )));
        }
        let forward = forward_plan(gpu, &geometry, &geometry.image, Dtype::F32)?;
        let (convolve, correlate) = (inverse_plan(gpu, &geometry, false, Dtype::F32)?, inverse_plan(gpu, &geometry, true, Dtype::F32)?);
        Ok(KernelSpectrum { geometry, forward, convolve, correlate, spectrum: self.spectrum.clone() })
    }

    /// The spectrum `new` makes, kept on `gpu` for later calls with the same kernel (compared
    /// element by element), image shape and mode.
    pub fn cached(gpu: &Gpu, kernel: &ArrayViewD<f32>, image_dims: &[usize], mode: Mode) -> Result<Arc<KernelSpectrum>> {
        let values = crate::gpu::row_major_bytes(kernel);
        let key = format!("{:?} {image_dims:?} {mode:?} {:016x}", kernel.shape(), content_hash(&values));
        let kept = gpu.cached(&key, || {
            let spectrum = KernelSpectrum::new(gpu, kernel, image_dims, mode)?;
            let bytes = spectrum.spectrum.bytes() + spectrum.forward.table_bytes() + spectrum.convolve.table_bytes() + spectrum.correlate.table_bytes();
            Ok(((values.to_vec(), Arc::new(spectrum)), bytes))
        })?;
        if kept.0 == *values {
            return Ok(kept.1.clone());
        }
        // Another kernel with the same hash: made fresh, not cached.
        Ok(Arc::new(KernelSpectrum::new(gpu, kernel, image_dims, mode)?))
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// Shape of the results.
    pub fn output_dims(&self) -> &[usize] {
        &self.geometry.out
    }

    /// The half spectrum on the device (rfftn layout of the padded kernel).
    pub fn spectrum(&self) -> &GpuArray {
        &self.spectrum
    }

    /// scipy.signal.fftconvolve(image, kernel, mode) of an f32 image of the planned shape.
    pub fn record(&self, rec: &mut Recording, image: Buf) -> Result<Buf> {
        self.record_product(rec, image, &self.convolve)
    }

    /// scipy.signal.correlate(image, kernel, mode, method='fft').
    pub fn record_correlate(&self, rec: &mut Recording, image: Buf) -> Result<Buf> {
        self.record_product(rec, image, &self.correlate)
    }

    fn record_product(&self, rec: &mut Recording, image: Buf, inverse: &FftPlan) -> Result<Buf> {
        rec.expect_dtype(image, Dtype::F32, "convolution image")?;
        if rec.dims(image) != self.geometry.image.as_slice() {
            return Err(Error::Shape(format!("kernel spectrum made for images of shape {:?}, given {:?}", self.geometry.image, rec.dims(image))));
        }
        let kernel = rec.input(&self.spectrum);
        let image = self.forward.record(rec, image)?;
        inverse.record_with(rec, image, Some(kernel))
    }
}

/// fftconvolve / fftcorrelate of two device arrays (both f32, or both f64): both transformed in
/// this recording, in their precision.
pub(crate) fn fft_pair(rec: &mut Recording, a: Buf, k: Buf, g: &Geometry, correlate: bool) -> Result<Buf> {
    let real = rec.dtype(a);
    if !matches!(real, Dtype::F32 | Dtype::F64) {
        return Err(Error::Dtype(format!("convolution input of {real:?}: expected f32 or f64")));
    }
    rec.expect_dtype(k, real, "convolution kernel")?;
    let gpu = rec.gpu();
    let (a_dims, k_dims) = (rec.dims(a).to_vec(), rec.dims(k).to_vec());
    // Plans kept on the GPU for later calls with the same shapes (their tables and kernels).
    let cached = |what: &str, make: &dyn Fn() -> Result<FftPlan>| {
        gpu.cached(&format!("convolution {what} {:?} {a_dims:?} {k_dims:?} {real:?} {correlate}", g.padded), || {
            let plan = make()?;
            let bytes = plan.table_bytes();
            Ok((plan, bytes))
        })
    };
    let a = cached("image", &|| forward_plan(gpu, g, &a_dims, real))?.record(rec, a)?;
    let k = cached("kernel", &|| forward_plan(gpu, g, &k_dims, real))?.record(rec, k)?;
    cached(&format!("inverse {:?} {:?}", g.start, g.out), &|| inverse_plan(gpu, g, correlate, real))?.record_with(rec, a, Some(k))
}

/// The real transform over every axis of an array of shape `input` zero-padded (at the end of
/// each axis, inside the transform's passes) to the padded shape, in the real type `real`.
fn forward_plan(gpu: &Gpu, g: &Geometry, input: &[usize], real: Dtype) -> Result<FftPlan> {
    let axes: Vec<usize> = (0..g.padded.len()).collect();
    let fusion = Fusion { input: Some(input.to_vec()), ..Fusion::default() };
    FftPlan::fused_as(gpu, &g.padded, &axes, Transform::RealForward, Norm::Backward, &fusion, real)
}

/// The inverse transform (carrying 1/N) of a half spectrum times the kernel's (conjugate) one,
/// keeping the output window. The circular correlation holds lag l at index l mod L, and full
/// index n of the correlation is lag n - (kernel - 1): its window starts at `window_origin`,
/// wrapped around.
fn inverse_plan(gpu: &Gpu, g: &Geometry, correlate: bool, real: Dtype) -> Result<FftPlan> {
    let axes: Vec<usize> = (0..g.padded.len()).collect();
    let mut half = g.padded.clone();
    let len = *half.last().unwrap();
    *half.last_mut().unwrap() = len / 2 + 1;
    let origin: Vec<i64> = if correlate { g.window_origin() } else { g.start.iter().map(|&s| s as i64).collect() };
    let window = origin.iter().zip(&g.out).map(|(&origin, &len)| Window { origin, len }).collect();
    let fusion = Fusion { window: Some(window), product: Some(if correlate { Product::MulConj } else { Product::Mul }), ..Fusion::default() };
    FftPlan::fused_as(gpu, &half, &axes, Transform::RealInverse { len }, Norm::Backward, &fusion, real)
}

/// scipy.signal's direct method: the output window as a correlation of the zero-extended image
/// with the kernel (reversed for a convolution).
pub(crate) fn direct<W: Real>(rec: &mut Recording, a: Buf, kernel: &ArrayViewD<W>, g: &Geometry, correlate: bool) -> Result<Buf> {
    let reversed;
    let weights = if correlate {
        kernel.view()
    } else {
        reversed = reverse(kernel);
        reversed.view()
    };
    window(rec, a, &weights, &g.out, &g.window_origin(), Boundary::Constant(0.0))
}

/// `y[o] = Σ_j weights[j] · x[origin + o + j]` over an output of shape `out_dims`: tiled through
/// workgroup memory when that pays and the halo fits, else one thread per output. The direct
/// sums of scipy.signal's direct method (zero outside) and of scipy.ndimage's filters
/// (`ops::filter`, any boundary).
pub(crate) fn window<W: Real>(rec: &mut Recording, x: Buf, weights: &ArrayViewD<W>, out_dims: &[usize], origin: &[i64], boundary: Boundary) -> Result<Buf> {
    let dtype = rec.dtype(x);
    if let Some(axis) = correlate_axis::axis_of(rec.dims(x), weights.shape(), out_dims, origin) {
        // Weights along one axis (a separable filter's pass): eight outputs a thread.
        let line: Vec<f64> = weights.iter().map(|v| v.as_f64()).collect();
        let w = rec.upload_as(&ndarray::ArrayView1::from(&line[..]).into_dyn(), dtype)?;
        return correlate_axis::record(rec, x, w, axis, out_dims, origin[axis], boundary);
    }
    if correlate_tiled::pays(weights.shape()) {
        if let Some(tiling) = correlate_tiled::Tiling::for_dtype(rec.gpu(), out_dims, weights.shape(), dtype) {
            return correlate_tiled::record_with(rec, x, weights, out_dims, origin, boundary, tiling);
        }
    }
    let w = rec.upload_as(&weights.mapv(|v| v.as_f64()).view(), dtype)?;
    correlate_window::record(rec, x, w, out_dims, origin, boundary)
}

/// The kernel reversed along every axis.
pub(crate) fn reverse<W: Clone>(kernel: &ArrayViewD<W>) -> ArrayD<W> {
    let mut v = kernel.view();
    for a in 0..v.ndim() {
        v.invert_axis(Axis(a));
    }
    v.as_standard_layout().into_owned()
}
