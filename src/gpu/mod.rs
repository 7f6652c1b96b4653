//! The GPU context, device arrays, the kernel registry (what build.rs reflected out of every
//! WGSL kernel) and the pipeline cache.

mod array;
mod cache;
mod context;
mod options;
mod pipelines;
mod recycle;
pub mod registry;
mod tuning;

pub use array::{Dtype, GpuArray, Shape};
pub use cache::content_hash;
pub(crate) use array::{row_major_bytes, with_dim};
pub use context::{AdapterSummary, Gpu};
pub use options::GpuOptions;
pub use pipelines::PipelineStats;
pub(crate) use context::STORAGE_USAGE;
pub(crate) use context::map_and_read;
pub(crate) use pipelines::Pipeline;
pub(crate) use recycle::Recycler;
pub use registry::{BindingInfo, BindingKind, KernelInfo};
pub use tuning::Tuning;
