//! Arrays that stay on the GPU between calls (Python's `lucent.Array` holds a [`DeviceArray`]):
//! upload and download, elementwise arithmetic, comparisons and reductions on the device, and
//! the calls that take and return device arrays (`*_device`), each one submission with the
//! input checked for NaN and infinities on the device (`lucent::engine::resident`).
use std::sync::Arc;

use num_complex::{Complex32, Complex64};
use numpy::{IntoPyArray, PyReadonlyArrayDyn};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::interpolate::How;
use crate::restoration::{rl_options, Set};
use crate::{to_py, Context};
use lucent::engine::binary::{self, BinaryOp};
use lucent::engine::broadcast::{self, BroadcastOp};
use lucent::engine::reduce::{self, Reduction};
use lucent::engine::unary::{self, UnaryOp};
use lucent::engine::{count_nonfinite, layout, resident, Recording};
use lucent::fft::{Norm, Transform};
use lucent::ndimage::{self, Boundary, GaussianFilter, Terms};
use lucent::{Dtype, Gpu, GpuArray};

/// One array in one device buffer, and the GPU it lives on.
#[pyclass(frozen, module = "lucent._lucent")]
pub struct DeviceArray {
    pub gpu: Arc<Gpu>,
    pub array: GpuArray,
}

#[pymethods]
impl DeviceArray {
    #[getter]
    fn shape(&self) -> Vec<usize> {
        self.array.dims().to_vec()
    }

    /// numpy's name of the element type.
    #[getter]
    fn dtype(&self) -> &'static str {
        match self.array.dtype() {
            Dtype::F32 => "float32",
            Dtype::F64 => "float64",
            Dtype::C32 => "complex64",
            Dtype::C64 => "complex128",
            Dtype::U32 => "uint32",
        }
    }

    #[getter]
    fn nbytes(&self) -> u64 {
        self.array.len() as u64 * self.array.dtype().bytes()
    }

    /// The values as a new numpy array (all cores writing it as it streams back).
    fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let (gpu, a) = (&self.gpu, &self.array);
        let one = std::slice::from_ref(a);
        Ok(match a.dtype() {
            Dtype::F32 => py.detach(|| GpuArray::download_joined::<f32>(gpu, one, a.dims())).map_err(to_py)?.into_pyarray(py).into_any(),
            Dtype::F64 => py.detach(|| GpuArray::download_joined::<f64>(gpu, one, a.dims())).map_err(to_py)?.into_pyarray(py).into_any(),
            Dtype::C32 => py.detach(|| a.download_complex::<f32>(gpu)).map_err(to_py)?.into_pyarray(py).into_any(),
            Dtype::C64 => py.detach(|| a.download_complex::<f64>(gpu)).map_err(to_py)?.into_pyarray(py).into_any(),
            Dtype::U32 => py.detach(|| a.download_u32(gpu)).map_err(to_py)?.into_pyarray(py).into_any(),
        })
    }

    /// Whether `other` lives on the same GPU context.
    fn same_context(&self, other: &DeviceArray) -> bool {
        Arc::ptr_eq(&self.gpu, &other.gpu)
    }
}

impl DeviceArray {
    fn like(&self, array: GpuArray) -> DeviceArray {
        DeviceArray { gpu: self.gpu.clone(), array }
    }
}

/// A numpy array to upload, in one of the types a device array holds.
#[derive(FromPyObject)]
pub enum HostArray<'py> {
    F32(PyReadonlyArrayDyn<'py, f32>),
    F64(PyReadonlyArrayDyn<'py, f64>),
    C32(PyReadonlyArrayDyn<'py, Complex32>),
    C64(PyReadonlyArrayDyn<'py, Complex64>),
}

/// `x` copied to the device of `ctx` (its own type: float64 and complex128 need a device with
/// f64, which the Python side checks).
#[pyfunction]
fn upload(py: Python<'_>, ctx: &Context, x: HostArray<'_>) -> PyResult<DeviceArray> {
    let gpu = &ctx.gpu;
    let array = match x {
        HostArray::F32(a) => {
            let v = a.as_array();
            py.detach(|| GpuArray::upload_real(gpu, &v))
        }
        HostArray::F64(a) => {
            let v = a.as_array();
            py.detach(|| GpuArray::upload_real(gpu, &v))
        }
        HostArray::C32(a) => {
            let v = a.as_array();
            py.detach(|| GpuArray::upload_complex(gpu, &v))
        }
        HostArray::C64(a) => {
            let v = a.as_array();
            py.detach(|| GpuArray::upload_complex(gpu, &v))
        }
    }
    .map_err(to_py)?;
    Ok(DeviceArray { gpu: gpu.clone(), array })
}

fn same_gpu(x: &DeviceArray, y: &DeviceArray) -> PyResult<()> {
    match x.same_context(y) {
        true => Ok(()),
        false => Err(PyValueError::new_err("the two arrays live on different lucent contexts (GPUs): move one with lucent.asarray(a, context=...)")),
    }
}

/// `x (op) y` with numpy's broadcasting for real arrays of one type (numpy's ufunc names); for
/// complex arrays of one type and shape, add, subtract and multiply. Returns the result and
/// whether it holds NaN or an infinity (for numpy's overflow / division warning; finite inputs
/// are the caller's to check then).
#[pyfunction]
fn elementwise(py: Python<'_>, op: &str, x: &DeviceArray, y: &DeviceArray) -> PyResult<(DeviceArray, bool)> {
    same_gpu(x, y)?;
    let broadcast_op = match op {
        "add" => BroadcastOp::Add,
        "subtract" => BroadcastOp::Subtract,
        "multiply" => BroadcastOp::Multiply,
        "divide" => BroadcastOp::Divide,
        "maximum" => BroadcastOp::Maximum,
        "minimum" => BroadcastOp::Minimum,
        "less" => BroadcastOp::Less,
        "less_equal" => BroadcastOp::LessEqual,
        "greater" => BroadcastOp::Greater,
        "greater_equal" => BroadcastOp::GreaterEqual,
        "equal" => BroadcastOp::Equal,
        "not_equal" => BroadcastOp::NotEqual,
        other => return Err(PyValueError::new_err(format!("unknown elementwise operation {other}"))),
    };
    let dtype = x.array.dtype();
    if dtype != y.array.dtype() {
        return Err(PyTypeError::new_err(format!("{op} of a {} and a {} array: convert one with .astype()", x.dtype(), y.dtype())));
    }
    let complex = matches!(dtype, Dtype::C32 | Dtype::C64);
    let complex_op = match op {
        "add" => Some(BinaryOp::Add),
        "subtract" => Some(BinaryOp::Sub),
        "multiply" => Some(BinaryOp::ComplexMul),
        _ => None,
    };
    if complex && (complex_op.is_none() || x.array.dims() != y.array.dims()) {
        return Err(PyTypeError::new_err(format!(
            "lucent.Array does {op} of complex arrays only as add, subtract and multiply of one shape; use .get() for the rest"
        )));
    }
    let gpu = &x.gpu;
    let (a, b) = (&x.array, &y.array);
    let (z, flag) = py
        .detach(|| {
            let mut rec = Recording::new(gpu);
            let (xb, yb) = (rec.input(a), rec.input(b));
            let z = match complex_op.filter(|_| complex) {
                Some(op) => binary::record(&mut rec, op, xb, yb)?,
                None => broadcast::record(&mut rec, broadcast_op, xb, yb)?,
            };
            let flag = count_nonfinite::record(&mut rec, z)?;
            let (o, f) = (rec.output(z), rec.download(flag));
            let results = rec.run()?;
            Ok((results.array(o), results.u32(f)?.iter().any(|&v| v != 0)))
        })
        .map_err(to_py)?;
    Ok((x.like(z), flag))
}

/// numpy's absolute, sqrt and negative of a real array (exp and log of float32 ones: SPIR-V
/// has no f64 forms, so float64 goes through numpy on the Python side).
#[pyfunction]
fn unary_op(py: Python<'_>, op: &str, x: &DeviceArray) -> PyResult<DeviceArray> {
    let dtype = x.array.dtype();
    let f64_ok = !matches!(op, "exp" | "log");
    if !(dtype == Dtype::F32 || dtype == Dtype::F64 && f64_ok) {
        return Err(PyTypeError::new_err(format!("{op} of a {} lucent.Array", x.dtype())));
    }
    let u = match op {
        "absolute" => UnaryOp::Abs,
        "sqrt" => UnaryOp::Sqrt,
        "negative" => UnaryOp::Scale(-1.0),
        "exp" => UnaryOp::Exp,
        "log" => UnaryOp::Log,
        other => return Err(PyValueError::new_err(format!("unknown unary operation {other}"))),
    };
    glue(py, x, |rec, b| unary::record(rec, u, b))
}

/// numpy's sum, mean, min and max of a float32 array, whole (a one-element array) or along
/// `axis` (compensated sums; NaN propagates through min and max).
#[pyfunction]
#[pyo3(signature = (op, x, axis=None))]
fn reduction(py: Python<'_>, op: &str, x: &DeviceArray, axis: Option<usize>) -> PyResult<DeviceArray> {
    let r = match op {
        "sum" => Reduction::Sum,
        "mean" => Reduction::Mean,
        "min" => Reduction::Min,
        "max" => Reduction::Max,
        other => return Err(PyValueError::new_err(format!("unknown reduction {other}"))),
    };
    if x.array.dtype() != Dtype::F32 {
        return Err(PyTypeError::new_err(format!("{op} of a {} lucent.Array on the device", x.dtype())));
    }
    glue(py, x, |rec, b| reduce::record(rec, b, r, axis))
}

/// `op` on `x` in one submission, as numpy would (no test of the values: glue between calls).
fn glue(py: Python<'_>, x: &DeviceArray, op: impl FnOnce(&mut Recording, lucent::Buf) -> lucent::Result<lucent::Buf> + Send) -> PyResult<DeviceArray> {
    let (gpu, a) = (&x.gpu, &x.array);
    let y = py
        .detach(|| {
            let mut rec = Recording::new(gpu);
            let b = rec.input(a);
            let y = op(&mut rec, b)?;
            let o = rec.output(y);
            Ok(rec.run()?.array(o))
        })
        .map_err(to_py)?;
    Ok(x.like(y))
}

/// numpy's basic slicing: per axis (start, step, length) as `slice.indices` gives them, then
/// the result viewed as `dims` (the axes an integer index removed, dropped).
#[pyfunction]
fn slice_device(py: Python<'_>, x: &DeviceArray, axes: Vec<(usize, i64, usize)>, dims: Vec<usize>) -> PyResult<DeviceArray> {
    let y = glue(py, x, |rec, b| layout::slice(rec, b, &axes))?;
    reshape_device(&y, dims)
}

/// The same values viewed with another shape (no copy: device arrays are never written in place).
#[pyfunction]
fn reshape_device(x: &DeviceArray, dims: Vec<usize>) -> PyResult<DeviceArray> {
    Ok(x.like(x.array.reinterpret(&dims, x.array.dtype()).map_err(to_py)?))
}

/// numpy.transpose(x, axes).
#[pyfunction]
fn transpose_device(py: Python<'_>, x: &DeviceArray, axes: Vec<usize>) -> PyResult<DeviceArray> {
    glue(py, x, |rec, b| layout::permute(rec, b, &axes))
}

/// `op` on `x` in one submission, the input checked for NaN and infinities there first.
fn on_device(
    py: Python<'_>,
    x: &DeviceArray,
    name: &str,
    op: impl FnOnce(&mut Recording, lucent::Buf) -> lucent::Result<lucent::Buf> + Send,
) -> PyResult<DeviceArray> {
    let (gpu, a) = (&x.gpu, &x.array);
    let y = py.detach(|| resident::apply(gpu, a, name, op)).map_err(to_py)?;
    Ok(x.like(y))
}

fn real_input(x: &DeviceArray, what: &str) -> PyResult<()> {
    match x.array.dtype() {
        Dtype::F32 | Dtype::F64 => Ok(()),
        _ => Err(PyTypeError::new_err(format!("{what} takes a real array, not {}", x.dtype()))),
    }
}

/// gaussian_filter (`which` "filter"), gaussian_laplace ("laplace") or
/// gaussian_gradient_magnitude ("magnitude") of a device array, every parameter as scipy's.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn gaussian_filter_device(
    py: Python<'_>,
    x: &DeviceArray,
    sigma: Vec<f64>,
    order: Vec<usize>,
    radius: Option<Vec<usize>>,
    truncate: f64,
    mode: &str,
    cval: f32,
    which: &str,
) -> PyResult<DeviceArray> {
    real_input(x, "gaussian_filter")?;
    let b = Boundary::from_name(mode, cval).map_err(to_py)?;
    let g = GaussianFilter { sigma, order, truncate, radius };
    let dims = x.array.dims().to_vec();
    let terms = match which {
        "laplace" => ndimage::laplace_of_gaussian_terms(&g, &dims, b),
        "magnitude" => ndimage::gradient_magnitude_terms(&g, &dims, b),
        _ => g.passes(&dims, b).map(|chain| Terms { chains: vec![chain], root_sum_of_squares: false }),
    }
    .map_err(to_py)?;
    on_device(py, x, "input", |rec, b0| ndimage::record_terms(rec, b0, &terms, b))
}

/// uniform_filter of a device array.
#[pyfunction]
fn uniform_filter_device(py: Python<'_>, x: &DeviceArray, size: Vec<usize>, mode: &str, cval: f32) -> PyResult<DeviceArray> {
    real_input(x, "uniform_filter")?;
    let b = Boundary::from_name(mode, cval).map_err(to_py)?;
    let passes = ndimage::uniform_passes(&size, x.array.dims(), b).map_err(to_py)?;
    let terms = Terms { chains: vec![passes], root_sum_of_squares: false };
    on_device(py, x, "input", |rec, b0| ndimage::record_terms(rec, b0, &terms, b))
}

/// shift, zoom, rotate or affine_transform of a device array (`kind`), scipy's parameters:
/// `values` the shift or zoom per axis, or the offset; `matrix` for affine_transform.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (x, kind, values, how, *, grid_mode=false, angle=0.0, axes=[0, 1], reshape=true, matrix=None, output_shape=None))]
fn resample_device(
    py: Python<'_>,
    x: &DeviceArray,
    kind: &str,
    values: Vec<f64>,
    how: How,
    grid_mode: bool,
    angle: f64,
    axes: [isize; 2],
    reshape: bool,
    matrix: Option<PyReadonlyArrayDyn<'_, f64>>,
    output_shape: Option<Vec<usize>>,
) -> PyResult<DeviceArray> {
    real_input(x, kind)?;
    let how = how.sampling()?;
    let dims = x.array.dims().to_vec();
    let (map, out) = match kind {
        "shift" => ndimage::shift_map(&dims, &values),
        "zoom" => ndimage::zoom_map(&dims, &values, grid_mode),
        "rotate" => ndimage::rotate_map(&dims, angle, axes, reshape),
        "affine_transform" => {
            let m = matrix.ok_or_else(|| PyValueError::new_err("affine_transform needs its matrix"))?;
            let out = output_shape.unwrap_or_else(|| dims.clone());
            ndimage::AffineMap::new(&m.as_array(), &values, dims.len()).map(|map| (map, out))
        }
        other => return Err(PyValueError::new_err(format!("unknown resampling {other}"))),
    }
    .map_err(to_py)?;
    lucent::Shape::new(&out).map_err(to_py)?;
    on_device(py, x, "input", |rec, b| ndimage::record_affine_transform(rec, b, &map, &out, &how))
}

/// numpy.fft's fftn, ifftn, rfftn or irfftn (`kind`) of a device array over `axes` (None:
/// every axis); `len` irfftn's output length along the last axis.
#[pyfunction]
fn fft_device(py: Python<'_>, x: &DeviceArray, kind: &str, axes: Option<Vec<usize>>, norm: &str, len: Option<usize>) -> PyResult<DeviceArray> {
    let norm: Norm = norm.parse().map_err(to_py)?;
    let dims = x.array.dims().to_vec();
    let t = match kind {
        "fftn" => Transform::Forward,
        "ifftn" => Transform::Inverse,
        "rfftn" => Transform::RealForward,
        "irfftn" => {
            let last =
                *lucent::fft::check_axes(axes.as_deref().unwrap_or(&(0..dims.len()).collect::<Vec<_>>()), dims.len()).map_err(to_py)?.last().expect("axes");
            let len = match len {
                Some(n) => n,
                None if dims[last] >= 2 => 2 * (dims[last] - 1),
                None => return Err(PyValueError::new_err(format!("irfftn: {} value along axis {last} gives no default output length", dims[last]))),
            };
            Transform::RealInverse { len }
        }
        other => return Err(PyValueError::new_err(format!("unknown transform {other}"))),
    };
    on_device(py, x, "the FFT's input", |rec, b| lucent::fft::record_transform(rec, b, axes.as_deref(), t, norm))
}

/// skimage.registration.phase_cross_correlation of two device images (float32, real space, no
/// masks): the shift, error and phase difference.
#[pyfunction]
fn phase_cross_correlation_device(
    py: Python<'_>,
    reference: &DeviceArray,
    moving: &DeviceArray,
    upsample_factor: f64,
    normalization: &str,
) -> PyResult<(Vec<f64>, Option<f64>, Option<f64>)> {
    same_gpu(reference, moving)?;
    let how = crate::spectral::how(upsample_factor, normalization)?;
    let (gpu, a, b) = (&reference.gpu, &reference.array, &moving.array);
    if b.dtype() != Dtype::F32 || a.dims() != b.dims() {
        return Err(PyValueError::new_err(format!("the reference {:?} and the moving image {:?} {} differ", a.dims(), b.dims(), moving.dtype())));
    }
    let r = py.detach(|| lucent::registration::PhaseCorrelator::new_resident(gpu, a, &how)?.register_resident(b)).map_err(to_py)?;
    Ok((r.shift, r.error, r.phasediff))
}

/// Richardson-Lucy of a device image (float32) by `psf` (host), the estimate on the device,
/// clipped to [-1, 1] there with `clip`.
#[pyfunction]
fn richardson_lucy_device(
    py: Python<'_>,
    image: &DeviceArray,
    psf: PyReadonlyArrayDyn<'_, f32>,
    num_iter: usize,
    clip: bool,
    options: Set<'_>,
) -> PyResult<DeviceArray> {
    let o = rl_options(&options)?;
    let (gpu, a, h) = (&image.gpu, &image.array, psf.as_array());
    let y = py
        .detach(|| {
            let y = lucent::restoration::richardson_lucy_resident(gpu, a, &h, num_iter, &o)?;
            if !clip {
                return Ok(y);
            }
            let mut rec = Recording::new(gpu);
            let b = rec.input(&y);
            let c = unary::record(&mut rec, UnaryOp::Clamp { lo: -1.0, hi: 1.0 }, b)?;
            let out = rec.output(c);
            Ok(rec.run()?.array(out))
        })
        .map_err(to_py)?;
    Ok(image.like(y))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<DeviceArray>()?;
    m.add_function(wrap_pyfunction!(upload, m)?)?;
    m.add_function(wrap_pyfunction!(elementwise, m)?)?;
    m.add_function(wrap_pyfunction!(unary_op, m)?)?;
    m.add_function(wrap_pyfunction!(reduction, m)?)?;
    m.add_function(wrap_pyfunction!(slice_device, m)?)?;
    m.add_function(wrap_pyfunction!(reshape_device, m)?)?;
    m.add_function(wrap_pyfunction!(transpose_device, m)?)?;
    m.add_function(wrap_pyfunction!(gaussian_filter_device, m)?)?;
    m.add_function(wrap_pyfunction!(uniform_filter_device, m)?)?;
    m.add_function(wrap_pyfunction!(resample_device, m)?)?;
    m.add_function(wrap_pyfunction!(fft_device, m)?)?;
    m.add_function(wrap_pyfunction!(phase_cross_correlation_device, m)?)?;
    m.add_function(wrap_pyfunction!(richardson_lucy_device, m)?)?;
    Ok(())
}
