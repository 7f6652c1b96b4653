//! CPU references of scipy.ndimage's filters with the GPU path's semantics: direct sums in f64
//! over explicitly padded arrays (the boundary from `layout::cpu::pad`, which walks outward
//! sample by sample, so none of the GPU's index folding is shared).

use ndarray::{ArrayD, IxDyn, Slice};

use super::{gaussian_kernel1d, GAUSSIAN_TRUNCATE};
#[cfg(test)]
use crate::error::Result;
use crate::kernels::boundary::Boundary;
use crate::ops::convolve::cpu::reverse;
#[cfg(test)]
use crate::ops::convolve::{cpu::signal_convolve, Mode};
use crate::ops::layout;

/// scipy.ndimage.correlate(x, w, mode, cval): x extended by `boundary` (m/2 before, the rest
/// after, per axis), then the valid correlation.
pub fn correlate(x: &ArrayD<f64>, w: &ArrayD<f64>, boundary: Boundary) -> ArrayD<f64> {
    let pads: Vec<(usize, usize)> = w.shape().iter().map(|&m| (m / 2, m - 1 - m / 2)).collect();
    valid_correlation(&extend(x, &pads, boundary), w)
}

/// scipy.ndimage.convolve(x, w, mode, cval): the correlation with w reversed, extended by
/// (m - 1)/2 before (scipy's origin shift for even axes).
pub fn convolve(x: &ArrayD<f64>, w: &ArrayD<f64>, boundary: Boundary) -> ArrayD<f64> {
    let pads: Vec<(usize, usize)> = w.shape().iter().map(|&m| ((m - 1) / 2, m / 2)).collect();
    valid_correlation(&extend(x, &pads, boundary), &reverse(w))
}

/// scipy.ndimage.correlate1d.
pub fn correlate1d(x: &ArrayD<f64>, weights: &[f64], axis: usize, boundary: Boundary) -> ArrayD<f64> {
    correlate(x, &along_axis(x.ndim(), weights, axis), boundary)
}

/// scipy.ndimage.convolve1d.
pub fn convolve1d(x: &ArrayD<f64>, weights: &[f64], axis: usize, boundary: Boundary) -> ArrayD<f64> {
    convolve(x, &along_axis(x.ndim(), weights, axis), boundary)
}

/// scipy.ndimage.gaussian_filter(x, sigma, mode, cval, truncate=4): `sigma` per axis. The
/// kernel as scipy makes it, unfolded (its memory and time grow with sigma): a reference for
/// the folded passes that [`separable`] applies.
pub fn gaussian_filter(x: &ArrayD<f64>, sigma: &[f64], boundary: Boundary) -> ArrayD<f64> {
    let mut y = x.clone();
    for (axis, &s) in sigma.iter().enumerate().filter(|(_, &s)| s > 1e-15) {
        y = correlate1d(&y, &gaussian_kernel1d(s, GAUSSIAN_TRUNCATE), axis, boundary);
    }
    y
}

/// scipy.ndimage.uniform_filter(x, size, mode, cval): `size` per axis (unfolded, as
/// [`gaussian_filter`]).
pub fn uniform_filter(x: &ArrayD<f64>, size: &[usize], boundary: Boundary) -> ArrayD<f64> {
    let mut y = x.clone();
    for (axis, &n) in size.iter().enumerate().filter(|(_, &n)| n > 1) {
        y = correlate1d(&y, &vec![1.0 / n as f64; n], axis, boundary);
    }
    y
}

/// The passes of `super::gaussian_passes` or `super::uniform_passes` (folded onto the axes), one
/// correlate1d each: the f64 twin of the GPU's separable filters.
pub fn separable(x: &ArrayD<f64>, passes: &[(usize, Vec<f64>)], boundary: Boundary) -> ArrayD<f64> {
    let mut y = x.clone();
    for (axis, weights) in passes {
        y = correlate1d(&y, weights, *axis, boundary);
    }
    y
}

/// Normalised convolution: signal 'same' convolutions, `(k ⊛ (c·x)) / (k ⊛ c + eps)`.
#[cfg(test)]
pub fn normalized_convolution(x: &ArrayD<f64>, c: &ArrayD<f64>, k: &ArrayD<f64>, eps: f64) -> Result<ArrayD<f64>> {
    let num = signal_convolve(&(c * x), k, Mode::Same)?;
    let den = signal_convolve(c, k, Mode::Same)?;
    Ok(num / (den + eps))
}

// ---------------------------------------------------------------------------------------------
// Helpers

/// `y[i] = Σ_j w[j] · p[i + j]`, shape p - w + 1.
fn valid_correlation(p: &ArrayD<f64>, w: &ArrayD<f64>) -> ArrayD<f64> {
    let dims: Vec<usize> = p.shape().iter().zip(w.shape()).map(|(n, m)| n - m + 1).collect();
    let mut out = ArrayD::zeros(IxDyn(&dims));
    // A kernel along one axis (every pass of the separable filters): lane by lane in contiguous
    // copies, tap after tap, instead of one strided n-D slice per tap (an unfolded Gaussian of
    // σ 10⁴ has 80 001 taps over a 32-sample lane). The same sums in the same order.
    let long: Vec<usize> = (0..w.ndim()).filter(|&a| w.shape()[a] > 1).collect();
    if let [axis] = long[..] {
        let weights: Vec<f64> = w.iter().copied().collect();
        let n = dims[axis];
        let mut sums = vec![0.0; n];
        for (mut o, lane) in out.lanes_mut(ndarray::Axis(axis)).into_iter().zip(p.lanes(ndarray::Axis(axis))) {
            let lane: Vec<f64> = lane.iter().copied().collect();
            sums.fill(0.0);
            for (k, &wk) in weights.iter().enumerate() {
                sums.iter_mut().zip(&lane[k..k + n]).for_each(|(s, &x)| *s += wk * x);
            }
            o.iter_mut().zip(&sums).for_each(|(v, &s)| *v = s);
        }
        return out;
    }
    for (j, &v) in w.indexed_iter() {
        out.scaled_add(v, &p.slice_each_axis(|ax| Slice::from(j[ax.axis.0]..j[ax.axis.0] + dims[ax.axis.0])));
    }
    out
}

fn extend(x: &ArrayD<f64>, pads: &[(usize, usize)], boundary: Boundary) -> ArrayD<f64> {
    let fill = if let Boundary::Constant(v) = boundary { v as f64 } else { 0.0 };
    layout::cpu::pad(x, pads, boundary, fill)
}

fn along_axis(ndim: usize, weights: &[f64], axis: usize) -> ArrayD<f64> {
    let mut dims = vec![1; ndim];
    dims[axis] = weights.len();
    ArrayD::from_shape_vec(IxDyn(&dims), weights.to_vec()).unwrap()
}
