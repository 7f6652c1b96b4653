//! Files through lucent's own readers and writers (`lucent::io`, chosen by extension: .npy,
//! .tif/.tiff, .png, Zarr arrays and OME-Zarr images), for lucent.io and the napari plugin.
use std::path::PathBuf;

use numpy::{IntoPyArray, PyReadonlyArrayDyn};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::to_py;
use lucent::io::{self, zarr, Loaded};

/// A real or complex array to write, in the element types lucent writes.
#[derive(FromPyObject)]
enum Data<'py> {
    Real(PyReadonlyArrayDyn<'py, f32>),
    Complex(PyReadonlyArrayDyn<'py, num_complex::Complex32>),
}

/// The whole file as float32 or complex64, as lucent reads it (within the host memory budget).
#[pyfunction]
fn read(py: Python<'_>, path: PathBuf) -> PyResult<Bound<'_, PyAny>> {
    match py.detach(|| io::read(&path)).map_err(to_py)? {
        Loaded::Real(a) => Ok(a.into_pyarray(py).into_any()),
        Loaded::Complex(a) => Ok(a.into_pyarray(py).into_any()),
    }
}

/// The OME-Zarr metadata of the image or array at `path` (in a Zarr store) as JSON text:
/// {"axes", "transforms", "name"}, each null where the store has none.
#[pyfunction]
fn read_ome(py: Python<'_>, path: PathBuf) -> PyResult<String> {
    let ome = py.detach(|| zarr::Source::open(&path).map(|s| s.ome().clone())).map_err(to_py)?;
    Ok(serde_json::json!({"axes": ome.axes, "transforms": ome.transforms, "name": ome.name}).to_string())
}

/// Writes `data` atomically, its format by extension; a Zarr output is an OME-Zarr image with
/// `ome`'s axes and coordinate transformations (JSON text as [`read_ome`] returns) where given.
#[pyfunction]
#[pyo3(signature = (path, data, ome=None))]
fn write(py: Python<'_>, path: PathBuf, data: Data<'_>, ome: Option<String>) -> PyResult<()> {
    let ome = match ome {
        None => None,
        Some(text) => {
            let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| PyValueError::new_err(format!("OME metadata: {e}")))?;
            Some(zarr::Ome {
                axes: v.get("axes").cloned().filter(|a| !a.is_null()),
                transforms: v.get("transforms").cloned().filter(|t| !t.is_null()),
                name: v.get("name").and_then(|n| n.as_str()).map(str::to_owned),
            })
        }
    };
    match data {
        Data::Real(a) => {
            let x = a.as_array();
            py.detach(|| {
                io::check_output(&path, x.ndim(), false)?;
                match (&ome, io::is_zarr(&path)) {
                    (Some(ome), true) => zarr::write(&path, &x, Some(ome)),
                    _ => io::write_real(&path, &x),
                }
            })
        }
        Data::Complex(a) => {
            let x = a.as_array();
            py.detach(|| io::check_output(&path, x.ndim(), true).and_then(|_| io::write_complex(&path, &x)))
        }
    }
    .map_err(to_py)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(read, m)?)?;
    m.add_function(wrap_pyfunction!(read_ome, m)?)?;
    m.add_function(wrap_pyfunction!(write, m)?)?;
    Ok(())
}
