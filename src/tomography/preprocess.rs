//! TomoPy's preprocessing steps one by one, on the device, with its names and array layout:
//! projections `tomo` (angles, rows, cols), a sinogram being `tomo[:, row, :]`. What
//! [`super::reconstruct`] runs band by band, for users who compose their own pipeline. Each
//! equals the f64 reference of the same name in [`super::cpu`] (TomoPy's code) within f32's
//! precision.

use ndarray::{Array3, ArrayView3, Axis};

use crate::error::{Error, Result};
use crate::gpu::{Gpu, GpuArray};
use crate::graph::{Buf, Recording};
use crate::kernels::prep_normalize::{self, Mode, Raw};
use crate::ops::tomography::prep::{self, Normalize, Outliers, Paganin};

fn checked(x: &ArrayView3<f32>, what: &str) -> Result<()> {
    if x.is_empty() {
        return Err(Error::Empty(format!("{what} of shape {:?}", x.shape())));
    }
    crate::check::check_finite(&x.view().into_dyn(), what)
}

fn run3(mut rec: Recording, y: Buf) -> Result<Array3<f32>> {
    let d = rec.download(y);
    let out = rec.run()?.into_f32(d)?.into_dimensionality().map_err(|e| Error::Shape(e.to_string()))?;
    if out.iter().any(|v: &f32| !v.is_finite()) {
        return Err(Error::NonFinite("the result overflows f32: scale the input down".into()));
    }
    Ok(out)
}

/// The means of `images` (count, rows, cols) over the count, in f64.
fn mean(images: &ArrayView3<f32>, what: &str, shape: [usize; 2]) -> Result<ndarray::Array2<f32>> {
    checked(images, what)?;
    if images.shape()[1..] != shape {
        return Err(Error::Shape(format!("{what} of shape {:?} for projections of {shape:?} (rows, cols)", images.shape())));
    }
    Ok(images.mapv(f64::from).mean_axis(Axis(0)).expect("not empty").mapv(|v| v as f32))
}

/// `tomopy.normalize(tomo, flat, dark, cutoff)`: (tomo − dark) / max(flat − dark, 1e-6) with
/// the flats' and darks' means, clipped above `cutoff`; with `minus_log` (a floor), also
/// `tomopy.minus_log` of it, the transmission floored first (TomoPy's has no floor).
pub fn normalize(
    gpu: &Gpu,
    tomo: &ArrayView3<f32>,
    flat: &ArrayView3<f32>,
    dark: &ArrayView3<f32>,
    cutoff: Option<f32>,
    minus_log: Option<f32>,
) -> Result<Array3<f32>> {
    checked(tomo, "the projections")?;
    let (angles, rows, cols) = tomo.dim();
    let (f, d) = (mean(flat, "the flat fields", [rows, cols])?, mean(dark, "the dark fields", [rows, cols])?);
    if let Some(floor) = minus_log {
        if !(floor.is_finite() && floor > 0.0) {
            return Err(Error::Invalid(format!("a −log floor of {floor} (a positive number)")));
        }
    }
    let mut rec = Recording::new(gpu);
    let raw = rec.upload_once_f32(&tomo.view().into_dyn())?;
    let fd = rec.upload_f32(&ndarray::stack![Axis(0), f, d].into_dyn().view())?;
    let n = Normalize { outliers: None, cutoff: cutoff.unwrap_or(f32::INFINITY), minus_log, sinograms: false };
    let y = prep::record_normalize(&mut rec, Raw { buf: raw, u16: false, dims: [angles, rows, cols] }, 0, rows, fd, &n)?;
    run3(rec, y)
}

/// `tomopy.misc.corr.remove_outlier(arr, dif, size)` (axis 0): a value `dif` or more above the
/// median of its size × size neighbourhood in its image (mode 'reflect') becomes that median.
pub fn remove_outlier(gpu: &Gpu, arr: &ArrayView3<f32>, dif: f32, size: usize) -> Result<Array3<f32>> {
    checked(arr, "the images")?;
    let o = Outliers { dif, size };
    o.check()?;
    let dims = [arr.shape()[0], arr.shape()[1], arr.shape()[2]];
    let mut rec = Recording::new(gpu);
    let x = rec.upload_once_f32(&arr.view().into_dyn())?;
    let ones = ndarray::ArrayD::from_elem(ndarray::IxDyn(&[1, size, size]), true);
    let f = crate::ops::filter::morphology::Footprint::new(&ones.view(), None, &[])?;
    let taps = f.offsets.len();
    let median = crate::ops::filter::morphology::record_rank(&mut rec, x, &f, taps / 2, crate::kernels::boundary::Boundary::Reflect)?;
    let y = prep_normalize::record(&mut rec, Raw { buf: x, u16: false, dims }, 0, dims[1], Some((median, dif)), x, Mode::Raw, false)?;
    run3(rec, y)
}

/// Projections (angles, rows, cols) as sinograms (rows, angles, cols), through `record`, and back.
fn on_sinograms(gpu: &Gpu, tomo: &ArrayView3<f32>, record: impl Fn(&mut Recording, Buf) -> Result<Buf>) -> Result<Array3<f32>> {
    checked(tomo, "the projections")?;
    let mut rec = Recording::new(gpu);
    let x = rec.upload_once_f32(&tomo.view().into_dyn())?;
    let s = crate::ops::layout::permute(&mut rec, x, &[1, 0, 2])?;
    let y = record(&mut rec, s)?;
    let back = crate::ops::layout::permute(&mut rec, y, &[1, 0, 2])?;
    run3(rec, back)
}

/// `tomopy.prep.stripe.remove_stripe_based_sorting(tomo, size, dim)` (Vo et al. 2018): each
/// sinogram's columns sorted along the angles, median filtered (`dim` 1: along the detector;
/// 2: size × size), put back; `size` None: TomoPy's default for the column count.
pub fn remove_stripe_based_sorting(gpu: &Gpu, tomo: &ArrayView3<f32>, size: Option<usize>, dim: usize) -> Result<Array3<f32>> {
    let size = size.unwrap_or_else(|| crate::ops::tomography::prep::cpu::sorting_default_size(tomo.shape()[2]));
    on_sinograms(gpu, tomo, |rec, s| prep::record_stripe_sorting(rec, s, size, dim))
}

/// `tomopy.prep.stripe.remove_large_stripe(tomo, snr, size, drop_ratio, norm)` (Vo et al.
/// 2018): the stripe detection on the host between two recordings.
pub fn remove_large_stripe(gpu: &Gpu, tomo: &ArrayView3<f32>, snr: f64, size: usize, drop_ratio: f64, norm: bool) -> Result<Array3<f32>> {
    checked(tomo, "the projections")?;
    if !snr.is_finite() || !drop_ratio.is_finite() {
        return Err(Error::Invalid(format!("snr {snr}, drop_ratio {drop_ratio} (finite)")));
    }
    let mut rec = Recording::new(gpu);
    let x = rec.upload_once_f32(&tomo.view().into_dyn())?;
    let s = crate::ops::layout::permute(&mut rec, x, &[1, 0, 2])?;
    let (smooth, m1, m2) = prep::record_large_stripe_means(&mut rec, s, size, drop_ratio)?;
    let (ks, kx, d1, d2) = (rec.output(smooth), rec.output(s), rec.download(m1), rec.download(m2));
    let results = rec.run()?;
    let two = |d| -> Result<ndarray::Array2<f32>> { results.f32(d)?.into_dimensionality().map_err(|e| Error::Shape(e.to_string())) };
    let (factors, stripes) = prep::large_stripe_columns(&two(d1)?, &two(d2)?, snr);
    let mut rec = Recording::new(gpu);
    let (sb, mb) = (rec.input(&results.array(kx)), rec.input(&results.array(ks)));
    let f = rec.upload_f32(&factors.into_dyn().view())?;
    let st = rec.upload_f32(&stripes.into_dyn().view())?;
    let y = prep::record_large_stripe_fill(&mut rec, sb, mb, f, st, norm)?;
    let back = crate::ops::layout::permute(&mut rec, y, &[1, 0, 2])?;
    run3(rec, back)
}

/// `tomopy.prep.phase.retrieve_phase(tomo, pixel_size, dist, energy, alpha, pad)` (Paganin et
/// al. 2002) of projections of transmission: lengths in cm, energy in keV.
pub fn retrieve_phase(gpu: &Gpu, tomo: &ArrayView3<f32>, paganin: &Paganin) -> Result<Array3<f32>> {
    checked(tomo, "the projections")?;
    let plan = prep::PaganinPlan::new(gpu, paganin, tomo.shape()[1], tomo.shape()[2])?;
    let mut rec = Recording::new(gpu);
    let x = rec.input(&GpuArray::upload_f32(gpu, &tomo.view().into_dyn())?);
    let y = prep::record_paganin(&mut rec, x, &plan)?;
    run3(rec, y)
}

/// `tomopy.prep.stripe.remove_stripe_fw(tomo, level, 'db5', sigma, pad)` (Münch et al. 2009);
/// `level` None: TomoPy's ⌈log2⌉ of the stack's largest axis (rows included).
pub fn remove_stripe_fw(gpu: &Gpu, tomo: &ArrayView3<f32>, level: Option<usize>, sigma: f64, pad: bool) -> Result<Array3<f32>> {
    let largest = tomo.shape().iter().copied().max().unwrap_or(1).max(1);
    let level = level.or(Some((largest as f64).log2().ceil() as usize));
    on_sinograms(gpu, tomo, |rec, s| prep::record_stripe_fw(rec, s, level, sigma, pad))
}
