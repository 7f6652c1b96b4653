//! Projection, back-projection and FDK of volumes and projection sets beyond one buffer or the
//! device's memory budget: the volume in slabs of slices (3D), the projections in chunks of
//! consecutive views, each block (slab × chunk) on the device alone, streamed through the host.
//!
//! Joseph's projector is linear in the volume and reads 0 outside it, so the projections are the
//! sum over slabs of each slab's own projections ([`Views::slab`]: the same rays in the slab's
//! index coordinates; a sample between two slabs takes its taps from each), summed on the
//! device; a slab's back-projection (either projector, or FDK's) is the sum over the chunks of
//! theirs. FDK filters each chunk once: kept on the device when one chunk holds every view, else
//! held on the host between the filtering and the back-projection. One block is the whole call.

use std::ops::Range;

use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn, Slice};

use super::{fdk, gpu, ProjectionGeometry, Projector, Views};
use crate::error::{Error, Result};
use crate::gpu::{Gpu, GpuArray};
use crate::graph::{Buf, Recording};
use crate::kernels::backproject_voxels;
use crate::kernels::binary::{self, BinaryOp};
use crate::kernels::project_rays::Setup;
use crate::ops::tomography::Filter;
use crate::placement::{Form, Placement};

/// The slabs of slices (3D; one range of the one slice in 2D) and the chunks of views.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub slabs: Vec<Range<usize>>,
    pub chunks: Vec<Range<usize>>,
}

impl Plan {
    pub fn placement(&self) -> Placement {
        let pieces = self.slabs.len() * self.chunks.len();
        Placement::planned(if pieces == 1 { Form::Whole } else { Form::Slabs }, pieces)
    }
}

/// `n` cut into ranges of ⌈n / parts⌉.
fn split(n: usize, parts: usize) -> Vec<Range<usize>> {
    let size = n.div_ceil(parts.max(1)).max(1);
    (0..n).step_by(size).map(|a| a..(a + size).min(n)).collect()
}

/// The fewest parts of `n` smaller than `parts` parts are.
fn finer(n: usize, parts: usize) -> usize {
    let size = n.div_ceil(parts);
    if size <= 1 {
        n
    } else {
        n.div_ceil(size - 1)
    }
}

/// Slabs and chunks whose blocks fit one buffer each (the widest array made from a chunk
/// `widest` bytes per view) and, `volumes` slab-sized and `projection_sets` chunk-sized arrays
/// at once, the device's memory budget: the larger share is cut first.
pub fn plan(gpu: &Gpu, views: &Views, volumes: u64, projection_sets: u64, widest: u64) -> Result<Plan> {
    let [nx, ny, nz] = views.dims;
    let (slice, view) = (4 * (nx * ny) as u64, 4 * (views.rows * views.cols) as u64);
    let n = views.projections();
    let (limit, budget) = (gpu.max_buffer_bytes(), gpu.memory_budget_bytes());
    let (mut s, mut c) = (1, 1);
    loop {
        let (vb, pb) = (slice * nz.div_ceil(s) as u64, view * n.div_ceil(c) as u64);
        // The chunk's views themselves are one buffer too.
        let packed = (4 * super::VIEW_FLOATS * n.div_ceil(c)) as u64;
        let (over_v, over_p) = (vb > limit, pb > limit || widest * n.div_ceil(c) as u64 > limit || packed > limit);
        if !over_v && !over_p && volumes * vb + projection_sets * pb <= budget {
            return Ok(Plan { slabs: split(nz, s), chunks: split(n, c) });
        }
        let slabs_first = over_v || (!over_p && volumes * vb >= projection_sets * pb);
        if slabs_first && s < nz {
            s = finer(nz, s);
        } else if c < n {
            c = finer(n, c);
        } else if s < nz {
            s = finer(nz, s);
        } else {
            return Err(Error::OutOfMemory(format!(
                "one slice of {slice} bytes and one view of {view} bytes at once: beyond this device's buffers of {limit} bytes or its memory budget of {budget} bytes"
            )));
        }
    }
}

/// Bytes of one view's projection.
fn view_bytes(views: &Views) -> u64 {
    (4 * views.rows * views.cols) as u64
}

/// Bytes one block holds: `volumes` slabs and `projection_sets` chunks.
fn working(views: &Views, plan: &Plan, volumes: u64, projection_sets: u64) -> u64 {
    let [nx, ny, _] = views.dims;
    let slab = plan.slabs.iter().map(Range::len).max().unwrap_or(1);
    let chunk = plan.chunks.iter().map(Range::len).max().unwrap_or(1);
    volumes * (4 * nx * ny * slab) as u64 + projection_sets * view_bytes(views) * chunk as u64
}

/// The projections' axis of views: 1 in 3D (rows, angles, cols), 0 in 2D (angles, cols).
fn view_axis(views: &Views) -> Axis {
    Axis(usize::from(views.three_d))
}

/// Pieces of an array for the blocks: on the device (each uploaded once), or uploaded from the
/// host per block.
enum Pieces<'a> {
    Device(Vec<GpuArray>),
    Host(ArrayViewD<'a, f32>, Axis, &'a [Range<usize>]),
}

impl Pieces<'_> {
    fn record(&self, rec: &mut Recording, k: usize) -> Result<Buf> {
        match self {
            Pieces::Device(a) => Ok(rec.input(&a[k.min(a.len() - 1)])),
            // One range is all of it (a 2D image's one "slab" too).
            Pieces::Host(x, _, ranges) if ranges.len() == 1 => rec.upload_once_f32(x),
            Pieces::Host(x, axis, ranges) => rec.upload_once_f32(&x.slice_axis(*axis, Slice::from(ranges[k].clone())).as_standard_layout().view()),
        }
    }
}

/// `x` in `ranges` along `axis`: each piece uploaded once where all of `x` fits the device's
/// memory budget beside `working` bytes of the blocks' own arrays, else left on the host.
fn pieces<'a>(gpu: &Gpu, x: ArrayViewD<'a, f32>, axis: Axis, ranges: &'a [Range<usize>], working: u64) -> Result<Pieces<'a>> {
    let bytes = 4 * x.len() as u64;
    let host = Pieces::Host(x, axis, ranges);
    if ranges.len() == 1 || bytes + working > gpu.memory_budget_bytes() {
        return Ok(host);
    }
    (0..ranges.len()).map(|k| upload(gpu, &host, k)).collect::<Result<Vec<_>>>().map(Pieces::Device)
}

/// Piece `k` of `source` on the device.
fn upload(gpu: &Gpu, source: &Pieces, k: usize) -> Result<GpuArray> {
    let mut rec = Recording::new(gpu);
    let b = source.record(&mut rec, k)?;
    let o = rec.output(b);
    Ok(rec.run()?.array(o))
}

/// The views of block (slab, chunk).
fn block(views: &Views, slab: &Range<usize>, chunk: &Range<usize>) -> Views {
    let part = views.subset(&chunk.clone().collect::<Vec<_>>());
    if views.three_d {
        part.slab(slab.clone())
    } else {
        part
    }
}

/// Σ over `inner` of `record(block)` per `outer` range, each sum downloaded into its place
/// along `out_axis` of an array of `shape`: the blocks' loop of both directions. One block's
/// download is the result itself.
#[allow(clippy::too_many_arguments)]
fn sweep(
    gpu: &Gpu,
    shape: &[usize],
    out_axis: Axis,
    outer: &[Range<usize>],
    inner: &[Range<usize>],
    views_of: impl Fn(&Range<usize>, &Range<usize>) -> Views,
    source: &Pieces,
    record: impl Fn(&mut Recording, Buf, &Views, &Setup, usize) -> Result<Buf>,
) -> Result<ArrayD<f32>> {
    if outer.len() == 1 && inner.len() == 1 {
        let part = views_of(&outer[0], &inner[0]);
        let mut rec = Recording::new(gpu);
        let s = gpu::setup(&mut rec, &part)?;
        let x = source.record(&mut rec, 0)?;
        let y = record(&mut rec, x, &part, &s, 0)?;
        let d = rec.download(y);
        return rec.run()?.into_f32(d)?.into_shape_with_order(IxDyn(shape)).map_err(|e| Error::Shape(e.to_string()));
    }
    // One piece read by every block: uploaded once.
    let kept;
    let source = if inner.len() == 1 && matches!(source, Pieces::Host(..)) {
        kept = Pieces::Device(vec![upload(gpu, source, 0)?]);
        &kept
    } else {
        source
    };
    let mut out = ArrayD::<f32>::zeros(IxDyn(shape));
    for range in outer {
        let mut sum: Option<GpuArray> = None;
        for (i, inside) in inner.iter().enumerate() {
            let part = views_of(range, inside);
            let mut rec = Recording::new(gpu);
            let s = gpu::setup(&mut rec, &part)?;
            let x = source.record(&mut rec, i)?;
            let mut y = record(&mut rec, x, &part, &s, i)?;
            if let Some(a) = &sum {
                let a = rec.input(a);
                y = binary::record(&mut rec, BinaryOp::Add, a, y)?;
            }
            if i + 1 < inner.len() {
                let kept = rec.output(y);
                sum = Some(rec.run()?.array(kept));
            } else {
                let d = rec.download(y);
                let got = rec.run()?.into_f32(d)?;
                let mut target = out.slice_axis_mut(out_axis, Slice::from(range.clone()));
                let got = got.into_shape_with_order(IxDyn(target.shape())).map_err(|e| Error::Shape(e.to_string()))?;
                target.assign(&got);
            }
        }
    }
    Ok(out)
}

/// The projections of `volume` ((Z, Y, X) or (Y, X)), block by block.
pub fn project(gpu: &Gpu, volume: &ArrayViewD<f32>, views: &Views) -> Result<(ArrayD<f32>, Placement)> {
    // The slab, its transposed copy and a temporary; the chunk's projections and their sum.
    let plan = plan(gpu, views, 3, 2, view_bytes(views))?;
    // Outer: chunks of views; inner: slabs (the volume's pieces).
    let slabs = pieces(gpu, volume.view(), Axis(0), &plan.slabs, working(views, &plan, 3, 2))?;
    let record = |rec: &mut Recording, x: Buf, part: &Views, s: &Setup, _: usize| gpu::record_project(rec, x, part, s);
    let out = sweep(gpu, &views.projection_shape(), view_axis(views), &plan.chunks, &plan.slabs, |chunk, slab| block(views, slab, chunk), &slabs, record)?;
    Ok((out, plan.placement()))
}

/// The back-projection of `data` by `projector`, block by block.
pub fn back_project(gpu: &Gpu, data: &ArrayViewD<f32>, views: &Views, projector: Projector) -> Result<(ArrayD<f32>, Placement)> {
    let plan = plan(gpu, views, 2, 2, view_bytes(views))?;
    let chunks = pieces(gpu, data.view(), view_axis(views), &plan.chunks, working(views, &plan, 2, 2))?;
    let record = |rec: &mut Recording, x: Buf, part: &Views, s: &Setup, _: usize| gpu::record_backproject(rec, x, part, s, projector);
    back(gpu, views, &plan, &chunks, record)
}

fn back(
    gpu: &Gpu,
    views: &Views,
    plan: &Plan,
    chunks: &Pieces,
    record: impl Fn(&mut Recording, Buf, &Views, &Setup, usize) -> Result<Buf>,
) -> Result<(ArrayD<f32>, Placement)> {
    // In 2D the one "slab" is every row of the image.
    let slabs: Vec<Range<usize>> = if views.three_d { plan.slabs.clone() } else { std::iter::once(0..views.dims[1]).collect() };
    let out = sweep(gpu, &views.volume_shape(), Axis(0), &slabs, &plan.chunks, |slab, chunk| block(views, slab, chunk), chunks, record)?;
    Ok((out, plan.placement()))
}

/// FDK (or fan-beam / parallel FBP) of `data` in the circular geometry `g`, block by block.
pub fn fdk(gpu: &Gpu, data: &ArrayViewD<f32>, g: &ProjectionGeometry, views: &Views, filter: Filter) -> Result<(ArrayD<f32>, Placement)> {
    let (cosine, per) = fdk::weights(g)?;
    // The filter's lines padded (real; the complex half spectrum, as wide): about `wide` chunks'
    // worth each.
    let padded = crate::ops::tomography::padded_length(views.cols);
    let widest = (8 * views.rows * (padded / 2 + 1)) as u64;
    let wide = widest.div_ceil(view_bytes(views));
    let plan = plan(gpu, views, 2, 2 + 3 * wide, widest)?;
    let axis = view_axis(views);
    let filtered_chunk = |rec: &mut Recording, x: Buf, chunk: &Range<usize>| -> Result<Buf> {
        let part = views.subset(&chunk.clone().collect::<Vec<_>>());
        gpu::record_fdk_filter(rec, x, &part, (&cosine, &per.slice_axis(Axis(0), Slice::from(chunk.clone()))), filter, 0.0)
    };
    let host;
    let resident = 4 * data.len() as u64 + working(views, &plan, 2, 2 + 3 * wide) <= gpu.memory_budget_bytes();
    let filtered = if plan.chunks.len() == 1 || resident {
        // Each chunk filtered once, kept on the device.
        let mut kept = Vec::with_capacity(plan.chunks.len());
        for chunk in &plan.chunks {
            let mut rec = Recording::new(gpu);
            let x = if plan.chunks.len() == 1 {
                rec.upload_once_f32(data)?
            } else {
                rec.upload_once_f32(&data.slice_axis(axis, Slice::from(chunk.clone())).as_standard_layout().view())?
            };
            let y = filtered_chunk(&mut rec, x, chunk)?;
            let o = rec.output(y);
            kept.push(rec.run()?.array(o));
        }
        Pieces::Device(kept)
    } else {
        crate::host::check_host_array("the filtered projections", &views.projection_shape(), 4)?;
        let mut all = ArrayD::<f32>::zeros(IxDyn(&views.projection_shape()));
        for chunk in &plan.chunks {
            let mut rec = Recording::new(gpu);
            let x = rec.upload_once_f32(&data.slice_axis(axis, Slice::from(chunk.clone())).as_standard_layout().view())?;
            let y = filtered_chunk(&mut rec, x, chunk)?;
            let d = rec.download(y);
            let got = rec.run()?.into_f32(d)?;
            let mut target = all.slice_axis_mut(axis, Slice::from(chunk.clone()));
            target.assign(&got.into_shape_with_order(IxDyn(target.shape())).map_err(|e| Error::Shape(e.to_string()))?);
        }
        host = all;
        Pieces::Host(host.view(), axis, &plan.chunks)
    };
    let record = |rec: &mut Recording, x: Buf, part: &Views, s: &Setup, _: usize| -> Result<Buf> {
        let x = rec.reinterpret(x, &[part.rows, part.projections(), part.cols], crate::gpu::Dtype::F32)?;
        let volume = backproject_voxels::record(rec, x, s, true)?;
        rec.reinterpret(volume, &part.volume_shape(), crate::gpu::Dtype::F32)
    };
    back(gpu, views, &plan, &filtered, record)
}
