//! The integration tests, one binary (one link of the crate instead of one per file): a module
//! per capability, the shared harness in `common`. Run one module with `cargo test --release
//! --test it -- <module>::`.
#![allow(clippy::type_complexity)] // the tables of cases

#[allow(dead_code)]
mod common;

mod api;
mod blind;
mod cli_batch;
mod cli_beam;
mod cli_convolve;
mod cli_convolve_split;
mod cli_deconvolve_tiles;
mod cli_denoise;
mod cli_errors;
mod cli_extremes;
mod cli_fft;
mod cli_filter_large;
mod cli_interpolate;
mod cli_json;
mod cli_registration;
mod cli_report;
mod cli_segmentation;
mod cli_stripes;
mod cli_template;
mod cli_tomography;
mod derivatives;
mod deskew;
mod fft_f64;
mod filters_f64;
mod flow;
mod fourier_filters;
mod hostile_files;
mod intensity_registration;
mod io;
mod measurements;
mod morphology;
mod recon;
mod resident;
mod similarity;
mod similarity_3d;
mod spline_orders;
mod unsupervised;
mod zarr;
