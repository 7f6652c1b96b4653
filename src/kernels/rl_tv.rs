//! `shaders/deconvolve/rl_tv.wgsl`: the total-variation factor of Richardson-Lucy-TV (Dey et al.
//! 2006), t = 1 / (1 - λ div(∇x / |∇x|)), on a padded estimate holding the image at its corner.

use bytemuck::{Pod, Zeroable};
use ndarray::{ArrayD, ArrayViewD, IxDyn};

use super::RL_TV;
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
    pub axis: u32,
    pub first: u32,
    pub prev_rows: u32,
    pub pad: [u32; 2],
}

/// Records `t = factor(x)` into a new temporary: `image` is the extent of the image inside `x`
/// (x's shape or smaller along each axis), `spatial` the number of trailing axes
/// differentiated (1 to 3, at most x's axes).
#[cfg(test)]
pub fn record(rec: &mut Recording, x: Buf, image: &[usize], spatial: usize, lambda: f32) -> Result<Buf> {
    record_chunk(rec, Neighbours { x, prev: x, next: x, first: 0 }, image, spatial, lambda)
}

/// One chunk of an array split along axis 0, with the chunks beside it (the chunk itself where
/// there is none) and its first row in the whole array.
#[derive(Clone, Copy, Debug)]
pub struct Neighbours {
    pub x: Buf,
    pub prev: Buf,
    pub next: Buf,
    pub first: usize,
}

/// [`record`] for one chunk: `image` is the image's extent in the whole array.
pub fn record_chunk(rec: &mut Recording, n: Neighbours, image: &[usize], spatial: usize, lambda: f32) -> Result<Buf> {
    let x = n.x;
    rec.expect_dtype(x, Dtype::F32, "TV estimate")?;
    let dims = rec.dims(x).to_vec();
    // A chunk knows the whole array's extent along axis 0 only when it is the whole array.
    let chunk = n.first > 0 || n.prev != x || n.next != x;
    let too_long = |(d, (&n, &l)): (usize, (&usize, &usize))| n == 0 || (n > l && !(chunk && d == 0));
    if image.len() != dims.len() || image.iter().zip(&dims).enumerate().any(too_long) || !(1..=3.min(dims.len())).contains(&spatial) {
        return Err(Error::Invalid(format!("TV: image extent {image:?} and {spatial} spatial axes do not fit an array of shape {dims:?}")));
    }
    for (b, what) in [(n.prev, "TV chunk before"), (n.next, "TV chunk after")] {
        rec.expect_dtype(b, Dtype::F32, what)?;
        if rec.dims(b)[1..] != dims[1..] {
            return Err(Error::Shape(format!("{what}: {:?} does not stack with {dims:?}", rec.dims(b))));
        }
    }
    let t = rec.temp(&dims, Dtype::F32)?;
    let count = dims.iter().product::<usize>() as u32;
    let mut extent = pad4(image);
    let axis = 4 - dims.len();
    extent[axis] = image[0].saturating_sub(n.first) as u32;
    let prev_rows = rec.dims(n.prev)[0] as u32;
    let p = Params { dims: pad4(&dims), extent, spatial: spatial as u32, count, lambda, axis: axis as u32, first: n.first as u32, prev_rows, pad: [0; 2] };
    rec.dispatch(&RL_TV, &[], bytemuck::bytes_of(&p), &[x, n.prev, n.next, t], RL_TV.groups(count as u64));
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
    let grads: Vec<ArrayD<f64>> = axes
        .clone()
        .map(|a| {
            ArrayD::from_shape_fn(x.raw_dim(), |i| {
                if !inside(&i) || i[a] + 1 >= image[a] {
                    return 0.0;
                }
                let mut next = i.clone();
                next[a] += 1;
                x[&next] - x[&i]
            })
        })
        .collect();
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
