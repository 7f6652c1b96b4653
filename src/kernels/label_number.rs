//! `shaders/filter/label_number.wgsl`: the components' raster-order numbers (scipy's) from
//! `label.wgsl`'s least-index labels, in place: the roots marked 32 to a word on the device, the
//! roots before each word counted on the host (a 32nd of the labels' size), the numbers given
//! on the device.

use bytemuck::{Pod, Zeroable};

use super::LABEL_NUMBER;
use crate::error::{Error, Result};
use crate::gpu::{Dtype, Gpu, GpuArray};
use crate::graph::Recording;

/// Mirrors `Params` in label_number.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub words: u32,
    pub unused: [u32; 2],
}

/// Numbers the components of `labels` (u32, each element its component's least index or
/// u32::MAX, label.wgsl's `NONE`) 1.. in raster order of those indices, the background 0, in place; returns
/// their count.
pub fn number(gpu: &Gpu, labels: &GpuArray) -> Result<usize> {
    if labels.dtype() != Dtype::U32 {
        return Err(Error::Dtype(format!("labels to number are u32, not {:?}", labels.dtype())));
    }
    let count = labels.len();
    let words = count.div_ceil(32).max(1);
    let p = Params { count: count as u32, words: words as u32, unused: [0; 2] };
    let mut rec = Recording::new(gpu);
    let (l, bits, stand_in) = (rec.input(labels), rec.temp(&[words], Dtype::U32)?, rec.temp(&[1], Dtype::U32)?);
    rec.dispatch(&LABEL_NUMBER, &[("STAGE", 0.0)], bytemuck::bytes_of(&p), &[l, bits, stand_in], LABEL_NUMBER.groups(words as u64));
    let kept = rec.output(bits);
    let bits = rec.run()?.array(kept);
    let mut before = bits.download_u32(gpu)?.into_raw_vec_and_offset().0;
    let mut roots = 0u32;
    for w in before.iter_mut() {
        (*w, roots) = (roots, roots + w.count_ones());
    }
    let mut rec = Recording::new(gpu);
    let (l, b) = (rec.input(labels), rec.input(&bits));
    let before = rec.input(&GpuArray::upload_u32(gpu, &before)?);
    rec.dispatch(&LABEL_NUMBER, &[("STAGE", 1.0)], bytemuck::bytes_of(&p), &[l, b, before], LABEL_NUMBER.groups(count as u64));
    rec.run()?;
    Ok(roots as usize)
}
