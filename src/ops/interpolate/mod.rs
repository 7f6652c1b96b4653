//! Interpolation with scipy.ndimage's semantics. So far: the cubic B-spline prefilter
//! ([`spline_filter1d`], [`spline_filter`]), which turns samples into the coefficients cubic
//! B-spline interpolation reads (Unser, Aldroubi and Eden 1991; on the GPU after Ruijters and
//! Thévenaz 2012: one thread per line, the lines of a workgroup side by side in memory along
//! every axis but the last).
//!
//! The boundary decides the passes' initial values as scipy's `apply_filter` does: `mirror`,
//! `constant`, `grid-constant` and `wrap` take the whole-sample symmetric extension; `reflect`
//! (`grid-mirror`) and `nearest` the half-sample symmetric one; `grid-wrap` the periodic one.
//! (scipy then pads `nearest` and `grid-constant` inputs before sampling; that is the sampling
//! functions' business.) The half-sample initial value is the exact one: scipy up to 1.17 reads
//! an already updated `c[0]` on lines of two or three samples (gh-24550), a difference of up to
//! ~1e-4 there and below f32's resolution from eight samples on. Lines of one sample are left as
//! they are, as scipy leaves them.

pub mod cpu;

use crate::error::{Error, Result};
use crate::graph::{Buf, Recording};
use crate::kernels::spline_prefilter::{self, Init};
use crate::kernels::copy_vec4;

/// scipy.ndimage's `mode` names for spline filtering and interpolation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SplineMode {
    #[default]
    Mirror,
    /// scipy's `reflect`, also called `grid-mirror`.
    Reflect,
    Nearest,
    Wrap,
    GridWrap,
    Constant,
    GridConstant,
}

impl SplineMode {
    pub const NAMES: [&'static str; 8] = ["mirror", "reflect", "grid-mirror", "nearest", "wrap", "grid-wrap", "constant", "grid-constant"];

    /// The mode scipy calls `name`.
    pub fn parse(name: &str) -> Result<SplineMode> {
        Ok(match name {
            "mirror" => SplineMode::Mirror,
            "reflect" | "grid-mirror" => SplineMode::Reflect,
            "nearest" => SplineMode::Nearest,
            "wrap" => SplineMode::Wrap,
            "grid-wrap" => SplineMode::GridWrap,
            "constant" => SplineMode::Constant,
            "grid-constant" => SplineMode::GridConstant,
            other => return Err(Error::Invalid(format!("unknown spline mode '{other}' (one of {})", SplineMode::NAMES.join(", ")))),
        })
    }

    /// The extension the prefilter's initial values assume.
    pub fn init(self) -> Init {
        match self {
            SplineMode::Mirror | SplineMode::Wrap | SplineMode::Constant | SplineMode::GridConstant => Init::Mirror,
            SplineMode::Reflect | SplineMode::Nearest => Init::Reflect,
            SplineMode::GridWrap => Init::Wrap,
        }
    }
}

/// scipy.ndimage.spline_filter1d(x, order=3, axis, mode): the cubic B-spline coefficients along
/// one axis of an f32 array (a copy where the axis has one sample).
pub fn spline_filter1d(rec: &mut Recording, x: Buf, axis: usize, mode: SplineMode) -> Result<Buf> {
    let dims = rec.dims(x).to_vec();
    match dims.get(axis) {
        None => Err(Error::Invalid(format!("spline_filter1d: axis {axis} of a {}-axis array", dims.len()))),
        Some(1) => {
            let y = rec.temp_like(x, rec.dtype(x))?;
            copy_vec4::record(rec, x, y)?;
            Ok(y)
        }
        Some(_) => spline_prefilter::record(rec, x, axis, mode.init()),
    }
}

/// scipy.ndimage.spline_filter(x, order=3, mode): [`spline_filter1d`] along every axis in turn.
pub fn spline_filter(rec: &mut Recording, x: Buf, mode: SplineMode) -> Result<Buf> {
    let mut y = x;
    for axis in 0..rec.dims(x).len() {
        y = spline_filter1d(rec, y, axis, mode)?;
    }
    Ok(y)
}
