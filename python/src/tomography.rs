//! Parallel-beam tomography in ASTRA's 2D geometry (the Python package converts to
//! scikit-image's conventions).
use numpy::{PyArrayDyn, PyReadonlyArrayDyn};
use pyo3::prelude::*;

use crate::{out, to_py, Context};
use lucent::tomography::{self as tomo, Filter, Geometry, Method};

type F32<'py> = PyReadonlyArrayDyn<'py, f32>;
type Result<'py> = PyResult<Bound<'py, PyArrayDyn<f32>>>;

/// The image side, the angles (radians), the detector count, the rotation centre and the method.
#[derive(FromPyObject)]
struct Rays(usize, Vec<f64>, Option<usize>, Option<f64>, String);

impl Rays {
    fn geometry(self) -> PyResult<Geometry> {
        let Rays(size, angles, detectors, center, method) = self;
        let mut g = Geometry::new(size, angles, detectors, center).map_err(to_py)?;
        g.method = Method::parse(&method).map_err(to_py)?;
        Ok(g)
    }
}

#[pyfunction]
fn radon<'py>(py: Python<'py>, ctx: &Context, image: F32<'py>, rays: Rays) -> Result<'py> {
    let (x, g) = (image.as_array(), rays.geometry()?);
    out(py, py.detach(|| tomo::radon(&ctx.gpu, &x, &g)))
}

#[pyfunction]
fn backproject<'py>(py: Python<'py>, ctx: &Context, sinogram: F32<'py>, rays: Rays) -> Result<'py> {
    let (s, g) = (sinogram.as_array(), rays.geometry()?);
    out(py, py.detach(|| tomo::backproject(&ctx.gpu, &s, &g)))
}

#[pyfunction]
fn fbp<'py>(py: Python<'py>, ctx: &Context, sinogram: F32<'py>, rays: Rays, filter: &str) -> Result<'py> {
    let (s, g, f) = (sinogram.as_array(), rays.geometry()?, Filter::parse(filter).map_err(to_py)?);
    out(py, py.detach(|| tomo::fbp(&ctx.gpu, &s, &g, f)))
}

/// MLEM: the reconstruction and the KL divergence after each iteration.
#[pyfunction]
fn mlem<'py>(py: Python<'py>, ctx: &Context, sinogram: F32<'py>, rays: Rays, iterations: usize) -> PyResult<(Bound<'py, PyArrayDyn<f32>>, Vec<f64>)> {
    let (s, g) = (sinogram.as_array(), rays.geometry()?);
    let (x, kl) = py.detach(|| tomo::mlem(&ctx.gpu, &s, &g, iterations)).map_err(to_py)?;
    Ok((out(py, Ok(x))?, kl))
}

/// ASTRA's projection and volume geometry dicts, as JSON.
fn geometries(proj_geom: &str, vol_geom: &str) -> PyResult<(tomo::ProjectionGeometry, tomo::VolumeGeometry)> {
    let parse = |text: &str| serde_json::from_str::<serde_json::Value>(text).map_err(|e| to_py(lucent::Error::Invalid(format!("a geometry dict ({e})"))));
    let g = lucent::io::astra::projection_geometry(&parse(proj_geom)?).map_err(to_py)?;
    let v = lucent::io::astra::volume_geometry(&parse(vol_geom)?).map_err(to_py)?;
    Ok((g, v))
}

/// Joseph's forward projection in an ASTRA geometry.
#[pyfunction]
fn forward_project<'py>(py: Python<'py>, ctx: &Context, volume: F32<'py>, proj_geom: &str, vol_geom: &str) -> Result<'py> {
    let ((g, v), x) = (geometries(proj_geom, vol_geom)?, volume.as_array());
    out(py, py.detach(|| tomo::forward_project(&ctx.gpu, &x, &g, &v)))
}

/// Back-projection in an ASTRA geometry (`projector`: matched or astra).
#[pyfunction]
fn back_project<'py>(py: Python<'py>, ctx: &Context, data: F32<'py>, proj_geom: &str, vol_geom: &str, projector: &str) -> Result<'py> {
    let ((g, v), x, p) = (geometries(proj_geom, vol_geom)?, data.as_array(), tomo::Projector::parse(projector).map_err(to_py)?);
    out(py, py.detach(|| tomo::back_project(&ctx.gpu, &x, &g, &v, p)))
}

/// FDK (cone) or fan-beam FBP (fanflat).
#[pyfunction]
fn fdk<'py>(py: Python<'py>, ctx: &Context, data: F32<'py>, proj_geom: &str, vol_geom: &str, filter: &str) -> Result<'py> {
    let ((g, v), x, f) = (geometries(proj_geom, vol_geom)?, data.as_array(), Filter::parse(filter).map_err(to_py)?);
    out(py, py.detach(|| tomo::fdk(&ctx.gpu, &x, &g, &v, f)))
}

/// SIRT, CGLS, MLEM, OS-SART, OSEM or FISTA-TV in an ASTRA geometry: the volume and the residual
/// norm per iteration.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (ctx, algorithm, data, proj_geom, vol_geom, iterations, projector, min=None, max=None, relaxation=1.0, volume_mask=None, projection_mask=None, initial=None, subset_size=20, tv_weight=0.0, tv_iterations=20))]
fn iterative<'py>(
    py: Python<'py>,
    ctx: &Context,
    algorithm: &str,
    data: F32<'py>,
    proj_geom: &str,
    vol_geom: &str,
    iterations: usize,
    projector: &str,
    min: Option<f32>,
    max: Option<f32>,
    relaxation: f32,
    volume_mask: Option<F32<'py>>,
    projection_mask: Option<F32<'py>>,
    initial: Option<F32<'py>>,
    subset_size: usize,
    tv_weight: f32,
    tv_iterations: usize,
) -> PyResult<(Bound<'py, PyArrayDyn<f32>>, Vec<f64>)> {
    let (g, v) = geometries(proj_geom, vol_geom)?;
    let algorithm = match algorithm {
        "sirt" => tomo::Algorithm::Sirt,
        "cgls" => tomo::Algorithm::Cgls,
        "em" => tomo::Algorithm::Mlem,
        "sart" => tomo::Algorithm::Sart { subset_size },
        "osem" => tomo::Algorithm::Osem { subset_size },
        "fista" => tomo::Algorithm::FistaTv { weight: tv_weight, tv_iterations },
        other => return Err(to_py(lucent::Error::Invalid(format!("algorithm '{other}' (sirt, cgls, em, sart, osem or fista)")))),
    };
    let owned = |a: Option<F32<'py>>| a.map(|a| a.as_array().to_owned());
    let options = tomo::IterativeOptions {
        iterations,
        projector: tomo::Projector::parse(projector).map_err(to_py)?,
        min,
        max,
        relaxation,
        volume_mask: owned(volume_mask),
        projection_mask: owned(projection_mask),
        initial: owned(initial),
    };
    let x = data.as_array();
    let solution = py.detach(|| tomo::iterative(&ctx.gpu, algorithm, &x, &g, &v, &options, &mut |_| {})).map_err(to_py)?;
    Ok((out(py, Ok(solution.volume))?, solution.residuals))
}

/// The detector offset of circular fan- or cone-beam projections, and each tried offset's entropy.
#[pyfunction]
fn find_offset<'py>(py: Python<'py>, ctx: &Context, data: F32<'py>, proj_geom: &str, radius: f64) -> PyResult<(f64, Vec<(f64, f64)>)> {
    let parse = serde_json::from_str::<serde_json::Value>(proj_geom).map_err(|e| to_py(lucent::Error::Invalid(format!("a geometry dict ({e})"))))?;
    let g = lucent::io::astra::projection_geometry(&parse).map_err(to_py)?;
    let x = data.as_array();
    py.detach(|| tomo::find_offset(&ctx.gpu, &x, &g, radius)).map_err(to_py)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(radon, m)?)?;
    m.add_function(wrap_pyfunction!(backproject, m)?)?;
    m.add_function(wrap_pyfunction!(fbp, m)?)?;
    m.add_function(wrap_pyfunction!(mlem, m)?)?;
    m.add_function(wrap_pyfunction!(forward_project, m)?)?;
    m.add_function(wrap_pyfunction!(back_project, m)?)?;
    m.add_function(wrap_pyfunction!(fdk, m)?)?;
    m.add_function(wrap_pyfunction!(iterative, m)?)?;
    m.add_function(wrap_pyfunction!(find_offset, m)?)?;
    Ok(())
}
