//! Richardson-Lucy in tiles: a spatially variant PSF (the sectioned method of Domanski,
//! Vallotton and Wang) and images larger than one GPU buffer.
//!
//! The image is cut along its spatial axes (a leading batch axis stays whole) into tiles. Each
//! tile has a *core*; the cores partition the image. A tile is deconvolved on a *window*: its
//! core, plus half a blend width on each inner side, plus a guard band of `g` elements, clipped
//! to the image. Where a window ends at the image's edge the zero boundary is the whole-image
//! one; where it ends inside the image its edge is artificial, and the guard band keeps the
//! artefacts it causes out of the part that is kept. Every window along an axis has the same
//! length (windows at the image's edges reach further inwards instead of being clipped), so
//! every tile has the same padded shape and the GPU's pipelines are re-used from tile to tile.
//!
//! The kept parts are blended with a partition of unity: across each border between two cores
//! a raised-cosine ramp (sin², cos²) of `overlap` elements hands one tile over to the next;
//! along several axes the weights multiply. With a PSF grid, regions are the cores of a
//! GY × GX grid over the last two spatial axes (each possibly cut further into tiles to fit the
//! device) and each tile uses its region's PSF, so the restored image changes smoothly from one
//! PSF to the next across region borders.
//!
//! # The guard width
//! One iteration reads the estimate `m − 1` elements away along an axis (the blur reaches one
//! PSF radius, the adjoint another), so [`exact_guard`] = iterations × (m − 1) reproduces the
//! whole-image result exactly — but it is usually most of the image. The error of a shorter
//! guard decays fast because a real PSF's tails are small. [`guard_width`] is a rule with a
//! margin of two over the smallest guards that kept the result within 1e-3 (relative L2, and
//! max |difference| over max) of the whole-image result on beads and blobs blurred by Gaussian
//! PSFs with Poisson noise (measured by `rl_guard_rule` in benches/timings.rs;
//! plain RL with the zero boundary, no TV or acceleration):
//!
//! | σ | m | iterations | smallest guard, beads | blobs | g / (r·k^¼), worst | rule |
//! |---|---|---|---|---|---|---|
//! | 1 | 7 | 5 | 2 | 2 | 0.38 | 6 |
//! | 1 | 7 | 10 | 2 | 3 | 0.48 | 7 |
//! | 1 | 7 | 20 | 2 | 3 | 0.41 | 8 |
//! | 1 | 7 | 50 | 3 | 4 | 0.43 | 10 |
//! | 1 | 7 | 100 | 3 | 5 | 0.45 | 12 |
//! | 2 | 13 | 5 | 4 | 4 | 0.41 | 10 |
//! | 2 | 13 | 10 | 4 | 5 | 0.43 | 12 |
//! | 2 | 13 | 20 | 5 | 6 | 0.44 | 14 |
//! | 2 | 13 | 50 | 7 | 7 | 0.40 | 18 |
//! | 2 | 13 | 100 | 8 | 8 | 0.39 | 21 |
//! | 3 | 19 | 5 | 6 | 6 | 0.42 | 15 |
//! | 3 | 19 | 10 | 8 | 7 | 0.47 | 17 |
//! | 3 | 19 | 20 | 9 | 9 | 0.45 | 21 |
//! | 3 | 19 | 50 | 10 | 12 | 0.48 | 26 |
//! | 3 | 19 | 100 | 12 | 12 | 0.40 | 31 |
//!
//! (Gaussian PSFs cut at 3σ, m = 2⌈3σ⌉ + 1, r = m/2; 2 × 2 tiles with the default blend of m;
//! beads of 200-1000 photons and blobs of 20-100 over a background of 4-6, or blobs alone;
//! Poisson noise; the smallest guard found by bisection, the f64 reference on both sides.)
//! The guard grows like r·k^¼, not r·k: the influence of an artificial edge decays
//! geometrically with distance, and each iteration only moves it a little further. The largest
//! factor measured is 0.48 (0.51 in an earlier run with other random specimens), so the rule
//! g = ⌈r·k^¼⌉ leaves a margin of about two. The guard counts from the end of the blend, so
//! the region a tile contributes with full weight is m + g from its window's inner edges.
//!
//! # Limits
//! The stopping rule (a global measure) is refused, and so is the periodic boundary when there
//! is more than one tile. With Biggs-Andrews acceleration each tile computes its own step α,
//! so the result is close to, not equal to, the whole-image one. With the extended boundary
//! (Bertero-Boccacci) a tile's inner edges are treated like the image's: the object may
//! continue past them, which suits an artificial edge better than zeros do (the guard rule
//! was measured with the zero boundary and is kept as it is).

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::Mutex;
use std::time::Instant;

use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn, Slice, Zip};
use rustfft::num_traits::Float;
use serde::Serialize;

use super::{cpu, validate, Geometry, RichardsonLucy, RlBoundary, RlOptions};
use crate::error::{Error, Result};
use crate::host::ms_since;
use crate::placement::{Piece, Progress};
use crate::Gpu;

/// PSFs, one per region of a GY × GX grid over the image's last two spatial axes: region
/// (i, j) covers rows `i·ny/GY .. (i+1)·ny/GY` and columns `j·nx/GX .. (j+1)·nx/GX`.
#[derive(Clone, Debug)]
pub struct PsfGrid<'a> {
    psfs: ArrayViewD<'a, f32>,
    grid: [usize; 2],
}

impl<'a> PsfGrid<'a> {
    /// One PSF for the whole image (a 1 × 1 grid).
    pub fn single(psf: ArrayViewD<'a, f32>) -> PsfGrid<'a> {
        PsfGrid { psfs: psf.insert_axis(Axis(0)).insert_axis(Axis(0)), grid: [1, 1] }
    }

    /// `psfs` shaped (GY, GX, py, px) for 2D PSFs or (GY, GX, pz, py, px) for 3D ones (a stack
    /// whose PSF varies laterally, the common case).
    pub fn new(psfs: ArrayViewD<'a, f32>, grid: [usize; 2]) -> Result<PsfGrid<'a>> {
        let s = psfs.shape();
        if grid.contains(&0) {
            return Err(Error::Invalid(format!("a PSF grid needs at least one region along each axis, got {grid:?}")));
        }
        if !(4..=5).contains(&s.len()) || s[..2] != grid {
            return Err(Error::Shape(format!(
                "a {}×{} PSF grid is an array shaped ({}, {}, [pz,] py, px); the PSF array has shape {s:?}",
                grid[0], grid[1], grid[0], grid[1]
            )));
        }
        Ok(PsfGrid { psfs, grid })
    }

    pub fn grid(&self) -> [usize; 2] {
        self.grid
    }

    /// The shape of one PSF.
    pub fn psf_shape(&self) -> &[usize] {
        &self.psfs.shape()[2..]
    }

    /// The PSF of region `[i, j]`.
    pub fn psf(&self, region: [usize; 2]) -> ArrayViewD<'_, f32> {
        self.psfs.index_axis(Axis(0), region[0]).index_axis_move(Axis(0), region[1])
    }
}

/// How to tile; every field defaults to a choice made from the PSF, the iterations and the
/// device. Per-axis values are for the spatial axes, slowest first.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TileOptions {
    /// Tiles per region along each spatial axis (default: as few as fit the device).
    pub tiles: Option<Vec<usize>>,
    /// Guard band width along each spatial axis (default: [`guard_width`]).
    pub guard: Option<Vec<usize>>,
    /// Width of the raised-cosine blend across tile borders (default: the PSF's extent).
    pub overlap: Option<Vec<usize>>,
    /// Device memory one tile may hold, estimated as [`working_set_bytes`] (default: the
    /// smallest GPU's memory budget, `Gpu::memory_budget_bytes`; a tile beyond one buffer holds
    /// its arrays in chunks. Where no GPU tells its memory, tiles fit one buffer instead).
    pub memory_bytes: Option<u64>,
}

/// One tile along one axis.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AxisTile {
    /// The part this tile owns (the cores partition the axis).
    pub core: Range<usize>,
    /// What it is deconvolved on: core, blend and guard bands, within the image.
    pub window: Range<usize>,
    /// The PSF grid's region along this axis (0 off the grid's axes).
    pub region: usize,
}

/// One tile: its per-axis pieces and its PSF's region.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tile {
    pub core: Vec<Range<usize>>,
    pub window: Vec<Range<usize>>,
    pub region: [usize; 2],
}

/// The tiles of an image: plain data, computed without a device.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TilePlan {
    pub image: Vec<usize>,
    pub psf: Vec<usize>,
    pub grid: [usize; 2],
    pub tiles_per_region: Vec<usize>,
    pub guard: Vec<usize>,
    pub overlap: Vec<usize>,
    /// Per spatial axis, its tiles in order.
    pub axes: Vec<Vec<AxisTile>>,
}

impl TilePlan {
    /// Cuts each spatial axis of `image` into `grid` regions (the last two axes) of
    /// `tiles_per_region` tiles. Errors: `Shape` when the PSF does not fit the image or a grid
    /// needs two spatial axes it lacks; `Invalid` for tiles smaller than the PSF or the blend.
    pub fn new(image: &[usize], psf: &[usize], grid: [usize; 2], tiles_per_region: &[usize], guard: &[usize], overlap: &[usize]) -> Result<TilePlan> {
        Geometry::new(image, psf, RlBoundary::Zero)?;
        let spatial = psf.len();
        if grid != [1, 1] && spatial < 2 {
            return Err(Error::Shape(format!("a PSF grid spans two spatial axes; a PSF of shape {psf:?} has {spatial}")));
        }
        for (what, v) in [("tiles per region", tiles_per_region), ("guard widths", guard), ("blend widths", overlap)] {
            if v.len() != spatial {
                return Err(Error::Shape(format!("{what}: one per spatial axis ({spatial}), got {v:?}")));
            }
        }
        let batch = image.len() - spatial;
        let regions = |d: usize| match spatial - d {
            2 => grid[0],
            1 => grid[1],
            _ => 1,
        };
        let axes = (0..spatial)
            .map(|d| {
                let ctx = AxisCut { n: image[batch + d], m: psf[d], regions: regions(d), tiles: tiles_per_region[d], guard: guard[d], overlap: overlap[d] };
                ctx.cut(batch + d)
            })
            .collect::<Result<_>>()?;
        Ok(TilePlan {
            image: image.to_vec(),
            psf: psf.to_vec(),
            grid,
            tiles_per_region: tiles_per_region.to_vec(),
            guard: guard.to_vec(),
            overlap: overlap.to_vec(),
            axes,
        })
    }

    pub fn batch_axes(&self) -> usize {
        self.image.len() - self.psf.len()
    }

    /// The number of tiles.
    pub fn len(&self) -> usize {
        self.axes.iter().map(Vec::len).product()
    }

    /// The shape every window has, batch axis included.
    pub fn window_shape(&self) -> Vec<usize> {
        let b = self.batch_axes();
        self.image[..b].iter().copied().chain(self.axes.iter().map(|a| a[0].window.len())).collect()
    }

    /// The tiles, the last axis fastest.
    pub fn tiles(&self) -> Vec<Tile> {
        let mut tiles = vec![Tile { core: vec![], window: vec![], region: [0, 0] }];
        for (d, axis) in self.axes.iter().enumerate() {
            let from_end = self.axes.len() - d;
            tiles = tiles
                .into_iter()
                .flat_map(|t| {
                    axis.iter().map(move |a| {
                        let mut t = t.clone();
                        t.core.push(a.core.clone());
                        t.window.push(a.window.clone());
                        if from_end <= 2 {
                            t.region[2 - from_end] = a.region;
                        }
                        t
                    })
                })
                .collect();
        }
        tiles
    }

    /// The blend weights over `tile`'s window (spatial axes only): the product of each axis's
    /// ramps. Summed over all tiles they are 1 everywhere in the image.
    #[cfg(test)]
    pub fn weights(&self, tile: &Tile) -> ArrayD<f64> {
        let per_axis = self.axis_weights(tile);
        let shape: Vec<usize> = per_axis.iter().map(Vec::len).collect();
        ArrayD::from_shape_fn(IxDyn(&shape), |idx| (0..shape.len()).map(|d| per_axis[d][idx[d]]).product())
    }

    /// The ramps of [`TilePlan::weights`] along each spatial axis of `tile`'s window.
    pub fn axis_weights(&self, tile: &Tile) -> Vec<Vec<f64>> {
        (0..self.psf.len())
            .map(|d| {
                let n = self.image[self.batch_axes() + d];
                tile.window[d].clone().map(|x| axis_weight(x, &tile.core[d], n, self.overlap[d])).collect()
            })
            .collect()
    }
}

/// How one axis is cut.
struct AxisCut {
    n: usize,
    m: usize,
    regions: usize,
    tiles: usize,
    guard: usize,
    overlap: usize,
}

impl AxisCut {
    fn cut(&self, axis: usize) -> Result<Vec<AxisTile>> {
        if self.regions > self.n || self.tiles == 0 {
            return Err(Error::Invalid(format!("axis {axis} of {} elements cannot hold {} regions of {} tiles", self.n, self.regions, self.tiles)));
        }
        let mut cores = Vec::new();
        for r in 0..self.regions {
            let (a, b) = (r * self.n / self.regions, (r + 1) * self.n / self.regions);
            cores.extend((0..self.tiles).map(|k| (a + k * (b - a) / self.tiles..a + (k + 1) * (b - a) / self.tiles, r)));
        }
        let smallest = cores.iter().map(|(c, _)| c.len()).min().unwrap();
        if cores.len() > 1 && smallest < self.m.max(self.overlap) {
            return Err(Error::Invalid(format!(
                "tiles of {smallest} elements along axis {axis} are smaller than the PSF ({}) or the blend width ({}): use fewer regions or tiles",
                self.m, self.overlap
            )));
        }
        // What each tile's weights reach: its core and half a blend on each inner side.
        let need = |c: &Range<usize>| {
            let lo = if c.start > 0 { c.start - self.overlap / 2 } else { 0 };
            let hi = if c.end < self.n { c.end + self.overlap - self.overlap / 2 } else { self.n };
            lo..hi
        };
        let len = cores.iter().map(|(c, _)| need(c).len() + 2 * self.guard).max().unwrap().min(self.n);
        Ok(cores
            .into_iter()
            .map(|(core, region)| {
                let start = need(&core).start.saturating_sub(self.guard).min(self.n - len);
                AxisTile { window: start..start + len, core, region }
            })
            .collect())
    }
}

/// The weight of element `x` for the tile owning `core` on an axis of `n`: 1 inside, raised-
/// cosine ramps of `overlap` elements centred on each border with a neighbour, 0 beyond.
fn axis_weight(x: usize, core: &Range<usize>, n: usize, overlap: usize) -> f64 {
    let rise = if core.start > 0 { ramp(x, core.start, overlap) } else { 1.0 };
    let fall = if core.end < n { 1.0 - ramp(x, core.end, overlap) } else { 1.0 };
    rise * fall
}

/// 0 before the border at `at`, 1 after it, sin²(π t / 2) across the `overlap` elements around it.
fn ramp(x: usize, at: usize, overlap: usize) -> f64 {
    if overlap == 0 {
        return if x >= at { 1.0 } else { 0.0 };
    }
    let lo = at as f64 - (overlap / 2) as f64;
    let t = ((x as f64 + 0.5 - lo) / overlap as f64).clamp(0.0, 1.0);
    (std::f64::consts::FRAC_PI_2 * t).sin().powi(2)
}

/// The guard band that reproduces the whole-image result exactly: `iterations` × (m − 1), the
/// distance an artificial edge's influence travels (at least one element per iteration, the
/// reach of the TV term).
pub fn exact_guard(psf_extent: usize, iterations: usize) -> usize {
    iterations * psf_extent.saturating_sub(1).max(1)
}

/// The default guard band along an axis where the PSF has `psf_extent` elements (see the
/// module's documentation for the measurements): never more than [`exact_guard`].
pub fn guard_width(psf_extent: usize, iterations: usize) -> usize {
    let r = psf_extent as f64 / 2.0;
    let g = (GUARD_RADII * r * (iterations as f64).powf(0.25)).ceil() as usize;
    g.min(exact_guard(psf_extent, iterations))
}

/// The halo of a chunk cut hard from its neighbours (streamed slabs, Dask chunks), along an axis
/// where the PSF has `psf_extent` elements: a tile's guard band plus its blend width. A tile's
/// result is used from [`guard_width`] inside its window, blended in over the next `m`
/// elements; a hard cut keeps only what a tile would use at full weight.
pub fn halo_width(psf_extent: usize, iterations: usize) -> usize {
    (guard_width(psf_extent, iterations) + psf_extent).min(exact_guard(psf_extent, iterations))
}

/// The guard rule's factor: g = GUARD_RADII · r · iterations^¼, r = m / 2; about twice the
/// largest factor measured (0.51).
const GUARD_RADII: f64 = 1.0;

/// The device memory one RL run on an array of `dims` with this PSF holds, estimated from the
/// padded shape: WORKING_SPECTRA half spectra (the resident image, estimate and OTF and the
/// iteration's pooled temporaries are each about one); see the test that checks it bounds the
/// reported peak.
pub fn working_set_bytes(dims: &[usize], psf: &[usize], opts: &RlOptions) -> Result<u64> {
    let extra = if opts.accelerate { 3 } else { 0 } + u64::from(opts.tv.is_some()) + u64::from(opts.boundary == RlBoundary::Extended);
    Ok((WORKING_SPECTRA + extra) * spectrum_bytes(dims, psf, opts.boundary)?)
}

const WORKING_SPECTRA: u64 = 8;

/// The largest buffer of an RL run: the half spectrum of the padded array.
pub fn spectrum_bytes(dims: &[usize], psf: &[usize], boundary: RlBoundary) -> Result<u64> {
    let padded = Geometry::new(dims, psf, boundary)?.padded;
    let (last, rest) = padded.split_last().unwrap();
    Ok(rest.iter().map(|&v| v as u64).product::<u64>() * (*last as u64 / 2 + 1) * 8)
}

/// Whether whole-image RL of `image` with `psf` fits the device's buffer limit.
#[cfg(test)]
pub fn fits_whole(gpu: &Gpu, image: &[usize], psf: &[usize], opts: &RlOptions) -> Result<bool> {
    Ok(spectrum_bytes(image, psf, opts.boundary)? <= gpu.max_buffer_bytes())
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TiledReport {
    pub device: String,
    pub tiles: usize,
    pub grid: [usize; 2],
    pub tiles_per_region: Vec<usize>,
    pub guard: Vec<usize>,
    pub overlap: Vec<usize>,
    /// The shape every tile is deconvolved on (its window), batch axis included.
    pub window: Vec<usize>,
    /// Per tile, in the order they finished: setup, iterations and download, ms.
    pub tile_ms: Vec<f64>,
    /// Per tile, in the same order: the index of the GPU (in `adapters`) that ran it.
    pub tile_worker: Vec<usize>,
    /// "index: name" of each GPU the tiles were spread over.
    pub adapters: Vec<String>,
    /// The most device memory one tile held (GPU only).
    pub peak_bytes: u64,
    pub total_ms: f64,
}

impl TiledReport {
    fn new(plan: &TilePlan, device: String) -> TiledReport {
        TiledReport {
            device,
            tiles: plan.len(),
            grid: plan.grid,
            tiles_per_region: plan.tiles_per_region.clone(),
            guard: plan.guard.clone(),
            overlap: plan.overlap.clone(),
            window: plan.window_shape(),
            ..Default::default()
        }
    }
}

pub struct TiledResult {
    pub estimate: ArrayD<f32>,
    pub report: TiledReport,
}

/// Richardson-Lucy on the GPUs, each with its region's PSF, the tiles taken from one queue by
/// every GPU (one tile at a time each); the tiles are sized to fit the smallest device unless
/// `tiles.tiles` says how many. `progress` is called after each iteration of each tile.
pub fn richardson_lucy_tiled(
    gpus: &[Gpu],
    image: &ArrayViewD<f32>,
    psfs: &PsfGrid,
    iterations: usize,
    opts: &RlOptions,
    tiles: &TileOptions,
    progress: impl FnMut(Progress),
) -> Result<TiledResult> {
    let start = Instant::now();
    let smallest = gpus.iter().map(|g| g.max_buffer_bytes()).min().ok_or_else(|| Error::Invalid("tiled Richardson-Lucy needs at least one GPU".into()))?;
    let budget = gpus.iter().map(|g| g.memory_budget_bytes()).min().filter(|&b| b < u64::MAX);
    let plan = match tiles.memory_bytes.or(budget) {
        Some(memory) => plan(image, psfs, iterations, opts, &TileOptions { memory_bytes: Some(memory), ..tiles.clone() }, None)?,
        None => plan(image, psfs, iterations, opts, tiles, Some(smallest))?,
    };
    let names: Vec<String> = gpus.iter().map(|g| g.summary().name.clone()).collect();
    let mut report = TiledReport::new(&plan, format!("gpu: {}", names.join(", ")));
    report.adapters = gpus.iter().map(|g| format!("{}: {}", g.summary().index, g.summary().name)).collect();
    let shared = Mutex::new(report);
    let estimate = run_tiles(&plan, image, psfs, gpus.len(), iterations, progress, |worker, _, window, psf, tick| {
        let t = Instant::now();
        let r = RichardsonLucy::new(&gpus[worker], window, psf, iterations, opts)?.run(|p| tick(p.done))?;
        let mut report = shared.lock().unwrap();
        report.tile_ms.push(ms_since(t));
        report.tile_worker.push(worker);
        report.peak_bytes = report.peak_bytes.max(r.report.peak_bytes.max(r.report.setup_peak_bytes));
        Ok(r.estimate)
    })?;
    let mut report = shared.into_inner().unwrap();
    report.total_ms = ms_since(start);
    Ok(TiledResult { estimate, report })
}

/// The same tiling with the f64 reference deconvolving each tile (no buffer limit: one tile
/// per region unless `tiles.tiles` says otherwise).
pub fn richardson_lucy_tiled_cpu(
    image: &ArrayViewD<f32>,
    psfs: &PsfGrid,
    iterations: usize,
    opts: &RlOptions,
    tiles: &TileOptions,
    progress: impl FnMut(Progress),
) -> Result<(ArrayD<f64>, TiledReport)> {
    let start = Instant::now();
    let plan = plan(image, psfs, iterations, opts, tiles, None)?;
    let report = Mutex::new(TiledReport::new(&plan, "cpu (f64 reference)".into()));
    let estimate = run_tiles(&plan, image, psfs, 1, iterations, progress, |_, _, window, psf, tick| {
        let t = Instant::now();
        let r = cpu::richardson_lucy_with(window, psf, iterations, opts, |p| tick(p.done))?;
        let mut report = report.lock().unwrap();
        report.tile_ms.push(ms_since(t));
        report.tile_worker.push(0);
        Ok(r.estimate)
    })?;
    let mut report = report.into_inner().unwrap();
    report.total_ms = ms_since(start);
    Ok((estimate, report))
}

/// Validates everything (image, options, every PSF) and plans the tiles: `tiles.tiles` if
/// given, else the fewest per region whose working set fits `max_buffer_bytes` (and
/// `tiles.memory_bytes`), cutting the axis with the longest window first.
pub fn plan(
    image: &ArrayViewD<f32>,
    psfs: &PsfGrid,
    iterations: usize,
    opts: &RlOptions,
    tiles: &TileOptions,
    max_buffer_bytes: Option<u64>,
) -> Result<TilePlan> {
    validate(image, &psfs.psf([0, 0]), iterations, opts)?;
    let m = psfs.psf_shape();
    for i in 0..psfs.grid[0] {
        for j in 0..psfs.grid[1] {
            let ones = ArrayD::from_elem(IxDyn(m), 1.0f32);
            validate(&ones.view(), &psfs.psf([i, j]), iterations, opts).map_err(|e| in_region(e, [i, j]))?;
        }
    }
    if opts.stop.is_some() {
        return Err(Error::Invalid("tiled Richardson-Lucy has no stopping rule (the tiles would stop at different iterations)".into()));
    }
    let guard = tiles.guard.clone().unwrap_or_else(|| m.iter().map(|&e| guard_width(e, iterations)).collect());
    let overlap = tiles.overlap.clone().unwrap_or_else(|| m.to_vec());
    let plan = match &tiles.tiles {
        Some(t) => TilePlan::new(image.shape(), m, psfs.grid, t, &guard, &overlap)?,
        None => fitted_plan(image.shape(), m, psfs.grid, &guard, &overlap, opts, max_buffer_bytes, tiles.memory_bytes)?,
    };
    if opts.boundary == RlBoundary::Periodic && plan.len() > 1 {
        return Err(Error::Invalid(format!(
            "the periodic boundary needs the whole image in one tile; this run needs {} tiles (use the zero boundary)",
            plan.len()
        )));
    }
    Ok(plan)
}

/// Names the region in a PSF's error, keeping its kind.
fn in_region(e: Error, [i, j]: [usize; 2]) -> Error {
    let at = |s: String| format!("{s} (the PSF of region ({i}, {j}))");
    match e {
        Error::NonFinite(s) => Error::NonFinite(at(s)),
        Error::Invalid(s) => Error::Invalid(at(s)),
        Error::Shape(s) => Error::Shape(at(s)),
        other => other,
    }
}

/// The fewest tiles per region whose window fits: starting from one, adds a tile along the
/// axis with the longest window until it does.
#[allow(clippy::too_many_arguments)]
fn fitted_plan(
    image: &[usize],
    psf: &[usize],
    grid: [usize; 2],
    guard: &[usize],
    overlap: &[usize],
    opts: &RlOptions,
    max_buffer_bytes: Option<u64>,
    memory_bytes: Option<u64>,
) -> Result<TilePlan> {
    let mut counts = vec![1; psf.len()];
    loop {
        let plan = TilePlan::new(image, psf, grid, &counts, guard, overlap)?;
        let window = plan.window_shape();
        let largest = spectrum_bytes(&window, psf, opts.boundary)?;
        let working = working_set_bytes(&window, psf, opts)?;
        let (fits_buffer, fits_memory) = (max_buffer_bytes.is_none_or(|l| largest <= l), memory_bytes.is_none_or(|l| working <= l));
        if fits_buffer && fits_memory {
            return Ok(plan);
        }
        let b = plan.batch_axes();
        let mut axes: Vec<usize> = (0..psf.len()).collect();
        axes.sort_by_key(|&d| std::cmp::Reverse(window[b + d]));
        let more = axes.into_iter().find_map(|d| {
            let mut c = counts.clone();
            c[d] += 1;
            let p = TilePlan::new(image, psf, grid, &c, guard, overlap).ok()?;
            (p.window_shape()[b + d] < window[b + d]).then_some(c)
        });
        match more {
            Some(c) => counts = c,
            None => {
                let (bytes, limit) = if fits_buffer { (working, memory_bytes.unwrap()) } else { (largest, max_buffer_bytes.unwrap()) };
                return Err(Error::TooLarge {
                    what: format!("one Richardson-Lucy tile (window {window:?}, guard bands {guard:?}: tiles cannot be smaller than the PSF {psf:?})"),
                    bytes,
                    limit,
                });
            }
        }
    }
}

/// Host bytes [`run_tiles`] holds at once with results of `elem` bytes (`None`: the count
/// overflows): the blended output, and for each worker's tile at hand its window copied out
/// (f32), its estimate and its blend weights (f64). The solver's own arrays are its to check
/// (the f64 reference checks its working arrays; the GPU's live on the device).
fn host_bytes(plan: &TilePlan, elem: u64, workers: usize) -> Option<u64> {
    let elems = |d: &[usize]| d.iter().try_fold(1u64, |n, &v| n.checked_mul(v as u64));
    let window = elems(&plan.window_shape())?.checked_mul(workers.max(1) as u64)?;
    elems(&plan.image)?.checked_mul(elem)?.checked_add(window.checked_mul(elem.checked_add(4 + 8)?)?)
}

/// Deconvolves every tile with `solve` (worker, tile index, window, PSF, and `tick(done)` to
/// call after each of its `iterations`) and blends the results: `workers` threads take tiles
/// from one queue, and each blends its result into the output as it finishes (the output is
/// shared under a lock; blending is a small part of a tile's time). `progress` runs on the
/// calling thread.
fn run_tiles<T: Float + Send + Sync>(
    plan: &TilePlan,
    image: &ArrayViewD<f32>,
    psfs: &PsfGrid,
    workers: usize,
    iterations: usize,
    mut progress: impl FnMut(Progress),
    solve: impl Fn(usize, usize, &ArrayViewD<f32>, &ArrayViewD<f32>, &dyn Fn(usize)) -> Result<ArrayD<T>> + Sync,
) -> Result<ArrayD<T>> {
    crate::host::check_host_bytes(
        &format!("tiled Richardson-Lucy of {:?} in {} tiles of {:?}", plan.image, plan.len(), plan.window_shape()),
        host_bytes(plan, std::mem::size_of::<T>() as u64, workers),
    )?;
    let out = Mutex::new(ArrayD::from_elem(image.raw_dim(), T::zero()));
    let b = plan.batch_axes();
    let tiles = plan.tiles();
    let run_tile = |worker: usize, k: usize, ticks: &Sender<(usize, usize)>| -> Result<()> {
        let tile = &tiles[k];
        let slices: Vec<Slice> = (0..b).map(|_| Slice::from(..)).chain(tile.window.iter().map(|r| Slice::from(r.clone()))).collect();
        let select = |ax: ndarray::AxisDescription| slices[ax.axis.index()];
        let window = standard_copy(&image.slice_each_axis(select));
        // (The receiver lives until every worker has finished.)
        let tick = |done: usize| {
            let _ = ticks.send((k, done));
        };
        let estimate = solve(worker, k, &window.view(), &psfs.psf(tile.region), &tick)?;
        // The weights multiply along the spatial axes (after the batch axes): one per row from
        // the axes before the last, times the last axis's ramp.
        let weights = plan.axis_weights(tile);
        let (inner, outer) = weights.split_last().expect("a spatial axis");
        let rows: Vec<usize> = outer.iter().map(Vec::len).collect();
        let outer = ArrayD::from_shape_fn(IxDyn(&rows), |at| (0..rows.len()).map(|d| outer[d][at[d]]).product::<f64>());
        let last = Axis(estimate.ndim() - 1);
        let outer = outer.broadcast(&estimate.shape()[..last.index()]).expect("the weights span the window's spatial axes");
        let mut out = out.lock().unwrap();
        let mut target = out.slice_each_axis_mut(select);
        Zip::from(target.lanes_mut(last))
            .and(estimate.lanes(last))
            .and(&outer)
            .par_for_each(|mut o, e, &w| o.iter_mut().zip(e).zip(inner).for_each(|((o, &e), &v)| *o = *o + e * T::from(w * v).unwrap()));
        Ok(())
    };
    let (next, failed) = (AtomicUsize::new(0), Mutex::new(None));
    let (ticks, ticked) = channel();
    std::thread::scope(|scope| {
        let (run_tile, next, failed, tiles) = (&run_tile, &next, &failed, &tiles);
        scope.spawn(move || {
            let ticks = Mutex::new(ticks);
            crate::gpu::on_workers(workers, |worker| {
                let ticks = ticks.lock().unwrap().clone();
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    if k >= tiles.len() || failed.lock().unwrap().is_some() {
                        return;
                    }
                    if let Err(e) = run_tile(worker, k, &ticks) {
                        failed.lock().unwrap().get_or_insert(e);
                        return;
                    }
                }
            });
            // Every worker has finished: the last sender goes with `ticks`, ending the loop below.
        });
        for (overall, (tile, done)) in ticked.iter().enumerate() {
            // Iterations over all tiles (tiles run at once on several GPUs), and this tile's own.
            let piece = Piece { index: tile, count: tiles.len(), done, total: iterations };
            progress(Progress::new("iterations", overall + 1, tiles.len() * iterations).in_piece(piece));
        }
    });
    match failed.into_inner().unwrap() {
        Some(e) => Err(e),
        None => Ok(out.into_inner().unwrap()),
    }
}

/// `x` copied into a new array in standard layout by all cores (a tile's window, strided in
/// the image, is the solver's input).
fn standard_copy(x: &ArrayViewD<f32>) -> ArrayD<f32> {
    let mut out = ArrayD::from_shape_vec(x.raw_dim(), crate::host::zeroed_vec(x.len())).expect("the window's size");
    Zip::from(&mut out).and(x).par_for_each(|o, &v| *o = v);
    out
}
