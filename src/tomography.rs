//! Parallel-beam tomography on the GPU (2D, stacks of slices batched): [`radon`] (forward
//! projection), [`backproject`], [`fbp`] (filtered back-projection with scikit-image's filters),
//! [`mlem`] (expectation maximisation, the whole loop on the device, its KL divergence reported),
//! [`find_center`] (the rotation centre, as TomoPy's), by the log-polar method where it applies
//! and pays, else by the direct strip-model pair ([`Method`]),
//! in ASTRA's 2D `parallel` geometry ([`Geometry`]; the module
//! [`crate::ops::tomography`] documents it and the conversion to scikit-image's conventions).
//!
//! ```no_run
//! use lucent::tomography::{fbp, radon, Filter, Geometry};
//! let gpu = lucent::Gpu::new()?;
//! let image = lucent::phantom::shepp_logan::image(256).mapv(|v| v as f32);
//! let g = Geometry::new(256, Geometry::equally_spaced(384), None, None)?;
//! let sinogram = radon(&gpu, &image, &g)?;
//! let reconstruction = fbp(&gpu, &sinogram, &g, Filter::Ramp)?;
//! # Ok::<(), lucent::Error>(())
//! ```

mod preprocess;
mod reconstruct;

pub use preprocess::{normalize, remove_large_stripe, remove_outlier, remove_stripe_based_sorting, remove_stripe_fw, retrieve_phase};

pub use reconstruct::{
    reconstruct, reconstruct_array, ArrayScan, Center, Normalize, Options as ReconstructOptions, Outliers, Paganin, Part, Precision,
    Report as ReconstructReport, Samples, ScanSource, Slab, Stripe, LOG_FLOOR,
};

use ndarray::{ArrayBase, Data, Dimension};

use crate::error::Result;
use crate::gpu::Gpu;
use crate::graph::Recording;
pub use crate::placement::Progress;

pub use crate::ops::tomography::{
    kl_divergence, record_backproject, record_fbp, record_filter, record_mlem, record_mlem_from, record_project, Filter, Geometry, Method, Mlem, EM_EPSILON,
};

/// The CPU references (f64), with the semantics of the GPU functions: what `--device cpu` runs
/// and what the tests compare against.
pub mod cpu {
    use super::{Filter, Geometry};
    use crate::error::Result;
    use ndarray::Axis;

    pub use crate::ops::tomography::cpu::{backproject, fbp, mlem, project};
    /// The sum gridding FBP ([`super::Method::Gridrec`]) approximates, in f64.
    pub use crate::ops::tomography::gridrec::reference as gridrec;
    /// TomoPy's preprocessing, f64 (the pipeline's steps are tested against them).
    pub use crate::ops::tomography::prep::cpu::{
        detect_stripe, find_center_vo, minus_log, normalize, phase_filter, remove_large_stripe, remove_outlier, remove_stripe_based_sorting, remove_stripe_fw,
        retrieve_phase, sorting_default_size, vo_metrics, wavelength, MINUS_LOG_FLOOR,
    };

    /// [`super::find_center`] with the reference FBP.
    pub fn find_center(sinogram: &ndarray::ArrayView2<f32>, g: &Geometry, radius: f64) -> Result<(f64, Vec<(f64, f64)>)> {
        crate::check::check_finite(&sinogram.view().into_dyn(), "the sinogram")?;
        crate::ops::tomography::check_center_search(sinogram, g)?;
        let s = sinogram.mapv(f64::from).insert_axis(Axis(0));
        crate::ops::tomography::find_center(g, radius, |centres| {
            Ok(centres
                .iter()
                .map(|&c| fbp(&s.view(), &Geometry { center: c, ..g.clone() }, Filter::Ramp).index_axis_move(Axis(0), 0).mapv(|v| v as f32).into_dyn())
                .collect())
        })
    }
}

/// Slices of a stack per submission: as many as keep about `per_slice` bytes each (the slice's
/// input, output and temporaries) within a quarter of the memory budget and one buffer.
fn batches(gpu: &Gpu, slices: usize, per_slice: u64) -> impl Iterator<Item = std::ops::Range<usize>> {
    let budget = (gpu.memory_budget_bytes() / 4).min(gpu.max_buffer_bytes());
    let batch = (budget / per_slice.max(1)).clamp(1, slices.max(1) as u64) as usize;
    (0..slices).step_by(batch).map(move |start| start..(start + batch).min(slices))
}

/// Runs `record` on `x` (f32, finite: one slice of 2 axes, or a stack of 3 whose slices go in
/// [`batches`], each slice's result of shape `out`) and returns the result with
/// x's dimension type.
fn one_call<D: Dimension>(
    gpu: &Gpu,
    x: &ArrayBase<impl Data<Elem = f32>, D>,
    what: &str,
    per_slice: u64,
    out: [usize; 2],
    progress: &mut dyn FnMut(Progress),
    record: impl Fn(&mut Recording, crate::graph::Buf) -> Result<crate::graph::Buf>,
) -> Result<ndarray::Array<f32, D>> {
    let x = x.view().into_dyn();
    if x.ndim() != 3 {
        crate::check::check_finite(&x, what)?;
        let mut rec = Recording::new(gpu);
        let b = rec.upload_once_f32(&x)?;
        let y = record(&mut rec, b)?;
        let d = rec.download(y);
        return crate::gpu::with_dim(rec.run()?.into_f32(d)?);
    }
    // Each batch checked just before its upload (while it is in the host's caches), its result
    // streamed back straight into its rows of the stack.
    let slices = x.shape()[0];
    let per = out[0] * out[1];
    let mut result = crate::host::zeroed_vec::<f32>(slices * per);
    for range in batches(gpu, slices, per_slice) {
        let part = x.slice_axis(ndarray::Axis(0), ndarray::Slice::from(range.clone()));
        if crate::check::check_finite(&part, what).is_err() {
            // (Found again in the whole stack, for its index there.)
            crate::check::check_finite(&x, what)?;
        }
        let mut rec = Recording::new(gpu);
        let b = rec.upload_once_f32(&part)?;
        let y = record(&mut rec, b)?;
        let o = rec.output(y);
        let array = rec.run()?.array(o);
        let rows = [range.len(), out[0], out[1]];
        crate::gpu::GpuArray::download_window_into_f32(gpu, &[array], &[0, 0, 0], &rows, &mut result[range.start * per..range.end * per])?;
        progress(Progress::new("slices", range.end, slices));
    }
    crate::gpu::with_dim(ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[slices, out[0], out[1]]), result).expect("sizes match"))
}

/// Bytes a slice's images, sinograms, FBP's padded spectra and the log-polar method's grids
/// take, roughly.
fn slice_bytes(g: &Geometry) -> u64 {
    let (n, a, d, p) = (g.size as u64, g.angles.len() as u64, g.detectors as u64, g.padded_detectors() as u64);
    let grids = if g.uses_logpolar().unwrap_or(false) {
        2 * crate::ops::tomography::logpolar::grid_bytes(g)
    } else if g.method == Method::Gridrec {
        // The 2N × 2N complex grid, its transform's temporary and the cropped image.
        3 * 8 * (4 * n * n)
    } else {
        0
    };
    4 * (3 * n * n + 3 * a * d + 3 * a * p) + grids
}

/// What [`apply`] does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    Radon,
    Backproject,
    Fbp(Filter),
}

/// [`radon`], [`backproject`] or [`fbp`] of a slice or a stack, calling `progress` (stage
/// "slices": done, of how many) after each batch of a stack's slices.
pub fn apply<D: Dimension>(
    gpu: &Gpu,
    op: Operation,
    x: &ArrayBase<impl Data<Elem = f32>, D>,
    g: &Geometry,
    progress: &mut dyn FnMut(Progress),
) -> Result<ndarray::Array<f32, D>> {
    let bytes = slice_bytes(g);
    match op {
        Operation::Radon => one_call(gpu, x, "the image", bytes, [g.angles.len(), g.detectors], progress, |rec, x| record_project(rec, x, g)),
        Operation::Backproject => one_call(gpu, x, "the sinogram", bytes, [g.size, g.size], progress, |rec, x| record_backproject(rec, x, g)),
        Operation::Fbp(filter) => one_call(gpu, x, "the sinogram", bytes, [g.size, g.size], progress, |rec, x| record_fbp(rec, x, g, filter)),
    }
}

/// The projections (angles, detectors) of an N×N image, or (S, angles, detectors) of a stack.
pub fn radon<D: Dimension>(gpu: &Gpu, image: &ArrayBase<impl Data<Elem = f32>, D>, g: &Geometry) -> Result<ndarray::Array<f32, D>> {
    apply(gpu, Operation::Radon, image, g, &mut |_| {})
}

/// The back-projection (N, N) of a sinogram (angles, detectors), or of a stack.
pub fn backproject<D: Dimension>(gpu: &Gpu, sinogram: &ArrayBase<impl Data<Elem = f32>, D>, g: &Geometry) -> Result<ndarray::Array<f32, D>> {
    apply(gpu, Operation::Backproject, sinogram, g, &mut |_| {})
}

/// Filtered back-projection of a sinogram (angles equally spaced over [0, π)), or of a stack.
pub fn fbp<D: Dimension>(gpu: &Gpu, sinogram: &ArrayBase<impl Data<Elem = f32>, D>, g: &Geometry, filter: Filter) -> Result<ndarray::Array<f32, D>> {
    apply(gpu, Operation::Fbp(filter), sinogram, g, &mut |_| {})
}

/// MLEM iterations one submission holds: the host records and compiles the next while the GPU
/// runs one (a recording of all iterations kept the GPU idle while it was made, a third of the
/// time at 512²).
const EM_STEPS_PER_SUBMISSION: usize = 8;

/// One batch's MLEM estimate and, per iteration, its Σ Rf and Σ g ln(g / (Rf + ε)).
type EmPart = (ndarray::ArrayD<f32>, Vec<(f64, f64)>);

/// `iterations` of MLEM (f ← f · R#(g / (Rf + ε)) / R#1 from a constant 1) on a sinogram of
/// counts (≥ 0, finite) or a stack; returns the estimate and the KL divergence of each iterate
/// before its update.
pub fn mlem<D: Dimension>(
    gpu: &Gpu,
    sinogram: &ArrayBase<impl Data<Elem = f32>, D>,
    g: &Geometry,
    iterations: usize,
) -> Result<(ndarray::Array<f32, D>, Vec<f64>)> {
    mlem_with(gpu, sinogram, g, iterations, &mut |_| {})
}

/// [`mlem`], calling `progress` (stage "slices") after each batch of a stack's slices.
pub fn mlem_with<D: Dimension>(
    gpu: &Gpu,
    sinogram: &ArrayBase<impl Data<Elem = f32>, D>,
    g: &Geometry,
    iterations: usize,
    progress: &mut dyn FnMut(Progress),
) -> Result<(ndarray::Array<f32, D>, Vec<f64>)> {
    if !(1..=100_000).contains(&iterations) {
        return Err(crate::Error::Invalid(format!("{iterations} EM iterations (1 to 100000)")));
    }
    let x = sinogram.view().into_dyn();
    crate::check::check_finite(&x, "the sinogram")?;
    if let Some(v) = x.iter().find(|&&v| v < 0.0) {
        return Err(crate::Error::Invalid(format!("a negative count ({v}) in the sinogram: EM takes counts of 0 or more")));
    }
    let counts: f64 = x.iter().map(|&v| v as f64).sum();
    // Stacks in batches of slices; the KL divergence sums over all of them. The iterations go
    // in submissions of a few, the estimate and the normalisation carried on the device from one
    // to the next; each submission is recorded while the one before it runs.
    let run = |part: &ndarray::ArrayViewD<f32>| -> Result<EmPart> {
        let sinogram = crate::gpu::GpuArray::upload_f32(gpu, part)?;
        let mut sums: Vec<(f64, f64)> = Vec::with_capacity(iterations);
        let (mut carried, mut running, mut recorded) = (None, None, 0);
        let mut estimate = None;
        while sums.len() < iterations {
            let next = if recorded < iterations {
                let steps = (iterations - recorded).min(EM_STEPS_PER_SUBMISSION);
                let mut rec = Recording::new(gpu);
                let b = rec.input(&sinogram);
                let start = carried.as_ref().map(|(f, norm): &(crate::gpu::GpuArray, crate::gpu::GpuArray)| (rec.input(f), rec.input(norm)));
                let run = record_mlem_from(&mut rec, b, start, g, steps)?;
                rec.output(run.estimate);
                rec.output(run.norm);
                let last = recorded + steps == iterations;
                let d = last.then(|| rec.download(run.estimate));
                let downloads: Vec<_> = run.sums.iter().map(|&(q, t)| (rec.download(q), rec.download(t))).collect();
                let compiled = rec.compile()?;
                let started = compiled.start(gpu)?;
                let [f, norm]: [crate::gpu::GpuArray; 2] = compiled.outputs().try_into().expect("two outputs");
                carried = Some((f, norm));
                recorded += steps;
                Some((compiled, started, d, downloads))
            } else {
                None
            };
            // The submission before this one: its sums (and the estimate, after the last).
            if let Some((compiled, started, d, downloads)) = std::mem::replace(&mut running, next) {
                let mut results = compiled.finish(gpu, started)?;
                let first = |v: ndarray::ArrayD<f32>| v.iter().next().copied().unwrap_or(f32::NAN) as f64;
                for &(q, t) in &downloads {
                    sums.push((first(results.f32(q)?), first(results.f32(t)?)));
                }
                if let Some(d) = d {
                    estimate = Some(results.take_f32(d)?);
                }
            }
        }
        Ok((estimate.expect("at least one iteration"), sums))
    };
    let (estimate, sums) = if x.ndim() != 3 {
        run(&x)?
    } else {
        let slices = x.shape()[0];
        let mut estimate = ndarray::ArrayD::<f32>::zeros(ndarray::IxDyn(&[slices, g.size, g.size]));
        let mut sums = vec![(0.0, 0.0); iterations];
        // (Twice a projection's batch: two submissions' temporaries live at once.)
        for range in batches(gpu, slices, 4 * slice_bytes(g)) {
            let (end, range) = (range.end, ndarray::Slice::from(range));
            let (part, part_sums) = run(&x.slice_axis(ndarray::Axis(0), range))?;
            estimate.slice_axis_mut(ndarray::Axis(0), range).assign(&part);
            sums.iter_mut().zip(part_sums).for_each(|(s, p)| *s = (s.0 + p.0, s.1 + p.1));
            progress(Progress::new("slices", end, slices));
        }
        (estimate, sums)
    };
    let kl = sums.iter().map(|&(q, t)| kl_divergence(q, t, counts)).collect();
    Ok((crate::gpu::with_dim(estimate)?, kl))
}

/// The rotation centre of a sinogram (angles over [0, π)) or of a stack's first slice, as
/// TomoPy's `find_center`: the least entropy of the FBP reconstruction's histogram, within
/// `radius` of the detector's middle ([`crate::ops::tomography::find_center`]). Returns the
/// centre (detector coordinate) and each tried centre's entropy.
pub fn find_center(gpu: &Gpu, sinogram: &ndarray::ArrayView2<f32>, g: &Geometry, radius: f64) -> Result<(f64, Vec<(f64, f64)>)> {
    crate::check::check_finite(&sinogram.view().into_dyn(), "the sinogram")?;
    crate::ops::tomography::check_center_search(sinogram, g)?;
    let resident = crate::gpu::GpuArray::upload_f32(gpu, &sinogram.view().into_dyn())?;
    crate::ops::tomography::find_center(g, radius, |centres| {
        // Eight reconstructions per submission.
        let mut images = Vec::new();
        for chunk in centres.chunks(8) {
            let mut rec = Recording::new(gpu);
            let x = rec.input(&resident);
            let downloads = chunk
                .iter()
                .map(|&c| {
                    let at = Geometry { center: c, ..g.clone() };
                    let y = record_fbp(&mut rec, x, &at, Filter::Ramp)?;
                    Ok(rec.download(y))
                })
                .collect::<Result<Vec<_>>>()?;
            let results = rec.run()?;
            for d in downloads {
                images.push(results.f32(d)?);
            }
        }
        Ok(images)
    })
}

pub use crate::ops::tomography::vector::fista::DEFAULT_TV_ITERATIONS as FISTA_TV_ITERATIONS;
pub use crate::ops::tomography::vector::geometry::{ProjectionGeometry, VolumeGeometry};
/// The ASTRA-geometry functions' recorded forms, for pipelines: `record_views` uploads a
/// geometry's views once per recording, the others record on them.
pub use crate::ops::tomography::vector::gpu::{
    record_backproject as record_back_project, record_fdk, record_project as record_forward_project, setup as record_views,
};
pub use crate::ops::tomography::vector::iterative::{Algorithm, Options as IterativeOptions, Solution};
pub use crate::ops::tomography::vector::sart::DEFAULT_SUBSET_SIZE as SART_SUBSET_SIZE;
pub use crate::ops::tomography::vector::{Projector, Views};

/// The f64 references of the ASTRA-geometry functions ([`forward_project`] and the rest).
pub mod vector_cpu {
    pub use crate::ops::tomography::vector::cpu::{backproject, fdk, project, solve};
}

/// The geometry's views, the input checked (shape, finite) and the output's host size.
fn prepared(x: &ndarray::ArrayViewD<f32>, shape: &[usize], out: &[usize], what: &str) -> Result<()> {
    if x.shape() != shape {
        return Err(crate::Error::Shape(format!("{what} {:?} for a geometry of {shape:?}", x.shape())));
    }
    crate::check::check_finite(x, what)?;
    crate::host::check_host_array("the result", out, 4)
}

/// Refuses a result that overflowed f32 (finite input of values near f32's largest).
fn finite(y: ndarray::ArrayD<f32>) -> Result<ndarray::ArrayD<f32>> {
    if y.iter().any(|v| !v.is_finite()) {
        return Err(crate::Error::NonFinite("the result overflows f32: scale the input down".into()));
    }
    Ok(y)
}

/// The projections of a volume (Z, Y, X) or image (Y, X) in any ASTRA geometry: (rows, angles,
/// cols) in 3D, (angles, cols) in 2D, by Joseph's ray-driven projector (as ASTRA's CUDA FP).
/// Volumes and projections beyond one buffer or the device's memory go in slabs of slices and
/// chunks of views, through the host (as do [`back_project`] and [`fdk`]).
/// A 2D geometry (`parallel`, `fanflat`, their `_vec` forms) with a 3D volume geometry is a
/// stack of 2D problems, one per slice: projections (slices, angles, cols), every function.
pub fn forward_project(gpu: &Gpu, volume: &ndarray::ArrayViewD<f32>, projections: &ProjectionGeometry, grid: &VolumeGeometry) -> Result<ndarray::ArrayD<f32>> {
    let views = Views::new(projections, grid)?;
    prepared(volume, &views.volume_shape(), &views.projection_shape(), "the volume")?;
    finite(crate::ops::tomography::vector::blocks::project(gpu, volume, &views)?.0)
}

/// The back-projection of projections in any ASTRA geometry: the exact adjoint of
/// [`forward_project`] ([`Projector::Matched`]) or the faster voxel-driven one
/// ([`Projector::Astra`], as ASTRA's CUDA BP).
pub fn back_project(
    gpu: &Gpu,
    data: &ndarray::ArrayViewD<f32>,
    projections: &ProjectionGeometry,
    grid: &VolumeGeometry,
    projector: Projector,
) -> Result<ndarray::ArrayD<f32>> {
    let views = Views::new(projections, grid)?;
    prepared(data, &views.projection_shape(), &views.volume_shape(), "the projections")?;
    finite(crate::ops::tomography::vector::blocks::back_project(gpu, data, &views, projector)?.0)
}

/// FDK of circular cone-beam projections (`cone`), or fan-beam FBP (`fanflat`), with Parker's
/// weights where the scan is short of a full turn; plain FBP for `parallel` and `parallel3d`
/// views over a half or a full turn.
pub fn fdk(
    gpu: &Gpu,
    data: &ndarray::ArrayViewD<f32>,
    projections: &ProjectionGeometry,
    grid: &VolumeGeometry,
    filter: Filter,
) -> Result<ndarray::ArrayD<f32>> {
    let views = Views::new(projections, grid)?;
    crate::ops::tomography::vector::fdk::weights(projections)?;
    prepared(data, &views.projection_shape(), &views.volume_shape(), "the projections")?;
    finite(crate::ops::tomography::vector::blocks::fdk(gpu, data, projections, &views, filter)?.0)
}

/// SIRT, CGLS, MLEM, OS-SART, OSEM or FISTA-TV ([`Algorithm`]) of projections in any ASTRA
/// geometry, with ASTRA's options; calls `progress` (stage "iterations") as it goes. SIRT, CGLS
/// and MLEM take volumes and projections beyond one buffer (slabs and chunks of views, every
/// piece on the device); the others refuse them.
pub fn iterative(
    gpu: &Gpu,
    algorithm: Algorithm,
    data: &ndarray::ArrayViewD<f32>,
    projections: &ProjectionGeometry,
    grid: &VolumeGeometry,
    options: &IterativeOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<Solution> {
    let views = Views::new(projections, grid)?;
    crate::host::check_host_array("the result", &views.volume_shape(), 4)?;
    let solution = crate::ops::tomography::vector::iterative::solve(gpu, algorithm, data, &views, options, progress)?;
    Ok(Solution { volume: finite(solution.volume)?, ..solution })
}

/// The detector's horizontal offset (columns along u; the rotation axis's projection off the
/// detector's middle) of circular fan- or cone-beam projections, as [`find_center`] finds the
/// centre: the offset whose fan-beam FBP of the mid-plane (the detector's middle row; the mean of
/// the two middle rows for an even count) has the least entropy, searched within `radius`
/// columns. Returns the offset and each tried offset's entropy.
pub fn find_offset(gpu: &Gpu, data: &ndarray::ArrayViewD<f32>, projections: &ProjectionGeometry, radius: f64) -> Result<(f64, Vec<(f64, f64)>)> {
    let (rows, cols) = projections.detector();
    let fan = match projections {
        ProjectionGeometry::Cone { spacing_x, angles, source_origin, origin_detector, .. } => ProjectionGeometry::FanFlat {
            width: *spacing_x,
            count: cols,
            angles: angles.clone(),
            source_origin: *source_origin,
            origin_detector: *origin_detector,
        },
        ProjectionGeometry::FanFlat { .. } => projections.clone(),
        other => return Err(crate::Error::Invalid(format!("the offset search takes a circular fan or cone geometry (fanflat, cone), not {}", other.kind()))),
    };
    projections.validate()?;
    if data.shape() != projections.shape() {
        return Err(crate::Error::Shape(format!("projections {:?} for a geometry of {:?}", data.shape(), projections.shape())));
    }
    crate::check::check_finite(data, "the projections")?;
    // The mid-plane's sinogram (angles, cols).
    let sinogram = match data.ndim() {
        3 => {
            let middle = |r: usize| data.index_axis(ndarray::Axis(0), r).to_owned();
            if rows % 2 == 1 {
                middle(rows / 2)
            } else {
                (middle(rows / 2 - 1) + middle(rows / 2)) * 0.5
            }
        }
        _ => data.to_owned(),
    };
    let (lo, hi) = sinogram.iter().fold((f32::MAX, f32::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    if hi <= lo {
        return Err(crate::Error::Invalid(format!("the mid-plane's projections are constant ({lo}): there is no offset to find")));
    }
    // The slice: cols² pixels of the detector's spacing scaled to the origin.
    let ProjectionGeometry::FanFlat { width, source_origin, origin_detector, .. } = &fan else { unreachable!("a fan") };
    let pixel = width * source_origin / (source_origin + origin_detector);
    let half = cols as f64 * pixel / 2.0;
    let grid = VolumeGeometry::with_window(cols, cols, None, [(-half, half), (-half, half), (0.0, 1.0)])?;
    let views = Views::new(&fan, &grid)?;
    crate::ops::tomography::vector::fdk::weights(&fan)?;
    let resident = crate::gpu::GpuArray::upload_f32(gpu, &sinogram.view())?;
    let middle = (cols as f64 - 1.0) / 2.0;
    crate::ops::tomography::search_center(cols, cols, radius, |centres| {
        let mut rec = Recording::new(gpu);
        let s = crate::ops::tomography::vector::gpu::setup(&mut rec, &views)?;
        let x = rec.input(&resident);
        let downloads = centres
            .iter()
            .map(|&c| {
                let y = crate::ops::tomography::vector::gpu::record_fdk_offset(&mut rec, x, &fan, &views, &s, Filter::Ramp, c - middle)?;
                Ok(rec.download(y))
            })
            .collect::<Result<Vec<_>>>()?;
        let results = rec.run()?;
        downloads.into_iter().map(|d| results.f32(d)).collect()
    })
    .map(|(centre, scores)| (centre - middle, scores.into_iter().map(|(c, e)| (c - middle, e)).collect()))
}

/// The 3D modified Shepp-Logan phantom ([`crate::phantom::shepp_logan3d`]) in a 3D volume
/// geometry, its radius half the smaller of the window's x and y extents, each voxel averaged over `sub`³
/// points.
pub fn shepp_logan_volume(grid: &VolumeGeometry, sub: usize) -> Result<ndarray::Array3<f64>> {
    let Some(slices) = grid.slices else { return Err(crate::Error::Invalid("the 3D phantom takes a 3D volume geometry (with slices)".into())) };
    crate::host::check_host_array("the phantom", &grid.shape(), 8)?;
    let phantom = crate::phantom::shepp_logan3d::Phantom::new(crate::phantom::shepp_logan3d::Phantom::radius_for(&grid.window));
    Ok(phantom.volume([slices, grid.rows, grid.cols], grid.window, sub))
}

/// The exact projections (rows, angles, cols) in a 3D projection geometry of the phantom
/// [`shepp_logan_volume`] voxelises for `grid`.
pub fn shepp_logan_projections(grid: &VolumeGeometry, projections: &ProjectionGeometry) -> Result<ndarray::Array3<f64>> {
    projections.validate()?;
    if !projections.is_3d() || grid.slices.is_none() {
        return Err(crate::Error::Invalid(format!("the 3D phantom projects in 3D geometries, not {}", projections.kind())));
    }
    crate::host::check_host_array("the projections", &projections.shape(), 8)?;
    let phantom = crate::phantom::shepp_logan3d::Phantom::new(crate::phantom::shepp_logan3d::Phantom::radius_for(&grid.window));
    if let ProjectionGeometry::CylConeVec { rows, cols, vectors } = projections {
        let shape = (*rows, vectors.len(), *cols);
        return Ok(phantom.projections_of(shape, |a, r, c| ProjectionGeometry::cylinder_ray(&vectors[a], (*rows, *cols), r as f64, c as f64)));
    }
    Ok(phantom.projections(&projections.vectors(), projections.detector(), projections.is_divergent()))
}
