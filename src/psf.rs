//! Widefield point spread function models, psfmodels 0.3.3's `make_psf` on the GPU: the
//! vectorial model of Aguet et al. 2009 (an isotropic emitter), Gibson and Lanni's scalar model
//! with the aberration a refractive-index mismatch brings with depth (`pz`), and a Gaussian
//! approximation. Same parameters, names (psfmodels' `NA` is `na`), units (µm) and defaults,
//! and the same numerics: psfmodels' Simpson intervals, its Bessel approximations, its radial
//! interpolation and pixel integration (`oversample_factor` sub-pixels summed per pixel). The
//! pupil integrals run in f32 on the device in a form of the optical path difference whose
//! large terms do not cancel; [`cpu::make_psf`] is the f64 twin.
//!
//! ```no_run
//! use lucent::psf::{make_psf, Model, Planes, PsfOptions};
//! let gpu = lucent::Gpu::new()?;
//! // A water-dipping 1.1 NA objective, 0.52 µm emission, 5 µm into the sample.
//! let o = PsfOptions { z: Planes::Count { nz: 65, dz: 0.2 }, nx: 127, dxy: 0.1, na: 1.1, ni: 1.33, ni0: 1.33, ns: 1.33, wvl: 0.52, pz: 5.0, ..PsfOptions::default() };
//! let psf = make_psf(&gpu, &o)?; // 65 × 127 × 127, peak 1
//! # Ok::<(), lucent::Error>(())
//! ```

pub use crate::ops::psf::{make_psf, record_psf, Model, Planes, PsfOptions};

/// The f64 reference, what `--device cpu` runs and the tests compare against.
pub mod cpu {
    pub use crate::ops::psf::cpu::{bessel_j0, bessel_j1, make_psf};
}

/// Largest planes and pixels [`size_for_image`] gives a model PSF.
pub const MAX_MODEL_EXTENT: usize = 65;

/// The size (planes, pixels) of a model PSF to deconvolve an image of shape `dims` (2D: one
/// plane; 3D: planes, rows, columns) with: odd, so the source sits on a sample, no larger than
/// the image, at most [`MAX_MODEL_EXTENT`] along each axis. What `lucent deconvolve
/// --psf-model` and Python's `richardson_lucy(psf_model=...)` make.
pub fn size_for_image(dims: &[usize]) -> crate::Result<(usize, usize)> {
    let odd = |n: usize| if n.is_multiple_of(2) { n.saturating_sub(1).max(1) } else { n };
    if !(2..=3).contains(&dims.len()) || dims.contains(&0) {
        return Err(crate::Error::Invalid(format!("a model PSF needs a 2D or 3D image, not one of shape {dims:?}")));
    }
    let lateral = odd(dims[dims.len() - 2].min(dims[dims.len() - 1])).min(MAX_MODEL_EXTENT);
    let planes = if dims.len() == 3 { odd(dims[0]).min(MAX_MODEL_EXTENT) } else { 1 };
    Ok((planes, lateral))
}
