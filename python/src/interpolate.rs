//! scipy.ndimage's interpolation.
use numpy::{PyArrayDyn, PyReadonlyArrayDyn};
use pyo3::prelude::*;

use crate::{on_complex, on_real, out, to_py, ComplexArray, Context, RealArray};
use lucent::ndimage::{self, Sampler, Sampling, SplineMode};

type F32<'py> = PyReadonlyArrayDyn<'py, f32>;
type Result<'py> = PyResult<Bound<'py, PyArrayDyn<f32>>>;
/// A float32 or float64 result (the input's type).
type Any<'py> = PyResult<Bound<'py, PyAny>>;

/// scipy's (order, mode, cval, prefilter) and lucent's sampler.
#[derive(FromPyObject)]
pub struct How(u32, String, f32, bool, String);

impl How {
    pub fn sampling(&self) -> PyResult<Sampling> {
        let How(order, mode, cval, prefilter, sampler) = self;
        Ok(Sampling {
            order: *order,
            mode: SplineMode::parse(mode).map_err(to_py)?,
            cval: *cval,
            prefilter: *prefilter,
            sampler: Sampler::parse(sampler).map_err(to_py)?,
        })
    }
}

/// scipy.ndimage.spline_filter (axis None) or spline_filter1d of `order`.
#[pyfunction]
fn spline_filter<'py>(py: Python<'py>, ctx: &Context, input: RealArray<'py>, order: u32, axis: Option<usize>, mode: &str) -> Any<'py> {
    let mode = SplineMode::parse(mode).map_err(to_py)?;
    on_real!(py, input, |x: T| match axis {
        None => ndimage::spline_filter(&ctx.gpu, &x, order, mode),
        Some(axis) => ndimage::spline_filter1d(&ctx.gpu, &x, order, axis, mode),
    })
}

#[pyfunction]
fn map_coordinates<'py>(py: Python<'py>, ctx: &Context, input: RealArray<'py>, coordinates: PyReadonlyArrayDyn<'py, f64>, how: How) -> Any<'py> {
    let how = how.sampling()?;
    let c = coordinates.as_array();
    on_real!(py, input, |x: T| ndimage::map_coordinates(&ctx.gpu, &x, &c.mapv(|v| v as T), &how))
}

#[pyfunction]
fn affine_transform<'py>(
    py: Python<'py>,
    ctx: &Context,
    input: RealArray<'py>,
    matrix: PyReadonlyArrayDyn<'py, f64>,
    offset: Vec<f64>,
    output_shape: Option<Vec<usize>>,
    how: How,
) -> Any<'py> {
    let how = how.sampling()?;
    let m = matrix.as_array();
    on_real!(py, input, |x: T| ndimage::affine_transform(&ctx.gpu, &x, &m, &offset, output_shape.as_deref(), &how))
}

#[pyfunction]
fn shift<'py>(py: Python<'py>, ctx: &Context, input: RealArray<'py>, shift: Vec<f64>, how: How) -> Any<'py> {
    let how = how.sampling()?;
    on_real!(py, input, |x: T| ndimage::shift(&ctx.gpu, &x, &shift, &how))
}

#[pyfunction]
fn zoom<'py>(py: Python<'py>, ctx: &Context, input: RealArray<'py>, zoom: Vec<f64>, grid_mode: bool, how: How) -> Any<'py> {
    let how = how.sampling()?;
    on_real!(py, input, |x: T| ndimage::zoom(&ctx.gpu, &x, &zoom, grid_mode, &how))
}

#[pyfunction]
fn rotate<'py>(py: Python<'py>, ctx: &Context, input: RealArray<'py>, angle: f64, axes: [isize; 2], reshape: bool, how: How) -> Any<'py> {
    let how = how.sampling()?;
    on_real!(py, input, |x: T| ndimage::rotate(&ctx.gpu, &x, angle, axes, reshape, &how))
}

/// pycudadecon's deskewGPU geometry, or coverslip coordinates (lucent::ndimage::deskew).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn deskew<'py>(
    py: Python<'py>,
    ctx: &Context,
    input: F32<'py>,
    angle: f64,
    dzdata: f64,
    dxdata: f64,
    width: usize,
    shift: f64,
    rotate: bool,
    how: How,
) -> Result<'py> {
    let how = how.sampling()?;
    let x = input.as_array();
    let x = x
        .view()
        .into_dimensionality::<ndarray::Ix3>()
        .map_err(|_| to_py(lucent::Error::Shape(format!("deskew takes a stack of 3 axes (planes, rows, columns), got {:?}", x.shape()))))?;
    let geometry = ndimage::Deskew { angle, dzdata, dxdata, width, shift, rotate };
    out(py, py.detach(|| ndimage::deskew(&ctx.gpu, &x, &geometry, &how).map(|y| y.into_dyn())))
}

/// scipy.ndimage's Fourier filters of a spectrum (complex64 or complex128): `which` is "shift",
/// "gaussian", "uniform" or "ellipsoid", `values` the shift, sigma or size.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn fourier_filter<'py>(py: Python<'py>, ctx: &Context, input: ComplexArray<'py>, which: &str, values: Vec<f64>, n: Option<usize>, axis: isize) -> Any<'py> {
    if !["shift", "gaussian", "uniform", "ellipsoid"].contains(&which) {
        return Err(pyo3::exceptions::PyValueError::new_err(format!("unknown Fourier filter {which}")));
    }
    on_complex!(py, input, |x: T| match which {
        "shift" => ndimage::fourier_shift(&ctx.gpu, &x, &values, n, axis),
        "gaussian" => ndimage::fourier_gaussian(&ctx.gpu, &x, &values, n, axis),
        "uniform" => ndimage::fourier_uniform(&ctx.gpu, &x, &values, n, axis),
        _ => ndimage::fourier_ellipsoid(&ctx.gpu, &x, &values, n, axis),
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(spline_filter, m)?)?;
    m.add_function(wrap_pyfunction!(map_coordinates, m)?)?;
    m.add_function(wrap_pyfunction!(affine_transform, m)?)?;
    m.add_function(wrap_pyfunction!(shift, m)?)?;
    m.add_function(wrap_pyfunction!(zoom, m)?)?;
    m.add_function(wrap_pyfunction!(rotate, m)?)?;
    m.add_function(wrap_pyfunction!(fourier_filter, m)?)?;
    m.add_function(wrap_pyfunction!(deskew, m)?)?;
    Ok(())
}
