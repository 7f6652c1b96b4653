//! The native module `lucent._lucent`: lucent's one-call functions on numpy arrays, the GIL
//! released while they run. Conventions (defaults, argument forms, dtype conversion) live in the
//! Python package around it (python/lucent); these functions take every argument explicitly, as
//! float32 or complex64 arrays.
use std::sync::Arc;

use numpy::{IntoPyArray, PyArrayDyn};
use pyo3::exceptions::{PyMemoryError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

mod filters;
mod interpolate;
mod measurements;
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
        });
        py.import("json")?.call_method1("loads", (info.to_string(),))
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
    spectral::register(m)?;
    filters::register(m)?;
    interpolate::register(m)?;
    measurements::register(m)?;
    psf::register(m)?;
    restoration::register(m)?;
    tomography::register(m)?;
    Ok(())
}
