//! scipy.signal.fftconvolve of host arrays over several GPUs, or beyond one GPU's memory, as
//! slabs of output rows along axis 0 (overlap-save): each slab convolves, in core on one GPU
//! (whole, or in chunks), just the input rows its outputs read — its own rows and the kernel's
//! extent minus one along axis 0 — and its rows stream back straight into the result. Unlike
//! the frequency split ([`super::split`]) nothing is folded or recombined on the host, which was
//! nearly all of that path's time (BENCHMARKS.md); the price is the halo rows each slab
//! transforms again, so slabs are used while a slab's halo is no larger than its own rows.
//!
//! Each GPU streams: it takes consecutive slabs (a contiguous run of them, then half of the
//! largest run another GPU has left), so a slab's halo rows are copied on the device from the
//! previous slab's input rather than sent again, and while one slab's work runs on the GPU the
//! next one's rows go up and the previous one's results come down. Slabs are a few hundred MiB,
//! so each GPU allocates little: the driver serialises device allocation across GPUs (BENCHMARKS.md).

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn, Slice};
use serde::Serialize;

use super::{chunked, Geometry, KernelSpectrum, Mode};
use crate::error::{Error, Result};
use crate::gpu::{Dtype, Gpu, GpuArray};
use crate::graph::Recording;
use crate::host::ms_since;
use crate::placement::{does_not_fit, Progress};

/// Where the time went (serialised into `lucent convolve --json`).
#[derive(Clone, Debug, Serialize)]
pub struct SlabReport {
    pub slabs: usize,
    /// Input rows along axis 0 each slab reads beyond its own (the kernel's rows minus one).
    pub halo_rows: usize,
    /// "index: name" of each GPU, in the order given.
    pub adapters: Vec<String>,
    /// Each GPU's memory budget (`Gpu::memory_budget_bytes`); slabs are sized for the smallest.
    pub budgets: Vec<u64>,
    /// One entry per slab, in the order they finished.
    pub per_slab: Vec<SlabTiming>,
    pub total_ms: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct SlabTiming {
    pub slab: usize,
    /// Output rows along axis 0.
    pub rows: Range<usize>,
    /// Index of the GPU in the list given.
    pub worker: usize,
    /// Host wall time of the slab: upload, convolution, download into the result.
    pub ms: f64,
    /// Chunks its arrays were held in on the device (1: whole).
    pub chunks: usize,
}

/// Input bytes a streamed slab aims at (`LUCENT_SLAB_MIB` overrides, for measurements): large
/// enough that each transfer and dispatch is efficient, small enough that the buffers each GPU
/// allocates stay a small part of the run.
fn slab_target_bytes() -> usize {
    std::env::var("LUCENT_SLAB_MIB").ok().and_then(|v| v.trim().parse::<usize>().ok()).filter(|&m| m > 0).map_or(256 << 20, |m| m << 20)
}

/// Slabs for the GPUs: about [`slab_target_bytes`] of input rows each but at least twice the
/// halo, at least `least` and one per GPU, more where a slab's in-core run would not fit every
/// GPU's memory budget; `None` when the halo would exceed a slab's rows first.
pub fn slab_count(gpus: &[Gpu], g: &Geometry, least: usize) -> Option<usize> {
    let budget = gpus.iter().map(|gpu| gpu.memory_budget_bytes()).min()?;
    let (rows, halo) = (g.out[0], g.kernel[0] - 1);
    let row_bytes = g.image[1..].iter().product::<usize>() * 4;
    let target_rows = (slab_target_bytes() / row_bytes.max(1)).max(2 * halo).max(1);
    let first = rows.div_ceil(target_rows).max(least).max(gpus.len());
    (first..=rows)
        .take_while(|&slabs| halo <= rows / slabs)
        .find(|&slabs| plan_slabs(g, slabs).iter().all(|s| chunked::bytes_in_core(&s.geometry.padded) <= budget))
}

/// `a` convolved with `k` (oriented as a convolution) in `slabs` slabs over `gpus`;
/// `progress` (stage "slabs") after each slab.
pub fn convolve(
    gpus: &[Gpu],
    a: &ArrayViewD<f32>,
    k: &ArrayViewD<f32>,
    mode: Mode,
    slabs: usize,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<(ArrayD<f32>, SlabReport)> {
    let start = Instant::now();
    let g = Geometry::new(a.shape(), k.shape(), mode)?;
    let plan = plan_slabs(&g, slabs);
    let rows: Vec<Range<usize>> = plan.iter().map(|s| s.rows.clone()).collect();
    let mut y = ArrayD::from_shape_vec(IxDyn(&g.out), crate::host::zeroed_vec(g.out.iter().product())).expect("the output's size");
    let row_len: usize = g.out[1..].iter().product();
    // Each slab's rows of the result, taken by whichever GPU runs the slab.
    let mut rest = y.as_slice_mut().expect("a new array");
    let mut outs = Vec::new();
    for r in &rows {
        let (mine, tail) = std::mem::take(&mut rest).split_at_mut(r.len() * row_len);
        outs.push(Mutex::new(Some(mine)));
        rest = tail;
    }
    let schedule = Schedule::new(rows.len(), gpus.len());
    let done = Mutex::new((Vec::new(), None::<Error>));
    let failed = || done.lock().unwrap().1.is_some();
    crate::gpu::on_workers(gpus.len(), |worker| {
        let mut stream = Stream { gpu: &gpus[worker], a, k, spectra: HashMap::new(), carry: None };
        let mut pending: Option<Pending> = None;
        // A slab done (its chunk count) or failed.
        let report = |slab: usize, started: Instant, result: Result<usize>| {
            crate::gpu::trace(&format!("slab {slab} on GPU {worker}"), started);
            let mut done = done.lock().unwrap();
            match result {
                Ok(chunks) => {
                    done.0.push(SlabTiming { slab, rows: rows[slab].clone(), worker, ms: ms_since(started), chunks });
                    progress(Progress::new("slabs", done.0.len(), rows.len()));
                }
                Err(e) => {
                    done.1.get_or_insert(e);
                }
            }
        };
        let take = |slab: usize| outs[slab].lock().unwrap().take().expect("each slab runs once");
        let finish = |p: Pending| report(p.slab, p.started, p.download(stream.gpu, take(p.slab)).map(|()| 1));
        while let Some(slab) = schedule.next(worker).filter(|_| !failed()) {
            let started = Instant::now();
            // This slab's rows go up while the GPU still works on the previous slab, whose
            // results then come down; then this slab's work is submitted.
            let staged = stream.stage(&plan[slab]);
            if let Some(p) = pending.take() {
                finish(p);
            }
            match staged.and_then(|s| s.map(|s| stream.submit(s)).transpose().map(Option::flatten)) {
                Ok(Some((y, window))) => pending = Some(Pending { slab, started, y, window: (plan[slab].rows.start - plan[slab].computed.start, window) }),
                // Too large for one buffer: this slab in chunks, waited for.
                Ok(None) => report(slab, started, stream.in_chunks(&plan[slab], take(slab))),
                Err(e) => report(slab, started, Err(e)),
            }
        }
        if let Some(p) = pending.take() {
            finish(p);
        }
    });
    let (per_slab, error) = done.into_inner().unwrap();
    if let Some(e) = error {
        return Err(e);
    }
    let adapters = gpus.iter().map(|gpu| format!("{}: {}", gpu.summary().index, gpu.summary().name)).collect();
    let budgets = gpus.iter().map(|gpu| gpu.memory_budget_bytes()).collect();
    Ok((y, SlabReport { slabs: rows.len(), halo_rows: g.kernel[0] - 1, adapters, budgets, per_slab, total_ms: ms_since(start) }))
}

/// Which slab each GPU takes next: at first an even contiguous run each; a GPU whose run is done
/// takes the back half of the longest run left (all of it when one slab is left), so faster GPUs
/// take more and each keeps to consecutive slabs.
struct Schedule {
    runs: Mutex<Vec<Range<usize>>>,
}

impl Schedule {
    fn new(slabs: usize, workers: usize) -> Schedule {
        let runs = (0..workers).map(|w| w * slabs / workers..(w + 1) * slabs / workers).collect();
        Schedule { runs: Mutex::new(runs) }
    }

    fn next(&self, worker: usize) -> Option<usize> {
        let mut runs = self.runs.lock().unwrap();
        if runs[worker].is_empty() {
            let (victim, longest) = runs.iter().enumerate().max_by_key(|(_, r)| r.len()).map(|(v, r)| (v, r.clone()))?;
            if longest.is_empty() {
                return None;
            }
            let mid = longest.start + longest.len() / 2;
            runs[victim].end = mid;
            runs[worker] = mid..longest.end;
        }
        let slab = runs[worker].start;
        runs[worker].start += 1;
        Some(slab)
    }
}

/// One GPU's stream of slabs: the kernel's spectrum, and the last slab's input
/// rows on the device (their range and array), whose tail is the next slab's halo.
struct Stream<'a, 'x, 'y> {
    gpu: &'a Gpu,
    a: &'a ArrayViewD<'x, f32>,
    k: &'a ArrayViewD<'y, f32>,
    /// The kernel's spectrum for each slab's input rows and window start along axis 0 (the
    /// first made, the others sharing its spectrum).
    spectra: HashMap<(usize, usize), Arc<KernelSpectrum>>,
    carry: Option<(Range<usize>, GpuArray)>,
}

impl Stream<'_, '_, '_> {
    /// Sends a slab's input rows up (with the kernel's spectrum for its window); None when the
    /// slab does not fit one buffer.
    fn stage(&mut self, slab: &Slab) -> Result<Option<Staged>> {
        let attempt = (|| {
            let spectrum = self.spectrum(&slab.geometry)?;
            Ok(Staged { x: self.upload(slab.input.clone())?, input: slab.input.clone(), spectrum })
        })();
        self.fits(attempt)
    }

    fn spectrum(&mut self, g: &Geometry) -> Result<Arc<KernelSpectrum>> {
        if let Some(s) = self.spectra.get(&(g.image[0], g.start[0])) {
            return Ok(s.clone());
        }
        let made = match self.spectra.values().next() {
            Some(other) => other.for_window(self.gpu, g.clone())?,
            None => KernelSpectrum::for_geometry(self.gpu, self.k, g.clone())?,
        };
        Ok(self.spectra.entry((g.image[0], g.start[0])).or_insert(Arc::new(made)).clone())
    }

    /// Submits a staged slab's convolution without waiting; returns the device result and its
    /// shape (the slab's output), or None when it does not fit one buffer.
    fn submit(&mut self, s: Staged) -> Result<Option<(GpuArray, Vec<usize>)>> {
        let attempt = (|| {
            let mut rec = Recording::new(self.gpu);
            let xb = rec.input(&s.x);
            let yb = s.spectrum.record(&mut rec, xb)?;
            rec.output(yb);
            Ok(rec.launch()?.pop().expect("one output"))
        })();
        let window = s.spectrum.output_dims().to_vec();
        self.carry = Some((s.input, s.x));
        Ok(self.fits(attempt)?.map(|y| (y, window)))
    }

    /// None for "does not fit" (the slab then runs in chunks), forgetting the carried rows.
    fn fits<T>(&mut self, attempt: Result<T>) -> Result<Option<T>> {
        match attempt {
            Ok(v) => Ok(Some(v)),
            Err(e) if does_not_fit(&e) => {
                self.carry = None;
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// Input rows `input` as a device array: the rows the last slab also read copied on the
    /// device, the rest sent from the host.
    fn upload(&self, input: Range<usize>) -> Result<GpuArray> {
        let gpu = self.gpu;
        let mut dims = self.a.shape().to_vec();
        dims[0] = input.len();
        let row_bytes = dims[1..].iter().product::<usize>() * 4;
        let x = GpuArray::empty(gpu, &dims, Dtype::F32)?;
        let mut from = input.start;
        if let Some((prev, held)) = self.carry.as_ref().filter(|(prev, _)| prev.start <= input.start && input.start < prev.end) {
            let n = prev.end.min(input.end) - input.start;
            let mut encoder = gpu.device.create_command_encoder(&Default::default());
            encoder.copy_buffer_to_buffer(&held.buffer, ((input.start - prev.start) * row_bytes) as u64, &x.buffer, 0, (n * row_bytes) as u64);
            gpu.queue.submit([encoder.finish()]);
            from += n;
        }
        if from < input.end {
            let host = self.a.slice_axis(Axis(0), Slice::from(from..input.end));
            let bytes = crate::gpu::row_major_bytes(&host);
            gpu.scoped(|| gpu.write_streamed(&x.buffer, ((from - input.start) * row_bytes) as u64, &bytes))??;
        }
        Ok(x)
    }

    /// A slab's own rows in chunks, waited for, into `out`; returns the chunk count.
    fn in_chunks(&mut self, slab: &Slab, out: &mut [f32]) -> Result<usize> {
        let mut g = slab.geometry.clone();
        (g.start[0], g.out[0]) = (g.start[0] + slab.rows.start - slab.computed.start, slab.rows.len());
        let g = Geometry::window(&g.image, &g.kernel, g.mode, g.start, g.out);
        chunked::convolve_into(self.gpu, &self.a.slice_axis(Axis(0), Slice::from(slab.input.clone())), self.k, &g, out)
    }
}

/// A slab's input rows on its GPU, with the spectrum for its geometry.
struct Staged {
    x: GpuArray,
    input: Range<usize>,
    spectrum: Arc<KernelSpectrum>,
}

/// A slab submitted to its GPU, its result still to come down: of the rows computed, those
/// from `window.0` on, `out[0]` of them, are the slab's own.
struct Pending {
    slab: usize,
    started: Instant,
    y: GpuArray,
    window: (usize, Vec<usize>),
}

impl Pending {
    fn download(&self, gpu: &Gpu, out: &mut [f32]) -> Result<()> {
        let (first, computed) = &self.window;
        let mut start = vec![0; computed.len()];
        start[0] = *first;
        let mut size = computed.clone();
        size[0] = out.len() / computed[1..].iter().product::<usize>();
        GpuArray::download_window_into_f32(gpu, std::slice::from_ref(&self.y), &start, &size, out)
    }
}

/// `rows` rows in `slabs` consecutive ranges (at least one row each) differing by one row at most.
fn even_rows(rows: usize, slabs: usize) -> Vec<Range<usize>> {
    let slabs = slabs.clamp(1, rows);
    (0..slabs).map(|i| i * rows / slabs..(i + 1) * rows / slabs).collect()
}

/// One slab: the output rows it owns, the output rows it computes (as many in every slab, so
/// the last, shorter ones reach back), the input rows those read and the geometry of that
/// window of their convolution.
#[derive(Clone, Debug)]
struct Slab {
    rows: Range<usize>,
    computed: Range<usize>,
    input: Range<usize>,
    geometry: Geometry,
}

/// `slabs` slabs of `g`'s output rows that all compute as many rows at one FFT length, so each
/// GPU allocates its buffers and transforms the kernel once for all its slabs (only the first
/// and last slabs read fewer input rows, clipped at the image's ends).
fn plan_slabs(g: &Geometry, slabs: usize) -> Vec<Slab> {
    let owned = even_rows(g.out[0], slabs);
    let per = owned.iter().map(|r| r.len()).max().unwrap_or(0);
    let mut plan: Vec<Slab> = owned
        .into_iter()
        .map(|rows| {
            let computed = rows.start.min(g.out[0] - per)..rows.start.min(g.out[0] - per) + per;
            let first = g.start[0] + computed.start; // in the full convolution
            let input = first.saturating_sub(g.kernel[0] - 1)..(first + per).min(g.image[0]);
            let mut image = g.image.clone();
            image[0] = input.len();
            let (mut start, mut out) = (g.start.clone(), g.out.clone());
            (start[0], out[0]) = (first - input.start, per);
            let geometry = Geometry::window(&image, &g.kernel, g.mode, start, out);
            Slab { rows, computed, input, geometry }
        })
        .collect();
    let longest = plan.iter().map(|s| s.geometry.padded[0]).max().unwrap_or(1);
    plan.iter_mut().for_each(|s| s.geometry.padded[0] = longest);
    plan
}

#[cfg(test)]
mod tests {
    use super::Schedule;

    #[test]
    fn schedule_hands_out_each_slab_once_in_runs() {
        for (slabs, workers) in [(1, 1), (1, 3), (7, 2), (16, 3), (5, 8)] {
            let s = Schedule::new(slabs, workers);
            // Worker 0 alone drains everything: its own run, then halves of the others'.
            let mut got: Vec<usize> = std::iter::from_fn(|| s.next(0)).collect();
            got.sort();
            assert_eq!(got, (0..slabs).collect::<Vec<_>>(), "{slabs} slabs, {workers} workers");
        }
        // Two workers in turn: each run stays contiguous, a steal takes the back half.
        let s = Schedule::new(8, 2);
        assert_eq!([s.next(0), s.next(0), s.next(0), s.next(0)], [Some(0), Some(1), Some(2), Some(3)]);
        assert_eq!(s.next(0), Some(6)); // 4..8 left to worker 1: worker 0 takes 6..8
        assert_eq!(s.next(1), Some(4));
        assert_eq!(s.next(1), Some(5));
        assert_eq!(s.next(0), Some(7));
        assert_eq!([s.next(1), s.next(0)], [None, None]);
    }
}
