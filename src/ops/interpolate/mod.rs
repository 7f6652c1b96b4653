//! Interpolation with scipy.ndimage's semantics: the cubic B-spline prefilter
//! ([`spline_filter1d`], [`spline_filter`]), which turns samples into the coefficients cubic
//! B-spline interpolation reads, and sampling at arbitrary coordinates ([`map_coordinates`],
//! orders 0, 1 and 3) (Unser, Aldroubi and Eden 1991; on the GPU after Ruijters and
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
//!
//! Sampling follows scipy's geometric transform: with order 3 and the prefilter, `nearest` and
//! `grid-constant` inputs are first padded by [`PREPAD`] samples (edge values, or cval) and the
//! coordinates shifted by it. Per axis the coordinate is folded into the array by the mode
//! (`mirror` period 2n − 2, `reflect` 2n, `wrap` n − 1 as scipy's, `grid-wrap` n; `constant`
//! gives cval outside [0, n − 1]; `nearest` and `grid-constant` are not folded); taps start at
//! floor(c) − order/2 (order 0: the nearest sample) and taps outside the array fold by the mode,
//! `constant` and `wrap` by `mirror`, while `grid-constant` reads cval there. NaN coordinates
//! give cval.

pub mod cpu;

use crate::error::{Error, Result};
use crate::graph::{Buf, Recording};
use crate::kernels::spline_prefilter::{self, Init};
use crate::kernels::{copy_vec4, map_coordinates as sample};
use crate::ops::layout::{self, Boundary};

/// Samples scipy pads `nearest` and `grid-constant` inputs with before prefiltering them.
pub const PREPAD: usize = 12;

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

    /// The sampling kernel's code for the mode.
    fn code(self) -> u32 {
        match self {
            SplineMode::Mirror => 0,
            SplineMode::Reflect => 1,
            SplineMode::Nearest => 2,
            SplineMode::Wrap => 3,
            SplineMode::GridWrap => 4,
            SplineMode::Constant => 5,
            SplineMode::GridConstant => 6,
        }
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

/// How [`map_coordinates`] samples (scipy's `order`, `mode`, `cval`, `prefilter`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sampling {
    pub order: u32,
    pub mode: SplineMode,
    pub cval: f32,
    pub prefilter: bool,
}

impl Default for Sampling {
    /// scipy's defaults: order 3, mode constant, cval 0, prefiltered.
    fn default() -> Sampling {
        Sampling { order: 3, mode: SplineMode::Constant, cval: 0.0, prefilter: true }
    }
}

impl Sampling {
    fn check(&self) -> Result<()> {
        if ![0, 1, 3].contains(&self.order) {
            return Err(Error::Invalid(format!("interpolation order {} (lucent samples with orders 0, 1 and 3)", self.order)));
        }
        if !self.cval.is_finite() {
            return Err(Error::NonFinite(format!("cval {}", self.cval)));
        }
        Ok(())
    }

    /// Whether the input is prefiltered, and padded first by [`PREPAD`].
    pub fn prepad(&self) -> Option<usize> {
        let pad = if matches!(self.mode, SplineMode::Nearest | SplineMode::GridConstant) { PREPAD } else { 0 };
        (self.order > 1 && self.prefilter).then_some(pad)
    }
}

/// scipy.ndimage.map_coordinates(x, coords, order, mode, cval, prefilter): `x` (f32, 1-4 axes)
/// sampled at `coords` (f32 of shape (x's rank, ...)); the result has coords' shape after its
/// first axis.
pub fn map_coordinates(rec: &mut Recording, x: Buf, coords: Buf, how: &Sampling) -> Result<Buf> {
    how.check()?;
    let rank = rec.dims(x).len();
    let (input, pad) = match how.prepad() {
        None => (x, 0),
        Some(0) => (spline_filter(rec, x, how.mode)?, 0),
        Some(pad) => {
            let edge = if how.mode == SplineMode::Nearest { Boundary::Nearest } else { Boundary::Constant(how.cval) };
            let padded = layout::pad(rec, x, &vec![(pad, pad); rank], edge)?;
            (spline_filter(rec, padded, how.mode)?, pad)
        }
    };
    sample::record(rec, input, coords, how.order, how.mode.code(), pad as f32, how.cval)
}
