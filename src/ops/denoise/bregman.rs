//! scikit-image's split-Bregman total variation (`denoise_tv_bregman`, Goldstein and Osher 2009;
//! `_denoise_tv_bregman` of 0.26): Gauss-Seidel sweeps over an image (rows, cols) whose last
//! axis, if any, is a set of channels solved together (one stopping rule), until the sweep's
//! root mean square change is at most `eps` or `max_num_iter` sweeps. Its raster order is kept
//! exactly on the device: a sweep runs anti-diagonal by anti-diagonal (kernel `tv_bregman`),
//! each seeing its neighbours above and to the left updated and those below and to the right
//! not, as the raster loop does; the stopping rule stays on the device (`tv_bregman_stop`).
//! scikit-image's particulars are kept: the padding reflects the second row and column at the
//! top and left but repeats the last ones at the bottom and right, and with `channel_axis` each
//! channel runs on its own, its split variables starting from the previous channel's result
//! (its `out` array is reused). [`cpu`] is the f64 reference with the same loops.

use ndarray::{s, Array3, ArrayD, ArrayView3, ArrayViewD, Axis, Ix3, IxDyn};

use crate::error::{Error, Result};
use crate::gpu::{Dtype, Gpu, GpuArray};
use crate::graph::Recording;

/// scikit-image's arguments.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bregman {
    pub weight: f64,
    pub max_num_iter: usize,
    pub eps: f64,
    pub isotropic: bool,
}

impl Default for Bregman {
    fn default() -> Bregman {
        Bregman { weight: 5.0, max_num_iter: 100, eps: 1e-3, isotropic: true }
    }
}

impl Bregman {
    fn check(&self) -> Result<()> {
        if !(self.weight.is_finite() && self.weight as f32 >= f32::MIN_POSITIVE && self.weight < 1e30) {
            return Err(Error::Invalid(format!("a split-Bregman TV weight of {} (more than 0, finite)", self.weight)));
        }
        if !(self.eps.is_finite() && self.eps >= 0.0) {
            return Err(Error::Invalid(format!("a split-Bregman stopping tolerance eps of {} (0 or more)", self.eps)));
        }
        Ok(())
    }
}

/// The image as scikit-image's solver sees it, (rows, cols, dims), and the channel axis moved
/// last; fails where scikit-image's reflection cannot (fewer than 2 rows or columns).
fn as3(x: &ArrayViewD<f32>, channel_axis: Option<usize>) -> Result<Array3<f32>> {
    let moved = match channel_axis {
        Some(c) if c >= x.ndim() => return Err(Error::Invalid(format!("channel_axis {c} of an array of {} axes", x.ndim()))),
        Some(c) => {
            let mut axes: Vec<usize> = (0..x.ndim()).filter(|&a| a != c).collect();
            axes.push(c);
            x.view().permuted_axes(axes)
        }
        None => x.view(),
    };
    // numpy's atleast_3d.
    let three = match moved.ndim() {
        1 => moved.insert_axis(Axis(0)).insert_axis(Axis(2)),
        2 => moved.insert_axis(Axis(2)),
        3 => moved,
        n => return Err(Error::Invalid(format!("split-Bregman TV of {n} axes: images (2), with channels or planes last (3)"))),
    };
    let three = three.as_standard_layout().into_owned().into_dimensionality::<Ix3>().map_err(|e| Error::Invalid(e.to_string()))?;
    let (rows, cols, _) = three.dim();
    if rows < 2 || cols < 2 {
        return Err(Error::Invalid(format!("split-Bregman TV of {rows} × {cols}: at least 2 × 2 (scikit-image reflects the second row and column)")));
    }
    Ok(three)
}

/// scikit-image's padded start: the image inside, the second row and column reflected at the
/// top and left, the last ones repeated at the bottom and right, `corners` kept.
fn padded<T: Copy + Default>(image: &ArrayView3<T>, under: Option<&Array3<T>>) -> Array3<T> {
    let (rows, cols, dims) = image.dim();
    let mut out = under.cloned().unwrap_or_else(|| Array3::from_elem((rows + 2, cols + 2, dims), T::default()));
    out.slice_mut(s![1..rows + 1, 1..cols + 1, ..]).assign(image);
    out.slice_mut(s![0, 1..cols + 1, ..]).assign(&image.slice(s![1, .., ..]));
    out.slice_mut(s![1..rows + 1, 0, ..]).assign(&image.slice(s![.., 1, ..]));
    out.slice_mut(s![rows + 1, 1..cols + 1, ..]).assign(&image.slice(s![rows - 1, .., ..]));
    out.slice_mut(s![1..rows + 1, cols + 1, ..]).assign(&image.slice(s![.., cols - 1, ..]));
    out
}

/// Sweeps recorded per submission: about this many dispatches.
const DISPATCHES_PER_RECORDING: usize = 4096;

/// scikit-image's `denoise_tv_bregman(image, weight, max_num_iter, eps, isotropic,
/// channel_axis)` on the device, with `x`'s shape; and the sweeps each solve ran.
pub fn denoise_tv_bregman(gpu: &Gpu, x: &ArrayViewD<f32>, o: &Bregman, channel_axis: Option<usize>) -> Result<(ArrayD<f32>, Vec<usize>)> {
    o.check()?;
    if x.is_empty() {
        return Err(Error::Empty("split-Bregman TV of an empty array".into()));
    }
    crate::check::check_finite(x, "the image")?;
    let image = as3(x, channel_axis)?;
    let (rows, cols, dims) = image.dim();
    let (out, sweeps) = match channel_axis {
        None => {
            let (u, n) = solve(gpu, &image.view(), None, o)?;
            (u.slice(s![1..rows + 1, 1..cols + 1, ..]).to_owned(), vec![n])
        }
        Some(_) => {
            let mut out = Array3::<f32>::zeros((rows, cols, dims));
            let (mut previous, mut sweeps) = (None, Vec::new());
            for c in 0..dims {
                let channel = image.slice(s![.., .., c..c + 1]);
                let (u, n) = solve(gpu, &channel, previous.as_ref(), o)?;
                out.slice_mut(s![.., .., c..c + 1]).assign(&u.slice(s![1..rows + 1, 1..cols + 1, ..]));
                sweeps.push(n);
                previous = Some(u);
            }
            (out, sweeps)
        }
    };
    Ok((restored(out, x.shape(), channel_axis)?, sweeps))
}

/// (rows, cols, dims) back to the caller's shape and axes.
fn restored<T: Clone>(out: Array3<T>, shape: &[usize], channel_axis: Option<usize>) -> Result<ArrayD<T>> {
    match channel_axis {
        Some(c) => {
            let mut moved: Vec<usize> = (0..shape.len()).filter(|&a| a != c).map(|a| shape[a]).collect();
            moved.push(shape[c]);
            let y = out.into_shape_with_order(IxDyn(&moved)).map_err(|e| Error::Invalid(e.to_string()))?;
            let last = shape.len() - 1;
            let mut axes: Vec<usize> = (0..last).collect();
            axes.insert(c, last);
            Ok(y.permuted_axes(axes).as_standard_layout().into_owned())
        }
        None => out.into_shape_with_order(IxDyn(shape)).map_err(|e| Error::Invalid(e.to_string())),
    }
}

/// One solve of (rows, cols, dims) on the device, the split variables starting from `previous`
/// (the last channel's padded result) or zeros: the padded result and the sweeps run.
fn solve(gpu: &Gpu, image: &ArrayView3<f32>, previous: Option<&Array3<f32>>, o: &Bregman) -> Result<(Array3<f32>, usize)> {
    let (rows, cols, dims) = image.dim();
    let u0 = padded(image, previous);
    let split0 = match previous {
        Some(p) => ndarray::concatenate(Axis(0), &[p.view(), p.view(), p.view(), p.view()]).map_err(|e| Error::Invalid(e.to_string()))?,
        None => Array3::zeros((4 * (rows + 2), cols + 2, dims)),
    };
    let im = GpuArray::upload_f32(gpu, &image.to_owned().into_dyn().view())?;
    let mut u = GpuArray::upload_f32(gpu, &u0.into_dyn().view())?;
    let mut split = GpuArray::upload_f32(gpu, &split0.into_dyn().view())?;
    let mut state = GpuArray::upload_f32(gpu, &ArrayD::<f32>::zeros(IxDyn(&[2])).view())?;
    let per_recording = (DISPATCHES_PER_RECORDING / (rows + cols)).max(1);
    let mut done = 0;
    let mut sweeps = 0;
    while done < o.max_num_iter {
        let chunk = (o.max_num_iter - done).min(per_recording);
        let mut rec = Recording::new(gpu);
        let (ib, ub, sb, stb) = (rec.input(&im), rec.input(&u), rec.input(&split), rec.input(&state));
        let change = rec.temp(&[rows, cols, dims], Dtype::F32)?;
        for _ in 0..chunk {
            crate::kernels::tv_bregman::record_sweep(&mut rec, ib, ub, sb, change, stb, o.weight as f32, o.isotropic)?;
            let sum = crate::ops::reduce::record(&mut rec, change, crate::ops::reduce::Reduction::Sum, None)?;
            crate::kernels::tv_bregman_stop::record(&mut rec, sum, stb, rows * cols * dims, o.eps as f32);
        }
        let (uo, so, sto) = (rec.output(ub), rec.output(sb), rec.output(stb));
        let d = rec.download(stb);
        let results = rec.run()?;
        let s = results.f32(d)?;
        (u, split, state) = (results.array(uo), results.array(so), results.array(sto));
        done += chunk;
        sweeps = s[[1]] as usize;
        if s[[0]] != 0.0 {
            break;
        }
    }
    let u = u.download_f32(gpu)?.into_dimensionality::<Ix3>().map_err(|e| Error::Invalid(e.to_string()))?;
    Ok((u, sweeps))
}

/// The f64 reference: scikit-image's loops, with `x`'s shape; and the sweeps each solve ran.
pub fn cpu(x: &ArrayViewD<f64>, o: &Bregman, channel_axis: Option<usize>) -> Result<(ArrayD<f64>, Vec<usize>)> {
    cpu_sweeps(x, o, channel_axis, None)
}

/// [`cpu`] with each solve (each channel where they run apart) running exactly `sweeps[i]`
/// sweeps where given, whatever the stopping rule says.
pub fn cpu_sweeps(x: &ArrayViewD<f64>, o: &Bregman, channel_axis: Option<usize>, sweeps_given: Option<&[usize]>) -> Result<(ArrayD<f64>, Vec<usize>)> {
    o.check()?;
    let image = as3(&x.mapv(|v| v as f32).view(), channel_axis)?;
    // as3 checked the shape; the data itself in f64.
    let moved = match channel_axis {
        Some(c) => {
            let mut axes: Vec<usize> = (0..x.ndim()).filter(|&a| a != c).collect();
            axes.push(c);
            x.view().permuted_axes(axes).as_standard_layout().into_owned()
        }
        None => x.as_standard_layout().into_owned(),
    };
    let image64 = moved
        .into_shape_with_order(IxDyn(image.shape()))
        .map_err(|e| Error::Invalid(e.to_string()))?
        .into_dimensionality::<Ix3>()
        .map_err(|e| Error::Invalid(e.to_string()))?;
    let (rows, cols, dims) = image64.dim();
    let mut out = Array3::<f64>::zeros((rows, cols, dims));
    let mut sweeps = Vec::new();
    let mut previous: Option<Array3<f64>> = None;
    let groups: Vec<std::ops::Range<usize>> = if channel_axis.is_some() { (0..dims).map(|c| c..c + 1).collect() } else { std::iter::once(0..dims).collect() };
    for (i, g) in groups.into_iter().enumerate() {
        let channel = image64.slice(s![.., .., g.clone()]);
        let o = match sweeps_given {
            Some(n) => Bregman { max_num_iter: n[i], eps: -1.0, ..*o },
            None => *o,
        };
        let (u, n) = solve_cpu(&channel, previous.as_ref(), &o);
        out.slice_mut(s![.., .., g]).assign(&u.slice(s![1..rows + 1, 1..cols + 1, ..]));
        sweeps.push(n);
        previous = Some(u);
    }
    Ok((restored(out, x.shape(), channel_axis)?, sweeps))
}

fn solve_cpu(image: &ArrayView3<f64>, previous: Option<&Array3<f64>>, o: &Bregman) -> (Array3<f64>, usize) {
    let (rows, cols, dims) = image.dim();
    let zeros = Array3::<f64>::zeros((rows + 2, cols + 2, dims));
    let start = previous.unwrap_or(&zeros);
    let (mut dx, mut dy, mut bx, mut by) = (start.clone(), start.clone(), start.clone(), start.clone());
    let mut u = padded(image, previous);
    let (weight, lam) = (o.weight, 2.0 * o.weight);
    let norm = weight + 4.0 * lam;
    let total = (rows * cols * dims) as f64;
    let (mut i, mut rmse) = (0, f64::MAX);
    while i < o.max_num_iter && rmse > o.eps {
        rmse = 0.0;
        for r in 1..=rows {
            for c in 1..=cols {
                for k in 0..dims {
                    let uprev = u[(r, c, k)];
                    let ux = u[(r, c + 1, k)] - uprev;
                    let uy = u[(r + 1, c, k)] - uprev;
                    let unew = (lam
                        * (u[(r + 1, c, k)] + u[(r - 1, c, k)] + u[(r, c + 1, k)] + u[(r, c - 1, k)] + dx[(r, c - 1, k)] - dx[(r, c, k)] + dy[(r - 1, c, k)]
                            - dy[(r, c, k)]
                            - bx[(r, c - 1, k)]
                            + bx[(r, c, k)]
                            - by[(r - 1, c, k)]
                            + by[(r, c, k)])
                        + weight * image[(r - 1, c - 1, k)])
                        / norm;
                    u[(r, c, k)] = unew;
                    rmse += (unew - uprev) * (unew - uprev);
                    let (bxx, byy) = (bx[(r, c, k)], by[(r, c, k)]);
                    let (dxx, dyy) = if o.isotropic {
                        let (tx, ty) = (ux + bxx, uy + byy);
                        let s = (tx * tx + ty * ty).sqrt();
                        (s * lam * tx / (s * lam + 1.0), s * lam * ty / (s * lam + 1.0))
                    } else {
                        let shrink = |s: f64| {
                            if s > 1.0 / lam {
                                s - 1.0 / lam
                            } else if s < -1.0 / lam {
                                s + 1.0 / lam
                            } else {
                                0.0
                            }
                        };
                        (shrink(ux + bxx), shrink(uy + byy))
                    };
                    dx[(r, c, k)] = dxx;
                    dy[(r, c, k)] = dyy;
                    bx[(r, c, k)] += ux - dxx;
                    by[(r, c, k)] += uy - dyy;
                }
            }
        }
        rmse = (rmse / total).sqrt();
        i += 1;
    }
    (u, i)
}
