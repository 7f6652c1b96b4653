//! Compiled pipelines, cached per (kernel, override constants), with bind group layouts built from
//! the bindings build.rs reflected out of each kernel; where the backend has a pipeline cache
//! (Vulkan), the driver's compiled code is also kept on disk for the next process.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::registry::{BindingKind, KernelInfo};
use super::Gpu;
use crate::error::Result;

pub(crate) struct Pipeline {
    pub pipeline: wgpu::ComputePipeline,
    pub layout: wgpu::BindGroupLayout,
}

type Key = (&'static str, Vec<(&'static str, u64)>);

#[derive(Default)]
pub(crate) struct PipelineCache {
    pipelines: Mutex<HashMap<Key, Arc<Pipeline>>>,
    modules: Mutex<HashMap<&'static str, Arc<wgpu::ShaderModule>>>,
    disk: Option<DiskCache>,
    compiled: AtomicU64,
    compile_ns: AtomicU64,
}

/// The driver's pipeline cache, loaded from and saved to one file per adapter model and driver.
struct DiskCache {
    cache: wgpu::PipelineCache,
    path: PathBuf,
    /// Pipelines were compiled since it was loaded or saved.
    dirty: AtomicBool,
}

/// Pipelines compiled by one `Gpu` so far and the time spent on them (shader translation and the
/// driver's compiler; what the disk cache saves on the next run).
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct PipelineStats {
    pub compiled: u64,
    pub compile_ms: f64,
    /// Whether compiled pipelines are kept on disk (the backend has a pipeline cache and a
    /// cache directory is set).
    pub disk_cache: bool,
}

impl PipelineCache {
    /// With a disk cache in `dir` when the device has the feature and wgpu names a key for the
    /// adapter. A missing, stale or foreign file only means compiling afresh.
    pub(crate) fn new(device: &wgpu::Device, info: &wgpu::AdapterInfo, dir: Option<&Path>) -> PipelineCache {
        let disk = (|| {
            if !device.features().contains(wgpu::Features::PIPELINE_CACHE) {
                return None;
            }
            let path = dir?.join(format!("{}.bin", wgpu::util::pipeline_cache_key(info)?));
            let data = std::fs::read(&path).ok();
            // SAFETY: the data is what `get_data` returned for an adapter of this key (the file
            // is named by it and written atomically); wgpu and the driver check its header
            // (vendor, device, driver version) and fall back to an empty cache otherwise.
            let cache = unsafe {
                device.create_pipeline_cache(&wgpu::PipelineCacheDescriptor { label: Some("lucent.pipelines"), data: data.as_deref(), fallback: true })
            };
            Some(DiskCache { cache, path, dirty: AtomicBool::new(false) })
        })();
        PipelineCache { disk, ..Default::default() }
    }

    pub(crate) fn stats(&self) -> PipelineStats {
        PipelineStats {
            compiled: self.compiled.load(Ordering::Relaxed),
            compile_ms: self.compile_ns.load(Ordering::Relaxed) as f64 / 1e6,
            disk_cache: self.disk.is_some(),
        }
    }

    /// Writes the disk cache if pipelines were compiled since it was read; Ok(false) when there
    /// was nothing to write.
    pub(crate) fn save(&self) -> Result<bool> {
        let Some(disk) = &self.disk else { return Ok(false) };
        if !disk.dirty.swap(false, Ordering::Relaxed) {
            return Ok(false);
        }
        let Some(data) = disk.cache.get_data() else { return Ok(false) };
        if let Some(dir) = disk.path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| crate::host::file_error(dir, format!("cannot create the cache directory: {e}")))?;
        }
        crate::host::write_atomic(&disk.path, |f| f.write_all(&data).map_err(|e| crate::host::file_error(&disk.path, e.to_string())))?;
        Ok(true)
    }
}

fn view_dimension(dims: u8) -> wgpu::TextureViewDimension {
    if dims == 2 {
        wgpu::TextureViewDimension::D2
    } else {
        wgpu::TextureViewDimension::D3
    }
}

fn binding_type(kind: BindingKind) -> wgpu::BindingType {
    let buffer = |ty| wgpu::BindingType::Buffer { ty, has_dynamic_offset: false, min_binding_size: None };
    match kind {
        BindingKind::Uniform => buffer(wgpu::BufferBindingType::Uniform),
        BindingKind::StorageRead => buffer(wgpu::BufferBindingType::Storage { read_only: true }),
        BindingKind::StorageReadWrite => buffer(wgpu::BufferBindingType::Storage { read_only: false }),
        BindingKind::Texture { dims } => wgpu::BindingType::Texture {
            sample_type: wgpu::TextureSampleType::Float { filterable: true },
            view_dimension: view_dimension(dims),
            multisampled: false,
        },
        BindingKind::StorageTexture { dims } => wgpu::BindingType::StorageTexture {
            access: wgpu::StorageTextureAccess::WriteOnly,
            format: wgpu::TextureFormat::R32Float,
            view_dimension: view_dimension(dims),
        },
        BindingKind::Sampler => wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
    }
}

impl Gpu {
    /// The pipeline of `kernel` specialised by `constants` (WGSL `override` values), built once.
    pub(crate) fn pipeline(&self, kernel: &'static KernelInfo, constants: &[(&'static str, f64)]) -> Result<Arc<Pipeline>> {
        let key: Key = (kernel.name, constants.iter().map(|&(n, v)| (n, v.to_bits())).collect());
        if let Some(p) = self.pipelines.pipelines.lock().unwrap().get(&key) {
            return Ok(p.clone());
        }
        let start = Instant::now();
        let module = self.module(kernel)?;
        let entries: Vec<_> = kernel
            .bindings
            .iter()
            .enumerate()
            .map(|(i, b)| wgpu::BindGroupLayoutEntry { binding: i as u32, visibility: wgpu::ShaderStages::COMPUTE, ty: binding_type(b.kind), count: None })
            .collect();
        let label = format!("lucent.{}", kernel.name);
        let pipeline = self.scoped(|| {
            let layout = self.device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: Some(&label), entries: &entries });
            let pipeline_layout = self.device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(&label),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            });
            let pipeline = self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(&label),
                layout: Some(&pipeline_layout),
                module: &module,
                entry_point: Some(kernel.entry),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants,
                    // Kernels initialise the workgroup memory they read.
                    zero_initialize_workgroup_memory: false,
                },
                cache: self.pipelines.disk.as_ref().map(|d| &d.cache),
            });
            Pipeline { pipeline, layout }
        })?;
        let cache = &self.pipelines;
        cache.compiled.fetch_add(1, Ordering::Relaxed);
        cache.compile_ns.fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
        if let Some(d) = &cache.disk {
            d.dirty.store(true, Ordering::Relaxed);
        }
        let pipeline = Arc::new(pipeline);
        self.pipelines.pipelines.lock().unwrap().insert(key, pipeline.clone());
        Ok(pipeline)
    }

    fn module(&self, kernel: &'static KernelInfo) -> Result<Arc<wgpu::ShaderModule>> {
        if let Some(m) = self.pipelines.modules.lock().unwrap().get(kernel.name) {
            return Ok(m.clone());
        }
        if let Some(dir) = &self.options().dump_shaders {
            // For inspection (examples/pipeline_stats.rs reads these); a failure only warns.
            let path = dir.join(format!("{}.wgsl", kernel.name));
            if let Err(e) = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, kernel.source)) {
                eprintln!("warning: LUCENT_DUMP_SHADERS: cannot write {}: {e}", path.display());
            }
        }
        let module = Arc::new(self.scoped(|| {
            self.device.create_shader_module(wgpu::ShaderModuleDescriptor { label: Some(kernel.path), source: wgpu::ShaderSource::Wgsl(kernel.source.into()) })
        })?);
        self.pipelines.modules.lock().unwrap().insert(kernel.name, module.clone());
        Ok(module)
    }
}
