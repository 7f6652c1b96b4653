//! Unsupervised Wiener-Hunt deconvolution (Orieux, Giovannelli and Rodet 2010), scikit-image's
//! `unsupervised_wiener(image, psf, reg=None, user_params=None, is_real=True, clip=True, rng)`:
//! a Gibbs sampler of the object and of the noise and prior precisions (gn, gx), the posterior
//! mean of the object's samples after a burn-in as the estimate, and both chains.
//!
//! scikit-image's conventions: unitary transforms (the image's half spectrum scaled by 1/√N),
//! the PSF's transfer function as `ir2tf` makes it, the Laplacian regulariser, the chains
//! starting at 1, gn drawn from Γ(N/2, 2/‖Y − H x‖²) and gx from Γ((N − 1)/2, 2/‖L x‖²) with the
//! quadratic norms of `image_quad_norm` (a half-spectrum frequency off the first column counts
//! twice), the sum of samples from iteration `burnin` + 1, its mean's relative change `delta`,
//! and the stop once past `min_num_iter` with delta below `threshold` (or at `max_num_iter`).
//! In 2D that is scikit-image's computation; for 3D and 4D lucent transforms every axis (where
//! scikit-image's 2D transforms and norms of the last two axes do not fit its N-D transfer
//! functions).
//!
//! The draws: the object's normals come from a counter-based hash of (seed, iteration,
//! frequency) on the device, the two gamma draws from [`crate::phantom::Rng`] on the host, both
//! from `seed`. They are not numpy's: for the same seed the chains differ from scikit-image's
//! draw by draw and agree in law (the tests compare their statistics); the f64 reference draws
//! exactly lucent's numbers, so the GPU is tested against it step by step.
//!
//! On the GPU each iteration is one recorded pass over the half spectrum (the sample, the sums'
//! terms, the running sum) and one reduction of four sums, read back for the host's gamma draws
//! and the stopping rule (a few bytes each way).

use ndarray::{ArrayD, ArrayViewD, IxDyn};
use num_complex::Complex64;
use serde::Serialize;

use super::wiener::{at_origin, check_wiener, record_transfer};
use crate::error::{Error, Result};
use crate::fft::{FftPlan, Norm, Transform};
use crate::gpu::{Dtype, Gpu, GpuArray};
use crate::graph::Recording;
use crate::kernels::unary::{self, UnaryOp};
use crate::kernels::{fill, gibbs_wiener};
use crate::ops::reduce::{self, Reduction};
use crate::phantom::Rng;

/// scikit-image's `user_params` (its names and defaults).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct GibbsParams {
    pub threshold: f64,
    pub max_num_iter: usize,
    pub min_num_iter: usize,
    pub burnin: usize,
}

impl Default for GibbsParams {
    fn default() -> GibbsParams {
        GibbsParams { threshold: 1e-4, max_num_iter: 200, min_num_iter: 30, burnin: 15 }
    }
}

/// Most iterations a run may ask for.
pub const MAX_GIBBS_ITERATIONS: usize = 100_000;

impl GibbsParams {
    fn check(&self) -> Result<()> {
        if !(self.threshold.is_finite() && self.threshold >= 0.0) || self.max_num_iter > MAX_GIBBS_ITERATIONS || self.max_num_iter < self.burnin + 2 {
            return Err(Error::Invalid(format!(
                "unsupervised_wiener: threshold {} (finite, not negative), max_num_iter {} (from burnin + 2 = {} to {MAX_GIBBS_ITERATIONS}: the mean needs a sample past the burn-in)",
                self.threshold,
                self.max_num_iter,
                self.burnin + 2
            )));
        }
        Ok(())
    }
}

/// The posterior mean and the chains (scikit-image's `(x_postmean, {'noise': ..., 'prior': ...})`).
pub struct Unsupervised<T> {
    pub estimate: ArrayD<T>,
    /// gn, the noise precision: 1, then one draw per iteration.
    pub noise: Vec<f64>,
    /// gx, the prior precision.
    pub prior: Vec<f64>,
}

/// The quadratic norms' hermitian rule of scikit-image's `image_quad_norm`: the half spectrum's
/// frequencies off the first column count twice unless its last two axes have one length.
fn hermitian(dims: &[usize]) -> bool {
    let half_last = dims[dims.len() - 1] / 2 + 1;
    dims.len() < 2 || half_last != dims[dims.len() - 2]
}

/// The host's side of one iteration: draws gn and gx from the sums, updates delta; true when
/// the run stops here.
struct Chain {
    rng: Rng,
    noise: Vec<f64>,
    prior: Vec<f64>,
    delta: f64,
    size: f64,
}

impl Chain {
    fn new(seed: u64) -> Chain {
        Chain { rng: Rng::new(seed), noise: vec![1.0], prior: vec![1.0], delta: f64::NAN, size: 0.0 }
    }

    /// The phase of `iteration` (0: burn-in; 1: the first sample summed; 2: summed, change
    /// measured) and t = iteration − burnin.
    fn phase(p: &GibbsParams, iteration: usize) -> (u32, f64) {
        let t = iteration as f64 - p.burnin as f64;
        match iteration {
            i if i <= p.burnin => (0, t),
            i if i == p.burnin + 1 => (1, t),
            _ => (2, t),
        }
    }

    /// `sums` = (‖Y − H x‖², ‖L x‖², Σ|change|, Σ|sum of samples|) of the iteration's sample.
    fn step(&mut self, p: &GibbsParams, iteration: usize, n: usize, sums: [f64; 4]) -> Result<bool> {
        if !sums.iter().all(|s| s.is_finite()) || sums[0] <= 0.0 || sums[1] <= 0.0 {
            return Err(Error::NonFinite(format!(
                "unsupervised_wiener: the sampler's norms at iteration {iteration} are {:?} (a PSF whose transfer function vanishes where the Laplacian does?)",
                &sums[..2]
            )));
        }
        let n = n as f64;
        self.noise.push(self.rng.gamma(n / 2.0, 2.0 / sums[0]));
        self.prior.push(self.rng.gamma((n - 1.0) / 2.0, 2.0 / sums[1]));
        let (phase, t) = Chain::phase(p, iteration);
        if phase == 2 {
            self.delta = sums[2] / sums[3] / t;
        }
        self.size = sums[3];
        Ok(iteration > p.min_num_iter && self.delta < p.threshold)
    }
}

/// scikit-image's `unsupervised_wiener(image, psf, user_params=p, clip=clip, rng=seed)` on the
/// GPU (see the module's notes on the draws): 1 to 4 axes, the PSF of the image's rank.
pub fn unsupervised_wiener(gpu: &Gpu, image: &ArrayViewD<f32>, psf: &ArrayViewD<f32>, p: &GibbsParams, clip: bool, seed: u64) -> Result<Unsupervised<f32>> {
    p.check()?;
    check_wiener(image.shape(), psf, 0.0)?;
    crate::check::check_finite(image, "the image")?;
    let dims = image.shape().to_vec();
    let n: usize = dims.iter().product();
    let axes: Vec<usize> = (0..dims.len()).collect();
    let half: Vec<usize> = dims.iter().enumerate().map(|(a, &d)| if a + 1 == dims.len() { d / 2 + 1 } else { d }).collect();

    // The image's spectrum and the transfer function, resident; the sum of samples, zero.
    let mut rec = Recording::new(gpu);
    let x = rec.upload_once_f32(image)?;
    let forward = FftPlan::cached(gpu, &dims, &axes, Transform::RealForward, Norm::Backward)?;
    let y = forward.record(&mut rec, x)?;
    let h = record_transfer(&mut rec, psf, &dims)?;
    let zeros = rec.temp(&half, Dtype::C32)?;
    fill::record(&mut rec, zeros, 0.0);
    let (y, h, zeros) = (rec.output(y), rec.output(h), rec.output(zeros));
    let results = rec.compile()?.run(gpu)?;
    let (spectrum, transfer, total) = (results.array(y), results.array(h), results.array(zeros));
    let state = GpuArray::empty(gpu, &[8], Dtype::U32)?;

    let mut rec = Recording::new(gpu);
    let (sb, tb, totb, stb) = (rec.input(&spectrum), rec.input(&transfer), rec.input(&total), rec.input(&state));
    let seed32 = (seed ^ (seed >> 32)) as u32;
    let terms = gibbs_wiener::record(&mut rec, sb, tb, totb, stb, &dims, (1.0 / (n as f64).sqrt()) as f32, seed32, hermitian(&dims))?;
    let sums = reduce::record(&mut rec, terms, Reduction::Sum, Some(1))?;
    let d = rec.download(sums);
    let step = rec.compile()?;

    let mut chain = Chain::new(seed);
    let mut last = 0;
    for iteration in 0..p.max_num_iter {
        let (phase, t) = Chain::phase(p, iteration);
        let words = [chain.noise.last().copied().unwrap() as f32, chain.prior.last().copied().unwrap() as f32];
        let state_words: [u32; 8] = [words[0].to_bits(), words[1].to_bits(), iteration as u32, phase, (t as f32).to_bits(), 0, 0, 0];
        gpu.scoped(|| gpu.write_streamed(&state.buffer, 0, bytemuck::cast_slice(&state_words)))??;
        let s = step.run(gpu)?.into_f32(d)?;
        let s = s.as_slice().expect("four sums");
        let sums = [s[0] as f64, s[1] as f64, s[2] as f64, s[3] as f64];
        last = iteration;
        if chain.step(p, iteration, n, sums)? {
            break;
        }
    }

    // The posterior mean: the sum over the samples kept, back through the unitary inverse.
    let kept = (last - p.burnin) as f64;
    let mut rec = Recording::new(gpu);
    let tot = rec.input(&total);
    let inverse = FftPlan::cached(gpu, &half, &axes, Transform::RealInverse { len: dims[dims.len() - 1] }, Norm::Backward)?;
    let out = inverse.record(&mut rec, tot)?;
    let out = unary::record(&mut rec, UnaryOp::Scale(((n as f64).sqrt() / kept) as f32), out)?;
    let out = if clip { unary::record(&mut rec, UnaryOp::Clamp { lo: -1.0, hi: 1.0 }, out)? } else { out };
    let dl = rec.download(out);
    let estimate = rec.run()?.into_f32(dl)?;
    Ok(Unsupervised { estimate, noise: chain.noise, prior: chain.prior })
}

/// The f64 reference: the same sampler with the same draws (the kernel's hashed normals in f64,
/// the same host gamma draws), full complex transforms restricted to the half spectrum.
pub fn unsupervised_wiener_reference(image: &ArrayD<f64>, psf: &ArrayD<f64>, p: &GibbsParams, clip: bool, seed: u64) -> Result<Unsupervised<f64>> {
    p.check()?;
    check_wiener(image.shape(), &psf.mapv(|v| v as f32).view(), 0.0)?;
    crate::check::check_finite(&image.mapv(|v| v as f32).view(), "the image")?;
    let dims = image.shape().to_vec();
    let n: usize = dims.iter().product();
    let axes: Vec<usize> = (0..dims.len()).collect();
    let y = crate::fft::cpu::r2c(image, &axes, Norm::Backward).mapv(|v| v / (n as f64).sqrt());
    let h = crate::fft::cpu::r2c(&at_origin(&psf.view(), &dims), &axes, Norm::Backward);
    let half = y.shape().to_vec();
    let laplacian = ArrayD::from_shape_fn(IxDyn(&half), |k| {
        (0..dims.len()).map(|a| 2.0 - 2.0 * (2.0 * std::f64::consts::PI * k[a] as f64 / dims[a] as f64).cos()).sum::<f64>()
    });
    let weight = |k: &IxDyn| if hermitian(&dims) && k[dims.len() - 1] != 0 { 2.0 } else { 1.0 };
    let seed32 = (seed ^ (seed >> 32)) as u32;
    let mut total = ArrayD::<Complex64>::zeros(IxDyn(&half));
    let mut chain = Chain::new(seed);
    let mut last = 0;
    for iteration in 0..p.max_num_iter {
        let (phase, t) = Chain::phase(p, iteration);
        let (gn, gx) = (*chain.noise.last().unwrap(), *chain.prior.last().unwrap());
        let mut sums = [0.0; 4];
        for (i, ((k, &yk), &hk)) in y.indexed_iter().zip(h.iter()).enumerate() {
            let l = laplacian[&k];
            let precision = gn * hk.norm_sqr() + gx * l * l;
            let (n1, n2) = gibbs_wiener::normals(seed32, iteration as u32, i as u32);
            let x = gn * hk.conj() * yk / precision + (0.5 / precision).sqrt() * Complex64::new(n1, n2);
            let w = weight(&k);
            sums[0] += w * (yk - hk * x).norm_sqr();
            sums[1] += w * (x * l).norm_sqr();
            if phase > 0 {
                let before = total[&k];
                let after = before + x;
                total[&k] = after;
                if phase == 2 {
                    sums[2] += (after / t - before / (t - 1.0)).norm();
                    sums[3] += after.norm();
                }
            }
        }
        last = iteration;
        if chain.step(p, iteration, n, sums)? {
            break;
        }
    }
    let kept = (last - p.burnin) as f64;
    let x = crate::fft::cpu::c2r(&total, &axes, dims[dims.len() - 1], Norm::Backward).mapv(|v| v * (n as f64).sqrt() / kept);
    Ok(Unsupervised { estimate: if clip { x.mapv(|v| v.clamp(-1.0, 1.0)) } else { x }, noise: chain.noise, prior: chain.prior })
}
