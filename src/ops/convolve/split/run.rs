//! Running the split on the GPUs: choosing P on the first device, then a pipeline that keeps
//! every GPU busy while the host folds and recombines.
//!
//! # What overlaps
//! One thread folds the next parts' slabs ([`super::host`]'s twiddled sums, parallel over rows on
//! rayon's pool), a group of workers + 1 parts per sweep over the input, into the buffers of parts
//! already uploaded; worker threads, [`super::SplitOptions::in_flight`] per GPU (2 by default),
//! each with its own compiled part and buffers, take prepared parts from the preparer one at a
//! time, upload, run and download them; the calling thread adds the finished parts into the output,
//! all those that have arrived in one sweep over it (the output is read and written once per sweep,
//! each part's rows once: the host's cost per part is about its own size, not the output's). The
//! twiddles and the real part of the recombination stay on the host: output rows n1 + M·q of every
//! q read the same part row with different twiddles, so a real part taken on the device would be
//! output-sized (out[0] rows, ~P/2 times the complex M-row part). So the host's folding of the next
//! parts and its recombination of earlier ones overlap the GPUs' work, several GPUs work at once,
//! and on one GPU a second part is already submitted while the first is read back, so the device
//! does not wait for the host between parts. On one GPU everything still goes through one wgpu
//! queue in submission order: its uploads, transforms and downloads do not overlap each other on
//! the device (wgpu exposes no separate copy queue).

use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use ndarray::{ArrayD, ArrayViewD, IxDyn};
use num_complex::Complex32;

use super::host::{fold, fold_reusing, recombine};
use super::plan::{candidates, SplitPlan};
use super::{PartTiming, SplitOptions, SplitReport, DEFAULT_IN_FLIGHT};
use crate::error::{Error, Result};
use crate::fft::{FftPlan, Fusion, Norm, Product, Transform, Window};
use crate::gpu::{Dtype, Gpu, GpuArray};
use crate::graph::{Compiled, Download, Recording};
use crate::host::ms_since;
use crate::ops::convolve::{check_finite, Geometry, Mode};
use crate::placement::{does_not_fit, Progress};

/// Chooses P (the fewest parts that fit, trying them on `gpus[0]`) and runs the convolution:
/// [`super::convolve_split_with_progress`].
pub(super) fn convolve(
    gpus: &[Gpu],
    a: &ArrayViewD<f32>,
    k: &ArrayViewD<f32>,
    mode: Mode,
    opts: &SplitOptions,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<(ArrayD<f32>, SplitReport)> {
    let start = Instant::now();
    let first = gpus.first().ok_or_else(|| Error::Invalid("the split convolution needs at least one GPU".into()))?;
    let g = Geometry::new(a.shape(), k.shape(), mode)?;
    check_finite(a, "convolution input")?;
    check_finite(k, "convolution kernel")?;
    crate::host::check_host_array("the convolution's result", &g.out, 4)?;
    let in_flight = opts.in_flight.unwrap_or(DEFAULT_IN_FLIGHT).max(1);
    // What one part (or the whole run) may hold on the device: the budget asked per part and
    // the device memory budget of the smallest GPU. (A GPU holds further parts in flight only
    // where they fit its budget too: `run_parts`.)
    let device = gpus.iter().map(|g| g.memory_budget_bytes()).min().unwrap();
    let budget = opts.max_part_bytes.unwrap_or(u64::MAX).min(device);
    // A plan beyond the host budget is skipped (more parts hold less); if none fits, the last
    // refusal is the error.
    let mut host_refusal = None;
    let max_buffer = gpus.iter().map(|g| g.max_buffer_bytes()).min().unwrap();
    let mut smallest = None;
    for plan in candidates(&g, opts.parts)? {
        if plan.parts == 1 {
            // The two half spectra multiplied are the least the whole run holds.
            let spectra = 2 * g.spectrum_dims().iter().map(|&d| d as u64).product::<u64>() * 8;
            if spectra > budget {
                continue;
            }
            if let Some(whole) = whole(first, a, k, &g, budget, opts.poison)? {
                progress(Progress::new("parts", 1, 1));
                return Ok(whole.report(&plan, first, start));
            }
            continue;
        }
        if let Err(e) = plan.check_host(workers(gpus.len(), plan.computed_parts().count(), in_flight)) {
            host_refusal = Some(e);
            continue;
        }
        // Two complex part-sized arrays (the two spectra multiplied) are the least a part holds.
        smallest = Some((plan.clone(), 2 * plan.part_bytes()));
        if plan.part_bytes() > max_buffer || 2 * plan.part_bytes() > budget {
            continue;
        }
        match PartRunner::new(first, &plan, opts.poison) {
            Ok(runner) if runner.peak_bytes() <= budget => {
                return run_parts(gpus, a, k, &plan, runner, opts, progress, start);
            }
            Ok(runner) => smallest = Some((plan.clone(), runner.peak_bytes())),
            Err(e) if does_not_fit(&e) => {}
            Err(e) => return Err(e),
        }
    }
    if let Some(e) = host_refusal {
        return Err(e);
    }
    let (what, bytes) = match smallest {
        Some((plan, bytes)) => {
            let budget = match opts.max_part_bytes {
                Some(b) if b <= device => format!("; memory budget {b} bytes per part"),
                _ if device < u64::MAX => format!("; device memory budget {device} bytes"),
                _ => String::new(),
            };
            (
                format!(
                    "even one part of the split convolution of {:?} with {:?} ({} parts of {:?} complex{budget})",
                    g.image, g.kernel, plan.parts, plan.part_dims
                ),
                bytes,
            )
        }
        None => (format!("the convolution of {:?} with {:?} in one part", g.image, g.kernel), g.padded.iter().map(|&d| d as u64).product::<u64>() * 8),
    };
    Err(Error::TooLarge { what, bytes, limit: budget.min(max_buffer) })
}

/// One compiled part on one GPU: the image and kernel parts are written into two device arrays,
/// padded, transformed, multiplied, transformed back and cropped to the output's other axes.
/// Every part has the same shapes, so it is compiled once and run once per part.
struct PartRunner {
    compiled: Compiled,
    image_in: GpuArray,
    kernel_in: GpuArray,
    z: Download,
}

impl PartRunner {
    fn new(gpu: &Gpu, plan: &SplitPlan, poison: bool) -> Result<PartRunner> {
        let g = &plan.geometry;
        let image_in = GpuArray::empty(gpu, &plan.slab_dims(&g.image), Dtype::C32)?;
        let kernel_in = GpuArray::empty(gpu, &plan.slab_dims(&g.kernel), Dtype::C32)?;
        let axes: Vec<usize> = (0..plan.part_dims.len()).collect();
        // Zero padding fused into the forward transforms' loads, the product into the inverse's
        // load, and the window (all M rows; the output window, wrapped, along the other axes)
        // into its stores.
        let forward = |input: &GpuArray| {
            let fusion = Fusion { input: Some(input.dims().to_vec()), ..Fusion::default() };
            FftPlan::fused(gpu, &plan.part_dims, &axes, Transform::Forward, Norm::Backward, &fusion)
        };
        let window = plan.out_part_dims().iter().enumerate().map(|(d, &len)| Window { origin: if d == 0 { 0 } else { g.start[d] as i64 }, len }).collect();
        let fusion = Fusion { window: Some(window), product: Some(Product::Mul), ..Fusion::default() };
        let inverse = FftPlan::fused(gpu, &plan.part_dims, &axes, Transform::Inverse, Norm::Backward, &fusion)?;
        let mut rec = Recording::new(gpu);
        if poison {
            rec.set_poison(true);
        }
        let (xi, xk) = (rec.input(&image_in), rec.input(&kernel_in));
        let xi = forward(&image_in)?.record(&mut rec, xi)?;
        let xk = forward(&kernel_in)?.record(&mut rec, xk)?;
        let z = inverse.record_with(&mut rec, xi, Some(xk))?;
        let z = rec.download(z);
        Ok(PartRunner { compiled: rec.compile()?, image_in, kernel_in, z })
    }

    fn peak_bytes(&self) -> u64 {
        self.compiled.peak_bytes()
    }

    /// Copies one part's slabs out (wgpu stages them at once: the host buffers are free after).
    fn upload(&self, gpu: &Gpu, image: &ArrayD<Complex32>, kernel: &ArrayD<Complex32>) {
        gpu.queue.write_buffer(&self.image_in.buffer, 0, bytemuck::cast_slice(image.as_slice().unwrap()));
        gpu.queue.write_buffer(&self.kernel_in.buffer, 0, bytemuck::cast_slice(kernel.as_slice().unwrap()));
    }

    /// Runs the part uploaded last: returns z_p (shape `out_part_dims`) and the GPU time.
    fn run(&self, gpu: &Gpu) -> Result<(ArrayD<Complex32>, Option<f64>)> {
        let results = self.compiled.run(gpu)?;
        Ok((results.c32(self.z)?, results.report.gpu_ms))
    }
}

/// Worker threads of a run: `in_flight` per GPU, no more GPUs than parts to compute and no more
/// slots per GPU than its share of them (each worker compiles its part and holds its buffers).
fn workers(gpus: usize, parts: usize, in_flight: usize) -> usize {
    let gpus = gpus.min(parts).max(1);
    gpus * in_flight.min(parts.div_ceil(gpus))
}

fn adapter_name(gpu: &Gpu) -> String {
    format!("{}: {}", gpu.summary().index, gpu.summary().name)
}

/// The whole convolution in one run, when it fits (`None` when it does not).
struct Whole {
    out: ArrayD<f32>,
    timing: PartTiming,
}

fn whole(gpu: &Gpu, a: &ArrayViewD<f32>, k: &ArrayViewD<f32>, g: &Geometry, budget: u64, poison: bool) -> Result<Option<Whole>> {
    let t = Instant::now();
    let attempt = || -> Result<Option<Whole>> {
        let mut rec = Recording::new(gpu);
        if poison {
            rec.set_poison(true);
        }
        let (ab, kb) = (rec.upload_f32(a)?, rec.upload_f32(k)?);
        let y = crate::ops::convolve::fftconvolve(&mut rec, ab, kb, g.mode)?;
        let d = rec.download(y);
        crate::graph::trace("whole: record", t);
        let compiled = rec.compile()?;
        if compiled.peak_bytes() > budget {
            return Ok(None);
        }
        let results = compiled.run(gpu)?;
        let timing = PartTiming { part: 0, worker: 0, adapter: adapter_name(gpu), ms: 0.0, gpu_ms: results.report.gpu_ms, peak_bytes: compiled.peak_bytes() };
        crate::graph::trace("whole: run", t);
        let out = results.f32(d)?;
        crate::graph::trace("whole: result", t);
        Ok(Some(Whole { out, timing }))
    };
    match attempt() {
        Ok(Some(mut w)) => {
            w.timing.ms = ms_since(t);
            Ok(Some(w))
        }
        Ok(None) => Ok(None),
        Err(e) if does_not_fit(&e) => Ok(None),
        Err(e) => Err(e),
    }
}

impl Whole {
    fn report(self, plan: &SplitPlan, gpu: &Gpu, start: Instant) -> (ArrayD<f32>, SplitReport) {
        let report = SplitReport {
            parts: 1,
            computed_parts: 1,
            padded_len: plan.geometry.padded[0],
            part_len: plan.geometry.padded[0],
            part_dims: plan.geometry.padded.clone(),
            peak_bytes: self.timing.peak_bytes,
            per_part: vec![self.timing],
            prepare_ms: 0.0,
            recombine_ms: 0.0,
            total_ms: ms_since(start),
            adapters: vec![adapter_name(gpu)],
            in_flight: 1,
        };
        (self.out, report)
    }
}

/// A part folded on the host, waiting for a GPU.
struct Prepared {
    part: usize,
    image: ArrayD<Complex32>,
    kernel: ArrayD<Complex32>,
    ms: f64,
}

/// A part back from a GPU.
struct Finished {
    part: usize,
    z: ArrayD<Complex32>,
    timing: PartTiming,
    prepare_ms: f64,
}

/// The pipeline: a preparing thread → a bounded queue → one worker per GPU → the calling
/// thread, which recombines. `first` is the part already compiled on `gpus[0]` while choosing P.
#[allow(clippy::too_many_arguments)]
fn run_parts(
    gpus: &[Gpu],
    a: &ArrayViewD<f32>,
    k: &ArrayViewD<f32>,
    plan: &SplitPlan,
    first: PartRunner,
    opts: &SplitOptions,
    progress: &(dyn Fn(Progress) + Sync),
    start: Instant,
) -> Result<(ArrayD<f32>, SplitReport)> {
    let total = plan.computed_parts().count();
    let mut out = ArrayD::<f32>::zeros(IxDyn(&plan.geometry.out));
    let mut report = SplitReport {
        parts: plan.parts,
        computed_parts: total,
        padded_len: plan.len,
        part_len: plan.part_len,
        part_dims: plan.part_dims.clone(),
        per_part: Vec::new(),
        prepare_ms: 0.0,
        recombine_ms: 0.0,
        total_ms: 0.0,
        adapters: Vec::new(),
        peak_bytes: 0,
        in_flight: opts.in_flight.unwrap_or(DEFAULT_IN_FLIGHT).max(1),
    };
    let slots = report.in_flight;
    let peak = first.peak_bytes();
    let mut first = Some(first);
    let mut failure = None;
    std::thread::scope(|s| {
        // No more workers than parts (each compiles its part and holds its buffers).
        let gpus = &gpus[..gpus.len().min(total)];
        let slots = slots.min(total.div_ceil(gpus.len()));
        let workers = workers(gpus.len(), total, report.in_flight);
        // The preparer folds groups of workers + 1 parts in one sweep over the input each and
        // hands them over one by one (a rendezvous: the group is the queue), so the host holds
        // at most 2 · workers + 1 parts, as with one part folded at a time and a queue per worker.
        let (prepared_tx, prepared_rx) = sync_channel::<Prepared>(0);
        let (finished_tx, finished_rx) = sync_channel::<Result<Finished>>(workers);
        // The workers hand the image slabs back once uploaded, for the next groups to reuse.
        let (spent_tx, spent_rx) = channel::<Vec<Complex32>>();
        s.spawn(move || {
            let parts: Vec<usize> = plan.computed_parts().collect();
            let mut spare = Vec::new();
            for group in parts.chunks(workers + 1) {
                let t = Instant::now();
                spare.extend(spent_rx.try_iter());
                let (images, kernels) = (fold_reusing(a, plan, group, &mut spare), fold(k, plan, group));
                let ms = ms_since(t) / group.len() as f64;
                for ((&part, image), kernel) in group.iter().zip(images).zip(kernels) {
                    if prepared_tx.send(Prepared { part, image, kernel, ms }).is_err() {
                        return; // the workers stopped (an error)
                    }
                }
            }
        });
        // The queue is shared; it closes (and the preparer stops) once every worker has gone.
        let queue = Arc::new(Mutex::new(prepared_rx));
        for (i, gpu) in gpus.iter().enumerate() {
            // As many parts in flight as the GPU's device memory budget holds (at least one,
            // which the plan fitted to it).
            let fit = (gpu.memory_budget_bytes() / peak.max(1)).max(1);
            for slot in 0..slots.min(usize::try_from(fit).unwrap_or(usize::MAX)) {
                let runner = if i == 0 && slot == 0 { first.take() } else { None };
                let (queue, finished_tx, spent_tx) = (queue.clone(), finished_tx.clone(), spent_tx.clone());
                s.spawn(move || worker(i, slot, gpu, plan, runner, opts.poison, &queue, &finished_tx, &spent_tx));
            }
        }
        drop((queue, finished_tx, spent_tx));
        while let Ok(next) = finished_rx.recv() {
            // The parts that arrived meanwhile join the same sweep over the output.
            let batch = match std::iter::once(next).chain(finished_rx.try_iter()).collect::<Result<Vec<Finished>>>() {
                Ok(batch) => batch,
                Err(e) => {
                    failure = Some(e);
                    break; // dropping the receiver stops the workers
                }
            };
            let t = Instant::now();
            recombine(&mut out, &batch.iter().map(|f| (f.part, &f.z)).collect::<Vec<_>>(), plan);
            report.recombine_ms += ms_since(t);
            for f in batch {
                report.prepare_ms += f.prepare_ms;
                report.peak_bytes = report.peak_bytes.max(f.timing.peak_bytes);
                if !report.adapters.contains(&f.timing.adapter) {
                    report.adapters.push(f.timing.adapter.clone());
                }
                report.per_part.push(f.timing);
                progress(Progress::new("parts", report.per_part.len(), total));
            }
        }
    });
    if let Some(e) = failure {
        return Err(e);
    }
    if report.per_part.len() != total {
        return Err(Error::DeviceLost(format!("the split convolution's workers stopped after {} of {total} parts", report.per_part.len())));
    }
    report.total_ms = ms_since(start);
    Ok((out, report))
}

/// One worker's loop: pull a prepared part, run it, send it back, until the queue closes.
/// Slot 0 of each GPU must build its part (an error otherwise); a further slot that does not fit
/// in memory leaves the GPU with fewer parts in flight.
#[allow(clippy::too_many_arguments)]
fn worker(
    index: usize,
    slot: usize,
    gpu: &Gpu,
    plan: &SplitPlan,
    runner: Option<PartRunner>,
    poison: bool,
    queue: &Mutex<Receiver<Prepared>>,
    finished: &SyncSender<Result<Finished>>,
    spent: &Sender<Vec<Complex32>>,
) {
    let runner = match runner.map_or_else(|| PartRunner::new(gpu, plan, poison), Ok) {
        Ok(r) => r,
        Err(e) if slot > 0 && does_not_fit(&e) => return,
        Err(e) => {
            let _ = finished.send(Err(e));
            return;
        }
    };
    loop {
        let next = queue.lock().unwrap().recv();
        let Ok(job) = next else { return };
        let t = Instant::now();
        runner.upload(gpu, &job.image, &job.kernel);
        let _ = spent.send(job.image.into_raw_vec_and_offset().0); // the preparer may have finished
        let result = runner.run(gpu).map(|(z, gpu_ms)| Finished {
            part: job.part,
            z,
            timing: PartTiming { part: job.part, worker: index, adapter: adapter_name(gpu), ms: ms_since(t), gpu_ms, peak_bytes: runner.peak_bytes() },
            prepare_ms: job.ms,
        });
        let failed = result.is_err();
        if finished.send(result).is_err() || failed {
            return;
        }
    }
}
