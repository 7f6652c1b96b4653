//! `shaders/registration/tvl1_step.wgsl`: scikit-image's optical_flow_tvl1's stages (the warped
//! image's terms, the attachment step, the dual and primal steps of the TV regulariser).

use bytemuck::{Pod, Zeroable};

use super::TVL1_STEP;
use crate::error::Result;
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in tvl1_step.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub ndim: u32,
    pub f0: f32,
    pub f1: f32,
    pub dims: [u32; 4],
    pub dt: f32,
    pub pad: [u32; 3],
}

/// The constants of one level: the image's shape, attachment × tightness, dt / tightness, dt.
#[derive(Clone, Debug)]
pub struct Tvl1 {
    pub dims: Vec<usize>,
    pub f0: f32,
    pub f1: f32,
    pub dt: f32,
}

impl Tvl1 {
    fn params(&self) -> Params {
        let mut d = [1u32; 4];
        d.iter_mut().zip(&self.dims).for_each(|(a, &b)| *a = b as u32);
        Params { count: self.count() as u32, ndim: self.dims.len() as u32, f0: self.f0, f1: self.f1, dims: d, dt: self.dt, pad: [0; 3] }
    }

    /// The shape of `k` planes of the image's shape.
    pub fn planes(&self, k: usize) -> Vec<usize> {
        std::iter::once(k).chain(self.dims.iter().copied()).collect()
    }

    fn count(&self) -> usize {
        self.dims.iter().product()
    }

    fn dispatch(&self, rec: &mut Recording, stage: u32, bufs: [Buf; 4], threads: usize) {
        rec.dispatch(&TVL1_STEP, &[("STAGE", stage as f64)], bytemuck::bytes_of(&self.params()), &bufs, TVL1_STEP.groups(threads as u64));
    }

    /// The warped image's gradient, |g|² and rho0: (ndim + 2, count).
    pub fn prepare(&self, rec: &mut Recording, warped: Buf, reference: Buf, flow: Buf) -> Result<Buf> {
        let out = rec.temp(&self.planes(self.dims.len() + 2), Dtype::F32)?;
        self.dispatch(rec, 0, [warped, reference, flow, out], self.count());
        Ok(out)
    }

    /// The attachment step: the auxiliary flow (ndim, count).
    pub fn data(&self, rec: &mut Recording, prepared: Buf, flow: Buf) -> Result<Buf> {
        let out = rec.temp(&self.planes(self.dims.len()), Dtype::F32)?;
        self.dispatch(rec, 1, [prepared, flow, flow, out], self.count());
        Ok(out)
    }

    /// The dual step on `proj` (ndim, ndim, count) in place, from `flow`.
    pub fn dual(&self, rec: &mut Recording, flow: Buf, proj: Buf) {
        self.dispatch(rec, 2, [flow, flow, flow, proj], self.dims.len() * self.count());
    }

    /// The primal step: `flow` = aux + the divergence of `proj`, in place.
    pub fn primal(&self, rec: &mut Recording, proj: Buf, aux: Buf, flow: Buf) {
        self.dispatch(rec, 3, [proj, aux, aux, flow], self.dims.len() * self.count());
    }
}

#[cfg(test)]
/// The CPU twins of the stages (f64, flattened planes), the same semantics.
pub mod cpu {
    /// The point's index along `ax` and that axis' stride.
    fn along(dims: &[usize], i: usize, ax: usize) -> (usize, usize) {
        let stride: usize = dims[ax + 1..].iter().product();
        ((i / stride) % dims[ax], stride)
    }

    pub fn prepare(dims: &[usize], warped: &[f64], reference: &[f64], flow: &[f64]) -> Vec<f64> {
        let (nd, n) = (dims.len(), warped.len());
        let mut out = vec![0.0; (nd + 2) * n];
        for i in 0..n {
            let (mut ni, mut gf) = (0.0, 0.0);
            for ax in 0..nd {
                let (at, s) = along(dims, i, ax);
                let d = if at == 0 {
                    warped[i + s] - warped[i]
                } else if at == dims[ax] - 1 {
                    warped[i] - warped[i - s]
                } else {
                    0.5 * (warped[i + s] - warped[i - s])
                };
                out[ax * n + i] = d;
                ni += d * d;
                gf += d * flow[ax * n + i];
            }
            out[nd * n + i] = if ni == 0.0 { 1.0 } else { ni };
            out[(nd + 1) * n + i] = warped[i] - reference[i] - gf;
        }
        out
    }

    pub fn data(nd: usize, n: usize, f0: f64, prepared: &[f64], flow: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; nd * n];
        for i in 0..n {
            let ni = prepared[nd * n + i];
            let rho = prepared[(nd + 1) * n + i] + (0..nd).map(|a| prepared[a * n + i] * flow[a * n + i]).sum::<f64>();
            for a in 0..nd {
                let g = prepared[a * n + i];
                out[a * n + i] = if rho.abs() <= f0 * ni { flow[a * n + i] - rho * g / ni } else { flow[a * n + i] - f0 * rho.signum() * g };
            }
        }
        out
    }

    pub fn dual(dims: &[usize], dt: f64, f1: f64, flow: &[f64], proj: &mut [f64]) {
        let nd = dims.len();
        let n: usize = dims.iter().product();
        for idx in 0..nd {
            for i in 0..n {
                let g: Vec<f64> = (0..nd)
                    .map(|ax| {
                        let (at, s) = along(dims, i, ax);
                        if at + 1 < dims[ax] {
                            flow[idx * n + i + s] - flow[idx * n + i]
                        } else {
                            0.0
                        }
                    })
                    .collect();
                let norm = 1.0 + f1 * g.iter().map(|v| v * v).sum::<f64>().sqrt();
                for ax in 0..nd {
                    let k = (idx * nd + ax) * n + i;
                    proj[k] = (proj[k] - dt * g[ax]) / norm;
                }
            }
        }
    }

    pub fn primal(dims: &[usize], proj: &[f64], aux: &[f64]) -> Vec<f64> {
        let nd = dims.len();
        let n: usize = dims.iter().product();
        let mut out = vec![0.0; nd * n];
        for idx in 0..nd {
            for i in 0..n {
                let mut d = 0.0;
                for ax in 0..nd {
                    let k = (idx * nd + ax) * n + i;
                    d -= proj[k];
                    let (at, s) = along(dims, i, ax);
                    if at >= 1 {
                        d += proj[k - s];
                    }
                }
                out[idx * n + i] = aux[idx * n + i] + d;
            }
        }
        out
    }
}
