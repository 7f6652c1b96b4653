//! scipy.ndimage's derivative filters as sums of separable passes: `gaussian_filter` with
//! `order` (derivatives 0-3 per axis), `truncate` and `radius`; `gaussian_laplace`,
//! `gaussian_gradient_magnitude`, `sobel`, `prewitt`, `laplace`. Each is one or more chains of
//! correlate1d passes ([`Terms`]), summed (or, for gradient magnitudes, square-rooted sums of
//! squares) as scipy combines them.
//!
//! The weights are scipy's: `_gaussian_kernel1d(sigma, order, radius)` (the Gaussian normalised
//! to sum 1, times the order-th derivative's polynomial, built by the same recursion in f64),
//! reversed as scipy's `gaussian_filter1d` reverses it for correlate1d; sobel's [-1, 0, 1] along
//! the axis and [1, 2, 1] across it, prewitt's [1, 1, 1]; laplace's [1, -2, 1] per axis. A kernel
//! longer than its axis is folded onto it as [`super::gaussian_weights`] folds (the same result).

use super::{fold_slot, folded_len, MAX_GAUSSIAN_TAPS};
use crate::error::{Error, Result};
use crate::graph::{Buf, Recording};
use crate::kernels::binary::{self, BinaryOp};
use crate::kernels::boundary::Boundary;
use crate::kernels::unary::{self, UnaryOp};

/// One chain of correlate1d passes: (axis, weights) in order.
pub type Chain = Vec<(usize, Vec<f64>)>;

/// Chains whose results are combined: summed, or the root of the sum of their squares.
#[derive(Clone, Debug, PartialEq)]
pub struct Terms {
    pub chains: Vec<Chain>,
    pub root_sum_of_squares: bool,
}

/// scipy's `_gaussian_kernel1d(sigma, order, radius)`: exp(-x²/2σ²) over -radius..=radius
/// normalised to sum 1, times the polynomial q of the order-th derivative (q' + q·p',
/// p' = -x/σ², applied `order` times to q = 1), in f64.
pub fn gaussian_kernel1d_order(sigma: f64, order: usize, radius: usize) -> Vec<f64> {
    let r = radius as i64;
    let s2 = sigma * sigma;
    let phi: Vec<f64> = (-r..=r).map(|x| (-0.5 / s2 * (x * x) as f64).exp()).collect();
    let total: f64 = phi.iter().sum();
    let phi: Vec<f64> = phi.iter().map(|p| p / total).collect();
    if order == 0 {
        return phi;
    }
    // q's coefficients by power of x: q ← D q + P q (D: derivative, P: times -x/σ²).
    let mut q = vec![0.0; order + 1];
    q[0] = 1.0;
    for _ in 0..order {
        let mut next = vec![0.0; order + 1];
        for (k, &c) in q.iter().enumerate() {
            if k > 0 {
                next[k - 1] += k as f64 * c;
            }
            if k < order {
                next[k + 1] -= c / s2;
            }
        }
        q = next;
    }
    (-r..=r).zip(&phi).map(|(x, p)| q.iter().enumerate().map(|(k, c)| c * (x as f64).powi(k as i32)).sum::<f64>() * p).collect()
}

/// scipy.ndimage.gaussian_filter's parameters: `sigma`, `order` (0-3), `truncate`, `radius`
/// (None: ⌊truncate·σ + 0.5⌋), each one value for every axis or one per axis.
#[derive(Clone, Debug, PartialEq)]
pub struct GaussianFilter {
    pub sigma: Vec<f64>,
    pub order: Vec<usize>,
    pub truncate: f64,
    pub radius: Option<Vec<usize>>,
}

impl GaussianFilter {
    /// scipy's defaults: order 0, truncate 4, the radius from truncate.
    pub fn new(sigma: &[f64]) -> GaussianFilter {
        GaussianFilter { sigma: sigma.to_vec(), order: vec![0], truncate: super::GAUSSIAN_TRUNCATE, radius: None }
    }

    /// The correlate1d passes for an array of `dims`: one per axis whose sigma is above 1e-15
    /// (scipy skips the others, their order too).
    pub fn passes(&self, dims: &[usize], boundary: Boundary) -> Result<Chain> {
        let d = dims.len();
        let sigma = super::per_axis(&self.sigma, d, "sigma")?;
        let order = super::per_axis(&self.order, d, "order")?;
        let radius = self.radius.as_deref().map(|r| super::per_axis(r, d, "radius")).transpose()?;
        if let Some(s) = sigma.iter().find(|s| !s.is_finite() || **s < 0.0) {
            return Err(Error::Invalid(format!("gaussian_filter: sigma must be finite and non-negative, got {s}")));
        }
        if let Some(o) = order.iter().find(|&&o| o > 3) {
            return Err(Error::Invalid(format!("gaussian_filter: order {o} (derivatives of order 0 to 3)")));
        }
        if !(self.truncate.is_finite() && self.truncate >= 0.0) {
            return Err(Error::Invalid(format!("gaussian_filter: truncate must be finite and non-negative, got {}", self.truncate)));
        }
        boundary.check()?;
        (0..d)
            .filter(|&a| sigma[a] > 1e-15)
            .map(|a| {
                let r = match &radius {
                    Some(r) => r[a] as f64,
                    None => (self.truncate * sigma[a] + 0.5).floor(),
                };
                #[allow(clippy::neg_cmp_op_on_partial_ord)]
                if !(2.0 * r + 1.0 <= MAX_GAUSSIAN_TAPS as f64) {
                    return Err(Error::Invalid(format!(
                        "gaussian_filter: sigma {} needs a kernel of {:.3e} taps, more than {MAX_GAUSSIAN_TAPS}",
                        sigma[a],
                        2.0 * r + 1.0
                    )));
                }
                let mut w = gaussian_kernel1d_order(sigma[a], order[a], r as usize);
                // scipy reverses the kernel for correlate1d.
                w.reverse();
                Ok((a, fold(&w, dims[a], boundary)))
            })
            .collect()
    }
}

/// A centred kernel (tap t reads offset t − m/2) folded onto at most [`folded_len`] taps when
/// it is longer, each tap added to the one that reads the same value for every output.
pub fn fold(weights: &[f64], n: usize, boundary: Boundary) -> Vec<f64> {
    let len = folded_len(n, boundary);
    if weights.len() <= len {
        return weights.to_vec();
    }
    let half = (weights.len() / 2) as i128;
    let mut w = vec![0.0; len];
    for (t, &v) in weights.iter().enumerate() {
        w[fold_slot(t as i128 - half, n, boundary)] += v;
    }
    w
}

fn check_axis(axis: isize, d: usize) -> Result<usize> {
    let a = if axis < 0 { axis + d as isize } else { axis };
    if !(0..d as isize).contains(&a) {
        return Err(Error::Invalid(format!("axis {axis} of a {d}-axis array")));
    }
    Ok(a as usize)
}

/// scipy.ndimage.gaussian_laplace: Σ over axes of the second derivative along it (order 2 there,
/// 0 elsewhere).
pub fn gaussian_laplace(g: &GaussianFilter, dims: &[usize], boundary: Boundary) -> Result<Terms> {
    let chains = (0..dims.len())
        .map(|a| {
            let order: Vec<usize> = (0..dims.len()).map(|b| if a == b { 2 } else { 0 }).collect();
            GaussianFilter { order, ..g.clone() }.passes(dims, boundary)
        })
        .collect::<Result<_>>()?;
    Ok(Terms { chains, root_sum_of_squares: false })
}

/// scipy.ndimage.gaussian_gradient_magnitude: √Σ (first derivative along each axis)².
pub fn gaussian_gradient_magnitude(g: &GaussianFilter, dims: &[usize], boundary: Boundary) -> Result<Terms> {
    let chains = (0..dims.len())
        .map(|a| {
            let order: Vec<usize> = (0..dims.len()).map(|b| usize::from(a == b)).collect();
            GaussianFilter { order, ..g.clone() }.passes(dims, boundary)
        })
        .collect::<Result<_>>()?;
    Ok(Terms { chains, root_sum_of_squares: true })
}

/// scipy.ndimage.sobel (`smooth` [1, 2, 1]) or prewitt ([1, 1, 1]) along `axis` (negative
/// counts from the end): [-1, 0, 1] along it, the smoothing along every other axis.
pub fn edge(dims: &[usize], axis: isize, smooth: [f64; 3], boundary: Boundary) -> Result<Terms> {
    boundary.check()?;
    let axis = check_axis(axis, dims.len())?;
    let mut chain = vec![(axis, fold(&[-1.0, 0.0, 1.0], dims[axis], boundary))];
    chain.extend((0..dims.len()).filter(|&b| b != axis).map(|b| (b, fold(&smooth, dims[b], boundary))));
    Ok(Terms { chains: vec![chain], root_sum_of_squares: false })
}

/// scipy.ndimage.laplace: Σ over axes of [1, -2, 1] along it.
pub fn laplace(dims: &[usize], boundary: Boundary) -> Result<Terms> {
    boundary.check()?;
    let chains = (0..dims.len()).map(|a| vec![(a, fold(&[1.0, -2.0, 1.0], dims[a], boundary))]).collect();
    Ok(Terms { chains, root_sum_of_squares: false })
}

/// [`Terms`] recorded on a device array: each chain's passes, then the sum (or root sum of
/// squares) of the chains' results, in chain order.
pub fn record_terms(rec: &mut Recording, x: Buf, terms: &Terms, boundary: Boundary) -> Result<Buf> {
    let mut total: Option<Buf> = None;
    for chain in &terms.chains {
        let mut y = super::separable(rec, x, chain, boundary)?;
        if terms.root_sum_of_squares {
            y = binary::record(rec, BinaryOp::Mul, y, y)?;
        }
        total = Some(match total {
            None => y,
            Some(t) => binary::record(rec, BinaryOp::Add, t, y)?,
        });
    }
    let total = match total {
        Some(t) => t,
        None => return super::separable(rec, x, &[], boundary),
    };
    if terms.root_sum_of_squares {
        return unary::record(rec, UnaryOp::Sqrt, total);
    }
    Ok(total)
}

/// The f64 reference of [`record_terms`].
pub fn terms_reference(x: &ndarray::ArrayD<f64>, terms: &Terms, boundary: Boundary) -> ndarray::ArrayD<f64> {
    let mut total = ndarray::ArrayD::<f64>::zeros(x.raw_dim());
    if terms.chains.is_empty() {
        return x.clone();
    }
    for chain in &terms.chains {
        let y = super::cpu::separable(x, chain, boundary);
        total = if terms.root_sum_of_squares { total + &y * &y } else { total + y };
    }
    if terms.root_sum_of_squares {
        total.mapv_inplace(f64::sqrt);
    }
    total
}
