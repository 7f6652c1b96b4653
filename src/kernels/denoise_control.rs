//! `shaders/denoise/denoise_control.wgsl`: the control tensor's reconstruction weights.

use bytemuck::{Pod, Zeroable};

use super::denoise_structure::count_of;
use super::DENOISE_CONTROL;
use crate::error::Result;
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in denoise_control.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct ControlParams {
    pub count: u32,
    pub largest: f32,
    pub sigma: f32,
    pub alpha: f32,
    pub beta: f32,
    pub isotropy_alpha: f32,
    pub isotropy_beta: f32,
    pub gamma0: f32,
    pub coefficients: [f32; 100],
}

/// The reconstruction weights (a stack of d(d+1)/2 arrays) from the structure tensor's
/// components; `p.count` is set here.
pub fn record(rec: &mut Recording, tensor: Buf, d: usize, p: &ControlParams) -> Result<Buf> {
    rec.expect_dtype(tensor, Dtype::F32, "structure tensor")?;
    let components = d * (d + 1) / 2;
    let count = count_of(rec, tensor, components, "structure tensor")?;
    let weights = rec.temp(&[rec.shape(tensor).len()], Dtype::F32)?;
    let p = ControlParams { count, ..*p };
    rec.dispatch(&DENOISE_CONTROL, &[("DIMS", d as f64)], bytemuck::bytes_of(&p), &[tensor, weights], DENOISE_CONTROL.groups(count as u64));
    Ok(weights)
}
