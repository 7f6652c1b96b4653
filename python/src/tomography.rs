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

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(radon, m)?)?;
    m.add_function(wrap_pyfunction!(backproject, m)?)?;
    m.add_function(wrap_pyfunction!(fbp, m)?)?;
    m.add_function(wrap_pyfunction!(mlem, m)?)?;
    Ok(())
}
