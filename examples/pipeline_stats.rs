//! What the Vulkan driver's compiler made of WGSL compute kernels: the pipeline executable
//! statistics (VK_KHR_pipeline_executable_properties), e.g. registers, shared memory and spills on
//! NVIDIA, instruction counts on lavapipe. For occupancy questions no timing answers.
//!
//! ```sh
//! LUCENT_DUMP_SHADERS=/tmp/k lucent bench --filter fft_c2c     # writes every kernel it builds
//! cargo run --release --example pipeline_stats -- /tmp/k/fft_lines_*.wgsl
//! ```
//!
//! The SPIR-V is naga's, with the index clamps wgpu adds on Vulkan (workgroup arrays clamped,
//! storage buffers left to the driver's robust access) and no zeroing of workgroup memory, as
//! lucent's pipelines. Override constants take their defaults (a kernel without one is an error).
//! Where the driver has no statistics (lavapipe) the pipelines are still built.
//! The device: the first discrete GPU, else the first one (`LUCENT_ADAPTER=N` picks index N).

use std::error::Error;
use std::ffi::CStr;

use ash::vk;

type Result<T> = std::result::Result<T, Box<dyn Error>>;

fn main() -> Result<()> {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        return Err("usage: pipeline_stats KERNEL.wgsl...".into());
    }
    let vk = Vulkan::new()?;
    println!("device: {}", vk.name);
    for file in &files {
        match std::fs::read_to_string(file).map_err(Into::into).and_then(|src| vk.statistics(&src)) {
            Ok(lines) => {
                println!("{file}");
                for l in lines {
                    println!("  {l}");
                }
            }
            Err(e) => println!("{file}: error: {e}"),
        }
    }
    Ok(())
}

/// A binding of group 0: its number and descriptor type.
type Binding = (u32, vk::DescriptorType);

/// WGSL to SPIR-V words, and the storage and uniform bindings of group 0 in binding order.
fn compile(source: &str) -> Result<(Vec<u32>, Vec<Binding>)> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| e.emit_to_string(source))?;
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all()).validate(&module)?;
    let (module, info) = naga::back::pipeline_constants::process_overrides(&module, &info, None, &Default::default())?;
    let options = naga::back::spv::Options {
        bounds_check_policies: naga::proc::BoundsCheckPolicies {
            index: naga::proc::BoundsCheckPolicy::Restrict,
            buffer: naga::proc::BoundsCheckPolicy::Unchecked,
            image_load: naga::proc::BoundsCheckPolicy::Unchecked,
            binding_array: naga::proc::BoundsCheckPolicy::Unchecked,
        },
        // As lucent's pipelines: kernels initialise the workgroup memory they read.
        zero_initialize_workgroup_memory: naga::back::spv::ZeroInitializeWorkgroupMemoryMode::None,
        ..Default::default()
    };
    let words = naga::back::spv::write_vec(&module, &info, &options, None)?;
    let mut bindings: Vec<Binding> = module
        .global_variables
        .iter()
        .filter_map(|(_, var)| {
            let kind = match var.space {
                naga::AddressSpace::Storage { .. } => vk::DescriptorType::STORAGE_BUFFER,
                naga::AddressSpace::Uniform => vk::DescriptorType::UNIFORM_BUFFER,
                _ => return None,
            };
            var.binding.as_ref().map(|b| (b.binding, kind))
        })
        .collect();
    bindings.sort_by_key(|b| b.0);
    Ok((words, bindings))
}

struct Vulkan {
    _entry: ash::Entry,
    instance: ash::Instance,
    device: ash::Device,
    /// None where the driver has no VK_KHR_pipeline_executable_properties (pipelines are still
    /// built, which checks the SPIR-V and the layout).
    executables: Option<ash::khr::pipeline_executable_properties::Device>,
    name: String,
}

impl Vulkan {
    fn new() -> Result<Vulkan> {
        let entry = unsafe { ash::Entry::load()? };
        let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_2);
        let instance = unsafe { entry.create_instance(&vk::InstanceCreateInfo::default().application_info(&app), None)? };
        let devices = unsafe { instance.enumerate_physical_devices()? };
        let properties: Vec<_> = devices.iter().map(|&d| unsafe { instance.get_physical_device_properties(d) }).collect();
        let index = match std::env::var("LUCENT_ADAPTER").ok().and_then(|v| v.parse::<usize>().ok()) {
            Some(i) => i,
            None => properties.iter().position(|p| p.device_type == vk::PhysicalDeviceType::DISCRETE_GPU).unwrap_or(0),
        };
        let (&physical, props) = devices.get(index).zip(properties.get(index)).ok_or("no Vulkan device")?;
        let name = props.device_name_as_c_str()?.to_string_lossy().into_owned();
        let family = unsafe { instance.get_physical_device_queue_family_properties(physical) }
            .iter()
            .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
            .ok_or("no compute queue")? as u32;
        let queues = [vk::DeviceQueueCreateInfo::default().queue_family_index(family).queue_priorities(&[1.0])];
        let extension = ash::khr::pipeline_executable_properties::NAME;
        let has_statistics = unsafe { instance.enumerate_device_extension_properties(physical)? }.iter().any(|e| e.extension_name_as_c_str() == Ok(extension));
        let extensions = [extension.as_ptr()];
        let mut feature = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default().pipeline_executable_info(true);
        let mut create = vk::DeviceCreateInfo::default().queue_create_infos(&queues);
        if has_statistics {
            create = create.enabled_extension_names(&extensions).push_next(&mut feature);
        }
        let device = unsafe { instance.create_device(physical, &create, None)? };
        let executables = has_statistics.then(|| ash::khr::pipeline_executable_properties::Device::new(&instance, &device));
        Ok(Vulkan { _entry: entry, instance, device, executables, name })
    }

    /// "executable: statistic = value" lines for the compute pipeline of `source`.
    fn statistics(&self, source: &str) -> Result<Vec<String>> {
        let (words, bindings) = compile(source)?;
        let d = &self.device;
        unsafe {
            let module = d.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None)?;
            let layout_bindings: Vec<_> = bindings
                .iter()
                .map(|&(b, kind)| {
                    vk::DescriptorSetLayoutBinding::default().binding(b).descriptor_type(kind).descriptor_count(1).stage_flags(vk::ShaderStageFlags::COMPUTE)
                })
                .collect();
            let set_layout = d.create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(&layout_bindings), None)?;
            let set_layouts = [set_layout];
            let layout = d.create_pipeline_layout(&vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts), None)?;
            let stage = vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::COMPUTE).module(module).name(c"main");
            let flags = if self.executables.is_some() { vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR } else { vk::PipelineCreateFlags::empty() };
            let create = vk::ComputePipelineCreateInfo::default().stage(stage).layout(layout).flags(flags);
            let pipeline = d.create_compute_pipelines(vk::PipelineCache::null(), &[create], None).map_err(|(_, e)| e)?[0];
            let lines = self.read(pipeline);
            d.destroy_pipeline(pipeline, None);
            d.destroy_pipeline_layout(layout, None);
            d.destroy_descriptor_set_layout(set_layout, None);
            d.destroy_shader_module(module, None);
            lines
        }
    }

    unsafe fn read(&self, pipeline: vk::Pipeline) -> Result<Vec<String>> {
        let Some(ext) = &self.executables else {
            return Ok(vec!["built; this driver reports no pipeline statistics".into()]);
        };
        let mut lines = Vec::new();
        let executables = ext.get_pipeline_executable_properties(&vk::PipelineInfoKHR::default().pipeline(pipeline))?;
        for (i, exe) in executables.iter().enumerate() {
            let exe_name = text(&exe.name);
            let info = vk::PipelineExecutableInfoKHR::default().pipeline(pipeline).executable_index(i as u32);
            for stat in ext.get_pipeline_executable_statistics(&info)? {
                let value = match stat.format {
                    vk::PipelineExecutableStatisticFormatKHR::BOOL32 => format!("{}", stat.value.b32 != 0),
                    vk::PipelineExecutableStatisticFormatKHR::INT64 => format!("{}", stat.value.i64),
                    vk::PipelineExecutableStatisticFormatKHR::UINT64 => format!("{}", stat.value.u64),
                    _ => format!("{}", stat.value.f64),
                };
                lines.push(format!("{exe_name}: {} = {value}", text(&stat.name)));
            }
        }
        Ok(lines)
    }
}

impl Drop for Vulkan {
    fn drop(&mut self) {
        unsafe {
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}

fn text(chars: &[std::ffi::c_char]) -> String {
    let bytes: Vec<u8> = chars.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    CStr::from_bytes_until_nul(&[bytes, vec![0]].concat()).map(|c| c.to_string_lossy().into_owned()).unwrap_or_default()
}
