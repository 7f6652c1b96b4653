//! numpy.fft, scipy.signal's convolutions and the registrations built on correlation.
use num_complex::Complex32;
use numpy::{PyArrayDyn, PyReadonlyArrayDyn};
use pyo3::prelude::*;

use crate::{on_complex, on_real, out, to_py, ComplexArray, Context, RealArray};
use lucent::fft::Norm;
use lucent::registration::{Normalization, PadMode, PhaseCorrelation, TemplateMatch};
use lucent::signal::{Method, Mode};

type C64<'py> = PyReadonlyArrayDyn<'py, Complex32>;
type F32<'py> = PyReadonlyArrayDyn<'py, f32>;
type Tmat = lucent::registration::Tmat;
/// (matrix rows, offset, metric, iterations).
type Fitted = (Vec<Vec<f64>>, Vec<f64>, f64, usize);
type Bool<'py> = PyReadonlyArrayDyn<'py, bool>;

fn parse_norm(name: &str) -> PyResult<Norm> {
    name.parse().map_err(to_py)
}

#[pyfunction]
fn fftn<'py>(py: Python<'py>, ctx: &Context, x: ComplexArray<'py>, axes: Vec<usize>, norm: &str) -> PyResult<Bound<'py, PyAny>> {
    let n = parse_norm(norm)?;
    on_complex!(py, x, |x: T| lucent::fft::fftn(&ctx.gpu, &x, Some(&axes), n))
}

#[pyfunction]
fn ifftn<'py>(py: Python<'py>, ctx: &Context, x: ComplexArray<'py>, axes: Vec<usize>, norm: &str) -> PyResult<Bound<'py, PyAny>> {
    let n = parse_norm(norm)?;
    on_complex!(py, x, |x: T| lucent::fft::ifftn(&ctx.gpu, &x, Some(&axes), n))
}

#[pyfunction]
fn rfftn<'py>(py: Python<'py>, ctx: &Context, x: RealArray<'py>, axes: Vec<usize>, norm: &str) -> PyResult<Bound<'py, PyAny>> {
    let n = parse_norm(norm)?;
    on_real!(py, x, |x: T| lucent::fft::rfftn(&ctx.gpu, &x, Some(&axes), n))
}

#[pyfunction]
fn irfftn<'py>(py: Python<'py>, ctx: &Context, x: ComplexArray<'py>, axes: Vec<usize>, len: usize, norm: &str) -> PyResult<Bound<'py, PyAny>> {
    let n = parse_norm(norm)?;
    on_complex!(py, x, |x: T| lucent::fft::irfftn(&ctx.gpu, &x, Some(&axes), Some(len), n))
}

/// scipy.signal.convolve (or correlate, with `flip` false) by `method` fft, direct or auto: two
/// float32 arrays, or two float64 arrays (computed in f64 where the device has it).
#[pyfunction]
fn convolve<'py>(
    py: Python<'py>,
    ctx: &Context,
    in1: RealArray<'py>,
    in2: RealArray<'py>,
    mode: &str,
    method: &str,
    correlate: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let mode: Mode = mode.parse().map_err(to_py)?;
    let method: Method = method.parse().map_err(to_py)?;
    match (in1, in2) {
        (RealArray::F32(a), RealArray::F32(b)) => {
            let (a, b) = (a.as_array(), b.as_array());
            let f = if correlate { lucent::signal::correlate } else { lucent::signal::convolve };
            out(py, py.detach(|| f(&ctx.gpu, &a, &b, mode, method))).map(|a| a.into_any())
        }
        (RealArray::F64(a), RealArray::F64(b)) => {
            let (a, b) = (a.as_array(), b.as_array());
            let f = if correlate { lucent::signal::correlate } else { lucent::signal::convolve };
            out(py, py.detach(|| f(&ctx.gpu, &a, &b, mode, method))).map(|a| a.into_any())
        }
        _ => Err(pyo3::exceptions::PyTypeError::new_err("in1 and in2 must both be float32 or both float64")),
    }
}

type Registered = (Vec<f64>, Option<f64>, Option<f64>);

pub fn how(upsample_factor: f64, normalization: &str) -> PyResult<PhaseCorrelation> {
    Ok(PhaseCorrelation { upsample_factor, normalization: Normalization::parse(normalization).map_err(to_py)? })
}

#[pyfunction]
fn phase_cross_correlation(
    py: Python<'_>,
    ctx: &Context,
    reference: F32<'_>,
    moving: F32<'_>,
    upsample_factor: f64,
    normalization: &str,
) -> PyResult<Registered> {
    let how = how(upsample_factor, normalization)?;
    let (a, b) = (reference.as_array(), moving.as_array());
    let r = py.detach(|| lucent::registration::phase_cross_correlation(&ctx.gpu, &a, &b, &how)).map_err(to_py)?;
    Ok((r.shift, r.error, r.phasediff))
}

#[pyfunction]
fn phase_cross_correlation_spectra(
    py: Python<'_>,
    ctx: &Context,
    reference: C64<'_>,
    moving: C64<'_>,
    upsample_factor: f64,
    normalization: &str,
) -> PyResult<Registered> {
    let how = how(upsample_factor, normalization)?;
    let (a, b) = (reference.as_array(), moving.as_array());
    let r = py.detach(|| lucent::registration::phase_cross_correlation_spectra(&ctx.gpu, &a, &b, &how)).map_err(to_py)?;
    Ok((r.shift, r.error, r.phasediff))
}

#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn masked_phase_cross_correlation(
    py: Python<'_>,
    ctx: &Context,
    reference: F32<'_>,
    moving: F32<'_>,
    reference_mask: Bool<'_>,
    moving_mask: Bool<'_>,
    overlap_ratio: f64,
    upsample_factor: f64,
) -> PyResult<Vec<f64>> {
    let (a, b, ma, mb) = (reference.as_array(), moving.as_array(), reference_mask.as_array(), moving_mask.as_array());
    py.detach(|| lucent::registration::masked_phase_cross_correlation(&ctx.gpu, &a, &b, &ma, &mb, overlap_ratio, upsample_factor)).map_err(to_py)
}

#[pyfunction]
fn cross_correlate_masked<'py>(
    py: Python<'py>,
    ctx: &Context,
    fixed: F32<'py>,
    moving: F32<'py>,
    fixed_mask: Bool<'py>,
    moving_mask: Bool<'py>,
    overlap_ratio: f64,
) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
    let (a, b, ma, mb) = (fixed.as_array(), moving.as_array(), fixed_mask.as_array(), moving_mask.as_array());
    out(py, py.detach(|| lucent::registration::cross_correlate_masked(&ctx.gpu, &a, &b, &ma, &mb, overlap_ratio)))
}

#[pyfunction]
fn match_template<'py>(
    py: Python<'py>,
    ctx: &Context,
    image: F32<'py>,
    template: F32<'py>,
    pad_input: bool,
    mode: &str,
    constant_values: f32,
) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
    let how = TemplateMatch { pad_input, mode: PadMode::parse(mode, constant_values).map_err(to_py)? };
    let (a, t) = (image.as_array(), template.as_array());
    out(py, py.detach(|| lucent::registration::match_template(&ctx.gpu, &a, &t, &how)))
}

/// (scale, angle in degrees, tvec (rows, columns), the translation's error, the background value).
type Similar = (f64, f64, (f64, f64), f64, f32);

/// imreg_dft's similarity.
#[pyfunction]
fn similarity(py: Python<'_>, ctx: &Context, im0: F32<'_>, im1: F32<'_>, numiter: usize, order: u32, upsample_factor: f64) -> PyResult<Similar> {
    let o = lucent::registration::SimilarityOptions { numiter, order, upsample_factor, fixed_scale: false };
    let (a, b) = (im0.as_array(), im1.as_array());
    let r = py.detach(|| lucent::registration::similarity(&ctx.gpu, &a, &b, &o)).map_err(to_py)?;
    Ok((r.scale, r.angle, (r.tvec[0], r.tvec[1]), r.error, r.bgval))
}

/// imreg_dft's transform_img (constant background `bgval`).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn transform_similarity<'py>(
    py: Python<'py>,
    ctx: &Context,
    img: F32<'py>,
    scale: f64,
    angle: f64,
    tvec: (f64, f64),
    bgval: f32,
    order: u32,
) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
    let x = img.as_array();
    out(py, py.detach(|| lucent::registration::transform_similarity(&ctx.gpu, &x, scale, angle, [tvec.0, tvec.1], bgval, order)))
}

/// (scale, angle in degrees, shift (z, y, x), success, the background value).
type Similar3d = (f64, f64, (f64, f64, f64), f64, f32);

/// lucent::registration::similarity_3d: a turn about `axis`, a scale and a shift of volumes.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn similarity_3d(
    py: Python<'_>,
    ctx: &Context,
    im0: F32<'_>,
    im1: F32<'_>,
    axis: usize,
    numiter: usize,
    order: u32,
    upsample_factor: f64,
) -> PyResult<Similar3d> {
    let o = lucent::registration::SimilarityOptions { numiter, order, upsample_factor, fixed_scale: false };
    let (a, b) = (im0.as_array(), im1.as_array());
    let r = py.detach(|| lucent::registration::similarity_3d(&ctx.gpu, &a, &b, axis, &o)).map_err(to_py)?;
    Ok((r.scale, r.angle, (r.shift[0], r.shift[1], r.shift[2]), r.success, r.bgval))
}

/// lucent::registration::transform_3d (constant background `bgval`).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn transform_similarity_3d<'py>(
    py: Python<'py>,
    ctx: &Context,
    img: F32<'py>,
    axis: usize,
    scale: f64,
    angle: f64,
    tvec: (f64, f64, f64),
    bgval: f32,
    order: u32,
) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
    let x = img.as_array();
    let t = lucent::registration::Similarity3d { axis, scale, angle, shift: [tvec.0, tvec.1, tvec.2], success: 1.0, bgval };
    out(py, py.detach(|| lucent::registration::transform_3d(&ctx.gpu, &x, &t, order)))
}

/// pystackreg's register_stack of a (frames, rows, columns) stack: one 3 × 3 matrix per frame.
#[pyfunction]
fn register_stack(
    py: Python<'_>,
    ctx: &Context,
    stack: F32<'_>,
    transformation: &str,
    reference: &str,
    n_frames: usize,
    upsample_factor: f64,
) -> PyResult<Vec<Tmat>> {
    use lucent::registration::{StackReference, StackTransform};
    let transform = match transformation {
        "translation" => StackTransform::Translation,
        "rigid_body" => StackTransform::RigidBody,
        "scaled_rotation" => StackTransform::ScaledRotation,
        "affine" => StackTransform::Affine,
        other => return Err(pyo3::exceptions::PyValueError::new_err(format!("unknown transformation {other}"))),
    };
    let reference = match reference {
        "previous" => StackReference::Previous,
        "first" => StackReference::First(n_frames),
        "mean" => StackReference::Mean,
        other => return Err(pyo3::exceptions::PyValueError::new_err(format!("Unknown reference \"{other}\""))),
    };
    let x = stack.as_array();
    let x = x.into_dimensionality::<ndarray::Ix3>().map_err(|_| to_py(lucent::Error::Shape("register_stack takes a stack of 3 axes".into())))?;
    py.detach(|| lucent::registration::register_stack(&ctx.gpu, &x, transform, reference, upsample_factor)).map_err(to_py)
}

/// pystackreg's transform_stack (spline `order`, zeros beyond each frame).
#[pyfunction]
fn transform_stack<'py>(py: Python<'py>, ctx: &Context, stack: F32<'py>, tmats: Vec<Tmat>, order: u32) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
    let x = stack.as_array();
    let x = x.into_dimensionality::<ndarray::Ix3>().map_err(|_| to_py(lucent::Error::Shape("transform_stack takes a stack of 3 axes".into())))?;
    out(py, py.detach(|| lucent::registration::transform_stack(&ctx.gpu, &x, &tmats, order).map(|y| y.into_dyn())))
}

/// Intensity-based 2D/3D registration (lucent::registration::register_affine_masked): the
/// fixed → moving map (scipy.ndimage.affine_transform's matrix and offset), the final metric and
/// the steps taken.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn register_affine(
    py: Python<'_>,
    ctx: &Context,
    fixed: F32<'_>,
    moving: F32<'_>,
    kind: &str,
    metric: &str,
    bins: usize,
    optimizer: &str,
    steps: (f64, f64, f64),
    masks: (Option<Bool<'_>>, Option<Bool<'_>>),
    shrink_factors: Vec<usize>,
    smoothing_sigmas: Vec<f64>,
    iterations: usize,
    tolerance: f64,
    initial: Option<(Vec<Vec<f64>>, Vec<f64>)>,
    start_similarity: bool,
) -> PyResult<Fitted> {
    use lucent::registration::{AffineOptions, Metric, Optimizer, TransformKind};
    let bad = |what: &str, got: &str, choices: &str| pyo3::exceptions::PyValueError::new_err(format!("{what} {got}: {choices}"));
    let kind = match kind {
        "translation" => TransformKind::Translation,
        "rigid" => TransformKind::Rigid,
        "similarity" => TransformKind::Similarity,
        "affine" => TransformKind::Affine,
        other => return Err(bad("transform", other, "translation, rigid, similarity or affine")),
    };
    let metric = match metric {
        "ms" | "mean_squares" => Metric::MeanSquares,
        "ncc" | "correlation" => Metric::Correlation,
        "mi" | "mattes_mutual_information" => Metric::MattesMutualInformation { bins },
        other => return Err(bad("metric", other, "ms (mean_squares), ncc (correlation) or mi (mattes_mutual_information)")),
    };
    let optimizer = match optimizer {
        "auto" => Optimizer::Auto,
        "lm" | "levenberg_marquardt" => Optimizer::LevenbergMarquardt,
        "lbfgs" => Optimizer::Lbfgs,
        "regular_step" => Optimizer::RegularStep { learning_rate: steps.0, min_step: steps.1, relaxation: steps.2 },
        other => return Err(bad("optimizer", other, "auto, lm, lbfgs or regular_step")),
    };
    let initial = initial.map(|(matrix, offset)| lucent::ndimage::AffineMap { matrix, offset });
    let o = AffineOptions { kind, metric, optimizer, shrink_factors, smoothing_sigmas, iterations, tolerance, initial };
    let (a, b) = (fixed.as_array(), moving.as_array());
    let (fm, mm) = (masks.0.as_ref().map(|m| m.as_array()), masks.1.as_ref().map(|m| m.as_array()));
    let r = py
        .detach(|| {
            let mut o = o;
            if start_similarity {
                if a.ndim() != 2 {
                    return Err(lucent::Error::Invalid("initial=\"similarity\" starts 2D registrations (the Fourier-Mellin method is 2D)".into()));
                }
                o.initial = Some(lucent::registration::similarity_start(&ctx.gpu, &a, &b, &Default::default())?);
            }
            lucent::registration::register_affine_masked(&ctx.gpu, &a, &b, fm.as_ref(), mm.as_ref(), &o)
        })
        .map_err(to_py)?;
    Ok((r.map.matrix, r.map.offset, r.metric, r.iterations))
}

/// skimage.registration.optical_flow_ilk (lucent::registration::optical_flow_ilk): the flow
/// (ndim, *shape).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn optical_flow_ilk<'py>(
    py: Python<'py>,
    ctx: &Context,
    reference: F32<'py>,
    moving: F32<'py>,
    radius: usize,
    num_warp: usize,
    gaussian: bool,
    prefilter: bool,
) -> PyResult<Bound<'py, numpy::PyArrayDyn<f32>>> {
    let o = lucent::registration::IlkOptions { radius, num_warp, gaussian, prefilter };
    let (a, b) = (reference.as_array(), moving.as_array());
    out(py, py.detach(|| lucent::registration::optical_flow_ilk(&ctx.gpu, &a, &b, &o)))
}

/// skimage.registration.optical_flow_tvl1 (lucent::registration::optical_flow_tvl1): the flow
/// (ndim, *shape).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn optical_flow_tvl1<'py>(
    py: Python<'py>,
    ctx: &Context,
    reference: F32<'py>,
    moving: F32<'py>,
    attachment: f64,
    tightness: f64,
    num_warp: usize,
    num_iter: usize,
    tol: f64,
    prefilter: bool,
) -> PyResult<Bound<'py, numpy::PyArrayDyn<f32>>> {
    let o = lucent::registration::Tvl1Options { attachment, tightness, num_warp, num_iter, tol, prefilter };
    let (a, b) = (reference.as_array(), moving.as_array());
    out(py, py.detach(|| lucent::registration::optical_flow_tvl1(&ctx.gpu, &a, &b, &o)))
}

/// An ITK transform file's text for a map (lucent::registration::itk_transform).
#[pyfunction]
fn itk_transform(matrix: Vec<Vec<f64>>, offset: Vec<f64>) -> String {
    lucent::registration::itk_transform(&lucent::ndimage::AffineMap { matrix, offset })
}

/// The map of an ITK transform file's text (lucent::registration::parse_itk_transform).
#[pyfunction]
fn parse_itk_transform(text: &str) -> PyResult<(Vec<Vec<f64>>, Vec<f64>)> {
    let m = lucent::registration::parse_itk_transform(text).map_err(to_py)?;
    Ok((m.matrix, m.offset))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fftn, m)?)?;
    m.add_function(wrap_pyfunction!(similarity, m)?)?;
    m.add_function(wrap_pyfunction!(register_stack, m)?)?;
    m.add_function(wrap_pyfunction!(register_affine, m)?)?;
    m.add_function(wrap_pyfunction!(itk_transform, m)?)?;
    m.add_function(wrap_pyfunction!(optical_flow_ilk, m)?)?;
    m.add_function(wrap_pyfunction!(optical_flow_tvl1, m)?)?;
    m.add_function(wrap_pyfunction!(parse_itk_transform, m)?)?;
    m.add_function(wrap_pyfunction!(transform_stack, m)?)?;
    m.add_function(wrap_pyfunction!(transform_similarity, m)?)?;
    m.add_function(wrap_pyfunction!(similarity_3d, m)?)?;
    m.add_function(wrap_pyfunction!(transform_similarity_3d, m)?)?;
    m.add_function(wrap_pyfunction!(ifftn, m)?)?;
    m.add_function(wrap_pyfunction!(rfftn, m)?)?;
    m.add_function(wrap_pyfunction!(irfftn, m)?)?;
    m.add_function(wrap_pyfunction!(convolve, m)?)?;
    m.add_function(wrap_pyfunction!(phase_cross_correlation, m)?)?;
    m.add_function(wrap_pyfunction!(phase_cross_correlation_spectra, m)?)?;
    m.add_function(wrap_pyfunction!(masked_phase_cross_correlation, m)?)?;
    m.add_function(wrap_pyfunction!(cross_correlate_masked, m)?)?;
    m.add_function(wrap_pyfunction!(match_template, m)?)?;
    Ok(())
}
