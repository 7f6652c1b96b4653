//! Non-local means (Buades et al. 2005) in scikit-image's fast mode (`denoise_nl_means(...,
//! fast_mode=True)`, Darbon et al. 2008 and Froment 2014): for every patch shift t of the search
//! window (half of it: t_col ≥ 0, the other half by symmetry), the patch distances of all
//! pixels at once; each pair (p, p + t) weighs the other's value by exp(−distance) (scikit-image's
//! `fast_exp`, Schraudolph's approximation, as it computes it). scikit-image's exact arithmetic:
//! the image padded by reflection (numpy's 'reflect') by s/2 + d + 1, a patch distance over
//! (s − 1)² pixels (its integral image's box) less 2σ² per pixel and channel, normalised by
//! channels · h² · s², weights 0 beyond a distance of 5, ½ for shifts along a column.
//! Images and volumes (s³ for s² and the planes' shifts besides), grey or with channels. On
//! the device: per shift one pass of row sums (`nlm_rows`), for volumes one more along the rows
//! (`nlm_box`), and one that gathers both ends of each pair into the interior pixels
//! (`nlm_accumulate`): no atomics. [`cpu`] is the f64 reference with scikit-image's loops.

use ndarray::{s, Array3, ArrayD, ArrayViewD, Axis};

use crate::error::{Error, Result};
use crate::gpu::{Dtype, Gpu, GpuArray};
use crate::graph::Recording;
use crate::kernels::boundary::Boundary;
use crate::kernels::broadcast::{self, BroadcastOp};
use crate::kernels::{nlm_accumulate, nlm_rows};

/// scikit-image's `denoise_nl_means` arguments.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NlMeans {
    pub patch_size: usize,
    pub patch_distance: usize,
    pub h: f64,
    pub fast_mode: bool,
    pub sigma: f64,
}

impl Default for NlMeans {
    fn default() -> NlMeans {
        NlMeans { patch_size: 7, patch_distance: 11, h: 0.1, fast_mode: true, sigma: 0.0 }
    }
}

impl NlMeans {
    fn check(&self) -> Result<()> {
        if !(1..=255).contains(&self.patch_size) || self.patch_distance > 255 {
            return Err(Error::Invalid(format!("a patch size of {} (1 to 255) and a patch distance of {} (0 to 255)", self.patch_size, self.patch_distance)));
        }
        if !(self.h.is_finite() && self.h > 0.0 && self.sigma.is_finite() && self.sigma >= 0.0) {
            return Err(Error::Invalid(format!("h {} (more than 0) and sigma {} (0 or more)", self.h, self.sigma)));
        }
        if !self.fast_mode && self.patch_size == 1 {
            return Err(Error::Invalid("a patch of one pixel without fast mode: its Gaussian weights have no width (scikit-image divides 0 by 0)".into()));
        }
        Ok(())
    }

    /// The odd patch size s, s / 2, the padding s / 2 + d + 1, and channels · h² · s^ndim.
    fn geometry(&self, channels: usize, ndim: usize) -> (usize, usize, usize, f64) {
        let s = self.patch_size | 1;
        (s, s / 2, s / 2 + self.patch_distance + 1, channels as f64 * self.h * self.h * (s as f64).powi(ndim as i32))
    }

    /// The slow mode's Gaussian patch weights exp(−|x|² / 2A²), A = (s − 1)/4, over the patch
    /// (s^ndim, row-major), normalised by channels · Σw · h² as scikit-image does.
    fn patch_weights(&self, channels: usize, ndim: usize) -> Vec<f64> {
        let s = self.patch_size | 1;
        let (o, a) = ((s / 2) as f64, (s as f64 - 1.0) / 4.0);
        let g: Vec<f64> = (0..s.pow(ndim as u32))
            .map(|i| {
                let r2: f64 = (0..ndim).map(|k| ((i / s.pow(k as u32)) % s) as f64 - o).map(|x| x * x).sum();
                (-r2 / (2.0 * a * a)).exp()
            })
            .collect();
        let scale = 1.0 / (channels as f64 * g.iter().sum::<f64>() * self.h * self.h);
        g.iter().map(|v| v * scale).collect()
    }

    /// The search window's half (t_pln over ±d for volumes, t_row over ±d, t_col over 0..=d),
    /// in scikit-image's order.
    fn shifts(&self, ndim: usize) -> Vec<[i32; 3]> {
        let d = self.patch_distance as i32;
        let planes = if ndim == 3 { -d..=d } else { 0..=0 };
        planes.flat_map(|p| (-d..=d).flat_map(move |r| (0..=d).map(move |c| [p, r, c]))).collect()
    }
}

/// Shifts recorded per submission (two dispatches each).
const SHIFTS_PER_RECORDING: usize = 256;

/// Non-local means of `x`: a 2-D image or a volume, with a channel axis when `channel_axis`
/// is given (the channels share the weights), with `x`'s shape.
pub fn denoise_nl_means(gpu: &Gpu, x: &ArrayViewD<f32>, o: &NlMeans, channel_axis: Option<usize>) -> Result<ArrayD<f32>> {
    o.check()?;
    if x.is_empty() {
        return Err(Error::Empty(format!("non-local means of an array of shape {:?}", x.shape())));
    }
    crate::check::check_finite(x, "the image")?;
    // The channels last.
    let image = match channel_axis {
        Some(c) if c >= x.ndim() => return Err(Error::Invalid(format!("channel_axis {c} of an array of {} axes", x.ndim()))),
        Some(c) => {
            let mut axes: Vec<usize> = (0..x.ndim()).filter(|&a| a != c).collect();
            axes.push(c);
            x.view().permuted_axes(axes)
        }
        None => x.view().insert_axis(Axis(x.ndim())),
    };
    let ndim = image.ndim() - 1;
    if !(2..=3).contains(&ndim) {
        return Err(Error::Invalid(format!("non-local means of {ndim} spatial axes: 2 and 3 are implemented (4 not yet)")));
    }
    // (planes, rows, cols, channels), one plane for an image.
    let image = if ndim == 2 { image.insert_axis(Axis(0)) } else { image };
    let image = image.as_standard_layout().into_owned().into_dimensionality::<ndarray::Ix4>().expect("four axes");
    let (planes, rows, cols, channels) = image.dim();
    if !o.fast_mode {
        return slow(gpu, &image, o, ndim, channel_axis);
    }
    let (_, offset, pad, h2s2) = o.geometry(channels, ndim);
    let pads = [if ndim == 3 { pad } else { 0 }, pad];
    let dims = [planes + 2 * pads[0], rows + 2 * pad, cols + 2 * pad];
    let padded_len = dims.iter().product::<usize>() * (channels + 1);
    if padded_len > u32::MAX as usize / 2 {
        return Err(Error::TooLarge {
            what: format!("non-local means of {:?} of {channels} channels (padded)", &image.shape()[..3]),
            bytes: 4 * padded_len as u64,
            limit: 2 * u32::MAX as u64,
        });
    }
    let mut rec = Recording::new(gpu);
    let x_in = rec.upload_f32(&image.view().into_dyn())?;
    let padded = crate::ops::layout::pad(&mut rec, x_in, &[(pads[0], pads[0]), (pad, pad), (pad, pad), (0, 0)], Boundary::Mirror)?;
    let acc = rec.temp(&[planes, rows, cols, channels + 1], Dtype::F32)?;
    crate::kernels::fill::record(&mut rec, acc, 0.0);
    let (po, ao) = (rec.output(padded), rec.output(acc));
    let results = rec.run()?;
    let (padded, mut acc): (GpuArray, GpuArray) = (results.array(po), results.array(ao));
    let noise = (channels as f64 * 2.0 * o.sigma * o.sigma) as f32;
    for chunk in o.shifts(ndim).chunks(SHIFTS_PER_RECORDING) {
        let mut rec = Recording::new(gpu);
        let p = rec.input(&padded);
        // Planes and rows as one axis for the row sums (the shift along it flattened too: the
        // sums that straddle two planes are never read).
        let flat = rec.reinterpret(p, &[dims[0] * dims[1], dims[2], channels], Dtype::F32)?;
        let mut a = rec.input(&acc);
        for &t in chunk {
            let sums = nlm_rows::record(&mut rec, flat, offset, [t[0] * dims[1] as i32 + t[1], t[2]], noise)?;
            let (sums, stride) =
                if ndim == 3 { (crate::kernels::nlm_box::record(&mut rec, sums, offset, dims[2])?, dims[1] * dims[2]) } else { (sums, dims[2]) };
            a = nlm_accumulate::record(&mut rec, p, sums, a, offset, pads, t, stride, h2s2 as f32)?;
        }
        let out = rec.output(a);
        acc = rec.run()?.array(out);
    }
    let mut rec = Recording::new(gpu);
    let a = rec.input(&acc);
    let num = crate::ops::layout::crop(&mut rec, a, &[0, 0, 0, 0], &[planes, rows, cols, channels])?;
    let den = crate::ops::layout::crop(&mut rec, a, &[0, 0, 0, channels], &[planes, rows, cols, 1])?;
    let y = broadcast::record(&mut rec, BroadcastOp::Divide, num, den)?;
    let d = rec.download(y);
    Ok(restored(rec.run()?.into_f32(d)?, ndim, channel_axis))
}

/// The slow mode (`fast_mode=False`): one pass, a pixel a thread.
fn slow(gpu: &Gpu, image: &ndarray::Array4<f32>, o: &NlMeans, ndim: usize, channel_axis: Option<usize>) -> Result<ArrayD<f32>> {
    let channels = image.dim().3;
    if ndim == 3 && channels > 1 {
        return Err(Error::Invalid("non-local means of a volume with channels needs fast mode (as scikit-image's)".into()));
    }
    let (s, offset, _, _) = o.geometry(channels, ndim);
    let po = if ndim == 3 { offset } else { 0 };
    let w: Vec<f32> = o.patch_weights(channels, ndim).iter().map(|&v| v as f32).collect();
    let mut rec = Recording::new(gpu);
    let x_in = rec.upload_f32(&image.view().into_dyn())?;
    let padded = crate::ops::layout::pad(&mut rec, x_in, &[(po, po), (offset, offset), (offset, offset), (0, 0)], Boundary::Mirror)?;
    let wb = rec.upload_f32(&ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[w.len()]), w).expect("one per patch pixel").view())?;
    let y = crate::kernels::nlm_slow::record(&mut rec, padded, wb, s, o.patch_distance, ndim == 3, (2.0 * o.sigma * o.sigma) as f32)?;
    let d = rec.download(y);
    Ok(restored(rec.run()?.into_f32(d)?, ndim, channel_axis))
}

/// (planes, rows, cols, channels) back to the caller's axes.
fn restored(mut y: ArrayD<f32>, ndim: usize, channel_axis: Option<usize>) -> ArrayD<f32> {
    if ndim == 2 {
        y = y.index_axis_move(Axis(0), 0);
    }
    match channel_axis {
        Some(c) => {
            let last = y.ndim() - 1;
            let mut axes: Vec<usize> = (0..last).collect();
            axes.insert(c, last);
            y.permuted_axes(axes).as_standard_layout().into_owned()
        }
        None => y.index_axis_move(Axis(ndim), 0),
    }
}

/// The f64 reference with scikit-image's loops (`_fast_nl_means_denoising_2d` and `_3d`,
/// 0.26) on an image (1, rows, cols, channels) or a volume (planes, rows, cols, channels) —
/// `volume` says which; the patch distances summed directly over their box.
pub fn cpu(image: &ndarray::ArrayView4<f64>, o: &NlMeans, volume: bool) -> Result<ndarray::Array4<f64>> {
    o.check()?;
    if !o.fast_mode {
        return Ok(cpu_slow(image, o, volume));
    }
    let (planes, rows, cols, channels) = image.dim();
    let ndim = if volume { 3 } else { 2 };
    let (_, offset, pad, h2s2) = o.geometry(channels, ndim);
    let pp = if volume { pad } else { 0 };
    let padded = reflect_pad(image, [pp, pad, pad]);
    let n = [planes + 2 * pp, rows + 2 * pad, cols + 2 * pad];
    let mut num = ndarray::Array4::<f64>::zeros((n[0], n[1], n[2], channels));
    let mut den = Array3::<f64>::zeros((n[0], n[1], n[2]));
    let (o_, noise) = (offset as i64, channels as f64 * 2.0 * o.sigma * o.sigma);
    // The box along the planes: (p − o, p + o] for volumes, p itself for an image.
    let (below, above) = if volume { (o_ - 1, o_) } else { (0, 0) };
    let range = |t: i64, len: usize| o_.max(o_ - t)..(len as i64 - o_).min(len as i64 - o_ - t);
    for [tp, tr, tc] in o.shifts(ndim) {
        let (tp, tr, tc) = (tp as i64, tr as i64, tc as i64);
        let alpha = if tc == 0 { 0.5 } else { 1.0 };
        let planes_range = if volume { range(tp, n[0]) } else { 0..1 };
        for p in planes_range {
            for r in range(tr, n[1]) {
                for c in o_..n[2] as i64 - o_ - tc {
                    let mut dist = 0.0;
                    for k in p - below..=p + above {
                        for i in r - o_ + 1..=r + o_ {
                            for j in c - o_ + 1..=c + o_ {
                                let mut dd = 0.0;
                                for ch in 0..channels {
                                    let t = padded[(k as usize, i as usize, j as usize, ch)]
                                        - padded[((k + tp) as usize, (i + tr) as usize, (j + tc) as usize, ch)];
                                    dd += t * t;
                                }
                                dist += dd - noise;
                            }
                        }
                    }
                    let dist = dist.max(0.0) / h2s2;
                    if dist > 5.0 {
                        continue;
                    }
                    let w = alpha * fast_exp(-dist);
                    let (a, b) = ((p as usize, r as usize, c as usize), ((p + tp) as usize, (r + tr) as usize, (c + tc) as usize));
                    den[a] += w;
                    den[b] += w;
                    for ch in 0..channels {
                        num[(a.0, a.1, a.2, ch)] += w * padded[(b.0, b.1, b.2, ch)];
                        num[(b.0, b.1, b.2, ch)] += w * padded[(a.0, a.1, a.2, ch)];
                    }
                }
            }
        }
    }
    let mut out = num.slice(s![pp..n[0] - pp, pad..n[1] - pad, pad..n[2] - pad, ..]).to_owned();
    let den = den.slice(s![pp..n[0] - pp, pad..n[1] - pad, pad..n[2] - pad]).to_owned();
    for ((p, r, c, _), v) in out.indexed_iter_mut() {
        *v /= den[(p, r, c)];
    }
    Ok(out)
}

/// The slow mode's loops (`_nl_means_denoising_2d`, `_3d`), in f64.
fn cpu_slow(image: &ndarray::ArrayView4<f64>, o: &NlMeans, volume: bool) -> ndarray::Array4<f64> {
    let (planes, rows, cols, channels) = image.dim();
    let ndim = if volume { 3 } else { 2 };
    let (s, offset, _, _) = o.geometry(channels, ndim);
    let w = o.patch_weights(channels, ndim);
    let po = if volume { offset } else { 0 };
    let padded = reflect_pad(image, [po, offset, offset]);
    let (d, noise) = (o.patch_distance, 2.0 * o.sigma * o.sigma);
    let inner = if volume { s * s } else { s };
    ndarray::Array4::from_shape_fn((planes, rows, cols, channels), |(pl, r, c, ch)| {
        let (mut sum, mut weights) = (0.0, 0.0);
        for i in pl.saturating_sub(d)..planes.min(pl + d + 1) {
            for j in r.saturating_sub(d)..rows.min(r + d + 1) {
                for k in c.saturating_sub(d)..cols.min(c + d + 1) {
                    let mut dist = 0.0;
                    let mut gone = false;
                    for a in 0..s {
                        if dist > 5.0 {
                            gone = true;
                            break;
                        }
                        for b in 0..inner {
                            let (dp, dr, dc) = if volume { (a, b / s, b % s) } else { (0, a, b) };
                            for e in 0..channels {
                                let t = padded[(pl + dp, r + dr, c + dc, e)] - padded[(i + dp, j + dr, k + dc, e)];
                                dist += w[a * inner + b] * (t * t - noise);
                            }
                        }
                    }
                    let weight = if gone { 0.0 } else { fast_exp(-dist.max(0.0)) };
                    weights += weight;
                    sum += weight * padded[(i + po, j + offset, k + offset, ch)];
                }
            }
        }
        sum / weights
    })
}

/// scikit-image's `fast_exp` (Schraudolph 1999): the double whose high word is
/// trunc(EXP_A · y) + EXP_BC, low word 0.
pub fn fast_exp(y: f64) -> f64 {
    const EXP_A: f64 = 1512775.3951951857;
    const EXP_BC: i32 = 1072632447;
    let hi = (EXP_A * y) as i32 + EXP_BC;
    f64::from_bits((hi as u32 as u64) << 32)
}

/// numpy.pad(x, ((pads[0],) * 2, (pads[1],) * 2, (pads[2],) * 2, (0, 0)), mode='reflect'):
/// mirrored about the edge samples, repeatedly where the padding is wider.
fn reflect_pad(x: &ndarray::ArrayView4<f64>, pads: [usize; 3]) -> ndarray::Array4<f64> {
    let (p, r, c, channels) = x.dim();
    let index = |i: usize, pad: usize, n: usize| -> usize {
        if n == 1 {
            return 0;
        }
        let period = 2 * (n as i64 - 1);
        let m = (i as i64 - pad as i64).rem_euclid(period);
        (if m < n as i64 { m } else { period - m }) as usize
    };
    ndarray::Array4::from_shape_fn((p + 2 * pads[0], r + 2 * pads[1], c + 2 * pads[2], channels), |(a, b, d, ch)| {
        x[(index(a, pads[0], p), index(b, pads[1], r), index(d, pads[2], c), ch)]
    })
}
