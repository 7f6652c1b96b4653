//! Image registration on the GPU with scikit-image's conventions: [`phase_cross_correlation`]
//! (whole-sample and, with an upsample factor, sub-sample shifts of 1-4-axis images;
//! [`phase_cross_correlation_spectra`] for images given as their spectra) and
//! [`PhaseCorrelator`], which keeps a reference's spectrum on the device to register many
//! moving images against it at the cost of one forward transform each.
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

pub use crate::ops::registration::{Normalization, PhaseCorrelation, PhaseCorrelator, Registration};

/// skimage.registration.phase_cross_correlation(reference, moving, space="fourier", ...): the
/// images given as their full spectra (numpy.fft.fftn), complex, of 1-4 axes.
pub fn phase_cross_correlation_spectra<S1, S2, D>(gpu: &Gpu, reference: &ArrayBase<S1, D>, moving: &ArrayBase<S2, D>, how: &PhaseCorrelation) -> Result<Registration>
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
