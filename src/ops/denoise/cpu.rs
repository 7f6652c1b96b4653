//! The f64 reference of the adaptive filter, over the last `d` axes of an array (the leading
//! ones, if any, are batches): the designed kernels applied by convolution with the data
//! mirrored at its borders, the structure tensor, normalised convolution, the control tensor
//! and the reconstruction, stage by stage as the GPU runs them.

use ndarray::{ArrayD, Axis, IxDyn};
use rayon::prelude::*;

use super::{isotropy, magnitude, tensor_components, weight_coefficients, Filters, Options};
use crate::error::Result;
use crate::kernels::boundary::Boundary;
use crate::ops::convolve::{cpu as conv, Mode};
use crate::ops::filter::cpu as filter;
use crate::ops::layout;

/// `x` convolved with the centred kernel `k` over its last axes (k's rank; leading axes of x
/// are batches), x mirrored (scipy's 'mirror') beyond its borders: by FFT in f64.
pub fn filter(x: &ArrayD<f64>, k: &ArrayD<f64>) -> ArrayD<f64> {
    let batch = x.ndim() - k.ndim();
    let mut pads = vec![(0, 0); batch];
    pads.extend(k.shape().iter().map(|&m| (m / 2, m / 2)));
    let padded = layout::cpu::pad(x, &pads, Boundary::Mirror, 0.0);
    let mut kernel_dims = vec![1; batch];
    kernel_dims.extend(k.shape());
    let k = k.clone().into_shape_with_order(IxDyn(&kernel_dims)).expect("same length");
    conv::fft_signal(&padded, &k, Mode::Valid, false).expect("a valid geometry")
}

/// The responses of `x` to the monomial filters (`filters.structure`): the d odd ones, then the
/// even ones.
pub fn monomial_responses(x: &ArrayD<f64>, d: usize, filters: &Filters) -> (Vec<ArrayD<f64>>, Vec<ArrayD<f64>>) {
    let mut all: Vec<ArrayD<f64>> = filters.structure.par_iter().map(|k| filter(x, k)).collect();
    let even = all.split_off(d);
    (all, even)
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
/// axes (scipy's kernel, truncated at 4σ), certainty 1 inside the array and 0 outside: at the
/// borders the sum is over the taps inside, divided by their weight.
pub fn normalized_lowpass(x: &ArrayD<f64>, d: usize, sigma: f64) -> ArrayD<f64> {
    let rank = x.ndim();
    let mut sigmas = vec![0.0; rank - d];
    sigmas.extend(std::iter::repeat_n(sigma, d));
    let zero = Boundary::Constant(0.0);
    let num = filter::gaussian_filter(x, &sigmas, zero);
    let den = filter::gaussian_filter(&ArrayD::from_elem(x.raw_dim(), 1.0), &sigmas, zero);
    num / den
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

/// The reconstruction weights ⟨C, M_k⟩ from the (lowpass filtered) structure tensor's
/// components: per sample, T's eigen-decomposition, the magnitude mapping of ‖T‖ / `largest`
/// and the isotropy mapping of the eigenvalue ratios into C = γ0 Σ c_k e_k e_kᵀ.
pub fn control_weights(tensor: &[ArrayD<f64>], d: usize, largest: f64, o: &Options) -> Vec<ArrayD<f64>> {
    let pairs = tensor_components(d);
    let coefficients = weight_coefficients(d);
    let mut weights: Vec<ArrayD<f64>> = pairs.iter().map(|_| ArrayD::zeros(tensor[0].raw_dim())).collect();
    for (index, _) in tensor[0].indexed_iter() {
        let t = matrix_at(tensor, d, &index);
        let c = control_tensor(&t, d, largest, o);
        for (w, m) in weights.iter_mut().zip(&coefficients) {
            w[&index] = pairs.iter().zip(m).map(|(&(i, j), mk)| c[i][j] * mk).sum();
        }
    }
    weights
}

/// The Frobenius norm of a symmetric d×d tensor.
pub fn tensor_norm(t: &[[f64; 4]; 4], d: usize) -> f64 {
    (0..d).flat_map(|i| (0..d).map(move |j| (i, j))).map(|(i, j)| t[i][j] * t[i][j]).sum::<f64>().sqrt()
}

/// The control tensor of one structure tensor `t`.
pub fn control_tensor(t: &[[f64; 4]; 4], d: usize, largest: f64, o: &Options) -> [[f64; 4]; 4] {
    let (values, vectors) = symmetric_eigen(t, d);
    let mut gain = if largest > 0.0 { magnitude(tensor_norm(t, d) / largest, o) } else { 0.0 };
    let mut c = [[0.0; 4]; 4];
    for k in 0..d {
        if k > 0 {
            let ratio = if values[k - 1] > 0.0 { values[k].max(0.0) / values[k - 1] } else { 1.0 };
            gain *= isotropy(ratio, o);
        }
        for i in 0..d {
            for j in 0..d {
                c[i][j] += o.gamma0 * gain * vectors[i][k] * vectors[j][k];
            }
        }
    }
    c
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
            let at = |i: i64| {
                src[(if i < 0 {
                    -i
                } else if i >= n as i64 {
                    2 * (n as i64 - 1) - i
                } else {
                    i
                })
                .clamp(0, n as i64 - 1) as usize]
            };
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

/// The reconstruction f = Σ_k w_k (x ⊛ h_k): `filters.reconstruction` (the lowpass, weight 1,
/// then the highpass filters) with `weights` (one per highpass filter, at full resolution).
pub fn reconstruct(x: &ArrayD<f64>, weights: &[ArrayD<f64>], filters: &Filters) -> ArrayD<f64> {
    let responses: Vec<ArrayD<f64>> = filters.reconstruction.par_iter().map(|k| filter(x, k)).collect();
    let mut out = responses[0].clone();
    for (r, w) in responses[1..].iter().zip(weights) {
        out = out + r * w;
    }
    out
}

/// What each stage of the adaptive filter made, for data of exactly d axes.
#[cfg(test)]
pub struct Stages {
    /// The structure tensor's components after the lowpass (downsampled).
    pub tensor: Vec<ArrayD<f64>>,
    /// The largest tensor norm.
    pub largest: f64,
    /// The result.
    pub output: ArrayD<f64>,
}

/// The structure tensor's components after the lowpass (downsampled), of data of exactly d
/// axes.
pub fn tensor(x: &ArrayD<f64>, d: usize, o: &Options) -> Vec<ArrayD<f64>> {
    let filters = super::filters(d, o);
    let small = downsample(x, d, &o.factors(d));
    let (odd, even) = monomial_responses(&small, d, &filters);
    structure_tensor(&odd, &even, d).par_iter().map(|t| normalized_lowpass(t, d, o.tensor_sigma)).collect()
}

/// The largest Frobenius norm of a tensor field.
pub fn largest_norm(tensor: &[ArrayD<f64>], d: usize) -> f64 {
    tensor[0].indexed_iter().map(|(i, _)| tensor_norm(&matrix_at(tensor, d, &i), d)).fold(0.0, f64::max)
}

/// The reconstruction weights (downsampled, after their lowpass) and the result, from the
/// tensor and the norm the magnitude mapping is relative to.
pub fn reconstruction(x: &ArrayD<f64>, d: usize, tensor: &[ArrayD<f64>], largest: f64, o: &Options) -> (Vec<ArrayD<f64>>, ArrayD<f64>) {
    let filters = super::filters(d, o);
    let factors = o.factors(d);
    let weights: Vec<ArrayD<f64>> = control_weights(tensor, d, largest, o).par_iter().map(|w| normalized_lowpass(w, d, o.control_sigma)).collect();
    let full: Vec<ArrayD<f64>> = weights.iter().map(|w| upsample(w, d, &factors, x.shape())).collect();
    let output = reconstruct(x, &full, &filters);
    (weights, output)
}

/// The whole pipeline on data of exactly d axes.
#[cfg(test)]
pub fn stages(x: &ArrayD<f64>, d: usize, o: &Options) -> Stages {
    let tensor = tensor(x, d, o);
    let largest = largest_norm(&tensor, d);
    let (_, output) = reconstruction(x, d, &tensor, largest, o);
    Stages { tensor, largest, output }
}

/// The adaptive filter of `x` (the reference of [`super::gpu`]): over its last `dims` axes,
/// every leading index on its own, the magnitude mapping relative to the largest tensor norm
/// of them all (one noise level for a whole series).
pub fn adaptive_filter(x: &ArrayD<f64>, o: &Options) -> Result<ArrayD<f64>> {
    o.check()?;
    let d = o.axes(x.ndim())?;
    let batch: usize = x.shape()[..x.ndim() - d].iter().product();
    let item: Vec<usize> = x.shape()[x.ndim() - d..].to_vec();
    let flat = x.view().into_shape_with_order(IxDyn(&[&[batch][..], &item].concat())).expect("contiguous").to_owned();
    let items: Vec<ArrayD<f64>> = flat.axis_iter(Axis(0)).map(|v| v.to_owned()).collect();
    let tensors: Vec<Vec<ArrayD<f64>>> = items.iter().map(|one| tensor(one, d, o)).collect();
    let largest = tensors.iter().map(|t| largest_norm(t, d)).fold(0.0, f64::max);
    let mut out = ArrayD::zeros(flat.raw_dim());
    for ((one, t), mut slot) in items.iter().zip(&tensors).zip(out.axis_iter_mut(Axis(0))) {
        slot.assign(&reconstruction(one, d, t, largest, o).1);
    }
    Ok(out.into_shape_with_order(x.raw_dim()).expect("same length"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::denoise::{dual_tensors, reconstruction_directions};

    #[test]
    fn the_structure_tensor_of_a_simple_signal_follows_the_designed_responses() {
        // cos(u·x + φ), d = 2, 3, 4: away from the borders the odd responses are a_i sin(u·x +
        // φ) and the even ones b_ij cos(u·x + φ) (a_i = Im F_i(u), b_ij = F_ij(u) of the designed
        // kernels), so T = a aᵀ sin² + B² cos² exactly; and the design is close to the ideal
        // R(|u|)² ûûᵀ whatever the phase (7 taps: within 11% in 2D, 6% in 3D and 4D).
        let o = Options::default();
        for u in [vec![0.9f64, -0.6], vec![0.5, 0.7, -0.6], vec![0.4, -0.5, 0.6, 0.5]] {
            let d = u.len();
            let dims = vec![if d == 4 { 12 } else { 20 }; d];
            let filters = crate::ops::denoise::filters(d, &o);
            let a: Vec<f64> = filters.structure[..d].iter().map(|k| -crate::ops::denoise::design::response(k, &u).im).collect();
            let b: Vec<f64> = filters.structure[d..].iter().map(|k| crate::ops::denoise::design::response(k, &u).re).collect();
            let pairs = tensor_components(d);
            let at = |i: usize, j: usize| b[pairs.iter().position(|&p| p == (i.min(j), i.max(j))).unwrap()];
            let rho = u.iter().map(|v| v * v).sum::<f64>().sqrt();
            let scale = o.structure.radial(rho).powi(2);
            for phase in [0.0, 0.7, 2.0] {
                let x = ArrayD::from_shape_fn(IxDyn(&dims), |i| (u.iter().enumerate().map(|(a, w)| w * i[a] as f64).sum::<f64>() + phase).cos());
                let (odd, even) = monomial_responses(&x, d, &filters);
                let t = structure_tensor(&odd, &even, d);
                for (c, &(i, j)) in pairs.iter().enumerate() {
                    let ideal = scale * u[i] * u[j] / (rho * rho);
                    let bb: f64 = (0..d).map(|k| at(i, k) * at(k, j)).sum();
                    let (mut exact, mut design) = (0.0f64, 0.0f64);
                    for (k, &v) in t[c].indexed_iter() {
                        if (0..d).all(|ax| (3..dims[ax] - 3).contains(&k[ax])) {
                            let theta = u.iter().enumerate().map(|(ax, w)| w * k[ax] as f64).sum::<f64>() + phase;
                            exact = exact.max((v - a[i] * a[j] * theta.sin().powi(2) - bb * theta.cos().powi(2)).abs());
                            design = design.max((v - ideal).abs());
                        }
                    }
                    assert!(exact < 1e-9, "{u:?} φ {phase} T[{i}{j}]: {exact} from the designed responses");
                    let tolerance = if d == 2 { 0.11 } else { 0.06 };
                    assert!(design < tolerance * scale, "{u:?} φ {phase} T[{i}{j}]: off the ideal by {design} of {scale}");
                }
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
                    let back: f64 = directions
                        .iter()
                        .zip(&duals)
                        .map(|(n, m)| {
                            let inner: f64 = (0..d).flat_map(|a| (0..d).map(move |b| (a, b))).map(|(a, b)| c(a, b) * m[a][b]).sum();
                            inner * n[i] * n[j]
                        })
                        .sum();
                    assert!((back - c(i, j)).abs() < 1e-12, "d {d} ({i}, {j}): {back} vs {}", c(i, j));
                }
            }
        }
    }

    #[test]
    fn the_identity_control_tensor_gives_back_the_data() {
        // C = I (weights tr M_k): the data back exactly; C = 0: the lowpass part, its mean kept.
        let o = Options::default();
        for dims in [vec![9usize, 14], vec![5, 6, 7], vec![4, 5, 6, 3]] {
            let d = dims.len();
            let filters = crate::ops::denoise::filters(d, &o);
            let mut state = 12345u64;
            let x = ArrayD::from_shape_simple_fn(IxDyn(&dims), || {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (state >> 11) as f64 / (1u64 << 53) as f64
            });
            let identity: Vec<ArrayD<f64>> =
                crate::ops::denoise::dual_tensors(d).iter().map(|m| ArrayD::from_elem(IxDyn(&dims), (0..d).map(|i| m[i][i]).sum::<f64>())).collect();
            let y = reconstruct(&x, &identity, &filters);
            let worst = (&y - &x).iter().fold(0.0f64, |w, v| w.max(v.abs()));
            assert!(worst < 1e-12, "{dims:?}: off by {worst}");
            let zero: Vec<ArrayD<f64>> = identity.iter().map(|c| c.mapv(|_| 0.0)).collect();
            let smooth = reconstruct(&x, &zero, &filters);
            let spread = |a: &ArrayD<f64>| {
                let m = a.mean().unwrap();
                a.iter().map(|v| (v - m) * (v - m)).sum::<f64>()
            };
            assert!(spread(&smooth) < 0.5 * spread(&x), "{dims:?}: the lowpass keeps {} of {}", spread(&smooth), spread(&x));
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
        let o = Options::default();
        let angle = 30f64.to_radians();
        let normal2 = [angle.sin(), angle.cos()];
        let normal3 = [0.48f64, 0.6, 0.64];
        let norm3 = normal3.iter().map(|v| v * v).sum::<f64>().sqrt();
        let normal3 = normal3.map(|v| v / norm3);
        for (dims, normal) in [(vec![48usize, 48], normal2.to_vec()), (vec![40, 40, 40], normal3.to_vec())] {
            let d = dims.len();
            let filters = crate::ops::denoise::filters(d, &o);
            let centre: Vec<f64> = dims.iter().map(|&n| (n as f64 - 1.0) / 2.0).collect();
            let distance = |i: &IxDyn| (0..d).map(|a| (i[a] as f64 - centre[a]) * normal[a]).sum::<f64>();
            let x = ArrayD::from_shape_fn(IxDyn(&dims), |i| (distance(&i) / 1.5).tanh());
            let (odd, even) = monomial_responses(&x, d, &filters);
            let t: Vec<ArrayD<f64>> = structure_tensor(&odd, &even, d).iter().map(|t| normalized_lowpass(t, d, 1.5)).collect();
            let mut checked = 0;
            for (index, _) in x.indexed_iter() {
                // (Away from the borders, where the mirrored edge bends.)
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
