//! scipy.ndimage's measurements of labelled regions (lucent::ndimage::measurements).
use ndarray::ArrayViewD;
use numpy::PyReadonlyArrayDyn;
use pyo3::prelude::*;

use crate::to_py;
use lucent::ndimage::{self, Regions};

/// The values measured: float32 and float64 as given (Python casts other types to float64).
#[derive(FromPyObject)]
enum Values<'py> {
    F32(PyReadonlyArrayDyn<'py, f32>),
    F64(PyReadonlyArrayDyn<'py, f64>),
}

/// The labels: int32 (lucent.ndimage.label's) and int64 as given (Python casts the others).
#[derive(FromPyObject)]
enum Labels<'py> {
    I32(PyReadonlyArrayDyn<'py, i32>),
    I64(PyReadonlyArrayDyn<'py, i64>),
}

fn regions<'a, L>(labels: ArrayViewD<'a, L>, index: &'a Option<Vec<i64>>) -> Regions<'a, L> {
    match index {
        None => Regions::Labelled(labels),
        Some(i) => Regions::Each(labels, i),
    }
}

/// Calls `$f(input, extra.., regions)` with the input's and the labels' element types.
macro_rules! measure {
    ($py:expr, $f:path, $input:expr, $labels:expr, $index:expr $(, $extra:expr)*) => {{
        let index = &$index;
        let r = match (&$input, &$labels) {
            (Values::F32(a), None) => { let x = a.as_array(); $py.detach(|| $f(&x $(, $extra)*, &Regions::<i32>::Whole)) }
            (Values::F64(a), None) => { let x = a.as_array(); $py.detach(|| $f(&x $(, $extra)*, &Regions::<i32>::Whole)) }
            (Values::F32(a), Some(Labels::I32(l))) => { let (x, r) = (a.as_array(), regions(l.as_array(), index)); $py.detach(|| $f(&x $(, $extra)*, &r)) }
            (Values::F64(a), Some(Labels::I32(l))) => { let (x, r) = (a.as_array(), regions(l.as_array(), index)); $py.detach(|| $f(&x $(, $extra)*, &r)) }
            (Values::F32(a), Some(Labels::I64(l))) => { let (x, r) = (a.as_array(), regions(l.as_array(), index)); $py.detach(|| $f(&x $(, $extra)*, &r)) }
            (Values::F64(a), Some(Labels::I64(l))) => { let (x, r) = (a.as_array(), regions(l.as_array(), index)); $py.detach(|| $f(&x $(, $extra)*, &r)) }
        };
        r.map_err(to_py)
    }};
}

/// sum_labels, mean or variance of each region.
#[pyfunction]
#[pyo3(signature = (input, labels, index, which))]
fn label_moments(py: Python<'_>, input: Values<'_>, labels: Option<Labels<'_>>, index: Option<Vec<i64>>, which: &str) -> PyResult<Vec<f64>> {
    match which {
        "sum" => measure!(py, ndimage::sum_labels, input, labels, index),
        "mean" => measure!(py, ndimage::mean, input, labels, index),
        "variance" => measure!(py, ndimage::variance, input, labels, index),
        _ => Err(pyo3::exceptions::PyValueError::new_err(format!("unknown moment {which}"))),
    }
}

type Extreme = (f64, f64, Vec<usize>, Vec<usize>);

/// extrema of each region (None: empty).
#[pyfunction]
fn label_extrema(py: Python<'_>, input: Values<'_>, labels: Option<Labels<'_>>, index: Option<Vec<i64>>) -> PyResult<Vec<Option<Extreme>>> {
    let e = measure!(py, ndimage::extrema, input, labels, index)?;
    Ok(e.into_iter().map(|e| e.map(|e| (e.min, e.max, e.min_position, e.max_position))).collect())
}

/// median of each region (None: empty).
#[pyfunction]
fn label_median(py: Python<'_>, input: Values<'_>, labels: Option<Labels<'_>>, index: Option<Vec<i64>>) -> PyResult<Vec<Option<f64>>> {
    measure!(py, ndimage::median, input, labels, index)
}

/// center_of_mass of each region.
#[pyfunction]
fn label_center_of_mass(py: Python<'_>, input: Values<'_>, labels: Option<Labels<'_>>, index: Option<Vec<i64>>) -> PyResult<Vec<Vec<f64>>> {
    measure!(py, ndimage::center_of_mass, input, labels, index)
}

/// histogram of each region (None: empty).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn label_histogram(
    py: Python<'_>,
    input: Values<'_>,
    labels: Option<Labels<'_>>,
    index: Option<Vec<i64>>,
    min: f64,
    max: f64,
    bins: usize,
) -> PyResult<Vec<Option<Vec<u64>>>> {
    measure!(py, ndimage::histogram, input, labels, index, min, max, bins)
}

/// Each label's box, (start, stop) per axis.
type Boxes = Vec<Option<Vec<(usize, usize)>>>;

/// find_objects: (start, stop) per axis of each label 1..=max_label, None where absent.
#[pyfunction]
fn find_objects(py: Python<'_>, labels: Labels<'_>, max_label: usize) -> PyResult<Boxes> {
    let boxes = match &labels {
        Labels::I32(l) => {
            let l = l.as_array();
            py.detach(|| ndimage::find_objects(&l, max_label))
        }
        Labels::I64(l) => {
            let l = l.as_array();
            py.detach(|| ndimage::find_objects(&l, max_label))
        }
    }
    .map_err(to_py)?;
    Ok(boxes.into_iter().map(|b| b.map(|b| b.into_iter().map(|r| (r.start, r.end)).collect())).collect())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(label_moments, m)?)?;
    m.add_function(wrap_pyfunction!(label_extrema, m)?)?;
    m.add_function(wrap_pyfunction!(label_median, m)?)?;
    m.add_function(wrap_pyfunction!(label_center_of_mass, m)?)?;
    m.add_function(wrap_pyfunction!(label_histogram, m)?)?;
    m.add_function(wrap_pyfunction!(find_objects, m)?)?;
    Ok(())
}
