//! Compiled pipelines, cached per (kernel, override constants), with bind group layouts built from
//! the bindings build.rs reflected out of each kernel.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

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
}

impl Gpu {
    /// The pipeline of `kernel` specialised by `constants` (WGSL `override` values), built once.
    pub(crate) fn pipeline(&self, kernel: &'static KernelInfo, constants: &[(&'static str, f64)]) -> Result<Arc<Pipeline>> {
        let key: Key = (kernel.name, constants.iter().map(|&(n, v)| (n, v.to_bits())).collect());
        if let Some(p) = self.pipelines.pipelines.lock().unwrap().get(&key) {
            return Ok(p.clone());
        }
        let module = self.module(kernel)?;
        let entries: Vec<_> = kernel
            .bindings
            .iter()
            .enumerate()
            .map(|(i, b)| wgpu::BindGroupLayoutEntry {
                binding: i as u32,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: match b.kind {
                        BindingKind::Uniform => wgpu::BufferBindingType::Uniform,
                        BindingKind::StorageRead => wgpu::BufferBindingType::Storage { read_only: true },
                        BindingKind::StorageReadWrite => wgpu::BufferBindingType::Storage { read_only: false },
                    },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            })
            .collect();
        let label = format!("lucent.{}", kernel.name);
        let pipeline = self.scoped(|| {
            let layout = self.device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some(&label),
                entries: &entries,
            });
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
                cache: None,
            });
            Pipeline { pipeline, layout }
        })?;
        let pipeline = Arc::new(pipeline);
        self.pipelines.pipelines.lock().unwrap().insert(key, pipeline.clone());
        Ok(pipeline)
    }

    fn module(&self, kernel: &'static KernelInfo) -> Result<Arc<wgpu::ShaderModule>> {
        if let Some(m) = self.pipelines.modules.lock().unwrap().get(kernel.name) {
            return Ok(m.clone());
        }
        if let Some(dir) = std::env::var_os("LUCENT_DUMP_SHADERS") {
            // For inspection (examples/pipeline_stats.rs reads these); a failure only warns.
            let path = std::path::Path::new(&dir).join(format!("{}.wgsl", kernel.name));
            if let Err(e) = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, kernel.source)) {
                eprintln!("warning: LUCENT_DUMP_SHADERS: cannot write {}: {e}", path.display());
            }
        }
        let module = Arc::new(self.scoped(|| {
            self.device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(kernel.path),
                source: wgpu::ShaderSource::Wgsl(kernel.source.into()),
            })
        })?);
        self.pipelines.modules.lock().unwrap().insert(kernel.name, module.clone());
        Ok(module)
    }
}
