//! # lucent
//!
//! A portable GPU compute engine on wgpu (Vulkan, Metal, DX12; lavapipe in CI) whose every kernel
//! is hand-written WGSL, for scientific imaging.
//!
//! One front door per family, named as numpy, scipy, scikit-image and the field know them:
//! [`fft`] (numpy.fft), [`signal`] (scipy.signal), [`ndimage`] (scipy.ndimage), [`restoration`]
//! (skimage.restoration), [`registration`] (skimage.registration and AO-OCT stripes),
//! [`tomography`] (ASTRA's 2D parallel beam: projection, FBP, MLEM, the centre search),
//! [`denoise`] (4D adaptive filtering), [`psf`] (psfmodels' widefield and confocal PSF models) and [`phantom`]
//! (synthetic objects with known truth);
//! [`io`] reads and writes files. Each function takes ndarray arrays of any dimension type,
//! returns owned arrays of the same type (or, for registration, the shift and its measures),
//! validates its input, decides itself how to run (whole, chunked, tiled or split) and reuses what
//! it made before on the same [`Gpu`] (plans, kernel spectra, pipelines). Each family's `cpu`
//! module is its f64 reference, with the same semantics:
//!
//! ```no_run
//! use lucent::restoration::{richardson_lucy, RlOptions};
//!
//! let gpu = lucent::Gpu::new()?;
//! let image = ndarray::Array3::<f32>::from_elem((32, 256, 256), 1.0);
//! let psf = ndarray::Array3::<f32>::from_elem((7, 9, 9), 1.0);
//! let restored = richardson_lucy(&gpu, &image, &psf, 30, &RlOptions::default())?;
//! # Ok::<(), lucent::Error>(())
//! ```
//!
//! Underneath, work is recorded, then run: a [`Recording`] collects uploads, kernel dispatches
//! over buffer proxies and downloads; running it plans buffer reuse, encodes everything into one
//! compute pass and submits once ([`Recording::run_async`] awaits it without blocking). An app
//! that builds its own pipelines finds the engine in [`engine`] (the device, the executor, the
//! primitive `record` forms) and each family's `record_*` forms beside its one-call functions.
//!
//! ```no_run
//! use lucent::{Gpu, Recording, engine::binary::{self, BinaryOp}};
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
//!
//! The layers and the life of one call: docs/ARCHITECTURE.md.
//!
//! ## Cargo features
//!
//! Features only add: without default features (`default-features = false`) the library is the
//! engine and every family above, on wgpu, ndarray, bytemuck, pollster, futures, num-complex,
//! rustfft, rayon, thiserror and serde (the reports derive `Serialize`); [`host`] holds what they
//! need of the host machine (memory budgets, atomic writes).
//!
//! - `io`: the module `io`, reading and writing files by extension: `.npy` (our own code),
//!   multi-page TIFF (tiff) and PNG (image).
//! - `zarr` (implies `io`): Zarr arrays and OME-Zarr images through zarrs, read whole or streamed
//!   by slabs.
//! - `cli`: `clap::ValueEnum` on the option enums (FFT norm, convolution modes, ...), and what the
//!   `lucent` binary needs besides (clap, indicatif, serde_json).
//!
//! `default = ["cli", "io", "zarr"]`: the `lucent` binary needs all three.

// Index loops that mirror the formulas they compute, and record forms that take a kernel's
// parameters one by one, read better than clippy's alternatives here.
#![allow(clippy::needless_range_loop, clippy::too_many_arguments)]

pub mod check;
pub mod denoise;
pub mod engine;
pub mod error;
pub mod fft;
pub(crate) mod gpu;
pub(crate) mod graph;
pub mod host;
#[cfg(feature = "io")]
pub mod io;
pub(crate) mod kernels;
pub mod ndimage;
pub(crate) mod ops;
pub mod phantom;
pub(crate) mod placement;
pub mod psf;
pub mod registration;
pub mod restoration;
pub mod signal;
pub mod tomography;

#[cfg(test)]
mod layers;
// The engine's unit tests write and read their cases with `io`.
#[cfg(all(test, feature = "io"))]
mod tests;
// The unit tests name the crate's items as the integration tests do (`lucent::...`).
#[cfg(test)]
extern crate self as lucent;

// The README's Rust examples compile as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;

pub use error::{Error, Result};
pub use gpu::{Dtype, Gpu, GpuArray, GpuOptions, Real, Shape};
pub use graph::{Buf, Compiled, Download, Output, Recording, Results, RunReport};
