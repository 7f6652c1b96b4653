//! Operations built from one or more kernels: each folder has `mod.rs` (public functions,
//! options, validation) and, where the op has its own reference, `cpu.rs` (same semantics).

pub mod convolve;
pub mod deconvolve;
pub mod interpolate;
pub mod layout;
pub mod reduce;
pub mod scan;

pub use crate::check::check_finite;
