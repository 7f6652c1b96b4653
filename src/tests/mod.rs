//! Unit tests of the crate-private engine (kernels, the graph, each op's placement paths) against
//! their CPU references, on fresh random inputs of awkward sizes with temporaries poisoned. They
//! name items as `lucent::...` (the crate calls itself `lucent` in tests, so the harness is shared
//! with tests/it, the public API and CLI tests).

#![allow(clippy::type_complexity)] // the tables of cases

#[path = "../../tests/it/common/mod.rs"]
#[allow(dead_code)]
mod common;

mod bm;
mod bregman;
mod chunks;
mod convolve;
mod convolve_chunked;
mod convolve_slabs;
mod convolve_split;
mod deconvolve;
mod deconvolve_chunked;
mod deconvolve_slabs;
mod deconvolve_tiles;
mod denoise;
mod fft;
mod fft_chunked;
mod fft_loops;
mod filter;
mod filter_bank;
mod filter_large;
mod filter_slabs;
mod filter_tiled;
mod flow_kernels;
mod graph;
mod gridrec;
mod interpolate;
mod layout;
mod logpolar;
mod nlm;
mod placement;
mod pointwise;
mod prep;
mod prep_device;
mod psf;
mod reduce;
mod registration;
mod registration_sums;
mod scan;
mod stripes;
mod template;
mod timings;
mod tomography;
mod tomography_vector;
mod transfer;
mod tv;
mod wiener;
