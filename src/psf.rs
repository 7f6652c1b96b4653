//! Widefield point spread function models, psfmodels 0.3.3's `make_psf` on the GPU: the
//! vectorial model of Aguet et al. 2009 (an isotropic emitter), Gibson and Lanni's scalar model
//! with the aberration a refractive-index mismatch brings with depth (`pz`), and a Gaussian
//! approximation. Same parameters, names (psfmodels' `NA` is `na`), units (µm) and defaults,
//! and the same numerics: psfmodels' Simpson intervals, its Bessel approximations, its radial
//! interpolation and pixel integration (`oversample_factor` sub-pixels summed per pixel). The
//! pupil integrals run in f32 on the device in a form of the optical path difference whose
//! large terms do not cancel; [`cpu::make_psf`] is the f64 twin.
//!
//! [`confocal_psf`] is psfmodels' `confocal_psf`: the excitation PSF times the emission PSF
//! convolved in each plane with the pinhole (a top hat of radius `pinhole_au` × 0.61 λem / NA).
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

    /// [`super::confocal_psf`] in f64: both models in f64, the pinhole's convolution direct.
    pub fn confocal_psf(o: &super::PsfOptions, c: &super::Confocal) -> crate::Result<ndarray::Array3<f64>> {
        c.check()?;
        let ex = make_psf(&super::PsfOptions { wvl: c.ex_wvl, ..o.clone() })?;
        if c.pinhole_au >= c.pinhole_irrelevance_threshold {
            return Ok(ex);
        }
        let em = make_psf(&super::PsfOptions { wvl: c.em_wvl, ..o.clone() })?.into_dyn();
        let pinhole = c.pinhole(o).insert_axis(ndarray::Axis(0)).into_dyn();
        let em = crate::signal::cpu::convolve(&em, &pinhole, crate::signal::Mode::Same)?;
        Ok(ex * &em.into_dimensionality::<ndarray::Ix3>().expect("three axes"))
    }
}

/// psfmodels' confocal parameters: the excitation and emission wavelengths (µm) and the
/// pinhole's diameter in Airy units (1 AU = 1.22 λem / NA in the sample).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Confocal {
    pub ex_wvl: f64,
    pub em_wvl: f64,
    pub pinhole_au: f64,
    /// At or beyond this many AU the pinhole is left out: the excitation PSF alone (50).
    pub pinhole_irrelevance_threshold: f64,
}

impl Default for Confocal {
    /// psfmodels' defaults: 0.6 µm both ways, a 1 AU pinhole.
    fn default() -> Confocal {
        Confocal { ex_wvl: 0.6, em_wvl: 0.6, pinhole_au: 1.0, pinhole_irrelevance_threshold: 50.0 }
    }
}

impl Confocal {
    pub fn check(&self) -> crate::Result<()> {
        let (ok, positive) = (|v: f64| v.is_finite() && v >= 0.0, |v: f64| v.is_finite() && v > 0.0);
        if !(ok(self.pinhole_au) && ok(self.pinhole_irrelevance_threshold) && positive(self.ex_wvl) && positive(self.em_wvl)) {
            return Err(crate::Error::Invalid(format!(
                "confocal: ex_wvl {} and em_wvl {} must be positive, pinhole_au {} and its threshold {} finite and non-negative",
                self.ex_wvl, self.em_wvl, self.pinhole_au, self.pinhole_irrelevance_threshold
            )));
        }
        Ok(())
    }

    /// psfmodels' `_top_hat(nx, radius)` (1 within `pinhole_au` × 0.61 em_wvl / NA of pixel
    /// nx // 2, 0 beyond) cropped to its support, with its centre where the whole nx × nx top
    /// hat has it for 'same' convolution (even nx: one pixel past the middle, as psfmodels').
    pub fn pinhole(&self, o: &PsfOptions) -> ndarray::Array2<f64> {
        let radius = self.pinhole_au * 0.61 * self.em_wvl / o.na / o.dxy;
        // psfmodels' top hat spans offsets −half..nx − half from its centre; cropped to the
        // offsets within the radius, one more before the centre for an even nx so that 'same'
        // convolution puts the centre where the whole top hat puts it.
        let (half, odd) = (o.nx / 2, o.nx % 2 == 1);
        let m = (radius.floor() as usize).min(if odd { half } else { half.saturating_sub(1) });
        let (first, size) = if odd { (-(m as isize), 2 * m + 1) } else { (-(m as isize) - 1, 2 * m + 2) };
        ndarray::Array2::from_shape_fn((size, size), |(i, j)| {
            let (y, x) = ((first + i as isize) as f64, (first + j as isize) as f64);
            f64::from(u8::from((y * y + x * x).sqrt() <= radius))
        })
    }
}

/// psfmodels' `confocal_psf`: the excitation PSF (`o` at `ex_wvl`) times the emission PSF (at
/// `em_wvl`) convolved in each plane with the pinhole ([`Confocal::pinhole`], scipy's 'same'
/// convolution), both models normalised as `o.normalize` says and the product left as it comes
/// (psfmodels does not normalise it again); beyond the threshold the excitation PSF alone.
pub fn confocal_psf(gpu: &crate::Gpu, o: &PsfOptions, c: &Confocal) -> crate::Result<ndarray::Array3<f32>> {
    c.check()?;
    let ex = make_psf(gpu, &PsfOptions { wvl: c.ex_wvl, ..o.clone() })?;
    if c.pinhole_au >= c.pinhole_irrelevance_threshold {
        return Ok(ex);
    }
    let em = make_psf(gpu, &PsfOptions { wvl: c.em_wvl, ..o.clone() })?;
    let pinhole = c.pinhole(o).mapv(|v| v as f32).insert_axis(ndarray::Axis(0));
    let em = crate::signal::convolve(gpu, &em, &pinhole, crate::signal::Mode::Same, crate::signal::Method::Auto)?;
    Ok(ex * &em)
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
