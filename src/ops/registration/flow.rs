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
use crate::kernels::boundary::Boundary;
use crate::kernels::broadcast::{self, BroadcastOp};
use crate::kernels::{ilk_solve, ilk_terms};
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
    let shapes = pyramid_shapes(reference.shape());
    let nd = reference.ndim();
    // Each level's images, finest first as they are made.
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
    let images: Vec<(GpuArray, GpuArray)> = outs.iter().map(|&(r, m)| (results.array(r), results.array(m))).collect();
    let mut flow: Option<(GpuArray, Vec<usize>)> = None;
    for (dims, (r, m)) in shapes.iter().zip(&images) {
        let mut rec = Recording::new(gpu);
        let mut f = match &flow {
            None => {
                let mut fd = vec![nd];
                fd.extend(dims);
                let z = rec.temp(&fd, crate::gpu::Dtype::F32)?;
                crate::kernels::fill::record(&mut rec, z, 0.0);
                z
            }
            Some((f, from)) => {
                let f = rec.input(f);
                resize_flow(&mut rec, f, from, dims)?
            }
        };
        let (r, m) = (rec.input(r), rec.input(m));
        let grid = rec.upload_once_f32(&grid(dims).view())?;
        for _ in 0..o.num_warp {
            if o.prefilter {
                let size: Vec<usize> = std::iter::once(1).chain(std::iter::repeat_n(3, nd)).collect();
                let footprint = morphology::Footprint::new(&ArrayD::from_elem(IxDyn(&size), true).view(), None, &[])?;
                let taps = footprint.offsets.len();
                f = morphology::record_rank(&mut rec, f, &footprint, taps / 2, Boundary::Reflect)?;
            }
            let coords = broadcast::record(&mut rec, BroadcastOp::Add, f, grid)?;
            let linear = Sampling { order: 1, mode: SplineMode::Nearest, prefilter: false, ..Default::default() };
            let warped = interpolate::map_coordinates(&mut rec, m, coords, &linear)?;
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
