//! `shaders/interpolate/spline_texture.wgsl`: an array of 2 or 3 axes copied into the bordered
//! texture the texture sampler reads (common/bspline_texture.wgsl), one texel per thread.

use bytemuck::{Pod, Zeroable};

use super::SPLINE_TEXTURE;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Texels added on each side of each of the array's axes (BORDER in the kernel).
pub const BORDER: usize = 2;

/// Mirrors `Params` in spline_texture.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub dims: [u32; 4],
    pub texels: [u32; 4],
    pub border: [u32; 4],
    pub count: u32,
    pub cval: f32,
    pub unused: [u32; 2],
}

/// The texture's axes for an array of `dims` (2 or 3 axes): a border on each side of each, and a
/// leading axis of one texel for 2.
pub fn texture_dims(dims: &[usize]) -> Vec<usize> {
    let bordered = dims.iter().map(|&n| n + 2 * BORDER);
    if dims.len() == 2 {
        std::iter::once(1).chain(bordered).collect()
    } else {
        bordered.collect()
    }
}

/// The array's axes for a texture of `texels` ([`texture_dims`] undone).
pub fn array_dims(texels: &[usize]) -> Vec<usize> {
    let lead = usize::from(texels[0] == 1);
    texels[lead..].iter().map(|&n| n - 2 * BORDER).collect()
}

/// `x` (f32, 2 or 3 axes) in a new texture whose border texels hold what the sampling kernels'
/// taps read there for `mode` (the kernel's code) and `cval`.
pub fn record(rec: &mut Recording, x: Buf, mode: u32, cval: f32) -> Result<Buf> {
    rec.expect_dtype(x, Dtype::F32, "array for the texture sampler")?;
    let dims = rec.dims(x).to_vec();
    if !(2..=3).contains(&dims.len()) {
        return Err(Error::Shape(format!("the texture sampler reads arrays of 2 or 3 axes, not {dims:?}")));
    }
    let texels = texture_dims(&dims);
    let count: usize = texels.iter().product();
    if count > u32::MAX as usize {
        return Err(Error::Invalid(format!("a texture of shape {texels:?}: the texture sampler reads at most {} texels", u32::MAX)));
    }
    let tex = rec.texture(&texels)?;
    let three = |v: &[usize]| {
        let mut d = [1u32; 4];
        d[3 - v.len()..3].iter_mut().zip(v).for_each(|(d, &n)| *d = n as u32);
        d[3] = 0;
        d
    };
    let mut border = [BORDER as u32; 4];
    (border[0], border[3]) = (if dims.len() == 2 { 0 } else { BORDER as u32 }, 0);
    let p = Params { dims: three(&dims), texels: three(&texels), border, count: count as u32, cval, unused: [0; 2] };
    rec.dispatch(&SPLINE_TEXTURE, &[("MODE", mode as f64)], bytemuck::bytes_of(&p), &[x, tex], SPLINE_TEXTURE.groups(count as u64));
    Ok(tex)
}
