//! scipy.ndimage's filters.
use numpy::{PyArrayDyn, PyReadonlyArrayDyn};
use pyo3::prelude::*;

use crate::{on_real, out, to_py, Context, RealArray};
use lucent::ndimage::{self, AxisFilter, Boundary};

type F64<'py> = PyReadonlyArrayDyn<'py, f64>;
/// A float32 or float64 result (the input's type).
type Any<'py> = PyResult<Bound<'py, PyAny>>;

fn boundary(mode: &str, cval: f32) -> PyResult<Boundary> {
    Boundary::from_name(mode, cval).map_err(to_py)
}

/// scipy.ndimage.correlate, or convolve with `flip`, at scipy's `origin`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn correlate<'py>(py: Python<'py>, ctx: &Context, input: RealArray<'py>, weights: F64<'py>, mode: &str, cval: f32, flip: bool, origin: Vec<i64>) -> Any<'py> {
    let b = boundary(mode, cval)?;
    let w = ndimage::origin_weights(&weights.as_array(), &origin, flip).map_err(to_py)?;
    on_real!(py, input, |x: T| ndimage::correlate(&ctx.gpu, &x, &w.mapv(|v| v as T), b))
}

/// scipy.ndimage.correlate1d, or convolve1d with `flip`, at scipy's `origin`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn correlate1d<'py>(
    py: Python<'py>,
    ctx: &Context,
    input: RealArray<'py>,
    weights: Vec<f64>,
    axis: usize,
    mode: &str,
    cval: f32,
    flip: bool,
    origin: i64,
) -> Any<'py> {
    let b = boundary(mode, cval)?;
    let w = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[weights.len()]), weights).expect("one axis");
    let w = ndimage::origin_weights(&w.view(), &[origin], flip).map_err(to_py)?;
    on_real!(py, input, |x: T| ndimage::correlate1d(&ctx.gpu, &x, &w.iter().map(|&v| v as T).collect::<Vec<T>>(), axis, b))
}

/// scipy.ndimage.gaussian_filter with every parameter (per-axis sigma, order and radius) and
/// the filters built on it: `which` is "filter", "laplace" (gaussian_laplace) or "magnitude"
/// (gaussian_gradient_magnitude).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn gaussian_filter<'py>(
    py: Python<'py>,
    ctx: &Context,
    input: RealArray<'py>,
    sigma: Vec<f64>,
    order: Vec<usize>,
    radius: Option<Vec<usize>>,
    truncate: f64,
    mode: &str,
    cval: f32,
    which: &str,
) -> Any<'py> {
    let b = boundary(mode, cval)?;
    let g = ndimage::GaussianFilter { sigma, order, truncate, radius };
    let gpu = &ctx.gpu;
    on_real!(py, input, |x: T| match which {
        "laplace" => ndimage::gaussian_laplace(gpu, &x, &g, b),
        "magnitude" => ndimage::gaussian_gradient_magnitude(gpu, &x, &g, b),
        _ => ndimage::gaussian_filter_with(gpu, &x, &g, b),
    })
}

/// scipy.ndimage.sobel / prewitt along `axis` (`which` "sobel" or "prewitt"), or laplace.
#[pyfunction]
fn edge_filter<'py>(py: Python<'py>, ctx: &Context, input: RealArray<'py>, which: &str, axis: isize, mode: &str, cval: f32) -> Any<'py> {
    let b = boundary(mode, cval)?;
    let gpu = &ctx.gpu;
    on_real!(py, input, |x: T| match which {
        "sobel" => ndimage::sobel(gpu, &x, axis, b),
        "prewitt" => ndimage::prewitt(gpu, &x, axis, b),
        _ => ndimage::laplace(gpu, &x, b),
    })
}

#[pyfunction]
fn uniform_filter<'py>(py: Python<'py>, ctx: &Context, input: RealArray<'py>, size: Vec<usize>, mode: &str, cval: f32) -> Any<'py> {
    let b = boundary(mode, cval)?;
    on_real!(py, input, |x: T| ndimage::uniform_filter(&ctx.gpu, &x, &size, b))
}

/// The halo of a chunk of gaussian_filter (`sigma`) or uniform_filter (`size`) along one axis
/// (lucent.dask's; `lucent::ndimage::filter_halo`).
#[pyfunction]
#[pyo3(signature = (*, sigma=None, size=None))]
fn filter_halo(sigma: Option<f64>, size: Option<usize>) -> PyResult<usize> {
    match (sigma, size) {
        (Some(sigma), None) => Ok(ndimage::filter_halo(AxisFilter::Gaussian(sigma))),
        (None, Some(size)) => Ok(ndimage::filter_halo(AxisFilter::Uniform(size))),
        _ => Err(pyo3::exceptions::PyValueError::new_err("filter_halo takes one of sigma and size")),
    }
}

/// Minimum or maximum filters and grey morphology over a footprint (`which`: "minimum",
/// "maximum", "erosion", "dilation"), `structure` the grey structure's values (or None).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn footprint_filter<'py>(
    py: Python<'py>,
    ctx: &Context,
    input: RealArray<'py>,
    which: &str,
    footprint: PyReadonlyArrayDyn<'py, bool>,
    structure: Option<F64<'py>>,
    origin: Vec<i64>,
    mode: &str,
    cval: f32,
) -> Any<'py> {
    let b = boundary(mode, cval)?;
    let f = footprint.as_array();
    let s = structure.as_ref().map(|s| s.as_array());
    let gpu = &ctx.gpu;
    on_real!(py, input, |x: T| {
        let s = s.as_ref().map(|s| s.mapv(|v| v as T));
        let s = s.as_ref().map(|s| s.view());
        match which {
            "minimum" => ndimage::minimum_filter(gpu, &x, &f, &origin, b),
            "maximum" => ndimage::maximum_filter(gpu, &x, &f, &origin, b),
            "erosion" => ndimage::grey_erosion(gpu, &x, &f, s.as_ref(), &origin, b),
            _ => ndimage::grey_dilation(gpu, &x, &f, s.as_ref(), &origin, b),
        }
    })
}

/// scipy.ndimage.rank_filter over a footprint (the rank already within its taps or negative).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn rank_filter<'py>(
    py: Python<'py>,
    ctx: &Context,
    input: RealArray<'py>,
    rank: i64,
    footprint: PyReadonlyArrayDyn<'py, bool>,
    origin: Vec<i64>,
    mode: &str,
    cval: f32,
) -> Any<'py> {
    let b = boundary(mode, cval)?;
    let f = footprint.as_array();
    on_real!(py, input, |x: T| ndimage::rank_filter(&ctx.gpu, &x, rank, &f, &origin, b))
}

/// Binary morphology (`which`: "erosion", "dilation", "opening", "closing", "fill_holes").
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn binary_morphology<'py>(
    py: Python<'py>,
    ctx: &Context,
    input: PyReadonlyArrayDyn<'py, bool>,
    which: &str,
    structure: PyReadonlyArrayDyn<'py, bool>,
    iterations: usize,
    border_value: bool,
    origin: Vec<i64>,
    mask: Option<PyReadonlyArrayDyn<'py, bool>>,
) -> PyResult<Bound<'py, PyArrayDyn<bool>>> {
    let x = input.as_array();
    let b = ndimage::Binary { structure: structure.as_array(), iterations, border_value, origin, mask: mask.as_ref().map(|m| m.as_array()) };
    out(
        py,
        py.detach(|| match which {
            "erosion" => ndimage::binary_erosion(&ctx.gpu, &x, &b),
            "dilation" => ndimage::binary_dilation(&ctx.gpu, &x, &b),
            "opening" => ndimage::binary_opening(&ctx.gpu, &x, &b),
            "fill_holes" => ndimage::binary_fill_holes(&ctx.gpu, &x, &b.structure, &b.origin),
            _ => ndimage::binary_closing(&ctx.gpu, &x, &b),
        }),
    )
}

/// scipy.ndimage.distance_transform_edt's distances (float64) of a mask's true elements
/// (lucent::ndimage::distance_transform_edt_mask).
#[pyfunction]
fn distance_transform_edt<'py>(
    py: Python<'py>,
    ctx: &Context,
    input: PyReadonlyArrayDyn<'py, bool>,
    sampling: Vec<f64>,
) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
    let x = input.as_array();
    out(py, py.detach(|| ndimage::distance_transform_edt_mask(&ctx.gpu, &x, &sampling)))
}

type DistancesAndIndices<'py> = (Bound<'py, PyArrayDyn<f64>>, Bound<'py, PyArrayDyn<i32>>);

/// scipy.ndimage.distance_transform_edt's distances and feature transform (the int32 indices of
/// each element's nearest zero, shape (ndim, ...)) of a mask.
#[pyfunction]
fn distance_transform_edt_indices<'py>(
    py: Python<'py>,
    ctx: &Context,
    input: PyReadonlyArrayDyn<'py, bool>,
    sampling: Vec<f64>,
) -> PyResult<DistancesAndIndices<'py>> {
    let x = input.as_array();
    let (d, i) = py.detach(|| ndimage::distance_transform_edt_mask_with_indices(&ctx.gpu, &x, &sampling)).map_err(to_py)?;
    Ok((out(py, Ok(d))?, out(py, Ok(i))?))
}

/// scipy.ndimage.label (lucent::ndimage::label): the labels (int32, scipy's type) and their
/// count.
#[pyfunction]
fn label<'py>(
    py: Python<'py>,
    ctx: &Context,
    input: PyReadonlyArrayDyn<'py, bool>,
    structure: PyReadonlyArrayDyn<'py, bool>,
) -> PyResult<(Bound<'py, PyArrayDyn<i32>>, usize)> {
    let (x, s) = (input.as_array(), structure.as_array());
    let (labels, n) = py.detach(|| ndimage::label(&ctx.gpu, &x, &s)).map_err(to_py)?;
    // Counts stay below 2^31 (the element limit), so the u32 labels are i32 bit for bit: no copy.
    let shape = labels.raw_dim();
    let (words, _) = labels.into_raw_vec_and_offset();
    let signed = ndarray::ArrayD::from_shape_vec(shape, bytemuck::cast_vec::<u32, i32>(words)).expect("the same length");
    Ok((out(py, Ok(signed))?, n))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(filter_halo, m)?)?;
    m.add_function(wrap_pyfunction!(correlate, m)?)?;
    m.add_function(wrap_pyfunction!(correlate1d, m)?)?;
    m.add_function(wrap_pyfunction!(gaussian_filter, m)?)?;
    m.add_function(wrap_pyfunction!(edge_filter, m)?)?;
    m.add_function(wrap_pyfunction!(footprint_filter, m)?)?;
    m.add_function(wrap_pyfunction!(binary_morphology, m)?)?;
    m.add_function(wrap_pyfunction!(distance_transform_edt, m)?)?;
    m.add_function(wrap_pyfunction!(distance_transform_edt_indices, m)?)?;
    m.add_function(wrap_pyfunction!(label, m)?)?;
    m.add_function(wrap_pyfunction!(rank_filter, m)?)?;
    m.add_function(wrap_pyfunction!(uniform_filter, m)?)?;
    Ok(())
}
