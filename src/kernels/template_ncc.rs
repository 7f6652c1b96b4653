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
    pub volume: f32,
    pub tssd: f32,
    pub flat: f32,
    /// 1.0, opaque to the shader compiler (see common/double_single.wgsl).
    pub one: f32,
    pub unused: [u32; 3],
}

/// The response from the correlation of the centred image with the centred template
/// (`numerator`) and the image's window sums of values `s1` and squares `s2`, each a
/// double-single pair (hi, lo), all f32 of one shape; `volume` the template's elements, `tssd`
/// its sum of squared deviations, `flat` the relative spread at or below which a window counts
/// as flat (its response 0).
pub fn record(rec: &mut Recording, numerator: Buf, s1: (Buf, Buf), s2: (Buf, Buf), volume: usize, tssd: f32, flat: f32) -> Result<Buf> {
    for (b, what) in
        [(numerator, "numerator"), (s1.0, "window sums"), (s1.1, "window sums"), (s2.0, "window sums of squares"), (s2.1, "window sums of squares")]
    {
        rec.expect_dtype(b, Dtype::F32, what)?;
        rec.expect_same_shape(numerator, b, "template matching terms")?;
    }
    let out = rec.temp_like(numerator, Dtype::F32)?;
    let count = rec.shape(numerator).len();
    let p = Params { count: count as u32, volume: volume as f32, tssd, flat, one: 1.0, unused: [0; 3] };
    rec.dispatch(&TEMPLATE_NCC, &[], bytemuck::bytes_of(&p), &[numerator, s1.0, s1.1, s2.0, s2.1, out], TEMPLATE_NCC.groups(count as u64));
    Ok(out)
}
