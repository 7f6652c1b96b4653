//! What build.rs reflected out of every kernel in `shaders/`.

/// How a kernel binds one resource (group 0, binding = position in `KernelInfo::bindings`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindingKind {
    StorageRead,
    StorageReadWrite,
    /// The kernel's parameter struct; the executor packs these into one uniform buffer.
    Uniform,
    /// A filterable f32 texture of `dims` (2 or 3) axes, read through a sampler.
    Texture {
        dims: u8,
    },
    /// An `r32float` texture of `dims` axes the kernel writes.
    StorageTexture {
        dims: u8,
    },
    /// The executor binds the GPU's linear, clamp-to-edge sampler here.
    Sampler,
}

impl BindingKind {
    /// Whether the caller supplies this binding's value (buffer or texture); the executor
    /// supplies the parameters and the sampler.
    pub fn supplied(self) -> bool {
        !matches!(self, BindingKind::Uniform | BindingKind::Sampler)
    }
    pub fn is_texture(self) -> bool {
        matches!(self, BindingKind::Texture { .. } | BindingKind::StorageTexture { .. })
    }
}

#[derive(Debug)]
pub struct BindingInfo {
    pub kind: BindingKind,
    pub name: &'static str,
}

/// One validated WGSL kernel: source (imports resolved), entry point and reflected interface.
#[derive(Debug)]
pub struct KernelInfo {
    pub name: &'static str,
    pub path: &'static str,
    pub source: &'static str,
    pub entry: &'static str,
    pub workgroup_size: [u32; 3],
    pub bindings: &'static [BindingInfo],
    /// Size in bytes of the uniform parameter struct, as naga lays it out.
    pub params_size: Option<u32>,
    pub overrides: &'static [&'static str],
}

impl KernelInfo {
    pub fn threads_per_workgroup(&self) -> u32 {
        self.workgroup_size.iter().product()
    }
    /// Workgroups that give every one of `threads` threads its own invocation (at least one).
    pub fn groups(&self, threads: u64) -> u64 {
        threads.div_ceil(self.threads_per_workgroup() as u64).max(1)
    }
    /// Values (buffers and textures) the caller supplies: every binding but the parameters and
    /// the sampler.
    pub fn buffer_count(&self) -> usize {
        self.bindings.iter().filter(|b| b.kind.supplied()).count()
    }

    /// This kernel for data of `dtype`: itself for f32, its f64 twin (the source with
    /// `common/real`'s `real` = f64, made by build.rs) for f64.
    pub fn for_dtype(&'static self, dtype: super::Dtype) -> crate::error::Result<&'static KernelInfo> {
        match dtype {
            super::Dtype::F32 => Ok(self),
            super::Dtype::F64 => f64_twin(self.name).ok_or_else(|| crate::error::Error::Dtype(format!("kernel {} has no f64 form", self.name))),
            other => Err(crate::error::Error::Dtype(format!("kernel {} computes f32 or f64, not {other:?}", self.name))),
        }
    }

    /// This kernel with the lines between its `// unrolled: begin` and `// unrolled: end`
    /// markers replaced by `code`: the same steps written out straight, as the caller generates
    /// them. (NVIDIA's compiler leaves naga's loops rolled, so arrays indexed by a loop counter
    /// live in local memory; straight-line code keeps them in registers.) Built once per
    /// distinct code and kept for the life of the process.
    pub fn unrolled(&'static self, code: &str) -> &'static KernelInfo {
        use std::collections::HashMap;
        use std::sync::Mutex;
        static CACHE: Mutex<Option<HashMap<(&'static str, String), &'static KernelInfo>>> = Mutex::new(None);
        let mut cache = CACHE.lock().unwrap();
        let map = cache.get_or_insert_with(HashMap::new);
        let key = (self.name, code.to_string());
        if let Some(info) = map.get(&key) {
            return info;
        }
        let (begin, end) = ("// unrolled: begin", "// unrolled: end");
        let (Some(b), Some(e)) = (self.source.find(begin), self.source.find(end)) else {
            panic!("{}: no unrolled section", self.name);
        };
        let source = format!("{}{code}\n{}", &self.source[..b], &self.source[e..]);
        let name = format!("{}_{:016x}", self.name, super::content_hash(code.as_bytes()));
        let info: &'static KernelInfo = Box::leak(Box::new(KernelInfo {
            name: Box::leak(name.into_boxed_str()),
            path: self.path,
            source: Box::leak(source.into_boxed_str()),
            entry: self.entry,
            workgroup_size: self.workgroup_size,
            bindings: self.bindings,
            params_size: self.params_size,
            overrides: self.overrides,
        }));
        map.insert(key, info);
        info
    }
}

include!(concat!(env!("OUT_DIR"), "/kernels.rs"));
