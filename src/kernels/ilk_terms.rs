//! `shaders/registration/ilk_terms.wgsl`: scikit-image's optical_flow_ilk per point: the
//! warped image's gradient and the local products the window filter sums.

use bytemuck::{Pod, Zeroable};

use super::ILK_TERMS;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in ilk_terms.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct TermsParams {
    pub count: u32,
    pub ndim: u32,
    pub pad: [u32; 2],
    pub dims: [u32; 4],
}

/// Terms per point on `ndim` axes: the products g_a g_b (a ≤ b), then g_a e.
pub fn terms(ndim: usize) -> usize {
    ndim * (ndim + 1) / 2 + ndim
}

/// Records the terms of `warped` (the image's shape `dims`, 2 or 3 axes) against `reference`
/// at `flow` (ndim, dims): an array (terms, dims).
pub fn record_terms(rec: &mut Recording, warped: Buf, reference: Buf, flow: Buf) -> Result<Buf> {
    let dims = rec.dims(warped).to_vec();
    let nd = dims.len();
    if !(nd == 2 || nd == 3) {
        return Err(Error::Shape(format!("optical flow of a {nd}-axis image (2 or 3 axes)")));
    }
    let count = dims.iter().product::<usize>();
    let mut out_dims = vec![terms(nd)];
    out_dims.extend(&dims);
    let out = rec.temp(&out_dims, Dtype::F32)?;
    let mut d = [1u32; 4];
    d.iter_mut().zip(&dims).for_each(|(a, &b)| *a = b as u32);
    let p = TermsParams { count: count as u32, ndim: nd as u32, pad: [0; 2], dims: d };
    rec.dispatch(&ILK_TERMS, &[], bytemuck::bytes_of(&p), &[warped, reference, flow, out], ILK_TERMS.groups(count as u64));
    Ok(out)
}

#[cfg(test)]
/// The CPU twin of [`record_terms`] (f64): `warped`, `reference` of shape `dims`, `flow`
/// (ndim planes); the terms' planes, flattened.
pub fn cpu(dims: &[usize], warped: &[f64], reference: &[f64], flow: &[f64]) -> Vec<f64> {
    let (nd, n) = (dims.len(), warped.len());
    let mut out = vec![0.0; terms(nd) * n];
    for i in 0..n {
        let mut g = [0.0; 3];
        let mut stride = 1;
        for a in (0..nd).rev() {
            let at = (i / stride) % dims[a];
            g[a] = if dims[a] < 2 {
                0.0
            } else if at == 0 {
                warped[i + stride] - warped[i]
            } else if at == dims[a] - 1 {
                warped[i] - warped[i - stride]
            } else {
                0.5 * (warped[i + stride] - warped[i - stride])
            };
            stride *= dims[a];
        }
        let e = reference[i] - warped[i] + (0..nd).map(|a| g[a] * flow[a * n + i]).sum::<f64>();
        let mut k = 0;
        for a in 0..nd {
            for b in a..nd {
                out[k * n + i] = g[a] * g[b];
                k += 1;
            }
        }
        for a in 0..nd {
            out[k * n + i] = g[a] * e;
            k += 1;
        }
    }
    out
}
