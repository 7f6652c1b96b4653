//! Tomography in any ASTRA geometry ([`geometry`]): fan and cone beam, 3D parallel beam, and
//! the per-projection vector forms. Every geometry becomes [`Views`]: per projection the
//! source (or the rays' direction), the detector's first pixel and its steps, in the volume's
//! index coordinates (voxel (k, j, i) at (i, j, k)), computed in f64.
//!
//! The projector pair:
//! - forward ([`gpu::record_project`], `shaders/tomography/project_rays.wgsl`): Joseph's method as
//!   ASTRA's CUDA `cone_FP`/`par3d_FP`: each pixel's central ray crosses the planes of the axis
//!   along which the projection's central ray runs most steeply, and sums the volume bilinearly
//!   interpolated in each plane (zero outside), times the ray's length per plane;
//! - its exact transpose ([`Projector::Matched`], `backproject_rays.wgsl`): every voxel gathers
//!   the rays whose samples it contributed to, with the same weights, so that
//!   ⟨A x, y⟩ = ⟨x, Aᵀ y⟩ to f32 rounding;
//! - the voxel-driven back-projector ([`Projector::Astra`], `backproject_voxels.wgsl`): each
//!   voxel's centre projected onto the detector, the projection bilinearly interpolated there,
//!   times the rays' density (the continuous adjoint, as ASTRA's `cone_BP`); fast, but adjoint
//!   only approximately; with FDK's weight it is FDK's back-projector.

pub mod blocked;
pub mod blocks;
pub mod cpu;
pub mod fdk;
pub mod fista;
pub mod geometry;
pub mod gpu;
pub mod iterative;
pub mod sart;

pub use geometry::{ProjectionGeometry, VolumeGeometry};

use crate::error::{Error, Result};

type V3 = [f64; 3];

fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
fn cross(a: V3, b: V3) -> V3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}
fn scale(a: V3, s: f64) -> V3 {
    a.map(|v| v * s)
}
fn norm(a: V3) -> f64 {
    dot(a, a).sqrt()
}

/// Which back-projector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Projector {
    /// The exact transpose of the forward projector (adjoint to f32 rounding).
    #[default]
    Matched,
    /// Voxel-driven, as ASTRA's CUDA back-projectors: faster, adjoint approximately.
    Astra,
    /// ASTRA's pair as ASTRA's CUDA kernels sample: the solvers' projections and the
    /// voxel-driven back-projection through the texture unit, one linear fetch per sample with
    /// the unit's interpolation weights (8-bit fractions on NVIDIA); `Astra` where the adapter
    /// filters no f32 textures or the arrays exceed its 3D textures.
    Texture,
}

impl Projector {
    pub const NAMES: [&'static str; 3] = ["matched", "astra", "texture"];

    pub fn parse(name: &str) -> Result<Projector> {
        match name {
            "matched" => Ok(Projector::Matched),
            "astra" => Ok(Projector::Astra),
            "texture" => Ok(Projector::Texture),
            other => Err(Error::Invalid(format!("projector '{other}' (one of {})", Projector::NAMES.join(", ")))),
        }
    }
}

/// One projection in index coordinates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct View {
    /// Rays from a source (else parallel).
    pub cone: bool,
    /// A fan of a stack of 2D problems: detector row k is slice k's, its source moved k along v
    /// (one slice; the rays stay in their slice).
    pub stacked: bool,
    /// The source (cone), or the rays' direction (parallel).
    pub source: V3,
    /// The centre of detector pixel (0, 0).
    pub corner: V3,
    /// One pixel along the detector's columns and rows.
    pub u: V3,
    pub v: V3,
    /// The axis (0 x, 1 y, 2 z) whose planes the rays cross: the projection's central ray's
    /// steepest (ASTRA's choice).
    pub axis: usize,
    /// A point x's detector column and row are (col·(x, 1)) / (den·(x, 1)) and
    /// (row·(x, 1)) / (den·(x, 1)); den·(x, 1) is λ, the fraction of the way from the source to
    /// the detector's plane (1 for parallel rays).
    pub col: [f64; 4],
    pub row: [f64; 4],
    pub den: [f64; 4],
    /// The rays' density factor: cone 1 / |det(u, v, d − s)|; parallel |r|_world / |det(u, v, r)|.
    pub density: f64,
    /// λ at the world's origin (FDK's weight (λ₀/λ)²; cone only).
    pub lambda_origin: f64,
    /// A cylindrical detector (`cyl_cone_vec`): then `col`, `row`, `den` and `density` are
    /// unused, the pixels and their inverse map are the cylinder's.
    pub cylinder: Option<Cylinder>,
}

/// A cylindrical detector: pixel (row, col) at centre + radial cos θ + tangent sin θ +
/// (row − mid.1) v, θ = (col − mid.0) · step; index coordinates but for the unit vectors and
/// the source's offsets (world), with which a point's pixel is found (ASTRA's projectPoint:
/// the ray's far intersection with the cylinder).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cylinder {
    /// The axis's point level with the detector's centre; the radial and tangential vectors
    /// (each R long in world units).
    pub centre: V3,
    pub radial: V3,
    pub tangent: V3,
    /// Radians per column; the detector's middle (col, row).
    pub step: f64,
    pub mid: (f64, f64),
    /// World unit vectors: radial, tangential, along the axis.
    pub radial_n: V3,
    pub tangent_n: V3,
    pub axis_n: V3,
    /// The source relative to `centre` along them (world).
    pub source: V3,
    /// R and |v| (world).
    pub radius: f64,
    pub v_length: f64,
    /// The voxel's sizes (index → world).
    pub voxel: V3,
}

/// A geometry in the form the projectors take.
#[derive(Clone, Debug, PartialEq)]
pub struct Views {
    pub views: Vec<View>,
    /// Detector rows and columns.
    pub rows: usize,
    pub cols: usize,
    /// Voxels along x, y, z.
    pub dims: [usize; 3],
    /// Voxel sizes along x, y, z (world units).
    pub voxel: V3,
    /// From a 3D geometry, or a stack of 2D problems (projections (rows, angles, cols), volume
    /// (Z, Y, X)); else 2D ((angles, cols), (rows, cols)).
    pub three_d: bool,
}

/// Floats per view in the kernels' `View` (common/views.wgsl).
pub const VIEW_FLOATS: usize = 36;

impl Views {
    pub fn new(projections: &ProjectionGeometry, volume: &VolumeGeometry) -> Result<Views> {
        projections.validate()?;
        if projections.is_3d() && volume.slices.is_none() {
            return Err(Error::Invalid(format!("a 3D projection geometry ({}) with a 2D volume geometry", projections.kind())));
        }
        // A 2D geometry with a 3D volume: a stack of 2D problems, one per slice, each slice's
        // projections one detector row.
        let stack = !projections.is_3d() && volume.slices.is_some();
        let (mut rows, cols) = projections.detector();
        let three_d = projections.is_3d() || stack;
        let voxel = volume.voxel();
        // 2D images have y up (row 0 at the top): in the index frame y runs down, so 2D
        // geometries (and each slice of a stack) are mirrored in y, the window too.
        let flip = if projections.is_3d() { 1.0 } else { -1.0 };
        let mut window = volume.window;
        if !projections.is_3d() {
            window[1] = (-volume.window[1].1, -volume.window[1].0);
            window[2] = (-0.5, 0.5);
        }
        let point = |p: V3| -> V3 {
            let p = [p[0], flip * p[1], p[2]];
            std::array::from_fn(|a| (p[a] - window[a].0) / voxel[a] - 0.5)
        };
        let vector = |d: V3| -> V3 {
            let d = [d[0], flip * d[1], d[2]];
            std::array::from_fn(|a| d[a] / voxel[a])
        };
        let dims = [volume.cols, volume.rows, volume.slices.unwrap_or(1)];
        let origin = point([0.0; 3]);
        let cone = projections.is_divergent();
        let radii = projections.radii();
        let views = projections
            .vectors()
            .iter()
            .enumerate()
            .map(|(i, &[s, d, u, v])| {
                if let Some(radii) = &radii {
                    let frame = Frame { point: &point, vector: &vector, dims, voxel, rows, cols };
                    return View::cylindrical(i, [s, d, u, v], radii[i], &frame);
                }
                let (u, mut v, d) = (vector(u), vector(v), point(d));
                let mut s = if cone { point(s) } else { vector(s) };
                let mut corner = [0, 1, 2].map(|a| d[a] - (cols as f64 / 2.0 - 0.5) * u[a] - (rows as f64 / 2.0 - 0.5) * v[a]);
                if stack {
                    // Row k at slice k's centre: the 2D view at z = 0, one slice per row.
                    corner[2] = 0.0;
                    v = [0.0, 0.0, 1.0];
                    if cone {
                        s[2] = 0.0;
                    }
                }
                let mut view = View::new(i, cone, s, corner, u, v, d, origin, dims, voxel)?;
                view.stacked = stack && cone;
                Ok(view)
            })
            .collect::<Result<Vec<_>>>()?;
        if stack {
            rows = dims[2];
        }
        Ok(Views { views, rows, cols, dims, voxel, three_d })
    }

    pub fn projections(&self) -> usize {
        self.views.len()
    }

    /// The projection data's shape: (rows, angles, cols), or (angles, cols) in 2D.
    pub fn projection_shape(&self) -> Vec<usize> {
        if self.three_d {
            vec![self.rows, self.views.len(), self.cols]
        } else {
            vec![self.views.len(), self.cols]
        }
    }

    /// The volume's shape: (Z, Y, X), or (Y, X) in 2D.
    pub fn volume_shape(&self) -> Vec<usize> {
        if self.three_d {
            vec![self.dims[2], self.dims[1], self.dims[0]]
        } else {
            vec![self.dims[1], self.dims[0]]
        }
    }

    /// The views of the volume's slices `z` alone (3D): the same rays in that slab's index
    /// coordinates (its first slice at z = 0).
    pub fn slab(&self, z: std::ops::Range<usize>) -> Views {
        let shift = z.start as f64;
        let views = self
            .views
            .iter()
            .map(|w| {
                let mut w = *w;
                if w.cone {
                    w.source[2] -= shift;
                }
                w.corner[2] -= shift;
                if let Some(c) = &mut w.cylinder {
                    c.centre[2] -= shift;
                }
                for form in [&mut w.col, &mut w.row, &mut w.den] {
                    form[3] += form[2] * shift;
                }
                w
            })
            .collect();
        Views { views, rows: self.rows, cols: self.cols, dims: [self.dims[0], self.dims[1], z.len()], voxel: self.voxel, three_d: self.three_d }
    }

    /// The kernels' views (common/views.wgsl), f32, (angles, 32).
    pub fn packed(&self) -> ndarray::ArrayD<f32> {
        let values: Vec<f32> = self
            .views
            .iter()
            .flat_map(|w| {
                let mut out = [0.0f64; VIEW_FLOATS];
                let put = |out: &mut [f64; VIEW_FLOATS], at: usize, v: V3, last: f64| {
                    out[at..at + 3].copy_from_slice(&v);
                    out[at + 3] = last;
                };
                put(&mut out, 12, w.v, w.lambda_origin);
                if let Some(c) = &w.cylinder {
                    // Laid out as common/views.wgsl's View reads a cylinder.
                    put(&mut out, 0, w.source, 3.0);
                    put(&mut out, 4, c.centre, w.axis as f64);
                    put(&mut out, 8, c.radial, c.step);
                    put(&mut out, 16, c.tangent, c.mid.0);
                    put(&mut out, 20, c.radial_n, c.source[0]);
                    put(&mut out, 24, c.tangent_n, c.source[1]);
                    put(&mut out, 28, c.axis_n, c.source[2]);
                    let qc = c.source[0] * c.source[0] + c.source[1] * c.source[1] - c.radius * c.radius;
                    put(&mut out, 32, [c.radius, 1.0 / c.v_length, c.mid.1], qc);
                } else {
                    let kind = if w.stacked { 2.0 } else { f64::from(u8::from(w.cone)) };
                    put(&mut out, 0, w.source, kind);
                    put(&mut out, 4, w.corner, w.axis as f64);
                    put(&mut out, 8, w.u, w.density);
                    out[16..20].copy_from_slice(&w.col);
                    out[20..24].copy_from_slice(&w.row);
                    out[24..28].copy_from_slice(&w.den);
                }
                out.map(|v| v as f32)
            })
            .collect();
        ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[self.views.len(), VIEW_FLOATS]), values).expect("VIEW_FLOATS per view")
    }
}

/// World → index coordinates, and the volume's and detector's sizes.
struct Frame<'a> {
    point: &'a dyn Fn(V3) -> V3,
    vector: &'a dyn Fn(V3) -> V3,
    dims: [usize; 3],
    voxel: V3,
    rows: usize,
    cols: usize,
}

impl View {
    /// A view of a cylindrical detector from its world vectors (source, detector centre, u, v)
    /// and radius, as ASTRA's `cyl_cone_vec`.
    fn cylindrical(i: usize, [s, d, u, v]: [V3; 4], radius: f64, f: &Frame) -> Result<View> {
        let (lu, lv) = (norm(u), norm(v));
        if lu == 0.0 || lv == 0.0 || dot(u, v).abs() > 1e-6 * lu * lv {
            return Err(Error::Invalid(format!("projection {i}: a cylindrical detector's u and v must be nonzero and perpendicular")));
        }
        let radial_w = scale(cross(u, v), -radius / (lu * lv));
        let centre_w = sub(d, radial_w);
        let tangent_w = scale(u, radius / lu);
        let (radial_n, tangent_n, axis_n) = (scale(radial_w, 1.0 / radius), scale(u, 1.0 / lu), scale(v, 1.0 / lv));
        let offset = sub(s, centre_w);
        let cylinder = Cylinder {
            centre: (f.point)(centre_w),
            radial: (f.vector)(radial_w),
            tangent: (f.vector)(tangent_w),
            step: lu / radius,
            mid: (f.cols as f64 / 2.0 - 0.5, f.rows as f64 / 2.0 - 0.5),
            radial_n,
            tangent_n,
            axis_n,
            source: [dot(offset, radial_n), dot(offset, tangent_n), dot(offset, axis_n)],
            radius,
            v_length: lv,
            voxel: f.voxel,
        };
        let (source, v_index) = ((f.point)(s), (f.vector)(v));
        let central = sub((f.point)(d), source);
        let a = central.map(f64::abs);
        let axis = if a[0] >= a[1] && a[0] >= a[2] {
            0
        } else if a[1] >= a[2] {
            1
        } else {
            2
        };
        let view = View {
            cone: true,
            stacked: false,
            source,
            corner: cylinder.centre,
            u: cylinder.tangent,
            v: v_index,
            axis,
            col: [0.0; 4],
            row: [0.0; 4],
            den: [0.0, 0.0, 0.0, 1.0],
            density: 0.0,
            lambda_origin: 1.0,
            cylinder: Some(cylinder),
        };
        // Every ray through the volume (its voxels' box grown by two voxels) leaves the source
        // forward and meets the detector's half cylinder.
        for corner_index in 0..8 {
            let x: V3 = std::array::from_fn(|a| if corner_index >> a & 1 == 0 { -2.5 } else { f.dims[a] as f64 + 1.5 });
            let (col, _, lambda) = view.project(x);
            let theta = (col - cylinder.mid.0) * cylinder.step;
            if !(lambda.is_finite() && lambda > 1e-9 && theta.abs() < std::f64::consts::FRAC_PI_2) {
                return Err(Error::Invalid(format!(
                    "projection {i}: rays from the source through the volume miss the cylindrical detector, or the source is inside the volume or beside it"
                )));
            }
        }
        Ok(view)
    }

    /// The rays' density factor at pixel (row, col): 1 / |det(u, v, pixel − source)|, u the
    /// pixel's step along its row there (a flat detector's is the same everywhere).
    pub fn density_at(&self, row: f64, col: f64) -> f64 {
        let Some(c) = &self.cylinder else { return self.density };
        let theta = (col - c.mid.0) * c.step;
        let (sin, cos) = theta.sin_cos();
        let u: V3 = std::array::from_fn(|a| (c.tangent[a] * cos - c.radial[a] * sin) * c.step);
        let (_, along) = self.ray(row, col);
        1.0 / dot(cross(u, self.v), along).abs()
    }

    #[allow(clippy::too_many_arguments)]
    fn new(i: usize, cone: bool, source: V3, corner: V3, u: V3, v: V3, d: V3, origin: V3, dims: [usize; 3], voxel: V3) -> Result<View> {
        let uv = cross(u, v);
        if norm(uv) <= 1e-12 * norm(u) * norm(v) || norm(u) == 0.0 || norm(v) == 0.0 {
            return Err(Error::Invalid(format!("projection {i}: the detector's u and v vectors are parallel or zero")));
        }
        let world = |a: V3| norm(std::array::from_fn(|k| a[k] * voxel[k]));
        let (central, col, row, den, density, lambda_origin);
        if cone {
            let sd = sub(source, corner);
            let k = dot(uv, sd);
            if k.abs() <= 1e-12 * norm(uv) * norm(sd) {
                return Err(Error::Invalid(format!("projection {i}: the source lies in the detector's plane")));
            }
            // Cramer's rule on corner + c u + r v = s + λ (x − s): each a linear form in x,
            // divided by det(u, v, s − corner) so that the denominator is λ.
            let lin = |w: V3| -> [f64; 4] { [-w[0] / k, -w[1] / k, -w[2] / k, dot(w, source) / k] };
            col = lin(cross(sd, v));
            row = lin(cross(u, sd));
            den = lin(uv);
            central = sub(d, source);
            density = 1.0 / k.abs();
            lambda_origin = dot(den[..3].try_into().expect("three"), origin) + den[3];
            // The whole volume (its voxels' centres' box, grown by two voxels) in front of the
            // source: every ray leaves the source through it once.
            for corner_index in 0..8 {
                let x: V3 = std::array::from_fn(|a| if corner_index >> a & 1 == 0 { -2.5 } else { dims[a] as f64 + 1.5 });
                let lambda = dot(den[..3].try_into().expect("three"), x) + den[3];
                if lambda.is_nan() || lambda <= 1e-9 {
                    return Err(Error::Invalid(format!(
                        "projection {i}: the source at index coordinates ({:.1}, {:.1}, {:.1}) is inside the volume or beside it, not in front of it",
                        source[0], source[1], source[2]
                    )));
                }
            }
        } else {
            let r = source;
            let k = dot(uv, scale(r, -1.0));
            if k.abs() <= 1e-12 * norm(uv) * norm(r) {
                return Err(Error::Invalid(format!("projection {i}: the rays run parallel to the detector (or are zero)")));
            }
            // corner + c u + r' v − μ r = x.
            let lin = |w: V3| -> [f64; 4] { [w[0] / k, w[1] / k, w[2] / k, -dot(w, corner) / k] };
            col = lin(cross(v, scale(r, -1.0)));
            row = lin(cross(scale(r, -1.0), u));
            den = [0.0, 0.0, 0.0, 1.0];
            central = r;
            density = world(r) / k.abs();
            lambda_origin = 1.0;
        }
        // ASTRA's choice: the axis the central ray runs along most, ties to x, then y.
        let a = central.map(f64::abs);
        let axis = if a[0] >= a[1] && a[0] >= a[2] {
            0
        } else if a[1] >= a[2] {
            1
        } else {
            2
        };
        Ok(View { cone, stacked: false, source, corner, u, v, axis, col, row, den, density, lambda_origin, cylinder: None })
    }

    /// The source of detector row `row` (a stack's fan moves with it).
    pub fn source_at(&self, row: f64) -> V3 {
        if self.stacked {
            std::array::from_fn(|a| self.source[a] + row * self.v[a])
        } else {
            self.source
        }
    }

    /// The ray through pixel (row, col): its origin and direction (index coordinates).
    pub fn ray(&self, row: f64, col: f64) -> (V3, V3) {
        if let Some(c) = &self.cylinder {
            let (sin, cos) = ((col - c.mid.0) * c.step).sin_cos();
            let pixel: V3 = std::array::from_fn(|a| c.centre[a] + c.radial[a] * cos + c.tangent[a] * sin + (row - c.mid.1) * self.v[a]);
            return (self.source, sub(pixel, self.source));
        }
        let pixel: V3 = std::array::from_fn(|a| self.corner[a] + col * self.u[a] + row * self.v[a]);
        if self.cone {
            let s = self.source_at(row);
            (s, sub(pixel, s))
        } else {
            (pixel, self.source)
        }
    }

    /// Where point x lands on the detector: (col, row, λ).
    pub fn project(&self, x: V3) -> (f64, f64, f64) {
        if let Some(c) = &self.cylinder {
            // The ray s + t (x − s) meets the cylinder where (t ra + sa)² + (t rb + sb)² = R²;
            // x is at t = 1, the detector at the larger root, so λ = 1/t.
            let dw: V3 = std::array::from_fn(|a| (x[a] - self.source[a]) * c.voxel[a]);
            let (ra, rb, rc) = (dot(dw, c.radial_n), dot(dw, c.tangent_n), dot(dw, c.axis_n));
            let [sa, sb, sc] = c.source;
            let qa = ra * ra + rb * rb;
            let qb = 2.0 * (ra * sa + rb * sb);
            let qc = sa * sa + sb * sb - c.radius * c.radius;
            let disc = qb * qb - 4.0 * qa * qc;
            if disc < 0.0 || qa == 0.0 {
                return (f64::NAN, f64::NAN, f64::NAN);
            }
            let t = if qb <= 0.0 { (-qb + disc.sqrt()) / (2.0 * qa) } else { 2.0 * qc / (-qb - disc.sqrt()) };
            let theta = ((t * rb + sb) / c.radius).clamp(-1.0, 1.0).asin();
            return (theta / c.step + c.mid.0, (t * rc + sc) / c.v_length + c.mid.1, 1.0 / t);
        }
        let lin = |c: &[f64; 4]| c[0] * x[0] + c[1] * x[1] + c[2] * x[2] + c[3];
        let lambda = lin(&self.den);
        let row = if self.stacked { x[2] - self.corner[2] } else { lin(&self.row) / lambda };
        (lin(&self.col) / lambda, row, lambda)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pixel's ray passes through the points the homography sends back to that pixel.
    #[test]
    fn homography_inverts_the_rays() {
        let cone = ProjectionGeometry::ConeVec {
            rows: 7,
            cols: 9,
            vectors: vec![
                [3.0, -40.0, 2.0, -1.0, 30.0, -2.0, 1.1, 0.1, 0.05, 0.0, -0.2, 0.9],
                [40.0, 5.0, -3.0, -25.0, 1.0, 1.0, 0.0, 1.2, 0.0, 0.1, 0.0, 1.3],
            ],
        };
        let parallel = ProjectionGeometry::Parallel3dVec { rows: 7, cols: 9, vectors: vec![[0.3, -1.0, 0.1, 1.0, 2.0, 0.5, 0.9, 0.2, 0.0, 0.0, 0.1, 1.1]] };
        let fan = ProjectionGeometry::FanFlat { width: 1.3, count: 11, angles: vec![0.3, 2.0], source_origin: 30.0, origin_detector: 20.0 };
        for (g, v) in [
            (cone, VolumeGeometry::with_window(5, 6, Some(4), [(-3.0, 3.0), (-2.0, 3.0), (-1.0, 1.0)]).unwrap()),
            (parallel, VolumeGeometry::new(5, 6, Some(4)).unwrap()),
            (fan, VolumeGeometry::new(6, 5, None).unwrap()),
        ] {
            let views = Views::new(&g, &v).unwrap();
            for view in &views.views {
                for (row, col) in [(0.0, 0.0), (3.0, 5.5), (6.0, 8.0)] {
                    let row = if views.three_d { row } else { 0.0 };
                    let (o, d) = view.ray(row, col);
                    for t in [0.3, 0.5, 0.9] {
                        let x = [0, 1, 2].map(|a| o[a] + t * d[a]);
                        let (c, r, lambda) = view.project(x);
                        assert!((c - col).abs() < 1e-9 && (r - row).abs() < 1e-9, "{}: ({r}, {c}) for ({row}, {col})", g.kind());
                        if view.cone {
                            assert!((lambda - t).abs() < 1e-9);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn refuses_a_source_inside_the_volume() {
        let g = ProjectionGeometry::Cone { spacing_x: 1.0, spacing_y: 1.0, rows: 4, cols: 4, angles: vec![0.0], source_origin: 3.0, origin_detector: 10.0 };
        let err = Views::new(&g, &VolumeGeometry::new(8, 8, Some(8)).unwrap()).unwrap_err();
        assert!(err.to_string().contains("inside the volume"), "{err}");
        let g2 = ProjectionGeometry::Cone { spacing_x: 1.0, spacing_y: 1.0, rows: 4, cols: 4, angles: vec![0.0], source_origin: 3.0, origin_detector: 10.0 };
        assert!(Views::new(&g2, &VolumeGeometry::new(8, 8, None).unwrap()).is_err(), "a 3D geometry with a 2D volume");
    }
}
