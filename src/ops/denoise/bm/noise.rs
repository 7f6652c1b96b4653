//! The noise block matching shrinks against: white of a known σ, or correlated, given by its
//! power spectral density as bm4d takes it (`sigma_psd` of the data's shape: white noise of σ is
//! N · σ² everywhere, N the data's size). For correlated noise every coefficient of a group's
//! transform gets its exact noise variance for stationary (circular) noise of that PSD
//! (Mäkinen, Azzari and Foi 2020): Σ_{m,m'} H_h(m) H_h(m') A_v(p_m − p_m') over the group's
//! blocks at p_m, H_h the Haar vectors along the group, and A_v(Δ) = Σᵤ Σ_w tᵥ(u) tᵥ(w)
//! C(u − w + Δ) the covariance of block coefficient v between blocks Δ apart, C the
//! autocovariance (the PSD's inverse DFT over N, needed only at the lags a group spans; taken
//! as 0 between blocks more than [`super::SPREAD_REACH`] apart). Blocks near one another share
//! noise: the group's mean carries more of it and its differences less than independent blocks
//! would. Thresholds (λ · √variance) and Wiener shrinkage (B² / (B² + μ² variance)) use these;
//! the aggregation weighs an estimate by the inverse of its noise variance relative to white
//! noise's (Σ over the kept coefficients, or of shrinkage² times, of each variance over C(0) ·
//! the basis norm; each 1 for white noise, BM3D's 1 / kept and 1 / Σ shrinkage²), and the first
//! stage's matching adds a per-offset penalty ([`Penalty`]). White noise keeps bm4d's
//! algorithm: blocks independent, one variance per block coefficient (a flat PSD is not the
//! same: it counts the overlap of nearby blocks, within ±0.6 dB of the white path either way
//! on the phantoms and camera crops tried). bm4d fits λ and μ² to each PSD from a table learned
//! on its data (non-commercially licensed, not reproduced here): lucent keeps the profile's.

use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn, Zip};
use rustfft::num_complex::Complex;

use crate::error::{Error, Result};

/// The noise of [`super::bm4d`]'s data: bm4d's `sigma_psd`, a standard deviation or a PSD.
#[derive(Clone, Debug)]
pub enum Noise<'a> {
    /// White noise of this standard deviation.
    Sigma(f64),
    /// Correlated noise of this power spectral density (unshifted, DC first, as
    /// |FFT(noise)|²'s expectation): the data's shape, or one time point's for a series.
    Psd(ArrayViewD<'a, f32>),
}

/// The noise's autocovariance as the filtering needs it, over (t, z, y, x).
#[derive(Clone, Debug, PartialEq)]
pub enum Covariance {
    White(f64),
    /// C(Δ) for |Δₐ| ≤ reachₐ, at [Δ + reach] (row-major over 2 · reach + 1 per axis).
    Lags {
        reach: [usize; 4],
        c: Vec<f64>,
    },
}

impl Covariance {
    /// The covariance of `noise` on data of `shape` (4-D), at lags up to `reach` per axis
    /// ([`super::Profile::lags`]). Fails on a σ or a PSD that is not usable.
    pub fn of(noise: &Noise, shape: [usize; 4], reach: [usize; 4]) -> Result<Covariance> {
        match noise {
            Noise::Sigma(s) if s.is_finite() && *s > 0.0 => Ok(Covariance::White(*s)),
            Noise::Sigma(s) => Err(Error::Invalid(format!("sigma {s}: the noise's standard deviation, more than 0"))),
            Noise::Psd(psd) => {
                let wrong = || {
                    Error::Shape(format!(
                        "a noise PSD of shape {:?} for data of shape {:?} (as t, z, y, x): the data's shape, or one time point's",
                        psd.shape(),
                        &shape
                    ))
                };
                let p = super::as4(psd.shape()).map_err(|_| wrong())?;
                if p[1..] != shape[1..] || (p[0] != shape[0] && p[0] != 1) {
                    return Err(wrong());
                }
                if psd.iter().any(|v| !(v.is_finite() && *v >= 0.0)) {
                    return Err(Error::Invalid("the noise PSD must be finite and 0 or more everywhere".into()));
                }
                let psd = psd.to_shape(IxDyn(&p)).map_err(|e| Error::Invalid(e.to_string()))?;
                let c = autocovariance(&psd.view(), reach)?;
                if c[lag_index(reach, [0; 4]).expect("lag 0")] <= 0.0 {
                    return Err(Error::Invalid("the noise PSD is 0 everywhere: give the noise's standard deviation or a PSD of some power".into()));
                }
                Ok(Covariance::Lags { reach, c })
            }
        }
    }

    /// The covariance of the noise scaled by `f` (variances by f²).
    pub fn scaled(&self, f: f64) -> Covariance {
        match self {
            Covariance::White(s) => Covariance::White(s * f),
            Covariance::Lags { reach, c } => Covariance::Lags { reach: *reach, c: c.iter().map(|v| v * f * f).collect() },
        }
    }

    /// C(Δ); 0 beyond the lags held.
    pub fn at(&self, d: [isize; 4]) -> f64 {
        match self {
            Covariance::White(s) => {
                if d == [0; 4] {
                    s * s
                } else {
                    0.0
                }
            }
            Covariance::Lags { reach, c } => lag_index(*reach, d).map_or(0.0, |i| c[i]),
        }
    }

    /// Each coefficient's noise variance within a block (row-major over the block `bs`) of the
    /// separable transform with `forward[a]` (rows the basis) along each axis, and that of white
    /// noise of the same variance C(0) (equal for white noise).
    pub fn variances(&self, bs: [usize; 4], forward: &[Vec<f64>]) -> (Vec<f64>, Vec<f64>) {
        let voxels: usize = bs.iter().product();
        let coords = |v: usize| -> [usize; 4] { [v / (bs[1] * bs[2] * bs[3]), (v / (bs[2] * bs[3])) % bs[1], (v / bs[3]) % bs[2], v % bs[3]] };
        // The basis blocks' squared norms (1 but for bior1.5's 8-point rows).
        let norms: Vec<f64> =
            (0..voxels).map(|v| (0..4).map(|a| (0..bs[a]).map(|u| forward[a][coords(v)[a] * bs[a] + u].powi(2)).sum::<f64>()).product()).collect();
        let white: Vec<f64> = norms.iter().map(|n| n * self.at([0; 4])).collect();
        let variance = self.spread(bs, forward, [0; 4]).map_or_else(|| white.clone(), |v| v.iter().map(|x| x.max(0.0)).collect());
        (variance, white)
    }
    /// A_v(Δ), the covariance of coefficient v (row-major over the block `bs`) of the separable
    /// transform `forward` between two blocks Δ apart, for |Δₐ| ≤ `reach`ₐ: Σᵤ Σ_w tᵥ(u) tᵥ(w)
    /// C(u − w + Δ), at [v][Δ + reach] row-major (A_v(0) is the coefficient's variance within a
    /// block). The basis is separable, so one axis at a time: each axis correlates C with the
    /// autocorrelation of that axis's basis row. None for white noise (bm4d's algorithm, whose
    /// blocks are taken as independent), or where the held lags do not reach reach + bs − 1.
    pub fn spread(&self, bs: [usize; 4], forward: &[Vec<f64>], reach: [usize; 4]) -> Option<Vec<f64>> {
        let Covariance::Lags { reach: held, c } = self else {
            return None;
        };
        if (0..4).any(|a| held[a] + 1 < reach[a] + bs[a]) {
            return None;
        }
        let mut dims = vec![1usize];
        dims.extend(held.iter().map(|&r| 2 * r + 1));
        let mut x = ArrayD::from_shape_vec(IxDyn(&dims), c.clone()).expect("the held lags");
        let mut have = *held;
        for a in 0..4 {
            let (b, r) = (bs[a], reach[a]);
            let row = |j: usize, i: isize| -> f64 {
                if (0..b as isize).contains(&i) {
                    forward[a][j * b + i as usize]
                } else {
                    0.0
                }
            };
            // rⱼ(s) = Σ_w tⱼ(w + s) tⱼ(w), s in −(b − 1)..=b − 1.
            let auto: Vec<Vec<f64>> =
                (0..b).map(|j| (-(b as isize - 1)..b as isize).map(|s| (0..b as isize).map(|w| row(j, w + s) * row(j, w)).sum()).collect()).collect();
            let mut shape = x.shape().to_vec();
            shape[0] *= b;
            shape[a + 1] = 2 * r + 1;
            let mut y = ArrayD::<f64>::zeros(IxDyn(&shape));
            for (j, rj) in auto.iter().enumerate() {
                let mut out = y.slice_axis_mut(Axis(0), ndarray::Slice::new(j as isize, None, b as isize));
                Zip::from(out.lanes_mut(Axis(a + 1))).and(x.lanes(Axis(a + 1))).par_for_each(|mut o, i| {
                    for (d, v) in o.iter_mut().enumerate() {
                        // Output lag d − r; the input's lag d − r + s sits at that + have.
                        let first = d + have[a] - r - (b - 1);
                        *v = rj.iter().enumerate().map(|(k, w)| w * i[first + k]).sum();
                    }
                });
            }
            x = y;
            have[a] = r;
        }
        Some(x.iter().copied().collect())
    }
}

/// Correlated noise's matching penalties: two blocks Δ apart differ by 2 · voxels · (C(0) −
/// C(Δ)) of noise in expectation, so each candidate's distance gains 2 · voxels · C(Δ) (in f32,
/// as the device adds it) and every offset's expected noise part is white noise's 2 · voxels ·
/// C(0): blocks near the reference no longer win on shared noise.
#[derive(Clone, Debug, PartialEq)]
pub struct Penalty {
    pub reach: [usize; 4],
    pub values: Vec<f32>,
}

impl Penalty {
    /// For a search window `win` of blocks of `voxels` (None for white noise).
    pub fn of(noise: &Covariance, voxels: usize, win: [usize; 4]) -> Option<Penalty> {
        let Covariance::Lags { reach: held, .. } = noise else {
            return None;
        };
        let reach: [usize; 4] = std::array::from_fn(|a| win[a].min(held[a]));
        let side: [usize; 4] = reach.map(|r| 2 * r + 1);
        let values = (0..side.iter().product())
            .map(|i: usize| {
                // The lag at index i of the row-major table (lag_index's inverse).
                let d: [isize; 4] = std::array::from_fn(|a| ((i / side[a + 1..].iter().product::<usize>()) % side[a]) as isize - reach[a] as isize);
                (2.0 * voxels as f64 * noise.at(d)) as f32
            })
            .collect();
        Some(Penalty { reach, values })
    }

    /// The penalty at offset `d` (0 beyond the reach).
    pub fn at(&self, d: [isize; 4]) -> f32 {
        lag_index(self.reach, d).map_or(0.0, |i| self.values[i])
    }
}

/// The index of lag `d` in values over |Δₐ| ≤ `reach`ₐ held row-major at [Δ + reach] (None
/// beyond them): the layout of every lag table here and of the kernels' tables.
pub fn lag_index(reach: [usize; 4], d: [isize; 4]) -> Option<usize> {
    let mut i = 0;
    for a in 0..4 {
        if d[a].unsigned_abs() > reach[a] {
            return None;
        }
        i = i * (2 * reach[a] + 1) + (d[a] + reach[a] as isize) as usize;
    }
    Some(i)
}

/// C(Δ) = Re(ifftn(psd))(Δ) / N for |Δₐ| ≤ reachₐ: DFTs at those lags only, one axis at a time
/// (the axis that shrinks most first), in f64. Fails where the first pass's values would not fit
/// the host's budget.
pub fn autocovariance(psd: &ArrayViewD<f32>, reach: [usize; 4]) -> Result<Vec<f64>> {
    let n: Vec<usize> = psd.shape().to_vec();
    let total: f64 = n.iter().map(|&v| v as f64).product();
    let mut order: Vec<usize> = (0..4).collect();
    order.sort_by(|&a, &b| ((n[b] as f64) / (2 * reach[b] + 1) as f64).total_cmp(&((n[a] as f64) / (2 * reach[a] + 1) as f64)));
    let mut first = n.clone();
    first[order[0]] = 2 * reach[order[0]] + 1;
    crate::host::check_host_array("the noise PSD's autocovariance", &first, 16)?;
    let mut x = lags(psd, order[0], reach[order[0]], |v| Complex::new(v as f64, 0.0));
    for &a in &order[1..] {
        x = lags(&x.view(), a, reach[a], |v| v);
    }
    Ok(x.iter().map(|v| v.re / (total * total)).collect())
}

/// The inverse DFT (unnormalised) of `x` along `axis` at the lags −reach..=reach.
fn lags<T: Copy + Send + Sync>(x: &ArrayViewD<T>, axis: usize, reach: usize, to: impl Fn(T) -> Complex<f64> + Sync) -> ArrayD<Complex<f64>> {
    let len = x.shape()[axis];
    let count = 2 * reach + 1;
    // e^{2πi f Δ / n}: the inverse DFT's sign.
    let twiddle: Vec<Complex<f64>> = (0..count)
        .flat_map(|l| {
            let d = l as f64 - reach as f64;
            (0..len).map(move |f| Complex::from_polar(1.0, 2.0 * std::f64::consts::PI * ((f as f64 * d) % len as f64) / len as f64))
        })
        .collect();
    let mut shape = x.shape().to_vec();
    shape[axis] = count;
    let mut y = ArrayD::<Complex<f64>>::zeros(IxDyn(&shape));
    Zip::from(x.lanes(Axis(axis))).and(y.lanes_mut(Axis(axis))).par_for_each(|src, mut dst| {
        for (l, out) in dst.iter_mut().enumerate() {
            *out = src.iter().zip(&twiddle[l * len..(l + 1) * len]).map(|(&v, t)| to(v) * t).sum();
        }
    });
    y
}
