//! Denoising on the GPU: true 4D adaptive filtering (Eklund, Andersson and Knutsson 2011: the
//! structure tensor from monomial filters, the control tensor, the reconstruction filters, over
//! 2, 3 or 4 axes together; [`crate::ops::denoise`] documents the algorithm and its defaults),
//! total variation ([`denoise_tv_chambolle`]) and non-local means ([`denoise_nl_means`]),
//! scikit-image's, with its noise estimate ([`estimate_sigma`]), and block matching (BM3D and
//! BM4D, [`bm4d`]).
//!
//! ```no_run
//! use lucent::denoise::{adaptive_filter, Options};
//! let gpu = lucent::Gpu::new()?;
//! let series = ndarray::Array4::<f32>::zeros((16, 32, 48, 48)); // (t, z, y, x)
//! let denoised = adaptive_filter(&gpu, &series, &Options { dims: Some(4), ..Options::default() })?;
//! # Ok::<(), lucent::Error>(())
//! ```

use ndarray::{Array, ArrayBase, ArrayD, Axis, Data, Dimension, IxDyn};

use crate::check::check_finite;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::ops::denoise::gpu;

pub use crate::ops::denoise::bm::{Noise as Bm4dNoise, Profile as Bm4dProfile, Stage as Bm4dStage};
pub use crate::ops::denoise::bregman::Bregman;
pub use crate::ops::denoise::gpu::Report;
pub use crate::ops::denoise::nlm::NlMeans;
pub use crate::ops::denoise::{Lognormal, Method, Options};
pub use crate::placement::Progress;

/// The CPU reference (f64), with the semantics of the GPU function: what `--device cpu` runs
/// and what the tests compare against.
pub mod cpu {
    pub use crate::ops::denoise::bm::cpu::bm4d;
    pub use crate::ops::denoise::bregman::cpu as denoise_tv_bregman;
    pub use crate::ops::denoise::cpu::adaptive_filter;
    pub use crate::ops::denoise::nlm::cpu as denoise_nl_means;
    pub use crate::ops::denoise::tv::cpu as denoise_tv_chambolle;
}

/// bm4d's `bm4d(z, sigma_psd, profile, stage_arg)`: block-matching collaborative filtering
/// (BM3D for images, BM4D for volumes, and series matched across time) of data with white
/// noise of a standard deviation or correlated noise of a power spectral density (`noise`, bm4d's
/// `sigma_psd`); `profile` None chooses by shape as bm4d does, and by the noise
/// ([`Bm4dProfile::for_noise`]);
/// `stage` both stages, the hard-thresholding one alone, or Wiener filtering on a first
/// estimate. The algorithm and where it departs from bm4d's defaults: `ops::denoise::bm`.
pub fn bm4d<D: Dimension>(
    gpu: &Gpu,
    z: &ArrayBase<impl Data<Elem = f32>, D>,
    noise: &Bm4dNoise,
    profile: Option<&Bm4dProfile>,
    stage: Bm4dStage,
) -> Result<Array<f32, D>> {
    let y = crate::ops::denoise::bm::bm4d(gpu, &z.view().into_dyn(), noise, profile, stage)?;
    y.into_dimensionality::<D>().map_err(|e| Error::Invalid(e.to_string()))
}

/// scikit-image's `denoise_nl_means(image, patch_size=7, patch_distance=11, h=0.1,
/// fast_mode=True, sigma=0.0, channel_axis=None)` of an image or a volume (with a channel axis
/// when given), its arithmetic (see `ops::denoise::nlm`), with `x`'s shape.
pub fn denoise_nl_means<D: Dimension>(gpu: &Gpu, x: &ArrayBase<impl Data<Elem = f32>, D>, o: &NlMeans, channel_axis: Option<usize>) -> Result<Array<f32, D>> {
    let y = crate::ops::denoise::nlm::denoise_nl_means(gpu, &x.view().into_dyn(), o, channel_axis)?;
    y.into_dimensionality::<D>().map_err(|e| Error::Invalid(e.to_string()))
}

/// scikit-image's `estimate_sigma(image)` (`channel_axis=None`): the standard deviation of
/// Gaussian noise from the finest diagonal wavelet detail (PyWavelets' db2), on the host.
pub fn estimate_sigma<A: Copy + Into<f64>, D: Dimension>(x: &ArrayBase<impl Data<Elem = A>, D>) -> Result<f64> {
    crate::ops::denoise::sigma::estimate_sigma(&x.view().into_dyn().mapv(Into::into).view())
}

/// scikit-image's `denoise_tv_chambolle(image, weight=0.1, eps=2e-4, max_num_iter=200,
/// channel_axis=None)`: the minimiser of ½‖u − f‖² + weight · TV(u) by Chambolle's projection
/// algorithm over every axis (1 to 3) but the channel axis, each channel on its own, stopping
/// when the energy changes by less than `eps` times its first value (the rule kept on the
/// device), with `x`'s shape.
pub fn denoise_tv_chambolle<D: Dimension>(
    gpu: &Gpu,
    x: &ArrayBase<impl Data<Elem = f32>, D>,
    weight: f64,
    eps: f64,
    max_num_iter: usize,
    channel_axis: Option<usize>,
) -> Result<Array<f32, D>> {
    let y = crate::ops::denoise::tv::denoise_tv_chambolle(gpu, &x.view().into_dyn(), weight, eps, max_num_iter, channel_axis)?;
    y.into_dimensionality::<D>().map_err(|e| Error::Invalid(e.to_string()))
}

/// scikit-image's `denoise_tv_bregman(image, weight=5.0, max_num_iter=100, eps=1e-3,
/// isotropic=True, channel_axis=None)`: split-Bregman TV by its Gauss-Seidel sweeps in its
/// raster order (anti-diagonals on the device), an image whose third axis, if any, is solved
/// together, or each channel on its own; with `x`'s shape.
pub fn denoise_tv_bregman<D: Dimension>(gpu: &Gpu, x: &ArrayBase<impl Data<Elem = f32>, D>, o: &Bregman, channel_axis: Option<usize>) -> Result<Array<f32, D>> {
    let (y, _) = crate::ops::denoise::bregman::denoise_tv_bregman(gpu, &x.view().into_dyn(), o, channel_axis)?;
    y.into_dimensionality::<D>().map_err(|e| Error::Invalid(e.to_string()))
}

/// The data denoised over its last `o.dims` axes (every leading index on its own), with `x`'s
/// shape.
pub fn adaptive_filter<D: Dimension>(gpu: &Gpu, x: &ArrayBase<impl Data<Elem = f32>, D>, o: &Options) -> Result<Array<f32, D>> {
    let (y, _) = adaptive_filter_with(gpu, &x.view().into_dyn(), o, &mut |_| {})?;
    y.into_dimensionality::<D>().map_err(|e| Error::Invalid(e.to_string()))
}

/// [`adaptive_filter`] with `progress` (stage "structure" or "reconstruction", slabs done of
/// how many) called before every slab of every pass, and the [`Report`]. Items of a batch (the
/// leading axes) run as one array where both filter banks go by direct sums, else one by one;
/// either way the magnitude mapping is relative to the largest structure of the whole batch.
pub fn adaptive_filter_with(gpu: &Gpu, x: &ndarray::ArrayViewD<f32>, o: &Options, progress: &mut dyn FnMut(Progress)) -> Result<(ArrayD<f32>, Report)> {
    o.check()?;
    let d = o.axes(x.ndim())?;
    if x.is_empty() {
        return Err(Error::Empty(format!("adaptive filtering of an array of shape {:?}", x.shape())));
    }
    let t = std::time::Instant::now();
    check_finite(x, "the data to denoise")?;
    crate::gpu::trace("denoise: finiteness", t);
    // Adaptive filtering is scale-equivariant (the control is relative to the largest structure):
    // data far from 1 in magnitude is filtered near 1 and scaled back, exactly, instead of
    // overflowing the tensors' fourth powers in f32.
    if let Some(e) = crate::check::power_of_two_scale(x) {
        let (y, report) = adaptive_filter_with(gpu, &crate::check::scaled(x, e).view(), o, progress)?;
        return Ok((crate::check::scaled(&y.view(), -e), report));
    }
    crate::gpu::trace("denoise: finiteness and scale", t);
    let item: Vec<usize> = x.shape()[x.ndim() - d..].to_vec();
    let batch: usize = x.shape()[..x.ndim() - d].iter().product();
    let flat = x.as_standard_layout();
    let mut report = Report::default();
    if batch == 1 || gpu::batches_together(d, o) {
        let dims: Vec<usize> = if batch == 1 { item.clone() } else { [&[batch][..], &item].concat() };
        let view = flat.view().into_shape_with_order(IxDyn(&dims)).map_err(|e| Error::Invalid(e.to_string()))?;
        let y = gpu::adaptive_filter(gpu, &view, d, o, &mut report, progress)?;
        report.axis += x.ndim() - view.ndim();
        return Ok((y.into_shape_with_order(x.raw_dim()).map_err(|e| Error::Invalid(e.to_string()))?, report));
    }
    // One by one: every item's tensor first, for the batch's largest norm.
    let flat = flat.view().into_shape_with_order(IxDyn(&[&[batch][..], &item].concat())).map_err(|e| Error::Invalid(e.to_string()))?;
    let (first, slabs) = (gpu::plan(gpu, &item, d, o, gpu::Pass::Structure)?, gpu::plan(gpu, &item, d, o, gpu::Pass::Reconstruction)?);
    let (firsts, total) = (first.ranges.len(), slabs.ranges.len());
    let mut tensors = Vec::with_capacity(batch);
    let mut largest = 0f64;
    for b in 0..batch {
        let (t, l) = gpu::structure(gpu, &flat.index_axis(Axis(0), b), d, o, &first, &mut report, &mut |p| {
            progress(Progress::new(p.stage, b * firsts + p.done, batch * firsts))
        })?;
        tensors.push(t);
        largest = largest.max(l);
    }
    let mut out = ArrayD::<f32>::zeros(flat.raw_dim());
    for (b, mut slot) in out.axis_iter_mut(Axis(0)).enumerate() {
        let y = gpu::reconstruction(gpu, &flat.index_axis(Axis(0), b), d, &tensors[b], largest, o, &slabs, &mut report, &mut |p| {
            progress(Progress::new(p.stage, b * total + p.done, batch * total))
        })?;
        slot.assign(&y);
    }
    report.slabs = total;
    report.structure_slabs = firsts;
    report.axis = slabs.axis + x.ndim() - d;
    Ok((out.into_shape_with_order(x.raw_dim()).map_err(|e| Error::Invalid(e.to_string()))?, report))
}
