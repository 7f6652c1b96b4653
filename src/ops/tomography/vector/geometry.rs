//! ASTRA's projection and volume geometries, and their common form: per projection, where the
//! source (or the rays' direction) and the detector are, in the volume's index coordinates.
//!
//! Conventions (ASTRA's, so that a script's geometry dicts mean the same here):
//! - 3D volumes are arrays (slices, rows, cols) = (Z, Y, X); voxel (k, j, i) has its centre at
//!   x = WindowMinX + (i + ½) vx, y = WindowMinY + (j + ½) vy, z = WindowMinZ + (k + ½) vz
//!   (the window defaults to the grid centred on the origin, voxels of 1).
//! - 2D images are (rows, cols) with y up: row r has y = WindowMaxY − (r + ½) vy.
//! - Detector pixel (row, col) has its centre at d + (col − cols/2 + ½) u + (row − rows/2 + ½) v,
//!   d the detector's centre, u and v one pixel along its columns and rows; 3D projections are
//!   arrays (rows, angles, cols), 2D sinograms (angles, cols).
//! - `cone` and `fanflat` turn the source counter-clockwise from (0, −DistanceOriginSource) at
//!   angle 0: source (sin θ, −cos θ) × DistanceOriginSource, detector centre
//!   (−sin θ, cos θ) × DistanceOriginDetector, u = (cos θ, sin θ) × DetectorSpacingX,
//!   v = (0, 0, DetectorSpacingY) (`astra.functions.geom_2vec`); `parallel3d` the same with rays
//!   along (sin θ, −cos θ, 0) and the detector through the origin.
//!
//! TIGRE describes the circular cone beam by DSO (= DistanceOriginSource), DSD (= source to
//! detector, DistanceOriginSource + DistanceOriginDetector), its detector's `dDetector` and
//! `nDetector` (= spacing and counts, (v, u) order), and angles; its volume is (x, y, z)-ordered
//! where ASTRA's is (z, y, x), and its source starts on the +x axis (angle 0 here is TIGRE's
//! −π/2).

use crate::error::{Error, Result};

/// The most projections a geometry takes.
pub const MAX_PROJECTIONS: usize = 1 << 20;
/// The most detector pixels along one side, or voxels along one axis.
pub const MAX_SIDE: usize = 1 << 16;

/// A projection geometry, as ASTRA's `create_proj_geom` makes it (its `type` and field names).
#[derive(Clone, Debug, PartialEq)]
pub enum ProjectionGeometry {
    /// 2D parallel beam: `DetectorWidth`, `DetectorCount`, `ProjectionAngles`.
    Parallel { width: f64, count: usize, angles: Vec<f64> },
    /// 2D parallel beam, per projection (ray x, y, detector centre x, y, u x, y).
    ParallelVec { count: usize, vectors: Vec<[f64; 6]> },
    /// 2D fan beam on a flat detector.
    FanFlat { width: f64, count: usize, angles: Vec<f64>, source_origin: f64, origin_detector: f64 },
    /// 2D fan beam, per projection (source x, y, detector centre x, y, u x, y).
    FanFlatVec { count: usize, vectors: Vec<[f64; 6]> },
    /// 3D parallel beam: `DetectorSpacingX/Y`, `DetectorRowCount/ColCount`, `ProjectionAngles`.
    Parallel3d { spacing_x: f64, spacing_y: f64, rows: usize, cols: usize, angles: Vec<f64> },
    /// 3D parallel beam, per projection (ray, detector centre, u, v: 12 numbers).
    Parallel3dVec { rows: usize, cols: usize, vectors: Vec<[f64; 12]> },
    /// Circular cone beam on a flat detector.
    Cone { spacing_x: f64, spacing_y: f64, rows: usize, cols: usize, angles: Vec<f64>, source_origin: f64, origin_detector: f64 },
    /// Cone beam, per projection (source, detector centre, u, v: 12 numbers): helical and
    /// arbitrary trajectories.
    ConeVec { rows: usize, cols: usize, vectors: Vec<[f64; 12]> },
    /// Cone beam on a cylindrical detector (ASTRA 2.4's `cyl_cone_vec`), per projection
    /// (source, detector centre, u, v, radius: 13 numbers): u one pixel's arc at the centre
    /// (tangential), v one pixel along the cylinder's axis; the cylinder's axis at
    /// centre − R·n, n = −(u × v)/|u × v| (away from the source). The source on the axis
    /// (R = source to detector) is the equiangular fan of medical CT; one row and one slice its
    /// 2D form.
    CylConeVec { rows: usize, cols: usize, vectors: Vec<[f64; 13]> },
}

/// A volume geometry, as ASTRA's `create_vol_geom`: grid counts and the window it spans.
#[derive(Clone, Debug, PartialEq)]
pub struct VolumeGeometry {
    pub rows: usize,
    pub cols: usize,
    /// None for a 2D image.
    pub slices: Option<usize>,
    /// (min, max) of x, y and z (z unused in 2D).
    pub window: [(f64, f64); 3],
}

impl VolumeGeometry {
    /// ASTRA's default window: voxels of 1 centred on the origin.
    pub fn new(rows: usize, cols: usize, slices: Option<usize>) -> Result<VolumeGeometry> {
        let half = |n: usize| (-(n as f64) / 2.0, n as f64 / 2.0);
        VolumeGeometry::with_window(rows, cols, slices, [half(cols), half(rows), half(slices.unwrap_or(1))])
    }

    pub fn with_window(rows: usize, cols: usize, slices: Option<usize>, window: [(f64, f64); 3]) -> Result<VolumeGeometry> {
        for (n, what) in [(rows, "rows"), (cols, "columns"), (slices.unwrap_or(1), "slices")] {
            if !(1..=MAX_SIDE).contains(&n) {
                return Err(Error::Invalid(format!("a volume of {n} {what} (1 to {MAX_SIDE})")));
            }
        }
        let axes = if slices.is_some() { 3 } else { 2 };
        for (axis, &(lo, hi)) in window.iter().enumerate().take(axes) {
            if !(lo.is_finite() && hi.is_finite()) {
                return Err(Error::NonFinite(format!("the volume window's {} range ({lo}, {hi})", ["x", "y", "z"][axis])));
            }
            if hi <= lo {
                return Err(Error::Invalid(format!("the volume window's {} range ({lo}, {hi}): its maximum must exceed its minimum", ["x", "y", "z"][axis])));
            }
        }
        Ok(VolumeGeometry { rows, cols, slices, window })
    }

    /// The volume array's shape: (slices, rows, cols), or (rows, cols) in 2D.
    pub fn shape(&self) -> Vec<usize> {
        match self.slices {
            Some(s) => vec![s, self.rows, self.cols],
            None => vec![self.rows, self.cols],
        }
    }

    /// Voxel sizes along x, y, z.
    pub fn voxel(&self) -> [f64; 3] {
        let counts = [self.cols, self.rows, self.slices.unwrap_or(1)];
        std::array::from_fn(|a| (self.window[a].1 - self.window[a].0) / counts[a] as f64)
    }
}

fn check_count(n: usize, what: &str) -> Result<()> {
    if (1..=MAX_SIDE).contains(&n) {
        Ok(())
    } else {
        Err(Error::Invalid(format!("{n} detector {what} (1 to {MAX_SIDE})")))
    }
}

fn check_positive(v: f64, what: &str) -> Result<()> {
    if !v.is_finite() {
        return Err(Error::NonFinite(format!("{what} {v}")));
    }
    if v <= 0.0 {
        return Err(Error::Invalid(format!("{what} {v} (more than 0)")));
    }
    Ok(())
}

fn check_list<T>(items: &[T], what: &str, finite: impl Fn(&T) -> bool) -> Result<()> {
    if items.is_empty() || items.len() > MAX_PROJECTIONS {
        return Err(Error::Invalid(format!("{} {what} (1 to {MAX_PROJECTIONS})", items.len())));
    }
    if let Some(i) = items.iter().position(|v| !finite(v)) {
        return Err(Error::NonFinite(format!("{what} {i}: not finite")));
    }
    Ok(())
}

impl ProjectionGeometry {
    /// ASTRA's `type` name.
    pub fn kind(&self) -> &'static str {
        match self {
            ProjectionGeometry::Parallel { .. } => "parallel",
            ProjectionGeometry::ParallelVec { .. } => "parallel_vec",
            ProjectionGeometry::FanFlat { .. } => "fanflat",
            ProjectionGeometry::FanFlatVec { .. } => "fanflat_vec",
            ProjectionGeometry::Parallel3d { .. } => "parallel3d",
            ProjectionGeometry::Parallel3dVec { .. } => "parallel3d_vec",
            ProjectionGeometry::Cone { .. } => "cone",
            ProjectionGeometry::ConeVec { .. } => "cone_vec",
            ProjectionGeometry::CylConeVec { .. } => "cyl_cone_vec",
        }
    }

    pub fn is_3d(&self) -> bool {
        matches!(
            self,
            ProjectionGeometry::Parallel3d { .. }
                | ProjectionGeometry::Parallel3dVec { .. }
                | ProjectionGeometry::Cone { .. }
                | ProjectionGeometry::ConeVec { .. }
                | ProjectionGeometry::CylConeVec { .. }
        )
    }

    pub fn projections(&self) -> usize {
        match self {
            ProjectionGeometry::Parallel { angles, .. } | ProjectionGeometry::FanFlat { angles, .. } => angles.len(),
            ProjectionGeometry::Parallel3d { angles, .. } | ProjectionGeometry::Cone { angles, .. } => angles.len(),
            ProjectionGeometry::ParallelVec { vectors, .. } | ProjectionGeometry::FanFlatVec { vectors, .. } => vectors.len(),
            ProjectionGeometry::Parallel3dVec { vectors, .. } | ProjectionGeometry::ConeVec { vectors, .. } => vectors.len(),
            ProjectionGeometry::CylConeVec { vectors, .. } => vectors.len(),
        }
    }

    /// Detector (rows, cols); rows is 1 in 2D.
    pub fn detector(&self) -> (usize, usize) {
        match *self {
            ProjectionGeometry::Parallel { count, .. } | ProjectionGeometry::ParallelVec { count, .. } => (1, count),
            ProjectionGeometry::FanFlat { count, .. } | ProjectionGeometry::FanFlatVec { count, .. } => (1, count),
            ProjectionGeometry::Parallel3d { rows, cols, .. } | ProjectionGeometry::Parallel3dVec { rows, cols, .. } => (rows, cols),
            ProjectionGeometry::Cone { rows, cols, .. } | ProjectionGeometry::ConeVec { rows, cols, .. } => (rows, cols),
            ProjectionGeometry::CylConeVec { rows, cols, .. } => (rows, cols),
        }
    }

    /// The projection data's shape: (rows, angles, cols) in 3D, (angles, cols) in 2D.
    pub fn shape(&self) -> Vec<usize> {
        let (rows, cols) = self.detector();
        if self.is_3d() {
            vec![rows, self.projections(), cols]
        } else {
            vec![self.projections(), cols]
        }
    }

    /// Checks counts, spacings, distances and vectors.
    pub fn validate(&self) -> Result<()> {
        let (rows, cols) = self.detector();
        check_count(rows, "rows")?;
        check_count(cols, "columns")?;
        let finite = |a: &f64| a.is_finite();
        match self {
            ProjectionGeometry::Parallel { width, angles, .. } => {
                check_positive(*width, "the detector width")?;
                check_list(angles, "angles", finite)
            }
            ProjectionGeometry::FanFlat { width, angles, source_origin, origin_detector, .. } => {
                check_positive(*width, "the detector width")?;
                check_positive(*source_origin, "the source-origin distance")?;
                check_distance(*origin_detector)?;
                check_list(angles, "angles", finite)
            }
            ProjectionGeometry::Parallel3d { spacing_x, spacing_y, angles, .. } => {
                check_positive(*spacing_x, "the detector spacing x")?;
                check_positive(*spacing_y, "the detector spacing y")?;
                check_list(angles, "angles", finite)
            }
            ProjectionGeometry::Cone { spacing_x, spacing_y, angles, source_origin, origin_detector, .. } => {
                check_positive(*spacing_x, "the detector spacing x")?;
                check_positive(*spacing_y, "the detector spacing y")?;
                check_positive(*source_origin, "the source-origin distance")?;
                check_distance(*origin_detector)?;
                check_list(angles, "angles", finite)
            }
            ProjectionGeometry::ParallelVec { vectors, .. } | ProjectionGeometry::FanFlatVec { vectors, .. } => {
                check_list(vectors, "vector rows: row", |v| v.iter().all(|x| x.is_finite()))
            }
            ProjectionGeometry::Parallel3dVec { vectors, .. } | ProjectionGeometry::ConeVec { vectors, .. } => {
                check_list(vectors, "vector rows: row", |v| v.iter().all(|x| x.is_finite()))
            }
            ProjectionGeometry::CylConeVec { vectors, .. } => {
                check_list(vectors, "vector rows: row", |v| v.iter().all(|x| x.is_finite()))?;
                for (i, v) in vectors.iter().enumerate() {
                    check_positive(v[12], &format!("projection {i}: the detector's radius"))?;
                    let arc = (v[6] * v[6] + v[7] * v[7] + v[8] * v[8]).sqrt();
                    if arc * cols as f64 >= std::f64::consts::PI * v[12] {
                        return Err(Error::Invalid(format!("projection {i}: {cols} columns of arc {arc} span half the cylinder of radius {} or more", v[12])));
                    }
                }
                Ok(())
            }
        }
    }

    /// Whether the rays meet at a source (fan and cone beam).
    pub fn is_divergent(&self) -> bool {
        matches!(
            self,
            ProjectionGeometry::FanFlat { .. }
                | ProjectionGeometry::FanFlatVec { .. }
                | ProjectionGeometry::Cone { .. }
                | ProjectionGeometry::ConeVec { .. }
                | ProjectionGeometry::CylConeVec { .. }
        )
    }

    /// Per projection (source or ray direction, detector centre, u, v) in world coordinates,
    /// 3D; a 2D geometry in the plane z = 0 with v = (0, 0, 1) and one row.
    pub fn vectors(&self) -> Vec<[[f64; 3]; 4]> {
        let circle = |angles: &[f64], so: f64, od: f64, sx: f64, sy: f64| -> Vec<[[f64; 3]; 4]> {
            angles
                .iter()
                .map(|&t| {
                    let (s, c) = t.sin_cos();
                    [[s * so, -c * so, 0.0], [-s * od, c * od, 0.0], [c * sx, s * sx, 0.0], [0.0, 0.0, sy]]
                })
                .collect()
        };
        let flat = |v: &[f64; 6]| [[v[0], v[1], 0.0], [v[2], v[3], 0.0], [v[4], v[5], 0.0], [0.0, 0.0, 1.0]];
        let full = |v: &[f64; 12]| [[v[0], v[1], v[2]], [v[3], v[4], v[5]], [v[6], v[7], v[8]], [v[9], v[10], v[11]]];
        match self {
            ProjectionGeometry::Parallel { width, angles, .. } => circle(angles, 1.0, 0.0, *width, 1.0),
            ProjectionGeometry::FanFlat { width, angles, source_origin, origin_detector, .. } => circle(angles, *source_origin, *origin_detector, *width, 1.0),
            ProjectionGeometry::Parallel3d { spacing_x, spacing_y, angles, .. } => circle(angles, 1.0, 0.0, *spacing_x, *spacing_y),
            ProjectionGeometry::Cone { spacing_x, spacing_y, angles, source_origin, origin_detector, .. } => {
                circle(angles, *source_origin, *origin_detector, *spacing_x, *spacing_y)
            }
            ProjectionGeometry::ParallelVec { vectors, .. } | ProjectionGeometry::FanFlatVec { vectors, .. } => vectors.iter().map(flat).collect(),
            ProjectionGeometry::Parallel3dVec { vectors, .. } | ProjectionGeometry::ConeVec { vectors, .. } => vectors.iter().map(full).collect(),
            ProjectionGeometry::CylConeVec { vectors, .. } => vectors.iter().map(|v| full(v[..12].try_into().expect("twelve"))).collect(),
        }
    }

    /// A `cyl_cone_vec` detector pixel's central ray in world coordinates, as ASTRA defines
    /// it: (source, pixel − source), the pixel at centre − n R + n R cos θ + û R sin θ +
    /// (row − rows/2 + ½) v, θ = (col − cols/2 + ½) |u| / R, n = −(u × v)/(|u| |v|), û = u/|u|.
    pub fn cylinder_ray(vector: &[f64; 13], (rows, cols): (usize, usize), row: f64, col: f64) -> ([f64; 3], [f64; 3]) {
        let (s, d, u, v, radius) = (&vector[0..3], &vector[3..6], &vector[6..9], &vector[9..12], vector[12]);
        let length = |w: &[f64]| w.iter().map(|x| x * x).sum::<f64>().sqrt();
        let (lu, lv) = (length(u), length(v));
        let cross = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]];
        let n: [f64; 3] = std::array::from_fn(|k| -cross[k] / (lu * lv));
        let theta = (col - cols as f64 / 2.0 + 0.5) * lu / radius;
        let fr = row - rows as f64 / 2.0 + 0.5;
        let pixel: [f64; 3] = std::array::from_fn(|k| d[k] - n[k] * radius + n[k] * radius * theta.cos() + u[k] / lu * radius * theta.sin() + fr * v[k]);
        ([s[0], s[1], s[2]], std::array::from_fn(|k| pixel[k] - s[k]))
    }

    /// Per projection the cylindrical detector's radius (`cyl_cone_vec`), else None.
    pub fn radii(&self) -> Option<Vec<f64>> {
        match self {
            ProjectionGeometry::CylConeVec { vectors, .. } => Some(vectors.iter().map(|v| v[12]).collect()),
            _ => None,
        }
    }
}

fn check_distance(v: f64) -> Result<()> {
    if !v.is_finite() {
        return Err(Error::NonFinite(format!("the origin-detector distance {v}")));
    }
    if v < 0.0 {
        return Err(Error::Invalid(format!("the origin-detector distance {v} (0 or more)")));
    }
    Ok(())
}
