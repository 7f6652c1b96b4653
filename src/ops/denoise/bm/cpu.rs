//! The f64 reference of block matching with the device's semantics (same grid, same groups,
//! same thresholds, same weights): what the tests compare against.

use ndarray::{Array4, ArrayD, ArrayView4, ArrayViewD, Ix4, IxDyn};

use super::transform::{haar, haar_inverse};
use super::{as4, Covariance, Noise, Penalty, Profile, Spec};
use crate::error::{Error, Result};

/// The range (max − min) of `x`, in f64: the matching cap's (the device's from its extrema).
pub fn range<D: ndarray::Dimension>(x: &ndarray::ArrayView<f64, D>) -> f64 {
    let (lo, hi) = x.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    hi - lo
}

/// Hard-thresholding decisions closer to the threshold than this, relative to the group's
/// norm, are reported as `near` (f32 may take them the other way).
pub const NEAR: f64 = 2e-6;

/// The matches of the reference block at `q` over `pilot` (their first voxels), best first;
/// with correlated noise's `penalty` added to the distances as the device adds it (in f32).
pub fn group(pilot: &ArrayView4<f64>, spec: &Spec, q: [usize; 4], penalty: Option<&Penalty>) -> Vec<[usize; 4]> {
    let n = pilot.dim();
    let n = [n.0, n.1, n.2, n.3];
    let lo: [usize; 4] = std::array::from_fn(|a| q[a].saturating_sub(spec.win[a]));
    let hi: [usize; 4] = std::array::from_fn(|a| (q[a] + spec.win[a]).min(n[a] - spec.bs[a]));
    let voxels: usize = spec.bs.iter().product();
    let mut found: Vec<(f64, [usize; 4])> = Vec::new();
    for c0 in lo[0]..=hi[0] {
        for c1 in lo[1]..=hi[1] {
            for c2 in lo[2]..=hi[2] {
                for c3 in lo[3]..=hi[3] {
                    let c = [c0, c1, c2, c3];
                    let d = if c == q {
                        -1.0
                    } else {
                        let d: f64 = (0..voxels)
                            .map(|v| {
                                let u = spec.coords(v);
                                let t = pilot[at(q, u)] - pilot[at(c, u)];
                                t * t
                            })
                            .sum();
                        match penalty {
                            Some(p) => (d as f32 + p.at(std::array::from_fn(|a| c[a] as isize - q[a] as isize))).max(0.0) as f64,
                            None => d,
                        }
                    };
                    found.push((d, c));
                }
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

/// The voxel at offset `u` in the block at `q`.
fn at(q: [usize; 4], u: [usize; 4]) -> (usize, usize, usize, usize) {
    (q[0] + u[0], q[1] + u[1], q[2] + u[2], q[3] + u[3])
}

/// One stage over 4-D data (t, z, y, x): matching on `pilot`, filtering `noisy`. `flip` names hard-
/// thresholding decisions (as `near` reports them) to take the other way. Returns the
/// estimate and the decisions within [`NEAR`] of the threshold, each as reference block ·
/// (maxn · block voxels) + block · voxels + voxel.
pub fn stage(noisy: &ArrayView4<f64>, pilot: &ArrayView4<f64>, spec: &Spec, noise: &Covariance, flip: &[u64]) -> Result<(Array4<f64>, Vec<u64>)> {
    let (d0, d1, d2, d3) = noisy.dim();
    let shape = [d0, d1, d2, d3];
    if pilot.dim() != noisy.dim() {
        return Err(Error::Shape(format!("a pilot of {:?} for data of {:?}", pilot.dim(), noisy.dim())));
    }
    let tables = spec.tables(noise, shape)?;
    let penalty = spec.penalty(noise);
    // A_v(Δ) of correlated noise, 0 beyond the reach.
    let volume: usize = tables.reach.iter().map(|r| 2 * r + 1).product();
    let spread = |v: usize, d: [isize; 4]| -> f64 {
        match (&tables.spread, super::noise::lag_index(tables.reach, d)) {
            (Some(s), Some(i)) => s[v * volume + i],
            _ => 0.0,
        }
    };
    let bs = spec.bs;
    let nb: usize = bs.iter().product();
    let strides = [bs[1] * bs[2] * bs[3], bs[2] * bs[3], bs[3], 1];
    let g = spec.grid(shape);
    let mut num = Array4::<f64>::zeros(noisy.dim());
    let mut den = Array4::<f64>::zeros(noisy.dim());
    let mut near = Vec::new();
    // The separable transform of each block (rows of `mats`) in place.
    let separable = |blocks: &mut Vec<Vec<f64>>, mats: &[Vec<f64>]| {
        for a in 0..4 {
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
    let extract = |x: &ArrayView4<f64>, q: [usize; 4]| -> Vec<f64> { (0..nb).map(|v| x[at(q, spec.coords(v))]).collect() };
    let refs: usize = g.iter().product();
    {
        {
            for r in 0..refs {
                let i = [r / (g[1] * g[2] * g[3]), (r / (g[2] * g[3])) % g[1], (r / g[3]) % g[2], r % g[3]];
                let q: [usize; 4] = std::array::from_fn(|a| spec.position(a, i[a], shape[a]));
                let r = r as u64;
                let members = group(pilot, spec, q, penalty.as_ref());
                // Each group coefficient's noise variance (h: along the group, v: in the block):
                // Σ_{m,m'} H_h(m) H_h(m') A_v(p_m − p_m') for correlated noise, the block's
                // variance for white noise; and its share over white noise's, at least 2⁻¹².
                let n = members.len();
                let haars: Vec<Vec<f64>> = (0..n)
                    .map(|m| {
                        let mut x = vec![0.0; n];
                        x[m] = 1.0;
                        haar(&mut x);
                        x
                    })
                    .collect();
                let variance: Vec<Vec<f64>> = (0..n)
                    .map(|h| {
                        (0..nb)
                            .map(|v| match tables.spread {
                                None => tables.variance[v],
                                Some(_) => {
                                    let mut acc = 0.0;
                                    for (i, a) in members.iter().enumerate() {
                                        for (j, b) in members.iter().enumerate() {
                                            acc += haars[i][h] * haars[j][h] * spread(v, std::array::from_fn(|k| a[k] as isize - b[k] as isize));
                                        }
                                    }
                                    acc.max(0.0)
                                }
                            })
                            .collect()
                    })
                    .collect();
                let share = |h: usize, v: usize| (variance[h][v] / tables.white[v]).max(1.0 / 4096.0);
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
                    for (m, (block, b)) in blocks.iter_mut().zip(&basic).enumerate() {
                        for v in 0..nb {
                            let b2 = b[v] * b[v];
                            let d = b2 + spec.mu2 * variance[m][v];
                            let w = if d > 0.0 { b2 / d } else { 0.0 };
                            block[v] *= w;
                            energy += w * w * share(m, v);
                        }
                    }
                    weight = 1.0 / energy.max(1.0 / 4096.0);
                } else {
                    let mut kept = 0.0;
                    for (m, block) in blocks.iter_mut().enumerate() {
                        for (v, c) in block.iter_mut().enumerate() {
                            let t = spec.lambda * variance[m][v].sqrt();
                            let id = r * (spec.maxn * nb) as u64 + (m * nb + v) as u64;
                            if (c.abs() - t).abs() <= NEAR * norm {
                                near.push(id);
                            }
                            let keep = (c.abs() > t) != flip.contains(&id);
                            if keep {
                                kept += share(m, v);
                            } else {
                                *c = 0.0;
                            }
                        }
                    }
                    weight = if kept > 0.0 { 1.0 / kept } else { 1.0 };
                }
                along(&mut blocks, true);
                separable(&mut blocks, &tables.inverse);
                for (block, &first) in blocks.iter().zip(&members) {
                    for (v, value) in block.iter().enumerate() {
                        let x = at(first, spec.coords(v));
                        num[x] += weight * tables.window[v] * value;
                        den[x] += weight * tables.window[v];
                    }
                }
            }
        }
    }
    Ok((num / den, near))
}

/// bm4d(z, sigma_psd, profile) in f64: both stages, the first alone (`ht_only`), or the second
/// on `pilot`; `z`'s shape.
pub fn bm4d(z: &ArrayViewD<f64>, noise: &Noise, profile: Option<&Profile>, ht_only: bool, pilot: Option<&ArrayViewD<f64>>) -> Result<ArrayD<f64>> {
    let shape = as4(z.shape())?;
    let (profile, noise) = super::resolve(shape, noise, profile)?;
    let three = |x: &ArrayViewD<f64>| -> Result<Array4<f64>> {
        x.to_owned().into_shape_with_order(IxDyn(&shape)).and_then(|a| a.into_dimensionality::<Ix4>()).map_err(|e| Error::Invalid(e.to_string()))
    };
    let z3 = three(z)?;
    let basic = match pilot {
        Some(p) => three(p)?,
        None => stage(&z3.view(), &z3.view(), &profile.spec(false, range(&z3.view())), &noise, &[])?.0,
    };
    let y = if ht_only { basic } else { stage(&z3.view(), &basic.view(), &profile.spec(true, range(&basic.view())), &noise, &[])?.0 };
    y.into_shape_with_order(IxDyn(z.shape())).map_err(|e| Error::Invalid(e.to_string()))
}
