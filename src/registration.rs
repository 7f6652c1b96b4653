//! Image registration on the GPU with scikit-image's conventions: [`phase_cross_correlation`]
//! (whole-sample and, with an upsample factor, sub-sample shifts of 1-4-axis images;
//! [`phase_cross_correlation_spectra`] for images given as their spectra;
//! [`masked_phase_cross_correlation`] and [`cross_correlate_masked`] for images with masks) and
//! [`PhaseCorrelator`], which keeps a reference's spectrum on the device to register many
//! moving images against it at the cost of one forward transform each; [`match_template`]
//! (scikit-image's `skimage.feature.match_template`) and [`peaks`] of its response;
//! [`similarity`] (imreg_dft's Fourier-Mellin registration of turned, scaled and shifted images)
//! and [`similarity_3d`] (volumes turned about one axis, scaled and shifted);
//! [`register_volume`], the stripe-wise registration of AO-OCT volumes (slow, depth, fast) under
//! eye motion, B-scan by B-scan, with [`apply_shifts`] and [`average_registered`] for the
//! registered volume and a registered series' average (synthetic volumes with known motion:
//! [`crate::phantom::aooct`]).
//!
//! ```no_run
//! use lucent::registration::{phase_cross_correlation, PhaseCorrelation};
//! let gpu = lucent::Gpu::new()?;
//! let reference = ndarray::Array2::<f32>::from_shape_fn((256, 256), |(y, x)| ((x * y) % 7) as f32);
//! let moving = reference.clone();
//! let how = PhaseCorrelation { upsample_factor: 20.0, ..Default::default() };
//! let found = phase_cross_correlation(&gpu, &reference, &moving, &how)?;
//! println!("shift {:?}, error {:?}", found.shift, found.error);
//! # Ok::<(), lucent::Error>(())
//! ```

use ndarray::{ArrayBase, Data, Dimension};

use crate::error::Result;
use crate::gpu::Gpu;

pub use crate::ops::registration::affine::{
    itk_transform, parse_itk_transform, register_affine, register_affine_masked, AffineOptions, AffineResult, Metric, Optimizer, TransformKind,
};
pub use crate::ops::registration::flow::{optical_flow_ilk, optical_flow_tvl1, IlkOptions, Tvl1Options};
pub use crate::ops::registration::masked::{
    as_weights as mask_weights, check_registration as check_masked_registration, masked_phase_cross_correlation_resident,
};
pub use crate::ops::registration::refinement_shapes;
pub use crate::ops::registration::similarity::{
    similarity, similarity_start, transform as transform_similarity, transform_map as similarity_map, Similarity, SimilarityOptions,
};
pub use crate::ops::registration::similarity3d::{similarity_3d, transform_3d, transform_3d_map, Similarity3d};
pub use crate::ops::registration::stack::{register_stack, transform_stack, StackReference, StackTransform, Tmat};
pub use crate::ops::registration::stripes::{
    apply as apply_shifts, average as average_registered, register_volume, BscanShift, Status, StripeRegistration, VolumeRegistration,
};
pub use crate::ops::registration::stripes::{register_volume_with, Average};
pub use crate::ops::registration::template::{check_shapes as check_template_shapes, output_dims as template_output_dims};
pub use crate::ops::registration::template::{peaks, record_match_template, PadMode, TemplateMatch};
pub use crate::ops::registration::{
    check_upsample_factor, record_phase_correlation, CoarsePeak, Normalization, PhaseCorrelation, PhaseCorrelator, Registration,
};
pub use crate::placement::Progress;

/// The CPU references (f64), with the semantics of the GPU functions: what `--device cpu` runs
/// and what the tests compare against.
pub mod cpu {
    pub use crate::ops::registration::cpu::{cross_correlate_masked, masked_phase_cross_correlation, phase_cross_correlation, phase_cross_correlation_spectra};
    pub use crate::ops::registration::stripes::{apply_reference as apply_shifts, register_volume_reference as register_volume};
    pub use crate::ops::registration::template::match_template_reference as match_template;
}

/// skimage.feature.match_template(image, template, pad_input, mode, constant_values): the
/// normalised cross-correlation of the template with every window of the image (1-4 axes, the
/// template no larger than the image), clipped to [-1, 1]; 0 on flat windows or templates.
pub fn match_template<D: Dimension>(
    gpu: &Gpu,
    image: &ArrayBase<impl Data<Elem = f32>, D>,
    template: &ArrayBase<impl Data<Elem = f32>, D>,
    how: &TemplateMatch,
) -> Result<ndarray::Array<f32, D>> {
    let out = crate::ops::registration::template::match_template(gpu, &image.view().into_dyn(), &template.view().into_dyn(), how)?;
    crate::gpu::with_dim(out)
}

/// skimage.registration.phase_cross_correlation(reference, moving, reference_mask=..,
/// moving_mask=.., overlap_ratio=..) (Padfield's masked registration): the whole-sample shift
/// registering `moving` onto `reference` (scikit-image's default overlap_ratio is 0.3); with
/// `upsample_factor` above 1, refined below a sample (which scikit-image does not do) by a
/// parabola through the correlation's peak and its neighbours along each axis, to 1/upsample.
pub fn masked_phase_cross_correlation<D: Dimension>(
    gpu: &Gpu,
    reference: &ArrayBase<impl Data<Elem = f32>, D>,
    moving: &ArrayBase<impl Data<Elem = f32>, D>,
    reference_mask: &ArrayBase<impl Data<Elem = bool>, D>,
    moving_mask: &ArrayBase<impl Data<Elem = bool>, D>,
    overlap_ratio: f64,
    upsample_factor: f64,
) -> Result<Vec<f64>> {
    crate::ops::registration::masked::masked_phase_cross_correlation(
        gpu,
        &reference.view().into_dyn(),
        &moving.view().into_dyn(),
        &reference_mask.view().into_dyn(),
        &moving_mask.view().into_dyn(),
        overlap_ratio,
        upsample_factor,
    )
}

/// skimage.registration._masked_phase_cross_correlation.cross_correlate_masked(fixed, moving,
/// fixed_mask, moving_mask, mode="full", axes=all, overlap_ratio): the masked normalised
/// cross-correlation at every overlap (fixed + moving − 1 per axis).
pub fn cross_correlate_masked<D: Dimension>(
    gpu: &Gpu,
    fixed: &ArrayBase<impl Data<Elem = f32>, D>,
    moving: &ArrayBase<impl Data<Elem = f32>, D>,
    fixed_mask: &ArrayBase<impl Data<Elem = bool>, D>,
    moving_mask: &ArrayBase<impl Data<Elem = bool>, D>,
    overlap_ratio: f64,
) -> Result<ndarray::Array<f32, D>> {
    let out = crate::ops::registration::masked::cross_correlate_masked(
        gpu,
        &fixed.view().into_dyn(),
        &moving.view().into_dyn(),
        &fixed_mask.view().into_dyn(),
        &moving_mask.view().into_dyn(),
        overlap_ratio,
    )?;
    crate::gpu::with_dim(out)
}

/// skimage.registration.phase_cross_correlation(reference, moving, space="fourier", ...): the
/// images given as their full spectra (numpy.fft.fftn), complex, of 1-4 axes.
pub fn phase_cross_correlation_spectra<S1, S2, D>(
    gpu: &Gpu,
    reference: &ArrayBase<S1, D>,
    moving: &ArrayBase<S2, D>,
    how: &PhaseCorrelation,
) -> Result<Registration>
where
    S1: Data<Elem = num_complex::Complex32>,
    S2: Data<Elem = num_complex::Complex32>,
    D: Dimension,
{
    crate::ops::registration::phase_cross_correlation_spectra(gpu, &reference.view().into_dyn(), &moving.view().into_dyn(), how)
}

/// skimage.registration.phase_cross_correlation(reference, moving, upsample_factor,
/// normalization) for real images of 1-4 axes (space "real", no masks).
pub fn phase_cross_correlation<S1, S2, D>(gpu: &Gpu, reference: &ArrayBase<S1, D>, moving: &ArrayBase<S2, D>, how: &PhaseCorrelation) -> Result<Registration>
where
    S1: Data<Elem = f32>,
    S2: Data<Elem = f32>,
    D: Dimension,
{
    crate::ops::registration::phase_cross_correlation(gpu, &reference.view().into_dyn(), &moving.view().into_dyn(), how)
}
