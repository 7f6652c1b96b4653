//! `shaders/filter/correlate_tiled.wgsl`: the direct correlation of `correlate_window`
//! (`y[o] = Σ_j w[j] · x[origin + o + j]`, coordinates outside `x` folded by a [`Boundary`]) with
//! the input tiled through workgroup memory: each workgroup loads its output tile plus the
//! kernel's halo in the two fastest axes once per slow tap (and per chunk of kernel rows), and
//! each thread sums 8 neighbouring outputs from registers. A [`Tiling`] says how a problem fits
//! the adapter's workgroup memory; when none does, callers use `correlate_window`.

use bytemuck::{Pod, Zeroable};
use ndarray::ArrayViewD;

use super::boundary::Boundary;
use super::{correlate_window, CORRELATE_TILED};
use crate::error::{Error, Result};
use crate::gpu::{Dtype, Gpu, Real, Shape};
use crate::graph::{Buf, Recording};

/// Threads per workgroup and outputs per thread along the contiguous axis, as in the WGSL.
const THREADS: u32 = 256;
const PER_THREAD: usize = 8;

/// Workgroup memory is sized in steps of this many vec4s (4 KiB), so few pipelines are built.
const TILE_STEP_VEC4S: u32 = 256;

/// The tiled kernel pays when a loaded sample is reused by enough taps of the tiled plane and the
/// contiguous axis has at least 3 taps (weights are processed four at a time along it, so a
/// 1- or 2-tap axis would waste half or more of the FMAs). Not yet calibrated: `lucent bench
/// --filter filter_direct` has the rows (tiled against the window kernel).
pub const MIN_PLANE_TAPS: usize = 9;

/// Mirrors `Params` in correlate_tiled.wgsl. Slots are numpy axis order padded on the left to 4D.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub out_dims: [u32; 4],
    pub in_dims: [i32; 4],
    pub origin: [i32; 4],
    pub k_dims: [u32; 4],
    /// Tiles along x, tiles along y, workgroups in all, threads along x.
    pub tiles: [u32; 4],
    pub tile_rows: u32,
    pub chunk_rows: u32,
    pub k_blocks: u32,
    pub fill: f32,
}

/// How one correlation is cut into workgroups: `threads_x` threads (8 outputs each) along the
/// contiguous axis times `256 / threads_x` output rows per tile, `chunk_rows` kernel rows per
/// load, and the workgroup memory that needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tiling {
    pub threads_x: u32,
    pub chunk_rows: u32,
    pub tile_vec4s: u32,
}

impl Tiling {
    /// The tiling for an output of `out_dims` and weights of `k_dims` (one rank, 1-4 axes)
    /// within `memory_bytes` of workgroup memory, or `None` when not even one kernel row's halo
    /// fits. Of the tile shapes (8·tx outputs wide, 256/tx rows, tx a power of two) that fit,
    /// the one that wastes the fewest threads past the output's edges, then the one that loads
    /// the fewest samples per output; kernel rows are loaded in chunks when their halo rows do
    /// not all fit.
    pub fn plan(out_dims: &[usize], k_dims: &[usize], memory_bytes: u32) -> Option<Tiling> {
        let (out4, k4) = (Shape::new(out_dims).ok()?.dims4(), Shape::new(k_dims).ok()?.dims4());
        let budget = (memory_bytes / 16) as u64;
        let k_blocks = k4[3].div_ceil(4) as u64;
        let mut best: Option<((u64, u64), Tiling)> = None;
        for tx in (0..=8).map(|e| 1u32 << e) {
            // Memory: (rows + chunk - 1) × (2·tx + k_blocks) vec4s.
            let rows = (THREADS / tx) as u64;
            let max_rows = budget / (2 * tx as u64 + k_blocks);
            if max_rows < rows {
                continue;
            }
            let chunk = (max_rows - rows + 1).min(k4[2] as u64);
            let (width, height) = (PER_THREAD as u64 * tx as u64, rows);
            let covered = (out4[3] as u64).div_ceil(width) * width * (out4[2] as u64).div_ceil(height) * height;
            // Samples loaded per tile, in thousandths per output.
            let loads = (height + k4[2] as u64 - 1) * (width + 4 * k_blocks) * 1000 / (width * height);
            let score = (covered, loads);
            if best.as_ref().is_none_or(|(b, _)| score < *b) {
                let t = Tiling::new(tx, chunk as u32, k_dims);
                best = Some((score, Tiling { tile_vec4s: t.tile_vec4s.min(budget as u32), ..t }));
            }
        }
        best.map(|(_, t)| t)
    }

    /// `threads_x` threads along x (a power of two up to 256), `chunk_rows` kernel rows per load,
    /// and the workgroup memory they need for weights of `k_dims` (rounded up to 4 KiB steps).
    pub fn new(threads_x: u32, chunk_rows: u32, k_dims: &[usize]) -> Tiling {
        let k_blocks = k_dims.last().map_or(1, |&k| k.div_ceil(4)) as u32;
        let vec4s = (THREADS / threads_x.max(1) + chunk_rows.max(1) - 1) * (2 * threads_x + k_blocks);
        Tiling { threads_x, chunk_rows, tile_vec4s: vec4s.div_ceil(TILE_STEP_VEC4S) * TILE_STEP_VEC4S }
    }

    /// The plan for this adapter's workgroup memory, for f32 data.
    pub fn for_gpu(gpu: &Gpu, out_dims: &[usize], k_dims: &[usize]) -> Option<Tiling> {
        Tiling::for_dtype(gpu, out_dims, k_dims, Dtype::F32)
    }

    /// The plan for data of `dtype` (f64 vec4s take twice the memory: planned in half of it).
    pub fn for_dtype(gpu: &Gpu, out_dims: &[usize], k_dims: &[usize], dtype: Dtype) -> Option<Tiling> {
        Tiling::plan(out_dims, k_dims, gpu.workgroup_memory_bytes() / dtype.words())
    }
}

/// Whether tiling is expected to beat `correlate_window` for weights of this shape (see
/// [`MIN_PLANE_TAPS`]).
pub fn pays(k_dims: &[usize]) -> bool {
    let n = k_dims.len();
    let x = k_dims[n - 1];
    let plane = x * if n > 1 { k_dims[n - 2] } else { 1 };
    x >= 3 && plane >= MIN_PLANE_TAPS
}

/// Records the correlation of `x` (f32, or f64 on devices with it) with host `weights` (sent in
/// x's type) into a new temporary of shape `out_dims`,
/// with the adapter's tiling; `Error::TooLarge` when the kernel's halo does not fit.
pub fn record<W: Real>(rec: &mut Recording, x: Buf, weights: &ArrayViewD<W>, out_dims: &[usize], origin: &[i64], boundary: Boundary) -> Result<Buf> {
    let tiling = Tiling::for_dtype(rec.gpu(), out_dims, weights.shape(), rec.dtype(x)).ok_or_else(|| {
        Error::Invalid(format!(
            "tiled correlation: the halo of a {:?} kernel does not fit {} bytes of workgroup memory",
            weights.shape(),
            rec.gpu().workgroup_memory_bytes()
        ))
    })?;
    record_with(rec, x, weights, out_dims, origin, boundary, tiling)
}

/// As [`record`] with a given tiling (tests force small ones to exercise chunked kernel rows).
pub fn record_with<W: Real>(
    rec: &mut Recording,
    x: Buf,
    weights: &ArrayViewD<W>,
    out_dims: &[usize],
    origin: &[i64],
    boundary: Boundary,
    tiling: Tiling,
) -> Result<Buf> {
    let dtype = rec.dtype(x);
    let kernel = CORRELATE_TILED.for_dtype(dtype)?;
    let in_dims = rec.dims(x).to_vec();
    let k_dims = weights.shape().to_vec();
    let rank = in_dims.len();
    if k_dims.len() != rank || out_dims.len() != rank || origin.len() != rank {
        return Err(Error::Shape(format!("correlation: input {in_dims:?}, weights {k_dims:?}, output {out_dims:?} and origin {origin:?} must have one rank")));
    }
    check_ranges(&in_dims, &k_dims, out_dims, origin)?;
    if tiling.tile_vec4s * 16 * dtype.words() > rec.gpu().workgroup_memory_bytes() || tiling.threads_x == 0 || !THREADS.is_multiple_of(tiling.threads_x) {
        return Err(Error::Invalid(format!("tiling {tiling:?} does not fit this adapter")));
    }
    let (in4, k4, out4) = (Shape::new(&in_dims)?.dims4(), Shape::new(&k_dims)?.dims4(), Shape::new(out_dims)?.dims4());
    let w = rec.upload_as(&padded_rows(weights, k4).into_dyn().view(), dtype)?;
    let y = rec.temp(out_dims, dtype)?;
    let mut origin4 = [0i32; 4];
    for (o, &v) in origin4[4 - rank..].iter_mut().zip(origin) {
        *o = v as i32;
    }
    let tile_rows = THREADS / tiling.threads_x;
    let tiles_x = out4[3].div_ceil(PER_THREAD * tiling.threads_x as usize);
    let tiles_y = out4[2].div_ceil(tile_rows as usize);
    let groups = (tiles_x * tiles_y * out4[1] * out4[0]) as u64;
    if groups >= 1 << 32 {
        return Err(Error::Invalid(format!("tiled correlation: {groups} workgroups exceed the u32 index")));
    }
    let fill = if let Boundary::Constant(v) = boundary { v } else { 0.0 };
    let p = Params {
        out_dims: out4.map(|d| d as u32),
        in_dims: in4.map(|d| d as i32),
        origin: origin4,
        k_dims: k4.map(|d| d as u32),
        tiles: [tiles_x as u32, tiles_y as u32, groups as u32, tiling.threads_x],
        tile_rows,
        chunk_rows: tiling.chunk_rows.clamp(1, k4[2] as u32),
        k_blocks: k4[3].div_ceil(4) as u32,
        fill,
    };
    // Workgroup memory must hold a whole chunk: (tile rows + chunk - 1) × (2·XT + k_blocks) vec4s.
    let needed = (tile_rows + p.chunk_rows - 1) * (2 * tiling.threads_x + p.k_blocks);
    if needed > tiling.tile_vec4s {
        return Err(Error::Invalid(format!("tiling {tiling:?} is too small for {needed} vec4s of tile")));
    }
    let compensated = k_dims.iter().product::<usize>() >= correlate_window::COMPENSATED_TAPS;
    let constants = [("MODE", boundary.code() as f64), ("TILE_VEC4S", tiling.tile_vec4s as f64), ("COMPENSATED", f64::from(u8::from(compensated)))];
    rec.dispatch(kernel, &constants, bytemuck::bytes_of(&p), &[x, w, y], groups);
    Ok(y)
}

/// The kernel indexes with u32 and forms coordinates in i32: element counts below 2^31 (as
/// `correlate_window`), every coordinate (origin + output + tap, and the reflect period 2n)
/// within ±2^30.
fn check_ranges(in_dims: &[usize], k_dims: &[usize], out_dims: &[usize], origin: &[i64]) -> Result<()> {
    const LIMIT: u128 = 1 << 30;
    for (what, d) in [("input", in_dims), ("weights", k_dims), ("output", out_dims)] {
        let elems = d.iter().map(|&v| v as u128).product::<u128>();
        if elems >= 1 << 31 {
            return Err(Error::TooLarge { what: format!("correlation {what} {d:?}"), bytes: elems as u64 * 4, limit: 1 << 33 });
        }
    }
    for a in 0..in_dims.len() {
        let reach = origin[a].unsigned_abs() as u128 + out_dims[a] as u128 + k_dims[a] as u128;
        if reach >= LIMIT || in_dims[a] as u128 >= LIMIT {
            return Err(Error::Invalid(format!("correlation: origin {origin:?} reaches coordinates beyond ±2^30 along axis {a}")));
        }
    }
    Ok(())
}

/// The weights as 4D rows of whole vec4s: the contiguous axis zero-padded to a multiple of 4.
fn padded_rows<W: Real>(weights: &ArrayViewD<W>, k4: [usize; 4]) -> ndarray::Array1<f64> {
    let blocks = k4[3].div_ceil(4) * 4;
    let mut out = ndarray::Array1::zeros(k4[0] * k4[1] * k4[2] * blocks);
    for (row, chunk) in weights.iter().map(|w| w.as_f64()).collect::<Vec<_>>().chunks(k4[3]).enumerate() {
        out.as_slice_mut().unwrap()[row * blocks..row * blocks + k4[3]].copy_from_slice(chunk);
    }
    out
}

/// The CPU twin: the same sums as `correlate_window`'s (one reference for both kernels).
pub fn cpu(x: &[f32], in_dims: &[usize], w: &[f32], k_dims: &[usize], out_dims: &[usize], origin: &[i64], boundary: Boundary) -> Vec<f32> {
    correlate_window::cpu(x, in_dims, w, k_dims, out_dims, origin, boundary)
}
