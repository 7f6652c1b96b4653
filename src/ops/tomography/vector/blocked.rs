//! SIRT, CGLS and MLEM ([`super::iterative`]) on volumes or projections beyond one buffer: the
//! volume in slabs of slices and the projections in chunks of views ([`super::blocks::plan`]),
//! every piece resident on the device (the whole working set within its memory budget). Each
//! step is a recording per chunk (its projections: the sum over the slabs, [`Views::slab`]) or
//! per slab (its back-projection: the sum over the chunks); CGLS's step sizes and every residual
//! come through the host, summed over the pieces. The same iterates as the whole call, the sums
//! in another order.

use std::ops::Range;

use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn, Slice};

use super::iterative::{masked, sum_squares, Algorithm, Options, Solution, SUM_FLOOR};
use super::{blocks, gpu, Views};
use crate::error::{Error, Result};
use crate::gpu::{Gpu, GpuArray};
use crate::graph::{Buf, Recording};
use crate::kernels::binary::{self, BinaryOp};
use crate::kernels::sirt_update;
use crate::kernels::unary::{self, UnaryOp};
use crate::placement::Progress;

/// The blocks' views and pieces.
struct Layout<'a> {
    views: &'a Views,
    slabs: Vec<Range<usize>>,
    chunks: Vec<Range<usize>>,
}

impl Layout<'_> {
    fn block(&self, s: usize, c: usize) -> Views {
        self.views.subset(&self.chunks[c].clone().collect::<Vec<_>>()).slab(self.slabs[s].clone())
    }

    /// Host array `x` (the volume's or the projections' shape) in device pieces.
    fn upload(&self, gpu: &Gpu, x: &ArrayViewD<f32>, volume: bool) -> Result<Vec<GpuArray>> {
        let (axis, ranges) = if volume { (Axis(0), &self.slabs) } else { (Axis(1), &self.chunks) };
        ranges
            .iter()
            .map(|r| {
                let mut rec = Recording::new(gpu);
                let b = rec.upload_once_f32(&x.slice_axis(axis, Slice::from(r.clone())).as_standard_layout().view())?;
                let o = rec.output(b);
                Ok(rec.run()?.array(o))
            })
            .collect()
    }

    /// Per slab, `value` everywhere.
    fn filled(&self, gpu: &Gpu, value: f32) -> Result<Vec<GpuArray>> {
        let [nx, ny, _] = self.views.dims;
        self.slabs
            .iter()
            .map(|r| {
                let mut rec = Recording::new(gpu);
                let b = rec.temp(&[r.len(), ny, nx], crate::gpu::Dtype::F32)?;
                crate::kernels::fill::record(&mut rec, b, value);
                let o = rec.output(b);
                Ok(rec.run()?.array(o))
            })
            .collect()
    }

    /// Per chunk c: `finish(rec, c, A x)` on its projections Σ_s A_sc x_s, the outputs kept and the
    /// one-element sums downloaded (summed over the chunks).
    fn forward(
        &self,
        gpu: &Gpu,
        x: &[GpuArray],
        o: &Options,
        finish: impl FnMut(&mut Recording, usize, Buf) -> Result<(Vec<Buf>, Vec<Buf>)>,
    ) -> Result<(Vec<Vec<GpuArray>>, Vec<f64>)> {
        self.sweep(gpu, x, true, o, finish)
    }

    /// Per slab s: `finish(rec, s, Aᵀ y)` on its back-projection Σ_c A_scᵀ y_c, as [`Self::forward`].
    fn backward(
        &self,
        gpu: &Gpu,
        y: &[GpuArray],
        o: &Options,
        finish: impl FnMut(&mut Recording, usize, Buf) -> Result<(Vec<Buf>, Vec<Buf>)>,
    ) -> Result<(Vec<Vec<GpuArray>>, Vec<f64>)> {
        self.sweep(gpu, y, false, o, finish)
    }

    /// Both directions: per output piece (a chunk forward, a slab back) the sum over the input
    /// pieces of their blocks' projections or back-projections, then `finish`.
    fn sweep(
        &self,
        gpu: &Gpu,
        input: &[GpuArray],
        forward: bool,
        o: &Options,
        mut finish: impl FnMut(&mut Recording, usize, Buf) -> Result<(Vec<Buf>, Vec<Buf>)>,
    ) -> Result<(Vec<Vec<GpuArray>>, Vec<f64>)> {
        let outputs = if forward { self.chunks.len() } else { self.slabs.len() };
        let (mut kept, mut sums) = (Vec::new(), Vec::new());
        for k in 0..outputs {
            let mut rec = Recording::new(gpu);
            let mut total: Option<Buf> = None;
            for (i, piece) in input.iter().enumerate() {
                let part = if forward { self.block(i, k) } else { self.block(k, i) };
                let setup = gpu::setup(&mut rec, &part)?;
                let x = rec.input(piece);
                let y = if forward {
                    gpu::record_project_for(&mut rec, x, &part, &setup, o.projector)?
                } else {
                    gpu::record_backproject(&mut rec, x, &part, &setup, o.projector)?
                };
                total = Some(match total {
                    Some(t) => binary::record(&mut rec, BinaryOp::Add, t, y)?,
                    None => y,
                });
            }
            let (outs, scalars) = finish(&mut rec, k, total.expect("an input piece"))?;
            let outputs: Vec<_> = outs.iter().map(|&b| rec.output(b)).collect();
            let downloads: Vec<_> = scalars.iter().map(|&b| rec.download(b)).collect();
            let results = rec.run()?;
            sums.resize(downloads.len(), 0.0);
            for (n, d) in downloads.into_iter().enumerate() {
                sums[n] += results.f32(d)?.iter().next().copied().unwrap_or(f32::NAN) as f64;
            }
            kept.push(outputs.into_iter().map(|o| results.array(o)).collect());
        }
        Ok((kept, sums))
    }
}

/// The `k`th output of every piece.
fn column(pieces: &[Vec<GpuArray>], k: usize) -> Vec<GpuArray> {
    pieces.iter().map(|p| p[k].clone()).collect()
}

/// `o.iterations` of SIRT, CGLS or MLEM (inputs checked by the caller) in blocks.
pub fn solve(
    gpu: &Gpu,
    algorithm: Algorithm,
    projections: &ArrayViewD<f32>,
    views: &Views,
    o: &Options,
    progress: &mut dyn FnMut(Progress),
) -> Result<Solution> {
    if !views.three_d {
        return Err(Error::OutOfMemory("a 2D problem beyond one buffer (its image is never cut)".into()));
    }
    let view_bytes = (4 * views.rows * views.cols) as u64;
    let plan = blocks::plan(gpu, views, 1, 1, view_bytes)?;
    let volume = 4 * views.dims.iter().map(|&d| d as u64).product::<u64>();
    let data = view_bytes * views.projections() as u64;
    // Resident: about five volumes and five projection sets, with the blocks' temporaries.
    let need = 5 * volume + 5 * data;
    if need > gpu.memory_budget_bytes() {
        return Err(Error::OutOfMemory(format!(
            "the reconstruction's working set of {need} bytes, beyond this device's memory budget of {} bytes (the solvers keep every piece on the device)",
            gpu.memory_budget_bytes()
        )));
    }
    let l = Layout { views, slabs: plan.slabs, chunks: plan.chunks };
    let b = l.upload(gpu, projections, false)?;
    let mp = o.projection_mask.as_ref().map(|m| l.upload(gpu, &m.view(), false)).transpose()?;
    let mv = o.volume_mask.as_ref().map(|m| l.upload(gpu, &m.view(), true)).transpose()?;
    let start = |value: f32| -> Result<Vec<GpuArray>> {
        match &o.initial {
            Some(x) => l.upload(gpu, &x.view(), true),
            None => l.filled(gpu, value),
        }
    };
    let input_or = |rec: &mut Recording, pieces: &Option<Vec<GpuArray>>, k: usize| pieces.as_ref().map(|p| rec.input(&p[k]));
    let mut residuals = Vec::with_capacity(o.iterations);
    let x = match algorithm {
        Algorithm::Sirt => {
            // R per chunk from A (M_v 1), C per slab from Aᵀ (M_p 1).
            let ones = match &mv {
                Some(m) => m.clone(),
                None => l.filled(gpu, 1.0)?,
            };
            let (r, _) = l.forward(gpu, &ones, o, |rec, c, rows| {
                let r = unary::record(rec, UnaryOp::Reciprocal(SUM_FLOOR), rows)?;
                let m = input_or(rec, &mp, c);
                Ok((vec![masked(rec, r, m)?], vec![]))
            })?;
            let r = column(&r, 0);
            let ones_p: Vec<GpuArray> = match &mp {
                Some(m) => m.clone(),
                None => (0..l.chunks.len()).map(|c| fill_like(gpu, &b[c], 1.0)).collect::<Result<_>>()?,
            };
            let (c, _) = l.backward(gpu, &ones_p, o, |rec, s, cols| {
                let c = unary::record(rec, UnaryOp::Reciprocal(SUM_FLOOR), cols)?;
                let m = input_or(rec, &mv, s);
                Ok((vec![masked(rec, c, m)?], vec![]))
            })?;
            let c = column(&c, 0);
            let (lo, hi) = (o.min.unwrap_or(f32::MIN), o.max.unwrap_or(f32::MAX));
            let mut x = start(0.0)?;
            for _ in 0..o.iterations {
                let (w, sums) = l.forward(gpu, &x, o, |rec, k, ax| {
                    let bk = rec.input(&b[k]);
                    let residual = binary::record(rec, BinaryOp::Sub, bk, ax)?;
                    let m = input_or(rec, &mp, k);
                    let residual = masked(rec, residual, m)?;
                    let sum = sum_squares(rec, residual)?;
                    let rk = rec.input(&r[k]);
                    Ok((vec![binary::record(rec, BinaryOp::Mul, residual, rk)?], vec![sum]))
                })?;
                residuals.push(sums[0].sqrt());
                let w = column(&w, 0);
                let (next, _) = l.backward(gpu, &w, o, |rec, s, v| {
                    let (xs, cs) = (rec.input(&x[s]), rec.input(&c[s]));
                    Ok((vec![sirt_update::record(rec, xs, cs, v, o.relaxation, lo, hi)?], vec![]))
                })?;
                x = column(&next, 0);
                progress(Progress::new("iterations", residuals.len(), o.iterations));
            }
            x
        }
        Algorithm::Cgls => {
            let mut x = start(0.0)?;
            // r = M_p (b − A x), p = M_v Aᵀ r, γ = ‖p‖².
            let (r, _) = l.forward(gpu, &x, o, |rec, k, ax| {
                let bk = rec.input(&b[k]);
                let r = binary::record(rec, BinaryOp::Sub, bk, ax)?;
                let m = input_or(rec, &mp, k);
                Ok((vec![masked(rec, r, m)?], vec![]))
            })?;
            let mut r = column(&r, 0);
            let (p, sums) = l.backward(gpu, &r, o, |rec, s, g| {
                let m = input_or(rec, &mv, s);
                let p = masked(rec, g, m)?;
                let sum = sum_squares(rec, p)?;
                Ok((vec![p], vec![sum]))
            })?;
            let (mut p, mut gamma) = (column(&p, 0), sums[0]);
            for _ in 0..o.iterations {
                residuals.push(norm_of(gpu, &r)?.sqrt());
                let (q, sums) = l.forward(gpu, &p, o, |rec, k, ap| {
                    let m = input_or(rec, &mp, k);
                    let q = masked(rec, ap, m)?;
                    let sum = sum_squares(rec, q)?;
                    Ok((vec![q], vec![sum]))
                })?;
                let q = column(&q, 0);
                let alpha = if sums[0] == 0.0 { 0.0 } else { gamma / sums[0] };
                x = axpy(gpu, &x, &p, alpha)?;
                r = axpy(gpu, &r, &q, -alpha)?;
                let (g, sums) = l.backward(gpu, &r, o, |rec, s, g| {
                    let m = input_or(rec, &mv, s);
                    let g = masked(rec, g, m)?;
                    let sum = sum_squares(rec, g)?;
                    Ok((vec![g], vec![sum]))
                })?;
                let beta = if gamma == 0.0 { 0.0 } else { sums[0] / gamma };
                p = axpy(gpu, &column(&g, 0), &p, beta)?;
                gamma = sums[0];
                progress(Progress::new("iterations", residuals.len(), o.iterations));
            }
            x
        }
        Algorithm::Mlem => {
            let ones_p: Vec<GpuArray> = (0..l.chunks.len()).map(|c| fill_like(gpu, &b[c], 1.0)).collect::<Result<_>>()?;
            let (norm, _) = l.backward(gpu, &ones_p, o, |rec, _, v| Ok((vec![unary::record(rec, UnaryOp::MaxScalar(f32::MIN_POSITIVE), v)?], vec![])))?;
            let norm = column(&norm, 0);
            let mut x = start(1.0)?;
            for _ in 0..o.iterations {
                let (ratio, sums) = l.forward(gpu, &x, o, |rec, k, q| {
                    let bk = rec.input(&b[k]);
                    let residual = binary::record(rec, BinaryOp::Sub, bk, q)?;
                    let sum = sum_squares(rec, residual)?;
                    let (ratio, _) = crate::kernels::em_ratio::record(rec, bk, q, crate::ops::tomography::EM_EPSILON)?;
                    Ok((vec![ratio], vec![sum]))
                })?;
                residuals.push(sums[0].sqrt());
                let (next, _) = l.backward(gpu, &column(&ratio, 0), o, |rec, s, back| {
                    let (xs, ns) = (rec.input(&x[s]), rec.input(&norm[s]));
                    Ok((vec![crate::kernels::em_update::record(rec, xs, back, ns)?], vec![]))
                })?;
                x = column(&next, 0);
                progress(Progress::new("iterations", residuals.len(), o.iterations));
            }
            x
        }
        other => {
            return Err(Error::OutOfMemory(format!(
                "{other:?} beyond one buffer: SIRT, CGLS and MLEM run in blocks, the others need the volume and projections in one buffer each"
            )))
        }
    };
    // The slabs, assembled on the host.
    let mut volume = ArrayD::<f32>::zeros(IxDyn(&views.volume_shape()));
    for (slab, piece) in l.slabs.iter().zip(&x) {
        let got = piece.download_f32(gpu)?;
        let mut target = volume.slice_axis_mut(Axis(0), Slice::from(slab.clone()));
        target.assign(&got.into_shape_with_order(IxDyn(target.shape())).map_err(|e| Error::Shape(e.to_string()))?);
    }
    Ok(Solution { volume, residuals, lipschitz: None })
}

/// An array of `like`'s shape filled with `value`.
fn fill_like(gpu: &Gpu, like: &GpuArray, value: f32) -> Result<GpuArray> {
    let mut rec = Recording::new(gpu);
    let b = rec.temp(like.dims(), crate::gpu::Dtype::F32)?;
    crate::kernels::fill::record(&mut rec, b, value);
    let o = rec.output(b);
    Ok(rec.run()?.array(o))
}

/// Σ ‖x_k‖² over the pieces.
fn norm_of(gpu: &Gpu, x: &[GpuArray]) -> Result<f64> {
    let mut rec = Recording::new(gpu);
    let sums: Vec<_> = x
        .iter()
        .map(|a| {
            let b = rec.input(a);
            sum_squares(&mut rec, b)
        })
        .collect::<Result<_>>()?;
    let downloads: Vec<_> = sums.iter().map(|&s| rec.download(s)).collect();
    let results = rec.run()?;
    let mut total = 0.0;
    for d in downloads {
        total += results.f32(d)?.iter().next().copied().unwrap_or(f32::NAN) as f64;
    }
    Ok(total)
}

/// x + a · y, piece by piece.
fn axpy(gpu: &Gpu, x: &[GpuArray], y: &[GpuArray], a: f64) -> Result<Vec<GpuArray>> {
    let mut rec = Recording::new(gpu);
    let outs: Vec<_> = x
        .iter()
        .zip(y)
        .map(|(xa, ya)| {
            let (xb, yb) = (rec.input(xa), rec.input(ya));
            let scaled = unary::record(&mut rec, UnaryOp::Scale(a as f32), yb)?;
            let sum = binary::record(&mut rec, BinaryOp::Add, xb, scaled)?;
            Ok(rec.output(sum))
        })
        .collect::<Result<_>>()?;
    let results = rec.run()?;
    Ok(outs.into_iter().map(|o| results.array(o)).collect())
}
