//! # lucent
//!
//! A portable GPU compute engine on wgpu (Vulkan, Metal, DX12; lavapipe in CI) whose every kernel
//! is hand-written WGSL, for scientific imaging.
//!
//! Work is recorded, then run: a [`Recording`] collects uploads, kernel dispatches over buffer
//! proxies and downloads; running it plans buffer reuse, encodes everything into one compute pass
//! and submits once.
//!
//! ```no_run
//! use lucent::{Gpu, Recording, kernels::binary::{self, BinaryOp}};
//! use ndarray::ArrayD;
//!
//! let gpu = Gpu::new()?;
//! let a = ArrayD::<f32>::ones(vec![3, 5]);
//! let mut rec = Recording::new(&gpu);
//! let x = rec.upload_f32(&a.view())?;
//! let y = binary::record(&mut rec, BinaryOp::Add, x, x)?;
//! let out = rec.download(y);
//! let results = rec.run()?;
//! assert_eq!(results.f32(out)?[[2, 4]], 2.0);
//! # Ok::<(), lucent::Error>(())
//! ```

pub mod check;
pub mod error;
pub mod gpu;
pub mod graph;
pub mod io;
pub mod fft;
pub mod kernels;
pub mod ndimage;
pub mod ops;
pub mod restoration;
pub mod signal;

#[cfg(test)]
mod layers;

pub use error::{Error, Result};
pub use gpu::{Dtype, Gpu, GpuArray, Shape};
pub use graph::{Buf, Compiled, Download, Output, Recording, Results, RunReport};
