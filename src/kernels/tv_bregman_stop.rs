//! `shaders/denoise/tv_bregman_stop.wgsl`: scikit-image's split-Bregman stopping rule.

use bytemuck::{Pod, Zeroable};

use super::TV_BREGMAN_STOP;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in tv_bregman_stop.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: f32,
    pub eps: f32,
    pub unused: [u32; 2],
}

/// Counts the sweep and stops once √(`sum` / `count`) ≤ `eps`, in `state` (stopped, sweeps).
pub fn record(rec: &mut Recording, sum: Buf, state: Buf, count: usize, eps: f32) {
    let p = Params { count: count as f32, eps, unused: [0; 2] };
    rec.dispatch(&TV_BREGMAN_STOP, &[], bytemuck::bytes_of(&p), &[sum, state], 1);
}
