//! Richardson-Lucy deconvolution and adaptive denoising. Options come as a dict of the fields a
//! caller set; the rest keep lucent's defaults (`RlOptions::default()`, `Options::default()`).
use std::collections::HashMap;

use numpy::{PyArrayDyn, PyReadonlyArrayDyn};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::{out, Context};
use lucent::denoise::{Method, Options};
use lucent::restoration::{Init, RlBoundary, RlOptions, StopRule};

/// An estimate and a second array (blind RL's PSF).
type ImageAndPsf<'py> = PyResult<(Bound<'py, PyArrayDyn<f32>>, Bound<'py, PyArrayDyn<f32>>)>;
/// An estimate and two chains of values (unsupervised Wiener's noise and prior).
type ImageAndChains<'py> = PyResult<(Bound<'py, PyArrayDyn<f32>>, Vec<f64>, Vec<f64>)>;

type F32<'py> = PyReadonlyArrayDyn<'py, f32>;
type Result<'py> = PyResult<Bound<'py, PyArrayDyn<f32>>>;
pub type Set<'py> = HashMap<String, Bound<'py, PyAny>>;

fn unknown(what: &str, key: &str) -> PyErr {
    PyValueError::new_err(format!("{what}: unknown option '{key}'"))
}

pub fn rl_options(set: &Set<'_>) -> PyResult<RlOptions> {
    let mut o = RlOptions::default();
    for (key, v) in set {
        match key.as_str() {
            "init" => o.init = Init::Constant(v.extract()?),
            "normalize_psf" => o.normalize_psf = v.extract()?,
            "eps" => o.eps = v.extract()?,
            "filter_epsilon" => o.filter_epsilon = Some(v.extract()?),
            "tv" => o.tv = Some(v.extract()?),
            "accelerate" => o.accelerate = v.extract()?,
            "clip_negative" => o.clip_negative = v.extract()?,
            "allow_negative" => o.allow_negative = v.extract()?,
            "stop" => {
                let (tolerance, every) = v.extract()?;
                o.stop = Some(StopRule { tolerance, every });
            }
            "boundary" => {
                o.boundary = match v.extract::<String>()?.as_str() {
                    "zero" => RlBoundary::Zero,
                    "periodic" => RlBoundary::Periodic,
                    "extended" => RlBoundary::Extended,
                    other => return Err(PyValueError::new_err(format!("boundary '{other}' (zero, periodic or extended)"))),
                }
            }
            other => return Err(unknown("richardson_lucy", other)),
        }
    }
    Ok(o)
}

/// Richardson-Lucy of `image` by `psf`; with `grid`, `psf` holds one PSF per region of a grid
/// over the image (`lucent::restoration::richardson_lucy_grid`); with `clip`, the estimate
/// clipped to [-1, 1] as scikit-image's (on every core: numpy's one-thread clip of a 256³
/// result took a third of the call). Returns the estimate and the iterations run.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn richardson_lucy<'py>(
    py: Python<'py>,
    ctx: &Context,
    image: F32<'py>,
    psf: F32<'py>,
    num_iter: usize,
    grid: bool,
    clip: bool,
    options: Set<'py>,
) -> PyResult<(Bound<'py, PyArrayDyn<f32>>, usize)> {
    let o = rl_options(&options)?;
    let (x, h) = (image.as_array(), psf.as_array());
    let mut iterations = 0;
    let count = |p: lucent::restoration::Progress| iterations = p.done;
    let r = py.detach(|| {
        let (mut estimate, _) = if grid {
            lucent::restoration::richardson_lucy_grid(&ctx.gpu, &x, &h, num_iter, &o, count)
        } else {
            lucent::restoration::richardson_lucy_with(&ctx.gpu, &x, &h, num_iter, &o, count)
        }?;
        if clip {
            estimate.par_mapv_inplace(|v| v.clamp(-1.0, 1.0));
        }
        Ok(estimate)
    });
    let estimate = out(py, r)?;
    Ok((estimate, iterations))
}

fn denoise_options(set: &Set<'_>) -> PyResult<Options> {
    let mut o = Options::default();
    for (key, v) in set {
        match key.as_str() {
            "dims" => o.dims = Some(v.extract()?),
            "structure_taps" => o.structure_taps = v.extract()?,
            "reconstruction_taps" => o.reconstruction_taps = v.extract()?,
            "lowpass" => o.lowpass = Some(v.extract()?),
            "tensor_sigma" => o.tensor_sigma = v.extract()?,
            "control_sigma" => o.control_sigma = v.extract()?,
            "sigma" => o.sigma = v.extract()?,
            "alpha" => o.alpha = v.extract()?,
            "beta" => o.beta = v.extract()?,
            "isotropy_alpha" => o.isotropy_alpha = v.extract()?,
            "isotropy_beta" => o.isotropy_beta = v.extract()?,
            "gamma0" => o.gamma0 = v.extract()?,
            "downsample" => o.downsample = v.extract()?,
            "slab_len" => o.slab_len = Some(v.extract()?),
            "method" => {
                o.method = match v.extract::<String>()?.as_str() {
                    "auto" => Method::Auto,
                    "fft" => Method::Fft,
                    "spatial" => Method::Spatial,
                    other => return Err(PyValueError::new_err(format!("method '{other}' (auto, fft or spatial)"))),
                }
            }
            other => return Err(unknown("adaptive_filter", other)),
        }
    }
    Ok(o)
}

/// scikit-image's `denoise_tv_chambolle` (Chambolle's projection, its stopping rule).
#[pyfunction]
fn denoise_tv_chambolle<'py>(
    py: Python<'py>,
    ctx: &Context,
    image: F32<'py>,
    weight: f64,
    eps: f64,
    max_num_iter: usize,
    channel_axis: Option<usize>,
) -> Result<'py> {
    let image = image.as_array();
    out(py, py.detach(|| lucent::denoise::denoise_tv_chambolle(&ctx.gpu, &image, weight, eps, max_num_iter, channel_axis)))
}

/// scikit-image's `denoise_nl_means` (both modes, images and volumes with or without channels).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn denoise_nl_means<'py>(
    py: Python<'py>,
    ctx: &Context,
    image: F32<'py>,
    patch_size: usize,
    patch_distance: usize,
    h: f64,
    fast_mode: bool,
    sigma: f64,
    channel_axis: Option<usize>,
) -> Result<'py> {
    let image = image.as_array();
    let o = lucent::denoise::NlMeans { patch_size, patch_distance, h, fast_mode, sigma };
    out(py, py.detach(|| lucent::denoise::denoise_nl_means(&ctx.gpu, &image, &o, channel_axis)))
}

/// bm4d's `bm4d(z, sigma_psd, profile, stage_arg)`: the noise's σ, or its PSD (`psd`) when
/// given; `stage` "all" or "hard_thresholding", or Wiener filtering on `pilot`; `profile` bm4d's
/// field names over lucent's profile for the shape.
#[pyfunction]
#[pyo3(signature = (ctx, z, sigma, psd, stage, pilot, profile))]
#[allow(clippy::too_many_arguments)]
fn bm4d<'py>(
    py: Python<'py>,
    ctx: &Context,
    z: F32<'py>,
    sigma: f64,
    psd: Option<F32<'py>>,
    stage: &str,
    pilot: Option<F32<'py>>,
    profile: Set<'py>,
) -> Result<'py> {
    let z = z.as_array();
    let psd = psd.as_ref().map(|a| a.as_array());
    let noise = match psd {
        Some(p) => lucent::denoise::Bm4dNoise::Psd(p),
        None => lucent::denoise::Bm4dNoise::Sigma(sigma),
    };
    // With no field changed the library chooses (the noise's covariance computed once).
    let mut chosen = None;
    for (key, value) in &profile {
        let p = match &mut chosen {
            Some(p) => p,
            None => chosen.insert(lucent::denoise::Bm4dProfile::for_noise(z.shape(), &noise).map_err(crate::to_py)?),
        };
        let triple = |v: &Bound<'py, PyAny>| -> PyResult<[usize; 3]> { v.extract::<[usize; 3]>() };
        match key.as_str() {
            "bs_ht" => p.bs_ht = triple(value)?,
            "step_ht" => p.step_ht = triple(value)?,
            "max_stack_size_ht" => p.max_stack_size_ht = value.extract()?,
            "search_window_ht" => p.search_window_ht = triple(value)?,
            "tau_match" => p.tau_match = value.extract()?,
            "lambda_thr" => p.lambda_thr = value.extract()?,
            "beta" => p.beta = value.extract()?,
            "bs_wiener" => p.bs_wiener = triple(value)?,
            "step_wiener" => p.step_wiener = triple(value)?,
            "max_stack_size_wiener" => p.max_stack_size_wiener = value.extract()?,
            "search_window_wiener" => p.search_window_wiener = triple(value)?,
            "tau_match_wiener" => p.tau_match_wiener = value.extract()?,
            "mu2" => p.mu2 = value.extract()?,
            "beta_wiener" => p.beta_wiener = value.extract()?,
            "search_window_time" => p.search_window_time = value.extract()?,
            other => return Err(unknown("bm4d", other)),
        }
    }
    let pilot = pilot.as_ref().map(|a| a.as_array());
    let stage = match (stage, pilot) {
        ("all", None) => lucent::denoise::Bm4dStage::All,
        ("hard_thresholding", None) => lucent::denoise::Bm4dStage::HardThresholding,
        ("wiener", Some(p)) => lucent::denoise::Bm4dStage::Wiener(p),
        (other, _) => return Err(PyValueError::new_err(format!("bm4d: stage_arg {other:?}: 'all', 'hard_thresholding' or a first estimate"))),
    };
    out(py, py.detach(|| lucent::denoise::bm4d(&ctx.gpu, &z, &noise, chosen.as_ref(), stage)))
}

/// scikit-image's `denoise_tv_bregman`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn denoise_tv_bregman<'py>(
    py: Python<'py>,
    ctx: &Context,
    image: F32<'py>,
    weight: f64,
    max_num_iter: usize,
    eps: f64,
    isotropic: bool,
    channel_axis: Option<usize>,
) -> Result<'py> {
    let image = image.as_array();
    let o = lucent::denoise::Bregman { weight, max_num_iter, eps, isotropic };
    out(py, py.detach(|| lucent::denoise::denoise_tv_bregman(&ctx.gpu, &image, &o, channel_axis)))
}

/// scikit-image's `estimate_sigma` of one image (channels are the caller's loop), in f64.
#[pyfunction]
fn estimate_sigma(py: Python<'_>, image: numpy::PyReadonlyArrayDyn<'_, f64>) -> PyResult<f64> {
    let image = image.as_array();
    py.detach(|| lucent::denoise::estimate_sigma(&image)).map_err(crate::to_py)
}

#[pyfunction]
fn adaptive_filter<'py>(py: Python<'py>, ctx: &Context, x: F32<'py>, options: Set<'py>) -> Result<'py> {
    let o = denoise_options(&options)?;
    let x = x.as_array();
    out(py, py.detach(|| lucent::denoise::adaptive_filter(&ctx.gpu, &x, &o)))
}

/// The halo of a chunk of Richardson-Lucy along an axis where the PSF has `psf_extent` elements
/// (lucent.dask's; `lucent::restoration::rl_halo`).
#[pyfunction]
fn rl_halo(psf_extent: usize, iterations: usize) -> usize {
    lucent::restoration::rl_halo(psf_extent, iterations)
}

/// Blind Richardson-Lucy from the initial PSF `psf` (lucent::restoration::blind_richardson_lucy):
/// the estimate and the recovered PSF.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn blind_richardson_lucy<'py>(
    py: Python<'py>,
    ctx: &Context,
    image: F32<'py>,
    psf: F32<'py>,
    num_iter: usize,
    psf_iter: usize,
    psf_prior: f64,
    options: Set<'py>,
) -> ImageAndPsf<'py> {
    let o = lucent::restoration::BlindOptions { iterations: num_iter, object_iterations: 1, psf_iterations: psf_iter, psf_prior, rl: rl_options(&options)? };
    let (x, h) = (image.as_array(), psf.as_array());
    let r = py.detach(|| lucent::restoration::blind_richardson_lucy(&ctx.gpu, &x, &h, &o));
    let r = r.map_err(crate::to_py)?;
    Ok((out(py, Ok(r.estimate))?, out(py, Ok(r.psf))?))
}

/// Unsupervised Wiener-Hunt (lucent::restoration::unsupervised_wiener): the posterior mean and
/// the noise and prior chains.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn unsupervised_wiener<'py>(
    py: Python<'py>,
    ctx: &Context,
    image: F32<'py>,
    psf: F32<'py>,
    threshold: f64,
    max_num_iter: usize,
    min_num_iter: usize,
    burnin: usize,
    clip: bool,
    seed: u64,
) -> ImageAndChains<'py> {
    let p = lucent::restoration::GibbsParams { threshold, max_num_iter, min_num_iter, burnin };
    let (x, h) = (image.as_array(), psf.as_array());
    let r = py.detach(|| lucent::restoration::unsupervised_wiener(&ctx.gpu, &x, &h, &p, clip, seed)).map_err(crate::to_py)?;
    Ok((out(py, Ok(r.estimate))?, r.noise, r.prior))
}

/// The model PSF's (planes, pixels) for an image of `shape` (lucent::psf::size_for_image).
#[pyfunction]
fn psf_size_for_image(shape: Vec<usize>) -> PyResult<(usize, usize)> {
    lucent::psf::size_for_image(&shape).map_err(crate::to_py)
}

/// Wiener-Hunt deconvolution (scikit-image's `wiener` with the Laplacian regulariser).
#[pyfunction]
fn wiener<'py>(py: Python<'py>, ctx: &Context, image: F32<'py>, psf: F32<'py>, balance: f64, clip: bool) -> Result<'py> {
    let (image, psf) = (image.as_array(), psf.as_array());
    out(py, py.detach(|| lucent::restoration::wiener(&ctx.gpu, &image, &psf, balance, clip)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(wiener, m)?)?;
    m.add_function(wrap_pyfunction!(blind_richardson_lucy, m)?)?;
    m.add_function(wrap_pyfunction!(unsupervised_wiener, m)?)?;
    m.add_function(wrap_pyfunction!(psf_size_for_image, m)?)?;
    m.add_function(wrap_pyfunction!(richardson_lucy, m)?)?;
    m.add_function(wrap_pyfunction!(rl_halo, m)?)?;
    m.add_function(wrap_pyfunction!(adaptive_filter, m)?)?;
    m.add_function(wrap_pyfunction!(bm4d, m)?)?;
    m.add_function(wrap_pyfunction!(denoise_tv_bregman, m)?)?;
    m.add_function(wrap_pyfunction!(denoise_tv_chambolle, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_sigma, m)?)?;
    m.add_function(wrap_pyfunction!(denoise_nl_means, m)?)?;
    Ok(())
}
