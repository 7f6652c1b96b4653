//! The f64 reference of the prefilter: scipy's `ni_splines.c` line by line (exact sums, no
//! horizon), with the half-sample initial value read before it is updated; and of sampling:
//! scipy's `ni_interpolation.c` taps and `get_spline_interpolation_weights`.

use ndarray::{ArrayD, Axis};

use super::SplineMode;
use crate::kernels::spline_prefilter::{gain, poles, Init};

/// scipy.ndimage.spline_filter1d(x, order, axis, mode) in f64 (orders 0 and 1: a copy).
pub fn spline_filter1d(x: &ArrayD<f64>, order: u32, axis: usize, mode: SplineMode) -> ArrayD<f64> {
    let mut y = x.clone();
    if order < 2 {
        return y;
    }
    for mut line in y.lanes_mut(Axis(axis)) {
        let mut c: Vec<f64> = line.to_vec();
        filter_line(&mut c, order, mode.init());
        line.iter_mut().zip(c).for_each(|(o, v)| *o = v);
    }
    y
}

/// scipy.ndimage.spline_filter(x, order, mode) in f64: every axis in turn.
pub fn spline_filter(x: &ArrayD<f64>, order: u32, mode: SplineMode) -> ArrayD<f64> {
    (0..x.ndim()).fold(x.clone(), |y, axis| spline_filter1d(&y, order, axis, mode))
}

/// One line in place (order 2-5): the gain, then per pole the causal and the anti-causal pass.
pub fn filter_line(c: &mut [f64], order: u32, init: Init) {
    let n = c.len();
    let poles = poles(order).expect("a prefilter order");
    if n < 2 {
        return;
    }
    let g = gain(&poles);
    c.iter_mut().for_each(|v| *v *= g);
    for z in poles {
        c[0] = causal_first(c, z, init);
        for i in 1..n {
            c[i] += z * c[i - 1];
        }
        c[n - 1] = anticausal_last(c, z, init);
        for i in (0..n - 1).rev() {
            c[i] = z * (c[i + 1] - c[i]);
        }
    }
}

fn causal_first(c: &[f64], z: f64, init: Init) -> f64 {
    let n = c.len();
    match init {
        Init::Mirror => {
            let zn1 = z.powi(n as i32 - 1);
            let (mut s, mut zi) = (c[0] + zn1 * c[n - 1], z);
            for i in 1..n - 1 {
                s += zi * (c[i] + zn1 * c[n - 1 - i]);
                zi *= z;
            }
            s / (1.0 - zn1 * zn1)
        }
        Init::Reflect => {
            let zn = z.powi(n as i32);
            let (mut s, mut zi) = (c[0] + zn * c[n - 1], z);
            for i in 1..n {
                s += zi * (c[i] + zn * c[n - 1 - i]);
                zi *= z;
            }
            s * z / (1.0 - zn * zn) + c[0]
        }
        Init::Wrap => {
            let (mut s, mut zi) = (c[0], z);
            for i in 1..n {
                s += zi * c[n - i];
                zi *= z;
            }
            s / (1.0 - zi)
        }
    }
}

fn anticausal_last(c: &[f64], z: f64, init: Init) -> f64 {
    let n = c.len();
    match init {
        Init::Mirror => (z * c[n - 2] + c[n - 1]) * z / (z * z - 1.0),
        Init::Reflect => c[n - 1] * z / (z - 1.0),
        Init::Wrap => {
            let (mut s, mut zi) = (c[n - 1], z);
            for &v in &c[..n - 1] {
                s += zi * v;
                zi *= z;
            }
            s * z / (zi - 1.0)
        }
    }
}

/// scipy.ndimage.map_coordinates(x, coords, order, mode, cval, prefilter) in f64 (the rules in
/// the module's documentation).
pub fn map_coordinates(x: &ArrayD<f64>, coords: &ArrayD<f64>, how: &super::Sampling) -> ArrayD<f64> {
    let rank = x.ndim();
    let (input, pad) = match how.prepad() {
        None => (x.clone(), 0),
        Some(pad) => {
            let padded = if pad == 0 { x.clone() } else { pad_edges(x, pad, how.mode, how.cval as f64) };
            (spline_filter(&padded, how.order, how.mode), pad)
        }
    };
    let dims = input.shape().to_vec();
    let out_dims = &coords.shape()[1..];
    let points: usize = out_dims.iter().product();
    let flat = coords.as_standard_layout();
    let flat = flat.as_slice().expect("standard layout");
    let values: Vec<f64> = (0..points).map(|i| sample(&input, &dims, &(0..rank).map(|a| flat[a * points + i] + pad as f64).collect::<Vec<_>>(), how)).collect();
    ArrayD::from_shape_vec(ndarray::IxDyn(out_dims), values).expect("the coordinates' shape")
}

/// `x` padded by `pad` samples on every side: its edge values (`nearest`) or cval.
fn pad_edges(x: &ArrayD<f64>, pad: usize, mode: SplineMode, cval: f64) -> ArrayD<f64> {
    let dims: Vec<usize> = x.shape().iter().map(|&n| n + 2 * pad).collect();
    ArrayD::from_shape_fn(ndarray::IxDyn(&dims), |at| {
        let mut inside = true;
        let src: Vec<usize> = (0..x.ndim())
            .map(|a| {
                let i = at[a] as isize - pad as isize;
                inside &= i >= 0 && i < x.shape()[a] as isize;
                i.clamp(0, x.shape()[a] as isize - 1) as usize
            })
            .collect();
        if inside || mode == SplineMode::Nearest {
            x[src.as_slice()]
        } else {
            cval
        }
    })
}

/// One output: the coordinate per axis folded, the taps weighted and summed.
fn sample(x: &ArrayD<f64>, dims: &[usize], at: &[f64], how: &super::Sampling) -> f64 {
    let (order, mode, cval) = (how.order as usize, how.mode, how.cval as f64);
    let unfolded = matches!(mode, SplineMode::GridConstant | SplineMode::Nearest);
    let mut starts = Vec::new();
    let mut weights = Vec::new();
    for (a, &c) in at.iter().enumerate() {
        let c = if unfolded { c } else { fold(c, dims[a], mode) };
        if c.is_nan() || (c <= -1.0 && !unfolded) {
            return cval;
        }
        // Even orders centre their taps on the nearest sample, odd ones on the one below.
        let base = if order % 2 == 0 { (c + 0.5).floor() } else { c.floor() };
        starts.push(base as i64 - (order / 2) as i64);
        weights.push(spline_weights(c - base, order));
    }
    let taps = order + 1;
    let mut sum = 0.0;
    for t in 0..taps.pow(at.len() as u32) {
        let (mut rest, mut w, mut index, mut outside) = (t, 1.0, Vec::new(), false);
        for a in (0..at.len()).rev() {
            let k = rest % taps;
            rest /= taps;
            w *= weights[a][k];
            match tap(starts[a] + k as i64, dims[a], mode) {
                Some(j) => index.push(j),
                None => {
                    outside = true;
                    index.push(0)
                }
            }
        }
        index.reverse();
        sum += w * if outside { cval } else { x[index.as_slice()] };
    }
    sum
}

/// The B-spline weights of the order's taps at `x` from the middle tap's sample (in [0, 1) for
/// odd orders, [−0.5, 0.5) for even ones), as scipy's `get_spline_interpolation_weights`: the
/// last weight is 1 minus the others.
pub fn spline_weights(x: f64, order: usize) -> Vec<f64> {
    let mut w = match order {
        0 => return vec![1.0],
        1 => vec![1.0 - x],
        2 => vec![0.5 * (0.5 - x) * (0.5 - x), 0.75 - x * x],
        3 => {
            let z = 1.0 - x;
            vec![z * z * z / 6.0, (x * x * (x - 2.0) * 3.0 + 4.0) / 6.0, (z * z * (z - 2.0) * 3.0 + 4.0) / 6.0]
        }
        4 => {
            let quartic = |y: f64| y * (y * (y * (5.0 - y) / 6.0 - 1.25) + 5.0 / 24.0) + 55.0 / 96.0;
            let (t, y) = (x * x, 0.5 - x);
            vec![y * y * y * y / 24.0, quartic(1.0 + x), t * (t * 0.25 - 0.625) + 115.0 / 192.0, quartic(1.0 - x)]
        }
        5 => {
            let inner = |y: f64| y * y * (y * y * (0.25 - y / 12.0) - 0.5) + 0.55;
            let outer = |y: f64| y * (y * (y * (y * (y / 24.0 - 0.375) + 1.25) - 1.75) + 0.625) + 0.425;
            let y = 1.0 - x;
            vec![y * y * y * y * y / 120.0, outer(1.0 + x), inner(x), inner(1.0 - x), outer(2.0 - x)]
        }
        _ => panic!("spline order {order}"),
    };
    w.push(1.0 - w.iter().sum::<f64>());
    w
}

/// Where tap `i` reads on an axis of `n`: itself inside, else folded (`constant` and `wrap` by
/// `mirror`); `None` where `grid-constant` reads cval.
fn tap(i: i64, n: usize, mode: SplineMode) -> Option<usize> {
    if i >= 0 && (i as usize) < n {
        return Some(i as usize);
    }
    let mode = match mode {
        SplineMode::GridConstant => return None,
        SplineMode::Constant | SplineMode::Wrap => SplineMode::Mirror,
        m => m,
    };
    Some(fold(i as f64, n, mode) as usize)
}

/// A coordinate outside 0..n − 1 folded into it by `mode` (scipy's periods); −1 for constant.
fn fold(c: f64, n: usize, mode: SplineMode) -> f64 {
    let n = n as f64;
    if !(c < 0.0 || c > n - 1.0) {
        return c;
    }
    if n <= 1.0 && !matches!(mode, SplineMode::Constant | SplineMode::GridConstant) {
        return 0.0;
    }
    let below = c < 0.0;
    match mode {
        SplineMode::Mirror => {
            let s = 2.0 * n - 2.0;
            if below {
                let v = s * (-c / s).trunc() + c;
                if v <= 1.0 - n {
                    v + s
                } else {
                    -v
                }
            } else {
                let v = c - s * (c / s).trunc();
                if v >= n {
                    s - v
                } else {
                    v
                }
            }
        }
        SplineMode::Reflect => {
            let s = 2.0 * n;
            if below {
                let v = if c < -s { s * (-c / s).trunc() + c } else { c };
                if v < -n {
                    v + s
                } else {
                    (-v - 1.0).max(-1.0 + 1e-15)
                }
            } else {
                let v = c - s * (c / s).trunc();
                if v >= n {
                    s - v - 1.0
                } else {
                    v
                }
            }
        }
        SplineMode::Wrap => {
            let s = n - 1.0;
            if below {
                c + s * ((-c / s).trunc() + 1.0)
            } else {
                c - s * (c / s).trunc()
            }
        }
        SplineMode::GridWrap => {
            if below {
                c + n * ((-1.0 - c) / n).trunc() + n
            } else {
                c - n * (c / n).trunc()
            }
        }
        SplineMode::Nearest => {
            if below {
                0.0
            } else {
                n - 1.0
            }
        }
        SplineMode::Constant | SplineMode::GridConstant => -1.0,
    }
}

/// scipy.ndimage.fourier_shift in f64: every element times its axes' phase factors.
pub fn fourier_shift(x: &ArrayD<num_complex::Complex64>, shift: &[f64], real: Option<(usize, usize)>) -> crate::error::Result<ArrayD<num_complex::Complex64>> {
    let factors = super::phase_factors(x.shape(), shift, real)?;
    let starts: Vec<usize> = x
        .shape()
        .iter()
        .scan(0, |at, &n| {
            let s = *at;
            *at += n;
            Some(s)
        })
        .collect();
    let mut y = x.clone();
    for (at, v) in y.indexed_iter_mut() {
        for (a, &s) in starts.iter().enumerate() {
            *v *= factors[s + at[a]];
        }
    }
    Ok(y)
}
