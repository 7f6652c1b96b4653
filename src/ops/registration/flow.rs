//! Optical flow with scikit-image's conventions: [`optical_flow_ilk`] (iterative Lucas-Kanade,
//! `skimage.registration.optical_flow_ilk`) in 2D and 3D: scikit-image's pyramid (Gaussian
//! σ 2/3 with `reflect`, then a half-size linear resampling with pixel areas aligned, down to
//! 32 samples on the shortest side, ten levels at most), the flow carried to each finer level by
//! nearest-sample zoom and scaled, and at each level `num_warp` warps: the moving image sampled
//! at the points plus the flow (linear, edges repeated), numpy.gradient of it, the local
//! products summed by a uniform (or Gaussian) window with `mirror` edges, the per-point systems
//! solved. The flow (ndim, *shape) is skimage's: sampling `moving` at grid + flow gives
//! `reference`.

use ndarray::{ArrayD, ArrayViewD, IxDyn};

use crate::error::{Error, Result};
use crate::gpu::{Gpu, GpuArray};
use crate::graph::{Buf, Recording};
use crate::kernels::binary::{self, BinaryOp};
use crate::kernels::boundary::Boundary;
use crate::kernels::broadcast::{self, BroadcastOp};
use crate::kernels::reduce_rows::{self, ReduceOp};
use crate::kernels::{copy_vec4, ilk_solve, ilk_terms, tvl1_step};
use crate::ops::filter::{self, morphology};
use crate::ops::interpolate::{self, AffineMap, Sampling, SplineMode};

/// optical_flow_ilk's options (scikit-image's names and defaults).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IlkOptions {
    /// The window's radius: a uniform window of 2 radius + 1 per axis, or a Gaussian of σ (2
    /// radius + 1) / 4.
    pub radius: usize,
    /// Warps per pyramid level.
    pub num_warp: usize,
    pub gaussian: bool,
    /// A 3-wide median filter of the flow before each warp.
    pub prefilter: bool,
}

impl Default for IlkOptions {
    fn default() -> IlkOptions {
        IlkOptions { radius: 7, num_warp: 10, gaussian: false, prefilter: false }
    }
}

/// optical_flow_tvl1's options (scikit-image's names and defaults).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tvl1Options {
    /// The attachment (data term) weight: larger, less smooth.
    pub attachment: f64,
    /// The tightness of the coupling between the flow and its auxiliary.
    pub tightness: f64,
    /// Warps per pyramid level.
    pub num_warp: usize,
    /// Fixed-point iterations per warp.
    pub num_iter: usize,
    /// A level ends when a warp changes the flow by less than this (squared, per point).
    pub tol: f64,
    /// A 3-wide median filter of the flow before each warp.
    pub prefilter: bool,
}

impl Default for Tvl1Options {
    fn default() -> Tvl1Options {
        Tvl1Options { attachment: 15.0, tightness: 0.3, num_warp: 5, num_iter: 10, tol: 1e-4, prefilter: false }
    }
}

/// The pyramid's shapes, coarsest first (skimage's _get_pyramid: downscale 2, ten levels at
/// most, halving while the shortest side exceeds 32).
pub fn pyramid_shapes(dims: &[usize]) -> Vec<Vec<usize>> {
    let mut levels = vec![dims.to_vec()];
    while levels.len() < 10 && *levels.last().expect("a level").iter().min().expect("axes") > 32 {
        let next = levels.last().expect("a level").iter().map(|&n| n.div_ceil(2)).collect();
        levels.push(next);
    }
    levels.reverse();
    levels
}

/// skimage.registration.optical_flow_ilk(reference, moving, radius, num_warp, gaussian,
/// prefilter): the flow (ndim, *shape), f32.
pub fn optical_flow_ilk(gpu: &Gpu, reference: &ArrayViewD<f32>, moving: &ArrayViewD<f32>, o: &IlkOptions) -> Result<ArrayD<f32>> {
    check(gpu, reference, moving)?;
    let (shapes, images) = pyramids(gpu, reference, moving)?;
    let nd = reference.ndim();
    let mut flow: Option<(GpuArray, Vec<usize>)> = None;
    for (dims, (r, m)) in shapes.iter().zip(&images) {
        let mut rec = Recording::new(gpu);
        let mut f = start_flow(&mut rec, &flow, dims)?;
        let (r, m) = (rec.input(r), rec.input(m));
        let grid = rec.upload_once_f32(&grid(dims).view())?;
        for _ in 0..o.num_warp {
            if o.prefilter {
                f = median3(&mut rec, f)?;
            }
            let warped = warp(&mut rec, m, f, grid)?;
            let terms = ilk_terms::record_terms(&mut rec, warped, r, f)?;
            let size = 2 * o.radius + 1;
            let filtered = if o.gaussian {
                let sigma: Vec<f32> = std::iter::once(0.0).chain(std::iter::repeat_n(size as f32 / 4.0, nd)).collect();
                filter::gaussian_filter(&mut rec, terms, &sigma, Boundary::Mirror)?
            } else {
                let sizes: Vec<usize> = std::iter::once(1).chain(std::iter::repeat_n(size, nd)).collect();
                filter::uniform_filter(&mut rec, terms, &sizes, Boundary::Mirror)?
            };
            f = ilk_solve::record_solve(&mut rec, filtered)?;
        }
        let out = rec.output(f);
        flow = Some((rec.run()?.array(out), dims.clone()));
    }
    let (f, dims) = flow.expect("a level");
    let mut fd = vec![nd];
    fd.extend(&dims);
    GpuArray::download_joined::<f32>(gpu, &[f], &fd)
}

/// One pyramid level's reference and moving images on the device.
type Level = (GpuArray, GpuArray);

/// Both images' pyramids (skimage's _get_pyramid), coarsest first, on the device.
fn pyramids(gpu: &Gpu, reference: &ArrayViewD<f32>, moving: &ArrayViewD<f32>) -> Result<(Vec<Vec<usize>>, Vec<Level>)> {
    let shapes = pyramid_shapes(reference.shape());
    let mut rec = Recording::new(gpu);
    let (r, m) = (rec.upload_once_f32(reference)?, rec.upload_once_f32(moving)?);
    let mut levels = vec![(r, m)];
    for w in shapes.windows(2).rev() {
        let (small, big) = (&w[0], &w[1]);
        let &(r, m) = levels.last().expect("a level");
        levels.push((reduce(&mut rec, r, big, small)?, reduce(&mut rec, m, big, small)?));
    }
    levels.reverse();
    let outs: Vec<_> = levels.iter().map(|&(r, m)| (rec.output(r), rec.output(m))).collect();
    let results = rec.run()?;
    Ok((shapes, outs.iter().map(|&(r, m)| (results.array(r), results.array(m))).collect()))
}

/// A level's starting flow: zeros at the coarsest, else the coarser level's resized.
fn start_flow(rec: &mut Recording, coarser: &Option<(GpuArray, Vec<usize>)>, dims: &[usize]) -> Result<Buf> {
    match coarser {
        None => {
            let fd: Vec<usize> = std::iter::once(dims.len()).chain(dims.iter().copied()).collect();
            let z = rec.temp(&fd, crate::gpu::Dtype::F32)?;
            crate::kernels::fill::record(rec, z, 0.0);
            Ok(z)
        }
        Some((f, from)) => {
            let f = rec.input(f);
            resize_flow(rec, f, from, dims)
        }
    }
}

/// scipy's median_filter(flow, (1,) + (3,) * ndim) (`reflect`): skimage's prefilter.
fn median3(rec: &mut Recording, f: Buf) -> Result<Buf> {
    let nd = rec.dims(f).len() - 1;
    let size: Vec<usize> = std::iter::once(1).chain(std::iter::repeat_n(3, nd)).collect();
    let footprint = morphology::Footprint::new(&ArrayD::from_elem(IxDyn(&size), true).view(), None, &[])?;
    let taps = footprint.offsets.len();
    morphology::record_rank(rec, f, &footprint, taps / 2, Boundary::Reflect)
}

/// skimage's warp(moving, grid + flow, mode="edge"): linear, edges repeated.
fn warp(rec: &mut Recording, m: Buf, f: Buf, grid: Buf) -> Result<Buf> {
    let coords = broadcast::record(rec, BroadcastOp::Add, f, grid)?;
    let linear = Sampling { order: 1, mode: SplineMode::Nearest, prefilter: false, ..Default::default() };
    interpolate::map_coordinates(rec, m, coords, &linear)
}

/// skimage.registration.optical_flow_tvl1(reference, moving, attachment, tightness, num_warp,
/// num_iter, tol, prefilter): the flow (ndim, *shape), f32. A level's warps end, as
/// scikit-image's, when the squared change of the flow over a warp falls below `tol` per point
/// (the change measured from the warp's first attachment step, scikit-image's aliasing of its
/// arrays: from the warp's start with the prefilter); each warp's test reads one number back.
pub fn optical_flow_tvl1(gpu: &Gpu, reference: &ArrayViewD<f32>, moving: &ArrayViewD<f32>, o: &Tvl1Options) -> Result<ArrayD<f32>> {
    check(gpu, reference, moving)?;
    if !(o.attachment.is_finite() && o.tightness.is_finite() && o.tightness != 0.0 && o.tol.is_finite()) {
        return Err(Error::Invalid(format!(
            "optical_flow_tvl1: a finite attachment, tol and non-zero tightness, got {}, {}, {}",
            o.attachment, o.tol, o.tightness
        )));
    }
    let (shapes, images) = pyramids(gpu, reference, moving)?;
    let nd = reference.ndim();
    let mut flow: Option<(GpuArray, Vec<usize>)> = None;
    for (dims, (r, m)) in shapes.iter().zip(&images) {
        let dt = 0.5 / nd as f64;
        let c = tvl1_step::Tvl1 { dims: dims.clone(), f0: (o.attachment * o.tightness) as f32, f1: (dt / o.tightness) as f32, dt: dt as f32 };
        let count = dims.iter().product::<usize>();
        let grid_array = GpuArray::upload_f32(gpu, &grid(dims).view())?;
        let proj_dims = vec![nd * nd, count];
        let mut proj = GpuArray::upload_f32(gpu, &ArrayD::<f32>::zeros(IxDyn(&proj_dims)).view())?;
        let mut rec = Recording::new(gpu);
        let f = start_flow(&mut rec, &flow, dims)?;
        let out = rec.output(f);
        let mut current = rec.run()?.array(out);
        for _ in 0..o.num_warp {
            let mut rec = Recording::new(gpu);
            let (r, m, grid) = (rec.input(r), rec.input(m), rec.input(&grid_array));
            let start = rec.input(&current);
            let f = if o.prefilter { median3(&mut rec, start)? } else { start };
            let warped = warp(&mut rec, m, f, grid)?;
            let prepared = c.prepare(&mut rec, warped, r, f)?;
            let p = rec.temp(&proj_dims, crate::gpu::Dtype::F32)?;
            let proj_in = rec.input(&proj);
            copy_vec4::record(&mut rec, proj_in, p)?;
            let mut cur = f;
            let mut previous = start;
            for it in 0..o.num_iter {
                let aux = c.data(&mut rec, prepared, cur)?;
                if it == 0 && !o.prefilter {
                    previous = aux;
                }
                let next = rec.temp(&c.planes(nd), crate::gpu::Dtype::F32)?;
                copy_vec4::record(&mut rec, aux, next)?;
                for _ in 0..2 {
                    c.dual(&mut rec, next, p);
                    c.primal(&mut rec, p, aux, next);
                }
                cur = next;
            }
            let change = binary::record(&mut rec, BinaryOp::Sub, previous, cur)?;
            let squares = rec.temp(&[1], crate::gpu::Dtype::F32)?;
            reduce_rows::record_into(&mut rec, ReduceOp::SumSquares, change, squares, 1, nd * count)?;
            let (co, po, so) = (rec.output(cur), rec.output(p), rec.download(squares));
            let results = rec.run()?;
            let change = results.f32(so)?.iter().next().copied().unwrap_or(f32::INFINITY) as f64;
            current = results.array(co);
            proj = results.array(po);
            if change < o.tol * count as f64 {
                break;
            }
        }
        flow = Some((current, dims.clone()));
    }
    let (f, dims) = flow.expect("a level");
    let fd: Vec<usize> = std::iter::once(nd).chain(dims.iter().copied()).collect();
    GpuArray::download_joined::<f32>(gpu, &[f], &fd)
}

/// skimage's pyramid_reduce of one level: Gaussian σ 2/3 (`reflect`), then the half-size
/// linear resampling with pixel areas aligned (scipy's zoom with grid_mode, `mirror`).
fn reduce(rec: &mut Recording, x: Buf, from: &[usize], to: &[usize]) -> Result<Buf> {
    let nd = from.len();
    let smooth = filter::gaussian_filter(rec, x, &vec![2.0f32 / 3.0; nd], Boundary::Reflect)?;
    let scale: Vec<f64> = from.iter().zip(to).map(|(&a, &b)| a as f64 / b as f64).collect();
    let map = AffineMap {
        matrix: (0..nd).map(|i| (0..nd).map(|j| if i == j { scale[i] } else { 0.0 }).collect()).collect(),
        offset: scale.iter().map(|s| 0.5 * s - 0.5).collect(),
    };
    let how = Sampling { order: 1, mode: SplineMode::Mirror, prefilter: false, ..Default::default() };
    interpolate::affine_transform(rec, smooth, &map, to, &how)
}

/// skimage's _resize_flow: the flow (ndim, *from) zoomed to `to` by the nearest sample (scipy's
/// zoom, corners aligned) and each component scaled by its axis' ratio.
fn resize_flow(rec: &mut Recording, f: Buf, from: &[usize], to: &[usize]) -> Result<Buf> {
    let nd = from.len();
    let mut out = vec![nd];
    out.extend(to);
    let step = |a: usize| if to[a] > 1 { (from[a] as f64 - 1.0) / (to[a] as f64 - 1.0) } else { 0.0 };
    let map = AffineMap {
        matrix: (0..=nd)
            .map(|i| {
                (0..=nd)
                    .map(|j| {
                        if i != j {
                            0.0
                        } else if i == 0 {
                            1.0
                        } else {
                            step(i - 1)
                        }
                    })
                    .collect()
            })
            .collect(),
        offset: vec![0.0; nd + 1],
    };
    let how = Sampling { order: 0, mode: SplineMode::Nearest, prefilter: false, ..Default::default() };
    let zoomed = interpolate::affine_transform(rec, f, &map, &out, &how)?;
    let mut sd = vec![nd];
    sd.extend(std::iter::repeat_n(1, nd));
    let scales =
        ArrayD::from_shape_vec(IxDyn(&sd), (0..nd).map(|a| (to[a] as f64 / from[a] as f64) as f32).collect()).map_err(|e| Error::Shape(e.to_string()))?;
    let s = rec.upload_once_f32(&scales.view())?;
    broadcast::record(rec, BroadcastOp::Multiply, zoomed, s)
}

/// The sample grid (ndim, *dims): component a holds each point's index along axis a.
fn grid(dims: &[usize]) -> ArrayD<f32> {
    let nd = dims.len();
    let mut gd = vec![nd];
    gd.extend(dims);
    ArrayD::from_shape_fn(IxDyn(&gd), |i| i[1 + i[0]] as f32)
}

fn check(gpu: &Gpu, reference: &ArrayViewD<f32>, moving: &ArrayViewD<f32>) -> Result<()> {
    if reference.shape() != moving.shape() {
        return Err(Error::Shape(format!("optical flow: the images' shapes differ, {:?} and {:?}", reference.shape(), moving.shape())));
    }
    if !(reference.ndim() == 2 || reference.ndim() == 3) || reference.shape().contains(&1) || reference.is_empty() {
        return Err(Error::Shape(format!("optical flow takes 2D or 3D images of at least 2 samples per axis, got {:?}", reference.shape())));
    }
    let n = reference.len() as u64;
    let nd = reference.ndim() as u64;
    // The level's images, flow, grid, coordinates, warped image, terms and their filtered copy.
    let bytes = n.saturating_mul(4 * (4 + 3 * nd + 2 * (nd * (nd + 1) / 2 + nd)));
    if bytes > gpu.memory_budget_bytes() || n.saturating_mul(4 * (nd * (nd + 1) / 2 + nd)) > gpu.max_buffer_bytes() {
        return Err(Error::TooLarge { what: format!("optical flow of {:?}", reference.shape()), bytes, limit: gpu.memory_budget_bytes() });
    }
    crate::check::check_finite(reference, "the reference image")?;
    crate::check::check_finite(moving, "the moving image")
}
