//! `shaders/registration/ilk_solve.wgsl`: scikit-image's optical_flow_ilk's local systems,
//! solved per point from the filtered terms of [`super::ilk_terms`].

use bytemuck::{Pod, Zeroable};

use super::ilk_terms::terms;
use super::ILK_SOLVE;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in ilk_solve.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct SolveParams {
    pub count: u32,
    pub ndim: u32,
    pub pad: [u32; 2],
}

/// Records the solution of the filtered terms (terms, dims): the flow (ndim, dims).
pub fn record_solve(rec: &mut Recording, filtered: Buf) -> Result<Buf> {
    let dims = rec.dims(filtered).to_vec();
    let nd = dims.len() - 1;
    if dims[0] != terms(nd) {
        return Err(Error::Shape(format!("optical flow's solve of {dims:?}")));
    }
    let count = dims[1..].iter().product::<usize>();
    let mut out_dims = vec![nd];
    out_dims.extend(&dims[1..]);
    let out = rec.temp(&out_dims, Dtype::F32)?;
    let p = SolveParams { count: count as u32, ndim: nd as u32, pad: [0; 2] };
    rec.dispatch(&ILK_SOLVE, &[], bytemuck::bytes_of(&p), &[filtered, out], ILK_SOLVE.groups(count as u64));
    Ok(out)
}

#[cfg(test)]
/// The CPU twin of [`record_solve`] (f64, Gaussian elimination with partial pivoting): the
/// filtered terms' planes of `n` points on `nd` axes → the flow's planes.
pub fn cpu(nd: usize, n: usize, filtered: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; nd * n];
    for i in 0..n {
        let mut m = vec![vec![0.0; nd + 1]; nd];
        let mut k = 0;
        for r in 0..nd {
            for q in r..nd {
                (m[r][q], m[q][r]) = (filtered[k * n + i], filtered[k * n + i]);
                k += 1;
            }
        }
        for (r, row) in m.iter_mut().enumerate() {
            row[nd] = filtered[(k + r) * n + i];
        }
        let mut det = 1.0;
        for c in 0..nd {
            let p = (c..nd).max_by(|&a, &b| m[a][c].abs().total_cmp(&m[b][c].abs())).expect("a row");
            if p != c {
                m.swap(c, p);
                det = -det;
            }
            det *= m[c][c];
            if m[c][c] == 0.0 {
                continue;
            }
            for r in c + 1..nd {
                let f = m[r][c] / m[c][c];
                for q in c..=nd {
                    m[r][q] -= f * m[c][q];
                }
            }
        }
        if det.abs() < 1e-14 {
            continue;
        }
        for r in (0..nd).rev() {
            let s: f64 = (r + 1..nd).map(|q| m[r][q] * out[q * n + i]).sum();
            out[r * n + i] = (m[r][nd] - s) / m[r][r];
        }
    }
    out
}
