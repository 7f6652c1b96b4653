//! ASTRA's geometry dicts as JSON (what `json.dump(astra.create_proj_geom(...))` writes, numpy
//! arrays as lists): a projection geometry named by its `type` with ASTRA's field names, and a
//! volume geometry (`GridRowCount`, `GridColCount`, optional `GridSliceCount`, optional
//! `option` window `WindowMinX` … `WindowMaxZ`).

use std::path::Path;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::ops::tomography::vector::{ProjectionGeometry, VolumeGeometry};

fn field<'a>(v: &'a Value, name: &str, kind: &str) -> Result<&'a Value> {
    v.get(name).ok_or_else(|| Error::Invalid(format!("the {kind} geometry has no '{name}'")))
}

fn number(v: &Value, name: &str, kind: &str) -> Result<f64> {
    field(v, name, kind)?.as_f64().ok_or_else(|| Error::Invalid(format!("the {kind} geometry's '{name}' is not a number")))
}

fn count(v: &Value, name: &str, kind: &str) -> Result<usize> {
    let x = number(v, name, kind)?;
    if x.fract() != 0.0 || !(1.0..=(1u64 << 32) as f64).contains(&x) {
        return Err(Error::Invalid(format!("the {kind} geometry's '{name}' of {x} (a count of 1 or more)")));
    }
    Ok(x as usize)
}

fn numbers(v: &Value, name: &str, kind: &str) -> Result<Vec<f64>> {
    let list = field(v, name, kind)?;
    // One angle may be written as a bare number.
    if let Some(x) = list.as_f64() {
        return Ok(vec![x]);
    }
    let items = list.as_array().ok_or_else(|| Error::Invalid(format!("the {kind} geometry's '{name}' is not a list")))?;
    items.iter().map(|x| x.as_f64().ok_or_else(|| Error::Invalid(format!("the {kind} geometry's '{name}' holds {x}, not a number")))).collect()
}

fn vectors<const N: usize>(v: &Value, kind: &str) -> Result<Vec<[f64; N]>> {
    let rows = field(v, "Vectors", kind)?.as_array().ok_or_else(|| Error::Invalid(format!("the {kind} geometry's 'Vectors' is not a list of rows")))?;
    // One projection's row may be written flat.
    let rows: Vec<&Value> = if rows.first().is_some_and(Value::is_number) { vec![field(v, "Vectors", kind)?] } else { rows.iter().collect() };
    rows.iter()
        .enumerate()
        .map(|(i, row)| {
            let values = row.as_array().ok_or_else(|| Error::Invalid(format!("the {kind} geometry's 'Vectors' row {i} is not a list")))?;
            if values.len() != N {
                return Err(Error::Invalid(format!("the {kind} geometry's 'Vectors' row {i} has {} numbers, not {N}", values.len())));
            }
            let mut out = [0.0; N];
            for (o, x) in out.iter_mut().zip(values) {
                *o = x.as_f64().ok_or_else(|| Error::Invalid(format!("the {kind} geometry's 'Vectors' row {i} holds {x}, not a number")))?;
            }
            Ok(out)
        })
        .collect()
}

/// A projection geometry from ASTRA's dict.
pub fn projection_geometry(v: &Value) -> Result<ProjectionGeometry> {
    let kind = field(v, "type", "projection")?.as_str().ok_or_else(|| Error::Invalid("the projection geometry's 'type' is not a string".into()))?;
    let g = match kind {
        "parallel" => ProjectionGeometry::Parallel {
            width: number(v, "DetectorWidth", kind)?,
            count: count(v, "DetectorCount", kind)?,
            angles: numbers(v, "ProjectionAngles", kind)?,
        },
        "parallel_vec" => ProjectionGeometry::ParallelVec { count: count(v, "DetectorCount", kind)?, vectors: vectors::<6>(v, kind)? },
        "fanflat" => ProjectionGeometry::FanFlat {
            width: number(v, "DetectorWidth", kind)?,
            count: count(v, "DetectorCount", kind)?,
            angles: numbers(v, "ProjectionAngles", kind)?,
            source_origin: number(v, "DistanceOriginSource", kind)?,
            origin_detector: number(v, "DistanceOriginDetector", kind)?,
        },
        "fanflat_vec" => ProjectionGeometry::FanFlatVec { count: count(v, "DetectorCount", kind)?, vectors: vectors::<6>(v, kind)? },
        "parallel3d" => ProjectionGeometry::Parallel3d {
            spacing_x: number(v, "DetectorSpacingX", kind)?,
            spacing_y: number(v, "DetectorSpacingY", kind)?,
            rows: count(v, "DetectorRowCount", kind)?,
            cols: count(v, "DetectorColCount", kind)?,
            angles: numbers(v, "ProjectionAngles", kind)?,
        },
        "parallel3d_vec" => ProjectionGeometry::Parallel3dVec {
            rows: count(v, "DetectorRowCount", kind)?,
            cols: count(v, "DetectorColCount", kind)?,
            vectors: vectors::<12>(v, kind)?,
        },
        "cone" => ProjectionGeometry::Cone {
            spacing_x: number(v, "DetectorSpacingX", kind)?,
            spacing_y: number(v, "DetectorSpacingY", kind)?,
            rows: count(v, "DetectorRowCount", kind)?,
            cols: count(v, "DetectorColCount", kind)?,
            angles: numbers(v, "ProjectionAngles", kind)?,
            source_origin: number(v, "DistanceOriginSource", kind)?,
            origin_detector: number(v, "DistanceOriginDetector", kind)?,
        },
        "cone_vec" => ProjectionGeometry::ConeVec {
            rows: count(v, "DetectorRowCount", kind)?,
            cols: count(v, "DetectorColCount", kind)?,
            vectors: vectors::<12>(v, kind)?,
        },
        "cyl_cone_vec" => ProjectionGeometry::CylConeVec {
            rows: count(v, "DetectorRowCount", kind)?,
            cols: count(v, "DetectorColCount", kind)?,
            vectors: vectors::<13>(v, kind)?,
        },
        other => {
            return Err(Error::Invalid(format!(
                "projection geometry type '{other}' (one of parallel, parallel_vec, fanflat, fanflat_vec, parallel3d, parallel3d_vec, cone, cone_vec, cyl_cone_vec)"
            )))
        }
    };
    g.validate()?;
    Ok(g)
}

/// A volume geometry from ASTRA's dict.
pub fn volume_geometry(v: &Value) -> Result<VolumeGeometry> {
    let (rows, cols) = (count(v, "GridRowCount", "volume")?, count(v, "GridColCount", "volume")?);
    let slices = v.get("GridSliceCount").map(|_| count(v, "GridSliceCount", "volume")).transpose()?;
    let default = VolumeGeometry::new(rows, cols, slices)?;
    let Some(option) = v.get("option") else { return Ok(default) };
    let mut window = default.window;
    for (axis, name) in ["X", "Y", "Z"].iter().enumerate() {
        for (end, which) in ["Min", "Max"].iter().enumerate() {
            let key = format!("Window{which}{name}");
            if let Some(x) = option.get(&key) {
                let x = x.as_f64().ok_or_else(|| Error::Invalid(format!("the volume geometry's '{key}' is not a number")))?;
                if end == 0 {
                    window[axis].0 = x;
                } else {
                    window[axis].1 = x;
                }
            }
        }
    }
    VolumeGeometry::with_window(rows, cols, slices, window)
}

/// Reads a JSON file (at most 256 MiB: per-projection vectors of millions of views).
pub fn read_json(path: &Path) -> Result<Value> {
    let bytes = std::fs::metadata(path).map_err(|e| crate::host::file_error(path, e.to_string()))?.len();
    if bytes > 256 << 20 {
        return Err(crate::host::file_error(path, format!("a geometry file of {bytes} bytes (at most 256 MiB)")));
    }
    let text = std::fs::read_to_string(path).map_err(|e| crate::host::file_error(path, e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| crate::host::file_error(path, format!("not JSON ({e})")))
}
