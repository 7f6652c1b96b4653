//! One typed wrapper per WGSL kernel (same stem as its file in `shaders/`): the parameter struct
//! mirrored from WGSL, a `record` that adds the dispatch to a `Recording`, and the CPU twin with
//! the same semantics (the reference for tests and the CPU fallback).

pub use crate::gpu::registry::*;

pub mod affine_sample;
pub mod axpy_ratio;
pub mod backproject;
pub mod backproject_rays;
pub mod backproject_voxels;
pub mod binary;
pub mod bm_filter;
pub mod bm_match;
pub mod bm_normalize;
pub mod boundary;
pub mod box_extreme;
pub mod broadcast;
pub mod complex_to_real;
pub mod complex_unary;
pub mod copy_range;
pub mod copy_vec4;
pub mod correlate_axis;
pub mod correlate_tiled;
pub mod correlate_window;
pub mod count_equal;
pub mod count_nonfinite;
pub mod denoise_accumulate;
pub mod denoise_control;
pub mod denoise_direct;
pub mod denoise_normalize;
pub mod denoise_structure;
pub mod edt_axis;
pub mod em_ratio;
pub mod em_update;
pub mod fft_axis_map;
pub mod fill;
pub mod footprint_extreme;
pub mod footprint_rank;
pub mod fourier_ellipsoid;
pub mod gather;
pub mod gibbs_wiener;
pub mod gridrec_gather;
pub mod ilk_solve;
pub mod ilk_terms;
pub mod label;
pub mod label_number;
pub mod logpolar;
pub mod logpolar_extend;
pub mod logpolar_from_image;
pub mod logpolar_from_sinogram;
pub mod logpolar_to_image;
pub mod logpolar_to_sinogram;
pub mod map_coordinates;
pub mod masked_ncc;
pub mod masked_ncc_finish;
pub mod multiply_lines;
pub mod nlm_accumulate;
pub mod nlm_box;
pub mod nlm_rows;
pub mod nlm_slow;
pub mod pack_half;
pub mod peak_neighbours;
pub mod phase_ramp;
pub mod prep_normalize;
pub mod project;
pub mod project_rays;
pub mod psf_pixels;
pub mod psf_radial;
pub mod real_to_complex;
pub mod reduce_columns;
pub mod reduce_rows;
pub mod registration_histogram;
pub mod registration_sums;
pub mod rl_normalize;
pub mod rl_predict;
pub mod rl_ratio;
pub mod rl_tv;
pub mod rl_update;
pub mod scan_columns;
pub mod scan_rows;
pub mod scan_rows_vec4;
pub mod select;
pub mod sirt_update;
pub mod sort_columns;
pub mod spline_prefilter;
pub mod spline_prefilter_lines;
pub mod spline_texture;
pub mod take;
pub mod template_ncc;
pub mod tv_bregman;
pub mod tv_bregman_stop;
pub mod tv_chambolle;
pub mod tv_stop;
pub mod tvl1_step;
pub mod unary;
pub mod unpack_mask;
pub mod upsampled_dft;
pub mod wavelet_axis;
pub mod wiener_filter;
pub mod window_sum;

/// Count of 16-byte vectors covering `len` elements of `bytes_per_elem` bytes (buffers are
/// padded to 16 bytes, so the tail vector is always in bounds).
pub(crate) fn vec4s(len: usize, bytes_per_elem: u64) -> u32 {
    (len as u64 * bytes_per_elem).div_ceil(16) as u32
}
