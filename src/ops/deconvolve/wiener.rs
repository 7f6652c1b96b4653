//! Wiener-Hunt deconvolution with scikit-image's conventions (`skimage.restoration.wiener(image,
//! psf, balance, reg=None, is_real=True, clip=True)`): the PSF as an impulse response, placed at
//! the origin of an image-sized array (element m // 2 of each axis on the origin, scikit-image's
//! `ir2tf`; not normalised), the discrete Laplacian as the regulariser, the filter
//! conj(H) / (|H|² + balance |L|²) applied to the image's spectrum (circular: the image is
//! taken as periodic), the result clipped to [-1, 1] with `clip` (scikit-image's default, which
//! assumes data in [0, 1] or [-1, 1]).

use ndarray::{ArrayD, ArrayViewD, IxDyn};
use num_complex::Complex64;

use crate::error::{Error, Result};
use crate::fft::{FftPlan, Norm, Transform};
use crate::gpu::{Dtype, Gpu};
use crate::graph::{Buf, Recording};
use crate::kernels::boundary::Boundary;
use crate::kernels::unary::{self, UnaryOp};
use crate::kernels::wiener_filter;
use crate::ops::layout;

/// An image of `dims` (1 to 4 axes) and a PSF of its rank, no longer along any axis, finite and
/// not empty; `balance` finite and not negative. (The image's values are checked apart: on the
/// host, or not at all for a device array.)
pub fn check_wiener(dims: &[usize], psf: &ArrayViewD<f32>, balance: f64) -> Result<()> {
    crate::gpu::Shape::new(dims)?;
    if psf.ndim() != dims.len() || psf.is_empty() || psf.shape().iter().zip(dims).any(|(m, n)| m > n) {
        return Err(Error::Shape(format!("a PSF of shape {:?} for an image of shape {dims:?}: give it the image's axes, each no longer", psf.shape())));
    }
    crate::check::check_finite(psf, "the PSF")?;
    if !(balance.is_finite() && balance >= 0.0) {
        return Err(Error::Invalid(format!("balance {balance}: finite and not negative")));
    }
    Ok(())
}

/// The PSF in an array of `dims`, element m // 2 of each axis at the origin, the rest wrapped
/// (scikit-image's `ir2tf` before its transform): the reference's.
pub(super) fn at_origin<T: Copy + Default>(psf: &ArrayViewD<T>, dims: &[usize]) -> ArrayD<T> {
    let mut out = ArrayD::from_elem(IxDyn(dims), T::default());
    for (i, &v) in psf.indexed_iter() {
        let at: Vec<usize> = (0..dims.len()).map(|a| (i[a] + dims[a] - psf.shape()[a] / 2) % dims[a]).collect();
        out[IxDyn(&at)] = v;
    }
    out
}

/// `skimage.restoration.wiener(image, psf, balance, clip=clip)` on the GPU.
pub fn wiener(gpu: &Gpu, image: &ArrayViewD<f32>, psf: &ArrayViewD<f32>, balance: f64, clip: bool) -> Result<ArrayD<f32>> {
    check_wiener(image.shape(), psf, balance)?;
    crate::check::check_finite(image, "the image")?;
    let mut rec = Recording::new(gpu);
    // The image straight into the device's staging memory.
    let x = rec.upload_once_f32(image)?;
    let y = record_wiener(&mut rec, x, psf, balance, clip)?;
    let d = rec.download(y);
    rec.run()?.into_f32(d)
}

/// [`wiener`] recorded into a pipeline: `image` a device array (f32, 1 to 4 axes), `psf` a host
/// array of its axes, each no longer, finite; the restored image (f32, the image's shape).
pub fn record_wiener(rec: &mut Recording, image: Buf, psf: &ArrayViewD<f32>, balance: f64, clip: bool) -> Result<Buf> {
    rec.expect_dtype(image, Dtype::F32, "the image")?;
    let dims = rec.dims(image).to_vec();
    check_wiener(&dims, psf, balance)?;
    let gpu = rec.gpu();
    let axes: Vec<usize> = (0..dims.len()).collect();
    let forward = FftPlan::cached(gpu, &dims, &axes, Transform::RealForward, Norm::Backward)?;
    let (y, h) = (forward.record(rec, image)?, record_transfer(rec, psf, &dims)?);
    let filtered = wiener_filter::record(rec, y, h, &dims, balance as f32)?;
    let half = rec.dims(filtered).to_vec();
    let inverse = FftPlan::cached(gpu, &half, &axes, Transform::RealInverse { len: dims[dims.len() - 1] }, Norm::Backward)?;
    let out = inverse.record(rec, filtered)?;
    match clip {
        true => unary::record(rec, UnaryOp::Clamp { lo: -1.0, hi: 1.0 }, out),
        false => Ok(out),
    }
}

/// The PSF's transfer function for real arrays of `dims` (rfftn half spectrum, c32): the PSF
/// (small) placed at the origin on the device, padded with zeros to the image's shape and rolled
/// back by m // 2 (scikit-image's `ir2tf`).
pub(super) fn record_transfer(rec: &mut Recording, psf: &ArrayViewD<f32>, dims: &[usize]) -> Result<Buf> {
    let axes: Vec<usize> = (0..dims.len()).collect();
    let small = rec.upload_f32(psf)?;
    let pads: Vec<(usize, usize)> = psf.shape().iter().zip(dims).map(|(&m, &n)| (0, n - m)).collect();
    let padded = layout::pad(rec, small, &pads, Boundary::Constant(0.0))?;
    let shifts: Vec<isize> = psf.shape().iter().map(|&m| -((m / 2) as isize)).collect();
    let h = layout::roll(rec, padded, &shifts, &axes)?;
    FftPlan::cached(rec.gpu(), dims, &axes, Transform::RealForward, Norm::Backward)?.record(rec, h)
}

/// The f64 reference: the same filter through full complex transforms.
pub fn wiener_reference(image: &ArrayD<f64>, psf: &ArrayD<f64>, balance: f64, clip: bool) -> Result<ArrayD<f64>> {
    check_wiener(image.shape(), &psf.mapv(|v| v as f32).view(), balance)?;
    crate::check::check_finite(&image.mapv(|v| v as f32).view(), "the image")?;
    let dims = image.shape().to_vec();
    let axes: Vec<usize> = (0..dims.len()).collect();
    let complex = |x: &ArrayD<f64>| x.mapv(|v| Complex64::new(v, 0.0));
    let y = crate::fft::cpu::c2c(&complex(image), &axes, false, Norm::Backward);
    let h = crate::fft::cpu::c2c(&complex(&at_origin(&psf.view(), &dims)), &axes, false, Norm::Backward);
    let filtered = ArrayD::from_shape_fn(IxDyn(&dims), |k| {
        let l: f64 = (0..dims.len()).map(|a| 2.0 - 2.0 * (2.0 * std::f64::consts::PI * k[a] as f64 / dims[a] as f64).cos()).sum();
        let hk = h[&k];
        y[&k] * hk.conj() / (hk.norm_sqr() + balance * l * l)
    });
    let x = crate::fft::cpu::c2c(&filtered, &axes, true, Norm::Backward).mapv(|v| v.re);
    Ok(if clip { x.mapv(|v| v.clamp(-1.0, 1.0)) } else { x })
}
