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
