//! The f64 reference of block matching with the device's semantics (same grid, same groups,
//! same thresholds, same weights): what the tests compare against.

use ndarray::{Array3, ArrayD, ArrayView3, ArrayViewD, Ix3, IxDyn};

use super::transform::{haar, haar_inverse};
use super::{as3, Profile, Spec};
use crate::error::{Error, Result};

/// Hard-thresholding decisions closer to the threshold than this, relative to the group's
/// norm, are reported as `near` (f32 may take them the other way).
pub const NEAR: f64 = 2e-6;

/// The matches of the reference block at `q` over `pilot` (their first voxels), best first.
pub fn group(pilot: &ArrayView3<f64>, spec: &Spec, q: [usize; 3]) -> Vec<[usize; 3]> {
    let n = pilot.dim();
    let n = [n.0, n.1, n.2];
    let lo: [usize; 3] = std::array::from_fn(|a| q[a].saturating_sub(spec.win[a]));
    let hi: [usize; 3] = std::array::from_fn(|a| (q[a] + spec.win[a]).min(n[a] - spec.bs[a]));
    let mut found: Vec<(f64, [usize; 3])> = vec![(-1.0, q)];
    for c0 in lo[0]..=hi[0] {
        for c1 in lo[1]..=hi[1] {
            for c2 in lo[2]..=hi[2] {
                let c = [c0, c1, c2];
                if c == q {
                    continue;
                }
                let mut d = 0.0;
                for u0 in 0..spec.bs[0] {
                    for u1 in 0..spec.bs[1] {
                        for u2 in 0..spec.bs[2] {
                            let t = pilot[(q[0] + u0, q[1] + u1, q[2] + u2)] - pilot[(c0 + u0, c1 + u1, c2 + u2)];
                            d += t * t;
                        }
                    }
                }
                found.push((d, c));
            }
        }
    }
    // Stable: equal distances keep the window's (linear) order.
    found.sort_by(|a, b| a.0.total_cmp(&b.0));
    let within = found.iter().filter(|f| f.0 <= spec.cap).count();
    let count = within.max(2.min(found.len())).min(spec.maxn);
    let count = 1 << count.ilog2();
    found[..count].iter().map(|f| f.1).collect()
}

/// One stage over 3-D data: matching on `pilot`, filtering `noisy`. `flip` names hard-
/// thresholding decisions (as `near` reports them) to take the other way. Returns the
/// estimate and the decisions within [`NEAR`] of the threshold, each as reference block ·
/// (maxn · block voxels) + block · voxels + voxel.
pub fn stage(noisy: &ArrayView3<f64>, pilot: &ArrayView3<f64>, spec: &Spec, sigma: f64, flip: &[u64]) -> Result<(Array3<f64>, Vec<u64>)> {
    let (d0, d1, d2) = noisy.dim();
    let shape = [d0, d1, d2];
    if pilot.dim() != noisy.dim() {
        return Err(Error::Shape(format!("a pilot of {:?} for data of {:?}", pilot.dim(), noisy.dim())));
    }
    let tables = spec.tables()?;
    let bs = spec.bs;
    let nb: usize = bs.iter().product();
    let strides = [bs[1] * bs[2], bs[2], 1];
    let g = spec.grid(shape);
    let mut num = Array3::<f64>::zeros(noisy.dim());
    let mut den = Array3::<f64>::zeros(noisy.dim());
    let mut near = Vec::new();
    // The separable transform of each block (rows of `mats`) in place.
    let separable = |blocks: &mut Vec<Vec<f64>>, mats: &[Vec<f64>]| {
        for a in 0..3 {
            let len = bs[a];
            if len == 1 {
                continue;
            }
            for block in blocks.iter_mut() {
                let before = block.clone();
                for (v, out) in block.iter_mut().enumerate() {
                    let c = (v / strides[a]) % len;
                    let first = v - c * strides[a];
                    *out = (0..len).map(|i| mats[a][c * len + i] * before[first + i * strides[a]]).sum();
                }
            }
        }
    };
    // Haar along the group, per voxel.
    let along = |blocks: &mut Vec<Vec<f64>>, inverse: bool| {
        for v in 0..nb {
            let mut x: Vec<f64> = blocks.iter().map(|b| b[v]).collect();
            if inverse {
                haar_inverse(&mut x)
            } else {
                haar(&mut x)
            }
            for (b, value) in blocks.iter_mut().zip(x) {
                b[v] = value;
            }
        }
    };
    let extract = |x: &ArrayView3<f64>, at: [usize; 3]| -> Vec<f64> {
        (0..nb).map(|v| x[(at[0] + v / strides[0], at[1] + (v / strides[1]) % bs[1], at[2] + v % bs[2])]).collect()
    };
    for i0 in 0..g[0] {
        for i1 in 0..g[1] {
            for i2 in 0..g[2] {
                let r = ((i0 * g[1] + i1) * g[2] + i2) as u64;
                let q = [spec.position(0, i0, d0), spec.position(1, i1, d1), spec.position(2, i2, d2)];
                let members = group(pilot, spec, q);
                let mut blocks: Vec<Vec<f64>> = members.iter().map(|&at| extract(noisy, at)).collect();
                let norm = blocks.iter().flatten().map(|v| v * v).sum::<f64>().sqrt();
                separable(&mut blocks, &tables.forward);
                along(&mut blocks, false);
                let weight;
                if spec.wiener {
                    let mut basic: Vec<Vec<f64>> = members.iter().map(|&at| extract(pilot, at)).collect();
                    separable(&mut basic, &tables.forward);
                    along(&mut basic, false);
                    let mut energy = 0.0;
                    for (block, b) in blocks.iter_mut().zip(&basic) {
                        for v in 0..nb {
                            let b2 = b[v] * b[v];
                            let d = b2 + spec.mu2 * sigma * sigma * tables.variance[v];
                            let w = if d > 0.0 { b2 / d } else { 0.0 };
                            block[v] *= w;
                            energy += w * w;
                        }
                    }
                    weight = if energy > 0.0 { 1.0 / energy } else { 1.0 };
                } else {
                    let mut kept = 0usize;
                    for (m, block) in blocks.iter_mut().enumerate() {
                        for (v, c) in block.iter_mut().enumerate() {
                            let t = spec.lambda * sigma * tables.variance[v].sqrt();
                            let id = r * (spec.maxn * nb) as u64 + (m * nb + v) as u64;
                            if (c.abs() - t).abs() <= NEAR * norm {
                                near.push(id);
                            }
                            let keep = (c.abs() > t) != flip.contains(&id);
                            if keep {
                                kept += 1;
                            } else {
                                *c = 0.0;
                            }
                        }
                    }
                    weight = if kept > 0 { 1.0 / kept as f64 } else { 1.0 };
                }
                along(&mut blocks, true);
                separable(&mut blocks, &tables.inverse);
                for (block, at) in blocks.iter().zip(&members) {
                    for (v, value) in block.iter().enumerate() {
                        let x = (at[0] + v / strides[0], at[1] + (v / strides[1]) % bs[1], at[2] + v % bs[2]);
                        num[x] += weight * tables.window[v] * value;
                        den[x] += weight * tables.window[v];
                    }
                }
            }
        }
    }
    Ok((num / den, near))
}

/// bm4d(z, σ, profile) in f64: both stages, the first alone (`ht_only`), or the second on
/// `pilot`; `z`'s shape.
pub fn bm4d(z: &ArrayViewD<f64>, sigma: f64, profile: Option<&Profile>, ht_only: bool, pilot: Option<&ArrayViewD<f64>>) -> Result<ArrayD<f64>> {
    let shape = as3(z.shape())?;
    let profile = profile.cloned().unwrap_or_else(|| Profile::for_shape(shape));
    profile.check(shape)?;
    let three = |x: &ArrayViewD<f64>| -> Result<Array3<f64>> {
        x.to_owned().into_shape_with_order(IxDyn(&shape)).and_then(|a| a.into_dimensionality::<Ix3>()).map_err(|e| Error::Invalid(e.to_string()))
    };
    let z3 = three(z)?;
    let range = |x: &Array3<f64>| x.fold(f64::NEG_INFINITY, |m, &v| m.max(v)) - x.fold(f64::INFINITY, |m, &v| m.min(v));
    let basic = match pilot {
        Some(p) => three(p)?,
        None => stage(&z3.view(), &z3.view(), &profile.spec(false, range(&z3)), sigma, &[])?.0,
    };
    let y = if ht_only { basic } else { stage(&z3.view(), &basic.view(), &profile.spec(true, range(&basic)), sigma, &[])?.0 };
    y.into_shape_with_order(IxDyn(z.shape())).map_err(|e| Error::Invalid(e.to_string()))
}
