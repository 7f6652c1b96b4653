//! The vector-geometry projectors and FDK recorded on the GPU.

use ndarray::{Array2, ArrayD, ArrayView2, IxDyn};

use super::{fdk, ProjectionGeometry, Projector, Views};
use crate::error::Result;
use crate::graph::{Buf, Recording};
use crate::kernels::broadcast::{self, BroadcastOp};
use crate::kernels::project_rays::Setup;
use crate::kernels::{backproject_rays, backproject_voxels, project_rays};
use crate::ops::tomography::Filter;

/// The views uploaded for the kernels (once per recording).
pub fn setup(rec: &mut Recording, views: &Views) -> Result<Setup> {
    let packed = rec.upload_once_f32(&views.packed().view())?;
    Ok(Setup {
        dims: views.dims,
        rows: views.rows,
        cols: views.cols,
        voxel: views.voxel,
        views: packed,
        any_x_major: views.views.iter().any(|v| v.axis == 0),
        cylinder: views.views.iter().any(|v| v.cylinder.is_some()),
        stacked: views.views.iter().any(|v| v.stacked),
    })
}

/// The projections (rows, angles, cols), or (angles, cols) in 2D, of a volume (Z, Y, X) or an
/// image (Y, X).
pub fn record_project(rec: &mut Recording, volume: Buf, views: &Views, s: &Setup) -> Result<Buf> {
    let y = project_rays::record(rec, volume, s)?;
    rec.reinterpret(y, &views.projection_shape(), crate::gpu::Dtype::F32)
}

/// [`record_project`] for the solvers of `projector`'s pair: [`Projector::Texture`] samples
/// through the texture unit where the adapter allows (as ASTRA's CUDA kernels), the others
/// exactly.
pub fn record_project_for(rec: &mut Recording, volume: Buf, views: &Views, s: &Setup, projector: Projector) -> Result<Buf> {
    if projector == Projector::Texture && project_rays::textures_fit(rec, s) {
        let y = project_rays::record_texture(rec, volume, s)?;
        return rec.reinterpret(y, &views.projection_shape(), crate::gpu::Dtype::F32);
    }
    record_project(rec, volume, views, s)
}

/// The back-projection (the volume's shape) of projections: the matched pair's exact
/// transpose, or ASTRA's voxel-driven one (through the texture unit for `Texture` where the
/// adapter allows).
pub fn record_backproject(rec: &mut Recording, projections: Buf, views: &Views, s: &Setup, projector: Projector) -> Result<Buf> {
    let x = match projector {
        Projector::Matched => backproject_rays::record(rec, projections, s)?,
        Projector::Texture if project_rays::textures_fit(rec, s) => backproject_voxels::record_texture(rec, projections, s)?,
        Projector::Astra | Projector::Texture => backproject_voxels::record(rec, projections, s, false)?,
    };
    rec.reinterpret(x, &views.volume_shape(), crate::gpu::Dtype::F32)
}

/// FDK (circular cone) or fan-beam FBP (fanflat) of projections ([`fdk`]).
pub fn record_fdk(rec: &mut Recording, projections: Buf, g: &ProjectionGeometry, views: &Views, s: &Setup, filter: Filter) -> Result<Buf> {
    record_fdk_offset(rec, projections, g, views, s, filter, 0.0)
}

/// [`record_fdk`] with the detector `offset` columns along its u vector from where the geometry
/// puts it: the filtered projections are read that much earlier (a flat detector's shift within
/// its plane moves no ray); the cosine and Parker weights stay at the nominal columns (off by
/// (offset × spacing / distance)², negligible for the centre search it serves).
pub fn record_fdk_offset(rec: &mut Recording, projections: Buf, g: &ProjectionGeometry, views: &Views, s: &Setup, filter: Filter, offset: f64) -> Result<Buf> {
    let (cosine, per) = fdk::weights(g)?;
    let filtered = record_fdk_filter(rec, projections, views, (&cosine, &per.view()), filter, offset)?;
    let volume = backproject_voxels::record(rec, filtered, s, true)?;
    rec.reinterpret(volume, &views.volume_shape(), crate::gpu::Dtype::F32)
}

/// FDK's weighted, filtered projections (rows, angles, cols) for `views`: the cosine weights
/// (rows, cols) and the per-view ones (angles, cols) of [`fdk::weights`], `per` cut to these
/// views.
pub fn record_fdk_filter(
    rec: &mut Recording,
    projections: Buf,
    views: &Views,
    (cosine, per): (&Array2<f64>, &ArrayView2<f64>),
    filter: Filter,
    offset: f64,
) -> Result<Buf> {
    let (rows, angles, cols) = (views.rows, views.projections(), views.cols);
    let upload = |rec: &mut Recording, a: ArrayView2<f64>, shape: [usize; 3]| -> Result<Buf> {
        let values = ArrayD::from_shape_vec(IxDyn(&shape), a.iter().map(|&v| v as f32).collect()).expect("sizes match");
        rec.upload_once_f32(&values.view())
    };
    // A stack's rows are its slices, each weighted as the 2D geometry's one row.
    let cosine = cosine.broadcast((rows, cols)).ok_or_else(|| crate::Error::Shape(format!("cosine weights {:?} for {rows} rows", cosine.dim())))?;
    let cosine = upload(rec, cosine, [rows, 1, cols])?;
    let per = upload(rec, per.view(), [1, angles, cols])?;
    let x = rec.reinterpret(projections, &[rows, angles, cols], crate::gpu::Dtype::F32)?;
    let x = broadcast::record(rec, BroadcastOp::Multiply, x, cosine)?;
    let x = broadcast::record(rec, BroadcastOp::Multiply, x, per)?;
    crate::ops::tomography::filter_lines(rec, x, cols, filter, -offset)
}
