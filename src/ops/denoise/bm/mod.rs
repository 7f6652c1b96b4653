//! Block-matching collaborative filtering: BM3D for images (Dabov et al. 2007), BM4D for
//! volumes (Maggioni et al. 2013), with bm4d 4.2.5's names, and series of volumes (t, z, y, x)
//! whose groups gather blocks from the neighbouring time points too (`search_window_time`,
//! lucent's: ±1 by default; 0 is bm4d frame by frame). Everything runs over four axes (an
//! image is (1, rows, cols, 1), a volume (1, z, y, x)); blocks are one time point thick. Two
//! stages, each over a grid of reference blocks (every `step`, the last block of each axis
//! included):
//! - **matching**: the blocks of the search window (±`search_window`, clipped to the data)
//!   nearest the reference block by their sum of squared differences (plus a penalty per offset
//!   for correlated noise, [`noise`]), the reference first, then
//!   nearest first (ties to the lower linear index), those within `tau_match` · range² (the
//!   range of the matched data), at least two where two exist, at most `max_stack_size`, the
//!   count rounded down to a power of two;
//! - **collaborative filtering** of the group: the blocks' separable local transform (bior1.5
//!   for hard thresholding, the DCT for Wiener filtering), the orthonormal Haar transform along
//!   the group; hard thresholding at `lambda_thr` · (the coefficient's noise standard
//!   deviation: σ but for bior1.5's non-orthonormal 8-point rows, or from a PSD: [`noise`]), or
//!   the Wiener shrinkage B²/(B² + `mu2` · the coefficient's noise variance) of the first
//!   estimate's coefficients B; the inverse transforms;
//! - **aggregation**: each block's estimate added with weight 1/(σ² · kept coefficients) (1
//!   where none is kept) or 1/(σ² · max(Σ shrinkage², 2⁻¹²)) times a Kaiser window (for
//!   correlated noise each coefficient counted by its variance's share, [`noise`]), divided by
//!   the weights.
//!
//! The second stage matches on the first's estimate and shrinks the noisy data with its
//! spectra. On the device: matching a reference block a workgroup (the window's distances in
//! workgroup memory, 3520 at a time, then the group by repeated minima over them and the list
//! kept so far), filtering a group a workgroup (its blocks in workgroup memory, the group
//! transform in registers), and the aggregation by integer atomics on 64-bit fixed point (wgpu
//! has no float atomics; integer sums do not depend on the order of the adds, so the result is
//! deterministic, and every group runs at once). The data are scaled by a power of two to
//! magnitudes at most 1 for it (exact, undone after); the floor on Σ shrinkage² keeps weights
//! below 2¹² and the sums within range. (Colours of the reference grid whose groups share no
//! voxel, each group adding its blocks in turn, were 343 dispatches a stage, latency-bound:
//! 70 ms of a 64³ volume's 105 ms, BENCHMARKS run 46.)
//!
//! bm4d's library is closed; its published profile leaves out how it shifts its reference
//! blocks and how it matches under exact noise variances. With its 'np' profile as written,
//! this algorithm's volumes come out 0.3-1 dB short of bm4d's in smooth regions; its Wiener
//! stage on 4³ DCT blocks with μ² = 0.7 and a flat window comes within 0.3 dB of bm4d (often
//! above it): [`Profile::volume`] is that. Images use bm4d's 8 × 8 profile with BM3D's μ² = 1
//! (bm4d's 0.4 for white noise lost 0.2-0.5 dB here; 1 came within 0.3 dB of bm4d on
//! camera crops and phantoms of 61 × 47 and above it on 96 × 80).

pub mod cpu;
pub mod noise;
pub mod transform;

use ndarray::{ArrayD, ArrayViewD, IxDyn};

use crate::error::{Error, Result};
use crate::gpu::{Dtype, Gpu};
use crate::graph::{Buf, Recording};
use crate::kernels::bm_filter::Shrinkage;
use crate::kernels::bm_match::Matching;
pub use noise::{Covariance, Noise, Penalty};
use transform::Local;

/// bm4d's profile: the two stages' block sizes, steps, group sizes, search windows, matching
/// thresholds and shrinkage, in the data's axis order (an image is (rows, cols, 1)).
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    pub bs_ht: [usize; 3],
    pub step_ht: [usize; 3],
    pub max_stack_size_ht: usize,
    pub search_window_ht: [usize; 3],
    pub tau_match: f64,
    pub lambda_thr: f64,
    pub beta: f64,
    pub bs_wiener: [usize; 3],
    pub step_wiener: [usize; 3],
    pub max_stack_size_wiener: usize,
    pub search_window_wiener: [usize; 3],
    pub tau_match_wiener: f64,
    pub mu2: f64,
    pub beta_wiener: f64,
    /// lucent's: for series (t, z, y, x), the time points either side each search window
    /// reaches (0: every time point on its own, as bm4d per frame).
    pub search_window_time: usize,
}

impl Profile {
    /// Volumes: bm4d's 'np' hard-thresholding stage (4³ bior1.5 blocks, λ 3.0); the Wiener stage
    /// on 4³ DCT blocks, μ² 0.7, a flat window (see the module's note).
    pub fn volume() -> Profile {
        Profile {
            bs_ht: [4; 3],
            step_ht: [3; 3],
            max_stack_size_ht: 16,
            search_window_ht: [7; 3],
            tau_match: 2.9527,
            lambda_thr: 3.0,
            beta: 2.0,
            bs_wiener: [4; 3],
            step_wiener: [3; 3],
            max_stack_size_wiener: 32,
            search_window_wiener: [7; 3],
            tau_match_wiener: 0.7689,
            mu2: 0.7,
            beta_wiener: 0.0,
            search_window_time: 1,
        }
    }

    /// Images and volumes thinner than 5 planes: bm4d's 8 × 8 profile (`BM4DProfile2D`), μ² 1.
    pub fn image() -> Profile {
        Profile {
            bs_ht: [8, 8, 1],
            step_ht: [3, 3, 1],
            max_stack_size_ht: 16,
            search_window_ht: [7, 7, 7],
            tau_match: 2.9527,
            lambda_thr: 3.0,
            beta: 2.0,
            bs_wiener: [8, 8, 1],
            step_wiener: [3, 3, 1],
            max_stack_size_wiener: 32,
            search_window_wiener: [7, 7, 7],
            tau_match_wiener: 0.3937,
            mu2: 1.0,
            beta_wiener: 2.0,
            search_window_time: 1,
        }
    }

    /// Volumes with strongly correlated noise (a PSD): the Wiener stage on bm4d's 5³ DCT blocks
    /// with its Kaiser window (β 2) and μ² 1 (see [`Profile::for_noise`]).
    pub fn correlated_volume() -> Profile {
        Profile { bs_wiener: [5; 3], beta_wiener: 2.0, mu2: 1.0, ..Profile::volume() }
    }

    /// bm4d's choice for data of `shape` (as 4-D, time first): the volume profile where the last
    /// axis holds 5 samples, else the image profile.
    pub fn for_shape(shape: [usize; 4]) -> Profile {
        if shape[3] >= 5 {
            Profile::volume()
        } else {
            Profile::image()
        }
    }

    /// [`Profile::for_shape`] of an image, a volume or a series of `shape`.
    pub fn for_data(shape: &[usize]) -> Result<Profile> {
        Ok(Profile::for_shape(as4(shape)?))
    }

    /// [`Profile::for_data`], but volumes whose noise is correlated at low frequencies (the
    /// noise variance of a 4³ block's mean more than [`LOW_FREQUENCY_SHARE`] times white
    /// noise's of the same variance) get [`Profile::correlated_volume`]. On a 48³ phantom the
    /// white-noise Wiener stage (4³, flat, μ² 0.7) was 0.5 dB better at a share of 1.6 (noise
    /// through a short kernel), even at 2.8 (a Gaussian of sd 0.5 samples), and 0.4-1.7 dB
    /// worse at 3.0 (a 5-sample line), 8.1 and 17 (Gaussians of sd 0.7 and 1), where the
    /// other came within 0.3 dB of bm4d (which fits λ and μ² to each PSD from a learned table).
    /// Fails on a σ or PSD that is not usable.
    pub fn for_noise(shape: &[usize], noise: &Noise) -> Result<Profile> {
        Ok(resolve(as4(shape)?, noise, None)?.0)
    }

    /// [`Profile::for_noise`]'s choice from a covariance holding lags to 3 at least.
    fn for_covariance(shape: [usize; 4], noise: &Covariance) -> Result<Profile> {
        if shape[3] < 5 || matches!(noise, Covariance::White(_)) {
            return Ok(Profile::for_shape(shape));
        }
        let (f, _) = transform::matrices(Local::Dct, 4)?;
        let (variance, alone) = noise.variances([1, 4, 4, 4], &[vec![1.0], f.clone(), f.clone(), f]);
        Ok(if variance[0] > LOW_FREQUENCY_SHARE * alone[0] { Profile::correlated_volume() } else { Profile::for_shape(shape) })
    }

    /// One stage's settings, its matching threshold from the matched data's `range`.
    pub fn spec(&self, wiener: bool, range: f64) -> Spec {
        if wiener {
            Spec {
                bs: time(1, self.bs_wiener),
                step: time(1, self.step_wiener),
                win: time(self.search_window_time, self.search_window_wiener),
                maxn: self.max_stack_size_wiener,
                tau: self.tau_match_wiener,
                cap: self.tau_match_wiener * range * range,
                local: Local::Dct,
                beta: self.beta_wiener,
                wiener: true,
                lambda: self.lambda_thr,
                mu2: self.mu2,
            }
        } else {
            Spec {
                bs: time(1, self.bs_ht),
                step: time(1, self.step_ht),
                win: time(self.search_window_time, self.search_window_ht),
                maxn: self.max_stack_size_ht,
                tau: self.tau_match,
                cap: self.tau_match * range * range,
                local: Local::Bior15,
                beta: self.beta,
                wiener: false,
                lambda: self.lambda_thr,
                mu2: self.mu2,
            }
        }
    }

    /// The noise covariance's lags either stage uses on data of `shape` (t, z, y, x): between
    /// blocks of a group ([`Spec::spread_reach`]) and within them.
    pub fn lags(&self, shape: [usize; 4]) -> [usize; 4] {
        let (a, b) = (self.spec(false, 1.0), self.spec(true, 1.0));
        std::array::from_fn(|i| (a.spread_reach(shape)[i] + a.bs[i]).max(b.spread_reach(shape)[i] + b.bs[i]) - 1)
    }

    /// Fails on sizes the kernels do not hold or data smaller than a block.
    pub fn check(&self, shape: [usize; 4]) -> Result<()> {
        for wiener in [false, true] {
            let s = self.spec(wiener, 1.0);
            let name = if wiener { "Wiener" } else { "hard-thresholding" };
            let voxels: usize = s.bs.iter().product();
            if s.bs.iter().any(|&b| !(1..=8).contains(&b)) || voxels > 125 {
                return Err(Error::Invalid(format!("{name} blocks of {:?}: sides 1 to 8, at most 125 samples", &s.bs[1..])));
            }
            if !(1..=32).contains(&s.maxn) || s.maxn * voxels > GROUP_VALUES {
                return Err(Error::Invalid(format!(
                    "{name} groups of {} blocks of {voxels} samples: 1 to 32 blocks, at most {GROUP_VALUES} samples together",
                    s.maxn
                )));
            }
            if s.step.contains(&0) || s.win.iter().any(|&w| w > 1024) {
                return Err(Error::Invalid(format!("{name} steps {:?} (1 or more) and search windows {:?} (0 to 1024)", &s.step[1..], &s.win[1..])));
            }
            if s.bs.iter().zip(shape).any(|(&b, n)| b > n) {
                return Err(Error::Invalid(format!("data of shape {:?} smaller than the {name} blocks {:?}", &shape[1..], &s.bs[1..])));
            }
            let finite = [s.cap, s.lambda, s.mu2, s.beta].iter().all(|v| v.is_finite() && *v >= 0.0);
            if !finite {
                return Err(Error::Invalid(format!("{name} thresholds, mu2 and beta must be finite and 0 or more")));
            }
        }
        Ok(())
    }
}

/// (t, a, b, c) of a spatial triple.
fn time(t: usize, a: [usize; 3]) -> [usize; 4] {
    [t, a[0], a[1], a[2]]
}

/// The noise variance of a 4³ block's mean over white noise's above which a volume's correlated
/// noise gets [`Profile::correlated_volume`] ([`Profile::for_noise`]).
pub const LOW_FREQUENCY_SHARE: f64 = 2.0;

/// The largest offset between blocks of a group, per axis, at which correlated noise's
/// covariance is taken (bm4d computes its variances over a 16³ domain).
pub const SPREAD_REACH: usize = 16;

/// Values of one group the filtering kernel holds in workgroup memory.
pub const GROUP_VALUES: usize = 4000;

/// One stage's settings over (t, z, y, x).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spec {
    pub bs: [usize; 4],
    pub step: [usize; 4],
    pub win: [usize; 4],
    pub maxn: usize,
    /// τ, and the largest sum of squared differences a match may have (τ · range²; the device
    /// takes the range from the matched data itself).
    pub tau: f64,
    pub cap: f64,
    pub local: Local,
    pub beta: f64,
    pub wiener: bool,
    pub lambda: f64,
    pub mu2: f64,
}

impl Spec {
    /// Reference blocks along each axis of data of `shape`.
    pub fn grid(&self, shape: [usize; 4]) -> [usize; 4] {
        std::array::from_fn(|a| (shape[a] - self.bs[a]).div_ceil(self.step[a]) + 1)
    }

    /// The reference block `i` of an axis of `n` samples: every step, the last one at n − b.
    pub fn position(&self, a: usize, i: usize, n: usize) -> usize {
        (i * self.step[a]).min(n - self.bs[a])
    }

    /// Voxel `v` of a block (row-major) as coordinates.
    pub fn coords(&self, v: usize) -> [usize; 4] {
        let b = self.bs;
        [v / (b[1] * b[2] * b[3]), (v / (b[2] * b[3])) % b[1], (v / b[3]) % b[2], v % b[3]]
    }

    /// Correlated noise's matching penalties ([`Penalty`]), in both stages (the first estimate
    /// keeps some of the correlated noise: penalising the second stage's matching too gained
    /// 0.1-0.4 dB on the strongly correlated cases tried, nothing lost on the others).
    pub fn penalty(&self, noise: &Covariance) -> Option<Penalty> {
        Penalty::of(noise, self.bs.iter().product(), self.win)
    }

    /// The offsets between blocks of a group that correlated noise's covariance is taken at
    /// (beyond them, 0): those a search window allows (2 · window, within the data), at most
    /// [`SPREAD_REACH`] per axis.
    pub fn spread_reach(&self, shape: [usize; 4]) -> [usize; 4] {
        std::array::from_fn(|a| (2 * self.win[a]).min(shape[a].saturating_sub(self.bs[a])).min(SPREAD_REACH))
    }

    /// The local transforms (forward, inverse) per axis, each coefficient's noise variance, white
    /// noise's of the same variance, the covariance between blocks of correlated noise (see
    /// [`noise`]), and the aggregation window, over the block in row-major order, for data of
    /// `shape`.
    pub fn tables(&self, noise: &Covariance, shape: [usize; 4]) -> Result<Tables> {
        let mut forward = Vec::new();
        let mut inverse = Vec::new();
        for &n in &self.bs {
            let (f, i) = transform::matrices(self.local, n)?;
            forward.push(f);
            inverse.push(i);
        }
        let windows: Vec<Vec<f64>> = (0..4).map(|a| transform::kaiser(self.bs[a], self.beta)).collect();
        let voxels: usize = self.bs.iter().product();
        let window = (0..voxels).map(|v| (0..4).map(|a| windows[a][self.coords(v)[a]]).product()).collect();
        let (variance, white) = noise.variances(self.bs, &forward);
        let reach = self.spread_reach(shape);
        let spread = noise.spread(self.bs, &forward, reach);
        Ok(Tables { forward, inverse, variance, white, window, spread, reach })
    }
}

/// A stage's constant tables (see [`Spec::tables`]).
pub struct Tables {
    pub forward: Vec<Vec<f64>>,
    pub inverse: Vec<Vec<f64>>,
    pub variance: Vec<f64>,
    pub white: Vec<f64>,
    pub window: Vec<f64>,
    /// A_v(Δ) for |Δ| ≤ reach ([`Covariance::spread`]); None for white noise.
    pub spread: Option<Vec<f64>>,
    pub reach: [usize; 4],
}

impl Tables {
    /// The kernel's table: forward then inverse matrices (4 × 8 × 8 each, zero-padded), then
    /// the variances, the window and white noise's variances (128 each), then the spread.
    fn packed(&self, bs: [usize; 4]) -> Vec<f32> {
        let mut t = vec![0f32; 2 * 256 + 3 * 128];
        t.extend(self.spread.iter().flatten().map(|&v| v as f32));
        for a in 0..4 {
            for r in 0..bs[a] {
                for c in 0..bs[a] {
                    t[a * 64 + r * 8 + c] = self.forward[a][r * bs[a] + c] as f32;
                    t[256 + a * 64 + r * 8 + c] = self.inverse[a][r * bs[a] + c] as f32;
                }
            }
        }
        for v in 0..self.variance.len() {
            t[512 + v] = self.variance[v] as f32;
            t[640 + v] = self.window[v] as f32;
            t[768 + v] = self.white[v] as f32;
        }
        t
    }
}

/// Which stages run: both, the first alone, or the second on a given first estimate (bm4d's
/// `stage_arg`).
#[derive(Clone, Debug)]
pub enum Stage<'a> {
    All,
    HardThresholding,
    Wiener(ArrayViewD<'a, f32>),
}

/// bm4d(z, sigma_psd, profile, stage_arg) of an image, a volume or a series of volumes (t, z,
/// y, x: matched across `search_window_time` time points either side) with white noise of a
/// standard deviation or correlated noise of a PSD ([`Noise`]), on the device; `z`'s shape.
/// `profile` None is bm4d's choice by shape and noise ([`Profile::for_noise`]).
pub fn bm4d(gpu: &Gpu, z: &ArrayViewD<f32>, noise: &Noise, profile: Option<&Profile>, stage: Stage) -> Result<ArrayD<f32>> {
    let shape = as4(z.shape())?;
    if z.is_empty() {
        return Err(Error::Empty(format!("block matching of an array of shape {:?}", z.shape())));
    }
    let (profile, noise) = resolve(shape, noise, profile)?;
    crate::check::check_finite(z, "the data to denoise")?;
    let pilot = match &stage {
        Stage::Wiener(p) if p.shape() != z.shape() => {
            return Err(Error::Shape(format!("a first estimate of shape {:?} for data of shape {:?}", p.shape(), z.shape())));
        }
        Stage::Wiener(p) => {
            crate::check::check_finite(p, "the first estimate")?;
            Some(p.view())
        }
        _ => None,
    };
    // Block matching is scale-equivariant with the noise: the data run scaled by a power of two
    // to magnitudes in (1/2, 1] (the fixed-point sums' range), scaled back exactly.
    let largest = crate::check::largest_magnitude(z).max(pilot.as_ref().map_or(0.0, crate::check::largest_magnitude));
    let e = if largest > 0.0 { -(largest as f64).log2().ceil() as i32 } else { 0 };
    let scale = |x: &ArrayViewD<f32>| -> Result<ArrayD<f32>> {
        let x = if e == 0 { x.to_owned() } else { crate::check::scaled(x, e) };
        x.into_shape_with_order(IxDyn(&shape)).map_err(|err| Error::Invalid(err.to_string()))
    };
    let zs = scale(z)?;
    let ps = pilot.as_ref().map(scale).transpose()?;
    let y = run(gpu, &zs.view(), &noise.scaled(2f64.powi(e)), &profile, ps.as_ref().map(|p| p.view()), matches!(stage, Stage::HardThresholding))?;
    let y = if e == 0 { y } else { crate::check::scaled(&y.view(), -e) };
    crate::check::check_finite(&y.view(), "the denoised data")?;
    y.into_shape_with_order(z.raw_dim()).map_err(|err| Error::Invalid(err.to_string()))
}

/// The profile (`profile`, or [`Profile::for_noise`]'s choice), checked against data of
/// `shape`, and the noise's covariance at the lags it uses: the PSD's autocovariance computed
/// once, at lags enough for either choice.
pub fn resolve(shape: [usize; 4], noise: &Noise, profile: Option<&Profile>) -> Result<(Profile, Covariance)> {
    let (profile, noise) = match profile {
        Some(p) => (p.clone(), Covariance::of(noise, shape, p.lags(shape))?),
        None => {
            // Volumes may get either profile; their lags reach 3 (a 4³ block's), as the choice needs.
            let white = Profile::for_shape(shape);
            let lags = if shape[3] >= 5 { Profile::correlated_volume().lags(shape) } else { white.lags(shape) };
            let noise = Covariance::of(noise, shape, std::array::from_fn(|a| lags[a].max(white.lags(shape)[a])))?;
            (Profile::for_covariance(shape, &noise)?, noise)
        }
    };
    profile.check(shape)?;
    Ok((profile, noise))
}

/// (t, d0, d1, d2) of an image (1, rows, cols, 1: bm4d's axes), a volume (1, ...) or a series.
pub fn as4(shape: &[usize]) -> Result<[usize; 4]> {
    match *shape {
        [r, c] => Ok([1, r, c, 1]),
        [a, b, c] => Ok([1, a, b, c]),
        [t, a, b, c] => Ok([t, a, b, c]),
        _ => Err(Error::Invalid(format!("block matching of an array of {} axes: images (2), volumes (3) and series (4)", shape.len()))),
    }
}

/// Device memory of one stage over `shape`: the data, the pilot, the sums and the groups.
fn stage_bytes(spec: &Spec, shape: [usize; 4]) -> u64 {
    let voxels: u64 = shape.iter().map(|&v| v as u64).product();
    let refs: u64 = spec.grid(shape).iter().map(|&v| v as u64).product();
    4 * (4 * voxels + refs * (spec.maxn as u64 + 1))
}

/// The stages on 4-D data near 1 in magnitude.
fn run(gpu: &Gpu, z: &ArrayViewD<f32>, noise: &Covariance, profile: &Profile, pilot: Option<ArrayViewD<f32>>, ht_only: bool) -> Result<ArrayD<f32>> {
    let shape = as4(z.shape())?;
    for wiener in [false, true] {
        let spec = profile.spec(wiener, 1.0);
        let bytes = stage_bytes(&spec, shape);
        let refs: u64 = spec.grid(shape).iter().map(|&v| v as u64).product();
        let limit = gpu.memory_budget_bytes();
        if bytes > limit || 4 * refs * spec.maxn as u64 > gpu.max_buffer_bytes() || 4 * z.len() as u64 > gpu.max_buffer_bytes() {
            return Err(Error::TooLarge { what: format!("block matching of {shape:?} (data, estimate, sums and groups)"), bytes, limit });
        }
    }
    // Both stages in one submission: each matching takes its cap's range from the device.
    let mut rec = Recording::new(gpu);
    let zb = rec.upload_f32(z)?;
    let basic = match &pilot {
        Some(p) => rec.upload_f32(p)?,
        None => stage(&mut rec, zb, zb, &profile.spec(false, 1.0), noise)?,
    };
    let y = if ht_only { basic } else { stage(&mut rec, zb, basic, &profile.spec(true, 1.0), noise)? };
    let d = rec.download(y);
    rec.run()?.into_f32(d)
}

/// One stage: matching on `pilot` (the cap from its range on the device; `spec.cap` unused),
/// filtering `noisy`, the weighted mean of the estimates.
pub fn stage(rec: &mut Recording, noisy: Buf, pilot: Buf, spec: &Spec, noise: &Covariance) -> Result<Buf> {
    let dims = rec.dims(noisy).to_vec();
    let shape = [dims[0], dims[1], dims[2], dims[3]];
    let tables = spec.tables(noise, shape)?;
    let spread = tables.spread.is_some().then_some(tables.reach);
    let tables = tables.packed(spec.bs);
    let tables = rec.upload_f32(&ndarray::ArrayD::from_shape_vec(IxDyn(&[tables.len()]), tables).expect("a table").view())?;
    let grid = spec.grid(shape);
    let m = Matching { block: spec.bs, grid, step: spec.step, window: spec.win, most: spec.maxn, tau: spec.tau as f32 };
    let lowest = crate::ops::reduce::record(rec, pilot, crate::ops::reduce::Reduction::Min, None)?;
    let highest = crate::ops::reduce::record(rec, pilot, crate::ops::reduce::Reduction::Max, None)?;
    let penalty = match spec.penalty(noise) {
        Some(p) => Some((rec.upload_f32(&ndarray::ArrayD::from_shape_vec(IxDyn(&[p.values.len()]), p.values).expect("a table").view())?, p.reach)),
        None => None,
    };
    let (groups, counts) = crate::kernels::bm_match::record(rec, pilot, lowest, highest, &m, penalty)?;
    let voxels: usize = dims.iter().product();
    let num = rec.temp(&[2 * voxels], Dtype::U32)?;
    let den = rec.temp(&[2 * voxels], Dtype::U32)?;
    crate::kernels::fill::record(rec, num, 0.0);
    crate::kernels::fill::record(rec, den, 0.0);
    let shrinkage = if spec.wiener { Shrinkage::Wiener { mu2: spec.mu2 as f32 } } else { Shrinkage::Hard { lambda: spec.lambda as f32 } };
    crate::kernels::bm_filter::record(rec, noisy, pilot, groups, counts, tables, num, den, &m, shrinkage, spread)?;
    crate::kernels::bm_normalize::record(rec, num, den, &dims)
}
