//! Fast Fourier transforms with numpy's conventions: forward exp(-2πi jk/n) unnormalised, inverse
//! scaled by 1/n (`Norm` picks backward, ortho or forward), real transforms in rfftn layout.
//!
//! An [`FftPlan`] is made once per (shape, axes, transform, norm): its radix passes, its tables
//! (computed in f64 on the host) and the device buffer that holds them. `record` adds its
//! dispatches to a [`Recording`], so algorithms fuse transforms with their own kernels in one
//! submission. [`cpu`] holds the reference with the same semantics.

mod butterfly;
mod chunked;
pub(crate) mod codegen;
pub mod cpu;
mod gpu;
pub mod lines;
pub mod plan;
mod real_pair;
mod twiddle;

pub use chunked::{first_fitting, least_chunks, most_chunks, real_and_spectrum_bytes, ChunkedFft};
pub use gpu::{FftPlan, Fusion, Product, Window};

use ndarray::{Array, ArrayBase, ArrayD, ArrayViewD, Axis, CowArray, Data, Dimension, IxDyn};
use num_complex::Complex;

use crate::check::check_finite;
use crate::error::{Error, Result};
use crate::gpu::{narrowed_complex, widened_complex, with_dim, Dtype, Gpu, GpuArray, Real};
use crate::graph::{Buf, Recording};
use crate::placement::{Form, GiveWay, Ladder};

/// Which way and between which types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Transform {
    /// Complex to complex, exp(-2πi jk/n).
    Forward,
    /// Complex to complex, exp(+2πi jk/n).
    Inverse,
    /// Real to half-spectrum complex (numpy.fft.rfftn).
    RealForward,
    /// Half spectrum to real of length `len` along the last transformed axis (numpy.fft.irfftn).
    RealInverse { len: usize },
}

/// numpy's `norm`: which direction carries the 1/n.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Norm {
    #[default]
    Backward,
    Ortho,
    Forward,
}

impl Norm {
    /// The factor one axis of length n contributes.
    pub fn factor(self, n: usize, inverse: bool) -> f64 {
        match (self, inverse) {
            (Norm::Backward, false) | (Norm::Forward, true) => 1.0,
            (Norm::Backward, true) | (Norm::Forward, false) => 1.0 / n as f64,
            (Norm::Ortho, _) => 1.0 / (n as f64).sqrt(),
        }
    }
}

impl std::str::FromStr for Norm {
    type Err = Error;
    fn from_str(s: &str) -> Result<Norm> {
        match s {
            "backward" => Ok(Norm::Backward),
            "ortho" => Ok(Norm::Ortho),
            "forward" => Ok(Norm::Forward),
            other => Err(Error::Invalid(format!("norm must be backward, ortho or forward, not `{other}`"))),
        }
    }
}

/// Checks that `axes` are distinct and within `ndim`, and returns them sorted.
pub fn check_axes(axes: &[usize], ndim: usize) -> Result<Vec<usize>> {
    if axes.is_empty() {
        return Err(Error::Invalid("no axes to transform".into()));
    }
    let mut sorted = axes.to_vec();
    sorted.sort_unstable();
    if let Some(&a) = sorted.iter().find(|&&a| a >= ndim) {
        return Err(Error::Invalid(format!("axis {a} out of range for a {ndim}-D array")));
    }
    if sorted.windows(2).any(|w| w[0] == w[1]) {
        return Err(Error::Invalid(format!("repeated axis in {axes:?}")));
    }
    Ok(sorted)
}

// One-call transforms of host arrays, numpy.fft's functions: `axes` None transforms every axis;
// plans are cached on the `Gpu`, so later calls on the same shapes only upload, run and download.
// f64 data (complex f64) is transformed in f64 where the device has `SHADER_F64`, else in f32
// and converted back ([`Gpu::narrows`]).

/// numpy.fft.fftn(x, axes=axes, norm=norm) on the GPU.
pub fn fftn<T: Real, S: Data<Elem = Complex<T>>, D: Dimension>(
    gpu: &Gpu,
    x: &ArrayBase<S, D>,
    axes: Option<&[usize]>,
    norm: Norm,
) -> Result<Array<Complex<T>, D>> {
    with_dim(complex(gpu, &x.view().into_dyn(), axes, Transform::Forward, norm)?)
}

/// numpy.fft.ifftn(x, axes=axes, norm=norm) on the GPU.
pub fn ifftn<T: Real, S: Data<Elem = Complex<T>>, D: Dimension>(
    gpu: &Gpu,
    x: &ArrayBase<S, D>,
    axes: Option<&[usize]>,
    norm: Norm,
) -> Result<Array<Complex<T>, D>> {
    with_dim(complex(gpu, &x.view().into_dyn(), axes, Transform::Inverse, norm)?)
}

/// numpy.fft.rfftn(x, axes=axes, norm=norm) on the GPU: the last transformed axis keeps n/2 + 1.
pub fn rfftn<T: Real, S: Data<Elem = T>, D: Dimension>(gpu: &Gpu, x: &ArrayBase<S, D>, axes: Option<&[usize]>, norm: Norm) -> Result<Array<Complex<T>, D>> {
    let x = x.view().into_dyn();
    check_finite(&x, "the FFT's input")?;
    if gpu.narrows::<T>() {
        return with_dim(widened_complex(&rfftn(gpu, &crate::gpu::narrowed(&x), axes, norm)?));
    }
    let axes = all_axes(axes, x.ndim());
    let upload = |rec: &mut Recording, rows: &[usize]| rec.upload_once_real(&rows_of(&x, rows).view());
    with_dim(on_host(gpu, x.shape(), &axes, Transform::RealForward, norm, T::DTYPE, &upload, &|y| y.download_complex::<T>(gpu))?)
}

/// numpy.fft.irfftn(x, axes=axes, norm=norm) on the GPU, the last transformed axis of length
/// `len` (None: 2(m - 1) for m input values, numpy's default).
pub fn irfftn<T: Real, S: Data<Elem = Complex<T>>, D: Dimension>(
    gpu: &Gpu,
    x: &ArrayBase<S, D>,
    axes: Option<&[usize]>,
    len: Option<usize>,
    norm: Norm,
) -> Result<Array<T, D>> {
    let x = x.view().into_dyn();
    check_finite(&x, "the FFT's input")?;
    if gpu.narrows::<T>() {
        return with_dim(crate::gpu::widened(&irfftn(gpu, &narrowed_complex(&x), axes, len, norm)?));
    }
    let axes = all_axes(axes, x.ndim());
    let last = *check_axes(&axes, x.ndim())?.last().unwrap();
    let len = match len {
        Some(n) => n,
        None if x.shape()[last] >= 2 => 2 * (x.shape()[last] - 1),
        None => return Err(Error::Invalid(format!("irfftn: {} value along axis {last} gives no default output length", x.shape()[last]))),
    };
    let upload = |rec: &mut Recording, rows: &[usize]| rec.upload_once_complex(&rows_of(&x, rows).view());
    with_dim(on_host(gpu, x.shape(), &axes, Transform::RealInverse { len }, norm, T::DTYPE, &upload, &|y| {
        GpuArray::download_joined::<T>(gpu, std::slice::from_ref(y), y.dims())
    })?)
}

/// `t` over `axes` (None: every axis) of an array already in a recording, with a plan cached on
/// the recording's `Gpu`: complex input (C32, or C64 in f64) for Forward, Inverse and
/// RealInverse, real (F32 or F64) for RealForward. Whole arrays (one buffer).
pub fn record_transform(rec: &mut Recording, x: Buf, axes: Option<&[usize]>, t: Transform, norm: Norm) -> Result<Buf> {
    let dtype = rec.dtype(x);
    let want_complex = !matches!(t, Transform::RealForward);
    if dtype == Dtype::U32 || matches!(dtype, Dtype::C32 | Dtype::C64) != want_complex {
        let want = if want_complex { "complex" } else { "real" };
        return Err(Error::Dtype(format!("{t:?} transforms {want} arrays, not {dtype:?}")));
    }
    let dims = rec.dims(x).to_vec();
    let plan = FftPlan::cached_as(rec.gpu(), &dims, &all_axes(axes, dims.len()), t, norm, dtype.real())?;
    plan.record(rec, x)
}

fn complex<T: Real>(gpu: &Gpu, x: &ArrayViewD<Complex<T>>, axes: Option<&[usize]>, t: Transform, norm: Norm) -> Result<ArrayD<Complex<T>>> {
    check_finite(x, "the FFT's input")?;
    if gpu.narrows::<T>() {
        return Ok(widened_complex(&complex(gpu, &narrowed_complex(x).view(), axes, t, norm)?));
    }
    let upload = |rec: &mut Recording, rows: &[usize]| rec.upload_once_complex(&rows_of(x, rows).view());
    on_host(gpu, x.shape(), &all_axes(axes, x.ndim()), t, norm, T::DTYPE, &upload, &|y| y.download_complex::<T>(gpu))
}

/// `t` of a host array of shape `dims` whose rows along axis 0 `upload` records, computed in the
/// real type `real`, each result array read back by `fetch`: whole with a cached plan when it
/// fits one buffer, else in chunks ([`chunked::host_transform`]).
#[allow(clippy::too_many_arguments)]
fn on_host<O: Clone + Send + Sync + bytemuck::Zeroable>(
    gpu: &Gpu,
    dims: &[usize],
    axes: &[usize],
    t: Transform,
    norm: Norm,
    real: Dtype,
    upload: &dyn Fn(&mut Recording, &[usize]) -> Result<Buf>,
    fetch: &dyn Fn(&GpuArray) -> Result<ArrayD<O>>,
) -> Result<ArrayD<O>> {
    let whole = || {
        let plan = FftPlan::cached_as(gpu, dims, axes, t, norm, real)?;
        let mut rec = Recording::new(gpu);
        let xb = upload(&mut rec, &(0..dims[0]).collect::<Vec<_>>())?;
        let y = plan.record(&mut rec, xb)?;
        let o = rec.output(y);
        fetch(&rec.run()?.array(o))
    };
    // Chunks hold the same total in more buffers: they help a limit, not a device out of memory.
    let mut ladder = Ladder::new();
    match ladder.attempt(Form::Whole, GiveWay::OnLimit, whole)? {
        Some(y) => Ok(y),
        None => chunked::host_transform(gpu, dims, axes, t, norm, real, upload, fetch),
    }
}

/// The rows `rows` of `x` along axis 0: a view where they run consecutively, else a copy.
fn rows_of<'a, T: Clone>(x: &ArrayViewD<'a, T>, rows: &[usize]) -> CowArray<'a, T, IxDyn> {
    match (rows.first(), rows.last()) {
        (Some(&a), Some(&b)) if b + 1 - a == rows.len() && rows.windows(2).all(|w| w[1] == w[0] + 1) => {
            x.clone().slice_axis_move(Axis(0), (a..b + 1).into()).into()
        }
        _ => x.select(Axis(0), rows).into(),
    }
}

fn all_axes(axes: Option<&[usize]>, ndim: usize) -> Vec<usize> {
    axes.map_or_else(|| (0..ndim).collect(), <[usize]>::to_vec)
}
