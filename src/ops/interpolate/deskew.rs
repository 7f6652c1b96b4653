//! Deskewing stage-scanned light-sheet stacks: the geometry of cudaDecon/pycudadecon's
//! `deskewGPU(im, dxdata, dzdata, angle, width, shift, pad_val)` as an [`AffineMap`], and its
//! rotation to coverslip coordinates, both sampled by [`super::affine_transform`] (any of scipy's
//! orders 0-5 and modes), so they equal scipy.ndimage.affine_transform with the same map.
//!
//! The stack's planes k (stage steps of `dzdata`) hold camera pixels (j, i) of `dxdata`; the sheet
//! and the camera's x axis make `angle` with the stage's motion. Sample coordinates: along the
//! stage X = k·dzdata + i·dxdata·cos θ, height Z = i·dxdata·sin θ, Y = j·dxdata (a negative angle
//! counts from the other side, θ = angle + 180°, as cudaDecon).
//!
//! - Deskewed (pycudadecon's output): each plane moved along x by f·(k − nz/2) pixels,
//!   f = cos θ·dzdata/dxdata: output (k, j, x) reads plane k at
//!   x − width/2 + shift − f·(k − nz/2) + nx/2, `width` nx + ⌊nz·dzdata·|cos θ|/dxdata⌋ unless
//!   given. cudaDecon pads a sample at exactly x = nx − 1 too; scipy's constant mode reads it.
//!   The planes are then dzdata·sin θ apart, normal to the sheet.
//! - Coverslip (`rotate`): isotropic voxels of `dxdata` in (Z, Y, X), Z from the camera's first
//!   column's height up, X from the smallest X of the stack: one interpolation from the raw
//!   stack (no deskew-then-rotate double blur).
//!
//! - Skewed (a PSF): the inverse of the deskew for a small array in the deskewed frame, such as
//!   a model PSF whose planes are [`Deskew::deskewed_dz`] apart: plane k moved by −f·(k − kc)
//!   about the centre plane kc, widened to hold it, so a raw stack can be deconvolved before
//!   it is deskewed.
//!
//! Y is left alone by both maps, and the deskewed frame reads each plane from its own plane, so
//! a stack beyond one buffer is deskewed in slabs (`ndimage::deskew`: of planes, contiguous in
//! and out, or of rows for the coverslip frame) with the same result.

use super::AffineMap;
use crate::error::{Error, Result};

/// pycudadecon's deskew parameters (its names and defaults) and the coverslip rotation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Deskew {
    /// Degrees between the sheet and the stage's motion (pycudadecon's `angle`, 31.5).
    pub angle: f64,
    /// The stage's step between planes, µm (`dzdata`, 0.5).
    pub dzdata: f64,
    /// The camera's pixel size in the sample, µm (`dxdata`, 0.1).
    pub dxdata: f64,
    /// Output width in pixels, 0 for the whole stack (`width`); deskewed output only.
    pub width: usize,
    /// The output's centre moved by this many pixels along x (`shift`); deskewed output only.
    pub shift: f64,
    /// Coverslip coordinates (Z, Y, X) with isotropic voxels of `dxdata`.
    pub rotate: bool,
}

impl Default for Deskew {
    fn default() -> Deskew {
        Deskew { angle: 31.5, dzdata: 0.5, dxdata: 0.1, width: 0, shift: 0.0, rotate: false }
    }
}

/// Output extents beyond this many samples per axis are refused (a wrong unit, say nm for µm).
pub const MAX_DESKEW_EXTENT: f64 = 1048576.0;

impl Deskew {
    fn check(&self) -> Result<()> {
        let finite = [self.angle, self.dzdata, self.dxdata, self.shift].iter().all(|v| v.is_finite());
        if !finite || self.dzdata <= 0.0 || self.dxdata <= 0.0 {
            return Err(Error::Invalid(format!(
                "deskew: angle {}, dzdata {} and dxdata {} must be finite, the steps positive (shift {})",
                self.angle, self.dzdata, self.dxdata, self.shift
            )));
        }
        if self.angle.abs() >= 180.0 || self.angle.abs() % 180.0 == 0.0 {
            return Err(Error::Invalid(format!("deskew: angle {}° (between -180 and 180, not 0: no skew to undo)", self.angle)));
        }
        if self.rotate && (self.width != 0 || self.shift != 0.0) {
            return Err(Error::Invalid("deskew: width and shift crop the deskewed frame; with the rotation the output holds the whole stack".into()));
        }
        Ok(())
    }

    /// cos θ and sin θ, θ = angle, or angle + 180° for a negative angle (as cudaDecon).
    fn cos_sin(&self) -> (f64, f64) {
        let theta = if self.angle < 0.0 { self.angle + 180.0 } else { self.angle };
        super::cos_sin_degrees(theta)
    }

    /// The spacing of the deskewed planes along the sheet's normal, µm (cudaDecon's new dz).
    pub fn deskewed_dz(&self) -> f64 {
        self.dzdata * self.cos_sin().1.abs()
    }
}

fn extent(what: &str, samples: f64) -> Result<usize> {
    if !(1.0..=MAX_DESKEW_EXTENT).contains(&samples) {
        return Err(Error::Invalid(format!(
            "deskew: the output's {what} would be {samples:.0} samples (at most {MAX_DESKEW_EXTENT}): check the units of dzdata and dxdata"
        )));
    }
    Ok(samples as usize)
}

/// The affine map and output shape that deskew a stack of shape (nz, ny, nx).
pub fn deskew_map(dims: &[usize], d: &Deskew) -> Result<(AffineMap, Vec<usize>)> {
    d.check()?;
    let &[nz, ny, nx] = dims else {
        return Err(Error::Shape(format!("deskew takes a stack of 3 axes (planes, rows, columns), got {dims:?}")));
    };
    crate::gpu::Shape::new(dims)?;
    let (c, s) = d.cos_sin();
    let (nz_f, nx_f) = (nz as f64, nx as f64);
    let (map, out) = if d.rotate {
        let ratio = d.dxdata / d.dzdata;
        // X of the stack's corners in dxdata units: k·dz/dx + i·cos θ.
        let x_span = [0.0, (nx_f - 1.0) * c, (nz_f - 1.0) / ratio, (nz_f - 1.0) / ratio + (nx_f - 1.0) * c];
        let x0 = x_span.iter().copied().fold(f64::MAX, f64::min);
        let x1 = x_span.iter().copied().fold(f64::MIN, f64::max);
        let out = vec![extent("height", ((nx_f - 1.0) * s).floor() + 1.0)?, ny, extent("length", (x1 - x0).floor() + 1.0)?];
        // Output (a, j, b): Z = a, X = x0 + b (dxdata units); input i = a/sin θ,
        // k = (X − i·cos θ)·dx/dz.
        let matrix = vec![vec![-ratio * c / s, 0.0, ratio], vec![0.0, 1.0, 0.0], vec![1.0 / s, 0.0, 0.0]];
        (AffineMap { matrix, offset: vec![ratio * x0, 0.0, 0.0] }, out)
    } else {
        let f = c * d.dzdata / d.dxdata;
        let width = if d.width > 0 { extent("width", d.width as f64)? } else { extent("width", nx_f + (nz_f * d.dzdata * c.abs() / d.dxdata).floor())? };
        let matrix = vec![vec![1.0, 0.0, 0.0], vec![0.0, 1.0, 0.0], vec![-f, 0.0, 1.0]];
        let offset = vec![0.0, 0.0, f * nz_f / 2.0 + nx_f / 2.0 - width as f64 / 2.0 + d.shift];
        (AffineMap { matrix, offset }, vec![nz, ny, width])
    };
    crate::gpu::Shape::new(&out)?;
    Ok((map, out))
}

/// The affine map and output shape that shear an array of the deskewed frame (planes, rows,
/// columns; a PSF centred on its middle plane) into the raw stack's frame: output (k, j, x)
/// reads column x + f·(k − kc) − (width − nx)/2, the width the least of nx's parity that holds
/// every moved plane.
pub fn skew_map(dims: &[usize], d: &Deskew) -> Result<(AffineMap, Vec<usize>)> {
    d.check()?;
    let &[nz, ny, nx] = dims else {
        return Err(Error::Shape(format!("skewing takes an array of 3 axes (planes, rows, columns), got {dims:?}")));
    };
    crate::gpu::Shape::new(dims)?;
    let f = d.cos_sin().0 * d.dzdata / d.dxdata;
    let kc = (nz as f64 - 1.0) / 2.0;
    let width = extent("width", nx as f64 + 2.0 * (f.abs() * kc).ceil())?;
    let matrix = vec![vec![1.0, 0.0, 0.0], vec![0.0, 1.0, 0.0], vec![f, 0.0, 1.0]];
    let offset = vec![0.0, 0.0, -f * kc - (width - nx) as f64 / 2.0];
    Ok((AffineMap { matrix, offset }, vec![nz, ny, width]))
}
