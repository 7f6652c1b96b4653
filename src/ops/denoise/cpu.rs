//! The f64 reference of the adaptive filter's structure estimate, over the last `d` axes of an
//! array (the leading ones, if any, are batches): monomial filter responses through FFTs, the
//! structure tensor, normalised convolution and symmetric eigen-decompositions.

use ndarray::{ArrayD, Axis, IxDyn};
use num_complex::Complex64;

use super::{dual_tensors, reconstruction_directions, tensor_components, Lognormal};
use crate::fft::{cpu::c2c, Norm};

/// The angular frequency of FFT bin k of n: 2πk/n folded into [−π, π).
fn frequency(k: usize, n: usize) -> f64 {
    let k = if 2 * k >= n { k as f64 - n as f64 } else { k as f64 };
    2.0 * std::f64::consts::PI * k / n as f64
}

/// A real array's spectrum over its last d axes, filtered by frequency responses.
struct Spectrum {
    values: ArrayD<Complex64>,
    axes: Vec<usize>,
}

impl Spectrum {
    fn new(x: &ArrayD<f64>, d: usize) -> Spectrum {
        let axes: Vec<usize> = (x.ndim() - d..x.ndim()).collect();
        Spectrum { values: c2c(&x.mapv(|v| Complex64::new(v, 0.0)), &axes, false, Norm::Backward), axes }
    }

    /// The array filtered by `h(u)` (u the angular frequency along the d axes; h Hermitian, so
    /// the result is real: its real part is returned).
    fn filtered(&self, h: &dyn Fn(&[f64]) -> Complex64) -> ArrayD<f64> {
        let dims = self.values.shape().to_vec();
        let mut y = self.values.clone();
        for (index, v) in y.indexed_iter_mut() {
            let u: Vec<f64> = self.axes.iter().map(|&a| frequency(index[a], dims[a])).collect();
            *v *= h(&u);
        }
        c2c(&y, &self.axes, true, Norm::Backward).mapv(|v| v.re)
    }
}

/// The responses of `x` to the first-order (odd) monomial filters i R(ρ) û_i, d of them, and
/// the second-order (even) ones R(ρ) û_i û_j, i ≤ j in [`tensor_components`]' order; û = u/|u|,
/// the frequency u over the last d axes, the filters applied by circular convolution.
pub fn monomial_responses(x: &ArrayD<f64>, d: usize, filter: &Lognormal) -> (Vec<ArrayD<f64>>, Vec<ArrayD<f64>>) {
    let spectrum = Spectrum::new(x, d);
    let filtered = |h: &dyn Fn(&[f64]) -> Complex64| spectrum.filtered(h);
    let radial = |u: &[f64]| {
        let rho = u.iter().map(|v| v * v).sum::<f64>().sqrt();
        (rho, filter.radial(rho))
    };
    let odd = (0..d)
        .map(|i| filtered(&|u| {
            let (rho, r) = radial(u);
            if rho == 0.0 { Complex64::new(0.0, 0.0) } else { Complex64::new(0.0, r * u[i] / rho) }
        }))
        .collect();
    let even = tensor_components(d)
        .into_iter()
        .map(|(i, j)| filtered(&|u| {
            let (rho, r) = radial(u);
            if rho == 0.0 { Complex64::new(0.0, 0.0) } else { Complex64::new(r * u[i] * u[j] / (rho * rho), 0.0) }
        }))
        .collect();
    (odd, even)
}

/// The structure tensor T = q qᵀ + Q Qᵀ from the odd responses q and the even ones Q (a
/// symmetric matrix per sample): its components in [`tensor_components`]' order. For a simple
/// signal cos(u·x + φ) it is R(|u|)² ûûᵀ whatever the phase φ.
pub fn structure_tensor(odd: &[ArrayD<f64>], even: &[ArrayD<f64>], d: usize) -> Vec<ArrayD<f64>> {
    let pairs = tensor_components(d);
    let at = |i: usize, j: usize| pairs.iter().position(|&p| p == (i.min(j), i.max(j))).expect("a component");
    pairs
        .iter()
        .map(|&(i, j)| {
            let mut t = &odd[i] * &odd[j];
            for k in 0..d {
                t = t + &even[at(i, k)] * &even[at(k, j)];
            }
            t
        })
        .collect()
}

/// Normalised convolution of `x` with a Gaussian of `sigma` samples along each of the last d
/// axes (truncated at 3σ), certainty 1 inside the array and 0 outside: at the borders the sum
/// is over the taps inside, divided by their weight.
pub fn normalized_lowpass(x: &ArrayD<f64>, d: usize, sigma: f64) -> ArrayD<f64> {
    let reach = (3.0 * sigma).ceil() as i64;
    let taps: Vec<f64> = (-reach..=reach).map(|k| (-((k * k) as f64) / (2.0 * sigma * sigma)).exp()).collect();
    let rank = x.ndim();
    let mut y = x.clone();
    for axis in rank - d..rank {
        let n = y.shape()[axis] as i64;
        let mut out = y.clone();
        for (src, mut dst) in y.lanes(Axis(axis)).into_iter().zip(out.lanes_mut(Axis(axis))) {
            for i in 0..n {
                let (mut sum, mut weight) = (0.0, 0.0);
                for (t, w) in (-reach..=reach).zip(&taps) {
                    let j = i + t;
                    if (0..n).contains(&j) {
                        sum += w * src[j as usize];
                        weight += w;
                    }
                }
                dst[i as usize] = sum / weight;
            }
        }
        y = out;
    }
    y
}

/// The eigenvalues (descending) and unit eigenvectors (columns) of the symmetric d×d matrix
/// `a` (d ≤ 4), by cyclic Jacobi rotations until the off-diagonal part is below 1e-15 of the
/// matrix's norm.
pub fn symmetric_eigen(a: &[[f64; 4]; 4], d: usize) -> ([f64; 4], [[f64; 4]; 4]) {
    let mut m = *a;
    let mut v = [[0.0; 4]; 4];
    for (i, row) in v.iter_mut().enumerate() {
        row[i] = 1.0;
    }
    let norm: f64 = (0..d).flat_map(|i| (0..d).map(move |j| (i, j))).map(|(i, j)| m[i][j] * m[i][j]).sum::<f64>().sqrt();
    for _ in 0..64 {
        let off: f64 = (0..d).flat_map(|i| (0..d).map(move |j| (i, j))).filter(|(i, j)| i != j).map(|(i, j)| m[i][j] * m[i][j]).sum::<f64>().sqrt();
        if off <= 1e-15 * norm.max(f64::MIN_POSITIVE) {
            break;
        }
        for p in 0..d {
            for q in p + 1..d {
                if m[p][q] == 0.0 {
                    continue;
                }
                // The rotation that zeroes m[p][q] (Golub and Van Loan, 8.4).
                let tau = (m[q][q] - m[p][p]) / (2.0 * m[p][q]);
                let t = tau.signum() / (tau.abs() + (1.0 + tau * tau).sqrt());
                let t = if tau == 0.0 { 1.0 } else { t };
                let c = 1.0 / (1.0 + t * t).sqrt();
                let s = t * c;
                for k in 0..d {
                    let (mkp, mkq) = (m[k][p], m[k][q]);
                    m[k][p] = c * mkp - s * mkq;
                    m[k][q] = s * mkp + c * mkq;
                }
                for k in 0..d {
                    let (mpk, mqk) = (m[p][k], m[q][k]);
                    m[p][k] = c * mpk - s * mqk;
                    m[q][k] = s * mpk + c * mqk;
                }
                for row in v.iter_mut().take(d) {
                    let (vp, vq) = (row[p], row[q]);
                    row[p] = c * vp - s * vq;
                    row[q] = s * vp + c * vq;
                }
            }
        }
    }
    // Descending order.
    let mut order: Vec<usize> = (0..d).collect();
    order.sort_by(|&i, &j| m[j][j].total_cmp(&m[i][i]));
    let mut values = [0.0; 4];
    let mut vectors = [[0.0; 4]; 4];
    for (c, &i) in order.iter().enumerate() {
        values[c] = m[i][i];
        for r in 0..d {
            vectors[r][c] = v[r][i];
        }
    }
    (values, vectors)
}

/// The tensor's components at one sample as a 4×4 matrix (zeros beyond d).
pub fn matrix_at(components: &[ArrayD<f64>], d: usize, index: &IxDyn) -> [[f64; 4]; 4] {
    let mut m = [[0.0; 4]; 4];
    for (c, (i, j)) in tensor_components(d).into_iter().enumerate() {
        m[i][j] = components[c][index];
        m[j][i] = components[c][index];
    }
    m
}

/// The local structure of `x` over its last d axes: the structure tensor of the monomial
/// filters' responses, lowpass filtered by normalised convolution (Gaussian of `sigma` samples).
pub fn local_structure(x: &ArrayD<f64>, d: usize, filter: &Lognormal, sigma: f64) -> Vec<ArrayD<f64>> {
    let (odd, even) = monomial_responses(x, d, filter);
    structure_tensor(&odd, &even, d).iter().map(|t| normalized_lowpass(t, d, sigma)).collect()
}

/// The data lowpass filtered by the binomial kernel [1, 2, 1] / 4 and every second sample kept,
/// along each of the last d axes whose `factors` entry is 2 (1 leaves an axis as it is); the
/// kernel mirrors at the borders (whole-sample symmetric). Sample k lands where sample 2k was.
pub fn downsample(x: &ArrayD<f64>, d: usize, factors: &[usize]) -> ArrayD<f64> {
    let rank = x.ndim();
    let mut y = x.clone();
    for (axis, &f) in (rank - d..rank).zip(factors) {
        if f != 2 {
            continue;
        }
        let n = y.shape()[axis];
        let mut dims = y.shape().to_vec();
        dims[axis] = n.div_ceil(2);
        let mut out = ArrayD::zeros(IxDyn(&dims));
        for (src, mut dst) in y.lanes(Axis(axis)).into_iter().zip(out.lanes_mut(Axis(axis))) {
            let at = |i: i64| src[(if i < 0 { -i } else if i >= n as i64 { 2 * (n as i64 - 1) - i } else { i }).clamp(0, n as i64 - 1) as usize];
            for (k, o) in dst.iter_mut().enumerate() {
                let i = 2 * k as i64;
                *o = (at(i - 1) + 2.0 * at(i) + at(i + 1)) / 4.0;
            }
        }
        y = out;
    }
    y
}

/// Back to `dims` by linear interpolation along the axes [`downsample`] halved (full-resolution
/// sample i at downsampled coordinate i/2, the last one held past the end).
pub fn upsample(x: &ArrayD<f64>, d: usize, factors: &[usize], dims: &[usize]) -> ArrayD<f64> {
    let rank = x.ndim();
    let mut y = x.clone();
    for (axis, &f) in (rank - d..rank).zip(factors) {
        if f != 2 {
            continue;
        }
        let n = y.shape()[axis];
        let mut shape = y.shape().to_vec();
        shape[axis] = dims[axis];
        let mut out = ArrayD::zeros(IxDyn(&shape));
        for (src, mut dst) in y.lanes(Axis(axis)).into_iter().zip(out.lanes_mut(Axis(axis))) {
            for (i, o) in dst.iter_mut().enumerate() {
                let c = (i as f64 / 2.0).min((n - 1) as f64);
                let k = c.floor() as usize;
                let w = c - k as f64;
                *o = if k + 1 < n { (1.0 - w) * src[k] + w * src[k + 1] } else { src[k] };
            }
        }
        y = out;
    }
    y
}

/// The adaptive reconstruction through FFTs: f = f_LP + Σ_k ⟨C, M_k⟩ f_HP,k, with f_LP the data
/// lowpass filtered by `lowpass(ρ)`, f_HP,k by (1 − lowpass(ρ)) (n_k·û)² (the directions n_k of
/// [`reconstruction_directions`], M_k their [`dual_tensors`]) and C the control tensor's
/// components at every sample (in [`tensor_components`]' order). C = I gives back the data:
/// Σ_k ⟨I, M_k⟩ (n_k·û)² = |û|² = 1.
pub fn reconstruct(x: &ArrayD<f64>, control: &[ArrayD<f64>], d: usize, lowpass: &dyn Fn(f64) -> f64) -> ArrayD<f64> {
    let dims = x.shape().to_vec();
    let spectrum = Spectrum::new(x, d);
    let filtered = |h: &dyn Fn(&[f64]) -> f64| spectrum.filtered(&|u| Complex64::new(h(u), 0.0));
    let rho = |u: &[f64]| u.iter().map(|v| v * v).sum::<f64>().sqrt();
    let mut out = filtered(&|u| lowpass(rho(u)));
    let pairs = tensor_components(d);
    for (n, m) in reconstruction_directions(d).iter().zip(dual_tensors(d)) {
        let highpass = filtered(&|u| {
            let r = rho(u);
            if r == 0.0 {
                return 0.0;
            }
            let along: f64 = u.iter().zip(n).map(|(a, b)| a * b).sum::<f64>() / r;
            (1.0 - lowpass(r)) * along * along
        });
        // ⟨C, M_k⟩ per sample: the off-diagonal components count twice.
        let weight = pairs.iter().enumerate().fold(ArrayD::zeros(IxDyn(&dims)), |acc: ArrayD<f64>, (c, &(i, j))| acc + &control[c] * (if i == j { m[i][j] } else { 2.0 * m[i][j] }));
        out = out + weight * highpass;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_structure_tensor_of_a_simple_signal_is_phase_invariant() {
        // cos(u·x + φ) on a periodic grid (u on FFT bins), d = 2, 3, 4: T = R(|u|)² ûûᵀ at every
        // sample, whatever φ.
        let filter = Lognormal::default();
        for (dims, bins) in [(vec![16usize, 12], vec![3i64, -2]), (vec![8, 10, 12], vec![1, 2, -3]), (vec![6, 8, 8, 10], vec![1, -1, 2, 2])] {
            let d = dims.len();
            let u: Vec<f64> = bins.iter().zip(&dims).map(|(&k, &n)| 2.0 * std::f64::consts::PI * k as f64 / n as f64).collect();
            let rho = u.iter().map(|v| v * v).sum::<f64>().sqrt();
            let phase = 0.7;
            let x = ArrayD::from_shape_fn(IxDyn(&dims), |i| (u.iter().enumerate().map(|(a, w)| w * i[a] as f64).sum::<f64>() + phase).cos());
            let (odd, even) = monomial_responses(&x, d, &filter);
            let t = structure_tensor(&odd, &even, d);
            let scale = filter.radial(rho).powi(2);
            for (c, (i, j)) in tensor_components(d).into_iter().enumerate() {
                let want = scale * u[i] * u[j] / (rho * rho);
                let worst = t[c].iter().fold(0.0f64, |w, &v| w.max((v - want).abs()));
                assert!(worst < 1e-12, "{dims:?} T[{i}{j}]: off by {worst}");
            }
        }
    }

    #[test]
    fn eigen_decompositions_reconstruct_their_matrices() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        for d in 1..=4 {
            for _ in 0..50 {
                let mut a = [[0.0; 4]; 4];
                for i in 0..d {
                    for j in i..d {
                        a[i][j] = next();
                        a[j][i] = a[i][j];
                    }
                }
                let (values, vectors) = symmetric_eigen(&a, d);
                for i in 0..d {
                    for j in 0..d {
                        let back: f64 = (0..d).map(|k| vectors[i][k] * values[k] * vectors[j][k]).sum();
                        assert!((back - a[i][j]).abs() < 1e-12, "d {d}: {back} vs {}", a[i][j]);
                        let dot: f64 = (0..d).map(|k| vectors[k][i] * vectors[k][j]).sum();
                        assert!((dot - if i == j { 1.0 } else { 0.0 }).abs() < 1e-12);
                    }
                }
                assert!(values[..d].windows(2).all(|w| w[0] >= w[1]));
            }
        }
    }

    #[test]
    fn normalized_lowpass_keeps_constants_and_smooths() {
        let x = ArrayD::from_elem(IxDyn(&[2, 7, 9]), 3.5);
        let y = normalized_lowpass(&x, 2, 1.5);
        assert!(y.iter().all(|&v| (v - 3.5).abs() < 1e-12));
        // An impulse far from the borders spreads as the Gaussian, its mass kept.
        let mut x = ArrayD::zeros(IxDyn(&[41, 41]));
        x[[20, 20]] = 1.0;
        let y = normalized_lowpass(&x, 2, 2.0);
        assert!((y.sum() - 1.0).abs() < 1e-12, "{}", y.sum());
        assert!(y[[20, 20]] < 0.05 && y[[20, 22]] < y[[20, 21]] && y[[20, 21]] < y[[20, 20]]);
    }

    #[test]
    fn dual_tensors_reconstruct_symmetric_tensors() {
        for d in 1..=4 {
            let duals = dual_tensors(d);
            let directions = reconstruction_directions(d);
            // An arbitrary symmetric C: Σ_k ⟨C, M_k⟩ n_k n_kᵀ = C.
            let c = |i: usize, j: usize| 0.3 + (i * 7 + j * 7 + i * j) as f64 * 0.11;
            for i in 0..d {
                for j in 0..d {
                    let back: f64 = directions.iter().zip(&duals).map(|(n, m)| {
                        let inner: f64 = (0..d).flat_map(|a| (0..d).map(move |b| (a, b))).map(|(a, b)| c(a, b) * m[a][b]).sum();
                        inner * n[i] * n[j]
                    }).sum();
                    assert!((back - c(i, j)).abs() < 1e-12, "d {d} ({i}, {j}): {back} vs {}", c(i, j));
                }
            }
        }
    }

    #[test]
    fn the_identity_control_tensor_gives_back_the_data() {
        // C = I: the data back; C = 0: the lowpass part only.
        let lowpass = |rho: f64| (-rho * rho / 0.5).exp();
        for dims in [vec![9usize, 14], vec![5, 6, 7], vec![4, 5, 6, 3]] {
            let d = dims.len();
            let mut state = 12345u64;
            let x = ArrayD::from_shape_simple_fn(IxDyn(&dims), || {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (state >> 11) as f64 / (1u64 << 53) as f64
            });
            let identity: Vec<ArrayD<f64>> = tensor_components(d).into_iter().map(|(i, j)| ArrayD::from_elem(IxDyn(&dims), if i == j { 1.0 } else { 0.0 })).collect();
            let y = reconstruct(&x, &identity, d, &lowpass);
            let worst = (&y - &x).iter().fold(0.0f64, |w, v| w.max(v.abs()));
            assert!(worst < 1e-12, "{dims:?}: off by {worst}");
            let zero: Vec<ArrayD<f64>> = identity.iter().map(|c| c.mapv(|_| 0.0)).collect();
            let smooth = reconstruct(&x, &zero, d, &lowpass);
            let mean = x.mean().unwrap();
            assert!(smooth.iter().all(|v| (v - mean).abs() < 0.5) && (smooth.mean().unwrap() - mean).abs() < 1e-12);
        }
    }

    #[test]
    fn downsampling_and_back_keeps_smooth_data() {
        // A linear ramp survives both ways away from the last sample (the binomial kernel keeps
        // linear functions, linear interpolation restores them); axes with factor 1 untouched.
        let dims = [3usize, 17, 12];
        let x = ArrayD::from_shape_fn(IxDyn(&dims), |i| 0.5 * i[1] as f64 - 0.25 * i[2] as f64 + i[0] as f64);
        let small = downsample(&x, 2, &[2, 2]);
        assert_eq!(small.shape(), [3, 9, 6]);
        for ((b, r, c), &v) in small.clone().into_dimensionality::<ndarray::Ix3>().unwrap().indexed_iter() {
            if r > 0 && r < 8 && c > 0 && c < 5 {
                assert!((v - x[[b, 2 * r, 2 * c]]).abs() < 1e-12);
            }
        }
        let back = upsample(&small, 2, &[2, 2], &dims);
        assert_eq!(back.shape(), dims);
        for ((b, r, c), &v) in back.into_dimensionality::<ndarray::Ix3>().unwrap().indexed_iter() {
            if (2..14).contains(&r) && (2..9).contains(&c) {
                assert!((v - x[[b, r, c]]).abs() < 1e-12, "({b}, {r}, {c}): {v} vs {}", x[[b, r, c]]);
            }
        }
        assert_eq!(downsample(&x, 2, &[1, 1]), x);
    }

    #[test]
    fn the_local_structure_points_across_edges() {
        // A smooth edge (tanh profile) at 30° in 2D and a plane in 3D: near it the tensor's
        // first eigenvector is the edge's normal, and the tensor is close to rank one.
        let filter = Lognormal::default();
        let angle = 30f64.to_radians();
        let normal2 = [angle.sin(), angle.cos()];
        let normal3 = [0.48f64, 0.6, 0.64];
        let norm3 = normal3.iter().map(|v| v * v).sum::<f64>().sqrt();
        let normal3 = normal3.map(|v| v / norm3);
        for (dims, normal) in [(vec![48usize, 48], normal2.to_vec()), (vec![40, 40, 40], normal3.to_vec())] {
            let d = dims.len();
            let centre: Vec<f64> = dims.iter().map(|&n| (n as f64 - 1.0) / 2.0).collect();
            let distance = |i: &IxDyn| (0..d).map(|a| (i[a] as f64 - centre[a]) * normal[a]).sum::<f64>();
            let x = ArrayD::from_shape_fn(IxDyn(&dims), |i| (distance(&i) / 1.5).tanh());
            let t = local_structure(&x, d, &filter, 1.5);
            let mut checked = 0;
            for (index, _) in x.indexed_iter() {
                // (Away from the borders, where the circular filters see the edge wrap around.)
                let inside = (0..d).all(|a| index[a] >= dims[a] / 4 && index[a] + dims[a] / 4 < dims[a]);
                if !inside || distance(&index).abs() > 1.0 {
                    continue;
                }
                let (values, vectors) = symmetric_eigen(&matrix_at(&t, d, &index), d);
                let along: f64 = (0..d).map(|a| vectors[a][0] * normal[a]).sum::<f64>().abs();
                assert!(along > 0.999, "{dims:?} at {index:?}: |e1 · n| = {along}");
                assert!(values[1] < 0.05 * values[0], "{dims:?} at {index:?}: eigenvalues {values:?}");
                checked += 1;
            }
            assert!(checked > 10);
        }
    }
}
