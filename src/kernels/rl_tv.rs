//! `shaders/deconvolve/rl_tv.wgsl`: the total-variation factor of Richardson-Lucy-TV (Dey et al.
//! 2006), t = 1 / (1 - λ div(∇x / |∇x|)), on a padded estimate holding the image at its corner.

use bytemuck::{Pod, Zeroable};
use ndarray::{ArrayD, ArrayViewD, IxDyn};

use super::{RL_TV};
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in rl_tv.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub dims: [u32; 4],
    pub extent: [u32; 4],
    pub spatial: u32,
    pub count: u32,
    pub lambda: f32,
    pub pad: u32,
}

/// Records `t = factor(x)` into a new temporary: `image` is the extent of the image inside `x`
/// (x's shape or smaller along each axis), `spatial` the number of trailing axes
/// differentiated (1 to 3, at most x's axes).
pub fn record(rec: &mut Recording, x: Buf, image: &[usize], spatial: usize, lambda: f32) -> Result<Buf> {
    rec.expect_dtype(x, Dtype::F32, "TV estimate")?;
    let dims = rec.dims(x).to_vec();
    if image.len() != dims.len() || image.iter().zip(&dims).any(|(&n, &l)| n == 0 || n > l) || !(1..=3.min(dims.len())).contains(&spatial) {
        return Err(Error::Invalid(format!("TV: image extent {image:?} and {spatial} spatial axes do not fit an array of shape {dims:?}")));
    }
    let t = rec.temp(&dims, Dtype::F32)?;
    let count = dims.iter().product::<usize>() as u32;
    let p = Params { dims: pad4(&dims), extent: pad4(image), spatial: spatial as u32, count, lambda, pad: 0 };
    rec.dispatch(&RL_TV, &[], bytemuck::bytes_of(&p), &[x, t], RL_TV.groups(count as u64));
    Ok(t)
}

fn pad4(d: &[usize]) -> [u32; 4] {
    let mut out = [1u32; 4];
    for (o, &v) in out[4 - d.len()..].iter_mut().zip(d) {
        *o = v as u32;
    }
    out
}

/// The CPU twin in f64, written with whole-array differences: forward differences inside the
/// image (zero at its last element per axis), normalised per element, then the backward
/// divergence.
pub fn cpu(x: &ArrayViewD<f64>, image: &[usize], spatial: usize, lambda: f64) -> ArrayD<f64> {
    let nd = x.ndim();
    let axes = nd - spatial..nd;
    let inside = |i: &IxDyn| (0..nd).all(|d| i[d] < image[d]);
    let grads: Vec<ArrayD<f64>> = axes.clone().map(|a| {
        ArrayD::from_shape_fn(x.raw_dim(), |i| {
            if !inside(&i) || i[a] + 1 >= image[a] {
                return 0.0;
            }
            let mut next = i.clone();
            next[a] += 1;
            x[&next] - x[&i]
        })
    }).collect();
    let norm = ArrayD::from_shape_fn(x.raw_dim(), |i| grads.iter().map(|g| g[&i] * g[&i]).sum::<f64>().sqrt());
    let units: Vec<ArrayD<f64>> = grads.iter().map(|g| ndarray::Zip::from(g).and(&norm).map_collect(|&g, &n| if n > 0.0 { g / n } else { 0.0 })).collect();
    ArrayD::from_shape_fn(x.raw_dim(), |i| {
        if !inside(&i) {
            return 1.0;
        }
        let mut div = 0.0;
        for (u, a) in units.iter().zip(axes.clone()) {
            div += u[&i];
            if i[a] > 0 {
                let mut prev = i.clone();
                prev[a] -= 1;
                div -= u[&prev];
            }
        }
        1.0 / (1.0 - lambda * div)
    })
}
