//! FDK (Feldkamp, Davis and Kress 1984) for the circular cone beam, and fan-beam FBP (its one-row
//! case), as Kak and Slaney's eq. 3.196: each projection weighed by the cosine of its rays'
//! angle to the central ray, filtered along its rows (the ramp on the detector scaled to the
//! origin), and back-projected with the weight (λ₀ / λ)²; over a full turn each ray counts
//! half, over a short scan (π plus the fan angle, or more) Parker's weights share each ray with
//! its conjugate (Parker 1982, for scans beyond the minimum as Wesarg et al. 2002). Parallel
//! geometries (`parallel`, `parallel3d`) get plain FBP the same way: the source at infinity,
//! no cosine factor, λ = 1.

use ndarray::Array2;

use super::ProjectionGeometry;
use crate::error::{Error, Result};

/// The circular geometry's parameters.
struct Circle<'a> {
    angles: std::borrow::Cow<'a, [f64]>,
    rows: usize,
    cols: usize,
    spacing: (f64, f64),
    source_origin: f64,
    origin_detector: f64,
    /// The detector's centre above the source (a `cone_vec`'s vertical shift).
    z_shift: f64,
}

/// A `cone_vec` that is a circular cone (as ASTRA's FDK_CUDA takes them): sources on a circle
/// about the z axis at one height, the detector opposite at one distance and height, u in the
/// xy plane along the orbit, v along z, each vector as `geom_2vec` writes it; the angles
/// unwrapped.
fn circular(vectors: &[[f64; 12]], rows: usize, cols: usize) -> Result<Circle<'static>> {
    let first = &vectors[0];
    let (so, od) = (first[0].hypot(first[1]), first[3].hypot(first[4]));
    let (su, sv) = ((first[6] * first[6] + first[7] * first[7] + first[8] * first[8]).sqrt(), first[11].abs());
    let (zs, zd) = (first[2], first[5]);
    let scale = so.max(od).max(su).max(sv);
    let mut angles: Vec<f64> = Vec::with_capacity(vectors.len());
    for (i, v) in vectors.iter().enumerate() {
        let t = v[0].atan2(-v[1]);
        let (sin, cos) = t.sin_cos();
        let want = [sin * so, -cos * so, zs, -sin * od, cos * od, zd, cos * su, sin * su, 0.0, 0.0, 0.0, sv];
        if so == 0.0 || v.iter().zip(&want).any(|(a, b)| (a - b).abs() > 1e-6 * scale) {
            return Err(Error::Invalid(format!(
                "FDK takes a cone_vec that is a circular cone (as ASTRA's FDK_CUDA): projection {i}'s vectors leave the circle of the first's (source distance {so}, detector distance {od}, heights {zs} and {zd})"
            )));
        }
        // Unwrapped: each angle within half a turn of the last.
        let t = match angles.last() {
            Some(&last) => t + (std::f64::consts::TAU * ((last - t) / std::f64::consts::TAU).round()),
            None => t,
        };
        angles.push(t);
    }
    Ok(Circle { angles: angles.into(), rows, cols, spacing: (su, sv), source_origin: so, origin_detector: od, z_shift: zd - zs })
}

fn circle(g: &ProjectionGeometry) -> Result<Circle<'_>> {
    match g {
        ProjectionGeometry::Cone { spacing_x, spacing_y, rows, cols, angles, source_origin, origin_detector } => Ok(Circle {
            angles: angles.into(),
            rows: *rows,
            cols: *cols,
            spacing: (*spacing_x, *spacing_y),
            source_origin: *source_origin,
            origin_detector: *origin_detector,
            z_shift: 0.0,
        }),
        ProjectionGeometry::ConeVec { rows, cols, vectors } => circular(vectors, *rows, *cols),
        ProjectionGeometry::FanFlat { width, count, angles, source_origin, origin_detector } => Ok(Circle {
            angles: angles.into(),
            rows: 1,
            cols: *count,
            spacing: (*width, 1.0),
            source_origin: *source_origin,
            origin_detector: *origin_detector,
            z_shift: 0.0,
        }),
        // Parallel beam: the source at infinity (FBP).
        ProjectionGeometry::Parallel3d { spacing_x, spacing_y, rows, cols, angles } => Ok(Circle {
            angles: angles.into(),
            rows: *rows,
            cols: *cols,
            spacing: (*spacing_x, *spacing_y),
            source_origin: f64::INFINITY,
            origin_detector: 0.0,
            z_shift: 0.0,
        }),
        ProjectionGeometry::Parallel { width, count, angles } => Ok(Circle {
            angles: angles.into(),
            rows: 1,
            cols: *count,
            spacing: (*width, 1.0),
            source_origin: f64::INFINITY,
            origin_detector: 0.0,
            z_shift: 0.0,
        }),
        other => Err(Error::Invalid(format!(
            "FDK takes a circular cone (cone, or a circular cone_vec) or fan (fanflat) geometry, FBP a parallel one (parallel, parallel3d), not {}",
            other.kind()
        ))),
    }
}

/// FDK's weights: per detector pixel (rows, cols) the cosine factor, and per projection and
/// column (angles, cols) the angular step, Parker's weight (½ on a full turn) and the filter's
/// scale, 1 / (2 × the column spacing at the origin) (the filters' response is twice the ramp,
/// scikit-image's). Their product, times the filtered projections back-projected with (λ₀/λ)²,
/// is the reconstruction.
pub fn weights(g: &ProjectionGeometry) -> Result<(Array2<f64>, Array2<f64>)> {
    g.validate()?;
    let c = circle(g)?;
    let count = c.angles.len();
    if count < 2 {
        return Err(Error::Invalid("FDK needs 2 or more projections".into()));
    }
    let distance = c.source_origin + c.origin_detector;
    let (first, last) = (c.angles[0], c.angles[count - 1]);
    let span = (last - first).abs();
    let direction = if last >= first { 1.0 } else { -1.0 };
    let step = span / (count - 1) as f64;
    if step.is_nan() || step <= 0.0 || c.angles.windows(2).any(|w| (w[1] - w[0]) * direction <= 0.0) {
        return Err(Error::Invalid("FDK takes angles that increase (or decrease) steadily".into()));
    }
    let column = |k: usize| (k as f64 - (c.cols as f64 - 1.0) / 2.0) * c.spacing.0;
    let row = |k: usize| (k as f64 - (c.rows as f64 - 1.0) / 2.0) * c.spacing.1 + c.z_shift;
    if c.source_origin.is_infinite() {
        return parallel(&c, span, step);
    }
    let cosine = Array2::from_shape_fn((c.rows, c.cols), |(r, k)| distance / (distance * distance + column(k).powi(2) + row(r).powi(2)).sqrt());
    // The filter's scale: the column spacing on the virtual detector through the origin.
    let filter = 1.0 / (2.0 * c.spacing.0 * c.source_origin / distance);
    let full = span + step >= 2.0 * std::f64::consts::PI * (1.0 - 1e-6);
    let fan = column(0).abs().max(column(c.cols - 1).abs()).atan2(distance);
    let delta = (span - std::f64::consts::PI) / 2.0;
    if !full && delta < fan * (1.0 - 1e-6) {
        return Err(Error::Invalid(format!(
            "a scan of {:.2}° covers less than 180° plus the fan angle ({:.2}°): FDK needs a full turn or a short scan of at least {:.2}°",
            span.to_degrees(),
            (2.0 * fan).to_degrees(),
            (std::f64::consts::PI + 2.0 * fan).to_degrees()
        )));
    }
    let per = Array2::from_shape_fn((count, c.cols), |(a, k)| {
        let w = if full {
            0.5
        } else {
            // γ positive against the columns' direction when the source turns
            // counter-clockwise: the conjugate of ray (β, γ) is (β + π + 2γ, −γ).
            let gamma = -direction * column(k).atan2(distance);
            parker((c.angles[a] - first) * direction, gamma, delta)
        };
        step * w * filter
    });
    Ok((cosine, per))
}

/// Parallel-beam FBP's weights: no cosine factor, and per view the angular step over a half turn
/// (half of it over a full turn), over twice the column spacing.
fn parallel(c: &Circle, span: f64, step: f64) -> Result<(Array2<f64>, Array2<f64>)> {
    let pi = std::f64::consts::PI;
    let turns = (span + step) / pi;
    let share = if (turns - 1.0).abs() < 1e-6 {
        1.0
    } else if (turns - 2.0).abs() < 1e-6 {
        0.5
    } else {
        return Err(Error::Invalid(format!(
            "parallel-beam FBP takes equally spaced views over a half turn [0, π) or a full turn [0, 2π), not {:.2}° in {} views",
            span.to_degrees(),
            c.angles.len()
        )));
    };
    let per = Array2::from_elem((c.angles.len(), c.cols), step * share / (2.0 * c.spacing.0));
    Ok((Array2::ones((c.rows, c.cols)), per))
}

/// Parker's weight of the ray at scan angle β ∈ [0, π + 2δ] and fan angle γ (|γ| ≤ δ).
fn parker(beta: f64, gamma: f64, delta: f64) -> f64 {
    let quarter = std::f64::consts::FRAC_PI_4;
    let end = std::f64::consts::PI + 2.0 * delta;
    if beta < 2.0 * (delta - gamma) {
        (quarter * beta / (delta - gamma)).sin().powi(2)
    } else if beta <= std::f64::consts::PI - 2.0 * gamma {
        1.0
    } else if beta <= end {
        (quarter * (end - beta) / (delta + gamma)).sin().powi(2)
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each ray and its conjugate (β + π + 2γ, −γ) weigh 1 together.
    #[test]
    fn parker_weights_share_each_ray() {
        let delta = 0.3;
        for i in 0..50 {
            let gamma = -0.25 + 0.5 * (i as f64 / 49.0);
            for j in 0..40 {
                let beta = (std::f64::consts::PI - 2.0 * gamma) * j as f64 / 40.0;
                let conjugate = beta + std::f64::consts::PI + 2.0 * gamma;
                let sum = parker(beta, gamma, delta) + parker(conjugate, -gamma, delta);
                assert!((sum - 1.0).abs() < 1e-12, "β {beta} γ {gamma}: {sum}");
            }
        }
    }
}
