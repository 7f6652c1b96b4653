//! `shaders/registration/registration_histogram.wgsl`: Mattes mutual information's joint
//! histogram (ITK's Parzen windows), per workgroup, then added over the workgroups on the device.

use bytemuck::{Pod, Zeroable};

use super::reduce_columns;
use super::reduce_rows::ReduceOp;
use super::REGISTRATION_HISTOGRAM;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// The most bins the kernel's shared histogram holds (64²).
pub const MOST_BINS: usize = 64;

/// Mirrors `Params` in registration_histogram.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub per_thread: u32,
    pub bins: u32,
    pub pad: u32,
    pub hist: [f32; 4],
}

/// The bins' geometry: the fixed and moving minima and bin widths.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bins {
    pub bins: usize,
    pub fixed_min: f64,
    pub fixed_width: f64,
    pub moving_min: f64,
    pub moving_width: f64,
}

impl Bins {
    /// A point's fixed bin, its moving value in bins (the cubic window's centre) and the first
    /// of the four moving bins the window reaches: ITK's, clamped to the padded range.
    pub fn window(&self, f: f64, m: f64) -> (usize, f64, usize) {
        let last = self.bins as f64 - 3.0;
        let row = ((f - self.fixed_min) / self.fixed_width + 2.0).floor().clamp(2.0, last) as usize;
        let eta = (m - self.moving_min) / self.moving_width + 2.0;
        (row, eta, eta.floor().clamp(2.0, last) as usize - 1)
    }
}

/// The CPU twin of [`record`], in f64 (weights unrounded).
pub fn cpu(bins: &Bins, fixed: &[f32], mask: &[bool], values: &[f32], support: &[f32], other: Option<&[f32]>) -> Vec<f64> {
    let b = bins.bins;
    let mut h = vec![0.0; b * b];
    for i in 0..values.len() {
        if !mask[i] || support[i] < 0.999 || other.is_some_and(|o| o[i] < 0.999) {
            continue;
        }
        let (row, eta, first) = bins.window(fixed[i] as f64, values[i] as f64);
        for k in first..first + 4 {
            h[row * b + k] += cubic(k as f64 - eta);
        }
    }
    h
}

/// The cubic B-spline β3 (mutual information's Parzen window on the moving value).
pub fn cubic(x: f64) -> f64 {
    let a = x.abs();
    if a < 1.0 {
        2.0 / 3.0 - a * a + a * a * a / 2.0
    } else if a < 2.0 {
        (2.0 - a).powi(3) / 6.0
    } else {
        0.0
    }
}

/// Records the joint histogram (bins², fixed bin major) of `count` points: `fixed` (value, mask)
/// pairs, the moving `values` and `support`, and with `other` only where that support is whole too.
pub fn record(rec: &mut Recording, bins: &Bins, count: usize, fixed: Buf, values: Buf, support: Buf, other: Option<Buf>) -> Result<Buf> {
    if !(5..=MOST_BINS).contains(&bins.bins) {
        return Err(Error::Invalid(format!("the histogram kernel takes 5 to {MOST_BINS} bins, not {}", bins.bins)));
    }
    let count32 = u32::try_from(count).map_err(|_| Error::TooLarge { what: "a joint histogram".into(), bytes: count as u64 * 4, limit: u32::MAX as u64 })?;
    // At most 2^14 points per workgroup keep a bin's fixed-point sum below 2^32.
    let per_thread = count.div_ceil(256 * 2048).clamp(1, 64);
    let groups = count.div_ceil(256 * per_thread).max(1);
    let b2 = bins.bins * bins.bins;
    let partials = rec.temp(&[groups, b2], Dtype::F32)?;
    let p = Params {
        count: count32,
        per_thread: per_thread as u32,
        bins: bins.bins as u32,
        pad: 0,
        hist: [bins.fixed_min as f32, (1.0 / bins.fixed_width) as f32, bins.moving_min as f32, (1.0 / bins.moving_width) as f32],
    };
    rec.dispatch(
        &REGISTRATION_HISTOGRAM,
        &[("COMMON", f64::from(u8::from(other.is_some())))],
        bytemuck::bytes_of(&p),
        &[fixed, values, support, other.unwrap_or(support), partials],
        groups as u64,
    );
    let joint = rec.temp(&[b2], Dtype::F32)?;
    reduce_columns::record_into(rec, ReduceOp::Sum, partials, joint, 1, groups, b2)?;
    Ok(joint)
}
