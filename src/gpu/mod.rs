//! The GPU context, device arrays and the pipeline cache.

mod array;
mod context;
mod pipelines;

pub use array::{Dtype, GpuArray, Shape};
pub use context::{AdapterSummary, Gpu};
pub(crate) use context::map_and_read;
pub(crate) use pipelines::Pipeline;
