//! scipy.ndimage's filters on the GPU, on host arrays of 1-4 axes: [`correlate`], [`convolve`],
//! [`correlate1d`], [`convolve1d`], [`gaussian_filter`] (truncate = 4) and [`uniform_filter`],
//! the output shaped like the input, values beyond the edges from a [`Boundary`] (scipy's
//! `mode` and `cval`: `Boundary::Constant(cval)`, `Reflect`, `Nearest`, `Mirror`, `Wrap`).
//!
//! Arrays beyond one device buffer stay on the device in chunks along axis 0, each slab of
//! output rows filtered with its halo gathered from the neighbouring chunks (through the host,
//! slab by slab, when the device's memory cannot hold the array twice), with the same result. A Gaussian or uniform kernel longer than its axis is folded onto the axis on the host
//! (same result, work bounded by the array: `ops::filter::gaussian_weights`); a Gaussian of
//! more than `MAX_GAUSSIAN_TAPS` taps is an error. Non-finite input (reported with the index of
//! the first bad element) and a non-finite `cval` are errors. The `record_*` forms add the same work to a [`crate::Recording`].
//!
//! Interpolation with scipy.ndimage's semantics: [`spline_filter`] and [`spline_filter1d`] (the
//! B-spline prefilter), [`map_coordinates`], [`affine_transform`], [`shift`], [`zoom`] and
//! [`rotate`] (B-spline orders 0 to 5, scipy's spline modes in [`SplineMode`], cval and
//! prefilter in [`Sampling`]), and [`fourier_shift`]; examples/resample.rs chains them in one recording.
//!
//! ```no_run
//! use lucent::ndimage::{gaussian_filter, Boundary};
//! let gpu = lucent::Gpu::new()?;
//! let volume = ndarray::Array3::<f32>::zeros((64, 256, 256));
//! let smooth = gaussian_filter(&gpu, &volume, &[1.0, 2.0, 2.0], Boundary::Reflect)?;
//! # Ok::<(), lucent::Error>(())
//! ```

use ndarray::{Array, ArrayBase, ArrayViewD, Data, Dimension};

use crate::error::Result;
use crate::gpu::{narrowed, widened, with_dim, Gpu, Real, Shape};
use crate::graph::Recording;
use crate::ops::filter::{along_axis, slabs};
use crate::ops::interpolate;

pub use crate::kernels::boundary::Boundary;
pub use crate::ops::filter::derivatives::{
    edge as edge_terms, gaussian_gradient_magnitude as gradient_magnitude_terms, gaussian_kernel1d_order, gaussian_laplace as laplace_of_gaussian_terms,
    laplace as laplace_terms, record_terms, GaussianFilter, Terms,
};
pub use crate::ops::filter::fourier::{record_fourier_filter, FourierFilter};
pub use crate::ops::filter::morphology::{
    check_origin, generate_binary_structure, label, rank_within, record_extreme, record_rank, record_squared_distances, Footprint, EDT_FAR,
};
pub use crate::ops::filter::{check_filter_weights, filter_halo, gaussian_passes, uniform_passes, AxisFilter};
pub use crate::ops::filter::{
    convolve as record_convolve, convolve1d as record_convolve1d, correlate as record_correlate, correlate1d as record_correlate1d,
    gaussian_filter as record_gaussian_filter, gaussian_kernel1d, normalized_convolution as record_normalized_convolution,
    uniform_filter as record_uniform_filter, GAUSSIAN_TRUNCATE,
};
pub use crate::ops::interpolate::deskew::{deskew_map, skew_map, Deskew, MAX_DESKEW_EXTENT};
pub use crate::ops::interpolate::{
    affine_transform as record_affine_transform, map_coordinates as record_map_coordinates, spline_filter as record_spline_filter,
    spline_filter1d as record_spline_filter1d, AffineMap, Sampler, Sampling, SplineMode,
};
pub use crate::ops::interpolate::{coordinates, rotate_map, shift_map, zoom_map};

pub mod measurements;
pub use measurements::{
    center_of_mass, extrema, find_objects, histogram, maximum, maximum_position, mean, median, minimum, minimum_position, standard_deviation, sum_labels,
    variance, Extrema, Regions,
};

/// The CPU references (f64), with the semantics of the GPU functions: what `--device cpu` runs
/// and what the tests compare against.
pub mod cpu {
    pub use crate::ops::filter::cpu::{convolve, convolve1d, correlate, correlate1d, gaussian_filter, separable, uniform_filter};
    pub use crate::ops::filter::derivatives::terms_reference as filter_terms;
    pub use crate::ops::filter::fourier::fourier_filter_reference as fourier_filter;
    pub use crate::ops::filter::morphology::distance_reference as distance_transform_edt;
    pub use crate::ops::filter::morphology::extreme_reference as footprint_extreme;
    pub use crate::ops::filter::morphology::label_reference as label;
    pub use crate::ops::filter::morphology::rank_reference as footprint_rank;
    pub use crate::ops::interpolate::cpu::{fourier_shift, map_coordinates, spline_filter, spline_filter1d};
}

/// The correlation weights that scipy.ndimage's `origin` asks for: `weights` (flipped for a
/// convolution, whose origin scipy negates and, along even lengths, moves one more) padded with
/// zeros so that their centre moves by the origin, for [`correlate`] and [`correlate1d`]. An
/// origin outside −(len/2) ..= (len−1)/2 is refused, as scipy refuses it.
pub fn origin_weights<T: Real>(weights: &ndarray::ArrayViewD<T>, origin: &[i64], convolution: bool) -> Result<ndarray::ArrayD<T>> {
    let shape = weights.shape().to_vec();
    let mut origin = crate::ops::per_axis(if origin.is_empty() { &[0] } else { origin }, shape.len(), "origin")?;
    let mut w = weights.to_owned();
    if convolution {
        for a in 0..shape.len() {
            w.invert_axis(ndarray::Axis(a));
            origin[a] = -origin[a] - i64::from(shape[a].is_multiple_of(2));
        }
    }
    let origin = check_origin(&shape, &origin)?;
    if origin.iter().all(|&o| o == 0) {
        // Row-major, flipped or not (callers read the elements in order).
        return Ok(w.as_standard_layout().into_owned());
    }
    // Zeros after the weights (origin > 0) or before them (< 0), twice the origin: the centre
    // len/2 + |o| of the padded length lands where scipy puts it.
    let padded: Vec<usize> = shape.iter().zip(&origin).map(|(&n, &o)| n + 2 * o.unsigned_abs() as usize).collect();
    let mut out = ndarray::ArrayD::<T>::zeros(ndarray::IxDyn(&padded));
    let start: Vec<usize> = origin.iter().map(|&o| if o < 0 { 2 * o.unsigned_abs() as usize } else { 0 }).collect();
    let region: Vec<ndarray::SliceInfoElem> = start.iter().zip(&shape).map(|(&s, &n)| ndarray::SliceInfoElem::from(s..s + n)).collect();
    out.slice_mut(region.as_slice()).assign(&w);
    Ok(out)
}

/// scipy.ndimage.correlate(input, weights, mode, cval): weights of the input's rank.
pub fn correlate<T, S1, S2, D>(gpu: &Gpu, input: &ArrayBase<S1, D>, weights: &ArrayBase<S2, D>, mode: Boundary) -> Result<Array<T, D>>
where
    T: Real,
    S1: Data<Elem = T>,
    S2: Data<Elem = T>,
    D: Dimension,
{
    with_dim(slabs::correlate_host(gpu, &input.view().into_dyn(), &weights.view().into_dyn(), mode)?)
}

/// scipy.ndimage.convolve(input, weights, mode, cval).
pub fn convolve<T, S1, S2, D>(gpu: &Gpu, input: &ArrayBase<S1, D>, weights: &ArrayBase<S2, D>, mode: Boundary) -> Result<Array<T, D>>
where
    T: Real,
    S1: Data<Elem = T>,
    S2: Data<Elem = T>,
    D: Dimension,
{
    with_dim(slabs::convolve_host(gpu, &input.view().into_dyn(), &weights.view().into_dyn(), mode)?)
}

/// scipy.ndimage.correlate1d(input, weights, axis, mode, cval).
pub fn correlate1d<T: Real, S: Data<Elem = T>, D: Dimension>(
    gpu: &Gpu,
    input: &ArrayBase<S, D>,
    weights: &[T],
    axis: usize,
    mode: Boundary,
) -> Result<Array<T, D>> {
    let kernel = along_axis(input.shape(), weights, axis)?;
    with_dim(slabs::correlate_host(gpu, &input.view().into_dyn(), &kernel.view(), mode)?)
}

/// scipy.ndimage.convolve1d(input, weights, axis, mode, cval).
pub fn convolve1d<T: Real, S: Data<Elem = T>, D: Dimension>(
    gpu: &Gpu,
    input: &ArrayBase<S, D>,
    weights: &[T],
    axis: usize,
    mode: Boundary,
) -> Result<Array<T, D>> {
    let kernel = along_axis(input.shape(), weights, axis)?;
    with_dim(slabs::convolve_host(gpu, &input.view().into_dyn(), &kernel.view(), mode)?)
}

/// scipy.ndimage.gaussian_filter(input, sigma, mode=mode, cval=cval, truncate=4.0): `sigma` one
/// value for every axis or one per axis; axes with sigma ≤ 1e-15 are left alone.
pub fn gaussian_filter<T: Real, S: Data<Elem = T>, D: Dimension>(gpu: &Gpu, input: &ArrayBase<S, D>, sigma: &[f32], mode: Boundary) -> Result<Array<T, D>> {
    let passes = gaussian_passes(sigma, input.shape(), mode)?;
    with_dim(slabs::separable_host(gpu, &input.view().into_dyn(), &passes, mode)?)
}

/// scipy.ndimage.gaussian_filter(input, sigma, order, mode=mode, cval=cval, truncate, radius)
/// with every parameter ([`GaussianFilter`]: derivatives of order 0-3 per axis).
pub fn gaussian_filter_with<T: Real, S: Data<Elem = T>, D: Dimension>(
    gpu: &Gpu,
    input: &ArrayBase<S, D>,
    g: &GaussianFilter,
    mode: Boundary,
) -> Result<Array<T, D>> {
    let passes = g.passes(input.shape(), mode)?;
    with_dim(slabs::separable_host(gpu, &input.view().into_dyn(), &passes, mode)?)
}

/// scipy.ndimage.gaussian_filter1d(input, sigma, axis, order, mode=mode, cval=cval, truncate,
/// radius) (negative axes count from the end).
#[allow(clippy::too_many_arguments)]
pub fn gaussian_filter1d<T: Real, S: Data<Elem = T>, D: Dimension>(
    gpu: &Gpu,
    input: &ArrayBase<S, D>,
    sigma: f64,
    axis: isize,
    order: usize,
    mode: Boundary,
    truncate: f64,
    radius: Option<usize>,
) -> Result<Array<T, D>> {
    let d = input.ndim();
    let a = if axis < 0 { axis + d as isize } else { axis };
    if !(0..d as isize).contains(&a) {
        return Err(crate::Error::Invalid(format!("gaussian_filter1d: axis {axis} of a {d}-axis array")));
    }
    let mut sigmas = vec![0.0; d];
    sigmas[a as usize] = sigma;
    let g = GaussianFilter { sigma: sigmas, order: vec![order], truncate, radius: radius.map(|r| vec![r]) };
    gaussian_filter_with(gpu, input, &g, mode)
}

/// scipy.ndimage.gaussian_laplace(input, sigma, mode=mode, cval=cval, truncate=..., radius=...):
/// the sum of the second derivatives along every axis (`g`'s order is not used).
pub fn gaussian_laplace<T: Real, S: Data<Elem = T>, D: Dimension>(
    gpu: &Gpu,
    input: &ArrayBase<S, D>,
    g: &GaussianFilter,
    mode: Boundary,
) -> Result<Array<T, D>> {
    let terms = laplace_of_gaussian_terms(g, input.shape(), mode)?;
    filter_terms(gpu, input, &terms, mode)
}

/// scipy.ndimage.gaussian_gradient_magnitude(input, sigma, mode=mode, cval=cval, ...): the root
/// of the sum of the squared first derivatives (`g`'s order is not used).
pub fn gaussian_gradient_magnitude<T: Real, S: Data<Elem = T>, D: Dimension>(
    gpu: &Gpu,
    input: &ArrayBase<S, D>,
    g: &GaussianFilter,
    mode: Boundary,
) -> Result<Array<T, D>> {
    let terms = gradient_magnitude_terms(g, input.shape(), mode)?;
    filter_terms(gpu, input, &terms, mode)
}

/// scipy.ndimage.sobel(input, axis, mode=mode, cval=cval).
pub fn sobel<T: Real, S: Data<Elem = T>, D: Dimension>(gpu: &Gpu, input: &ArrayBase<S, D>, axis: isize, mode: Boundary) -> Result<Array<T, D>> {
    filter_terms(gpu, input, &edge_terms(input.shape(), axis, [1.0, 2.0, 1.0], mode)?, mode)
}

/// scipy.ndimage.prewitt(input, axis, mode=mode, cval=cval).
pub fn prewitt<T: Real, S: Data<Elem = T>, D: Dimension>(gpu: &Gpu, input: &ArrayBase<S, D>, axis: isize, mode: Boundary) -> Result<Array<T, D>> {
    filter_terms(gpu, input, &edge_terms(input.shape(), axis, [1.0, 1.0, 1.0], mode)?, mode)
}

/// scipy.ndimage.laplace(input, mode=mode, cval=cval).
pub fn laplace<T: Real, S: Data<Elem = T>, D: Dimension>(gpu: &Gpu, input: &ArrayBase<S, D>, mode: Boundary) -> Result<Array<T, D>> {
    filter_terms(gpu, input, &laplace_terms(input.shape(), mode)?, mode)
}

/// A sum of separable filters ([`Terms`]): on the device in one recording when the array and
/// the terms' temporaries fit, else each chain through the slab path and the sum on the host.
pub fn filter_terms<T: Real, S: Data<Elem = T>, D: Dimension>(gpu: &Gpu, input: &ArrayBase<S, D>, terms: &Terms, mode: Boundary) -> Result<Array<T, D>> {
    let bytes = Shape::new(input.shape())?.len() as u64 * T::DTYPE.bytes();
    if bytes <= gpu.max_buffer_bytes() && bytes.saturating_mul(5) <= gpu.memory_budget_bytes() {
        return on_device(gpu, input, |rec, x| record_terms(rec, x, terms, mode));
    }
    let x = input.view().into_dyn();
    let mut total: Option<ndarray::ArrayD<T>> = None;
    for chain in &terms.chains {
        let mut y = slabs::separable_host(gpu, &x, chain, mode)?;
        if terms.root_sum_of_squares {
            y.par_mapv_inplace(|v| v * v);
        }
        total = Some(match total {
            None => y,
            Some(mut t) => {
                ndarray::Zip::from(&mut t).and(&y).par_for_each(|t, &v| *t += v);
                t
            }
        });
    }
    let mut total = match total {
        Some(t) => t,
        None => slabs::separable_host(gpu, &x, &[], mode)?,
    };
    if terms.root_sum_of_squares {
        total.par_mapv_inplace(T::sqrt);
    }
    with_dim(total)
}

/// scipy.ndimage.minimum_filter(input, footprint=footprint, mode=mode, cval=cval, origin=origin)
/// (a `size` is an all-true footprint of that shape; `origin` empty for zeros).
pub fn minimum_filter<T: Real, S: Data<Elem = T>, D: Dimension>(
    gpu: &Gpu,
    input: &ArrayBase<S, D>,
    footprint: &ndarray::ArrayViewD<bool>,
    origin: &[i64],
    mode: Boundary,
) -> Result<Array<T, D>> {
    let f = Footprint::new(footprint, None, origin)?;
    on_device(gpu, input, |rec, x| record_extreme(rec, x, &f, false, mode))
}

/// scipy.ndimage.maximum_filter(input, footprint=footprint, mode=mode, cval=cval, origin=origin).
pub fn maximum_filter<T: Real, S: Data<Elem = T>, D: Dimension>(
    gpu: &Gpu,
    input: &ArrayBase<S, D>,
    footprint: &ndarray::ArrayViewD<bool>,
    origin: &[i64],
    mode: Boundary,
) -> Result<Array<T, D>> {
    let f = Footprint::new(footprint, None, origin)?;
    on_device(gpu, input, |rec, x| record_extreme(rec, x, &f, true, mode))
}

/// scipy.ndimage.rank_filter(input, rank, footprint=footprint, mode=mode, cval=cval,
/// origin=origin): the `rank`-th smallest over the footprint (negative: from the end), at most
/// 343 taps (7³) for now.
pub fn rank_filter<T: Real, S: Data<Elem = T>, D: Dimension>(
    gpu: &Gpu,
    input: &ArrayBase<S, D>,
    rank: i64,
    footprint: &ndarray::ArrayViewD<bool>,
    origin: &[i64],
    mode: Boundary,
) -> Result<Array<T, D>> {
    let f = Footprint::new(footprint, None, origin)?;
    let r = rank_within(rank, f.offsets.len())?;
    on_device(gpu, input, |rec, x| record_rank(rec, x, &f, r, mode))
}

/// scipy.ndimage.median_filter(input, footprint=footprint, mode=mode, cval=cval, origin=origin):
/// the rank (taps / 2) element over the footprint.
pub fn median_filter<T: Real, S: Data<Elem = T>, D: Dimension>(
    gpu: &Gpu,
    input: &ArrayBase<S, D>,
    footprint: &ndarray::ArrayViewD<bool>,
    origin: &[i64],
    mode: Boundary,
) -> Result<Array<T, D>> {
    let taps = footprint.iter().filter(|&&b| b).count();
    rank_filter(gpu, input, (taps / 2) as i64, footprint, origin, mode)
}

/// scipy.ndimage.grey_erosion(input, footprint=footprint, structure=structure, mode=mode,
/// cval=cval, origin=origin): the minimum of x − structure over the footprint.
pub fn grey_erosion<T: Real, S: Data<Elem = T>, D: Dimension>(
    gpu: &Gpu,
    input: &ArrayBase<S, D>,
    footprint: &ndarray::ArrayViewD<bool>,
    structure: Option<&ndarray::ArrayViewD<T>>,
    origin: &[i64],
    mode: Boundary,
) -> Result<Array<T, D>> {
    let structure = structure.map(|s| s.mapv(|v| v.as_f64()));
    let f = Footprint::new(footprint, structure.as_ref().map(|s| s.view()).as_ref(), origin)?.negated();
    on_device(gpu, input, |rec, x| record_extreme(rec, x, &f, false, mode))
}

/// scipy.ndimage.grey_dilation(input, footprint=..., structure=..., mode=mode, cval=cval,
/// origin=origin): the maximum of x + structure over the reflected footprint.
pub fn grey_dilation<T: Real, S: Data<Elem = T>, D: Dimension>(
    gpu: &Gpu,
    input: &ArrayBase<S, D>,
    footprint: &ndarray::ArrayViewD<bool>,
    structure: Option<&ndarray::ArrayViewD<T>>,
    origin: &[i64],
    mode: Boundary,
) -> Result<Array<T, D>> {
    let structure = structure.map(|s| s.mapv(|v| v.as_f64()));
    let f = Footprint::reflected(footprint, structure.as_ref().map(|s| s.view()).as_ref(), origin)?;
    on_device(gpu, input, |rec, x| record_extreme(rec, x, &f, true, mode))
}

/// scipy.ndimage.distance_transform_edt(input, sampling): the exact Euclidean distance of every
/// non-zero element to the nearest zero element, `sampling` the spacing of each axis (one value
/// or one per axis; empty for 1). Felzenszwalb and Huttenlocher's lower envelopes, one pass per
/// axis on the device, squared distances in f32 (exact for squared distances below 2^24 in
/// units of the spacing), in f64 for f64 input on devices with it. An input without a zero element is refused (no distance to measure).
pub fn distance_transform_edt<T: Real, S: Data<Elem = T>, D: Dimension>(gpu: &Gpu, input: &ArrayBase<S, D>, sampling: &[f64]) -> Result<Array<T, D>> {
    distances(on_device(gpu, input, |rec, x| record_squared_distances(rec, x, sampling))?)
}

/// scipy.ndimage.distance_transform_edt(input, sampling, return_indices=True): the distances and
/// the feature transform, the coordinates of each element's nearest zero element (int32, shape
/// (input's rank, ...input's shape), as scipy's `indices`). Where zeros lie at the same distance
/// the one chosen may differ from scipy's (any of them is nearest).
#[allow(clippy::type_complexity)]
pub fn distance_transform_edt_with_indices<T: Real, S: Data<Elem = T>, D: Dimension>(
    gpu: &Gpu,
    input: &ArrayBase<S, D>,
    sampling: &[f64],
) -> Result<(Array<T, D>, ndarray::ArrayD<i32>)> {
    let dims = Shape::new(input.shape())?.dims().to_vec();
    let input = input.view().into_dyn();
    crate::check::check_finite(&input, "input")?;
    if gpu.narrows::<T>() {
        let (d, i) = distance_transform_edt_with_indices(gpu, &narrowed(&input), sampling)?;
        return Ok((with_dim(widened(&d))?, i));
    }
    let (d, near) = edt_on_device::<T>(gpu, &dims, |rec| rec.upload_once_real(&input), sampling, true)?;
    Ok((with_dim(d)?, near.expect("asked for")))
}

/// [`distance_transform_edt`] of a mask (scipy's distances of any input's non-zero elements,
/// float64 as scipy's): the mask travels as bytes (an eighth of f64's) and is widened on the
/// device, which computes in f64 where it can (else f32, widened).
pub fn distance_transform_edt_mask<S: Data<Elem = bool>, D: Dimension>(gpu: &Gpu, input: &ArrayBase<S, D>, sampling: &[f64]) -> Result<Array<f64, D>> {
    with_dim(mask_distances(gpu, &input.view().into_dyn(), sampling, false)?.0)
}

/// [`distance_transform_edt_with_indices`] of a mask, as [`distance_transform_edt_mask`].
#[allow(clippy::type_complexity)]
pub fn distance_transform_edt_mask_with_indices<S: Data<Elem = bool>, D: Dimension>(
    gpu: &Gpu,
    input: &ArrayBase<S, D>,
    sampling: &[f64],
) -> Result<(Array<f64, D>, ndarray::ArrayD<i32>)> {
    let (d, near) = mask_distances(gpu, &input.view().into_dyn(), sampling, true)?;
    Ok((with_dim(d)?, near.expect("asked for")))
}

type Distances<T> = (ndarray::ArrayD<T>, Option<ndarray::ArrayD<i32>>);

fn mask_distances(gpu: &Gpu, input: &ArrayViewD<bool>, sampling: &[f64], features: bool) -> Result<Distances<f64>> {
    let dims = Shape::new(input.shape())?.dims().to_vec();
    let unpacked = |dtype| {
        let dims = &dims;
        move |rec: &mut Recording| {
            let m = rec.upload_mask(input)?;
            crate::kernels::unpack_mask::record(rec, m, dims, dtype)
        }
    };
    if gpu.has_f64() {
        return edt_on_device::<f64>(gpu, &dims, unpacked(crate::gpu::Dtype::F64), sampling, features);
    }
    let (d, near) = edt_on_device::<f32>(gpu, &dims, unpacked(crate::gpu::Dtype::F32), sampling, features)?;
    Ok((widened(&d), near))
}

/// The distances of the array `input` records (of `dims`, in `T`), with the feature transform's
/// coordinates where `features` asks for them.
fn edt_on_device<T: Real>(
    gpu: &Gpu,
    dims: &[usize],
    input: impl FnOnce(&mut Recording) -> Result<crate::Buf>,
    sampling: &[f64],
    features: bool,
) -> Result<Distances<T>> {
    if features {
        crate::host::check_host_array("the feature transform's indices", &[dims.len(), dims.iter().product()], 4)?;
    }
    let mut rec = Recording::new(gpu);
    let x = input(&mut rec)?;
    let (squared, near) = match features {
        true => crate::ops::filter::morphology::record_feature_transform(&mut rec, x, sampling).map(|(d, n)| (d, Some(n)))?,
        false => (crate::ops::filter::morphology::record_squared_distances(&mut rec, x, sampling)?, None),
    };
    let os = rec.output(squared);
    let on = near.map(|n| rec.output(n));
    let results = rec.run()?;
    let squared = crate::gpu::GpuArray::download_joined::<T>(gpu, &[results.array(os)], dims)?;
    let near = on.map(|o| results.array(o).download_u32(gpu)).transpose()?;
    Ok((distances(squared)?, near.map(|n| unravelled(&n, dims))))
}

/// Linear indices (row-major, of `dims`) as scipy's `indices`: each unravelled into its
/// coordinates, shape (rank, ...dims).
fn unravelled(near: &ndarray::ArrayD<u32>, dims: &[usize]) -> ndarray::ArrayD<i32> {
    use rayon::prelude::*;
    let mut indices = ndarray::ArrayD::<i32>::zeros(ndarray::IxDyn(&[&[dims.len()][..], dims].concat()));
    let strides: Vec<usize> = (0..dims.len()).map(|a| dims[a + 1..].iter().product()).collect();
    for (a, mut plane) in indices.outer_iter_mut().enumerate() {
        let (stride, n) = (strides[a], dims[a]);
        let out = plane.as_slice_mut().expect("standard layout");
        out.par_iter_mut().zip(near.as_slice().expect("standard layout").par_iter()).for_each(|(o, &i)| *o = ((i as usize / stride) % n) as i32);
    }
    indices
}

/// The distances from the squared ones (in place), refusing an input without a zero element.
fn distances<T: Real, D: Dimension>(mut squared: Array<T, D>) -> Result<Array<T, D>> {
    use rayon::prelude::*;
    // The kernels' "far" (3.0e38 in either precision: f32's EDT_FAR is that literal rounded).
    let far = T::from_f64(3.0e38);
    let unreached = match squared.as_slice() {
        Some(s) => s.par_iter().any(|&v| v >= far),
        None => squared.iter().any(|&v| v >= far),
    };
    if unreached {
        return Err(crate::Error::Invalid("distance_transform_edt: the input has no zero element (background) to measure distances to".into()));
    }
    squared.par_mapv_inplace(T::sqrt);
    Ok(squared)
}

/// How a binary morphology call runs (scipy's `structure`, `iterations`, `border_value`,
/// `origin`, `mask`): `iterations` 0 repeats until the result no longer changes.
#[derive(Clone, Debug)]
pub struct Binary<'a> {
    pub structure: ndarray::ArrayViewD<'a, bool>,
    pub iterations: usize,
    pub border_value: bool,
    pub origin: Vec<i64>,
    pub mask: Option<ndarray::ArrayViewD<'a, bool>>,
}

/// scipy.ndimage.binary_erosion: true where the structure, placed there, covers only true
/// elements (outside: `border_value`), repeated `iterations` times (only where `mask` is true).
pub fn binary_erosion<S: Data<Elem = bool>, D: Dimension>(gpu: &Gpu, input: &ArrayBase<S, D>, b: &Binary) -> Result<Array<bool, D>> {
    let f = Footprint::new(&b.structure, None, &b.origin)?;
    binary_repeat(gpu, input.view().into_dyn(), b, &f, false).and_then(with_dim)
}

/// scipy.ndimage.binary_dilation: true where the reflected structure, placed there, covers a
/// true element, repeated `iterations` times (only where `mask` is true).
pub fn binary_dilation<S: Data<Elem = bool>, D: Dimension>(gpu: &Gpu, input: &ArrayBase<S, D>, b: &Binary) -> Result<Array<bool, D>> {
    let f = Footprint::reflected(&b.structure, None, &b.origin)?;
    binary_repeat(gpu, input.view().into_dyn(), b, &f, true).and_then(with_dim)
}

/// scipy.ndimage.binary_opening: `iterations` erosions, then as many dilations.
pub fn binary_opening<S: Data<Elem = bool>, D: Dimension>(gpu: &Gpu, input: &ArrayBase<S, D>, b: &Binary) -> Result<Array<bool, D>> {
    let eroded = binary_erosion(gpu, input, b)?;
    binary_dilation(gpu, &eroded, b)
}

/// scipy.ndimage.binary_closing: `iterations` dilations, then as many erosions.
pub fn binary_closing<S: Data<Elem = bool>, D: Dimension>(gpu: &Gpu, input: &ArrayBase<S, D>, b: &Binary) -> Result<Array<bool, D>> {
    let dilated = binary_dilation(gpu, input, b)?;
    binary_erosion(gpu, &dilated, b)
}

/// scipy.ndimage.binary_fill_holes(input, structure, origin): the input with every background
/// region that `structure`'s neighbourhood does not join to the outside of the array set true
/// (scipy: the complement of a dilation from the border, border value 1, within the background,
/// until stable). A symmetric structure of 3 along every axis at origin 0 (connectivities)
/// labels the background once on the device and keeps the regions that reach past an edge;
/// other structures dilate step by step as scipy.
pub fn binary_fill_holes<S: Data<Elem = bool>, D: Dimension>(
    gpu: &Gpu,
    input: &ArrayBase<S, D>,
    structure: &ndarray::ArrayViewD<bool>,
    origin: &[i64],
) -> Result<Array<bool, D>> {
    let input = input.view().into_dyn();
    let s = structure;
    if s.ndim() != input.ndim() {
        return Err(crate::Error::Shape(format!("a structure of {} axes for an array of {:?}: give it the input's rank", s.ndim(), input.shape())));
    }
    let flat: Vec<bool> = s.iter().copied().collect();
    let symmetric = flat.iter().eq(flat.iter().rev());
    if !(s.shape().iter().all(|&n| n == 3) && symmetric && origin.iter().all(|&o| o == 0)) {
        let mask = input.mapv(|v| !v);
        let from_border = Binary { structure: s.view(), iterations: 0, border_value: true, origin: origin.to_vec(), mask: Some(mask.view()) };
        let outside = binary_dilation(gpu, &ndarray::ArrayD::from_elem(input.raw_dim(), false), &from_border)?;
        return with_dim(outside.mapv(|v| !v));
    }
    let background = input.mapv(|v| !v);
    let (labels, n) = label(gpu, &background.view(), s)?;
    // Axis a can step out of the array below (above) when the structure has a true element at
    // index 0 (2) along it.
    let steps = |index: usize| (0..s.ndim()).map(move |a| s.indexed_iter().any(|(j, &on)| on && j[a] == index));
    let (down, up): (Vec<bool>, Vec<bool>) = (steps(0).collect(), steps(2).collect());
    let shape = input.shape();
    let mut outside = vec![false; n + 1];
    for (at, &l) in labels.indexed_iter() {
        if l > 0 && !outside[l as usize] {
            outside[l as usize] = (0..shape.len()).any(|a| (down[a] && at[a] == 0) || (up[a] && at[a] + 1 == shape[a]));
        }
    }
    with_dim(ndarray::Zip::from(&input).and(&labels).map_collect(|&v, &l| v || (l > 0 && !outside[l as usize])))
}

/// One binary erosion or dilation step after another on the device (0/1 in f32), the mask
/// applied between steps on the host.
fn binary_repeat(gpu: &Gpu, input: ndarray::ArrayViewD<bool>, b: &Binary, f: &Footprint, maximum: bool) -> Result<ndarray::ArrayD<bool>> {
    if b.structure.ndim() != input.ndim() {
        return Err(crate::Error::Shape(format!("a structure of {} axes for an array of {:?}: give it the input's rank", b.structure.ndim(), input.shape())));
    }
    if let Some(m) = &b.mask {
        if m.shape() != input.shape() {
            return Err(crate::Error::Shape(format!("a mask of shape {:?} for an array of {:?}", m.shape(), input.shape())));
        }
    }
    Shape::new(input.shape())?;
    let edge = Boundary::Constant(if b.border_value { 1.0 } else { 0.0 });
    let mut current = input.mapv(|v| if v { 1.0f32 } else { 0.0 });
    // Without a mask the steps are one recording; with one (or until stable) step by step.
    let steps = if b.mask.is_none() && b.iterations > 0 { b.iterations } else { 1 };
    let limit = if b.iterations == 0 { current.len() + 1 } else { b.iterations.div_ceil(steps) };
    for _ in 0..limit {
        let next = on_device(gpu, &current, |rec, x| (0..steps).try_fold(x, |x, _| record_extreme(rec, x, f, maximum, edge)))?;
        let next = match &b.mask {
            Some(m) => ndarray::Zip::from(&next).and(&current).and(m).map_collect(|&n, &c, &keep| if keep { n } else { c }),
            None => next,
        };
        let unchanged = next == current;
        current = next;
        if b.iterations == 0 && unchanged {
            break;
        }
    }
    Ok(current.mapv(|v| v > 0.5))
}

/// scipy.ndimage.uniform_filter(input, size, mode=mode, cval=cval): `size` one value for every
/// axis or one per axis.
pub fn uniform_filter<T: Real, S: Data<Elem = T>, D: Dimension>(gpu: &Gpu, input: &ArrayBase<S, D>, size: &[usize], mode: Boundary) -> Result<Array<T, D>> {
    let passes = uniform_passes(size, input.shape(), mode)?;
    with_dim(slabs::separable_host(gpu, &input.view().into_dyn(), &passes, mode)?)
}

/// scipy.ndimage.spline_filter(input, order, mode=mode): the coefficients of the B-spline of
/// `order` (2-5; scipy refuses 0 and 1 here) of every axis in turn (see `ops::interpolate` for
/// the modes' boundaries), in f32 (f64 data in f64 on devices with it). Finite input.
pub fn spline_filter<T: Real, S: Data<Elem = T>, D: Dimension>(gpu: &Gpu, input: &ArrayBase<S, D>, order: u32, mode: SplineMode) -> Result<Array<T, D>> {
    on_device(gpu, input, |rec, x| interpolate::spline_filter(rec, x, order, mode))
}

/// scipy.ndimage.spline_filter1d(input, order, axis, mode=mode): orders 0-5 (0 and 1: a copy),
/// in f32 (f64 data in f64 on devices with it). Finite input.
pub fn spline_filter1d<T: Real, S: Data<Elem = T>, D: Dimension>(
    gpu: &Gpu,
    input: &ArrayBase<S, D>,
    order: u32,
    axis: usize,
    mode: SplineMode,
) -> Result<Array<T, D>> {
    on_device(gpu, input, |rec, x| interpolate::spline_filter1d(rec, x, order, axis, mode))
}

/// scipy.ndimage.map_coordinates(input, coordinates, order, mode, cval, prefilter): `input`
/// sampled at `coordinates` (shape (input's rank, ...), any finite or NaN values: NaN gives
/// cval), in f32 (f64 data in f64 on devices with it); the result has the coordinates' shape
/// after their first axis.
pub fn map_coordinates<T, S1, S2, D1, D2>(gpu: &Gpu, input: &ArrayBase<S1, D1>, coordinates: &ArrayBase<S2, D2>, how: &Sampling) -> Result<ndarray::ArrayD<T>>
where
    T: Real,
    S1: Data<Elem = T>,
    S2: Data<Elem = T>,
    D1: Dimension,
    D2: Dimension,
{
    Shape::new(input.shape())?;
    let input = input.view().into_dyn();
    crate::check::check_finite(&input, "input")?;
    if gpu.narrows::<T>() {
        let y = map_coordinates(gpu, &narrowed(&input), &narrowed(&coordinates.view().into_dyn()), how)?;
        return Ok(widened(&y));
    }
    let mut rec = Recording::new(gpu);
    let x = rec.upload_once_real(&input)?;
    let c = rec.upload_once_real(&coordinates.view().into_dyn())?;
    let y = interpolate::map_coordinates(&mut rec, x, c, how)?;
    rec.run_fetch(y)
}

/// scipy.ndimage.affine_transform(input, matrix, offset, output_shape, order, mode, cval,
/// prefilter): output o reads the input at matrix · o + offset (`matrix` as scipy takes it, see
/// [`AffineMap::new`]; `offset` empty for zeros); the output shaped `output_shape` or as the
/// input.
pub fn affine_transform<T: Real, S: Data<Elem = T>, D: Dimension>(
    gpu: &Gpu,
    input: &ArrayBase<S, D>,
    matrix: &ndarray::ArrayViewD<f64>,
    offset: &[f64],
    output_shape: Option<&[usize]>,
    how: &Sampling,
) -> Result<Array<T, D>> {
    let map = AffineMap::new(matrix, offset, input.ndim())?;
    let out = output_shape.map_or_else(|| input.shape().to_vec(), <[usize]>::to_vec);
    Shape::new(&out)?;
    on_device(gpu, input, |rec, x| interpolate::affine_transform(rec, x, &map, &out, how))
}

/// scipy.ndimage.shift(input, shift, order, mode, cval, prefilter): `shift` one value for every
/// axis or one per axis.
pub fn shift<T: Real, S: Data<Elem = T>, D: Dimension>(gpu: &Gpu, input: &ArrayBase<S, D>, shift: &[f64], how: &Sampling) -> Result<Array<T, D>> {
    let (map, out) = interpolate::shift_map(input.shape(), shift)?;
    on_device(gpu, input, |rec, x| interpolate::affine_transform(rec, x, &map, &out, how))
}

/// scipy.ndimage.zoom(input, zoom, order, mode, cval, prefilter, grid_mode): `zoom` one
/// factor for every axis or one per axis; the output has round(n · factor) samples per axis
/// (ties to even, as Python rounds); the corners' samples aligned, or with `grid_mode` the
/// pixels' outer edges (scipy keeps the mode as given: `grid-constant` and `grid-wrap` are the
/// ones that see the array as pixels).
pub fn zoom<T: Real, S: Data<Elem = T>, D: Dimension>(
    gpu: &Gpu,
    input: &ArrayBase<S, D>,
    zoom: &[f64],
    grid_mode: bool,
    how: &Sampling,
) -> Result<Array<T, D>> {
    let (map, out) = interpolate::zoom_map(input.shape(), zoom, grid_mode)?;
    on_device(gpu, input, |rec, x| interpolate::affine_transform(rec, x, &map, &out, how))
}

/// scipy.ndimage.rotate(input, angle, axes, reshape, order, mode, cval, prefilter): `angle` in
/// degrees in the plane of `axes` (negative counts from the end); with `reshape` the output
/// plane grows to hold the whole rotated input.
pub fn rotate<T: Real, S: Data<Elem = T>, D: Dimension>(
    gpu: &Gpu,
    input: &ArrayBase<S, D>,
    angle: f64,
    axes: [isize; 2],
    reshape: bool,
    how: &Sampling,
) -> Result<Array<T, D>> {
    let (map, out) = interpolate::rotate_map(input.shape(), angle, axes, reshape)?;
    on_device(gpu, input, |rec, x| interpolate::affine_transform(rec, x, &map, &out, how))
}

/// scipy.ndimage.fourier_shift(input, shift, n, axis): a spectrum (the FFT of an array)
/// multiplied by the phase ramp that shifts the array by `shift` (one value or one per axis);
/// `n = Some(len)` when `input` is a real transform's half spectrum along `axis` (negative counts
/// from the end) of a length-len signal, as scipy's n ≥ 0. The exact periodic sub-sample shift:
/// ifftn(fourier_shift(fftn(x), s)) is x shifted by s with wrap-around.
pub fn fourier_shift<T: Real, S: Data<Elem = num_complex::Complex<T>>, D: Dimension>(
    gpu: &Gpu,
    input: &ArrayBase<S, D>,
    shift: &[f64],
    n: Option<usize>,
    axis: isize,
) -> Result<Array<num_complex::Complex<T>, D>> {
    on_spectrum(gpu, input, n, axis, "fourier_shift", |rec, x, real| interpolate::fourier_shift(rec, x, shift, real))
}

/// scipy.ndimage.fourier_gaussian(input, sigma, n, axis): a spectrum times the transform of a
/// Gaussian of standard deviation `sigma` (one value or one per axis), exp(−2π² σ² f²); `n` and
/// `axis` as [`fourier_shift`]'s.
pub fn fourier_gaussian<T: Real, S: Data<Elem = num_complex::Complex<T>>, D: Dimension>(
    gpu: &Gpu,
    input: &ArrayBase<S, D>,
    sigma: &[f64],
    n: Option<usize>,
    axis: isize,
) -> Result<Array<num_complex::Complex<T>, D>> {
    on_spectrum(gpu, input, n, axis, "fourier_gaussian", |rec, x, real| record_fourier_filter(rec, x, FourierFilter::Gaussian, sigma, real))
}

/// scipy.ndimage.fourier_uniform(input, size, n, axis): a spectrum times the transform of a box
/// of `size` samples along each axis, sinc(size · f).
pub fn fourier_uniform<T: Real, S: Data<Elem = num_complex::Complex<T>>, D: Dimension>(
    gpu: &Gpu,
    input: &ArrayBase<S, D>,
    size: &[f64],
    n: Option<usize>,
    axis: isize,
) -> Result<Array<num_complex::Complex<T>, D>> {
    on_spectrum(gpu, input, n, axis, "fourier_uniform", |rec, x, real| record_fourier_filter(rec, x, FourierFilter::Uniform, size, real))
}

/// scipy.ndimage.fourier_ellipsoid(input, size, n, axis): a spectrum of 1-3 axes times the
/// transform of an ellipsoid of diameters `size` (sin r / r, 2 J1(r) / r or 3 (sin r − r cos r)
/// / r³ at r = π |size · f|).
pub fn fourier_ellipsoid<T: Real, S: Data<Elem = num_complex::Complex<T>>, D: Dimension>(
    gpu: &Gpu,
    input: &ArrayBase<S, D>,
    size: &[f64],
    n: Option<usize>,
    axis: isize,
) -> Result<Array<num_complex::Complex<T>, D>> {
    if T::DTYPE == crate::gpu::Dtype::F64 {
        // Its transfer function needs sin, cos and J1 in f64, which WGSL's f64 lacks: complex f64
        // spectra are filtered on the host, in f64, by the reference.
        let (x, real) = (input.view().into_dyn().to_owned(), spectrum_axis(input.ndim(), n, axis, "fourier_ellipsoid")?);
        crate::check::check_finite(&x.view(), "input")?;
        let x = x.mapv(|c| num_complex::Complex64::new(c.re.as_f64(), c.im.as_f64()));
        let y = crate::ops::filter::fourier::fourier_filter_reference(&x, FourierFilter::Ellipsoid, size, real)?;
        return with_dim(y.mapv(|c| num_complex::Complex::new(T::from_f64(c.re), T::from_f64(c.im))));
    }
    on_spectrum(gpu, input, n, axis, "fourier_ellipsoid", |rec, x, real| record_fourier_filter(rec, x, FourierFilter::Ellipsoid, size, real))
}

/// `(axis, n)` of a half spectrum (`n` given; negative axes count from the end), checked.
fn spectrum_axis(ndim: usize, n: Option<usize>, axis: isize, what: &str) -> Result<Option<(usize, usize)>> {
    let d = ndim as isize;
    let axis = if axis < 0 { axis + d } else { axis };
    if !(0..d).contains(&axis) {
        return Err(crate::Error::Invalid(format!("{what}: axis {axis} of a {d}-axis array")));
    }
    Ok(n.map(|n| (axis as usize, n)))
}

/// Runs `record(rec, spectrum, real)` on a finite complex input of either precision (complex f64
/// in f64 where the device has it, else in f32 and converted), `real` = (axis, n) for a half
/// spectrum.
fn on_spectrum<T: Real, S: Data<Elem = num_complex::Complex<T>>, D: Dimension>(
    gpu: &Gpu,
    input: &ArrayBase<S, D>,
    n: Option<usize>,
    axis: isize,
    what: &str,
    record: impl FnOnce(&mut Recording, crate::Buf, Option<(usize, usize)>) -> Result<crate::Buf>,
) -> Result<Array<num_complex::Complex<T>, D>> {
    Shape::new(input.shape())?;
    let real = spectrum_axis(input.ndim(), n, axis, what)?;
    let input = input.view().into_dyn();
    crate::check::check_finite(&input, "input")?;
    if gpu.narrows::<T>() {
        let narrow = crate::gpu::narrowed_complex(&input);
        let y = on_spectrum(gpu, &narrow, n, axis, what, record)?;
        return with_dim(crate::gpu::widened_complex(&y));
    }
    let mut rec = Recording::new(gpu);
    let x = rec.upload_once_complex(&input)?;
    let y = record(&mut rec, x, real)?;
    let dl = rec.download(y);
    with_dim(rec.run()?.take_complex::<T>(dl)?)
}

/// pycudadecon's deskewGPU of a stage-scanned light-sheet stack (planes, rows, columns), or
/// with `geometry.rotate` the stack in coverslip coordinates (see [`Deskew`]): the affine map of
/// [`deskew_map`] sampled as [`affine_transform`] samples (pycudadecon: order 1, mode constant,
/// cval its `pad_val`). A stack beyond one device buffer or the device's memory is deskewed in
/// slabs with the same result: of planes for the deskewed frame (a plane reads only its own
/// plane: the slabs are contiguous in and out), of rows for the coverslip frame.
pub fn deskew<S: Data<Elem = f32>>(gpu: &Gpu, stack: &ArrayBase<S, ndarray::Ix3>, geometry: &Deskew, how: &Sampling) -> Result<ndarray::Array3<f32>> {
    let (map, out) = deskew_map(stack.shape(), geometry)?;
    crate::host::check_host_array("the deskewed stack", &out, 4)?;
    // Slabs along the axis the map leaves alone: planes (axis 0) unless rotated, else rows.
    let axis = if geometry.rotate { 1 } else { 0 };
    let per_slab = deskew_slab(gpu, stack.shape(), &out, axis, how)?;
    if per_slab >= out[axis] {
        return on_device(gpu, stack, |rec, x| interpolate::affine_transform(rec, x, &map, &out, how));
    }
    let mut result = ndarray::Array3::from_shape_vec((out[0], out[1], out[2]), crate::host::zeroed_vec(out.iter().product())).expect("the output's size");
    for first in (0..out[axis]).step_by(per_slab) {
        let end = (first + per_slab).min(out[axis]);
        let mut part_out = out.clone();
        part_out[axis] = end - first;
        // The slab's own index starts at 0: other axes' coordinates move by the slab's start.
        let mut part_map = map.clone();
        (0..3).filter(|&a| a != axis).for_each(|a| part_map.offset[a] += map.matrix[a][axis] * first as f64);
        let input = stack.slice_axis(ndarray::Axis(axis), (first..end).into());
        let part = on_device(gpu, &input, |rec, x| interpolate::affine_transform(rec, x, &part_map, &part_out, how))?;
        let mut target = result.slice_axis_mut(ndarray::Axis(axis), (first..end).into());
        match (target.as_slice_mut(), part.as_slice()) {
            // Planes: one contiguous block, copied by every core.
            (Some(t), Some(p)) => {
                use rayon::prelude::*;
                t.par_chunks_mut(1 << 20).zip(p.par_chunks(1 << 20)).for_each(|(t, p)| t.copy_from_slice(p));
            }
            _ => target.assign(&part),
        }
    }
    Ok(result)
}

/// [`deskew`]'s work added to a recording: `x` a device stack in one buffer.
pub fn record_deskew(rec: &mut Recording, x: crate::Buf, geometry: &Deskew, how: &Sampling) -> Result<crate::Buf> {
    let (map, out) = deskew_map(rec.dims(x), geometry)?;
    interpolate::affine_transform(rec, x, &map, &out, how)
}

/// Planes or rows (`axis`) of a stack `dims` deskewed to `out` at once: every buffer within one
/// binding and the dispatch's index range, the input, its prefiltered (and padded) copies and
/// the output within the device's memory budget.
fn deskew_slab(gpu: &Gpu, dims: &[usize], out: &[usize], axis: usize, how: &Sampling) -> Result<usize> {
    let pad = how.prepad().unwrap_or(0) as u64;
    let padded = |n: usize, a: usize| n as u64 + if a == axis { 0 } else { 2 * pad };
    let slice_in = (0..3).filter(|&a| a != axis).map(|a| padded(dims[a], a)).product::<u64>() * 4;
    let slice_out = (0..3).filter(|&a| a != axis).map(|a| out[a] as u64).product::<u64>() * 4;
    let copies = 1 + u64::from(how.prepad().is_some()) + u64::from(pad > 0);
    let largest = gpu.max_buffer_bytes().min(u32::MAX as u64 * 4);
    let per_slab = (largest / slice_in.max(slice_out)).min(gpu.memory_budget_bytes() / (copies * slice_in + slice_out));
    if per_slab == 0 {
        return Err(crate::Error::TooLarge {
            what: format!("one {} of the deskew of {dims:?} to {out:?}", if axis == 0 { "plane" } else { "row" }),
            bytes: copies * slice_in + slice_out,
            limit: largest.min(gpu.memory_budget_bytes()),
        });
    }
    Ok(per_slab as usize)
}

/// pycudadecon's default `pad_val`: the median of the stack's last plane (f64, numpy's median).
pub fn deskew_pad_default<S: Data<Elem = f32>>(stack: &ArrayBase<S, ndarray::Ix3>) -> f64 {
    if stack.is_empty() {
        return f64::NAN;
    }
    let last = stack.shape()[0] - 1;
    let mut plane: Vec<f64> = stack.index_axis(ndarray::Axis(0), last).iter().map(|&v| v as f64).collect();
    crate::ops::reduce::cpu::median(&mut plane)
}

/// A small array of the deskewed frame (a model PSF, planes [`Deskew::deskewed_dz`] apart,
/// centred on its middle plane) as the raw stage-scanned stack sees it ([`skew_map`]), on the
/// host in f64 (cubic B-spline, zero outside, its small negative ringing set to 0 so the PSF
/// stays a PSF): the PSF to deconvolve a raw stack with before deskewing it.
pub fn skew_psf(psf: &ndarray::ArrayView3<f64>, geometry: &Deskew) -> Result<ndarray::Array3<f64>> {
    let (map, out) = skew_map(psf.shape(), geometry)?;
    crate::host::check_host_array("the skewed PSF's coordinates", &[3, out[0], out[1], out[2]], 8)?;
    let how = Sampling { order: 3, mode: SplineMode::Constant, cval: 0.0, prefilter: true, sampler: interpolate::Sampler::Buffer };
    let y = interpolate::cpu::map_coordinates(&psf.to_owned().into_dyn(), &coordinates(&map, &out), &how);
    Ok(y.mapv(|v| v.max(0.0)).into_dimensionality().expect("three axes"))
}

/// `op` on `input` uploaded whole (finite), its result downloaded (f64 data computed in f32 on
/// a device without f64).
fn on_device<T: Real, S: Data<Elem = T>, D: Dimension>(
    gpu: &Gpu,
    input: &ArrayBase<S, D>,
    op: impl Fn(&mut Recording, crate::Buf) -> Result<crate::Buf>,
) -> Result<Array<T, D>> {
    Shape::new(input.shape())?;
    let input = input.view().into_dyn();
    crate::check::check_finite(&input, "input")?;
    if gpu.narrows::<T>() {
        return with_dim(widened(&on_device(gpu, &narrowed(&input), op)?));
    }
    let mut rec = Recording::new(gpu);
    let x = rec.upload_once_real(&input)?;
    let y = op(&mut rec, x)?;
    with_dim(rec.run_fetch(y)?)
}
