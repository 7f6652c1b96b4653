//! Widefield PSF models with psfmodels 0.3.3's parameters, names, defaults and numerics
//! (`make_psf`): the vectorial model of Aguet et al. 2009, the scalar Gibson-Lanni model (with
//! the depth-dependent aberration of a refractive-index mismatch) and a Gaussian approximation
//! (Zhang et al. 2007). The pupil integrals run on the GPU, one thread per (plane, radius), over
//! the Simpson intervals psfmodels chooses (planned here in f64: [`Plan`]); the planes are then
//! built from the radial profiles by psfmodels' pixel integration (sub-pixels summed). The
//! Gaussian is a closed form, computed on the host. `cpu` is the f64 twin.

pub mod cpu;

use ndarray::{Array3, ArrayD, IxDyn};
use num_complex::Complex64;

use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::graph::{Buf, Recording};
use crate::kernels::{psf_pixels, psf_radial};

/// psfmodels' `model`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Model {
    /// Aguet et al. 2009: the vectorial model of an isotropic emitter (the default).
    #[default]
    Vectorial,
    /// Gibson and Lanni's scalar model.
    Scalar,
    /// A 3D Gaussian fitted to the widefield PSF (Zhang et al. 2007; paraxial below NA 0.7).
    Gaussian,
}

/// psfmodels' `z`: a count of planes centred on the source (`dz` apart), or positions in µm
/// relative to the coverslip.
#[derive(Clone, Debug, PartialEq)]
pub enum Planes {
    Count { nz: usize, dz: f64 },
    Positions(Vec<f64>),
}

/// `psfmodels.make_psf`'s arguments, with its names (lengths in µm) and defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct PsfOptions {
    pub z: Planes,
    /// Pixels along y and x (psfmodels prefers odd sizes; even ones centre as it does).
    pub nx: usize,
    /// Pixel size in the sample.
    pub dxy: f64,
    /// The point source's height above the coverslip.
    pub pz: f64,
    /// Numerical aperture (psfmodels' `NA`).
    pub na: f64,
    /// Emission wavelength.
    pub wvl: f64,
    /// Refractive indices: sample, immersion (experimental, design), coverslip (experimental,
    /// design).
    pub ns: f64,
    pub ni: f64,
    pub ni0: f64,
    pub ng: f64,
    pub ng0: f64,
    /// Coverslip thickness (experimental, design) and the objective's working distance.
    pub tg: f64,
    pub tg0: f64,
    pub ti0: f64,
    /// Sub-pixels per pixel along each axis, summed (pixel integration); at least 1.
    pub oversample_factor: usize,
    /// Divide by the largest value.
    pub normalize: bool,
    pub model: Model,
}

impl Default for PsfOptions {
    fn default() -> PsfOptions {
        PsfOptions {
            z: Planes::Count { nz: 51, dz: 0.05 },
            nx: 51,
            dxy: 0.05,
            pz: 0.0,
            na: 1.4,
            wvl: 0.6,
            ns: 1.47,
            ni: 1.515,
            ni0: 1.515,
            ng: 1.515,
            ng0: 1.515,
            tg: 170.0,
            tg0: 170.0,
            ti0: 150.0,
            oversample_factor: 3,
            normalize: true,
            model: Model::Vectorial,
        }
    }
}

/// The most Simpson intervals one radial integral may take (their count is an f32 on the device).
const MOST_SAMPLES: f64 = (1 << 20) as f64;
/// The most planes, and the largest distance (µm) any length or position may have: beyond a
/// microscope's, and within f32 (psfmodels' core takes most parameters as f32).
const MOST_PLANES: usize = 1 << 12;
const FARTHEST: f64 = 1e5;

impl PsfOptions {
    /// The planes' positions (µm from the coverslip): numpy.linspace(pz − L, pz + L, nz) with
    /// L = (nz − 1) dz / 2 for a count, as psfmodels' `_centered_zv`.
    pub fn positions(&self) -> Vec<f64> {
        match &self.z {
            Planes::Positions(z) => z.clone(),
            &Planes::Count { nz, dz } => {
                let lim = (nz as f64 - 1.0) * dz / 2.0;
                linspace(-lim + self.pz, lim + self.pz, nz)
            }
        }
    }

    /// psfmodels' checks (NA below ni, dxy positive, pz not negative) and the rest a user can
    /// get wrong: every value finite, indices and wavelength positive, thicknesses not negative,
    /// sizes at least 1, the output within the host budget.
    pub fn check(&self) -> Result<()> {
        let named = [
            ("dxy", self.dxy),
            ("pz", self.pz),
            ("NA", self.na),
            ("wvl", self.wvl),
            ("ns", self.ns),
            ("ni", self.ni),
            ("ni0", self.ni0),
            ("ng", self.ng),
            ("ng0", self.ng0),
            ("tg", self.tg),
            ("tg0", self.tg0),
            ("ti0", self.ti0),
        ];
        if let Some((name, v)) = named.iter().find(|(_, v)| !v.is_finite()) {
            return Err(Error::Invalid(format!("PSF model: {name} = {v} is not finite")));
        }
        for (name, v) in [("ns", self.ns), ("ni", self.ni), ("ni0", self.ni0), ("ng", self.ng), ("ng0", self.ng0)] {
            if !(1.0..=5.0).contains(&v) {
                return Err(Error::Invalid(format!("PSF model: refractive index {name} = {v} (from 1 to 5)")));
            }
        }
        if !(self.na > 0.0 && self.wvl > 0.0 && self.wvl <= 100.0) {
            return Err(Error::Invalid(format!("PSF model: NA {} must be greater than 0 and wvl {} µm from above 0 to 100", self.na, self.wvl)));
        }
        for (name, v) in [("tg", self.tg), ("tg0", self.tg0), ("ti0", self.ti0), ("pz", self.pz.abs())] {
            if v > FARTHEST {
                return Err(Error::Invalid(format!("PSF model: {name} = {v} µm (at most {FARTHEST} µm)")));
            }
        }
        for (name, v) in [("tg", self.tg), ("tg0", self.tg0), ("ti0", self.ti0)] {
            if v < 0.0 {
                return Err(Error::Invalid(format!("PSF model: {name} = {v} µm must not be negative")));
            }
        }
        if self.dxy > 1000.0 {
            return Err(Error::Invalid(format!("PSF model: dxy {} µm (at most 1000)", self.dxy)));
        }
        if self.na >= self.ni {
            return Err(Error::Invalid(format!("PSF model: NA {} must be less than the immersion medium's index ni {}", self.na, self.ni)));
        }
        if self.dxy <= 0.0 {
            return Err(Error::Invalid(format!("PSF model: dxy {} must be greater than 0", self.dxy)));
        }
        if self.pz < 0.0 {
            return Err(Error::Invalid(format!("PSF model: pz {} should be >= 0 (the source lies above the coverslip)", self.pz)));
        }
        if self.nx == 0 || self.nx > 1 << 13 {
            return Err(Error::Invalid(format!("PSF model: nx {} (1 to 8192 pixels)", self.nx)));
        }
        if !(1..=16).contains(&self.oversample_factor) {
            return Err(Error::Invalid(format!(
                "PSF model: oversample_factor {} (1 to 16; psfmodels' 0, the unintegrated oversampled grid, is not offered)",
                self.oversample_factor
            )));
        }
        match &self.z {
            Planes::Count { nz, dz } => {
                if *nz == 0 || *nz > MOST_PLANES || !(0.0..=1e4).contains(dz) {
                    return Err(Error::Invalid(format!("PSF model: {nz} planes {dz} µm apart (1 to {MOST_PLANES} planes, dz from 0 to 10000 µm)")));
                }
            }
            Planes::Positions(z) => {
                if z.is_empty() || z.len() > MOST_PLANES || z.iter().any(|v| v.is_nan() || v.abs() > FARTHEST) {
                    return Err(Error::Invalid(format!(
                        "PSF model: {} plane positions (1 to {MOST_PLANES}, each within ±{FARTHEST} µm of the coverslip)",
                        z.len()
                    )));
                }
            }
        }
        let planes = self.positions().len();
        crate::host::check_host_array("the PSF", &[planes, self.nx, self.nx], 8)
    }
}

/// numpy.linspace(start, stop, n): start + i·step, the last exactly `stop`.
fn linspace(start: f64, stop: f64, n: usize) -> Vec<f64> {
    match n {
        0 => Vec::new(),
        1 => vec![start],
        _ => {
            let step = (stop - start) / (n - 1) as f64;
            (0..n).map(|i| if i == n - 1 { stop } else { start + i as f64 * step }).collect()
        }
    }
}

/// The model's parameters as psfmodels' C++ core holds them: lengths in µm, and the values its
/// Python binding passes as C `float` rounded to f32 (the indices, thicknesses, wavelength, NA
/// and dxy; pz and the planes stay f64).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Optics {
    pub ti0: f64,
    pub ni0: f64,
    pub ni: f64,
    pub tg0: f64,
    pub tg: f64,
    pub ng0: f64,
    pub ng: f64,
    pub ns: f64,
    pub na: f64,
    pub dxy: f64,
    pub zp: f64,
    pub k0: f64,
    pub alpha: f64,
}

impl Optics {
    fn of(o: &PsfOptions) -> Optics {
        let f = |v: f64| v as f32 as f64;
        let (ni, na, wvl) = (f(o.ni), f(o.na), f(o.wvl));
        Optics {
            ti0: f(o.ti0),
            ni0: f(o.ni0),
            ni,
            tg0: f(o.tg0),
            tg: f(o.tg),
            ng0: f(o.ng0),
            ng: f(o.ng),
            ns: f(o.ns),
            na,
            dxy: f(o.dxy),
            zp: o.pz,
            k0: 2.0 * std::f64::consts::PI / wvl,
            alpha: (na / ni).asin(),
        }
    }

    /// The constant part of the optical path difference (Gibson-Lanni's ci).
    pub fn ci(&self) -> f64 {
        self.zp * (1.0 - self.ni / self.ns) + self.ni * (self.tg0 / self.ng0 + self.ti0 / self.ni0 - self.tg / self.ng)
    }

    /// sqrt(n² − ni² sin²θ), complex past the critical angle.
    pub fn root(&self, n: f64, theta: f64) -> Complex64 {
        Complex64::new(n * n - self.ni * self.ni * theta.sin() * theta.sin(), 0.0).sqrt()
    }

    /// d/dθ of the optical path difference at θ for a plane at z (psfmodels' L_theta[1]):
    /// what sets the integrand's fastest oscillation.
    fn path_slope(&self, theta: f64, z: f64) -> f64 {
        let (s, c) = theta.sin_cos();
        let sum = self.tg0 / self.root(self.ng0, theta) + self.ti0 / self.root(self.ni0, theta)
            - self.tg / self.root(self.ng, theta)
            - self.zp / self.root(self.ns, theta);
        (self.ni * s * (z - self.ci() + self.ni * c * sum)).norm()
    }
}

/// How psfmodels discretises a model: the fine (sub-pixel) grid's half width `xymax`, the
/// radial samples `rmax` (one per sub-pixel of radius, +2 for interpolation), and per (plane,
/// radius) the Simpson intervals: 4 (1 + α w / π) for the faster of the path's and the Bessel
/// term's oscillation w, at least 20.
pub(crate) struct Plan {
    pub optics: Optics,
    pub z: Vec<f64>,
    pub nx: usize,
    pub sf: usize,
    pub xymax: usize,
    pub rmax: usize,
    pub samples: Vec<u32>,
}

impl Plan {
    pub fn of(o: &PsfOptions) -> Result<Plan> {
        o.check()?;
        let optics = Optics::of(o);
        let sf = o.oversample_factor;
        let xymax = (o.nx * sf - 1) / 2;
        let rmax = (std::f64::consts::SQRT_2 * xymax as f64).ceil() as usize + 2;
        let z = o.positions();
        let mut samples = Vec::with_capacity(z.len() * rmax);
        for &zk in &z {
            // psfmodels' search: α and 0.975, 0.95, 0.925 α (its loop stops short of 0.9).
            let mut w = optics.path_slope(optics.alpha, zk);
            let mut c = 0.975f64;
            while c >= 0.9 {
                w = w.max(optics.path_slope(c * optics.alpha, zk));
                c -= 0.025;
            }
            let w = w * optics.k0;
            for ri in 0..rmax {
                let bessel = optics.k0 * (optics.dxy / sf as f64 * ri as f64) * optics.ni;
                let n = (4.0 * (1.0 + optics.alpha * w.max(bessel) / std::f64::consts::PI).floor()).max(20.0);
                if n.is_nan() || n > MOST_SAMPLES {
                    return Err(Error::Invalid(format!(
                        "PSF model: the pupil integral at z = {zk} µm would take {n:.3e} intervals (at most 2^20): the plane lies too far from the source (pz {}), or the wavelength, pixel size or mismatch of thicknesses and indices is beyond a microscope's",
                        o.pz
                    )));
                }
                samples.push(n as u32);
            }
        }
        Ok(Plan { optics, z, nx: o.nx, sf, xymax, rmax, samples })
    }

    /// The model's constant over (3 sf)² (psfmodels' A0 · iconst² or 8π/3 · iconst² less the
    /// interval width squared).
    pub fn scale(&self, vectorial: bool) -> f64 {
        let ud = 3.0 * self.sf as f64;
        let a = if vectorial { 8.0 * std::f64::consts::PI / 3.0 } else { self.optics.ni.powi(4) / self.optics.na.powi(4) };
        a / (ud * ud)
    }
}

/// `psfmodels.make_psf(...)`: planes × nx × nx, f32.
pub fn make_psf(gpu: &Gpu, o: &PsfOptions) -> Result<Array3<f32>> {
    if o.model == Model::Gaussian {
        return Ok(cpu::make_psf(o)?.mapv(|v| v as f32));
    }
    let mut rec = Recording::new(gpu);
    let planes = record_psf(&mut rec, &PsfOptions { normalize: false, ..o.clone() })?;
    let d = rec.download(planes);
    let psf = rec.run()?.into_f32(d)?;
    let mut psf = psf.into_dimensionality::<ndarray::Ix3>().expect("planes × nx × nx");
    if o.normalize {
        let max = crate::check::largest_magnitude(&psf.view().into_dyn());
        if max > 0.0 {
            psf.mapv_inplace(|v| v / max);
        }
    }
    Ok(psf)
}

/// [`make_psf`] recorded into a pipeline (planes × nx × nx, f32), at the model's own scale:
/// `o.normalize` must be false (the division by the largest value is [`make_psf`]'s, on the
/// host). The Gaussian is computed on the host and uploaded.
pub fn record_psf(rec: &mut Recording, o: &PsfOptions) -> Result<Buf> {
    if o.normalize {
        return Err(Error::Invalid("record_psf gives the model at its own scale: set normalize to false (make_psf divides by the largest value)".into()));
    }
    if o.model == Model::Gaussian {
        return rec.upload_f32(&cpu::make_psf(o)?.mapv(|v| v as f32).into_dyn().view());
    }
    let plan = Plan::of(o)?;
    let vectorial = o.model == Model::Vectorial;
    let q = &plan.optics;
    let planes = plan.z.len();
    let samples = ArrayD::from_shape_vec(IxDyn(&[planes, plan.rmax]), plan.samples.iter().map(|&n| n as f32).collect()).expect("planes × radii");
    let depth = ArrayD::from_shape_vec(IxDyn(&[planes]), plan.z.iter().map(|z| (q.zp - z) as f32).collect()).expect("one per plane");
    let (samples, depth) = (rec.upload_f32(&samples.view())?, rec.upload_f32(&depth.view())?);
    let dn = |n: f64| (n * n - q.ni * q.ni) as f32;
    let p = psf_radial::Params {
        rmax: plan.rmax as u32,
        k0: q.k0 as f32,
        r_step: (q.dxy / plan.sf as f64) as f32,
        alpha: q.alpha as f32,
        scale: plan.scale(vectorial) as f32,
        ni: q.ni as f32,
        ns: q.ns as f32,
        ng: q.ng as f32,
        ng0: q.ng0 as f32,
        ni0: q.ni0 as f32,
        tg: q.tg as f32,
        tg0: q.tg0 as f32,
        ti0: q.ti0 as f32,
        zp: q.zp as f32,
        dn_s: dn(q.ns),
        dn_g: dn(q.ng),
        dn_g0: dn(q.ng0),
        dn_i0: dn(q.ni0),
        ..Default::default()
    };
    let profile = psf_radial::record(rec, samples, depth, vectorial, p)?;
    psf_pixels::record(rec, profile, plan.nx, plan.sf, plan.xymax)
}
