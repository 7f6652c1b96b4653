//! Total-variation denoising by Chambolle's projection algorithm (J. Math. Imaging Vision 2004),
//! in scikit-image's form (`denoise_tv_chambolle`): the minimiser of ½‖u − f‖² + w · TV(u),
//! TV isotropic with forward differences, over the last 1 to 3 axes. On the device a fixed
//! number of steps (the proximal operator of the tomography's FISTA-TV, [`record`]), or
//! scikit-image's stopping rule kept on the device ([`denoise_tv_chambolle`]); [`cpu`] is the
//! f64 reference with that rule.

use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn};

use crate::error::{Error, Result};
use crate::gpu::{Dtype, Gpu, GpuArray};
use crate::graph::{Buf, Recording};
use crate::kernels::tv_chambolle;

/// `iterations` steps of Chambolle's algorithm on `f` over its last `ndim` axes with the weight
/// `weight` (scikit-image's result with `eps=0`, `max_num_iter=iterations`).
pub fn record(rec: &mut Recording, f: Buf, weight: f32, iterations: usize, ndim: usize) -> Result<Buf> {
    check(weight as f64, iterations)?;
    if weight < f32::MIN_POSITIVE {
        return Err(Error::Invalid(format!("a TV weight of {weight}: below f32's normal range")));
    }
    let count = rec.shape(f).len();
    let mut p = rec.temp(&[ndim * count], Dtype::F32)?;
    crate::kernels::fill::record(rec, p, 0.0);
    let mut out = f;
    for _ in 0..iterations {
        (out, p) = tv_chambolle::record(rec, f, p, weight, ndim)?;
    }
    Ok(out)
}

fn check(weight: f64, iterations: usize) -> Result<()> {
    if !(weight.is_finite() && weight > 0.0) {
        return Err(Error::Invalid(format!("a TV weight of {weight} (more than 0)")));
    }
    if !(1..=100_000).contains(&iterations) {
        return Err(Error::Invalid(format!("{iterations} TV iterations (1 to 100000)")));
    }
    Ok(())
}

/// The f64 reference: scikit-image's `denoise_tv_chambolle(f, weight, eps, max_num_iter)` on
/// all of `f`'s axes (it stops when the energy changes by less than `eps` times the first).
pub fn cpu(f: &ArrayViewD<f64>, weight: f64, eps: f64, max_num_iter: usize) -> Result<ArrayD<f64>> {
    check(weight, max_num_iter)?;
    let ndim = f.ndim();
    let mut shape = vec![ndim];
    shape.extend_from_slice(f.shape());
    let mut p = ArrayD::<f64>::zeros(IxDyn(&shape));
    let (mut first, mut previous) = (0.0, 0.0);
    let mut out = f.to_owned();
    for i in 0..max_num_iter {
        let (estimate, next) = tv_chambolle::cpu(f, &p.view(), weight);
        out = estimate;
        // The energy of this estimate: ‖d‖² + w Σ|∇ out|, per voxel.
        let d = &out - f;
        let mut energy = d.iter().map(|v| v * v).sum::<f64>();
        let mut grad2 = ArrayD::<f64>::zeros(f.raw_dim());
        for a in 0..ndim {
            let n = f.shape()[a];
            if n > 1 {
                let diff = &out.slice_axis(Axis(a), (1..).into()) - &out.slice_axis(Axis(a), (..n - 1).into());
                let mut part = grad2.slice_axis_mut(Axis(a), (..n - 1).into());
                part += &diff.mapv(|v| v * v);
            }
        }
        energy += weight * grad2.iter().map(|v| v.sqrt()).sum::<f64>();
        energy /= f.len() as f64;
        if i == 0 {
            (first, previous) = (energy, energy);
        } else if (previous - energy).abs() < eps * first {
            break;
        } else {
            previous = energy;
        }
        p = next;
    }
    Ok(out)
}

/// Steps recorded per submission; the items' states are read back between them to end early.
const STEPS_PER_RECORDING: usize = 32;

/// scikit-image's `denoise_tv_chambolle(image, weight, eps, max_num_iter, channel_axis)` on the
/// device: each item (each channel, or the whole array) denoised over all its axes (1 to 3),
/// each stopping by scikit-image's rule on its own, on the device (`kernels::tv_stop`).
pub fn denoise_tv_chambolle(gpu: &Gpu, x: &ArrayViewD<f32>, weight: f64, eps: f64, max_num_iter: usize, channel_axis: Option<usize>) -> Result<ArrayD<f32>> {
    check(weight, max_num_iter)?;
    if !(eps.is_finite() && eps >= 0.0) {
        return Err(Error::Invalid(format!("a TV stopping tolerance eps of {eps} (0 or more)")));
    }
    if (weight as f32) < f32::MIN_POSITIVE {
        return Err(Error::Invalid(format!("a TV weight of {weight}: below f32's normal range")));
    }
    if x.is_empty() {
        return Err(Error::Empty("TV denoising of an empty array".into()));
    }
    crate::check::check_finite(x, "the image")?;
    // Channels first: the items of the kernels' batch.
    let (items, moved) = match channel_axis {
        Some(c) if c >= x.ndim() => return Err(Error::Invalid(format!("channel_axis {c} of an array of {} axes", x.ndim()))),
        Some(c) => {
            let mut axes: Vec<usize> = (0..x.ndim()).filter(|&a| a != c).collect();
            axes.insert(0, c);
            (x.shape()[c], x.view().permuted_axes(axes).as_standard_layout().into_owned())
        }
        None => (1, x.as_standard_layout().into_owned()),
    };
    let ndim = moved.ndim() - usize::from(channel_axis.is_some());
    if !(1..=3).contains(&ndim) {
        return Err(Error::Invalid(format!("TV denoising over {ndim} axes (1 to 3; the channel axis apart)")));
    }
    let per_item = moved.len() / items;
    let f = GpuArray::upload_f32(gpu, &moved.view())?;
    let mut state = GpuArray::upload_f32(gpu, &ArrayD::<f32>::zeros(IxDyn(&[items, 4])).view())?;
    let mut p: Option<GpuArray> = None;
    let mut result: Option<GpuArray> = None;
    let mut steps = 0;
    while steps < max_num_iter {
        let mut rec = Recording::new(gpu);
        let fb = rec.input(&f);
        let mut pb = match &p {
            Some(a) => rec.input(a),
            None => {
                let z = rec.temp(&[ndim * moved.len()], Dtype::F32)?;
                crate::kernels::fill::record(&mut rec, z, 0.0);
                z
            }
        };
        let mut rb = result.as_ref().map_or(fb, |a| rec.input(a));
        let mut sb = rec.input(&state);
        let chunk = (max_num_iter - steps).min(STEPS_PER_RECORDING);
        for _ in 0..chunk {
            let energy;
            (rb, pb, energy) = tv_chambolle::record_stopping(&mut rec, fb, pb, rb, sb, weight as f32, ndim)?;
            let rows = rec.reinterpret(energy, &[items, per_item], Dtype::F32)?;
            let sums = crate::ops::reduce::record(&mut rec, rows, crate::ops::reduce::Reduction::Sum, Some(1))?;
            sb = crate::kernels::tv_stop::record(&mut rec, sums, sb, eps as f32, per_item)?;
        }
        let (ro, po, so) = (rec.output(rb), rec.output(pb), rec.output(sb));
        let d = rec.download(sb);
        let results = rec.run()?;
        let stopped = results.f32(d)?.outer_iter().all(|s| s[0] != 0.0);
        (result, p, state) = (Some(results.array(ro)), Some(results.array(po)), results.array(so));
        steps += chunk;
        if stopped {
            break;
        }
    }
    let out = result.expect("at least one step").download_f32(gpu)?;
    Ok(match channel_axis {
        Some(c) => {
            // Back from channels first.
            let mut axes: Vec<usize> = (1..out.ndim()).collect();
            axes.insert(c, 0);
            out.permuted_axes(axes).as_standard_layout().into_owned()
        }
        None => out,
    })
}
