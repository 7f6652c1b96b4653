//! Richardson-Lucy on the GPU. The memory plan: three resident arrays of the padded shape (the
//! observed image and the estimate, f32; the OTF, the half spectrum of the wrapped PSF, computed
//! once) and the pooled temporaries of one iteration (the FFTs' scratch, the blurred estimate,
//! the ratio, the correction). One iteration is recorded once and compiled; each run of it
//! updates the estimate in place, so nothing crosses to the host inside the loop except, every
//! `stop.every` iterations, two sums for the stopping rule.

use std::time::Instant;

use ndarray::{ArrayD, ArrayViewD};

use super::{acceleration, prepared_psf, validate, Change, Geometry, Init, Progress, RlOptions, RlReport, RlResult};
use crate::error::Result;
use crate::fft::{FftPlan, Norm, Transform};
use crate::gpu::{Dtype, Gpu, GpuArray};
use crate::graph::{Buf, Compiled, Download, Recording};
use crate::kernels::binary::{self, BinaryOp};
use crate::kernels::rl_ratio;
use crate::kernels::unary::{self, UnaryOp};
use crate::kernels::{copy_vec4, fill, rl_tv, rl_update};
use crate::ops::layout::{self, Boundary as Edge};
use crate::ops::reduce::{self, Reduction};

/// The arrays that stay on the device for the whole run, all of the padded shape.
struct Resident {
    observed: GpuArray,
    estimate: GpuArray,
    /// rfftn of the wrapped PSF.
    otf: GpuArray,
}

/// The stopping rule's recordings: copy the estimate aside, then measure how far it moved (they
/// hold the copy).
struct Monitor {
    snapshot: Compiled,
    measure: Compiled,
    squared_change: Download,
    squared_norm: Download,
}

/// Biggs-Andrews acceleration's arrays and recordings. A first version: α is computed on the host
/// from two sums downloaded after each iteration, and the prediction for α > 0 is recorded
/// afresh with α as a constant (one extra submission and wait per iteration).
struct Accelerator {
    /// xₖ₋₁, then (after the prediction) xₖ.
    previous: GpuArray,
    /// yₖ, the prediction the RL update started from.
    predicted: GpuArray,
    /// The prediction with α = 0 (y = x): copies x aside twice.
    hold: Compiled,
    /// g = x − y, its two sums with gₖ₋₁, then g kept as gₖ₋₁ (in an array only this recording
    /// holds).
    measure: Compiled,
    g_dot_previous: Download,
    previous_squared: Download,
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
    forward: FftPlan,
    inverse: FftPlan,
    resident: Resident,
    iteration: Compiled,
    monitor: Option<Monitor>,
    accelerator: Option<Accelerator>,
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
        let forward = FftPlan::new(gpu, &geometry.padded, &axes, Transform::RealForward, Norm::Backward)?;
        let len = geometry.padded[*axes.last().unwrap()];
        let inverse = FftPlan::new(gpu, forward.output_dims(), &axes, Transform::RealInverse { len }, Norm::Backward)?;
        let (resident, setup_peak_bytes) = upload(gpu, &geometry, image, psf, opts, &forward)?;

        let mut rec = Recording::new(gpu);
        record_iteration(&mut rec, &forward, &inverse, &resident, &geometry, opts)?;
        let iteration = rec.compile()?;
        let monitor = opts.stop.is_some().then(|| monitor(gpu, &resident.estimate)).transpose()?;
        let accelerator = opts.accelerate.then(|| accelerator(gpu, &resident.estimate)).transpose()?;

        let mut peak_bytes = iteration.peak_bytes();
        if let Some(m) = &monitor {
            // Its pool and the copy of the estimate; the estimate itself is counted already.
            peak_bytes += m.measure.peak_bytes() - resident.estimate.buffer.size();
        }
        if let Some(a) = &accelerator {
            // The three resident arrays plus the measurement's temporaries (its pool holds them
            // and the estimate, already counted); the prediction's temporaries are freed first.
            peak_bytes += a.measure.peak_bytes() - resident.estimate.buffer.size();
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
        Ok(RichardsonLucy { gpu, geometry, iterations, opts: *opts, forward, inverse, resident, iteration, monitor, accelerator, report })
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// The report so far (setup time and memory before `run`).
    pub fn report(&self) -> &RlReport {
        &self.report
    }

    /// Records one more iteration on the resident arrays into `rec` (benchmarks record many);
    /// plain RL: without the acceleration, which needs the host between iterations.
    pub fn record_iteration(&self, rec: &mut Recording) -> Result<()> {
        record_iteration(rec, &self.forward, &self.inverse, &self.resident, &self.geometry, &self.opts)
    }

    /// Runs the iterations, calling `progress` after each, then copies the estimate back.
    pub fn run(mut self, mut progress: impl FnMut(Progress)) -> Result<RlResult> {
        let start = Instant::now();
        let mut gpu_ms = Vec::new();
        let mut alpha = 0.0;
        for done in 1..=self.iterations {
            let check = self.opts.stop.filter(|s| done % s.every == 0);
            if let (Some(_), Some(m)) = (check, &self.monitor) {
                m.snapshot.run(self.gpu)?;
            }
            if let Some(a) = &self.accelerator {
                predict(self.gpu, a, &self.resident.estimate, alpha)?;
            }
            let run = self.iteration.run(self.gpu)?;
            gpu_ms.extend(run.report.gpu_ms);
            if let Some(a) = &self.accelerator {
                let r = a.measure.run(self.gpu)?;
                // gₖ₋₁ does not exist before the second iteration (its buffer is unwritten).
                if done >= 2 {
                    alpha = acceleration(r.f32(a.g_dot_previous)?[[0]] as f64, r.f32(a.previous_squared)?[[0]] as f64);
                }
            }
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
        let start = vec![0; self.geometry.image.len()];
        let cropped = layout::crop(&mut rec, eb, &start, &self.geometry.image)?;
        let d = rec.download(cropped);
        rec.run()?.f32(d)
    }
}

/// Pads the observed image and the first estimate to the working shape and computes the OTF,
/// in one submission; returns the resident arrays and the peak memory of that step.
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
    let pads: Vec<(usize, usize)> = geometry.image.iter().zip(&geometry.padded).map(|(&n, &l)| (0, l - n)).collect();
    let observed = layout::pad(&mut rec, img, &pads, Edge::Constant(0.0))?;
    let first = match opts.init {
        Init::Observed => img,
        Init::Constant(c) => {
            let t = rec.temp(&geometry.image, Dtype::F32)?;
            fill::record(&mut rec, t, c);
            t
        }
    };
    let estimate = layout::pad(&mut rec, first, &pads, Edge::Constant(0.0))?;
    let wrapped = geometry.wrap_psf(&prepared_psf(psf, opts.normalize_psf).view()).mapv(|v| v as f32);
    let psf_buf = rec.upload_f32(&wrapped.view())?;
    let otf = forward.record(&mut rec, psf_buf)?;
    let outs = [observed, estimate, otf].map(|b| rec.output(b));
    let compiled = rec.compile()?;
    let peak = compiled.peak_bytes();
    let results = compiled.run(gpu)?;
    let [observed, estimate, otf] = outs.map(|o| results.array(o));
    Ok((Resident { observed, estimate, otf }, peak))
}

/// estimate *= psf* ⊛ (observed / (psf ⊛ estimate + eps)) [× the TV factor], in place.
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
    let tv = opts.tv.map(|lambda| rl_tv::record(rec, e, &geometry.image, geometry.psf.len(), lambda)).transpose()?;
    let blurred = convolve(rec, forward, inverse, e, h, BinaryOp::ComplexMul)?;
    let r = rl_ratio::record(rec, opts.ratio(), o, blurred)?;
    let correction = convolve(rec, forward, inverse, r, h, BinaryOp::ComplexMulConj)?;
    rl_update::record(rec, e, correction, tv)
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

fn accelerator(gpu: &Gpu, estimate: &GpuArray) -> Result<Accelerator> {
    let empty = || GpuArray::empty(gpu, estimate.dims(), Dtype::F32);
    let (previous, predicted, previous_g) = (empty()?, empty()?, empty()?);  // gₖ₋₁ = xₖ − yₖ₋₁
    let mut rec = Recording::new(gpu);
    let (e, p, y) = (rec.input(estimate), rec.input(&previous), rec.input(&predicted));
    copy_vec4::record(&mut rec, e, p)?;
    copy_vec4::record(&mut rec, e, y)?;
    let hold = rec.compile()?;

    let mut rec = Recording::new(gpu);
    let (e, y, gp) = (rec.input(estimate), rec.input(&predicted), rec.input(&previous_g));
    let g = binary::record(&mut rec, BinaryOp::Sub, e, y)?;
    let cross = binary::record(&mut rec, BinaryOp::Mul, g, gp)?;
    let square = binary::record(&mut rec, BinaryOp::Mul, gp, gp)?;
    let cross = reduce::record(&mut rec, cross, Reduction::Sum, None)?;
    let square = reduce::record(&mut rec, square, Reduction::Sum, None)?;
    copy_vec4::record(&mut rec, g, gp)?;
    let (g_dot_previous, previous_squared) = (rec.download(cross), rec.download(square));
    let measure = rec.compile()?;
    Ok(Accelerator { previous, predicted, hold, measure, g_dot_previous, previous_squared })
}

/// y = max(x + α (x − x_previous), 0) into the estimate, keeping x as the previous estimate and
/// y as the prediction.
fn predict(gpu: &Gpu, a: &Accelerator, estimate: &GpuArray, alpha: f64) -> Result<()> {
    if alpha == 0.0 {
        a.hold.run(gpu)?;
        return Ok(());
    }
    let mut rec = Recording::new(gpu);
    let (e, p, y) = (rec.input(estimate), rec.input(&a.previous), rec.input(&a.predicted));
    let step = binary::record(&mut rec, BinaryOp::Sub, e, p)?;
    let step = unary::record(&mut rec, UnaryOp::Scale(alpha as f32), step)?;
    let moved = binary::record(&mut rec, BinaryOp::Add, e, step)?;
    unary::record_into(&mut rec, UnaryOp::MaxScalar(0.0), moved, y)?;
    copy_vec4::record(&mut rec, e, p)?;
    copy_vec4::record(&mut rec, y, e)?;
    rec.run()?;
    Ok(())
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
