//! A planned recording: buffers allocated, bind groups built, parameters uploaded. `run` encodes
//! every dispatch into one compute pass (one pass per node when profiling) and submits once.

use std::sync::Arc;
use std::time::Instant;

use ndarray::{ArrayD, IxDyn};
use num_complex::Complex32;
use serde::Serialize;

use super::plan::{plan, Kind, ValueSpec};
use super::{trace, Buf, Dispatch, Download, Output, Recording, Source, Value};
use crate::error::{Error, Result};
use crate::gpu::registry::{BindingKind, FILL};
use crate::gpu::{Dtype, Gpu, GpuArray, Pooled, Recycler};

/// Timestamp queries one query set holds.
const QUERIES_PER_SET: u32 = wgpu::QUERY_SET_MAX_QUERIES;

/// Time of one node, from GPU timestamps (the `Gpu`'s `profile` option).
#[derive(Clone, Debug, Serialize)]
pub struct NodeTime {
    pub label: String,
    pub ms: f64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct RunReport {
    /// Host wall time from submit to results, including the download.
    pub wall_ms: f64,
    /// GPU time of the pass(es), when the adapter has timestamp queries.
    pub gpu_ms: Option<f64>,
    /// Per-node GPU times, when profiling.
    pub nodes: Vec<NodeTime>,
    pub dispatches: usize,
    /// Device memory the run holds: pooled and dedicated buffers, parameters, staging and the
    /// caller's arrays it touches.
    pub peak_bytes: u64,
}

/// Work handed to the queue by [`Compiled::start`].
pub struct Started {
    at: Instant,
    index: wgpu::SubmissionIndex,
}

pub struct Results {
    /// Each download's elements as 4-byte words (every dtype is made of them), its shape, dtype.
    downloads: Vec<(Vec<u32>, Vec<usize>, Dtype)>,
    outputs: Vec<GpuArray>,
    pub report: RunReport,
}

impl Results {
    pub fn f32(&self, d: Download) -> Result<ArrayD<f32>> {
        self.typed(d, Dtype::F32, |w| bytemuck::cast_slice(w).to_vec())
    }
    pub fn c32(&self, d: Download) -> Result<ArrayD<Complex32>> {
        self.typed(d, Dtype::C32, |w| bytemuck::cast_slice(w).to_vec())
    }
    /// The words of a `u32` download without a copy (flat); the download is left empty.
    pub fn take_u32(&mut self, d: Download) -> Result<Vec<u32>> {
        self.check(d, Dtype::U32)?;
        Ok(std::mem::take(&mut self.downloads[d.0].0))
    }

    pub fn u32(&self, d: Download) -> Result<ArrayD<u32>> {
        self.typed(d, Dtype::U32, |w| w.to_vec())
    }

    /// `f32` without a copy, for the last use of the results.
    pub fn into_f32(mut self, d: Download) -> Result<ArrayD<f32>> {
        self.take_f32(d)
    }

    /// `f32` without a copy; the download is left empty (each is taken once).
    pub fn take_f32(&mut self, d: Download) -> Result<ArrayD<f32>> {
        self.take_real(d)
    }

    /// A real download (f32 without a copy, f64 copied out of its 4-byte words, which need not
    /// be 8-aligned); the download is left empty. (Large f64 results stream back faster through
    /// `GpuArray::download_joined`.)
    pub fn take_real<T: crate::gpu::Real>(&mut self, d: Download) -> Result<ArrayD<T>> {
        self.check(d, T::DTYPE)?;
        let (words, dims, _) = &mut self.downloads[d.0];
        let words = std::mem::take(words);
        let values = bytemuck::allocation::try_cast_vec(words).unwrap_or_else(|(_, w)| bytemuck::allocation::pod_collect_to_vec(&w));
        ArrayD::from_shape_vec(IxDyn(dims), values).map_err(|_| Error::Invalid("this download was taken already".into()))
    }

    /// [`Results::take_real`] for the last use of the results.
    pub fn into_real<T: crate::gpu::Real>(mut self, d: Download) -> Result<ArrayD<T>> {
        self.take_real(d)
    }

    /// `c32` without a copy where the allocation allows, for the last use of the results.
    pub fn into_c32(mut self, d: Download) -> Result<ArrayD<Complex32>> {
        self.take_c32(d)
    }

    /// `c32` without a copy where the allocation allows; the download is left empty.
    pub fn take_c32(&mut self, d: Download) -> Result<ArrayD<Complex32>> {
        self.check(d, Dtype::C32)?;
        let (words, dims, _) = &mut self.downloads[d.0];
        let words = std::mem::take(words);
        let values = bytemuck::allocation::try_cast_vec(words).unwrap_or_else(|(_, w)| bytemuck::cast_slice(&w).to_vec());
        ArrayD::from_shape_vec(IxDyn(dims), values).map_err(|_| Error::Invalid("this download was taken already".into()))
    }

    /// Complex values of either precision (copied out of 4-byte words where unaligned); the
    /// download is left empty.
    pub fn take_complex<T: crate::gpu::Real>(&mut self, d: Download) -> Result<ArrayD<num_complex::Complex<T>>> {
        self.check(d, T::COMPLEX)?;
        let (words, dims, _) = &mut self.downloads[d.0];
        let words = std::mem::take(words);
        let values = bytemuck::allocation::try_cast_vec(words).unwrap_or_else(|(_, w)| bytemuck::allocation::pod_collect_to_vec(&w));
        ArrayD::from_shape_vec(IxDyn(dims), values).map_err(|_| Error::Invalid("this download was taken already".into()))
    }

    fn check(&self, d: Download, want: Dtype) -> Result<()> {
        match self.downloads[d.0].2 {
            dtype if dtype == want => Ok(()),
            dtype => Err(Error::Dtype(format!("download holds {dtype:?}, asked for {want:?}"))),
        }
    }

    fn typed<T>(&self, d: Download, want: Dtype, values: impl FnOnce(&[u32]) -> Vec<T>) -> Result<ArrayD<T>> {
        self.check(d, want)?;
        let (words, dims, _) = &self.downloads[d.0];
        Ok(ArrayD::from_shape_vec(IxDyn(dims), values(words)).unwrap())
    }

    pub fn array(&self, o: Output) -> GpuArray {
        self.outputs[o.0].clone()
    }
}

struct Step {
    pipeline: Arc<crate::gpu::Pipeline>,
    bind_group: wgpu::BindGroup,
    grid: [u32; 3],
    label: String,
}

pub struct Compiled {
    steps: Vec<Step>,
    values: Vec<Value>,
    buffers: Vec<Arc<Pooled>>, // one per slot
    slot_of: Vec<Option<usize>>,
    downloads: Vec<Buf>,
    outputs: Vec<Buf>,
    /// The downloads' staging buffers, packed in order up to the largest buffer size.
    staging: Vec<Staging>,
    timestamps: Option<(Vec<wgpu::QuerySet>, wgpu::Buffer, wgpu::Buffer)>, // query sets, resolve, read
    profile: bool,
    peak_bytes: u64,
    recycler: Arc<Recycler>,
}

/// One staging buffer: which downloads it holds, at which offsets.
struct Staging {
    buffer: wgpu::Buffer,
    parts: Vec<(usize, u64)>,
}

const STAGING_USAGE: wgpu::BufferUsages = wgpu::BufferUsages::MAP_READ.union(wgpu::BufferUsages::COPY_DST);

/// The buffers go back to the GPU's recycler for the next recording (those still shared with a
/// `GpuArray` handed out by `Results::array` stay with it).
impl Drop for Compiled {
    fn drop(&mut self) {
        for s in self.staging.drain(..) {
            self.recycler.give(STAGING_USAGE, s.buffer);
        }
    }
}

/// Folds a workgroup count into a grid whose dimensions stay within `max`.
pub(crate) fn fold_grid(count: u64, max: u32) -> [u32; 3] {
    let max = max as u64;
    let y = count.div_ceil(max);
    if y <= 1 {
        return [count as u32, 1, 1];
    }
    let z = y.div_ceil(max);
    let y = y.div_ceil(z);
    let x = count.div_ceil(y * z);
    assert!(x <= max && y <= max && z <= max, "dispatch of {count} workgroups is beyond the device grid");
    [x as u32, y as u32, z as u32]
}

const PARAM_ALIGN: u64 = 256;

/// An `R32Float` texture of `dims` (2 or 3 axes, slowest first) that kernels write as a storage
/// texture and sample.
fn texture_view(gpu: &Gpu, dims: &[usize]) -> wgpu::TextureView {
    let (size, dimension) = match *dims {
        [h, w] => (wgpu::Extent3d { width: w as u32, height: h as u32, depth_or_array_layers: 1 }, wgpu::TextureDimension::D2),
        [d, h, w] => (wgpu::Extent3d { width: w as u32, height: h as u32, depth_or_array_layers: d as u32 }, wgpu::TextureDimension::D3),
        _ => unreachable!("Recording::texture checks the rank"),
    };
    let texture = gpu.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("lucent.texture"),
        size,
        mip_level_count: 1,
        sample_count: 1,
        dimension,
        format: wgpu::TextureFormat::R32Float,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::STORAGE_BINDING,
        view_formats: &[],
    });
    texture.create_view(&wgpu::TextureViewDescriptor::default())
}

/// The executor's NaN fill of a temporary before its first use: `shaders/util/fill.wgsl`, whose
/// `Params` are (count, bits) (`kernels::fill` records the same kernel for algorithms).
fn poison_fill(x: Buf, words: u64) -> Dispatch {
    // f32 NaN in every word: an f64 of two of them is a NaN too.
    let params: [u32; 4] = [words as u32, f32::NAN.to_bits(), f32::NAN.to_bits(), 0];
    Dispatch {
        kernel: &FILL,
        constants: Vec::new(),
        params: bytemuck::bytes_of(&params).to_vec(),
        bufs: vec![x],
        workgroups: FILL.groups(words),
        label: "fill(poison)".into(),
    }
}

impl Compiled {
    pub(crate) fn new(mut rec: Recording) -> Result<Compiled> {
        let gpu = rec.gpu;
        let profile = rec.profile && gpu.has_timestamps();
        // Plan slots; in poison mode a NaN fill precedes each temporary's first use.
        let specs: Vec<_> = rec
            .values
            .iter()
            .map(|v| ValueSpec {
                bytes: v.padded_bytes(),
                // Views own no buffer: their uses count as uses of the value they view.
                kind: match v.source {
                    Source::External(_) | Source::Alias(_) | Source::Texture => Kind::External,
                    Source::Upload(_) => Kind::Upload,
                    Source::Temp => Kind::Temp,
                },
                kept: v.kept,
            })
            .collect();
        let uses: Vec<Vec<usize>> = rec.nodes.iter().map(|n| n.bufs.iter().map(|b| rec.root(b.0)).collect()).collect();
        let mut p = plan(&specs, &uses);
        for v in 0..rec.values.len() {
            p.slot_of[v] = p.slot_of[rec.root(v)];
        }
        if rec.poison {
            let mut nodes = Vec::with_capacity(rec.nodes.len() + p.acquired.len());
            let mut acquired = p.acquired.iter().peekable();
            for (i, node) in std::mem::take(&mut rec.nodes).into_iter().enumerate() {
                while let Some(&&(at, v)) = acquired.peek() {
                    if at != i {
                        break;
                    }
                    nodes.push(poison_fill(Buf(v), rec.values[v].bytes() / 4));
                    acquired.next();
                }
                nodes.push(node);
            }
            rec.nodes = nodes;
        }

        if let Some(b) = rec.downloads.iter().chain(&rec.outputs).find(|b| rec.is_texture(**b)) {
            return Err(Error::Invalid(format!("value {} is a texture: it cannot be downloaded or output", b.0)));
        }
        gpu.scoped(|| -> Result<Compiled> {
            let textures: Vec<Option<wgpu::TextureView>> =
                rec.values.iter().map(|v| matches!(v.source, Source::Texture).then(|| texture_view(gpu, v.shape.dims()))).collect();
            let t = Instant::now();
            let buffers =
                p.slots.iter().enumerate().map(|(i, &bytes)| gpu.create_buffer(&format!("lucent.slot{i}"), bytes).map(Arc::new)).collect::<Result<Vec<_>>>()?;
            trace("compile: buffers", t);
            let resource_of = |b: Buf| -> wgpu::BindingResource {
                let v = &rec.values[b.0];
                let size = wgpu::BufferSize::new(v.padded_bytes());
                match &v.source {
                    Source::Texture => wgpu::BindingResource::TextureView(textures[b.0].as_ref().unwrap()),
                    Source::External(a) => wgpu::BindingResource::Buffer(wgpu::BufferBinding { buffer: &a.buffer, offset: 0, size }),
                    _ => wgpu::BindingResource::Buffer(wgpu::BufferBinding { buffer: &buffers[p.slot_of[b.0].unwrap()], offset: 0, size }),
                }
            };
            // All parameters in one uniform buffer, each block at an aligned offset.
            let align = PARAM_ALIGN.max(gpu.limits().min_uniform_buffer_offset_alignment as u64);
            let mut blob = Vec::new();
            let mut offsets = Vec::new();
            for n in &rec.nodes {
                offsets.push(blob.len() as u64);
                blob.extend_from_slice(&n.params);
                blob.resize((blob.len() as u64).div_ceil(align) as usize * align as usize, 0);
            }
            let params = gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("lucent.params"),
                size: (blob.len() as u64).max(align),
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            gpu.queue.write_buffer(&params, 0, &blob);

            let max_dim = gpu.limits().max_compute_workgroups_per_dimension;
            let t = Instant::now();
            let mut steps = Vec::with_capacity(rec.nodes.len());
            for (n, &offset) in rec.nodes.iter().zip(&offsets) {
                steps.push(Self::step(gpu, n, &params, offset, &rec, &resource_of, max_dim)?);
            }
            trace("compile: pipelines and bind groups", t);
            let texture_bytes: u64 = rec.values.iter().filter(|v| matches!(v.source, Source::Texture)).map(|v| v.bytes()).sum();
            let mut peak_bytes = p.total_bytes() + blob.len() as u64 + texture_bytes;
            let mut externals: Vec<*const Pooled> = Vec::new();
            for v in &rec.values {
                if let Source::External(a) = &v.source {
                    if !externals.contains(&Arc::as_ptr(&a.buffer)) {
                        externals.push(Arc::as_ptr(&a.buffer));
                        peak_bytes += a.buffer.size();
                    }
                }
            }
            // Packed into as few buffers as the size limit allows (arrays in chunks may add up
            // to more than one buffer holds).
            let mut packs: Vec<(u64, Vec<(usize, u64)>)> = Vec::new();
            for (i, b) in rec.downloads.iter().enumerate() {
                let size = rec.values[b.0].bytes().div_ceil(16) * 16;
                match packs.last_mut() {
                    Some((total, parts)) if *total + size <= gpu.max_buffer_bytes() => {
                        parts.push((i, *total));
                        *total += size;
                    }
                    _ => packs.push((size, vec![(i, 0)])),
                }
            }
            let t = Instant::now();
            let staging = packs
                .into_iter()
                .map(|(total, parts)| {
                    peak_bytes += total;
                    Ok(Staging { buffer: gpu.buffer("lucent.download", total, STAGING_USAGE)?, parts })
                })
                .collect::<Result<Vec<_>>>()?;
            trace("compile: staging", t);
            let timestamps = gpu.has_timestamps().then(|| {
                let count = if profile { 2 * steps.len().max(1) } else { 2 } as u32;
                // (A query set holds at most QUERIES_PER_SET: a profiled run of more dispatches
                // takes several.)
                let sets = (0..count.div_ceil(QUERIES_PER_SET))
                    .map(|i| {
                        let count = (count - i * QUERIES_PER_SET).min(QUERIES_PER_SET);
                        gpu.device.create_query_set(&wgpu::QuerySetDescriptor { label: Some("lucent.timestamps"), ty: wgpu::QueryType::Timestamp, count })
                    })
                    .collect::<Vec<_>>();
                let bytes = count as u64 * 8;
                let resolve = gpu.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("lucent.timestamps.resolve"),
                    size: bytes,
                    usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: false,
                });
                let read = gpu.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("lucent.timestamps.read"),
                    size: bytes,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                (sets, resolve, read)
            });
            Ok(Compiled {
                steps,
                values: rec.values,
                buffers,
                slot_of: p.slot_of,
                downloads: rec.downloads,
                outputs: rec.outputs,
                staging,
                timestamps,
                profile,
                peak_bytes,
                recycler: gpu.recycler.clone(),
            })
        })?
    }

    #[allow(clippy::too_many_arguments)]
    fn step<'b>(
        gpu: &'b Gpu,
        n: &Dispatch,
        params: &'b wgpu::Buffer,
        offset: u64,
        rec: &Recording,
        resource_of: &dyn Fn(Buf) -> wgpu::BindingResource<'b>,
        max_dim: u32,
    ) -> Result<Step> {
        let pipeline = gpu.pipeline(n.kernel, &n.constants)?;
        let mut bufs = n.bufs.iter();
        let mut entries = Vec::with_capacity(n.kernel.bindings.len());
        for (i, b) in n.kernel.bindings.iter().enumerate() {
            let resource = match b.kind {
                BindingKind::Uniform => {
                    wgpu::BindingResource::Buffer(wgpu::BufferBinding { buffer: params, offset, size: wgpu::BufferSize::new(n.params.len() as u64) })
                }
                BindingKind::Sampler => wgpu::BindingResource::Sampler(gpu.linear_sampler()),
                kind => {
                    let v = *bufs.next().unwrap();
                    if kind.is_texture() != rec.is_texture(v) {
                        let want = if kind.is_texture() { "a texture" } else { "a buffer" };
                        return Err(Error::Invalid(format!("{}: binding `{}` takes {want}", n.kernel.name, b.name)));
                    }
                    resource_of(v)
                }
            };
            entries.push(wgpu::BindGroupEntry { binding: i as u32, resource });
        }
        let bind_group = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor { label: Some(&n.label), layout: &pipeline.layout, entries: &entries });
        Ok(Step { pipeline, bind_group, grid: fold_grid(n.workgroups, max_dim), label: n.label.clone() })
    }

    /// Bytes of device memory this recording holds while it runs.
    pub fn peak_bytes(&self) -> u64 {
        self.peak_bytes
    }

    /// Device buffers the plan allocated for uploads and temporaries (after reuse).
    pub fn buffers(&self) -> usize {
        self.buffers.len()
    }

    pub fn dispatches(&self) -> usize {
        self.steps.len()
    }

    fn buffer(&self, b: Buf) -> &wgpu::Buffer {
        match &self.values[b.0].source {
            Source::External(a) => &a.buffer,
            _ => &self.buffers[self.slot_of[b.0].unwrap()],
        }
    }

    /// Uploads host data, runs every dispatch, and downloads what was asked for.
    pub fn run(&self, gpu: &Gpu) -> Result<Results> {
        let started = self.start(gpu)?;
        self.finish(gpu, started)
    }

    /// `run` without blocking the caller's thread while the GPU works: the returned future
    /// completes once the device has finished (a helper thread waits on it), on any executor.
    pub async fn run_async(&self, gpu: &Gpu) -> Result<Results> {
        let started = self.start(gpu)?;
        gpu.finished().await?;
        self.collect(gpu, started.at, None)
    }

    /// `run` in two halves, so that the host works while the GPU does: `start` uploads, encodes
    /// and submits; [`Compiled::finish`] waits for this submission only (not for work submitted
    /// after it) and reads the downloads back. Between the two the plan's buffers are in use:
    /// run it again only after `finish`.
    pub fn start(&self, gpu: &Gpu) -> Result<Started> {
        let (at, index) = self.submit(gpu)?;
        Ok(Started { at, index })
    }

    /// The second half of [`Compiled::start`].
    pub fn finish(&self, gpu: &Gpu, started: Started) -> Result<Results> {
        self.collect(gpu, started.at, Some(started.index))
    }

    /// Uploads, encodes and submits everything; returns when the work was handed to the queue.
    fn submit(&self, gpu: &Gpu) -> Result<(Instant, wgpu::SubmissionIndex)> {
        let start = Instant::now();
        gpu.scoped(|| -> Result<wgpu::SubmissionIndex> {
            for (i, v) in self.values.iter().enumerate() {
                if let Source::Upload(data) = &v.source {
                    crate::gpu::write_buffer(gpu, self.buffer(Buf(i)), data)?;
                }
            }
            let mut encoder = gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("lucent.run") });
            let writes = |k: u32| {
                self.timestamps.as_ref().map(|(sets, _, _)| wgpu::ComputePassTimestampWrites {
                    query_set: &sets[(2 * k / QUERIES_PER_SET) as usize],
                    beginning_of_pass_write_index: Some(2 * k % QUERIES_PER_SET),
                    end_of_pass_write_index: Some(2 * k % QUERIES_PER_SET + 1),
                })
            };
            if self.profile {
                for (k, s) in self.steps.iter().enumerate() {
                    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some(&s.label), timestamp_writes: writes(k as u32) });
                    Self::encode(&mut pass, s);
                }
            } else if !self.steps.is_empty() {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("lucent.pass"), timestamp_writes: writes(0) });
                for s in &self.steps {
                    Self::encode(&mut pass, s);
                }
            }
            if let Some((sets, resolve, read)) = &self.timestamps {
                let n = if self.profile {
                    2 * self.steps.len() as u32
                } else if self.steps.is_empty() {
                    0
                } else {
                    2
                };
                if n > 0 {
                    for (i, set) in sets.iter().enumerate() {
                        let first = i as u32 * QUERIES_PER_SET;
                        if first < n {
                            encoder.resolve_query_set(set, 0..(n - first).min(QUERIES_PER_SET), resolve, first as u64 * 8);
                        }
                    }
                    encoder.copy_buffer_to_buffer(resolve, 0, read, 0, n as u64 * 8);
                }
            }
            for staging in &self.staging {
                for &(i, off) in &staging.parts {
                    let b = self.downloads[i];
                    let bytes = self.values[b.0].bytes().div_ceil(4) * 4;
                    encoder.copy_buffer_to_buffer(self.buffer(b), 0, &staging.buffer, off, bytes);
                }
            }
            trace("upload+encode", start);
            Ok(gpu.queue.submit([encoder.finish()]))
        })?
        .map(|index| (start, index))
    }

    /// Waits for submission `after` (None: all submitted work) and reads back the downloads and
    /// timestamps.
    fn collect(&self, gpu: &Gpu, start: Instant, after: Option<wgpu::SubmissionIndex>) -> Result<Results> {
        let waited = Instant::now();
        let mut downloads = vec![(Vec::new(), Vec::new(), Dtype::F32); self.downloads.len()];
        for staging in &self.staging {
            let &(last, off) = staging.parts.last().unwrap();
            let end = off + self.values[self.downloads[last].0].bytes();
            // One copy, from the mapped staging buffer straight into each download's words.
            crate::gpu::map_and_then_after(gpu, &staging.buffer, end, after.clone(), |mapped| {
                for &(i, off) in &staging.parts {
                    let v = &self.values[self.downloads[i].0];
                    downloads[i] = (crate::gpu::words_from(&mapped[off as usize..(off + v.bytes()) as usize]), v.shape.dims().to_vec(), v.dtype);
                }
            })?;
        }
        if self.staging.is_empty() {
            gpu.wait_for(after.clone())?;
        }
        trace("wait+download", waited);
        let mut report = RunReport { dispatches: self.steps.len(), peak_bytes: self.peak_bytes, ..Default::default() };
        if let (Some((_, _, read)), false) = (&self.timestamps, self.steps.is_empty()) {
            let n = if self.profile { 2 * self.steps.len() } else { 2 };
            let ticks: Vec<u64> = crate::gpu::map_and_then_after(gpu, read, n as u64 * 8, after, |b| bytemuck::cast_slice(b).to_vec())?;
            let period = gpu.queue.get_timestamp_period() as f64 * 1e-6; // ms per tick
            let ms = |k: usize| ticks[2 * k + 1].saturating_sub(ticks[2 * k]) as f64 * period;
            if self.profile {
                report.nodes = self.steps.iter().enumerate().map(|(k, s)| NodeTime { label: s.label.clone(), ms: ms(k) }).collect();
                report.nodes.iter().for_each(|n| crate::gpu::trace_ms(&format!("gpu {}", n.label), n.ms));
                report.gpu_ms = Some(report.nodes.iter().map(|n| n.ms).sum());
            } else {
                report.gpu_ms = Some(ms(0));
            }
        }
        report.wall_ms = crate::host::ms_since(start);
        Ok(Results { downloads, outputs: self.output_arrays(), report })
    }

    /// Submits the work and returns its outputs at once, without waiting for the GPU: later
    /// submissions (copies, downloads, other runs) on the same GPU see its results. A run with
    /// downloads is refused (it must wait for them: [`Compiled::run`]).
    pub fn launch(&self, gpu: &Gpu) -> Result<Vec<GpuArray>> {
        if !self.downloads.is_empty() {
            return Err(Error::Invalid("a launched run cannot download (run it instead)".into()));
        }
        self.submit(gpu)?;
        Ok(self.output_arrays())
    }

    /// The outputs of a run that was started ([`Compiled::start`]) but not finished: later
    /// submissions on the same GPU may read them (the queue runs them after this run).
    pub fn outputs(&self) -> Vec<GpuArray> {
        self.output_arrays()
    }

    fn output_arrays(&self) -> Vec<GpuArray> {
        self.outputs
            .iter()
            .map(|b| {
                let v = &self.values[b.0];
                let buffer = match &v.source {
                    Source::External(a) => a.buffer.clone(),
                    _ => self.buffers[self.slot_of[b.0].unwrap()].clone(),
                };
                GpuArray::from_buffer(buffer, v.shape.clone(), v.dtype)
            })
            .collect()
    }

    fn encode(pass: &mut wgpu::ComputePass, s: &Step) {
        pass.set_pipeline(&s.pipeline.pipeline);
        pass.set_bind_group(0, &s.bind_group, &[]);
        pass.dispatch_workgroups(s.grid[0], s.grid[1], s.grid[2]);
    }
}

#[cfg(test)]
mod tests {
    use super::fold_grid;

    #[test]
    fn grids_fold_within_limits() {
        for &count in &[1u64, 65_535, 65_536, 1 << 24, 65_535 * 65_535 + 7, 1 << 33] {
            let g = fold_grid(count, 65_535);
            assert!(g.iter().all(|&d| (1..=65_535).contains(&d)), "{count}: {g:?}");
            let total = g.iter().map(|&d| d as u64).product::<u64>();
            assert!(total >= count && total - count < g[1] as u64 * g[2] as u64, "{count}: {g:?}");
        }
    }
}
