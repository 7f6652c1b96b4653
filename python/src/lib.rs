//! The native module `lucent._lucent`: lucent's one-call functions on numpy arrays, the GIL
//! released while they run. Conventions (defaults, argument forms, dtype conversion) live in the
//! Python package around it (python/lucent); these functions take every argument explicitly, as
//! float32 or complex64 arrays.
use std::sync::Arc;

use numpy::{IntoPyArray, PyArrayDyn};
use pyo3::exceptions::{PyMemoryError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

mod array;
mod filters;
mod interpolate;
mod io;
mod measurements;
mod phantom;
mod psf;
mod restoration;
mod spectral;
mod tomography;

/// One GPU and its caches (plans, kernel spectra, pipelines), shared by every call given it.
#[pyclass(frozen, module = "lucent._lucent")]
pub struct Context {
    pub gpu: Arc<lucent::Gpu>,
}

#[pymethods]
impl Context {
    /// Opens the adapter whose name contains `adapter` or whose index it is (None: the
    /// LUCENT_ADAPTER environment variable, else discrete > integrated > CPU).
    #[new]
    #[pyo3(signature = (adapter=None))]
    fn new(py: Python<'_>, adapter: Option<String>) -> PyResult<Context> {
        let gpu = py.detach(|| lucent::Gpu::with_adapter(adapter.as_deref())).map_err(to_py)?;
        Ok(Context { gpu: Arc::new(gpu) })
    }

    /// The adapter and its limits.
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let gpu = &self.gpu;
        let info = serde_json::json!({
            "adapter": gpu.summary(),
            "max_buffer_bytes": gpu.max_buffer_bytes(),
            "device_memory_bytes": gpu.device_memory_bytes(),
            "memory_budget_bytes": gpu.memory_budget_bytes(),
            "timestamps": gpu.has_timestamps(),
            "filters_f32": gpu.filters_f32(),
            "f64": gpu.has_f64(),
        });
        py.import("json")?.call_method1("loads", (info.to_string(),))
    }

    /// Device memory held by lucent's buffers, in bytes: `(in_use, kept)`, those in use (arrays,
    /// plans' tables) and those kept for reuse (bounded). Flat over a loop that drops what it
    /// no longer needs.
    fn held_bytes(&self) -> (u64, u64) {
        self.gpu.held_bytes()
    }

    /// Whether the device computes float64 data in f64 (SHADER_F64; else lucent computes it in
    /// float32).
    #[getter]
    fn f64(&self) -> bool {
        self.gpu.has_f64()
    }

    fn __repr__(&self) -> String {
        let s = self.gpu.summary();
        format!("lucent.Context(adapter={:?}, backend={}, type={})", s.name, s.backend, s.device_type)
    }
}

/// Every adapter this process can see.
#[pyfunction]
fn adapters(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    let list = serde_json::to_string(&py.detach(lucent::Gpu::list_adapters)).unwrap_or_else(|_| "[]".into());
    py.import("json")?.call_method1("loads", (list,))
}

/// A real input array: float32, or float64 (computed in f64 where the device has it, else in
/// f32; returned as float64 either way).
#[derive(FromPyObject)]
pub enum RealArray<'py> {
    F32(numpy::PyReadonlyArrayDyn<'py, f32>),
    F64(numpy::PyReadonlyArrayDyn<'py, f64>),
}

/// `$body` with `$x` the input's array view of its own element type `$t` (f32 or f64), the GIL
/// released, the result handed to numpy in that type.
#[macro_export]
macro_rules! on_real {
    ($py:expr, $input:expr, |$x:ident: $t:ident| $body:expr) => {
        match $input {
            $crate::RealArray::F32(a) => {
                #[allow(dead_code)]
                type $t = f32;
                let $x = a.as_array();
                $crate::out($py, $py.detach(|| $body)).map(|a| a.into_any())
            }
            $crate::RealArray::F64(a) => {
                #[allow(dead_code)]
                type $t = f64;
                let $x = a.as_array();
                $crate::out($py, $py.detach(|| $body)).map(|a| a.into_any())
            }
        }
    };
}

/// A complex input array: complex64, or complex128 (computed in f64 where the device has it,
/// else in f32; returned as complex128 either way).
#[derive(FromPyObject)]
pub enum ComplexArray<'py> {
    C32(numpy::PyReadonlyArrayDyn<'py, num_complex::Complex32>),
    C64(numpy::PyReadonlyArrayDyn<'py, num_complex::Complex64>),
}

/// [`on_real!`] for a [`ComplexArray`]: `$t` is the real type of its precision.
#[macro_export]
macro_rules! on_complex {
    ($py:expr, $input:expr, |$x:ident: $t:ident| $body:expr) => {
        match $input {
            $crate::ComplexArray::C32(a) => {
                #[allow(dead_code)]
                type $t = f32;
                let $x = a.as_array();
                $crate::out($py, $py.detach(|| $body)).map(|a| a.into_any())
            }
            $crate::ComplexArray::C64(a) => {
                #[allow(dead_code)]
                type $t = f64;
                let $x = a.as_array();
                $crate::out($py, $py.detach(|| $body)).map(|a| a.into_any())
            }
        }
    };
}

/// lucent's error as the Python exception a caller expects: bad input is a ValueError.
pub fn to_py(e: lucent::Error) -> PyErr {
    use lucent::Error::*;
    let message = e.to_string();
    match e {
        Shape(_) | Empty(_) | Invalid(_) | NonFinite(_) | Dtype(_) => PyValueError::new_err(message),
        TooLarge { .. } | OutOfMemory(_) => PyMemoryError::new_err(message),
        File { .. } | Io(_) => PyOSError::new_err(message),
        NoAdapter(_) | AdapterNotFound(_) | Device(_) | Validation(_) | DeviceLost(_) => PyRuntimeError::new_err(message),
    }
}

/// A result array handed to numpy without a copy.
pub fn out<'py, T: numpy::Element>(py: Python<'py>, r: lucent::Result<ndarray::ArrayD<T>>) -> PyResult<Bound<'py, PyArrayDyn<T>>> {
    Ok(r.map_err(to_py)?.into_pyarray(py))
}

#[pymodule]
fn _lucent(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<Context>()?;
    m.add_function(wrap_pyfunction!(adapters, m)?)?;
    array::register(m)?;
    spectral::register(m)?;
    filters::register(m)?;
    interpolate::register(m)?;
    measurements::register(m)?;
    psf::register(m)?;
    restoration::register(m)?;
    tomography::register(m)?;
    io::register(m)?;
    phantom::register(m)?;
    Ok(())
}
