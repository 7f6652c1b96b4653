//! Image registration with scikit-image's conventions.
//!
//! Phase correlation (`skimage.registration.phase_cross_correlation`, no masks; images in real
//! space, or in Fourier space as their full spectra):
//! the cross-power spectrum R·conj(M) (normalised to unit magnitude with `phase`, floored at
//! 100 ε), its inverse transform's first largest magnitude as the whole-pixel shift (wrapped to
//! the signed range), then with an upsample factor u > 1 the matrix-multiply DFT (Guizar-Sicairos,
//! Thurman and Fienup 2008) of the same spectrum on a ceil(1.5 u)^d grid of 1/u steps around
//! it. Real inputs keep half spectra on the GPU; the refinement adds the missing bins from their
//! Hermitian mirrors, so it sums exactly what scikit-image sums over the full spectrum; spectra
//! given in Fourier space are complex throughout. The shift registers the moving image onto the
//! reference (array axis order); the error and the phase difference follow scikit-image (`None`
//! where it gives NaN: an empty image).

pub mod affine;
pub mod cpu;
pub mod flow;
pub mod masked;
pub mod similarity;
pub mod similarity3d;
pub mod stack;
pub mod stripes;
pub mod template;

use num_complex::{Complex32, Complex64};

use crate::error::{Error, Result};
use crate::fft::{FftPlan, Fusion, Norm, Product, Transform};
use crate::gpu::{Dtype, Gpu, GpuArray};
use crate::graph::{Buf, Recording};
use crate::kernels::binary;
use crate::kernels::complex_to_real::{self, ComplexToReal};
use crate::kernels::{take, upsampled_dft};
use crate::ops::reduce::{self, Reduction};

/// scikit-image's `normalization`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Normalization {
    /// The cross-power spectrum divided by its magnitude (phase correlation).
    #[default]
    Phase,
    /// The plain cross-correlation.
    None,
}

impl Normalization {
    pub fn parse(name: &str) -> Result<Normalization> {
        match name {
            "phase" => Ok(Normalization::Phase),
            "none" => Ok(Normalization::None),
            other => Err(Error::Invalid(format!("normalization '{other}' (phase or none)"))),
        }
    }
}

/// How [`phase_cross_correlation`] registers (scikit-image's `upsample_factor`, `normalization`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PhaseCorrelation {
    /// Shifts are found to 1/upsample_factor of a sample (1: whole samples).
    pub upsample_factor: f64,
    pub normalization: Normalization,
}

impl Default for PhaseCorrelation {
    fn default() -> PhaseCorrelation {
        PhaseCorrelation { upsample_factor: 1.0, normalization: Normalization::Phase }
    }
}

impl PhaseCorrelation {
    fn check(&self) -> Result<()> {
        check_upsample_factor(self.upsample_factor)
    }
}

/// An upsample factor is a whole number from 1 to 10000: the refinement's grid steps by
/// 1/factor of a sample around a whole-sample peak, which a fractional factor misplaces
/// (scikit-image returns wrong shifts for it too).
pub fn check_upsample_factor(factor: f64) -> Result<()> {
    if !(factor.is_finite() && (1.0..=1e4).contains(&factor) && factor.fract() == 0.0) {
        return Err(Error::Invalid(format!("upsample factor {factor}: a whole number from 1 to 10000")));
    }
    Ok(())
}

/// The result of a registration.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Registration {
    /// The shift that registers the moving image onto the reference, per axis.
    pub shift: Vec<f64>,
    /// scikit-image's translation-invariant normalised RMS error (None where it is NaN).
    pub error: Option<f64>,
    /// The global phase difference of the two images (None where it is NaN).
    pub phasediff: Option<f64>,
}

/// The refinement grid's points per axis, ceil(1.5 u), and its centre, trunc(r / 2).
fn grid(upsample: f64) -> (usize, f64) {
    let r = (1.5 * upsample).ceil() as usize;
    (r, (r / 2) as f64)
}

/// The refinement grid ([`grid`]) and each axis' offset so that the coarse shift (rounded to
/// 1/u) lies at its centre.
fn region(dims: &[usize], coarse: &[usize], upsample: f64) -> (usize, Vec<f64>) {
    let (r, centre) = grid(upsample);
    let offsets = wrapped(dims, coarse).iter().map(|s| centre - (s * upsample).round_ties_even()).collect();
    (r, offsets)
}

/// The arrays the refinement of images of `dims` at upsample factor `upsample` makes, axis
/// after axis from the last (the spectrum with its axes replaced by the grid's, one by one), so
/// callers can refuse sizes beyond their memory before any is made.
pub fn refinement_shapes(dims: &[usize], upsample: f64) -> Vec<Vec<usize>> {
    let (r, _) = grid(upsample);
    let mut shape = dims.to_vec();
    (0..dims.len())
        .rev()
        .map(|a| {
            shape[a] = r;
            shape.clone()
        })
        .collect()
}

/// The offset of the vertex of the parabola through (-1, lo), (0, c), (1, hi), if it opens
/// downwards (within half a sample), else 0: a peak's position below a sample.
pub(crate) fn parabola(lo: f64, c: f64, hi: f64) -> f64 {
    let curvature = lo - 2.0 * c + hi;
    if curvature < 0.0 {
        (0.5 * (lo - hi) / curvature).clamp(-0.5, 0.5)
    } else {
        0.0
    }
}

/// Whole-sample peak positions as signed shifts: beyond half an axis counts from its end.
fn wrapped(dims: &[usize], at: &[usize]) -> Vec<f64> {
    dims.iter().zip(at).map(|(&n, &i)| if i > n / 2 { i as f64 - n as f64 } else { i as f64 }).collect()
}

/// The registration from the coarse peak, the refined one (if upsampled), the correlation's value
/// there and the two images' amplitudes (as scikit-image computes them for the branch taken).
fn finish(dims: &[usize], coarse: &[usize], fine: Option<&[usize]>, peak: Complex64, src_amp: f64, target_amp: f64, how: &PhaseCorrelation) -> Registration {
    let u = how.upsample_factor;
    let mut shift = wrapped(dims, coarse);
    if let Some(fine) = fine {
        let (_, centre) = grid(u);
        for (s, &k) in shift.iter_mut().zip(fine) {
            *s = (*s * u).round_ties_even() / u + (k as f64 - centre) / u;
        }
    }
    for (s, &n) in shift.iter_mut().zip(dims) {
        if n == 1 {
            *s = 0.0;
        }
    }
    let error = (1.0 - peak.norm_sqr() / (src_amp * target_amp)).abs().sqrt();
    let phasediff = peak.im.atan2(peak.re);
    Registration { shift, error: error.is_finite().then_some(error), phasediff: phasediff.is_finite().then_some(phasediff) }
}

/// A reference image's spectrum on the device, for registering many moving images against it
/// at the cost of one forward transform each (or none: [`PhaseCorrelator::from_spectrum`]).
pub struct PhaseCorrelator<'g> {
    gpu: &'g Gpu,
    /// The images' shape (in Fourier space, the spectra's).
    dims: Vec<usize>,
    /// The reference's half spectrum, or (Fourier space) its full spectrum as given.
    spectrum: GpuArray,
    /// The last cross-power spectrum, kept for the refinement (one buffer for every call).
    product: GpuArray,
    /// Σ reference² (Fourier space: Σ |spectrum|² / N), f64.
    power: f64,
    how: PhaseCorrelation,
    /// scikit-image's space "fourier": the images are given as their full spectra (fftn).
    fourier: bool,
    /// The reference was multiplied by 2^scale on its way to the device (values near f32's limits).
    scale: i32,
}

impl<'g> PhaseCorrelator<'g> {
    /// Transforms `reference` (f32, 1-4 axes, finite) once.
    pub fn new(gpu: &'g Gpu, reference: &ndarray::ArrayViewD<f32>, how: &PhaseCorrelation) -> Result<PhaseCorrelator<'g>> {
        how.check()?;
        check_image(reference, "the reference image")?;
        // Large values are brought near 1 by a power of two (exact), so that the sums of squares
        // do not overflow; the amplitudes are scaled back in f64. Small ones stay: scikit-image
        // floors the cross-power spectrum at 100 ε, so there its result depends on the scale.
        let (reference, e) = crate::check::large_in_safe_range(reference);
        let mut rec = Recording::new(gpu);
        let x = rec.upload_once_f32(&reference.view())?;
        let mut correlator = PhaseCorrelator::transformed(gpu, rec, x, how)?;
        correlator.scale = e;
        Ok(correlator)
    }

    /// [`PhaseCorrelator::new`] of a reference image already on the device (f32, finite:
    /// checked there; not rescaled, so a sum of squares beyond f32 is an error).
    pub fn new_resident(gpu: &'g Gpu, reference: &GpuArray, how: &PhaseCorrelation) -> Result<PhaseCorrelator<'g>> {
        how.check()?;
        reference.expect_dtype(Dtype::F32)?;
        if crate::ops::resident::has_nonfinite(gpu, reference)? {
            return Err(Error::NonFinite("the reference image holds NaN or an infinity".into()));
        }
        let mut rec = Recording::new(gpu);
        let x = rec.input(reference);
        PhaseCorrelator::transformed(gpu, rec, x, how)
    }

    /// The reference `x` (in `rec`) transformed, and its sum of squares.
    fn transformed(gpu: &'g Gpu, mut rec: Recording, x: Buf, how: &PhaseCorrelation) -> Result<PhaseCorrelator<'g>> {
        let dims = rec.dims(x).to_vec();
        let spectrum = forward(&mut rec, x)?;
        let out = rec.output(spectrum);
        let power = sum_of_squares(&mut rec, x)?;
        let power = rec.download(power);
        let results = rec.run()?;
        let power = first(results.f32(power)?) as f64;
        if !power.is_finite() {
            return Err(Error::NonFinite("the reference image's sum of squares overflows f32 (scale it)".into()));
        }
        PhaseCorrelator::with(gpu, &dims, results.array(out), power, how, false)
    }

    /// scikit-image's space "fourier": `reference` is a reference image's full spectrum (fftn;
    /// complex, 1-4 axes, finite), and so are the moving images [`PhaseCorrelator::register_spectrum`]
    /// takes.
    pub fn from_spectrum(gpu: &'g Gpu, reference: &ndarray::ArrayViewD<Complex32>, how: &PhaseCorrelation) -> Result<PhaseCorrelator<'g>> {
        how.check()?;
        check_image(reference, "the reference spectrum")?;
        let spectrum = GpuArray::upload_c32(gpu, reference)?;
        let mut rec = Recording::new(gpu);
        let s = rec.input(&spectrum);
        let power = sum_of_squares(&mut rec, s)?;
        let power = rec.download(power);
        let power = first(rec.run()?.f32(power)?) as f64 / reference.len() as f64;
        PhaseCorrelator::with(gpu, reference.shape(), spectrum, power, how, true)
    }

    fn with(gpu: &'g Gpu, dims: &[usize], spectrum: GpuArray, power: f64, how: &PhaseCorrelation, fourier: bool) -> Result<PhaseCorrelator<'g>> {
        let product = GpuArray::empty(gpu, spectrum.shape().dims(), Dtype::C32)?;
        Ok(PhaseCorrelator { gpu, dims: dims.to_vec(), spectrum, product, power, how: *how, fourier, scale: 0 })
    }

    /// The shift registering `moving` (the reference's shape) onto the reference.
    pub fn register(&self, moving: &ndarray::ArrayViewD<f32>) -> Result<Registration> {
        check_image(moving, "the moving image")?;
        let (moving, e) = crate::check::large_in_safe_range(moving);
        let array = GpuArray::upload_f32(self.gpu, &moving.view())?;
        self.register_scaled(&array, e)
    }

    /// [`PhaseCorrelator::register`] in Fourier space: `moving` is the moving image's spectrum.
    pub fn register_spectrum(&self, moving: &ndarray::ArrayViewD<Complex32>) -> Result<Registration> {
        check_image(moving, "the moving spectrum")?;
        let array = GpuArray::upload_c32(self.gpu, moving)?;
        self.register_resident(&array)
    }

    /// [`PhaseCorrelator::register`] of an image (f32) or, in Fourier space, a spectrum (c32)
    /// already on the device.
    pub fn register_resident(&self, moving: &GpuArray) -> Result<Registration> {
        self.register_scaled(moving, 0)
    }

    /// [`PhaseCorrelator::register_resident`] of a moving image multiplied by 2^scale: the
    /// amplitudes and the correlation's value are scaled back in f64 (the error and phase
    /// difference are scikit-image's of the images as given; with phase normalisation the error
    /// depends on their scale).
    fn register_scaled(&self, moving: &GpuArray, scale: i32) -> Result<Registration> {
        let (want, what) = if self.fourier { (Dtype::C32, "spectrum") } else { (Dtype::F32, "image") };
        if moving.shape().dims() != self.dims.as_slice() || moving.dtype() != want {
            return Err(Error::Shape(format!(
                "the moving {what} {:?} {:?} and the reference {:?} {want:?} differ",
                moving.shape().dims(),
                moving.dtype(),
                self.dims
            )));
        }
        let gpu = self.gpu;
        let dims = &self.dims;
        let n = dims.iter().product::<usize>() as f64;
        let mut rec = Recording::new(gpu);
        let (reference, m) = (rec.input(&self.spectrum), rec.input(moving));
        let upsampled = self.how.upsample_factor > 1.0;
        // The refinement reads the cross-power spectrum again: kept.
        let keep = upsampled.then(|| rec.input(&self.product));
        let CoarsePeak { index: at, value, power, .. } = record_phase_correlation(&mut rec, reference, m, dims, self.how.normalization, keep)?;
        let (at, value, power) = (rec.download(at), rec.download(value), rec.download(power));
        let results = rec.run()?;
        let flat = results.u32(at)?.iter().next().copied().unwrap_or(0) as usize;
        let peak = if self.fourier {
            let v = results.c32(value)?.iter().next().copied().unwrap_or(Complex32::new(f32::NAN, f32::NAN));
            Complex64::new(v.re as f64, v.im as f64)
        } else {
            Complex64::new(first(results.f32(value)?) as f64, 0.0)
        };
        let mut target_power = first(results.f32(power)?) as f64;
        if self.fourier {
            target_power /= n;
        }
        if !target_power.is_finite() {
            return Err(Error::NonFinite(format!("the moving {what}, or its sum of squares overflows f32 (scale it)")));
        }
        // Undo the scaling: Σx² by 4^-e, the correlation (without phase normalisation) by
        // 2^-(e_reference + e_moving).
        let (source_power, target_power) = (self.power * 4f64.powi(-self.scale), target_power * 4f64.powi(-scale));
        let unscale = |peak: Complex64| match self.how.normalization {
            Normalization::Phase => peak,
            Normalization::None => peak * 2f64.powi(-(self.scale + scale)),
        };
        let coarse = unravel(flat, dims);
        if !upsampled {
            return Ok(finish(dims, &coarse, None, unscale(peak), source_power, target_power, &self.how));
        }
        let (peak, fine) = refine(gpu, &self.product, dims, &coarse, self.how.upsample_factor, !self.fourier)?;
        Ok(finish(dims, &coarse, Some(&fine), unscale(peak), source_power * n, target_power * n, &self.how))
    }
}

/// What [`record_phase_correlation`] leaves on the device: the flat index of the first largest
/// |cross-correlation| (u32), the correlation there (f32, or c32 in Fourier space) and Σ m² of the
/// moving image (Σ |M|² in Fourier space), one element each; and the correlation map itself.
pub struct CoarsePeak {
    pub map: Buf,
    pub index: Buf,
    pub value: Buf,
    pub power: Buf,
}

/// Whole-sample phase correlation recorded into a pipeline (the stage every registration runs
/// first; one submission for many images): `moving` is an image of `dims` (f32) and `reference`
/// the reference's rfftn, or in Fourier space `moving` is a spectrum (c32) and `reference` the
/// reference's fftn. With `keep`, the cross-power spectrum is
/// also written there (what the upsampled refinement reads); without, it is fused into the
/// inverse transform's load.
pub fn record_phase_correlation(
    rec: &mut Recording,
    reference: Buf,
    moving: Buf,
    dims: &[usize],
    normalization: Normalization,
    keep: Option<Buf>,
) -> Result<CoarsePeak> {
    let fourier = rec.dtype(moving) == Dtype::C32;
    let target = if fourier { moving } else { forward(rec, moving)? };
    rec.expect_same_shape(reference, target, "phase correlation spectra")?;
    let op = if normalization == Normalization::Phase { Product::CrossPower } else { Product::MulConj };
    let cc = match keep {
        Some(product) => {
            binary::record_into(rec, op.binary(), reference, target, product)?;
            inverse(rec, product, dims, None, fourier)?
        }
        None => inverse(rec, reference, dims, Some((target, op)), fourier)?,
    };
    let index = if fourier {
        let magnitude = complex_to_real::record(rec, ComplexToReal::Abs, cc)?;
        reduce::record(rec, magnitude, Reduction::ArgMax, None)?
    } else {
        reduce::record(rec, cc, Reduction::ArgMaxAbs, None)?
    };
    let value = take::record(rec, cc, index)?;
    let power = sum_of_squares(rec, moving)?;
    Ok(CoarsePeak { map: cc, index, value, power })
}

/// The upsampled DFT of `product` (a half spectrum where `half`) around the coarse peak: the
/// largest magnitude's value and position in the r^d grid.
fn refine(gpu: &Gpu, product: &GpuArray, dims: &[usize], coarse: &[usize], upsample: f64, half: bool) -> Result<(Complex64, Vec<usize>)> {
    for shape in refinement_shapes(dims, upsample) {
        let bytes = shape.iter().map(|&n| n as u64).product::<u64>() * 8;
        if bytes > gpu.max_buffer_bytes() {
            return Err(Error::TooLarge {
                what: format!("the refinement at upsample factor {upsample} (an array of shape {shape:?})"),
                bytes,
                limit: gpu.max_buffer_bytes(),
            });
        }
    }
    let (r, offsets) = region(dims, coarse, upsample);
    let mut rec = Recording::new(gpu);
    let mut data = rec.input(product);
    let last = dims.len() - 1;
    for a in (0..dims.len()).rev() {
        let t = upsampled_dft::table(dims[a], r, upsample, offsets[a]);
        let t = rec.upload_once_c32(&ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[t.len()]), t).expect("one axis").view())?;
        let partial = upsampled_dft::record(&mut rec, data, a, t, r, (half && a == last).then_some(dims[a]))?;
        let mut out = rec.dims(data).to_vec();
        out[a] = r;
        data = sum_spans(&mut rec, partial, &out)?;
    }
    let d = rec.download(data);
    let grid = rec.run()?.c32(d)?;
    let grid = grid.mapv(|v| Complex64::new(v.re as f64, v.im as f64));
    let at = first_largest(&grid);
    Ok((grid[ndarray::IxDyn(&at)], at))
}

/// The position of the first largest magnitude (row-major), as numpy's argmax.
fn first_largest(x: &ndarray::ArrayD<Complex64>) -> Vec<usize> {
    let mut best = (0usize, f64::MIN);
    for (i, v) in x.iter().enumerate() {
        if v.norm() > best.1 {
            best = (i, v.norm());
        }
    }
    unravel(best.0, x.shape())
}

/// The partial sums of [`upsampled_dft::record`] added over their spans, shaped `out`.
fn sum_spans(rec: &mut Recording, partial: Buf, out: &[usize]) -> Result<Buf> {
    let [spans, outputs] = rec.dims(partial).to_vec()[..] else { unreachable!("(spans, outputs)") };
    if spans == 1 {
        return rec.reinterpret(partial, out, Dtype::C32);
    }
    // Complex values as pairs of reals, summed over the spans.
    let pairs = rec.reinterpret(partial, &[spans, 2 * outputs], Dtype::F32)?;
    let sum = reduce::record(rec, pairs, Reduction::Sum, Some(0))?;
    rec.reinterpret(sum, out, Dtype::C32)
}

/// Σ x² of a real array, or Σ |x|² of a complex one (its words squared).
fn sum_of_squares(rec: &mut Recording, x: Buf) -> Result<Buf> {
    let words = rec.shape(x).len() * rec.dtype(x).words() as usize;
    let flat = rec.reinterpret(x, &[words], Dtype::F32)?;
    reduce::record(rec, flat, Reduction::SumSquares, None)
}

/// The one value of a reduction's download (NaN if none).
fn first(x: ndarray::ArrayD<f32>) -> f32 {
    x.iter().next().copied().unwrap_or(f32::NAN)
}

/// The row-major index of flat element `flat` of an array of `dims`.
fn unravel(mut flat: usize, dims: &[usize]) -> Vec<usize> {
    let mut at = vec![0; dims.len()];
    for a in (0..dims.len()).rev() {
        at[a] = flat % dims[a];
        flat /= dims[a];
    }
    at
}

fn check_image<T: crate::check::Finite>(x: &ndarray::ArrayViewD<T>, what: &str) -> Result<()> {
    if !(1..=4).contains(&x.ndim()) {
        return Err(Error::Shape(format!("{what}: {} axes (phase correlation takes 1 to 4)", x.ndim())));
    }
    if x.is_empty() {
        return Err(Error::Empty(format!("{what} of shape {:?}", x.shape())));
    }
    crate::check::check_finite(x, what)
}

/// rfftn over every axis.
fn forward(rec: &mut Recording, x: Buf) -> Result<Buf> {
    let dims = rec.dims(x).to_vec();
    let axes: Vec<usize> = (0..dims.len()).collect();
    FftPlan::cached(rec.gpu(), &dims, &axes, Transform::RealForward, Norm::Backward)?.record(rec, x)
}

/// irfftn over every axis back to `dims` (ifftn where `complex`); with `product` = (y, op), of
/// x (op) y, the product fused into the transform's first load (plans cached on the GPU).
fn inverse(rec: &mut Recording, x: Buf, dims: &[usize], product: Option<(Buf, Product)>, complex: bool) -> Result<Buf> {
    let half = rec.dims(x).to_vec();
    let axes: Vec<usize> = (0..dims.len()).collect();
    let transform = if complex { Transform::Inverse } else { Transform::RealInverse { len: dims[dims.len() - 1] } };
    let Some((y, op)) = product else {
        return FftPlan::cached(rec.gpu(), &half, &axes, transform, Norm::Backward)?.record(rec, x);
    };
    let gpu = rec.gpu();
    let plan = gpu.cached(&format!("inverse of a product {half:?} {transform:?} {op:?}"), || {
        let plan = FftPlan::fused(gpu, &half, &axes, transform, Norm::Backward, &Fusion { product: Some(op), ..Fusion::default() })?;
        let bytes = plan.table_bytes();
        Ok((plan, bytes))
    })?;
    plan.record_with(rec, x, Some(y))
}

/// scikit-image's `phase_cross_correlation(reference, moving, upsample_factor, normalization)`.
pub fn phase_cross_correlation(
    gpu: &Gpu,
    reference: &ndarray::ArrayViewD<f32>,
    moving: &ndarray::ArrayViewD<f32>,
    how: &PhaseCorrelation,
) -> Result<Registration> {
    if reference.shape() != moving.shape() {
        return Err(Error::Shape(format!("the reference {:?} and the moving image {:?} differ", reference.shape(), moving.shape())));
    }
    PhaseCorrelator::new(gpu, reference, how)?.register(moving)
}

/// scikit-image's `phase_cross_correlation(..., space="fourier")`: the two images given as their
/// full spectra (fftn), complex, of one shape.
pub fn phase_cross_correlation_spectra(
    gpu: &Gpu,
    reference: &ndarray::ArrayViewD<Complex32>,
    moving: &ndarray::ArrayViewD<Complex32>,
    how: &PhaseCorrelation,
) -> Result<Registration> {
    if reference.shape() != moving.shape() {
        return Err(Error::Shape(format!("the reference spectrum {:?} and the moving one {:?} differ", reference.shape(), moving.shape())));
    }
    PhaseCorrelator::from_spectrum(gpu, reference, how)?.register_spectrum(moving)
}
