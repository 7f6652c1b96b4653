//! Operations built from one or more kernels: each folder has `mod.rs` (public functions,
//! options, validation) and, where the op has its own reference, `cpu.rs` (same semantics).

pub mod convolve;
pub mod deconvolve;
pub mod denoise;
pub mod filter;
pub mod interpolate;
pub mod layout;
pub mod psf;
pub mod reduce;
pub mod registration;
pub mod resident;
pub mod scan;
pub mod tomography;

/// One value for every axis, or one per axis (a parameter such as sigma, size, shift or zoom).
pub(crate) fn per_axis<T: Copy>(values: &[T], ndim: usize, what: &str) -> crate::error::Result<Vec<T>> {
    match values.len() {
        1 => Ok(vec![values[0]; ndim]),
        n if n == ndim => Ok(values.to_vec()),
        n => Err(crate::error::Error::Invalid(format!("{what}: {n} values for a {ndim}-D array (give 1 or {ndim})"))),
    }
}
