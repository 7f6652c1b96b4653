//! Non-local means (Buades et al. 2005) in scikit-image's fast mode (`denoise_nl_means(...,
//! fast_mode=True)`, Darbon et al. 2008 and Froment 2014): for every patch shift t of the search
//! window (half of it: t_col ≥ 0, the other half by symmetry), the patch distances of all
//! pixels at once; each pair (p, p + t) weighs the other's value by exp(−distance) (scikit-image's
//! `fast_exp`, Schraudolph's approximation, as it computes it). scikit-image's exact arithmetic:
//! the image padded by reflection (numpy's 'reflect') by s/2 + d + 1, a patch distance over
//! (s − 1)² pixels (its integral image's box) less 2σ² per pixel and channel, normalised by
//! channels · h² · s², weights 0 beyond a distance of 5, ½ for shifts along a column.
//! On the device: per shift one pass of row sums (`nlm_rows`) and one that gathers both ends of
//! each pair into the interior pixels (`nlm_accumulate`): no atomics. [`cpu`] is the f64
//! reference with scikit-image's loops.

use ndarray::{s, Array3, ArrayD, ArrayView3, ArrayViewD, Axis};

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
        if !self.fast_mode {
            return Err(Error::Invalid("non-local means runs in fast mode (fast_mode=False, the Gaussian-weighted patches, is not implemented yet)".into()));
        }
        Ok(())
    }

    /// The odd patch size s, s / 2, the padding s / 2 + d + 1, and channels · h² · s².
    fn geometry(&self, channels: usize) -> (usize, usize, usize, f64) {
        let s = self.patch_size | 1;
        (s, s / 2, s / 2 + self.patch_distance + 1, channels as f64 * self.h * self.h * (s * s) as f64)
    }

    /// The search window's half (t_row over ±d, t_col over 0..=d), in scikit-image's order.
    fn shifts(&self) -> Vec<[i32; 2]> {
        let d = self.patch_distance as i32;
        (-d..=d).flat_map(|r| (0..=d).map(move |c| [r, c])).collect()
    }
}

/// Shifts recorded per submission (two dispatches each).
const SHIFTS_PER_RECORDING: usize = 256;

/// Non-local means of `x`: a 2-D image, with a channel axis when `channel_axis` is given
/// (the channels share the weights), with `x`'s shape.
pub fn denoise_nl_means(gpu: &Gpu, x: &ArrayViewD<f32>, o: &NlMeans, channel_axis: Option<usize>) -> Result<ArrayD<f32>> {
    o.check()?;
    if x.is_empty() {
        return Err(Error::Empty(format!("non-local means of an array of shape {:?}", x.shape())));
    }
    crate::check::check_finite(x, "the image")?;
    // (rows, cols, channels), the channels last.
    let image = match channel_axis {
        Some(c) if c >= x.ndim() => return Err(Error::Invalid(format!("channel_axis {c} of an array of {} axes", x.ndim()))),
        Some(c) => {
            let mut axes: Vec<usize> = (0..x.ndim()).filter(|&a| a != c).collect();
            axes.push(c);
            x.view().permuted_axes(axes)
        }
        None => x.view().insert_axis(Axis(x.ndim())),
    };
    if image.ndim() != 3 {
        return Err(Error::Invalid(format!("non-local means of {} spatial axes: 2 are implemented (3 and 4 not yet)", image.ndim() - 1)));
    }
    let image = image.as_standard_layout().into_owned().into_dimensionality::<ndarray::Ix3>().expect("three axes");
    let (rows, cols, channels) = image.dim();
    let (_, offset, pad, h2s2) = o.geometry(channels);
    let padded_len = (rows + 2 * pad) * (cols + 2 * pad) * (channels + 1);
    if padded_len > u32::MAX as usize {
        return Err(Error::TooLarge {
            what: format!("non-local means of a {rows}×{cols} image of {channels} channels (padded)"),
            bytes: 4 * padded_len as u64,
            limit: 4 * u32::MAX as u64,
        });
    }
    let mut rec = Recording::new(gpu);
    let x_in = rec.upload_f32(&image.view().into_dyn())?;
    let padded = crate::ops::layout::pad(&mut rec, x_in, &[(pad, pad), (pad, pad), (0, 0)], Boundary::Mirror)?;
    let acc = rec.temp(&[rows, cols, channels + 1], Dtype::F32)?;
    crate::kernels::fill::record(&mut rec, acc, 0.0);
    let (po, ao) = (rec.output(padded), rec.output(acc));
    let results = rec.run()?;
    let (padded, mut acc): (GpuArray, GpuArray) = (results.array(po), results.array(ao));
    let noise = (channels as f64 * 2.0 * o.sigma * o.sigma) as f32;
    for chunk in o.shifts().chunks(SHIFTS_PER_RECORDING) {
        let mut rec = Recording::new(gpu);
        let p = rec.input(&padded);
        let mut a = rec.input(&acc);
        for &t in chunk {
            let sums = nlm_rows::record(&mut rec, p, offset, t, noise)?;
            a = nlm_accumulate::record(&mut rec, p, sums, a, offset, pad, t, h2s2 as f32)?;
        }
        let out = rec.output(a);
        acc = rec.run()?.array(out);
    }
    let mut rec = Recording::new(gpu);
    let a = rec.input(&acc);
    let num = crate::ops::layout::crop(&mut rec, a, &[0, 0, 0], &[rows, cols, channels])?;
    let den = crate::ops::layout::crop(&mut rec, a, &[0, 0, channels], &[rows, cols, 1])?;
    let y = broadcast::record(&mut rec, BroadcastOp::Divide, num, den)?;
    let d = rec.download(y);
    let y = rec.run()?.into_f32(d)?;
    // Back to x's axes.
    Ok(match channel_axis {
        Some(c) => {
            let last = y.ndim() - 1;
            let mut axes: Vec<usize> = (0..last).collect();
            axes.insert(c, last);
            y.permuted_axes(axes).as_standard_layout().into_owned()
        }
        None => y.index_axis_move(Axis(2), 0),
    })
}

/// The f64 reference with scikit-image's loops (`_fast_nl_means_denoising_2d`, 0.26), on an
/// image (rows, cols, channels); the patch distances summed directly over their box.
pub fn cpu(image: &ArrayView3<f64>, o: &NlMeans) -> Result<Array3<f64>> {
    o.check()?;
    let (rows, cols, channels) = image.dim();
    let (_, offset, pad, h2s2) = o.geometry(channels);
    let padded = reflect_pad(image, pad);
    let (nr, nc) = (rows + 2 * pad, cols + 2 * pad);
    let mut num = Array3::<f64>::zeros((nr, nc, channels));
    let mut den = ndarray::Array2::<f64>::zeros((nr, nc));
    let (o_, noise) = (offset as i64, channels as f64 * 2.0 * o.sigma * o.sigma);
    for [tr, tc] in o.shifts() {
        let (tr, tc) = (tr as i64, tc as i64);
        let alpha = if tc == 0 { 0.5 } else { 1.0 };
        for r in o_.max(o_ - tr)..(nr as i64 - o_).min(nr as i64 - o_ - tr) {
            for c in o_..nc as i64 - o_ - tc {
                let mut dist = 0.0;
                for i in r - o_ + 1..=r + o_ {
                    for j in c - o_ + 1..=c + o_ {
                        let mut dd = 0.0;
                        for ch in 0..channels {
                            let t = padded[(i as usize, j as usize, ch)] - padded[((i + tr) as usize, (j + tc) as usize, ch)];
                            dd += t * t;
                        }
                        dist += dd - noise;
                    }
                }
                let dist = dist.max(0.0) / h2s2;
                if dist > 5.0 {
                    continue;
                }
                let w = alpha * fast_exp(-dist);
                let (p, q) = ((r as usize, c as usize), ((r + tr) as usize, (c + tc) as usize));
                den[p] += w;
                den[q] += w;
                for ch in 0..channels {
                    num[(p.0, p.1, ch)] += w * padded[(q.0, q.1, ch)];
                    num[(q.0, q.1, ch)] += w * padded[(p.0, p.1, ch)];
                }
            }
        }
    }
    let inner = s![pad..nr - pad, pad..nc - pad];
    let mut out = num.slice(s![pad..nr - pad, pad..nc - pad, ..]).to_owned();
    for ((r, c, ch), v) in out.indexed_iter_mut() {
        let _ = ch;
        *v /= den.slice(inner)[(r, c)];
    }
    Ok(out)
}

/// scikit-image's `fast_exp` (Schraudolph 1999): the double whose high word is
/// trunc(EXP_A · y) + EXP_BC, low word 0.
pub fn fast_exp(y: f64) -> f64 {
    const EXP_A: f64 = 1512775.3951951857;
    const EXP_BC: i32 = 1072632447;
    let hi = (EXP_A * y) as i32 + EXP_BC;
    f64::from_bits((hi as u32 as u64) << 32)
}

/// numpy.pad(x, ((pad, pad), (pad, pad), (0, 0)), mode='reflect'): mirrored about the edge
/// samples, repeatedly where the padding is wider.
fn reflect_pad(x: &ArrayView3<f64>, pad: usize) -> Array3<f64> {
    let (rows, cols, channels) = x.dim();
    let index = |i: i64, n: usize| -> usize {
        if n == 1 {
            return 0;
        }
        let period = 2 * (n as i64 - 1);
        let m = i.rem_euclid(period);
        (if m < n as i64 { m } else { period - m }) as usize
    };
    Array3::from_shape_fn((rows + 2 * pad, cols + 2 * pad, channels), |(r, c, ch)| {
        x[(index(r as i64 - pad as i64, rows), index(c as i64 - pad as i64, cols), ch)]
    })
}
