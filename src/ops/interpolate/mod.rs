//! Interpolation with scipy.ndimage's semantics, B-splines of orders 0 to 5: the prefilter
//! ([`spline_filter1d`], [`spline_filter`]), which turns samples into the coefficients B-spline
//! interpolation of orders 2-5 reads, and sampling at arbitrary coordinates
//! ([`map_coordinates`]) (Unser, Aldroubi and Eden 1991; on the GPU after Ruijters and
//! Thévenaz 2012, with each line cut into segments whose passes start from the boundary's
//! extension a few samples outside, so a line's segments run in parallel: see
//! shaders/interpolate/spline_prefilter.wgsl).
//!
//! The prefilter of order 2 or 3 has one pole, of order 4 or 5 two (scipy's
//! `get_filter_poles`): the gain (the product of (1 − z)(1 − 1/z)), then per pole a causal and
//! an anti-causal pass. The boundary decides the passes' initial values as scipy's
//! `apply_filter` does: `mirror`, `constant`, `grid-constant` and `wrap` take the whole-sample
//! symmetric extension; `reflect` (`grid-mirror`) and `nearest` the half-sample symmetric one;
//! `grid-wrap` the periodic one. (scipy then pads `nearest` and `grid-constant` inputs before
//! sampling; that is the sampling functions' business.) The half-sample initial value is the
//! exact one: scipy up to 1.17 reads an already updated `c[0]` (gh-24550), a difference of order
//! |z|^2n on a line of n samples: up to ~1e-4 on lines of two or three samples, 6e-7 for order 5
//! on eight, below f32's resolution from eight samples on for orders 2-4 and twelve for order 5.
//! Lines of one sample are left as they are, as scipy leaves them.
//!
//! Sampling follows scipy's geometric transform: with orders above 1 and the prefilter,
//! `nearest` and `grid-constant` inputs are first padded by [`PREPAD`] samples (edge values, or
//! cval) and the coordinates shifted by it. Per axis the coordinate is folded into the array by
//! the mode (`mirror` period 2n − 2, `reflect` 2n, `wrap` n − 1 as scipy's, `grid-wrap` n;
//! `constant` gives cval outside [0, n − 1]; `nearest` and `grid-constant` are not folded);
//! order + 1 taps start at floor(c) − order/2 for odd orders, floor(c + 0.5) − order/2 for even
//! ones (order 0: the nearest sample), weighted by scipy's `get_spline_interpolation_weights`;
//! taps outside the array fold by the mode, `constant` and `wrap` by `mirror`, while
//! `grid-constant` reads cval there. NaN coordinates give cval.
//!
//! Two samplers read the coefficients ([`Sampler`]). The buffer sampler loads the (order + 1)^d
//! taps of a sample from a storage buffer in f32 (loops over the taps of orders 4-5, written out
//! below): relative L2 errors of ~1e-7 against the f64 reference, any rank, any adapter. Orders
//! 4 and 5 reach ~1e-5 on arrays of 4 axes: their prefilter amplifies the alternating
//! component by 4.8 and 7.5 per axis (3 for cubic), and with it the f32 coefficients'
//! rounding, as rounding scipy's own coefficients to f32 does (the GPU's prefilter applies each
//! pole's gain in its own pass and the weights are written without cancellation for that).
//!
//! The texture sampler (orders 0, 1 and 3, arrays of 2 and 3 axes, adapters with
//! `FLOAT32_FILTERABLE`; other orders are refused with it, and `auto` takes the buffer) puts the
//! coefficients in a bordered `R32Float` texture and reads a cubic sample as 2^d linear fetches
//! (Sigg and Hadwiger); the filter's weights are rounded to the adapter's sub-texel bits (8 on
//! NVIDIA), so each axis' fetch may be off by 2^-8 of the largest difference between the values
//! it blends. Measured by examples/sampler_error.rs on random
//! values in [0, 1) (BENCHMARKS.md, the sampler's error): on an H200 relative L2 1.5-2.3e-3 (order 1) and
//! 3.8-6.7e-3 (order 3), largest errors 0.45-0.74% and 1.0-2.0% of the range; on lavapipe
//! 0.6-2.7e-6 and 2-10e-6. It is faster where the sampler's own work dominates (map_coordinates
//! of 4096² in 0.79 ms against 1.85 on the H200, zoom ×2 of 256³ in 2.28 against 3.03) and
//! not elsewhere (shift of 512³: 2.54 + 0.62 ms for the texture against 3.11; rotate of 4096²
//! and order 1 slower). `auto` therefore takes the buffer: 10⁴ times the error is no default
//! for scipy's users; `texture` is there for those who trade it for speed.

pub mod cpu;
pub mod deskew;

use crate::error::{Error, Result};
use crate::graph::{Buf, Recording};
use crate::kernels::boundary::Boundary;
use crate::kernels::spline_prefilter::{self, Init};
use crate::kernels::{copy_vec4, map_coordinates as sample, spline_texture};
use crate::ops::layout;

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
    pub(crate) fn code(self) -> u32 {
        use crate::kernels::map_coordinates::mode;
        match self {
            SplineMode::Mirror => mode::MIRROR,
            SplineMode::Reflect => mode::REFLECT,
            SplineMode::Nearest => mode::NEAREST,
            SplineMode::Wrap => mode::WRAP,
            SplineMode::GridWrap => mode::GRID_WRAP,
            SplineMode::Constant => mode::CONSTANT,
            SplineMode::GridConstant => mode::GRID_CONSTANT,
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

/// scipy's spline orders: 0 to 5.
pub const MAX_ORDER: u32 = 5;

/// An order beyond [`MAX_ORDER`] refused in one line.
pub fn check_order(order: u32) -> Result<()> {
    if order > MAX_ORDER {
        return Err(Error::Invalid(format!("spline order {order} (scipy's orders are 0 to {MAX_ORDER})")));
    }
    Ok(())
}

/// scipy.ndimage.spline_filter1d(x, order, axis, mode): the coefficients of the B-spline of
/// `order` along one axis of an f32 array (a copy for orders 0 and 1, or where the axis has
/// one sample).
pub fn spline_filter1d(rec: &mut Recording, x: Buf, order: u32, axis: usize, mode: SplineMode) -> Result<Buf> {
    check_order(order)?;
    let dims = rec.dims(x).to_vec();
    match dims.get(axis) {
        None => Err(Error::Invalid(format!("spline_filter1d: axis {axis} of a {}-axis array", dims.len()))),
        Some(&n) if n == 1 || order < 2 => {
            let y = rec.temp_like(x, rec.dtype(x))?;
            copy_vec4::record(rec, x, y)?;
            Ok(y)
        }
        Some(_) => spline_prefilter::record(rec, x, axis, order, mode.init()),
    }
}

/// scipy.ndimage.spline_filter(x, order, mode): [`spline_filter1d`] along every axis in turn
/// (orders 2-5: scipy refuses 0 and 1 here).
pub fn spline_filter(rec: &mut Recording, x: Buf, order: u32, mode: SplineMode) -> Result<Buf> {
    if !(2..=MAX_ORDER).contains(&order) {
        return Err(Error::Invalid(format!("spline_filter of order {order} (orders 2 to {MAX_ORDER}; 0 and 1 need no filter)")));
    }
    let mut y = x;
    for axis in 0..rec.dims(x).len() {
        y = spline_filter1d(rec, y, order, axis, mode)?;
    }
    Ok(y)
}

/// Where the sampling kernels read the (prefiltered) array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Sampler {
    /// The buffer sampler (the texture sampler's error is ~1e4× the buffer's on NVIDIA and its
    /// speed-up confined to some cases: see the module's notes).
    #[default]
    Auto,
    /// Loads from a storage buffer: f32 arithmetic throughout, 1-4 axes, any adapter.
    Buffer,
    /// The texture unit's linear filter (orders 0, 1 and 3 of arrays of 2 or 3 axes, adapters
    /// that filter f32 textures): 2^d fetches per cubic sample instead of 4^d loads, with the
    /// filter's weights rounded to few bits (see the module's notes for the error).
    Texture,
}

impl Sampler {
    pub const NAMES: [&'static str; 3] = ["auto", "buffer", "texture"];

    pub fn parse(name: &str) -> Result<Sampler> {
        match name {
            "auto" => Ok(Sampler::Auto),
            "buffer" => Ok(Sampler::Buffer),
            "texture" => Ok(Sampler::Texture),
            other => Err(Error::Invalid(format!("unknown sampler '{other}' (one of {})", Sampler::NAMES.join(", ")))),
        }
    }
}

/// How [`map_coordinates`] samples (scipy's `order`, `mode`, `cval`, `prefilter`; and where).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sampling {
    pub order: u32,
    pub mode: SplineMode,
    pub cval: f32,
    pub prefilter: bool,
    pub sampler: Sampler,
}

impl Default for Sampling {
    /// scipy's defaults: order 3, mode constant, cval 0, prefiltered; the sampler chosen.
    fn default() -> Sampling {
        Sampling { order: 3, mode: SplineMode::Constant, cval: 0.0, prefilter: true, sampler: Sampler::Auto }
    }
}

impl Sampling {
    fn check(&self) -> Result<()> {
        check_order(self.order)?;
        if self.sampler == Sampler::Texture && ![0, 1, 3].contains(&self.order) {
            return Err(Error::Invalid(format!("the texture sampler reads orders 0, 1 and 3, not {} (the buffer sampler reads every order)", self.order)));
        }
        if !self.cval.is_finite() {
            return Err(Error::NonFinite(format!("cval {}", self.cval)));
        }
        Ok(())
    }

    /// The (prefiltered) array `x` where the sampling kernels read it: itself, or in a texture.
    fn source(&self, rec: &mut Recording, x: Buf) -> Result<Buf> {
        let rank = rec.dims(x).len();
        let texture = match self.sampler {
            Sampler::Buffer | Sampler::Auto => false,
            Sampler::Texture if !(2..=3).contains(&rank) => {
                return Err(Error::Invalid(format!("the texture sampler reads arrays of 2 or 3 axes, not {rank} (use --sampler buffer)")));
            }
            Sampler::Texture if !rec.gpu().filters_f32() => {
                return Err(Error::Invalid(format!(
                    "the texture sampler needs an adapter that filters f32 textures; {} does not (use --sampler buffer)",
                    rec.gpu().summary().name
                )));
            }
            Sampler::Texture => true,
        };
        if texture {
            spline_texture::record(rec, x, self.mode.code(), self.cval)
        } else {
            Ok(x)
        }
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
        Some(0) => (spline_filter(rec, x, how.order, how.mode)?, 0),
        Some(pad) => {
            let edge = if how.mode == SplineMode::Nearest { Boundary::Nearest } else { Boundary::Constant(how.cval) };
            let padded = layout::pad(rec, x, &vec![(pad, pad); rank], edge)?;
            (spline_filter(rec, padded, how.order, how.mode)?, pad)
        }
    };
    let input = how.source(rec, input)?;
    sample::record(rec, input, coords, how.order, how.mode.code(), pad as f32, how.cval)
}

/// The input coordinates of an affine map (scipy.ndimage.affine_transform's `matrix` and
/// `offset`): `matrix` as given there — (d,) a diagonal, (d, d), (d, d + 1) with the offset as
/// its last column, or (d + 1, d + 1) homogeneous (then `offset` is ignored, as scipy ignores
/// it). Rows per input axis. A non-finite or singular matrix is refused.
#[derive(Clone, Debug, PartialEq)]
pub struct AffineMap {
    pub matrix: Vec<Vec<f64>>,
    pub offset: Vec<f64>,
}

impl AffineMap {
    pub fn new(matrix: &ndarray::ArrayViewD<f64>, offset: &[f64], rank: usize) -> Result<AffineMap> {
        let d = rank;
        let shape = matrix.shape().to_vec();
        let offset = if offset.is_empty() { vec![0.0; d] } else { offset.to_vec() };
        if offset.len() != d {
            return Err(Error::Shape(format!("affine_transform: {} offsets for a {d}-axis array", offset.len())));
        }
        let at = |a: usize, b: usize| matrix[[a, b].as_slice()];
        let map = match shape.as_slice() {
            [n] if *n == d => {
                AffineMap { matrix: (0..d).map(|a| (0..d).map(|b| if a == b { matrix[[a].as_slice()] } else { 0.0 }).collect()).collect(), offset }
            }
            [r, c] if *r == d && *c == d => AffineMap { matrix: (0..d).map(|a| (0..d).map(|b| at(a, b)).collect()).collect(), offset },
            [r, c] if *r == d && *c == d + 1 => {
                AffineMap { matrix: (0..d).map(|a| (0..d).map(|b| at(a, b)).collect()).collect(), offset: (0..d).map(|a| at(a, d)).collect() }
            }
            [r, c] if *r == d + 1 && *c == d + 1 => {
                AffineMap { matrix: (0..d).map(|a| (0..d).map(|b| at(a, b)).collect()).collect(), offset: (0..d).map(|a| at(a, d)).collect() }
            }
            other => {
                return Err(Error::Shape(format!(
                    "affine_transform: a matrix of shape {other:?} for a {d}-axis array (expected ({d},), ({d}, {d}), ({d}, {}) or ({}, {}))",
                    d + 1,
                    d + 1,
                    d + 1
                )))
            }
        };
        if map.matrix.iter().flatten().chain(&map.offset).any(|v| !v.is_finite()) {
            return Err(Error::NonFinite(format!("affine_transform: the matrix {:?} and offset {:?}", map.matrix, map.offset)));
        }
        if determinant(&map.matrix) == 0.0 {
            return Err(Error::Invalid(format!("affine_transform: the matrix {:?} is singular", map.matrix)));
        }
        Ok(map)
    }

    /// scipy.ndimage.shift's map: output o reads input o − shift.
    pub fn shift(shift: &[f64]) -> AffineMap {
        let d = shift.len();
        AffineMap { matrix: identity(d), offset: shift.iter().map(|s| -s).collect() }
    }

    /// scipy.ndimage.zoom's map from `input` to `output` shapes: output k reads input
    /// k · (n_in − 1) / (n_out − 1), the corners' samples aligned (factor 1 where the output has
    /// one sample); with `grid_mode` the pixels' outer edges aligned instead: input
    /// (k + 0.5) · n_in / n_out − 0.5.
    pub fn zoom(input: &[usize], output: &[usize], grid_mode: bool) -> AffineMap {
        let d = input.len();
        let factor = |a: usize| match (grid_mode, output[a]) {
            (true, n) => input[a] as f64 / n as f64,
            (false, n) if n > 1 => (input[a] as f64 - 1.0) / (n as f64 - 1.0),
            _ => 1.0,
        };
        let offset = (0..d).map(|a| if grid_mode { 0.5 * factor(a) - 0.5 } else { 0.0 }).collect();
        AffineMap { matrix: (0..d).map(|a| (0..d).map(|b| if a == b { factor(a) } else { 0.0 }).collect()).collect(), offset }
    }

    /// scipy.ndimage.rotate's map in the plane of `axes` (sorted) by `degrees`, for an input of
    /// shape `input` and an output of shape `output` (centres mapped onto each other).
    pub fn rotate(degrees: f64, axes: [usize; 2], input: &[usize], output: &[usize]) -> AffineMap {
        let (c, s) = cos_sin_degrees(degrees);
        let mut m = AffineMap { matrix: identity(input.len()), offset: vec![0.0; input.len()] };
        let rot = [[c, s], [-s, c]];
        let out_centre = [(output[axes[0]] as f64 - 1.0) / 2.0, (output[axes[1]] as f64 - 1.0) / 2.0];
        for (i, &a) in axes.iter().enumerate() {
            for (j, &b) in axes.iter().enumerate() {
                m.matrix[a][b] = rot[i][j];
            }
            m.offset[a] = (input[a] as f64 - 1.0) / 2.0 - (rot[i][0] * out_centre[0] + rot[i][1] * out_centre[1]);
        }
        m
    }

    /// Whether axis `a` is left alone: the output index itself plus a whole number.
    fn keeps(&self, a: usize) -> bool {
        self.matrix[a].iter().enumerate().all(|(b, &v)| v == if a == b { 1.0 } else { 0.0 }) && self.offset[a].fract() == 0.0
    }
}

fn identity(d: usize) -> Vec<Vec<f64>> {
    (0..d).map(|a| (0..d).map(|b| if a == b { 1.0 } else { 0.0 }).collect()).collect()
}

/// cos and sin of an angle in degrees, exact at multiples of 90 (as scipy's cosdg and sindg).
pub fn cos_sin_degrees(degrees: f64) -> (f64, f64) {
    let quarter = degrees / 90.0;
    if quarter.fract() == 0.0 {
        return [(1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0)][quarter.rem_euclid(4.0) as usize];
    }
    let r = degrees.to_radians();
    (r.cos(), r.sin())
}

/// scipy.ndimage.shift's map for an array of shape `dims` (`shift` one value or one per axis)
/// and its output shape.
pub fn shift_map(dims: &[usize], shift: &[f64]) -> Result<(AffineMap, Vec<usize>)> {
    let shift = super::per_axis(shift, dims.len(), "shift")?;
    if shift.iter().any(|v| !v.is_finite()) {
        return Err(Error::NonFinite(format!("shift {shift:?}")));
    }
    Ok((AffineMap::shift(&shift), dims.to_vec()))
}

/// scipy.ndimage.zoom's map ([`AffineMap::zoom`]) and output shape (round(n · factor), ties to
/// even as Python rounds).
pub fn zoom_map(dims: &[usize], zoom: &[f64], grid_mode: bool) -> Result<(AffineMap, Vec<usize>)> {
    let zoom = super::per_axis(zoom, dims.len(), "zoom")?;
    if zoom.iter().any(|v| !v.is_finite() || *v <= 0.0) {
        return Err(Error::Invalid(format!("zoom factors must be finite and positive, got {zoom:?}")));
    }
    let sizes: Vec<f64> = dims.iter().zip(&zoom).map(|(&n, f)| (n as f64 * f).round_ties_even()).collect();
    // The sampling kernels index outputs with u32: a larger one is refused before any cast.
    let samples: f64 = sizes.iter().product();
    if samples > u32::MAX as f64 || sizes.contains(&0.0) {
        return Err(Error::Invalid(format!(
            "zoom {zoom:?} of {dims:?} gives the shape {sizes:?} ({samples:e} samples; lucent resamples 1 to {} at once)",
            u32::MAX
        )));
    }
    let out: Vec<usize> = sizes.iter().map(|&n| n as usize).collect();
    crate::gpu::Shape::new(&out)?;
    Ok((AffineMap::zoom(dims, &out, grid_mode), out))
}

/// scipy.ndimage.rotate's map and output shape: `angle` in degrees in the plane of `axes`
/// (negative counts from the end); with `reshape` the plane grows to hold the rotated input.
pub fn rotate_map(dims: &[usize], angle: f64, axes: [isize; 2], reshape: bool) -> Result<(AffineMap, Vec<usize>)> {
    let d = dims.len() as isize;
    if d < 2 {
        return Err(Error::Invalid(format!("rotate needs an array of at least 2 axes, got {d}")));
    }
    let mut plane = [0usize; 2];
    for (p, &a) in plane.iter_mut().zip(&axes) {
        let a = if a < 0 { a + d } else { a };
        if !(0..d).contains(&a) {
            return Err(Error::Invalid(format!("rotate: axes {axes:?} of a {d}-axis array")));
        }
        *p = a as usize;
    }
    plane.sort();
    if plane[0] == plane[1] || !angle.is_finite() {
        return Err(Error::Invalid(format!("rotate: axes {axes:?} must differ and the angle ({angle}) be finite")));
    }
    let mut out = dims.to_vec();
    if reshape {
        let (c, s) = cos_sin_degrees(angle);
        let (iy, ix) = (dims[plane[0]] as f64, dims[plane[1]] as f64);
        let corners = [(0.0, 0.0), (0.0, ix), (iy, 0.0), (iy, ix)];
        let span = |f: &dyn Fn(f64, f64) -> f64| {
            let v: Vec<f64> = corners.iter().map(|&(y, x)| f(y, x)).collect();
            v.iter().copied().fold(f64::MIN, f64::max) - v.iter().copied().fold(f64::MAX, f64::min)
        };
        out[plane[0]] = (span(&|y, x| c * y + s * x) + 0.5) as usize;
        out[plane[1]] = (span(&|y, x| -s * y + c * x) + 0.5) as usize;
        crate::gpu::Shape::new(&out)?;
    }
    Ok((AffineMap::rotate(angle, plane, dims, &out), out))
}

/// The input coordinates `map` reads for every output index of `out` (f64, shape (d, out...)),
/// as map_coordinates takes them.
pub fn coordinates(map: &AffineMap, out: &[usize]) -> ndarray::ArrayD<f64> {
    let d = out.len();
    let shape: Vec<usize> = std::iter::once(d).chain(out.iter().copied()).collect();
    ndarray::ArrayD::from_shape_fn(ndarray::IxDyn(&shape), |at| map.offset[at[0]] + (0..d).map(|b| map.matrix[at[0]][b] * at[b + 1] as f64).sum::<f64>())
}

/// By elimination with partial pivoting (d ≤ 4).
fn determinant(m: &[Vec<f64>]) -> f64 {
    let mut a = m.to_vec();
    let n = a.len();
    let mut det = 1.0;
    for k in 0..n {
        let p = (k..n).max_by(|&i, &j| a[i][k].abs().total_cmp(&a[j][k].abs())).unwrap();
        if a[p][k] == 0.0 {
            return 0.0;
        }
        if p != k {
            a.swap(p, k);
            det = -det;
        }
        det *= a[k][k];
        let pivot = a[k].clone();
        for row in &mut a[k + 1..] {
            let f = row[k] / pivot[k];
            row[k..].iter_mut().zip(&pivot[k..]).for_each(|(v, &p)| *v -= f * p);
        }
    }
    det
}

/// scipy.ndimage.affine_transform(x, matrix, offset, output_shape, order, mode, cval,
/// prefilter) for an [`AffineMap`]. Axes the map leaves alone are read with order 0 and not
/// prefiltered (the same values: a spline through the samples passes through them), unless the
/// input is already spline coefficients (`prefilter` false at orders above 1): those are sampled.
pub fn affine_transform(rec: &mut Recording, x: Buf, map: &AffineMap, output_shape: &[usize], how: &Sampling) -> Result<Buf> {
    how.check()?;
    let dims = rec.dims(x).to_vec();
    let rank = dims.len();
    if map.matrix.len() != rank || output_shape.len() != rank {
        return Err(Error::Shape(format!("affine_transform of a {dims:?} array to {output_shape:?} with a {}-axis map", map.matrix.len())));
    }
    let interpolating = how.order == 1 || how.prefilter;
    let kept: Vec<bool> = (0..rank).map(|a| map.keeps(a) && how.order > 0 && interpolating).collect();
    let orders: Vec<u32> = kept.iter().map(|&k| if k { 0 } else { how.order }).collect();
    let (mut input, mut offset) = (x, map.offset.clone());
    if let Some(pad) = how.prepad() {
        let pads: Vec<(usize, usize)> = kept.iter().map(|&k| if k { (0, 0) } else { (pad, pad) }).collect();
        if pad > 0 {
            let edge = if how.mode == SplineMode::Nearest { Boundary::Nearest } else { Boundary::Constant(how.cval) };
            input = layout::pad(rec, input, &pads, edge)?;
            offset.iter_mut().zip(&pads).for_each(|(o, p)| *o += p.0 as f64);
        }
        for a in (0..rank).filter(|&a| !kept[a]) {
            input = spline_filter1d(rec, input, how.order, a, how.mode)?;
        }
    }
    let input = how.source(rec, input)?;
    crate::kernels::affine_sample::record(rec, input, &map.matrix, &offset, output_shape, &orders, how.mode.code(), how.cval)
}

/// The frequency of every sample of every axis of a spectrum of shape `dims` (scipy.ndimage's
/// Fourier filters): numpy's fftfreq f = k/n (k ≥ n/2 counted from −n), or along `real` =
/// (axis, n) f = k/n of a real transform's half spectrum of a length-n signal. In f64.
pub fn frequencies(dims: &[usize], real: Option<(usize, usize)>, what: &str) -> Result<Vec<Vec<f64>>> {
    if let Some((axis, n)) = real {
        if axis >= dims.len() || n / 2 + 1 != dims[axis] {
            return Err(Error::Shape(format!("{what}: a half spectrum of length {n} along axis {axis} has {} samples, the input {dims:?}", n / 2 + 1)));
        }
    }
    let axis = |a: usize, len: usize| -> Vec<f64> {
        let half = real.filter(|r| r.0 == a);
        (0..len)
            .map(|k| match half {
                Some((_, n)) => k as f64 / n as f64,
                None if 2 * k < len => k as f64 / len as f64,
                None => (k as f64 - len as f64) / len as f64,
            })
            .collect()
    };
    Ok(dims.iter().enumerate().map(|(a, &len)| axis(a, len)).collect())
}

/// The per-axis phase factors of scipy.ndimage.fourier_shift for a spectrum of shape `dims`,
/// axis after axis: exp(−2πi · shift · f) at the [`frequencies`]. In f64.
pub fn phase_factors(dims: &[usize], shift: &[f64], real: Option<(usize, usize)>) -> Result<Vec<num_complex::Complex64>> {
    let shift = super::per_axis(shift, dims.len(), "fourier_shift")?;
    if shift.iter().any(|v| !v.is_finite()) {
        return Err(Error::NonFinite(format!("fourier_shift: shift {shift:?}")));
    }
    let mut factors = Vec::with_capacity(dims.iter().sum());
    for (f, s) in frequencies(dims, real, "fourier_shift")?.iter().zip(&shift) {
        // The phase's fraction of a turn first, so large shifts keep their precision.
        factors.extend(f.iter().map(|f| num_complex::Complex64::from_polar(1.0, -2.0 * std::f64::consts::PI * (s * f).rem_euclid(1.0))));
    }
    Ok(factors)
}

/// scipy.ndimage.fourier_shift(x, shift, n, axis) of a complex spectrum: `real` = (axis, n)
/// when `x` is a real transform's half spectrum along `axis` of a length-n signal.
pub fn fourier_shift(rec: &mut Recording, x: Buf, shift: &[f64], real: Option<(usize, usize)>) -> Result<Buf> {
    let factors = phase_factors(rec.dims(x), shift, real)?;
    let table = crate::kernels::phase_ramp::upload_factors(rec, factors, rec.dtype(x))?;
    crate::kernels::phase_ramp::record(rec, x, table)
}
