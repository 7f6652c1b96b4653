//! Synthetic objects with known truth (`lucent::phantom`), for lucent.phantom and the napari
//! plugin's sample data: the arrays `lucent phantom` and `lucent demo` write.
use numpy::{IntoPyArray, PyArray2, PyArray3, PyArrayDyn};
use pyo3::prelude::*;

use crate::to_py;
use lucent::phantom::{aooct, dynamic, shepp_logan};
use lucent::restoration::specimen;
use lucent::Error;

type F32<'py> = Bound<'py, PyArrayDyn<f32>>;
type Volume<'py> = Bound<'py, PyArray3<f32>>;

/// Fails unless every length of `shape` lies in `lengths` and the array of f32 fits the host budget.
fn check_shape(what: &str, shape: &[usize], lengths: std::ops::RangeInclusive<usize>) -> PyResult<()> {
    if shape.iter().any(|n| !lengths.contains(n)) {
        return Err(to_py(Error::Invalid(format!("{what}: shape {shape:?}, each length from {} to {}", lengths.start(), lengths.end()))));
    }
    lucent::host::check_host_array(what, shape, 8).map_err(to_py)
}

/// Toft's modified Shepp-Logan phantom, n×n, values in [0, 1].
#[pyfunction]
fn shepp_logan_image(py: Python<'_>, n: usize) -> PyResult<Bound<'_, PyArray2<f32>>> {
    check_shape("the Shepp-Logan phantom", &[n, n], 1..=65536)?;
    Ok(py.detach(|| shepp_logan::image(n).mapv(|v| v as f32)).into_pyarray(py))
}

/// The phantom's exact parallel-beam sinogram [angle][detector] in lucent.tomography's geometry.
#[pyfunction]
#[pyo3(signature = (n, angles, detectors=None, center=None))]
fn shepp_logan_sinogram(py: Python<'_>, n: usize, angles: Vec<f64>, detectors: Option<usize>, center: Option<f64>) -> PyResult<Bound<'_, PyArray2<f32>>> {
    check_shape("the Shepp-Logan phantom", &[n, n], 1..=65536)?;
    let g = lucent::tomography::Geometry::new(n, angles, detectors, center).map_err(to_py)?;
    Ok(py.detach(|| shepp_logan::sinogram(n, &g.angles, &g.detector_coordinates()).mapv(|v| v as f32)).into_pyarray(py))
}

/// An AO-OCT series: the reference volume (slow, depth, fast), `count` moving volumes and each
/// one's registering shift per B-scan (count, slow, 3), in the array's axis order.
#[pyfunction]
fn aooct_series<'py>(
    py: Python<'py>,
    shape: [usize; 3],
    count: usize,
    motion: (f64, f64, f64, usize, f64),
    seed: u64,
) -> PyResult<(Volume<'py>, Vec<Volume<'py>>, Bound<'py, PyArray3<f64>>)> {
    check_shape("each AO-OCT volume", &shape, 2..=4096)?;
    let (drift, tremor, axial, saccades, saccade) = motion;
    let motion = aooct::EyeMotion { drift, tremor, axial, saccades, saccade };
    let amplitudes = [drift, tremor, axial, saccade];
    if amplitudes.iter().any(|v| !(v.is_finite() && (0.0..=1e4).contains(v))) || saccades > shape[0] {
        let message = format!("eye motion {amplitudes:?} (finite, 0 to 10000 voxels), {saccades} saccades (at most one per B-scan, {})", shape[0]);
        return Err(to_py(Error::Invalid(message)));
    }
    let s = py.detach(|| aooct::series(shape, count, &motion, seed));
    let truth = ndarray::Array3::from_shape_fn((count, shape[0], 3), |(v, j, a)| s.truth[v][j][a]);
    Ok((s.reference.into_pyarray(py), s.moving.into_iter().map(|m| m.into_pyarray(py)).collect(), truth.into_pyarray(py)))
}

/// The 4D moving edge (t, z, y, x) and it plus Gaussian noise of `sigma`.
#[pyfunction]
fn moving_edge(py: Python<'_>, shape: [usize; 4], speed: f64, sigma: f64, seed: u64) -> PyResult<(F32<'_>, F32<'_>)> {
    check_shape("the moving edge", &shape, 1..=65536)?;
    if !(speed.is_finite() && sigma.is_finite() && sigma >= 0.0) {
        return Err(to_py(Error::Invalid(format!("speed {speed} (finite), sigma {sigma} (0 or more)"))));
    }
    let (clean, noisy) = py.detach(|| {
        let clean = dynamic::moving_edge(shape, speed);
        let noisy = dynamic::noisy(&clean, sigma, seed);
        (clean.mapv(|v| v as f32).into_dyn(), noisy.mapv(|v| v as f32).into_dyn())
    });
    Ok((clean.into_pyarray(py), noisy.into_pyarray(py)))
}

/// The widefield specimen of `shape` (z, y, x): its truth, the blurred and counted image, the
/// PSF (summing to 1) and the voxel (µm).
#[pyfunction]
fn widefield_specimen(py: Python<'_>, shape: [usize; 3], seed: u64) -> PyResult<(F32<'_>, F32<'_>, F32<'_>, [f64; 3])> {
    check_shape("the specimen", &shape, 1..=4096)?;
    let s = py.detach(|| specimen::imaged(shape, seed)).map_err(to_py)?;
    let f32 = |a: ndarray::ArrayD<f64>| a.mapv(|v| v as f32).into_pyarray(py);
    Ok((f32(s.truth), s.observed.into_pyarray(py), f32(s.psf), specimen::VOXEL_UM))
}

/// The 3D Shepp-Logan phantom in an ASTRA volume geometry (JSON), each voxel averaged over
/// `sub`³ points, and with a projection geometry its exact projections.
#[pyfunction]
#[pyo3(signature = (vol_geom, proj_geom=None, sub=2))]
fn shepp_logan_3d<'py>(py: Python<'py>, vol_geom: &str, proj_geom: Option<&str>, sub: usize) -> PyResult<(F32<'py>, Option<F32<'py>>)> {
    let parse = |text: &str| serde_json::from_str::<serde_json::Value>(text).map_err(|e| to_py(Error::Invalid(format!("a geometry dict ({e})"))));
    let v = lucent::io::astra::volume_geometry(&parse(vol_geom)?).map_err(to_py)?;
    if v.slices.is_none() {
        return Err(to_py(Error::Invalid("the 3D phantom takes a 3D volume geometry".into())));
    }
    if !(1..=8).contains(&sub) {
        return Err(to_py(Error::Invalid(format!("{sub} samples per voxel axis (1 to 8)"))));
    }
    check_shape("the phantom", &v.shape(), 1..=65536)?;
    let g = proj_geom.map(|p| lucent::io::astra::projection_geometry(&parse(p)?).map_err(to_py)).transpose()?;
    if let Some(g) = &g {
        if !g.is_3d() {
            return Err(to_py(Error::Invalid(format!("the 3D phantom projects in 3D geometries, not {}", g.kind()))));
        }
        check_shape("the projections", &g.shape(), 1..=65536)?;
    }
    let (volume, projections) = py
        .detach(|| -> lucent::Result<_> {
            let volume = lucent::tomography::shepp_logan_volume(&v, sub)?.mapv(|x| x as f32).into_dyn();
            let projections = g.as_ref().map(|g| lucent::tomography::shepp_logan_projections(&v, g)).transpose()?.map(|p| p.mapv(|x| x as f32).into_dyn());
            Ok((volume, projections))
        })
        .map_err(to_py)?;
    Ok((volume.into_pyarray(py), projections.map(|p| p.into_pyarray(py))))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(shepp_logan_image, m)?)?;
    m.add_function(wrap_pyfunction!(shepp_logan_3d, m)?)?;
    m.add_function(wrap_pyfunction!(shepp_logan_sinogram, m)?)?;
    m.add_function(wrap_pyfunction!(aooct_series, m)?)?;
    m.add_function(wrap_pyfunction!(moving_edge, m)?)?;
    m.add_function(wrap_pyfunction!(widefield_specimen, m)?)?;
    Ok(())
}
