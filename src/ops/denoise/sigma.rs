//! scikit-image's `estimate_sigma` (Donoho and Johnstone 1994): the standard deviation of
//! Gaussian noise from the finest wavelet detail, high-pass along every axis (PyWavelets'
//! `dwtn(image, 'db2')`, mode 'symmetric', key 'd' · ndim): median(|d|) / Φ⁻¹(0.75), exactly
//! zero coefficients left out. On the host in f64: one pass, cheaper than the device round
//! trip, and equal to PyWavelets' arithmetic.

use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn};

use crate::error::{Error, Result};

/// PyWavelets' 'db2' decomposition low-pass filter (`pywt.Wavelet('db2').dec_lo`, PyWavelets 1.8).
const DB2_DEC_LO: [f64; 4] = [-0.12940952255126037, 0.2241438680420134, 0.8365163037378079, 0.48296291314453416];

/// Φ⁻¹(0.75), the standard normal's third quartile (scipy.stats.norm.ppf(0.75)).
const NORMAL_Q3: f64 = 0.6744897501960817;

/// σ of `x`'s noise (all axes one image; scikit-image's `channel_axis=None`).
pub fn estimate_sigma(x: &ArrayViewD<f64>) -> Result<f64> {
    if x.is_empty() || x.ndim() == 0 {
        return Err(Error::Empty(format!("a noise estimate of an array of shape {:?}", x.shape())));
    }
    crate::check::check_finite(x, "the image")?;
    let mut d = x.to_owned();
    for axis in 0..x.ndim() {
        d = high_pass(&d, axis);
    }
    let mut magnitudes: Vec<f64> = d.iter().filter(|&&v| v != 0.0).map(|v| v.abs()).collect();
    if magnitudes.is_empty() {
        return Ok(0.0);
    }
    magnitudes.sort_unstable_by(f64::total_cmp);
    let n = magnitudes.len();
    let median = if n % 2 == 1 { magnitudes[n / 2] } else { 0.5 * (magnitudes[n / 2 - 1] + magnitudes[n / 2]) };
    Ok(median / NORMAL_Q3)
}

/// One level of pywt.dwt's detail (mode 'symmetric', db2) along `axis`: out[k] = Σ_j hi[j]
/// x[2k + 1 − j], ⌊(n + 3) / 2⌋ values, x mirrored about its ends (x[−1] = x[0]) as often as
/// the filter reaches.
fn high_pass(x: &ArrayD<f64>, axis: usize) -> ArrayD<f64> {
    let hi: Vec<f64> = (0..4).map(|j| if j % 2 == 0 { -DB2_DEC_LO[3 - j] } else { DB2_DEC_LO[3 - j] }).collect();
    let n = x.shape()[axis] as i64;
    let len = ((n + 3) / 2) as usize;
    let mut shape = x.shape().to_vec();
    shape[axis] = len;
    let mut out = ArrayD::<f64>::zeros(IxDyn(&shape));
    let mirrored = |i: i64| -> usize {
        let m = i.rem_euclid(2 * n);
        (if m < n { m } else { 2 * n - 1 - m }) as usize
    };
    for (lane, mut o) in x.lanes(Axis(axis)).into_iter().zip(out.lanes_mut(Axis(axis))) {
        for k in 0..len {
            o[k] = (0..4).map(|j| hi[j] * lane[mirrored(2 * k as i64 + 1 - j as i64)]).sum();
        }
    }
    out
}
