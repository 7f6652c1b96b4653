//! `Gpu`: one instance, adapter, device and queue, opened with the adapter's own limits.

use serde::Serialize;

use std::sync::Arc;

use super::cache::Cache;
use super::options::GpuOptions;
use super::pipelines::{PipelineCache, PipelineStats};
use super::recycle::{Pooled, Recycler};
use crate::error::{Error, Result};

/// What a user needs to know about an adapter (`lucent info`).
#[derive(Clone, Debug, Serialize)]
pub struct AdapterSummary {
    pub index: usize,
    pub name: String,
    pub backend: String,
    pub device_type: String,
    pub driver: String,
    pub driver_info: String,
}

impl AdapterSummary {
    fn new(index: usize, info: &wgpu::AdapterInfo) -> Self {
        AdapterSummary {
            index,
            name: info.name.clone(),
            backend: format!("{:?}", info.backend),
            device_type: format!("{:?}", info.device_type),
            driver: info.driver.clone(),
            driver_info: info.driver_info.clone(),
        }
    }
}

pub struct Gpu {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) pipelines: PipelineCache,
    pub(crate) cache: Cache,
    pub(crate) recycler: Arc<Recycler>,
    summary: AdapterSummary,
    limits: wgpu::Limits,
    features: wgpu::Features,
    max_buffer_bytes: u64,
    /// The adapter's largest device-local memory heap, where the backend tells (Vulkan).
    device_memory_bytes: Option<u64>,
    options: GpuOptions,
    open_ms: f64,
    linear_sampler: std::sync::OnceLock<wgpu::Sampler>,
}

/// Usage of every storage buffer lucent creates.
pub(crate) const STORAGE_USAGE: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE.union(wgpu::BufferUsages::COPY_SRC).union(wgpu::BufferUsages::COPY_DST);

/// Native backends only: GL's compute support is too limited for our kernels.
const BACKENDS: wgpu::Backends = wgpu::Backends::PRIMARY;

fn instance() -> wgpu::Instance {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = BACKENDS;
    wgpu::Instance::new(desc)
}

/// Preference when no adapter is named: discrete, then integrated, then virtual, then CPU.
fn rank(t: wgpu::DeviceType) -> u8 {
    match t {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Cpu => 3,
        wgpu::DeviceType::Other => 4,
    }
}

impl Gpu {
    /// Lists every adapter the native backends see.
    pub fn list_adapters() -> Vec<AdapterSummary> {
        let adapters = pollster::block_on(instance().enumerate_adapters(BACKENDS));
        adapters.iter().enumerate().map(|(i, a)| AdapterSummary::new(i, &a.get_info())).collect()
    }

    /// Opens the adapter the environment names ([`GpuOptions::from_env`]), else the best one.
    pub fn new() -> Result<Gpu> {
        Gpu::open(&GpuOptions::from_env()?)
    }

    /// Opens every adapter of the best device type present (all discrete GPUs of a host, say),
    /// for work spread over several devices (the split convolution). `LUCENT_MAX_BUFFER_BYTES`
    /// applies to each.
    pub fn open_all() -> Result<Vec<Gpu>> {
        let adapters = pollster::block_on(instance().enumerate_adapters(BACKENDS));
        let best = adapters.iter().map(|a| rank(a.get_info().device_type)).min().ok_or_else(|| Error::NoAdapter(String::new()))?;
        let chosen: Vec<String> = (0..adapters.len()).filter(|&i| rank(adapters[i].get_info().device_type) == best).map(|i| i.to_string()).collect();
        Gpu::open_list(&chosen)
    }

    /// Opens one `Gpu` per selector (index or name substring, as [`with_adapter`](Self::with_adapter)).
    pub fn open_list(selectors: &[impl AsRef<str>]) -> Result<Vec<Gpu>> {
        if selectors.is_empty() {
            return Err(Error::Invalid("no adapters selected".into()));
        }
        let options = GpuOptions::from_env()?;
        // At once: each device's start-up (driver, pipeline cache) is its own.
        std::thread::scope(|scope| {
            let opening: Vec<_> = selectors
                .iter()
                .map(|s| {
                    let options = GpuOptions { adapter: Some(s.as_ref().to_string()), ..options.clone() };
                    scope.spawn(move || Gpu::open(&options))
                })
                .collect();
            opening.into_iter().map(|t| t.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
        })
    }

    /// Lowers the largest buffer lucent will create to `bytes` (never raises it): tests and
    /// benchmarks force split paths in-process without `LUCENT_MAX_BUFFER_BYTES`.
    pub fn lower_max_buffer_bytes(&mut self, bytes: u64) {
        self.max_buffer_bytes = self.max_buffer_bytes.min(bytes);
    }

    /// Opens the adapter chosen by `selector` (name substring, case-insensitive, or index), the
    /// other options from the environment.
    pub fn with_adapter(selector: Option<&str>) -> Result<Gpu> {
        Gpu::open(&GpuOptions { adapter: selector.map(str::to_string), ..GpuOptions::from_env()? })
    }

    /// Opens a device as `options` say.
    pub fn open(options: &GpuOptions) -> Result<Gpu> {
        let start = std::time::Instant::now();
        let selector = options.adapter.as_deref();
        let adapters = pollster::block_on(instance().enumerate_adapters(BACKENDS));
        super::trace("open: instance and adapters", start);
        if adapters.is_empty() {
            return Err(Error::NoAdapter(String::new()));
        }
        let infos: Vec<_> = adapters.iter().map(|a| a.get_info()).collect();
        let index = match selector {
            Some(s) => {
                let by_index = s.parse::<usize>().ok().filter(|&i| i < adapters.len());
                let by_name = || infos.iter().position(|i| i.name.to_lowercase().contains(&s.to_lowercase()));
                by_index.or_else(by_name).ok_or_else(|| {
                    let names: Vec<_> = infos.iter().map(|i| i.name.as_str()).collect();
                    Error::AdapterNotFound(format!("`{s}` (available: {})", names.join(", ")))
                })?
            }
            None => (0..adapters.len()).min_by_key(|&i| rank(infos[i].device_type)).unwrap(),
        };
        let adapter = &adapters[index];
        let limits = adapter.limits();
        let wanted = wgpu::Features::TIMESTAMP_QUERY
            | wgpu::Features::SUBGROUP
            | wgpu::Features::PIPELINE_CACHE
            | wgpu::Features::FLOAT32_FILTERABLE
            | wgpu::Features::SHADER_F64;
        let mut features = adapter.features() & wanted;
        if options.no_f64 {
            features.remove(wgpu::Features::SHADER_F64);
        }
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("lucent.device"),
            required_features: features,
            required_limits: limits.clone(),
            memory_hints: wgpu::MemoryHints::Manual { suballocated_device_memory_block_size: (options.memblock_mib << 20)..(options.memblock_mib << 20) },
            ..Default::default()
        }))
        .map_err(|e| Error::Device(e.to_string()))?;
        super::trace("open: device", start);
        let mut max_buffer_bytes = limits.max_buffer_size.min(limits.max_storage_buffer_binding_size);
        if let Some(cap) = options.max_buffer_bytes {
            max_buffer_bytes = max_buffer_bytes.min(cap);
        }
        let pipelines = PipelineCache::new(&device, &infos[index], options.cache_dir.as_deref());
        super::trace("open: pipeline cache", start);
        let mut gpu = Gpu {
            pipelines,
            device,
            queue,
            cache: Cache::default(),
            recycler: Arc::new(Recycler::new(0)),
            summary: AdapterSummary::new(index, &infos[index]),
            limits,
            features,
            max_buffer_bytes,
            device_memory_bytes: device_memory_bytes(adapter),
            // The budget given for this adapter, where one was.
            options: GpuOptions { device_memory_bytes: options.budget_of(index), device_memory_per_adapter: Vec::new(), ..options.clone() },
            open_ms: crate::host::ms_since(start),
            linear_sampler: Default::default(),
        };
        // By default a quarter of the memory budget where it is known (streamed slabs reuse a
        // few GiB of buffers per GPU), else 4 GiB.
        let known = gpu.memory_budget_bytes() < u64::MAX;
        let cap = gpu.options.recycle_bytes.unwrap_or(if known { (gpu.memory_budget_bytes() / 4).max(4 << 30) } else { 4 << 30 });
        gpu.recycler = Arc::new(Recycler::new(cap));
        Ok(gpu)
    }

    pub fn summary(&self) -> &AdapterSummary {
        &self.summary
    }
    pub fn options(&self) -> &GpuOptions {
        &self.options
    }
    /// Milliseconds `open` took: instance, adapter and device.
    pub fn open_ms(&self) -> f64 {
        self.open_ms
    }
    /// Pipelines compiled so far and the time they took.
    pub fn pipeline_stats(&self) -> PipelineStats {
        self.pipelines.stats()
    }
    /// Writes the compiled pipelines to the disk cache now (also done when the `Gpu` is dropped);
    /// Ok(false) when there is no disk cache or nothing new.
    pub fn save_pipeline_cache(&self) -> Result<bool> {
        self.pipelines.save()
    }
    pub fn limits(&self) -> &wgpu::Limits {
        &self.limits
    }
    pub fn features(&self) -> wgpu::Features {
        self.features
    }
    pub fn has_timestamps(&self) -> bool {
        self.features.contains(wgpu::Features::TIMESTAMP_QUERY)
    }
    /// Whether kernels can compute in f64 (`SHADER_F64`: NVIDIA and AMD through Vulkan, DX12,
    /// lavapipe; not Metal): float64 data is then computed in float64, else in f32.
    pub fn has_f64(&self) -> bool {
        self.features.contains(wgpu::Features::SHADER_F64)
    }
    /// Whether data of type `T` is computed in f32 here: f64 on a device without f64 (the front
    /// doors then narrow it, compute, and widen the result: `gpu::narrowed`, `gpu::widened`).
    pub fn narrows<T: super::Real>(&self) -> bool {
        T::DTYPE == super::Dtype::F64 && !self.has_f64()
    }
    /// f64 arrays only where kernels can compute in f64 ([`Gpu::has_f64`]).
    pub fn check_dtype(&self, dtype: super::Dtype) -> Result<()> {
        if dtype.is_f64() && !self.has_f64() {
            return Err(Error::Dtype(format!("{} cannot compute in f64 (no SHADER_F64): f64 data is computed in f32 by the front doors", self.summary.name)));
        }
        Ok(())
    }
    /// Whether `R32Float` textures can be sampled with linear filtering (the texture sampler).
    pub fn filters_f32(&self) -> bool {
        self.features.contains(wgpu::Features::FLOAT32_FILTERABLE)
    }
    /// The sampler kernels' `Sampler` bindings get: linear filtering, clamped to the edge,
    /// normalised coordinates.
    pub(crate) fn linear_sampler(&self) -> &wgpu::Sampler {
        self.linear_sampler.get_or_init(|| {
            self.device.create_sampler(&wgpu::SamplerDescriptor {
                label: Some("lucent.linear"),
                mag_filter: wgpu::FilterMode::Linear,
                min_filter: wgpu::FilterMode::Linear,
                ..Default::default()
            })
        })
    }
    /// The largest single buffer lucent will create (device limit, lowered by `LUCENT_MAX_BUFFER_BYTES`).
    pub fn max_buffer_bytes(&self) -> u64 {
        self.max_buffer_bytes
    }
    /// The adapter's largest device-local memory heap, where the backend tells (Vulkan).
    pub fn device_memory_bytes(&self) -> Option<u64> {
        self.device_memory_bytes
    }

    /// Device memory the in-core paths may plan to use: [`GpuOptions::device_memory_bytes`], else
    /// for a CPU adapter the host budget, else 90% of the largest device-local heap where the
    /// backend tells (the rest for the driver and other programs), else no limit (an allocation
    /// the driver refuses then sends the work to tiles or the split).
    pub fn memory_budget_bytes(&self) -> u64 {
        match (self.options.device_memory_bytes, self.device_memory_bytes) {
            (Some(b), _) => b,
            _ if self.summary.device_type == "Cpu" => crate::host::host_budget_bytes().unwrap_or(16 << 30),
            (None, Some(heap)) => heap / 10 * 9,
            (None, None) => u64::MAX,
        }
    }

    /// Workgroup memory available to one workgroup, in bytes.
    pub fn workgroup_memory_bytes(&self) -> u32 {
        self.limits.max_compute_workgroup_storage_size
    }

    /// Fails with `TooLarge` when `bytes` exceed the usable buffer size.
    pub fn check_buffer_size(&self, what: &str, bytes: u64) -> Result<()> {
        if bytes > self.max_buffer_bytes {
            return Err(Error::TooLarge { what: what.to_string(), bytes, limit: self.max_buffer_bytes });
        }
        Ok(())
    }

    /// Device memory held by lucent's storage buffers, in bytes: those in use (arrays, plans'
    /// tables, a run's temporaries) and those kept for reuse (at most the recycler's cap). A
    /// program that drops what it no longer needs sees both stay flat.
    pub fn held_bytes(&self) -> (u64, u64) {
        self.recycler.held_bytes()
    }

    /// A storage buffer of at least `bytes` (rounded up to 16 so vec4 kernels may touch the tail),
    /// returned to the recycler when its last user drops it.
    pub(crate) fn create_buffer(&self, label: &str, bytes: u64) -> Result<Pooled> {
        self.check_buffer_size(label, bytes)?;
        // Whole vec4<f64>s (the widest element kernels read), so arrayLength covers every element.
        let size = bytes.max(32).div_ceil(32) * 32;
        Ok(Pooled::new(self.buffer(label, size, STORAGE_USAGE)?, self.recycler.clone()))
    }

    /// A buffer of `size` bytes and `usage`: a recycled one (stale contents) or a new one; when
    /// the device is out of memory, the kept buffers are released and it is tried once more.
    pub(crate) fn buffer(&self, label: &str, size: u64, usage: wgpu::BufferUsages) -> Result<wgpu::Buffer> {
        if let Some(b) = self.recycler.take(size, usage) {
            return Ok(b);
        }
        let create = || self.scoped(|| self.device.create_buffer(&wgpu::BufferDescriptor { label: Some(label), size, usage, mapped_at_creation: false }));
        match create() {
            Err(Error::OutOfMemory(_)) if self.recycler.clear() => create(),
            other => other,
        }
    }

    /// Runs `f` inside validation and out-of-memory error scopes and returns what they caught.
    pub(crate) fn scoped<T>(&self, f: impl FnOnce() -> T) -> Result<T> {
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let value = f();
        let v = pollster::block_on(validation.pop());
        let o = pollster::block_on(oom.pop());
        match o.or(v) {
            Some(e) => Err(Error::from_wgpu(e)),
            None => Ok(value),
        }
    }

    /// Completes when all work submitted so far is done, without blocking the caller: a helper
    /// thread drives the device until the queue reports it.
    pub(crate) async fn finished(&self) -> Result<()> {
        let (tx, rx) = futures::channel::oneshot::channel();
        self.queue.on_submitted_work_done(move || {
            let _ = tx.send(());
        });
        let device = self.device.clone();
        std::thread::spawn(move || device.poll(wgpu::PollType::wait_indefinitely()).map(|_| ()).map_err(|e| Error::DeviceLost(e.to_string())));
        rx.await.map_err(|_| Error::DeviceLost("the device was lost before the work finished".into()))
    }

    /// Blocks until all submitted work is done.
    pub(crate) fn wait(&self) -> Result<()> {
        self.wait_for(None)
    }

    /// Blocks until submission `index` is done (None: all submitted work).
    pub(crate) fn wait_for(&self, index: Option<wgpu::SubmissionIndex>) -> Result<()> {
        self.device.poll(wgpu::PollType::Wait { submission_index: index, timeout: None }).map(|_| ()).map_err(|e| Error::DeviceLost(e.to_string()))
    }
}

/// The largest device-local heap of a Vulkan adapter.
#[cfg(any(windows, target_os = "linux", target_os = "android"))]
fn device_memory_bytes(adapter: &wgpu::Adapter) -> Option<u64> {
    // SAFETY: reads the physical device's memory properties through wgpu's own Vulkan handles,
    // which outlive this call; nothing is created, changed or kept.
    let hal = unsafe { adapter.as_hal::<wgpu::hal::api::Vulkan>() }?;
    let props = unsafe { hal.shared_instance().raw_instance().get_physical_device_memory_properties(hal.raw_physical_device()) };
    const DEVICE_LOCAL: u32 = 0x1; // VK_MEMORY_HEAP_DEVICE_LOCAL_BIT
    let heaps = &props.memory_heaps[..(props.memory_heap_count as usize).min(props.memory_heaps.len())];
    heaps.iter().filter(|h| h.flags.as_raw() & DEVICE_LOCAL != 0).map(|h| h.size).max()
}

#[cfg(not(any(windows, target_os = "linux", target_os = "android")))]
fn device_memory_bytes(_adapter: &wgpu::Adapter) -> Option<u64> {
    None
}

impl Drop for Gpu {
    fn drop(&mut self) {
        // A cache that cannot be written only costs the next process its compile time.
        let _ = self.pipelines.save();
    }
}
