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

/// Detector values from Python: 16-bit counts kept as they are, anything else as float32.
#[derive(FromPyObject)]
enum Counts<'py> {
    U16(numpy::PyReadonlyArray3<'py, u16>),
    F32(numpy::PyReadonlyArray3<'py, f32>),
}

impl Counts<'_> {
    fn samples(&self) -> tomo::Samples {
        match self {
            Counts::U16(a) => tomo::Samples::U16(a.as_array().to_owned()),
            Counts::F32(a) => tomo::Samples::F32(a.as_array().to_owned()),
        }
    }
}

/// The beamline pipeline: a scan (a DXchange HDF5 or array file at `path`, else the arrays) to
/// the volume, returned or written to `output`; with the run's report as JSON.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (ctx, path, data, flat, dark, theta, output, center, stripe, stripe_size, stripe_dim, outliers, outlier_size, cutoff, paganin, filter, method, dtype))]
fn reconstruct<'py>(
    py: Python<'py>,
    ctx: &Context,
    path: Option<std::path::PathBuf>,
    data: Option<Counts<'py>>,
    flat: Option<Counts<'py>>,
    dark: Option<Counts<'py>>,
    theta: Option<Vec<f64>>,
    output: Option<std::path::PathBuf>,
    center: Option<f64>,
    stripe: &str,
    stripe_size: usize,
    stripe_dim: usize,
    outliers: Option<f32>,
    outlier_size: usize,
    cutoff: Option<f32>,
    paganin: Option<(f64, f64, f64, f64)>,
    filter: &str,
    method: &str,
    dtype: &str,
) -> PyResult<(Option<Bound<'py, PyArrayDyn<f32>>>, String)> {
    let precision = match dtype {
        "float32" => tomo::Precision::F32,
        "float16" => tomo::Precision::F16,
        other => return Err(to_py(lucent::Error::Invalid(format!("dtype '{other}' (float32 or float16)")))),
    };
    let options = tomo::ReconstructOptions {
        outliers: outliers.map(|dif| tomo::Outliers { dif, size: outlier_size }),
        cutoff,
        stripe: match stripe {
            "none" => tomo::Stripe::None,
            "sorting" => tomo::Stripe::Sorting { size: stripe_size, dim: stripe_dim },
            "large" => tomo::Stripe::Large { snr: 3.0, size: stripe_size, drop_ratio: 0.1, norm: true },
            "fw" => tomo::Stripe::Fw { level: None, sigma: 2.0, pad: true },
            other => return Err(to_py(lucent::Error::Invalid(format!("stripe '{other}' (none, sorting, large or fw)")))),
        },
        paganin: paganin.map(|(pixel_size, distance, energy, alpha)| tomo::Paganin { pixel_size, distance, energy, alpha, pad: true }),
        center: center.map_or(tomo::Center::Auto, tomo::Center::At),
        filter: Filter::parse(filter).map_err(to_py)?,
        method: lucent::tomography::Method::parse(method).map_err(to_py)?,
        angles: theta,
        precision,
        ..tomo::ReconstructOptions::default()
    };
    let scan: Box<dyn tomo::ScanSource> = match (&path, &data) {
        (Some(p), None) if matches!(lucent::io::Format::from_path(p), Ok(lucent::io::Format::Hdf5)) => {
            Box::new(lucent::io::hdf5::Scan::open(p).map_err(to_py)?)
        }
        (Some(p), None) => {
            let a = lucent::io::read_real(p).map_err(to_py)?;
            let a =
                a.into_dimensionality::<ndarray::Ix3>().map_err(|_| to_py(lucent::Error::Shape(format!("{} is not 3D (angles, rows, cols)", p.display()))))?;
            Box::new(tomo::ArrayScan::new(tomo::Samples::F32(a), flat.as_ref().map(Counts::samples), dark.as_ref().map(Counts::samples), None).map_err(to_py)?)
        }
        (None, Some(d)) => {
            Box::new(tomo::ArrayScan::new(d.samples(), flat.as_ref().map(Counts::samples), dark.as_ref().map(Counts::samples), None).map_err(to_py)?)
        }
        _ => return Err(to_py(lucent::Error::Invalid("give the scan as a path or as arrays, not both".into()))),
    };
    let [_, rows, cols] = scan.shape();
    let run = py.detach(|| -> lucent::Result<(Option<ndarray::ArrayD<f32>>, tomo::ReconstructReport)> {
        match &output {
            Some(o) => {
                let report = lucent::io::volume::write_streamed(o, [rows, cols, cols], precision, |write| {
                    tomo::reconstruct(&ctx.gpu, scan.as_ref(), &options, &mut |_| {}, write)
                })?;
                Ok((None, report))
            }
            None => {
                // Arrays come back as float32 (the caller narrows them for float16).
                let options = tomo::ReconstructOptions { precision: tomo::Precision::F32, ..options.clone() };
                let (v, report) = tomo::reconstruct_array(&ctx.gpu, scan.as_ref(), &options, &mut |_| {})?;
                Ok((Some(v.into_dyn()), report))
            }
        }
    });
    let (volume, report) = run.map_err(to_py)?;
    let volume = volume.map(|v| out(py, Ok(v))).transpose()?;
    Ok((volume, serde_json::to_string(&report).expect("a report")))
}

type F32x3<'py> = numpy::PyReadonlyArray3<'py, f32>;

/// tomopy.normalize (and minus_log with a floor).
#[pyfunction]
fn normalize<'py>(
    py: Python<'py>,
    ctx: &Context,
    tomo: F32x3<'py>,
    flat: F32x3<'py>,
    dark: F32x3<'py>,
    cutoff: Option<f32>,
    minus_log: Option<f32>,
) -> Result<'py> {
    let (t, f, d) = (tomo.as_array(), flat.as_array(), dark.as_array());
    out(py, py.detach(|| tomo::normalize(&ctx.gpu, &t, &f, &d, cutoff, minus_log).map(|a| a.into_dyn())))
}

/// tomopy.misc.corr.remove_outlier (axis 0).
#[pyfunction]
fn remove_outlier<'py>(py: Python<'py>, ctx: &Context, arr: F32x3<'py>, dif: f32, size: usize) -> Result<'py> {
    let a = arr.as_array();
    out(py, py.detach(|| tomo::remove_outlier(&ctx.gpu, &a, dif, size).map(|a| a.into_dyn())))
}

/// tomopy.prep.stripe.remove_stripe_based_sorting.
#[pyfunction]
fn remove_stripe_based_sorting<'py>(py: Python<'py>, ctx: &Context, tomo: F32x3<'py>, size: Option<usize>, dim: usize) -> Result<'py> {
    let t = tomo.as_array();
    out(py, py.detach(|| tomo::remove_stripe_based_sorting(&ctx.gpu, &t, size, dim).map(|a| a.into_dyn())))
}

/// tomopy.prep.stripe.remove_large_stripe.
#[pyfunction]
fn remove_large_stripe<'py>(py: Python<'py>, ctx: &Context, tomo: F32x3<'py>, snr: f64, size: usize, drop_ratio: f64, norm: bool) -> Result<'py> {
    let t = tomo.as_array();
    out(py, py.detach(|| tomo::remove_large_stripe(&ctx.gpu, &t, snr, size, drop_ratio, norm).map(|a| a.into_dyn())))
}

/// tomopy.prep.stripe.remove_stripe_fw (db5).
#[pyfunction]
fn remove_stripe_fw<'py>(py: Python<'py>, ctx: &Context, tomo: F32x3<'py>, level: Option<usize>, sigma: f64, pad: bool) -> Result<'py> {
    let t = tomo.as_array();
    out(py, py.detach(|| tomo::remove_stripe_fw(&ctx.gpu, &t, level, sigma, pad).map(|a| a.into_dyn())))
}

/// tomopy.prep.phase.retrieve_phase.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn retrieve_phase<'py>(py: Python<'py>, ctx: &Context, tomo: F32x3<'py>, pixel_size: f64, dist: f64, energy: f64, alpha: f64, pad: bool) -> Result<'py> {
    let t = tomo.as_array();
    let p = tomo::Paganin { pixel_size, distance: dist, energy, alpha, pad };
    out(py, py.detach(|| tomo::retrieve_phase(&ctx.gpu, &t, &p).map(|a| a.into_dyn())))
}

/// tomopy.find_center_vo on one sinogram (the f64 reference, on all cores).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn find_center_vo(
    py: Python<'_>,
    sinogram: numpy::PyReadonlyArray2<'_, f64>,
    smin: f64,
    smax: f64,
    srad: f64,
    step: f64,
    ratio: f64,
    drop: usize,
) -> PyResult<f64> {
    let s = sinogram.as_array();
    py.detach(|| tomo::cpu::find_center_vo(s, smin, smax, srad, step, ratio, drop)).map_err(to_py)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(reconstruct, m)?)?;
    for f in [
        wrap_pyfunction!(normalize, m)?,
        wrap_pyfunction!(remove_outlier, m)?,
        wrap_pyfunction!(remove_stripe_based_sorting, m)?,
        wrap_pyfunction!(remove_large_stripe, m)?,
        wrap_pyfunction!(remove_stripe_fw, m)?,
        wrap_pyfunction!(retrieve_phase, m)?,
        wrap_pyfunction!(find_center_vo, m)?,
    ] {
        m.add_function(f)?;
    }
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
