//! Image restoration on the GPU: [`richardson_lucy`], scikit-image's update
//! (`estimate *= mirror(psf) ⊛ (image / (psf ⊛ estimate + eps))`) with lucent's options
//! ([`RlOptions`]: boundaries, TV regularisation, acceleration, a stopping rule).
//!
//! A call runs the whole iteration resident on the device when the image fits, else in tiles
//! with guard bands (also the path of spatially varying PSFs: [`richardson_lucy_grid`]). FFT
//! plans and pipelines are cached on the `Gpu`, so the next image of the same shape starts at
//! once. [`RichardsonLucy`] is the step-by-step form (record iterations into pipelines).
//!
//! ```no_run
//! use lucent::restoration::{richardson_lucy, RlOptions};
//! let gpu = lucent::Gpu::new()?;
//! let image = ndarray::Array3::<f32>::from_elem((32, 128, 128), 0.5);
//! let psf = ndarray::Array3::<f32>::from_elem((5, 9, 9), 1.0);
//! let restored = richardson_lucy(&gpu, &image, &psf, 30, &RlOptions::default())?;
//! # Ok::<(), lucent::Error>(())
//! ```

use ndarray::{Array, ArrayBase, Data, Dimension};

use crate::error::Result;
use crate::gpu::{with_dim, Gpu, GpuArray};
use crate::ops::deconvolve;

pub mod specimen;

pub use crate::ops::deconvolve::blind::{blind_richardson_lucy, blind_richardson_lucy_with, check_blind, BlindOptions, BlindReport, BlindResult};
pub use crate::ops::deconvolve::tiles::{halo_width as rl_halo, richardson_lucy_tiled, working_set_bytes, PsfGrid, TileOptions, TiledReport, TiledResult};
pub use crate::ops::deconvolve::unsupervised::{unsupervised_wiener, GibbsParams, Unsupervised};
pub use crate::ops::deconvolve::wiener::{check_wiener, record_wiener, wiener};
pub use crate::ops::deconvolve::{check_iterations, restore as richardson_lucy_on, Geometry, RlResult};
pub use crate::ops::deconvolve::{Init, Progress, RichardsonLucy, RlBoundary, RlOptions, RlReport, RlRun, StopRule};
pub use crate::placement::Piece;

/// The CPU references (f64), with the semantics of the GPU functions: what `--device cpu` runs
/// and what the tests compare against.
pub mod cpu {
    pub use crate::ops::deconvolve::blind::blind_richardson_lucy_reference as blind_richardson_lucy;
    pub use crate::ops::deconvolve::cpu::{convolve, richardson_lucy, richardson_lucy_with, CpuResult};
    pub use crate::ops::deconvolve::tiles::richardson_lucy_tiled_cpu;
    pub use crate::ops::deconvolve::unsupervised::unsupervised_wiener_reference as unsupervised_wiener;
    pub use crate::ops::deconvolve::wiener::wiener_reference as wiener;
}

/// Richardson-Lucy deconvolution of `image` by `psf` (the image's rank, or fewer axes: applied
/// to each slice along the leading axes), `num_iter` iterations (fewer when `opts.stop` ends
/// the run).
pub fn richardson_lucy<S1, S2, D1, D2>(
    gpu: &Gpu,
    image: &ArrayBase<S1, D1>,
    psf: &ArrayBase<S2, D2>,
    num_iter: usize,
    opts: &RlOptions,
) -> Result<Array<f32, D1>>
where
    S1: Data<Elem = f32>,
    S2: Data<Elem = f32>,
    D1: Dimension,
    D2: Dimension,
{
    Ok(richardson_lucy_with(gpu, image, psf, num_iter, opts, |_| {})?.0)
}

/// [`richardson_lucy`] calling `progress` after each iteration, and reporting how it ran.
pub fn richardson_lucy_with<S1, S2, D1, D2>(
    gpu: &Gpu,
    image: &ArrayBase<S1, D1>,
    psf: &ArrayBase<S2, D2>,
    num_iter: usize,
    opts: &RlOptions,
    progress: impl FnMut(Progress),
) -> Result<(Array<f32, D1>, RlRun)>
where
    S1: Data<Elem = f32>,
    S2: Data<Elem = f32>,
    D1: Dimension,
    D2: Dimension,
{
    let psf = psf.view().into_dyn();
    let (estimate, run, _) = deconvolve::restore(std::slice::from_ref(gpu), &image.view().into_dyn(), &PsfGrid::single(psf), num_iter, opts, progress)?;
    Ok((with_dim(estimate)?, run))
}

/// [`richardson_lucy`] of an image already on the device (f32), the estimate left there: the
/// whole image resident on `gpu` (in chunks where it exceeds one buffer; `Error::TooLarge`
/// where it does not fit the device, as there is no host copy to tile).
pub fn richardson_lucy_resident<S, D>(gpu: &Gpu, image: &GpuArray, psf: &ArrayBase<S, D>, num_iter: usize, opts: &RlOptions) -> Result<GpuArray>
where
    S: Data<Elem = f32>,
    D: Dimension,
{
    Ok(RichardsonLucy::new_resident(gpu, image, &psf.view().into_dyn(), num_iter, opts)?.run_resident(|_| {})?.0)
}

/// Richardson-Lucy with a spatially varying PSF: `psfs` of shape (GY, GX, psf...) holds one PSF
/// per region of a GY × GX grid over the last two axes; each region is deconvolved with its own
/// (in tiles blended without seams).
pub fn richardson_lucy_grid<S1, S2, D1, D2>(
    gpu: &Gpu,
    image: &ArrayBase<S1, D1>,
    psfs: &ArrayBase<S2, D2>,
    num_iter: usize,
    opts: &RlOptions,
    progress: impl FnMut(Progress),
) -> Result<(Array<f32, D1>, RlRun)>
where
    S1: Data<Elem = f32>,
    S2: Data<Elem = f32>,
    D1: Dimension,
    D2: Dimension,
{
    let psfs = psfs.view().into_dyn();
    let grid = match psfs.shape() {
        [gy, gx, _, ..] => [*gy, *gx],
        other => return Err(crate::Error::Shape(format!("a PSF grid has shape (GY, GX, psf...), not {other:?}"))),
    };
    let psfs = PsfGrid::new(psfs, grid)?;
    let (estimate, run, _) = deconvolve::restore(std::slice::from_ref(gpu), &image.view().into_dyn(), &psfs, num_iter, opts, progress)?;
    Ok((with_dim(estimate)?, run))
}
