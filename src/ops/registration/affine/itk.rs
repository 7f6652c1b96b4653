//! The map as an ITK transform file ("#Insight Transform File V1.0", what SimpleITK's
//! WriteTransform writes and ReadTransform reads): an AffineTransform over ITK's physical points
//! (x, y[, z]), the array indices reversed, for an image of unit spacing at the origin.

use crate::error::{Error, Result};
use crate::ops::interpolate::AffineMap;

/// The map (fixed indices → moving indices, 2D or 3D) as the text of an ITK transform file.
pub fn itk_transform(map: &AffineMap) -> String {
    let d = map.offset.len();
    let reversed = |i: usize| d - 1 - i;
    let matrix: Vec<String> = (0..d).flat_map(|i| (0..d).map(move |j| (i, j))).map(|(i, j)| format!("{}", map.matrix[reversed(i)][reversed(j)])).collect();
    let translation: Vec<String> = (0..d).map(|i| format!("{}", map.offset[reversed(i)])).collect();
    format!(
        "#Insight Transform File V1.0\n#Transform 0\nTransform: AffineTransform_double_{d}_{d}\nParameters: {} {}\nFixedParameters: {}\n",
        matrix.join(" "),
        translation.join(" "),
        vec!["0"; d].join(" ")
    )
}

/// The map of an ITK transform file holding one AffineTransform (or MatrixOffsetTransformBase)
/// of 2 or 3 dimensions, its centre taken into account: the inverse of [`itk_transform`].
pub fn parse_itk_transform(text: &str) -> Result<AffineMap> {
    let field = |name: &str| text.lines().find_map(|l| l.trim().strip_prefix(name).map(|rest| rest.trim().to_string()));
    let kind = field("Transform:").ok_or_else(|| Error::Invalid("an ITK transform file: no \"Transform:\" line".into()))?;
    let d = match kind.as_str() {
        "AffineTransform_double_2_2" | "MatrixOffsetTransformBase_double_2_2" => 2,
        "AffineTransform_double_3_3" | "MatrixOffsetTransformBase_double_3_3" => 3,
        other => {
            return Err(Error::Invalid(format!("an ITK transform file of {other}: lucent reads 2D and 3D AffineTransforms (write the transform as affine)")))
        }
    };
    let numbers = |name: &str, n: usize| -> Result<Vec<f64>> {
        let line = field(name).ok_or_else(|| Error::Invalid(format!("an ITK transform file: no \"{name}\" line")))?;
        let v: Vec<f64> = line
            .split_whitespace()
            .map(|w| w.parse::<f64>())
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| Error::Invalid(format!("an ITK transform file's {name} {e}")))?;
        if v.len() != n || v.iter().any(|x| !x.is_finite()) {
            return Err(Error::Invalid(format!("an ITK transform file's {name} holds {} finite numbers for a {d}D affine transform, not {line:?}", n)));
        }
        Ok(v)
    };
    let p = numbers("Parameters:", d * d + d)?;
    let c = numbers("FixedParameters:", d)?;
    // ITK: T(x) = A (x − c) + c + t, over points (x, y[, z]); indices are those reversed.
    let a = |i: usize, j: usize| p[(d - 1 - i) * d + (d - 1 - j)];
    let (t, c) = (|i: usize| p[d * d + d - 1 - i], |i: usize| c[d - 1 - i]);
    Ok(AffineMap {
        matrix: (0..d).map(|i| (0..d).map(|j| a(i, j)).collect()).collect(),
        offset: (0..d).map(|i| t(i) + c(i) - (0..d).map(|j| a(i, j) * c(j)).sum::<f64>()).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transform_files_round_trip_and_take_their_centre() {
        let map = AffineMap { matrix: vec![vec![1.1, 0.2, 0.0], vec![-0.1, 0.9, 0.05], vec![0.0, 0.3, 1.0]], offset: vec![1.5, -2.0, 3.25] };
        let text = itk_transform(&map);
        assert!(text.contains("AffineTransform_double_3_3") && text.contains("Parameters: 1 0.3 0 0.05 0.9 -0.1 0 0.2 1.1 3.25 -2 1.5"), "{text}");
        assert_eq!(parse_itk_transform(&text).unwrap(), map);
        // A 2D transform about a centre (as SimpleITK writes one registered about the image's centre).
        let centred = "#Insight Transform File V1.0\n#Transform 0\nTransform: AffineTransform_double_2_2\nParameters: 1 0 0 2 5 7\nFixedParameters: 10 20\n";
        // x' = x + 5, y' = 2 (y − 20) + 20 + 7 = 2 y − 13: rows (y) then columns (x).
        assert_eq!(parse_itk_transform(centred).unwrap(), AffineMap { matrix: vec![vec![2.0, 0.0], vec![0.0, 1.0]], offset: vec![-13.0, 5.0] });
        for bad in
            ["Transform: Euler2DTransform_double_2_2\n", "Transform: AffineTransform_double_2_2\nParameters: 1 0 0 1 0\nFixedParameters: 0 0\n", "nothing"]
        {
            assert!(parse_itk_transform(bad).is_err(), "{bad}");
        }
    }
}
