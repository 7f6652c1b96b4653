//! `shaders/registration/template_ncc.wgsl`: the last, element-wise step of template matching
//! (Lewis's fast normalised cross-correlation, scikit-image's `match_template`).

use bytemuck::{Pod, Zeroable};

use super::TEMPLATE_NCC;
use crate::error::Result;
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in template_ncc.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub inv_volume: f32,
    pub tssd: f32,
    pub flat: f32,
}

/// The response from the correlation of the centred image with the centred template
/// (`numerator`) and the image's window sums `s1` (values) and `s2` (squares), all f32 of one
/// shape; `volume` the template's elements, `tssd` its sum of squared deviations, `flat` the
/// relative variance at or below which a window counts as flat (its response 0).
pub fn record(rec: &mut Recording, numerator: Buf, s1: Buf, s2: Buf, volume: usize, tssd: f32, flat: f32) -> Result<Buf> {
    for (b, what) in [(numerator, "numerator"), (s1, "window sums"), (s2, "window sums of squares")] {
        rec.expect_dtype(b, Dtype::F32, what)?;
        rec.expect_same_shape(numerator, b, "template matching terms")?;
    }
    let out = rec.temp_like(numerator, Dtype::F32)?;
    let count = rec.shape(numerator).len();
    let p = Params { count: count as u32, inv_volume: 1.0 / volume as f32, tssd, flat };
    rec.dispatch(&TEMPLATE_NCC, &[], bytemuck::bytes_of(&p), &[numerator, s1, s2, out], TEMPLATE_NCC.groups(count as u64));
    Ok(out)
}

/// The CPU twin of one element.
pub fn response(numerator: f32, s1: f32, s2: f32, p: &Params) -> f32 {
    let variance = s2 - s1 * s1 * p.inv_volume;
    if variance > p.flat * s2 && p.tssd > 0.0 {
        (numerator / (variance.max(0.0) * p.tssd).sqrt()).clamp(-1.0, 1.0)
    } else {
        0.0
    }
}
