//! psfmodels' `make_psf` on the GPU (`lucent::psf`): the vectorial, scalar and Gaussian
//! widefield PSF models. The optics come as a dict by psfmodels' names; the rest keep
//! `PsfOptions::default()` (psfmodels' defaults).
use std::collections::HashMap;

use numpy::PyArrayDyn;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::{out, Context};
use lucent::psf::{Model, Planes, PsfOptions};

type Set<'py> = HashMap<String, Bound<'py, PyAny>>;

/// psfmodels' `z`: a count of planes centred on the source, or their positions (µm).
#[derive(FromPyObject)]
enum Z {
    Count(usize),
    Positions(Vec<f64>),
}

fn model(name: &str) -> PyResult<Model> {
    match name {
        "vectorial" => Ok(Model::Vectorial),
        "scalar" => Ok(Model::Scalar),
        "gaussian" => Ok(Model::Gaussian),
        other => Err(PyValueError::new_err(format!("Unrecognized psf model: '{other}' (vectorial, scalar or gaussian)"))),
    }
}

fn psf_options(z: Z, dz: f64, set: &Set<'_>) -> PyResult<PsfOptions> {
    let z = match z {
        Z::Count(nz) => Planes::Count { nz, dz },
        Z::Positions(p) => Planes::Positions(p),
    };
    let mut o = PsfOptions { z, ..PsfOptions::default() };
    for (key, v) in set {
        match key.as_str() {
            "nx" => o.nx = v.extract()?,
            "dxy" => o.dxy = v.extract()?,
            "pz" => o.pz = v.extract()?,
            "NA" => o.na = v.extract()?,
            "wvl" => o.wvl = v.extract()?,
            "ns" => o.ns = v.extract()?,
            "ni" => o.ni = v.extract()?,
            "ni0" => o.ni0 = v.extract()?,
            "ng" => o.ng = v.extract()?,
            "ng0" => o.ng0 = v.extract()?,
            "tg" => o.tg = v.extract()?,
            "tg0" => o.tg0 = v.extract()?,
            "ti0" => o.ti0 = v.extract()?,
            "oversample_factor" => o.oversample_factor = v.extract()?,
            "normalize" => o.normalize = v.extract()?,
            "model" => o.model = model(&v.extract::<String>()?)?,
            other => return Err(PyValueError::new_err(format!("make_psf: unknown option '{other}'"))),
        }
    }
    Ok(o)
}

/// The PSF (planes × nx × nx, float32) for `z`: a count of planes `dz` apart, or a list of
/// positions.
#[pyfunction]
fn make_psf<'py>(py: Python<'py>, ctx: &Context, z: Z, dz: f64, options: Set<'py>) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
    let o = psf_options(z, dz, &options)?;
    out(py, py.detach(|| lucent::psf::make_psf(&ctx.gpu, &o).map(|p| p.into_dyn())))
}

/// The confocal PSF (lucent::psf::confocal_psf): `confocal` is (ex_wvl, em_wvl, pinhole_au,
/// pinhole_irrelevance_threshold).
#[pyfunction]
fn confocal_psf<'py>(
    py: Python<'py>,
    ctx: &Context,
    z: Z,
    dz: f64,
    options: Set<'py>,
    confocal: (f64, f64, f64, f64),
) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
    let o = psf_options(z, dz, &options)?;
    let (ex_wvl, em_wvl, pinhole_au, pinhole_irrelevance_threshold) = confocal;
    let c = lucent::psf::Confocal { ex_wvl, em_wvl, pinhole_au, pinhole_irrelevance_threshold };
    out(py, py.detach(|| lucent::psf::confocal_psf(&ctx.gpu, &o, &c).map(|p| p.into_dyn())))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(make_psf, m)?)?;
    m.add_function(wrap_pyfunction!(confocal_psf, m)?)?;
    Ok(())
}
