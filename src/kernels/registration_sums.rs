//! `shaders/registration/registration_sums.wgsl`: the per-workgroup sums of intensity-based
//! registration (mean squares with its normal equations, correlation, a step's comparison), and
//! their CPU twin (f64) with the same layout.

use bytemuck::{Pod, Zeroable};

use super::registration_histogram::Bins;
use super::REGISTRATION_SUMS;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// What is summed (`MODE` in the kernel).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SumsMode {
    MeanSquares,
    Correlation,
    Compare,
    /// Mutual information's gradient sums from a joint histogram's log ratios.
    MutualInformation,
}

impl SumsMode {
    fn code(self) -> u32 {
        match self {
            SumsMode::MeanSquares => 0,
            SumsMode::Correlation => 1,
            SumsMode::Compare => 2,
            SumsMode::MutualInformation => 3,
        }
    }

    /// Sums per workgroup on `d` axes (D = d (d + 1) entries of u).
    pub fn width(self, d: usize) -> usize {
        let nu = d * (d + 1);
        match self {
            SumsMode::MeanSquares => 2 + nu + nu * (nu + 1) / 2,
            SumsMode::Correlation => 6 + 3 * nu,
            SumsMode::Compare => 12,
            SumsMode::MutualInformation => nu,
        }
    }
}

/// Mirrors `Params` in registration_sums.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub per_thread: u32,
    pub width: u32,
    pub rows: u32,
    pub cols: u32,
    pub shift_f: f32,
    pub shift_m: f32,
    pub bins: u32,
    pub centre: [f32; 4],
    pub hist: [f32; 4],
}

/// The inputs, on the device: `fixed` (value, mask) pairs, the samples, the gradients (one per
/// axis), the support and, for [`SumsMode::Compare`], the previous samples and support; for
/// [`SumsMode::MutualInformation`], the histogram's log ratios and bins.
pub struct SumsInputs<'a> {
    pub fixed: Buf,
    pub values: Buf,
    pub gradients: &'a [Buf],
    pub support: Buf,
    pub previous: Option<(Buf, Buf)>,
    pub log_ratios: Option<(Buf, Bins)>,
}

/// Points each thread visits: workgroups stay below 2^16 per grid axis folding, and the
/// partials small, while each thread has work enough to hide the tree.
fn per_thread(count: usize) -> usize {
    count.div_ceil(256 * 4096).max(4)
}

/// Records the sums over a level of shape `dims` (2 or 3 axes) centred at `centre` (level
/// units): the partials, (workgroups, width) f32.
pub fn record(rec: &mut Recording, mode: SumsMode, dims: &[usize], centre: &[f64], shifts: [f32; 2], x: &SumsInputs) -> Result<Buf> {
    let d = dims.len();
    if !(d == 2 || d == 3) || x.gradients.len() != d || centre.len() != d {
        return Err(Error::Shape(format!("registration sums over {dims:?} with {} gradients", x.gradients.len())));
    }
    let count = dims.iter().product::<usize>();
    let count32 = u32::try_from(count).map_err(|_| Error::TooLarge { what: "registration sums".into(), bytes: count as u64 * 4, limit: u32::MAX as u64 })?;
    let per = per_thread(count);
    let groups = count.div_ceil(256 * per);
    let width = mode.width(d);
    let out = rec.temp(&[groups, width], Dtype::F32)?;
    let mut c = [0f32; 4];
    c.iter_mut().zip(centre).for_each(|(a, b)| *a = *b as f32);
    let p = Params {
        count: count32,
        per_thread: per as u32,
        width: width as u32,
        rows: dims[d - 2] as u32,
        cols: dims[d - 1] as u32,
        shift_f: shifts[0],
        shift_m: shifts[1],
        bins: x.log_ratios.map_or(0, |(_, b)| b.bins as u32),
        centre: c,
        hist: x.log_ratios.map_or([0.0; 4], |(_, b)| [b.fixed_min as f32, (1.0 / b.fixed_width) as f32, b.moving_min as f32, (1.0 / b.moving_width) as f32]),
    };
    if (mode == SumsMode::MutualInformation) != x.log_ratios.is_some() {
        return Err(Error::Invalid("registration sums: mutual information's sums take the histogram's log ratios, and only they".into()));
    }
    let g2 = if d == 3 { x.gradients[2] } else { x.gradients[0] };
    let (previous, previous_support) = match (x.previous, x.log_ratios) {
        (Some(p), _) => p,
        (None, Some((l, _))) => (l, x.support),
        (None, None) => (x.values, x.support),
    };
    rec.dispatch(
        &REGISTRATION_SUMS,
        &[("MODE", mode.code() as f64), ("DIMS", d as f64)],
        bytemuck::bytes_of(&p),
        &[x.fixed, x.values, x.gradients[0], x.gradients[1], g2, x.support, previous, previous_support, out],
        groups as u64,
    );
    Ok(out)
}

/// The host arrays of one evaluation (flattened, row-major).
pub struct HostInputs<'a> {
    pub fixed: &'a [f32],
    pub mask: &'a [bool],
    pub values: &'a [f32],
    pub gradients: &'a [Vec<f32>],
    pub support: &'a [f32],
    pub previous: Option<(&'a [f32], &'a [f32])>,
    pub log_ratios: Option<(&'a [f64], Bins)>,
}

/// The CPU twin: the same sums in f64, one vector of the kernel's width.
pub fn cpu(mode: SumsMode, dims: &[usize], centre: &[f64], shifts: [f32; 2], x: &HostInputs) -> Vec<f64> {
    let d = dims.len();
    let nu = d * (d + 1);
    let mut acc = vec![0.0; mode.width(d)];
    let (sf, sm) = (shifts[0] as f64, shifts[1] as f64);
    let mut u = vec![0.0; nu];
    for i in 0..x.values.len() {
        if !x.mask[i] || x.support[i] < 0.999 {
            continue;
        }
        if mode == SumsMode::Compare {
            acc[11] += 1.0;
        }
        if x.previous.is_some_and(|(_, s)| s[i] < 0.999) {
            continue;
        }
        let (f, m) = (x.fixed[i] as f64, x.values[i] as f64);
        if let (SumsMode::Compare, Some((a, _))) = (mode, x.previous) {
            let a = a[i] as f64;
            let (fs, a_, b_) = (f - sf, a - sm, m - sm);
            for (s, v) in acc.iter_mut().zip([1.0, (a - f) * (a - f), (m - f) * (m - f), fs, a_, b_, fs * fs, a_ * a_, b_ * b_, fs * a_, fs * b_]) {
                *s += v;
            }
            continue;
        }
        let mut rest = i;
        let mut q = vec![0.0; d];
        for axis in (0..d).rev() {
            q[axis] = (rest % dims[axis]) as f64 - centre[axis];
            rest /= dims[axis];
        }
        for a in 0..d {
            let g = x.gradients[a][i] as f64;
            u[a * (d + 1)] = g;
            for b in 0..d {
                u[a * (d + 1) + 1 + b] = g * q[b];
            }
        }
        match mode {
            SumsMode::MeanSquares => {
                let r = m - f;
                acc[0] += 1.0;
                acc[1] += r * r;
                let mut k = 2 + nu;
                for a in 0..nu {
                    acc[2 + a] += u[a] * r;
                    for b in a..nu {
                        acc[k] += u[a] * u[b];
                        k += 1;
                    }
                }
            }
            SumsMode::MutualInformation => {
                let (l, b) = x.log_ratios.expect("the log ratios");
                let (row, eta, first) = b.window(f, m);
                let w: f64 = (first..first + 4).map(|k| cubic_derivative(k as f64 - eta) * l[row * b.bins + k]).sum();
                for a in 0..nu {
                    acc[a] += w * u[a];
                }
            }
            _ => {
                let (fs, ms) = (f - sf, m - sm);
                for (s, v) in acc.iter_mut().zip([1.0, fs, ms, fs * fs, ms * ms, fs * ms]) {
                    *s += v;
                }
                for a in 0..nu {
                    acc[6 + a] += fs * u[a];
                    acc[6 + nu + a] += ms * u[a];
                    acc[6 + 2 * nu + a] += u[a];
                }
            }
        }
    }
    acc
}

/// The cubic B-spline's derivative (mutual information's Parzen window on the moving value).
pub fn cubic_derivative(x: f64) -> f64 {
    let a = x.abs();
    if a < 1.0 {
        x.signum() * (-2.0 * a + 1.5 * a * a)
    } else if a < 2.0 {
        -x.signum() * (2.0 - a).powi(2) / 2.0
    } else {
        0.0
    }
}
