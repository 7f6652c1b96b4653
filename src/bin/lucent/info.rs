//! `lucent info`: adapters, the chosen one, its key limits and features.

use std::time::Instant;

use lucent::{Error, Gpu};
use serde_json::json;

use crate::report::{self, Report};
use crate::Global;

pub fn run(global: &Global) -> Result<(), Error> {
    let start = Instant::now();
    let adapters = Gpu::list_adapters();
    let gpu = if adapters.is_empty() { None } else { global.gpu()? };
    let chosen = gpu.as_ref().map(|g| {
        let l = g.limits();
        json!({
            "adapter": g.summary(),
            "limits": {
                "max_buffer_size": l.max_buffer_size,
                "max_storage_buffer_binding_size": l.max_storage_buffer_binding_size,
                "usable_buffer_bytes": g.max_buffer_bytes(),
                "device_memory_bytes": g.device_memory_bytes(),
                "in_core_budget_bytes": g.memory_budget_bytes(),
                "max_compute_workgroup_storage_size": l.max_compute_workgroup_storage_size,
                "max_compute_invocations_per_workgroup": l.max_compute_invocations_per_workgroup,
                "max_compute_workgroups_per_dimension": l.max_compute_workgroups_per_dimension,
                "max_storage_buffers_per_shader_stage": l.max_storage_buffers_per_shader_stage,
            },
            "features": {
                "timestamp_query": g.has_timestamps(),
                "subgroup": g.features().contains(wgpu::Features::SUBGROUP),
                "float32_filterable": g.filters_f32(),
                "shader_f64": g.has_f64(),
            },
        })
    });
    if global.json {
        Report {
            ms: report::Stages::default().total(start),
            details: json!({ "adapters": adapters, "chosen": chosen }),
            ..Report::new("info", report::device(&gpu))
        }
        .print();
        return Ok(());
    }
    if adapters.is_empty() {
        println!("no GPU adapter found (install a Vulkan driver, e.g. mesa-vulkan-drivers for lavapipe); commands run on the CPU reference");
        return Ok(());
    }
    println!("adapters:");
    for a in &adapters {
        println!("  [{}] {} ({}, {}, driver {} {})", a.index, a.name, a.backend, a.device_type, a.driver, a.driver_info);
    }
    match (&gpu, &chosen) {
        (Some(g), Some(c)) => {
            println!("chosen: [{}] {}", g.summary().index, g.summary().name);
            for (k, v) in c["limits"].as_object().unwrap() {
                println!("  {k:<40} {v}");
            }
            for (k, v) in c["features"].as_object().unwrap() {
                println!("  {k:<40} {v}");
            }
        }
        _ => println!("chosen: CPU reference (--device cpu)"),
    }
    Ok(())
}
