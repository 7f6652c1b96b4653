//! What build.rs reflected out of every kernel in `shaders/`.

/// How a kernel binds one buffer (group 0, binding = position in `KernelInfo::bindings`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindingKind {
    StorageRead,
    StorageReadWrite,
    /// The kernel's parameter struct; the executor packs these into one uniform buffer.
    Uniform,
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
    /// Buffers the caller supplies: every binding but the uniform parameters.
    pub fn buffer_count(&self) -> usize {
        self.bindings.iter().filter(|b| b.kind != BindingKind::Uniform).count()
    }
}

include!(concat!(env!("OUT_DIR"), "/kernels.rs"));
