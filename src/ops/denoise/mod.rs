//! True 4D adaptive-filtering denoising (issue 22; Eklund, Andersson and Knutsson, Int. J.
//! Biomedical Imaging 2011): one code path for 2, 3 and 4 dimensions (the last `dims` axes of
//! the data). Built so far, the f64 reference ([`cpu`]): the lognormal monomial filters, the
//! structure tensor from their responses, normalised convolution, the per-voxel symmetric
//! eigen-decomposition, and the adaptive reconstruction f = f_LP + Σ_k ⟨C, M_k⟩ f_HP,k through
//! FFTs (directions e_i and (e_i + e_j)/√2, their dual tensors). Next: the control tensor's
//! mappings (magnitude and isotropy), downsampling, the spatial filters, the GPU paths.

pub mod cpu;

use crate::error::{Error, Result};

/// The structure estimate's filters: the lognormal radial function R(ρ) =
/// exp(−4 ln²(ρ/ρ0) / (B² ln 2)) of centre frequency ρ0 (radians per sample) and bandwidth B
/// (octaves at half height).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lognormal {
    pub center: f64,
    pub bandwidth: f64,
}

impl Default for Lognormal {
    /// ρ0 = π/(2√2) and two octaves: Knutsson's usual choice for quadrature filters.
    fn default() -> Self {
        Lognormal { center: std::f64::consts::PI / (2.0 * std::f64::consts::SQRT_2), bandwidth: 2.0 }
    }
}

impl Lognormal {
    pub fn check(&self) -> Result<()> {
        let ok = |v: f64| v.is_finite() && v > 0.0;
        if !ok(self.center) || self.center >= std::f64::consts::PI || !ok(self.bandwidth) {
            return Err(Error::Invalid(format!("a lognormal filter of centre {} rad/sample (0 to π) and bandwidth {} octaves (more than 0)", self.center, self.bandwidth)));
        }
        Ok(())
    }

    /// R(ρ); 0 at ρ = 0.
    pub fn radial(&self, rho: f64) -> f64 {
        if rho <= 0.0 {
            return 0.0;
        }
        let l = (rho / self.center).ln();
        (-4.0 * l * l / (self.bandwidth * self.bandwidth * std::f64::consts::LN_2)).exp()
    }
}

/// The number of distinct components of a symmetric d×d tensor, d(d+1)/2, in the order
/// (0,0), (0,1), .., (0,d−1), (1,1), .., (d−1,d−1).
pub fn tensor_components(d: usize) -> Vec<(usize, usize)> {
    (0..d).flat_map(|i| (i..d).map(move |j| (i, j))).collect()
}

/// The reconstruction filters' directions: the axes e_i and the diagonals (e_i + e_j)/√2, i < j,
/// d(d+1)/2 of them (in [`tensor_components`]' order: (i, i) → e_i, (i, j) → the diagonal).
pub fn reconstruction_directions(d: usize) -> Vec<[f64; 4]> {
    tensor_components(d)
        .into_iter()
        .map(|(i, j)| {
            let mut n = [0.0; 4];
            if i == j {
                n[i] = 1.0;
            } else {
                n[i] = std::f64::consts::FRAC_1_SQRT_2;
                n[j] = std::f64::consts::FRAC_1_SQRT_2;
            }
            n
        })
        .collect()
}

/// The dual tensors M_k of the directions' outer products N_k = n_k n_kᵀ: ⟨N_k, M_l⟩ = δ_kl, so
/// that Σ_k ⟨C, M_k⟩ N_k = C for every symmetric C (M_k = Σ_l (G⁻¹)_kl N_l, G the Gram matrix
/// of the N_k under the Frobenius product).
pub fn dual_tensors(d: usize) -> Vec<[[f64; 4]; 4]> {
    let outer = |n: &[f64; 4]| {
        let mut m = [[0.0; 4]; 4];
        for i in 0..d {
            for j in 0..d {
                m[i][j] = n[i] * n[j];
            }
        }
        m
    };
    let basis: Vec<[[f64; 4]; 4]> = reconstruction_directions(d).iter().map(outer).collect();
    let k = basis.len();
    let dot = |a: &[[f64; 4]; 4], b: &[[f64; 4]; 4]| (0..d).flat_map(|i| (0..d).map(move |j| (i, j))).map(|(i, j)| a[i][j] * b[i][j]).sum::<f64>();
    // G⁻¹ by Gauss-Jordan (G is small and well conditioned).
    let mut g: Vec<Vec<f64>> = (0..k).map(|r| (0..k).map(|c| dot(&basis[r], &basis[c])).chain((0..k).map(move |c| if c == r { 1.0 } else { 0.0 })).collect()).collect();
    for c in 0..k {
        let pivot = (c..k).max_by(|&a, &b| g[a][c].abs().total_cmp(&g[b][c].abs())).expect("rows");
        g.swap(c, pivot);
        let p = g[c][c];
        g[c].iter_mut().for_each(|v| *v /= p);
        for r in 0..k {
            if r != c {
                let f = g[r][c];
                let row = g[c].clone();
                g[r].iter_mut().zip(row).for_each(|(v, w)| *v -= f * w);
            }
        }
    }
    (0..k)
        .map(|a| {
            let mut m = [[0.0; 4]; 4];
            for (b, n) in basis.iter().enumerate() {
                for i in 0..d {
                    for j in 0..d {
                        m[i][j] += g[a][k + b] * n[i][j];
                    }
                }
            }
            m
        })
        .collect()
}
