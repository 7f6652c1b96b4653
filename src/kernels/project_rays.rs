//! `shaders/tomography/project_rays.wgsl`: Joseph's forward projector in any vector geometry
//! (`ops::tomography::vector`); `kernels::backproject_rays` is its exact transpose and
//! `kernels::backproject_voxels` the voxel-driven back-projector. The parameters are all three's.

use bytemuck::{Pod, Zeroable};

use super::boundary::Boundary;
use super::gather::AxisMap;
use super::{PROJECT_RAYS, PROJECT_RAYS_TEXTURE};
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in common/views.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub nx: u32,
    pub ny: u32,
    pub nz: u32,
    pub rows: u32,
    pub cols: u32,
    pub angles: u32,
    pub count: u32,
    pub unused: u32,
    pub voxel: [f32; 4],
}

/// The geometry as the kernels take it: volume and detector sizes, voxel sizes, and the views
/// (angles, 32) uploaded (`Views::packed`).
pub struct Setup {
    pub dims: [usize; 3],
    pub rows: usize,
    pub cols: usize,
    pub voxel: [f64; 3],
    pub views: Buf,
    /// Whether any view's rays cross x planes (the forward projector then reads a transposed
    /// copy of the volume).
    pub any_x_major: bool,
    /// Whether any view's detector is a cylinder, or any view a stack's fan: the kernels'
    /// CYLINDER and STACKED overrides, so that other views' kernels carry none of their
    /// arithmetic.
    pub cylinder: bool,
    pub stacked: bool,
}

impl Setup {
    /// The kernels' override constants.
    pub fn constants(&self) -> [(&'static str, f64); 2] {
        [("CYLINDER", f64::from(u8::from(self.cylinder))), ("STACKED", f64::from(u8::from(self.stacked)))]
    }
}

pub(super) fn params(rec: &Recording, s: &Setup, count: usize) -> Result<Params> {
    let volume = s.dims.iter().product::<usize>();
    let angles = rec.dims(s.views)[0];
    let projections = s.rows * s.cols * angles;
    if volume.max(projections) > i32::MAX as usize {
        return Err(Error::Invalid(format!("a volume of {volume} voxels or {projections} projection pixels in one pass (at most {})", i32::MAX)));
    }
    Ok(Params {
        nx: s.dims[0] as u32,
        ny: s.dims[1] as u32,
        nz: s.dims[2] as u32,
        rows: s.rows as u32,
        cols: s.cols as u32,
        angles: angles as u32,
        count: count as u32,
        unused: 0,
        voxel: [s.voxel[0] as f32, s.voxel[1] as f32, s.voxel[2] as f32, 0.0],
    })
}

/// Checks `x` is f32 of `expected` elements in any shape.
pub(super) fn expect_len(rec: &Recording, x: Buf, expected: &[usize], what: &str) -> Result<()> {
    rec.expect_dtype(x, Dtype::F32, what)?;
    let dims = rec.dims(x);
    if dims.iter().product::<usize>() != expected.iter().product::<usize>() {
        return Err(Error::Shape(format!("{what} {dims:?} for a geometry of {expected:?}")));
    }
    Ok(())
}

/// Projections (rows, angles, cols) of a volume (Z, Y, X).
pub fn record(rec: &mut Recording, volume: Buf, s: &Setup) -> Result<Buf> {
    expect_len(rec, volume, &[s.dims[2], s.dims[1], s.dims[0]], "a volume")?;
    let angles = rec.dims(s.views)[0];
    let out = rec.temp(&[s.rows, angles, s.cols], Dtype::F32)?;
    let count = s.rows * angles * s.cols;
    let p = params(rec, s, count)?;
    // x and y swapped for the views that cross x planes (a view with the volume itself where
    // none does).
    let cube = rec.reinterpret(volume, &[s.dims[2], s.dims[1], s.dims[0]], Dtype::F32)?;
    let transposed = if s.any_x_major {
        let maps = [0, 2, 1].map(|a| AxisMap::identity(a, [s.dims[2], s.dims[1], s.dims[0]][a]));
        super::gather::record(rec, cube, &maps, Boundary::Constant(0.0))?
    } else {
        cube
    };
    rec.dispatch(&PROJECT_RAYS, &s.constants(), bytemuck::bytes_of(&p), &[volume, transposed, s.views, out], PROJECT_RAYS.groups(count as u64));
    Ok(out)
}

/// Whether the texture forms ([`record_texture`], `backproject_voxels::record_texture`) run
/// here: the adapter filters f32 textures, and the volume and the projections, bordered, fit its
/// 3D textures' sides.
pub fn textures_fit(rec: &Recording, s: &Setup) -> bool {
    let angles = rec.dims(s.views)[0];
    let side = rec.gpu().limits().max_texture_dimension_3d as usize;
    let border = 2 * super::spline_texture::BORDER;
    rec.gpu().filters_f32() && s.dims.iter().chain(&[s.rows, s.cols, angles]).all(|&n| n + border <= side)
}

/// [`record`] through the texture unit, as ASTRA's: the volume copied into a bordered texture
/// (zeros around), one linear fetch per sample with the unit's interpolation weights (8-bit
/// fractions on NVIDIA): faster, approximate.
pub fn record_texture(rec: &mut Recording, volume: Buf, s: &Setup) -> Result<Buf> {
    expect_len(rec, volume, &[s.dims[2], s.dims[1], s.dims[0]], "a volume")?;
    let angles = rec.dims(s.views)[0];
    let out = rec.temp(&[s.rows, angles, s.cols], Dtype::F32)?;
    let count = s.rows * angles * s.cols;
    let p = params(rec, s, count)?;
    let cube = rec.reinterpret(volume, &[s.dims[2], s.dims[1], s.dims[0]], Dtype::F32)?;
    let tex = super::spline_texture::record(rec, cube, super::map_coordinates::mode::GRID_CONSTANT, 0.0)?;
    rec.dispatch(&PROJECT_RAYS_TEXTURE, &s.constants(), bytemuck::bytes_of(&p), &[tex, s.views, out], PROJECT_RAYS_TEXTURE.groups(count as u64));
    Ok(out)
}
