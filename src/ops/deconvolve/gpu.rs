//! Richardson-Lucy on the GPU. The memory plan: three resident arrays of the padded shape (the
//! observed image and the estimate, f32; the OTF, the half spectrum of the wrapped PSF, computed
//! once) and the pooled temporaries of one iteration (the FFTs' scratch, the blurred estimate,
//! the ratio, the correction; with Biggs-Andrews acceleration three more resident arrays and two
//! 1-element sums, see [`Accelerated`]; with [`super::RlBoundary::Extended`] one more, the inverse
//! weights). One iteration is recorded once and compiled; each run of it
//! updates the estimate in place, so nothing crosses to the host inside the loop except, every
//! `stop.every` iterations, two sums for the stopping rule.

use std::sync::Arc;
use std::time::Instant;

use ndarray::{ArrayD, ArrayViewD};

use super::{prepared_psf, validate, Change, Geometry, Init, Progress, RlOptions, RlReport, RlResult};
use crate::error::Result;
use crate::fft::{FftPlan, Norm, Transform};
use crate::gpu::{Dtype, Gpu, GpuArray};
use crate::graph::{Buf, Compiled, Download, Output, Recording};
use crate::kernels::binary::{self, BinaryOp};
use crate::kernels::rl_ratio;
use crate::kernels::{copy_vec4, fill, rl_predict, rl_tv, rl_update};
use crate::ops::layout::{self, Boundary as Edge};
use crate::ops::reduce::{self, Reduction};

/// The arrays that stay on the device for the whole run, all of the padded shape.
struct Resident {
    observed: GpuArray,
    estimate: GpuArray,
    /// rfftn of the wrapped PSF.
    otf: GpuArray,
    /// Bertero-Boccacci's 1 / max(Hᵀ M, floor), with [`super::RlBoundary::Extended`].
    inverse_weight: Option<GpuArray>,
    accelerated: Option<Accelerated>,
}

/// The stopping rule's recordings: copy the estimate aside, then measure how far it moved (they
/// hold the copy).
struct Monitor {
    snapshot: Compiled,
    measure: Compiled,
    squared_change: Download,
    squared_norm: Download,
}

/// Biggs-Andrews acceleration's resident arrays (all zero at the start, which makes α = 0 for
/// the first two iterations: there is no gₖ₋₁ yet). The whole step stays on the device: the
/// prediction kernel derives α from the two sums the previous iteration left.
struct Accelerated {
    /// xₖ₋₁ before the prediction, xₖ after it.
    previous: GpuArray,
    /// yₖ, the prediction the RL update starts from.
    predicted: GpuArray,
    /// gₖ₋₁ = xₖ − yₖ₋₁.
    previous_g: GpuArray,
    /// Σ gₖ·gₖ₋₁ and Σ gₖ₋₁·gₖ₋₁ (one element each).
    cross: GpuArray,
    square: GpuArray,
}

/// A Richardson-Lucy run whose working set lives on the GPU: `new` validates, uploads, pads,
/// computes the OTF and compiles one iteration; `run` repeats it.
///
/// ```no_run
/// # use lucent::ops::deconvolve::{RichardsonLucy, RlOptions};
/// # fn f(gpu: &lucent::Gpu, image: ndarray::ArrayD<f32>, psf: ndarray::ArrayD<f32>) -> lucent::Result<()> {
/// let rl = RichardsonLucy::new(gpu, &image.view(), &psf.view(), 30, &RlOptions::default())?;
/// let result = rl.run(|p| eprintln!("{}/{}", p.done, p.total))?;
/// println!("{:.3} ms per iteration, {} bytes", result.report.ms_per_iteration, result.report.peak_bytes);
/// # Ok(()) }
/// ```
pub struct RichardsonLucy<'g> {
    gpu: &'g Gpu,
    geometry: Geometry,
    iterations: usize,
    opts: RlOptions,
    forward: Arc<FftPlan>,
    inverse: Arc<FftPlan>,
    resident: Resident,
    iteration: Compiled,
    monitor: Option<Monitor>,
    report: RlReport,
}

impl<'g> RichardsonLucy<'g> {
    /// Validates (see [`super::validate`]) and prepares `iterations` iterations.
    pub fn new(
        gpu: &'g Gpu,
        image: &ArrayViewD<f32>,
        psf: &ArrayViewD<f32>,
        iterations: usize,
        opts: &RlOptions,
    ) -> Result<RichardsonLucy<'g>> {
        let start = Instant::now();
        let geometry = validate(image, psf, iterations, opts)?;
        let axes = geometry.spatial_axes();
        let forward = FftPlan::cached(gpu, &geometry.padded, &axes, Transform::RealForward, Norm::Backward)?;
        let len = geometry.padded[*axes.last().unwrap()];
        let inverse = FftPlan::cached(gpu, forward.output_dims(), &axes, Transform::RealInverse { len }, Norm::Backward)?;
        let image = super::observed(image, opts);
        let (resident, setup_peak_bytes) = upload(gpu, &geometry, &image.view(), psf, opts, &forward)?;

        let mut rec = Recording::new(gpu);
        record_iteration(&mut rec, &forward, &inverse, &resident, &geometry, opts)?;
        let iteration = rec.compile()?;
        let monitor = opts.stop.is_some().then(|| monitor(gpu, &resident.estimate)).transpose()?;

        let mut peak_bytes = iteration.peak_bytes();
        if let Some(m) = &monitor {
            // Its pool and the copy of the estimate; the estimate itself is counted already.
            peak_bytes += m.measure.peak_bytes() - resident.estimate.buffer.size();
        }

        let report = RlReport {
            device: format!("gpu: {}", gpu.summary().name),
            geometry: Some(geometry.clone()),
            setup_ms: ms_since(start),
            peak_bytes,
            setup_peak_bytes,
            dispatches_per_iteration: iteration.dispatches(),
            ..Default::default()
        };
        Ok(RichardsonLucy { gpu, geometry, iterations, opts: *opts, forward, inverse, resident, iteration, monitor, report })
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// The report so far (setup time and memory before `run`).
    pub fn report(&self) -> &RlReport {
        &self.report
    }

    /// Records one more iteration on the resident arrays into `rec` (benchmarks record many).
    pub fn record_iteration(&self, rec: &mut Recording) -> Result<()> {
        record_iteration(rec, &self.forward, &self.inverse, &self.resident, &self.geometry, &self.opts)
    }

    /// Runs the iterations, calling `progress` after each, then copies the estimate back.
    pub fn run(mut self, mut progress: impl FnMut(Progress)) -> Result<RlResult> {
        let start = Instant::now();
        let mut gpu_ms = Vec::new();
        for done in 1..=self.iterations {
            let check = self.opts.stop.filter(|s| done % s.every == 0);
            if let (Some(_), Some(m)) = (check, &self.monitor) {
                m.snapshot.run(self.gpu)?;
            }
            let run = self.iteration.run(self.gpu)?;
            gpu_ms.extend(run.report.gpu_ms);
            let change = match (check, &self.monitor) {
                (Some(_), Some(m)) => Some(relative_change(self.gpu, m)?),
                _ => None,
            };
            self.report.iterations = done;
            progress(Progress { done, total: self.iterations, relative_change: change });
            if let (Some(rule), Some(c)) = (check, change) {
                self.report.changes.push(Change { iteration: done, relative_change: c });
                if c < rule.tolerance {
                    self.report.stopped_early = done < self.iterations;
                    break;
                }
            }
        }
        self.report.iterate_ms = ms_since(start);
        self.report.ms_per_iteration = self.report.iterate_ms / self.report.iterations as f64;
        self.report.gpu_ms_per_iteration = median(&mut gpu_ms);
        let start = Instant::now();
        let estimate = self.estimate()?;
        self.report.download_ms = ms_since(start);
        Ok(RlResult { estimate, report: self.report })
    }

    /// The current estimate, cropped to the image.
    pub fn estimate(&self) -> Result<ArrayD<f32>> {
        let e = &self.resident.estimate;
        if !self.geometry.is_padded() {
            return e.download_f32(self.gpu);
        }
        let mut rec = Recording::new(self.gpu);
        let eb = rec.input(e);
        let cropped = layout::crop(&mut rec, eb, &self.geometry.offset, &self.geometry.image)?;
        let d = rec.download(cropped);
        rec.run()?.into_f32(d)
    }
}

/// Pads the observed image and the first estimate to the working shape and computes the OTF
/// (with [`super::RlBoundary::Extended`] also uploads the inverse weights), in one submission;
/// returns the resident arrays and the peak memory of that step.
fn upload(
    gpu: &Gpu,
    geometry: &Geometry,
    image: &ArrayViewD<f32>,
    psf: &ArrayViewD<f32>,
    opts: &RlOptions,
    forward: &FftPlan,
) -> Result<(Resident, u64)> {
    let mut rec = Recording::new(gpu);
    let img = rec.upload_f32(image)?;
    let observed = place(&mut rec, geometry, img)?;
    let first = match opts.init {
        Init::Observed => img,
        Init::Constant(c) => {
            let t = rec.temp(&geometry.image, Dtype::F32)?;
            fill::record(&mut rec, t, c);
            t
        }
    };
    let estimate = first_estimate(&mut rec, geometry, first)?;
    let psf = prepared_psf(psf, opts.normalize_psf);
    let wrapped = geometry.wrap_psf(&psf.view()).mapv(|v| v as f32);
    let psf_buf = rec.upload_f32(&wrapped.view())?;
    let otf = forward.record(&mut rec, psf_buf)?;
    let outs = [observed, estimate, otf].map(|b| rec.output(b));
    // Exact box sums on the host (see Geometry::inverse_weights), not an f32 transform of M.
    let weights = match geometry.is_extended() {
        true => Some(rec.upload_f32(&geometry.inverse_weights(&psf.view()).mapv(|v| v as f32).view())?),
        false => None,
    };
    let weights = weights.map(|w| rec.output(w));
    let accelerated = opts.accelerate.then(|| record_zeros(&mut rec, &geometry.padded)).transpose()?;
    let compiled = rec.compile()?;
    let peak = compiled.peak_bytes();
    let results = compiled.run(gpu)?;
    let [observed, estimate, otf] = outs.map(|o| results.array(o));
    let accelerated = accelerated.map(|[previous, predicted, previous_g, cross, square]| {
        let [previous, predicted, previous_g, cross, square] = [previous, predicted, previous_g, cross, square].map(|o| results.array(o));
        Accelerated { previous, predicted, previous_g, cross, square }
    });
    let inverse_weight = weights.map(|w| results.array(w));
    Ok((Resident { observed, estimate, otf, inverse_weight, accelerated }, peak))
}

/// The image at [`Geometry::offset`] in a zero array of the padded shape.
fn place(rec: &mut Recording, g: &Geometry, x: Buf) -> Result<Buf> {
    let pads: Vec<(usize, usize)> = (0..g.image.len()).map(|d| (g.offset[d], g.padded[d] - g.image[d] - g.offset[d])).collect();
    layout::pad(rec, x, &pads, Edge::Constant(0.0))
}

/// As [`Geometry::first_estimate`]: `x` placed in the padded array, the rest of the support
/// filled with its nearest element, zero beyond.
fn first_estimate(rec: &mut Recording, g: &Geometry, x: Buf) -> Result<Buf> {
    if !g.is_extended() {
        return place(rec, g, x);
    }
    let nearest: Vec<(usize, usize)> = (0..g.image.len()).map(|d| (g.offset[d], g.support[d] - g.image[d] - g.offset[d])).collect();
    let extended = layout::pad(rec, x, &nearest, Edge::Nearest)?;
    let zeros: Vec<(usize, usize)> = (0..g.image.len()).map(|d| (0, g.padded[d] - g.support[d])).collect();
    layout::pad(rec, extended, &zeros, Edge::Constant(0.0))
}

/// The acceleration's arrays, zero: xₖ₋₁, yₖ and gₖ₋₁ of the padded shape, then the two sums.
fn record_zeros(rec: &mut Recording, padded: &[usize]) -> Result<[Output; 5]> {
    let mut zeros = |dims: &[usize]| -> Result<Output> {
        let t = rec.temp(dims, Dtype::F32)?;
        fill::record(rec, t, 0.0);
        Ok(rec.output(t))
    };
    Ok([zeros(padded)?, zeros(padded)?, zeros(padded)?, zeros(&[1])?, zeros(&[1])?])
}

/// estimate *= psf* ⊛ (observed / (psf ⊛ estimate + eps)) [× the TV factor] [× the inverse
/// weights], in place.
fn record_iteration(
    rec: &mut Recording,
    forward: &FftPlan,
    inverse: &FftPlan,
    res: &Resident,
    geometry: &Geometry,
    opts: &RlOptions,
) -> Result<()> {
    let e = rec.input(&res.estimate);
    let o = rec.input(&res.observed);
    let h = rec.input(&res.otf);
    let predicted = res.accelerated.as_ref().map(|a| record_prediction(rec, a, e)).transpose()?;
    let tv = opts.tv.map(|lambda| rl_tv::record(rec, e, &geometry.support, geometry.psf.len(), lambda)).transpose()?;
    let blurred = convolve(rec, forward, inverse, e, h, BinaryOp::ComplexMul)?;
    let r = rl_ratio::record(rec, opts.ratio(), o, blurred)?;
    let correction = convolve(rec, forward, inverse, r, h, BinaryOp::ComplexMulConj)?;
    let w = res.inverse_weight.as_ref().map(|w| rec.input(w));
    rl_update::record_weighted(rec, e, correction, tv, w)?;
    match (&res.accelerated, predicted) {
        (Some(a), Some(y)) => record_step_sums(rec, a, e, y),
        _ => Ok(()),
    }
}

/// irfftn(rfftn(x) · h), or with conj(h) (the adjoint) for `ComplexMulConj`.
fn convolve(rec: &mut Recording, forward: &FftPlan, inverse: &FftPlan, x: Buf, h: Buf, op: BinaryOp) -> Result<Buf> {
    let spectrum = forward.record(rec, x)?;
    let product = binary::record(rec, op, spectrum, h)?;
    inverse.record(rec, product)
}

fn monitor(gpu: &Gpu, estimate: &GpuArray) -> Result<Monitor> {
    let previous = GpuArray::empty(gpu, estimate.dims(), Dtype::F32)?;
    let mut rec = Recording::new(gpu);
    let (e, p) = (rec.input(estimate), rec.input(&previous));
    copy_vec4::record(&mut rec, e, p)?;
    let snapshot = rec.compile()?;

    let mut rec = Recording::new(gpu);
    let (e, p) = (rec.input(estimate), rec.input(&previous));
    let d = binary::record(&mut rec, BinaryOp::Sub, e, p)?;
    let d2 = binary::record(&mut rec, BinaryOp::Mul, d, d)?;
    let e2 = binary::record(&mut rec, BinaryOp::Mul, e, e)?;
    let change = reduce::record(&mut rec, d2, Reduction::Sum, None)?;
    let norm = reduce::record(&mut rec, e2, Reduction::Sum, None)?;
    let (squared_change, squared_norm) = (rec.download(change), rec.download(norm));
    let measure = rec.compile()?;
    Ok(Monitor { snapshot, measure, squared_change, squared_norm })
}

/// yₖ = max(xₖ + α (xₖ − xₖ₋₁), 0) becomes the estimate the RL update starts from; xₖ is kept
/// as the previous estimate and yₖ as the prediction.
fn record_prediction(rec: &mut Recording, a: &Accelerated, e: Buf) -> Result<Buf> {
    let (p, y) = (rec.input(&a.previous), rec.input(&a.predicted));
    let (cross, square) = (rec.input(&a.cross), rec.input(&a.square));
    rl_predict::record_into(rec, e, p, cross, square, y)?;
    copy_vec4::record(rec, e, p)?;
    copy_vec4::record(rec, y, e)?;
    Ok(y)
}

/// gₖ = xₖ₊₁ − yₖ; the sums Σ gₖ·gₖ₋₁ and Σ gₖ₋₁·gₖ₋₁ for the next prediction; gₖ kept.
fn record_step_sums(rec: &mut Recording, a: &Accelerated, e: Buf, y: Buf) -> Result<()> {
    let gp = rec.input(&a.previous_g);
    let g = binary::record(rec, BinaryOp::Sub, e, y)?;
    let cross = binary::record(rec, BinaryOp::Mul, g, gp)?;
    let square = binary::record(rec, BinaryOp::Mul, gp, gp)?;
    let cross = reduce::record(rec, cross, Reduction::Sum, None)?;
    let square = reduce::record(rec, square, Reduction::Sum, None)?;
    let (cross_out, square_out) = (rec.input(&a.cross), rec.input(&a.square));
    copy_vec4::record(rec, cross, cross_out)?;
    copy_vec4::record(rec, square, square_out)?;
    copy_vec4::record(rec, g, gp)
}

/// ‖x − x_previous‖ / ‖x‖ from the monitor's two sums.
fn relative_change(gpu: &Gpu, m: &Monitor) -> Result<f64> {
    let r = m.measure.run(gpu)?;
    let change = r.f32(m.squared_change)?[[0]] as f64;
    let norm = r.f32(m.squared_norm)?[[0]] as f64;
    Ok(if norm > 0.0 { (change / norm).sqrt() } else if change > 0.0 { f64::INFINITY } else { 0.0 })
}

fn median(v: &mut [f64]) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    (!v.is_empty()).then(|| v[v.len() / 2])
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}
