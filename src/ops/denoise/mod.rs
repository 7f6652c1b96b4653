//! True 4D adaptive-filtering denoising (Eklund, Andersson and Knutsson, Int. J.
//! Biomedical Imaging 2011): one code path for 2, 3 and 4 dimensions (the last `dims` axes of
//! the data, filtered together; leading axes are batches, denoised one by one).
//!
//! 1. The data is lowpass filtered ([1, 2, 1]/4) and downsampled by 2 along the space axes (in
//!    4D the first axis is time and keeps its rate).
//! 2. Monomial filters (lognormal radial function R, d odd ones i R û_i and d(d+1)/2 even ones
//!    R û_i û_j) give the structure tensor T = q qᵀ + Q Qᵀ, lowpass filtered by normalised
//!    convolution (Gaussian, certainty 1 inside the data and 0 outside).
//! 3. T's norm, relative to its largest value anywhere, is mapped by M(x) = x^β / (x^(α+β) +
//!    σ^β) into the control tensor's first eigenvalue c_1; its eigenvalue ratios by μ(x) =
//!    (x(1−a))^b / ((x(1−a))^b + (a(1−x))^b) into the rest, c_(k+1) = c_k μ(λ_(k+1)/λ_k); C =
//!    γ0 Σ c_k e_k e_kᵀ, with T's eigenvectors e_k. (Our reading of the paper's mappings: its
//!    equations were not at hand; the forms are those of Knutsson and Westin's adaptive
//!    filtering, and the defaults are tuned for PSNR, BENCHMARKS.md.)
//! 4. Reconstruction at full resolution: f = f_LP + Σ_k ⟨C, M_k⟩ f_HP,k, the highpass filters
//!    directed along e_i and (e_i + e_j)/√2, M_k their dual tensors, the weights ⟨C, M_k⟩
//!    lowpass filtered (normalised convolution again) at the low resolution and interpolated
//!    linearly to every sample. C = I gives the data back exactly, C = 0 its lowpass part.
//!
//! Every filter is a finite kernel designed by weighted least squares against its ideal
//! response ([`design`]): 7 taps per axis for the monomial filters, 11 for the reconstruction;
//! data is extended by mirroring at its borders. Finite kernels make every output sample depend
//! on a bounded neighbourhood ([`Options::halo`]), so slabs with halos give the whole-volume
//! result. [`cpu`] holds the f64 reference; [`gpu`] records the same stages (the filters by FFT,
//! two real kernels per complex transform) and runs them slab by slab.

pub mod bm;
pub mod bregman;
pub mod cpu;
pub mod design;
pub mod gpu;
pub mod nlm;
pub mod sigma;
pub mod tv;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use ndarray::{ArrayD, IxDyn};
use num_complex::Complex64;

use crate::error::{Error, Result};

/// The structure estimate's filters: the lognormal radial function R(ρ) =
/// exp(−4 ln²(ρ/ρ0) / (B² ln 2)) of centre frequency ρ0 (radians per sample) and bandwidth B
/// (octaves at half height).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lognormal {
    pub center: f64,
    pub bandwidth: f64,
}

impl Default for Lognormal {
    /// ρ0 = π/(2√2) and two octaves: Knutsson's usual choice for quadrature filters.
    fn default() -> Self {
        Lognormal { center: std::f64::consts::PI / (2.0 * std::f64::consts::SQRT_2), bandwidth: 2.0 }
    }
}

impl Lognormal {
    pub fn check(&self) -> Result<()> {
        let ok = |v: f64| v.is_finite() && v > 0.0;
        if !ok(self.center) || self.center >= std::f64::consts::PI || !ok(self.bandwidth) {
            return Err(Error::Invalid(format!(
                "a lognormal filter of centre {} rad/sample (0 to π) and bandwidth {} octaves (more than 0)",
                self.center, self.bandwidth
            )));
        }
        Ok(())
    }

    /// R(ρ); 0 at ρ = 0.
    pub fn radial(&self, rho: f64) -> f64 {
        if rho <= 0.0 {
            return 0.0;
        }
        let l = (rho / self.center).ln();
        (-4.0 * l * l / (self.bandwidth * self.bandwidth * std::f64::consts::LN_2)).exp()
    }
}

/// The number of distinct components of a symmetric d×d tensor, d(d+1)/2, in the order
/// (0,0), (0,1), .., (0,d−1), (1,1), .., (d−1,d−1).
pub fn tensor_components(d: usize) -> Vec<(usize, usize)> {
    (0..d).flat_map(|i| (i..d).map(move |j| (i, j))).collect()
}

/// The reconstruction filters' directions: the axes e_i and the diagonals (e_i + e_j)/√2, i < j,
/// d(d+1)/2 of them (in [`tensor_components`]' order: (i, i) → e_i, (i, j) → the diagonal).
pub fn reconstruction_directions(d: usize) -> Vec<[f64; 4]> {
    tensor_components(d)
        .into_iter()
        .map(|(i, j)| {
            let mut n = [0.0; 4];
            if i == j {
                n[i] = 1.0;
            } else {
                n[i] = std::f64::consts::FRAC_1_SQRT_2;
                n[j] = std::f64::consts::FRAC_1_SQRT_2;
            }
            n
        })
        .collect()
}

/// The dual tensors M_k of the directions' outer products N_k = n_k n_kᵀ: ⟨N_k, M_l⟩ = δ_kl, so
/// that Σ_k ⟨C, M_k⟩ N_k = C for every symmetric C (M_k = Σ_l (G⁻¹)_kl N_l, G the Gram matrix
/// of the N_k under the Frobenius product).
pub fn dual_tensors(d: usize) -> Vec<[[f64; 4]; 4]> {
    let outer = |n: &[f64; 4]| {
        let mut m = [[0.0; 4]; 4];
        for i in 0..d {
            for j in 0..d {
                m[i][j] = n[i] * n[j];
            }
        }
        m
    };
    let basis: Vec<[[f64; 4]; 4]> = reconstruction_directions(d).iter().map(outer).collect();
    let k = basis.len();
    let dot = |a: &[[f64; 4]; 4], b: &[[f64; 4]; 4]| (0..d).flat_map(|i| (0..d).map(move |j| (i, j))).map(|(i, j)| a[i][j] * b[i][j]).sum::<f64>();
    let g = design::invert((0..k).map(|r| (0..k).map(|c| dot(&basis[r], &basis[c])).collect()).collect());
    (0..k)
        .map(|a| {
            let mut m = [[0.0; 4]; 4];
            for (b, n) in basis.iter().enumerate() {
                for i in 0..d {
                    for j in 0..d {
                        m[i][j] += g[a][b] * n[i][j];
                    }
                }
            }
            m
        })
        .collect()
}

/// The adaptive filter's parameters, each with the default the PSNR tuning chose
/// (BENCHMARKS.md).
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Axes filtered together: the last `dims` of the data (2, 3 or 4); `None`: all of them.
    pub dims: Option<usize>,
    /// The monomial filters' radial function.
    pub structure: Lognormal,
    /// Taps per axis of the monomial filters (odd).
    pub structure_taps: usize,
    /// Taps per axis of the reconstruction filters (odd).
    pub reconstruction_taps: usize,
    /// The reconstruction lowpass LP(ρ) = cos²(πρ / 2ρc) below ρc (radians per sample), 0 above;
    /// `None`: 1.8 over 2 or 3 axes, 2.2 over 4 (the PSNR tuning's choices).
    pub lowpass: Option<f64>,
    /// σ of the Gaussian that smooths the structure tensor, in downsampled samples.
    pub tensor_sigma: f64,
    /// σ of the Gaussian that smooths the control tensor, in downsampled samples.
    pub control_sigma: f64,
    /// The magnitude mapping's noise level σ, relative to the largest tensor norm.
    pub sigma: f64,
    /// The magnitude mapping's slopes α (above σ) and β (below).
    pub alpha: f64,
    pub beta: f64,
    /// The isotropy mapping's half point a and slope b.
    pub isotropy_alpha: f64,
    pub isotropy_beta: f64,
    /// The control tensor's overall gain γ0.
    pub gamma0: f64,
    /// Estimate the structure at half resolution along the space axes (the paper's choice).
    pub downsample: bool,
    /// How the GPU applies the filters: by FFT, by direct sums, or each bank by the cheaper.
    pub method: Method,
    /// The GPU's slab length along the slab axis (full-resolution samples); `None`: as long as
    /// the device holds. The result does not depend on it.
    pub slab_len: Option<usize>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            dims: None,
            structure: Lognormal::default(),
            structure_taps: 7,
            reconstruction_taps: 11,
            lowpass: None,
            tensor_sigma: 0.7,
            control_sigma: 1.0,
            sigma: 0.25,
            alpha: 0.2,
            beta: 2.0,
            isotropy_alpha: 0.5,
            isotropy_beta: 2.0,
            gamma0: 1.0,
            downsample: true,
            slab_len: None,
            method: Method::Auto,
        }
    }
}

impl Options {
    /// The number of filtered axes for data of `rank` axes; an error for a rank or `dims` out
    /// of range.
    pub fn axes(&self, rank: usize) -> Result<usize> {
        let d = self.dims.unwrap_or(rank.min(4));
        if !(2..=4).contains(&d) {
            return Err(Error::Invalid(format!("adaptive filtering works on 2, 3 or 4 axes together, asked for {d}")));
        }
        if rank < d {
            return Err(Error::Shape(format!("adaptive filtering over {d} axes needs data of at least {d} axes, given {rank}")));
        }
        Ok(d)
    }

    pub fn check(&self) -> Result<()> {
        self.structure.check()?;
        let positive = |name: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(Error::Invalid(format!("adaptive filtering: {name} must be finite and above 0, got {v}")))
            }
        };
        for (name, taps) in [("structure taps", self.structure_taps), ("reconstruction taps", self.reconstruction_taps)] {
            if taps % 2 == 0 || !(3..=15).contains(&taps) {
                return Err(Error::Invalid(format!("adaptive filtering: {name} must be odd, 3 to 15, got {taps}")));
            }
        }
        positive("the lowpass cutoff", self.lowpass.unwrap_or(1.0))?;
        positive("the tensor sigma", self.tensor_sigma)?;
        positive("the control sigma", self.control_sigma)?;
        positive("sigma (the noise level)", self.sigma)?;
        positive("beta", self.beta)?;
        positive("the isotropy beta", self.isotropy_beta)?;
        positive("gamma0", self.gamma0)?;
        if !(self.alpha.is_finite() && self.alpha >= 0.0) {
            return Err(Error::Invalid(format!("adaptive filtering: alpha must be finite and at least 0, got {}", self.alpha)));
        }
        if !(self.isotropy_alpha > 0.0 && self.isotropy_alpha < 1.0) {
            return Err(Error::Invalid(format!("adaptive filtering: the isotropy alpha must lie in (0, 1), got {}", self.isotropy_alpha)));
        }
        if self.slab_len == Some(0) {
            return Err(Error::Invalid("adaptive filtering: a slab length of 0 (1 or more, or none for as long as the GPU holds)".into()));
        }
        Ok(())
    }

    /// The downsampling factor of each of the d filtered axes: 2 along space, 1 along time (the
    /// first of four axes), all 1 without downsampling.
    pub fn factors(&self, d: usize) -> Vec<usize> {
        (0..d).map(|a| if !self.downsample || (d == 4 && a == 0) { 1 } else { 2 }).collect()
    }

    /// The reconstruction lowpass LP(ρ).
    pub fn lowpass_at(&self, rho: f64, d: usize) -> f64 {
        let cutoff = self.lowpass_cutoff(d);
        if rho >= cutoff {
            0.0
        } else {
            (std::f64::consts::FRAC_PI_2 * rho / cutoff).cos().powi(2)
        }
    }

    /// The reconstruction lowpass's cutoff ρc over d axes.
    pub fn lowpass_cutoff(&self, d: usize) -> f64 {
        self.lowpass.unwrap_or(if d == 4 { 2.2 } else { 1.8 })
    }

    /// The Gaussian's reach in samples (scipy's radius at truncate 4).
    fn gaussian_reach(sigma: f64) -> usize {
        (4.0 * sigma + 0.5).floor() as usize
    }

    /// How far, in full-resolution samples along a downsampled axis, an output sample's inputs
    /// reach, stage by stage: `structure` for the tensor (downsampling, monomial filters, the
    /// tensor's lowpass) in downsampled samples, `weights` for the control weights' lowpass and
    /// interpolation (downsampled samples), `data` for the reconstruction filters (full
    /// resolution).
    pub fn halo(&self) -> Halo {
        Halo {
            structure: self.structure_taps / 2 + Self::gaussian_reach(self.tensor_sigma) + 1,
            weights: Self::gaussian_reach(self.control_sigma) + 1,
            data: self.reconstruction_taps / 2,
        }
    }
}

/// How the GPU applies a bank of filters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Direct sums where a bank's window times the vec4 multiply-adds each tap takes (four
    /// filters to one) is at most [`SPATIAL_UP_TO`], else FFTs.
    #[default]
    Auto,
    /// Transforms: the data's spectrum once, two filters per complex inverse transform.
    Fft,
    /// Direct sums, every input value loaded once for all filters of a pass.
    Spatial,
}

/// The most taps × vec4 groups `Method::Auto` sums directly (BENCHMARKS.md, warm, H200:
/// 11³ taps × 2 groups (3D reconstruction) beat FFTs, 7⁴ × 4 (4D structure) lost to them).
pub const SPATIAL_UP_TO: usize = 4000;

impl Method {
    /// Whether a bank of windows of `taps`^d whose taps take `groups` vec4 multiply-adds goes
    /// by direct sums.
    pub fn spatial(self, taps: usize, d: usize, groups: usize) -> bool {
        match self {
            Method::Fft => false,
            Method::Spatial => true,
            Method::Auto => taps.pow(d as u32) * groups <= SPATIAL_UP_TO,
        }
    }
}

/// Reaches of the pipeline's stages ([`Options::halo`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Halo {
    pub structure: usize,
    pub weights: usize,
    pub data: usize,
}

/// The magnitude mapping M(x) = x^β / (x^(α+β) + σ^β), x the tensor norm relative to its largest.
pub fn magnitude(x: f64, o: &Options) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    x.powf(o.beta) / (x.powf(o.alpha + o.beta) + o.sigma.powf(o.beta))
}

/// The isotropy mapping μ(x) = (x(1−a))^b / ((x(1−a))^b + (a(1−x))^b) of an eigenvalue ratio x
/// in [0, 1]: 0 at 0, ½ at a, 1 at 1.
pub fn isotropy(x: f64, o: &Options) -> f64 {
    let x = x.clamp(0.0, 1.0);
    let (a, b) = (o.isotropy_alpha, o.isotropy_beta);
    let p = (x * (1.0 - a)).powf(b);
    let q = (a * (1.0 - x)).powf(b);
    if p + q == 0.0 {
        0.0
    } else {
        p / (p + q)
    }
}

/// The coefficients that turn the control tensor's components (in [`tensor_components`]'
/// order) into the reconstruction weights: ⟨C, M_k⟩ = Σ_c C_c m[k][c] (off-diagonal
/// components count twice).
pub fn weight_coefficients(d: usize) -> Vec<Vec<f64>> {
    let pairs = tensor_components(d);
    dual_tensors(d).iter().map(|m| pairs.iter().map(|&(i, j)| if i == j { m[i][j] } else { 2.0 * m[i][j] }).collect()).collect()
}

/// The designed kernels of one parameter set: the monomial filters (d odd, then the even ones
/// in [`tensor_components`]' order) and the reconstruction filters (the lowpass, then one
/// highpass per [`reconstruction_directions`] entry), all convolution kernels centred at
/// taps/2.
pub struct Filters {
    pub structure: Vec<ArrayD<f64>>,
    pub reconstruction: Vec<ArrayD<f64>>,
}

/// The kernels for `d` axes and the options' filter parameters, designed once per process and
/// parameter set (a 4D set takes about a second).
pub fn filters(d: usize, o: &Options) -> Arc<Filters> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<Filters>>>> = OnceLock::new();
    let key = format!("{d} {:?} {} {} {}", o.structure, o.structure_taps, o.reconstruction_taps, o.lowpass_cutoff(d));
    let cache = CACHE.get_or_init(Default::default);
    if let Some(f) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return f.clone();
    }
    let made = Arc::new(design_filters(d, o));
    cache.lock().unwrap_or_else(|e| e.into_inner()).insert(key, made.clone());
    made
}

fn design_filters(d: usize, o: &Options) -> Filters {
    let rho = |u: &[f64]| u.iter().map(|v| v * v).sum::<f64>().sqrt();
    let radial = |u: &[f64]| o.structure.radial(rho(u));
    let taps = o.structure_taps;
    let mut structure: Vec<ArrayD<f64>> = (0..d)
        .map(|i| {
            design::least_squares(
                &|u| {
                    let r = rho(u);
                    if r == 0.0 {
                        Complex64::new(0.0, 0.0)
                    } else {
                        Complex64::new(0.0, radial(u) * u[i] / r)
                    }
                },
                taps,
                d,
            )
        })
        .collect();
    structure.extend(tensor_components(d).into_iter().map(|(i, j)| {
        design::least_squares(
            &|u| {
                let r = rho(u);
                if r == 0.0 {
                    Complex64::new(0.0, 0.0)
                } else {
                    Complex64::new(radial(u) * u[i] * u[j] / (r * r), 0.0)
                }
            },
            taps,
            d,
        )
    }));
    let taps = o.reconstruction_taps;
    let highpass: Vec<ArrayD<f64>> = reconstruction_directions(d)
        .iter()
        .map(|n| {
            design::least_squares(
                &|u| {
                    let r = rho(u);
                    if r == 0.0 {
                        return Complex64::new(0.0, 0.0);
                    }
                    let along: f64 = u.iter().zip(n).map(|(a, b)| a * b).sum::<f64>() / r;
                    Complex64::new((1.0 - o.lowpass_at(r, d)) * along * along, 0.0)
                },
                taps,
                d,
            )
        })
        .collect();
    // LP = δ − Σ_k tr(M_k) HP_k: with C = I the filters sum to δ exactly, whatever the design's
    // error (Σ_k tr(M_k)(n_k·û)² = 1 makes this the design of LP itself).
    let mut lowpass = ArrayD::zeros(IxDyn(&vec![taps; d]));
    lowpass[IxDyn(&vec![taps / 2; d])] = 1.0;
    for (h, m) in highpass.iter().zip(dual_tensors(d)) {
        let trace: f64 = (0..d).map(|i| m[i][i]).sum();
        lowpass.scaled_add(-trace, h);
    }
    let mut reconstruction = vec![lowpass];
    reconstruction.extend(highpass);
    Filters { structure, reconstruction }
}
