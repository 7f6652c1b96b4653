//! True 4D adaptive-filtering denoising (issue 22; Eklund, Andersson and Knutsson, Int. J.
//! Biomedical Imaging 2011): one code path for 2, 3 and 4 dimensions (the last `dims` axes of
//! the data). Built so far: the f64 reference of the local structure estimate ([`cpu`]): the
//! lognormal monomial filters, the structure tensor from their responses, normalised
//! convolution, and the per-voxel symmetric eigen-decomposition. The control tensor's mappings,
//! the reconstruction filters and the GPU paths come next.

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
