//! The f64 reference of the prefilter: scipy's `ni_splines.c` line by line (exact sums, no
//! horizon), with the half-sample initial value read before it is updated.

use ndarray::{ArrayD, Axis};

use super::SplineMode;
use crate::kernels::spline_prefilter::Init;

const Z: f64 = -0.267_949_192_431_122_7; // √3 − 2

/// scipy.ndimage.spline_filter1d(x, 3, axis, mode) in f64.
pub fn spline_filter1d(x: &ArrayD<f64>, axis: usize, mode: SplineMode) -> ArrayD<f64> {
    let mut y = x.clone();
    for mut line in y.lanes_mut(Axis(axis)) {
        let mut c: Vec<f64> = line.to_vec();
        filter_line(&mut c, mode.init());
        line.iter_mut().zip(c).for_each(|(o, v)| *o = v);
    }
    y
}

/// scipy.ndimage.spline_filter(x, 3, mode) in f64: every axis in turn.
pub fn spline_filter(x: &ArrayD<f64>, mode: SplineMode) -> ArrayD<f64> {
    (0..x.ndim()).fold(x.clone(), |y, axis| spline_filter1d(&y, axis, mode))
}

/// One line in place: gain, causal pass, anti-causal pass.
pub fn filter_line(c: &mut [f64], init: Init) {
    let n = c.len();
    if n < 2 {
        return;
    }
    c.iter_mut().for_each(|v| *v *= (1.0 - Z) * (1.0 - 1.0 / Z));
    c[0] = causal_first(c, init);
    for i in 1..n {
        c[i] += Z * c[i - 1];
    }
    c[n - 1] = anticausal_last(c, init);
    for i in (0..n - 1).rev() {
        c[i] = Z * (c[i + 1] - c[i]);
    }
}

fn causal_first(c: &[f64], init: Init) -> f64 {
    let n = c.len();
    match init {
        Init::Mirror => {
            let zn1 = Z.powi(n as i32 - 1);
            let (mut s, mut zi) = (c[0] + zn1 * c[n - 1], Z);
            for i in 1..n - 1 {
                s += zi * (c[i] + zn1 * c[n - 1 - i]);
                zi *= Z;
            }
            s / (1.0 - zn1 * zn1)
        }
        Init::Reflect => {
            let zn = Z.powi(n as i32);
            let (mut s, mut zi) = (c[0] + zn * c[n - 1], Z);
            for i in 1..n {
                s += zi * (c[i] + zn * c[n - 1 - i]);
                zi *= Z;
            }
            s * Z / (1.0 - zn * zn) + c[0]
        }
        Init::Wrap => {
            let (mut s, mut zi) = (c[0], Z);
            for i in 1..n {
                s += zi * c[n - i];
                zi *= Z;
            }
            s / (1.0 - zi)
        }
    }
}

fn anticausal_last(c: &[f64], init: Init) -> f64 {
    let n = c.len();
    match init {
        Init::Mirror => (Z * c[n - 2] + c[n - 1]) * Z / (Z * Z - 1.0),
        Init::Reflect => c[n - 1] * Z / (Z - 1.0),
        Init::Wrap => {
            let (mut s, mut zi) = (c[n - 1], Z);
            for &v in &c[..n - 1] {
                s += zi * v;
                zi *= Z;
            }
            s * Z / (zi - 1.0)
        }
    }
}
