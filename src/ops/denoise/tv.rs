//! Total-variation denoising by Chambolle's projection algorithm (J. Math. Imaging Vision 2004),
//! in scikit-image's form (`denoise_tv_chambolle`): the minimiser of ½‖u − f‖² + w · TV(u),
//! TV isotropic with forward differences, over the last 1 to 3 axes. On the device a fixed
//! number of steps (the proximal operator of the tomography's FISTA-TV); [`cpu`] is the f64
//! reference with scikit-image's stopping rule as well.

use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn};

use crate::error::{Error, Result};
use crate::gpu::Dtype;
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
