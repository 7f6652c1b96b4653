//! `shaders/filter/label.wgsl`: connected-component labelling by label equivalence (init, hook,
//! compress stages of one kernel).

use bytemuck::{Pod, Zeroable};

use super::LABEL;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in label.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub dims: [u32; 4],
    pub count: u32,
    pub taps: u32,
    pub unused: [u32; 2],
}

/// Which stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Init,
    Hook,
    Compress,
}

/// Records one stage over the mask `x` of shape `dims` (1-4 axes, bytes four to a u32 word:
/// `Recording::upload_mask`), `labels` (u32, one per element), `changed` (u32 × 1) and the
/// neighbours' `offsets` (f32 × 4 per tap, leading axes 0).
pub fn record(rec: &mut Recording, stage: Stage, x: Buf, dims: &[usize], labels: Buf, changed: Buf, offsets: Buf) -> Result<()> {
    rec.expect_dtype(x, Dtype::U32, "labelled mask")?;
    rec.expect_dtype(labels, Dtype::U32, "labels")?;
    let count = dims.iter().product::<usize>();
    if dims.is_empty() || dims.len() > 4 || rec.shape(labels).len() != count || rec.shape(x).len() < count.div_ceil(4) || count > i32::MAX as usize {
        return Err(Error::Shape(format!("labels of an array of {dims:?}: 1 to 4 axes, below 2^31 elements")));
    }
    let lead = 4 - dims.len();
    let mut four = [1u32; 4];
    dims.iter().enumerate().for_each(|(a, &n)| four[lead + a] = n as u32);
    let taps = rec.shape(offsets).len() / 4;
    let p = Params { dims: four, count: count as u32, taps: taps as u32, unused: [0; 2] };
    let code = match stage {
        Stage::Init => 0.0,
        Stage::Hook => 1.0,
        Stage::Compress => 2.0,
    };
    rec.dispatch(&LABEL, &[("STAGE", code)], bytemuck::bytes_of(&p), &[x, labels, changed, offsets], LABEL.groups(count as u64));
    Ok(())
}
