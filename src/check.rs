//! Checks of host input that every layer shares (below the GPU code, so kernels, transforms and
//! ops all report bad values the same way).

use ndarray::ArrayViewD;
use rayon::prelude::*;

use crate::error::{Error, Result};

/// Element types whose values can be NaN or infinite.
pub trait Finite: Copy + Send + Sync + std::fmt::Display {
    fn is_finite(self) -> bool;
}

impl Finite for f32 {
    fn is_finite(self) -> bool {
        f32::is_finite(self)
    }
}

impl Finite for f64 {
    fn is_finite(self) -> bool {
        f64::is_finite(self)
    }
}

impl<T: Finite + ndarray::NdFloat> Finite for num_complex::Complex<T> {
    fn is_finite(self) -> bool {
        Finite::is_finite(self.re) && Finite::is_finite(self.im)
    }
}

/// Errors with `Error::NonFinite` when `x` holds a NaN or an infinity.
pub fn check_finite<T: Finite>(x: &ArrayViewD<T>, what: &str) -> Result<()> {
    match first_where(x, |v| !v.is_finite()) {
        Some((at, v)) => Err(Error::NonFinite(format!("{what}: {v} at index {at:?}"))),
        None => Ok(()),
    }
}

/// The first element (in row-major order) for which `bad` holds, with its index. Scans the
/// memory directly when the array is in standard layout: ndarray's indexed iteration over a
/// dynamic-rank array builds an index per element and took ~20 ns each (0.3 s for 256³).
pub(crate) fn first_where<T: Copy + Send + Sync>(x: &ArrayViewD<T>, bad: impl Fn(T) -> bool + Sync) -> Option<(Vec<usize>, T)> {
    let Some(data) = x.as_slice() else {
        // Row by row (the per-element index is the slow part), the row's index unravelled only
        // for the row that holds a bad element.
        // (A 0-d array is contiguous: here d ≥ 1.)
        let d = x.ndim();
        return x.rows().into_iter().enumerate().find_map(|(r, row)| {
            let c = row.iter().position(|&v| bad(v))?;
            let mut index = vec![0; d];
            let mut rest = r;
            for k in (0..d - 1).rev() {
                index[k] = rest % x.shape()[k];
                rest /= x.shape()[k];
            }
            index[d - 1] = c;
            Some((index, row[c]))
        });
    };
    // Gigabyte volumes: scanned by all cores in blocks (rayon's position_first over single
    // elements ran 50x slower than one core), the first bad element still the one reported.
    const BLOCK: usize = 1 << 16;
    let block = data.par_chunks(BLOCK).position_first(|c| c.iter().any(|&v| bad(v)))?;
    let at = block * BLOCK + data[block * BLOCK..].iter().position(|&v| bad(v))?;
    let mut index = vec![0; x.ndim()];
    let mut rest = at;
    for (d, &n) in x.shape().iter().enumerate().rev() {
        index[d] = rest % n;
        rest /= n;
    }
    Some((index, data[at]))
}

/// Magnitudes up to 2^20 (and down to 2^-20) survive, in f32, the fourth powers and squared
/// sums that structure tensors and normalised correlations take.
const SAFE_LOG2: i32 = 20;

/// The power of two `2^e` that brings `x`'s largest magnitude to about 1, where that magnitude
/// lies outside [2^-20, 2^20] (None inside it, or for an array of zeros). Multiplying by a power
/// of two is exact, so an op that is equivariant (or invariant) under scaling computes on
/// [`scaled`]`(x, e)` and undoes it exactly: the same bits where no scaling was needed, and no
/// overflow or underflow on the way where it was (values near f32's limits).
pub fn power_of_two_scale(x: &ArrayViewD<f32>) -> Option<i32> {
    power_of_two_for(largest_magnitude(x))
}

/// [`power_of_two_scale`] of data whose largest magnitude is `largest`.
pub fn power_of_two_for(largest: f32) -> Option<i32> {
    if !largest.is_finite() {
        return None; // (non-finite values are the finiteness checks' to report)
    }
    let e = (largest as f64).log2().round() as i32;
    (largest > 0.0 && e.abs() > SAFE_LOG2).then_some(-e)
}

/// `x` brought into [2^-20, 2^20] by [`power_of_two_scale`] where it lies outside (a copy, and
/// the exponent e it was multiplied by 2^e with), else `x` itself and 0: the input of an op
/// whose result does not change under scaling, or whose scale is undone after (a shift, a
/// normalised correlation), so that its sums cannot overflow or underflow f32.
pub fn in_safe_range<'a>(x: &ArrayViewD<'a, f32>) -> (ndarray::CowArray<'a, f32, ndarray::IxDyn>, i32) {
    scaled_where(x, |_| true)
}

/// [`in_safe_range`] for values beyond 2^20 only (small ones kept as they are): for ops whose
/// result depends on the scale below some floor (scikit-image's phase correlation floors the
/// cross-power spectrum's magnitude at 100 ε).
pub fn large_in_safe_range<'a>(x: &ArrayViewD<'a, f32>) -> (ndarray::CowArray<'a, f32, ndarray::IxDyn>, i32) {
    scaled_where(x, |e| e < 0)
}

fn scaled_where<'a>(x: &ArrayViewD<'a, f32>, when: impl Fn(i32) -> bool) -> (ndarray::CowArray<'a, f32, ndarray::IxDyn>, i32) {
    match power_of_two_scale(x) {
        Some(e) if when(e) => (scaled(x, e).into(), e),
        _ => (x.clone().into(), 0),
    }
}

/// The largest |value| of `x` (0 for an empty array), on every core.
pub fn largest_magnitude(x: &ArrayViewD<f32>) -> f32 {
    match x.as_slice() {
        Some(data) => data.par_chunks(1 << 16).map(|c| c.iter().fold(0.0f32, |m, v| m.max(v.abs()))).reduce(|| 0.0, f32::max),
        None => x.iter().fold(0.0f32, |m, v| m.max(v.abs())),
    }
}

/// The sum (f64), least and largest values of finite f32 data in one pass by all cores (blocks
/// summed in a fixed order: the same bits every run); `Error::NonFinite` as [`check_finite`]
/// reports it when `x` holds a NaN or an infinity.
pub fn finite_summary(x: &ArrayViewD<f32>, what: &str) -> Result<Summary> {
    let fold = |c: &mut dyn Iterator<Item = f32>| c.fold((0.0f64, f32::INFINITY, f32::NEG_INFINITY), |(s, lo, hi), v| (s + v as f64, lo.min(v), hi.max(v)));
    // Eight lanes a block, so that the adds do not wait on each other (one chain ran 5x slower).
    let block = |c: &[f32]| {
        let (mut s, mut lo, mut hi) = ([0.0f64; 8], [f32::INFINITY; 8], [f32::NEG_INFINITY; 8]);
        let mut lanes = c.chunks_exact(8);
        for v in &mut lanes {
            for k in 0..8 {
                (s[k], lo[k], hi[k]) = (s[k] + v[k] as f64, lo[k].min(v[k]), hi[k].max(v[k]));
            }
        }
        let (rs, rlo, rhi) = fold(&mut lanes.remainder().iter().copied());
        (s.iter().sum::<f64>() + rs, lo.iter().fold(rlo, |a, &b| a.min(b)), hi.iter().fold(rhi, |a, &b| a.max(b)))
    };
    let parts: Vec<(f64, f32, f32)> = match x.as_slice() {
        Some(data) => data.par_chunks(1 << 16).map(block).collect(),
        None => vec![fold(&mut x.iter().copied())],
    };
    let sum: f64 = parts.iter().map(|p| p.0).sum();
    let (min, max) = parts.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), p| (lo.min(p.1), hi.max(p.2)));
    // A NaN or infinity makes the sum non-finite (finite f32s cannot overflow an f64 sum).
    if !sum.is_finite() {
        check_finite(x, what)?;
    }
    Ok(Summary { sum, min, max })
}

/// [`finite_summary`]'s result (an empty array: sum 0, min +∞, max −∞).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub sum: f64,
    pub min: f32,
    pub max: f32,
}

impl Summary {
    /// The largest magnitude, as [`largest_magnitude`] (0 for an empty array).
    pub fn largest_magnitude(&self) -> f32 {
        self.max.abs().max(self.min.abs()).max(0.0)
    }
}

/// `x × 2^e`, exactly (computed in f64: 2^e itself may lie beyond f32's range).
pub fn scaled(x: &ArrayViewD<f32>, e: i32) -> ndarray::ArrayD<f32> {
    let factor = 2f64.powi(e);
    x.mapv(|v| (v as f64 * factor) as f32)
}

#[cfg(test)]
mod tests {
    use ndarray::{ArrayD, IxDyn};

    #[test]
    fn first_where_finds_the_same_element_in_any_layout() {
        let mut x = ArrayD::from_shape_fn(IxDyn(&[3, 5, 7]), |i| (i[0] * 35 + i[1] * 7 + i[2]) as f32);
        x[[2, 1, 4]] = f32::NAN;
        x[[2, 3, 0]] = f32::INFINITY;
        let found = super::first_where(&x.view(), |v| !v.is_finite()).unwrap();
        assert_eq!(found.0, vec![2, 1, 4]);
        // A transposed view walks the other path; its first non-finite element in its own
        // row-major order is the infinity.
        let t = x.view().reversed_axes();
        let found = super::first_where(&t, |v| !v.is_finite()).unwrap();
        assert_eq!((found.0, found.1), (vec![0, 3, 2], f32::INFINITY));
        assert!(super::first_where(&x.view(), |v| v < 0.0).is_none());
        // Past the first blocks of the parallel scan: the first of two bad elements.
        let mut y = ArrayD::from_elem(IxDyn(&[5, 1 << 16]), 1.0f32);
        y[[3, 777]] = -2.0;
        y[[4, 5]] = -1.0;
        assert_eq!(super::first_where(&y.view(), |v| v < 0.0), Some((vec![3, 777], -2.0)));
    }

    #[test]
    fn summary_is_one_pass_of_sum_extremes_and_finiteness() {
        use rand::Rng;
        let mut rng = rand::rng();
        // Past several blocks, an awkward length, any layout.
        let x = ArrayD::from_shape_fn(IxDyn(&[3, 65_537]), |_| rng.random_range(-3.0f32..5.0));
        let s = super::finite_summary(&x.view(), "x").unwrap();
        let sum: f64 = x.iter().map(|&v| v as f64).sum();
        assert!((s.sum - sum).abs() <= 1e-12 * x.len() as f64, "{} vs {sum}", s.sum);
        assert_eq!((s.min, s.max), (x.iter().copied().fold(f32::INFINITY, f32::min), x.iter().copied().fold(f32::NEG_INFINITY, f32::max)));
        assert_eq!(s.largest_magnitude(), super::largest_magnitude(&x.view()));
        assert_eq!(super::finite_summary(&x.view(), "x").unwrap(), s, "the same bits again");
        let t = super::finite_summary(&x.view().reversed_axes(), "x").unwrap();
        assert_eq!((t.min, t.max), (s.min, s.max));
        let mut bad = x.clone();
        bad[[2, 40_000]] = f32::NAN;
        let err = super::finite_summary(&bad.view(), "the image").unwrap_err().to_string();
        assert!(err.contains("the image") && err.contains("[2, 40000]"), "{err}");
        bad[[2, 40_000]] = f32::NEG_INFINITY;
        assert!(super::finite_summary(&bad.view(), "x").is_err());
    }

    #[test]
    fn scaling_by_powers_of_two_is_exact_and_only_where_needed() {
        let x = ArrayD::from_shape_fn(IxDyn(&[4, 5]), |i| (i[0] as f32 - 1.7) * (i[1] as f32 + 0.3));
        assert_eq!(super::power_of_two_scale(&x.view()), None);
        assert_eq!(super::power_of_two_scale(&ArrayD::<f32>::zeros(IxDyn(&[3])).view()), None);
        for factor in [3.3e38f32 / 8.0, 1e11, 1e-10, 1e-40] {
            let big = x.mapv(|v| v * factor);
            let e = super::power_of_two_scale(&big.view()).expect("out of range");
            let near_one = super::scaled(&big.view(), e);
            let largest = near_one.iter().fold(0.0f32, |m, v| m.max(v.abs()));
            assert!((0.5..=2.0).contains(&largest), "{factor}: {largest}");
            // Back exactly (subnormal inputs excepted: they carry fewer bits to begin with).
            if factor > 1e-30 {
                assert_eq!(super::scaled(&near_one.view(), -e), big, "{factor}");
            }
        }
    }
}
