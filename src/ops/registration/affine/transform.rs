//! The transform as parameters about a centre, in 2D and 3D: q = M(θ) (p − c) + c + t, with M
//! the identity (translation), a turn (rigid: an angle in 2D, a rotation vector in 3D), a scaled
//! turn (similarity) or any matrix (affine). Points are array indices ((row, column) or
//! (plane, row, column)), fixed → moving as scipy.ndimage.affine_transform's map.

use super::TransformKind;
use crate::ops::interpolate::AffineMap;

type Matrix = Vec<Vec<f64>>;

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Params {
    pub kind: TransformKind,
    pub centre: Vec<f64>,
    /// The translation t (one per axis), then the turn, the scale or the matrix (row-major).
    pub v: Vec<f64>,
}

impl Params {
    pub fn from_map(kind: TransformKind, centre: &[f64], map: &AffineMap) -> Params {
        let d = centre.len();
        let m = &map.matrix;
        // t = offset + M c − c.
        let mut v: Vec<f64> = (0..d).map(|i| map.offset[i] + (0..d).map(|j| m[i][j] * centre[j]).sum::<f64>() - centre[i]).collect();
        let det = determinant(m);
        let scale = det.abs().powf(1.0 / d as f64);
        let turn = |s: f64| -> Vec<f64> {
            let r: Matrix = m.iter().map(|row| row.iter().map(|x| x / s).collect()).collect();
            if d == 2 {
                vec![r[1][0].atan2(r[0][0])]
            } else {
                rotation_vector(&r)
            }
        };
        match kind {
            TransformKind::Translation => {}
            TransformKind::Rigid => v.extend(turn(scale.max(1e-300))),
            TransformKind::Similarity => {
                v.extend(turn(scale.max(1e-300)));
                v.push(scale);
            }
            TransformKind::Affine => v.extend(m.iter().flatten()),
        }
        Params { kind, centre: centre.to_vec(), v }
    }

    pub fn dims(&self) -> usize {
        self.centre.len()
    }

    pub fn matrix(&self) -> Matrix {
        matrix_of(self.kind, self.dims(), &self.v)
    }

    /// The map at a level of shrink factor `f`: level indices → the moving level's.
    pub fn map_at(&self, f: f64) -> AffineMap {
        let (m, c, d) = (self.matrix(), &self.centre, self.dims());
        // q = M (f p − c) + c + t, over f: M p + (c + t − M c) / f.
        let offset = (0..d).map(|i| (c[i] + self.v[i] - (0..d).map(|j| m[i][j] * c[j]).sum::<f64>()) / f).collect();
        AffineMap { matrix: m, offset }
    }

    /// ∂M/∂v for each parameter past the translation (central differences for turns: exact
    /// enough, 1e-10, for gradients, and one rule for 2D angles and 3D rotation vectors).
    pub fn matrix_derivatives(&self) -> Vec<Matrix> {
        let d = self.dims();
        (d..self.v.len())
            .map(|k| {
                if self.kind == TransformKind::Affine {
                    let mut e = vec![vec![0.0; d]; d];
                    e[(k - d) / d][(k - d) % d] = 1.0;
                    return e;
                }
                let h = 1e-6;
                let (mut a, mut b) = (self.v.clone(), self.v.clone());
                a[k] += h;
                b[k] -= h;
                let (ma, mb) = (matrix_of(self.kind, d, &a), matrix_of(self.kind, d, &b));
                (0..d).map(|i| (0..d).map(|j| (ma[i][j] - mb[i][j]) / (2.0 * h)).collect()).collect()
            })
            .collect()
    }

    /// Each parameter's change that moves a point of the image by about one pixel (of the full
    /// image): 1 for translations, 1 / radius for turns, scales and matrix entries. Gradient
    /// methods step in these units so that one step length suits every parameter.
    pub fn scales(&self, radius: f64) -> Vec<f64> {
        (0..self.v.len()).map(|k| if k < self.dims() { 1.0 } else { 1.0 / radius.max(1.0) }).collect()
    }
}

#[cfg(test)]
/// ∂q/∂v at the level point `p` (level units, q too) for a level of shrink factor `f`, given
/// [`Params::matrix_derivatives`]: row k is ∂q/∂v_k.
pub(super) fn jacobian(p: &[f64], centre: &[f64], f: f64, derivatives: &[Matrix], out: &mut [Vec<f64>]) {
    let d = p.len();
    for (k, row) in out.iter_mut().enumerate().take(d) {
        row.iter_mut().enumerate().for_each(|(i, x)| *x = if i == k { 1.0 / f } else { 0.0 });
    }
    for (k, dm) in derivatives.iter().enumerate() {
        for i in 0..d {
            out[d + k][i] = (0..d).map(|j| dm[i][j] * (p[j] - centre[j] / f)).sum();
        }
    }
}

fn matrix_of(kind: TransformKind, d: usize, v: &[f64]) -> Matrix {
    let turn = |r: &[f64]| -> Matrix {
        if d == 2 {
            let (sin, cos) = r[0].sin_cos();
            vec![vec![cos, -sin], vec![sin, cos]]
        } else {
            rotation(r)
        }
    };
    let nt = if d == 2 { 1 } else { 3 };
    match kind {
        TransformKind::Translation => (0..d).map(|i| (0..d).map(|j| f64::from(u8::from(i == j))).collect()).collect(),
        TransformKind::Rigid => turn(&v[d..d + nt]),
        TransformKind::Similarity => turn(&v[d..d + nt]).into_iter().map(|row| row.into_iter().map(|x| x * v[d + nt]).collect()).collect(),
        TransformKind::Affine => (0..d).map(|i| v[d + i * d..d + (i + 1) * d].to_vec()).collect(),
    }
}

/// exp([r]×): Rodrigues' formula, its series near the identity.
fn rotation(r: &[f64]) -> Matrix {
    let theta = (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]).sqrt();
    let k = [[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]];
    let k2 = |i: usize, j: usize| (0..3).map(|l| k[i][l] * k[l][j]).sum::<f64>();
    let (a, b) =
        if theta < 1e-5 { (1.0 - theta * theta / 6.0, 0.5 - theta * theta / 24.0) } else { (theta.sin() / theta, (1.0 - theta.cos()) / (theta * theta)) };
    (0..3).map(|i| (0..3).map(|j| f64::from(u8::from(i == j)) + a * k[i][j] + b * k2(i, j)).collect()).collect()
}

/// The rotation vector of a rotation matrix (log map); near a half turn the axis from R + I.
fn rotation_vector(r: &Matrix) -> Vec<f64> {
    let vee = [r[2][1] - r[1][2], r[0][2] - r[2][0], r[1][0] - r[0][1]];
    // atan2, not acos: acos loses half the digits near a half turn.
    let sin = (vee[0] * vee[0] + vee[1] * vee[1] + vee[2] * vee[2]).sqrt() / 2.0;
    let theta = sin.atan2((r[0][0] + r[1][1] + r[2][2] - 1.0) / 2.0);
    if theta < 1e-8 {
        return vee.iter().map(|x| x / 2.0).collect();
    }
    if theta.sin() > 1e-6 {
        let k = theta / (2.0 * theta.sin());
        return vee.iter().map(|x| x * k).collect();
    }
    // A half turn: R + I = 2 a aᵀ; the axis from its largest column, its sign free.
    let i = (0..3).max_by(|&a, &b| r[a][a].total_cmp(&r[b][b])).unwrap_or(0);
    let col: Vec<f64> = (0..3).map(|j| r[j][i] + f64::from(u8::from(i == j))).collect();
    let n = col.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-300);
    col.iter().map(|x| x / n * theta).collect()
}

fn determinant(m: &Matrix) -> f64 {
    match m.len() {
        2 => m[0][0] * m[1][1] - m[0][1] * m[1][0],
        _ => {
            m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
                + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &Matrix, b: &Matrix, tol: f64) -> bool {
        a.iter().flatten().zip(b.iter().flatten()).all(|(x, y)| (x - y).abs() < tol)
    }

    #[test]
    fn maps_round_trip_through_parameters() {
        let r = rotation(&[0.3, -0.7, 1.1]);
        let s = 1.3;
        let m: Matrix = r.iter().map(|row| row.iter().map(|x| x * s).collect()).collect();
        let map = AffineMap { matrix: m.clone(), offset: vec![2.0, -3.5, 0.25] };
        let c = [10.0, 20.0, 30.0];
        for kind in [TransformKind::Similarity, TransformKind::Affine] {
            let p = Params::from_map(kind, &c, &map);
            let back = p.map_at(1.0);
            assert!(close(&back.matrix, &m, 1e-12), "{kind:?}");
            assert!(back.offset.iter().zip(&map.offset).all(|(a, b)| (a - b).abs() < 1e-9), "{kind:?}");
        }
        let rigid = Params::from_map(TransformKind::Rigid, &c, &AffineMap { matrix: r.clone(), offset: vec![0.0; 3] });
        assert!(close(&rigid.matrix(), &r, 1e-12));
        // A half turn about an oblique axis.
        let half = rotation(&[0.0, std::f64::consts::PI * 0.6, std::f64::consts::PI * 0.8]);
        let back = rotation(&rotation_vector(&half));
        assert!(close(&back, &half, 1e-9), "{half:?} {back:?} {:?}", rotation_vector(&half));
    }

    #[test]
    fn matrix_derivatives_match_a_rotation_generator() {
        // At the identity, ∂R/∂r_k is the generator [e_k]×.
        let p = Params { kind: TransformKind::Rigid, centre: vec![0.0; 3], v: vec![0.0; 6] };
        let d = p.matrix_derivatives();
        assert!(close(&d[0], &vec![vec![0.0, 0.0, 0.0], vec![0.0, 0.0, -1.0], vec![0.0, 1.0, 0.0]], 1e-9));
        assert!(close(&d[2], &vec![vec![0.0, -1.0, 0.0], vec![1.0, 0.0, 0.0], vec![0.0, 0.0, 0.0]], 1e-9));
    }
}
