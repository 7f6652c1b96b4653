//! scipy.signal's convolution of host arrays, deciding how to run: direct sums or FFT
//! ([`Method::Auto`] by the cost model), the whole FFT convolution with the kernel's cached
//! spectrum when it fits one buffer, in chunks along axis 0 when it fits the device, else split
//! along axis 0 over the given GPUs.

use ndarray::{ArrayD, ArrayViewD};
use serde::Serialize;

use super::overlap::{self, SlabReport};
use super::split::{self, SplitOptions, SplitReport};
use super::{check_finite, cpu, gpu, Geometry, KernelSpectrum, Method, Mode};
use crate::error::{Error, Result};
use crate::graph::Recording;
use crate::placement::{Form, GiveWay, Ladder, Needs, Placement, Progress};
use crate::Gpu;

/// How [`convolve`] ran.
#[derive(Clone, Debug, Serialize)]
pub struct HostRun {
    /// Fft or Direct: what `Method::Auto` chose.
    pub method: Method,
    /// The FFT path's parts and timings when it had to split (None: whole, or direct).
    pub split: Option<SplitReport>,
    /// Chunks along axis 0 the arrays were held in on the device (1: each array one buffer).
    pub chunks: usize,
    /// The slabs of output rows spread over the GPUs (None: not run in slabs).
    pub slabs: Option<SlabReport>,
    /// The form that ran and the larger ones that gave way.
    pub placement: Placement,
}

/// What to compute: scipy.signal.convolve(a, k, mode, method), or correlate.
#[derive(Clone, Copy, Debug, Default)]
pub struct Signal {
    pub mode: Mode,
    pub method: Method,
    pub correlate: bool,
}

/// `op` of the whole arrays in one recording, in their type (f64 where `gpu` computes in f64):
/// direct sums or the FFT path as `op.method` resolves. The f64 path (arrays beyond one buffer
/// are refused with the size and the limit: the chunked, slab and split forms of [`convolve`]
/// run in f32).
pub fn convolve_whole<T: crate::gpu::Real>(gpu: &Gpu, a: &ArrayViewD<T>, k: &ArrayViewD<T>, op: Signal) -> Result<ArrayD<T>> {
    let Signal { mode, method, correlate } = op;
    let g = Geometry::new(a.shape(), k.shape(), mode)?;
    crate::host::check_host_array("the convolution's result", &g.out, std::mem::size_of::<T>() as u64)?;
    check_finite(a, "convolution input")?;
    check_finite(k, "convolution kernel")?;
    let mut rec = Recording::new(gpu);
    let ab = rec.upload_once_real(a)?;
    let y = match method.resolve(&g) {
        Method::Direct => gpu::direct(&mut rec, ab, k, &g, correlate)?,
        _ => {
            let kb = rec.upload_once_real(k)?;
            gpu::fft_pair(&mut rec, ab, kb, &g, correlate)?
        }
    };
    rec.run_fetch(y)
}

/// `op` of `a` with `k` on `gpus`: the first GPU unless a split run spreads parts over all.
/// Split options only apply to the FFT path; asking for parts or a memory budget makes `Auto`
/// choose it. `progress` counts the slabs or the parts of a split run.
pub fn convolve(
    gpus: &[Gpu],
    a: &ArrayViewD<f32>,
    k: &ArrayViewD<f32>,
    op: Signal,
    opts: &SplitOptions,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<(ArrayD<f32>, HostRun)> {
    let Signal { mode, method, correlate } = op;
    let first = gpus.first().ok_or_else(|| Error::Invalid("no GPU to convolve on".into()))?;
    let g = Geometry::new(a.shape(), k.shape(), mode)?;
    crate::host::check_host_array("the convolution's result", &g.out, 4)?;
    let t = std::time::Instant::now();
    check_finite(a, "convolution input")?;
    check_finite(k, "convolution kernel")?;
    crate::gpu::trace("convolve: validated", t);
    let split_asked = opts.parts.is_some() || opts.max_part_bytes.is_some() || opts.in_flight.is_some() || gpus.len() > 1;
    let chosen = match method {
        Method::Auto if split_asked => Method::Fft,
        m => m.resolve(&g),
    };
    let run = |method, placement| HostRun { method, split: None, chunks: 1, slabs: None, placement };
    if chosen == Method::Direct && method == Method::Direct {
        return direct(first, a, k, &g, correlate).map(|y| (y, run(Method::Direct, Placement::planned(Form::Whole, 1))));
    }
    // The forms, largest first; each one that does not fit gives way to the next.
    let mut ladder = Ladder::new();
    if chosen == Method::Direct {
        // The cost model chose direct sums; where the arrays do not fit, the FFT path cuts them.
        if let Some(y) = ladder.attempt(Form::Whole, GiveWay::OnLimit, || direct(first, a, k, &g, correlate))? {
            return Ok((y, run(Method::Direct, ladder.placed(Form::Whole, 1))));
        }
    }
    // A correlation in slabs or split is the convolution with the reversed kernel.
    let kernel = if correlate { cpu::reverse(&k.to_owned()) } else { k.to_owned() };
    let slabs = |ladder: &mut Ladder, gpus: &[Gpu], least: usize| -> Result<Option<(ArrayD<f32>, SlabReport)>> {
        let Some(count) = overlap::slab_count(gpus, &g, least) else {
            ladder.rule_out(Form::Slabs, "the kernel's halo would outweigh a slab that fits the device");
            return Ok(None);
        };
        ladder.attempt(Form::Slabs, GiveWay::OnMisfit, || overlap::convolve(gpus, a, &kernel.view(), mode, count, progress))
    };
    let in_slabs = |ladder: Ladder, (y, report): (ArrayD<f32>, SlabReport)| {
        let placement = ladder.placed(Form::Slabs, report.slabs);
        (y, HostRun { slabs: Some(report), ..run(Method::Fft, placement) })
    };
    if !split_asked {
        // Within the device memory budget, as the chunked run is: beyond it, slabs.
        let whole = Needs { buffer: 0, device: super::chunked::bytes_in_core(&g.padded) };
        if ladder.fits(Form::Whole, first, whole) {
            if let Some(y) = ladder.attempt(Form::Whole, GiveWay::OnMisfit, || whole_fft(first, a, k, mode, correlate))? {
                return Ok((y, run(Method::Fft, ladder.placed(Form::Whole, 1))));
            }
        }
        // Beyond one buffer: streamed slabs of rows, which ran faster than holding the arrays
        // on the device in chunks (BENCHMARKS.md), else in core in chunks.
        if let Some(done) = slabs(&mut ladder, &gpus[..1], 2)? {
            return Ok(in_slabs(ladder, done));
        }
        if let Some((y, chunks)) = ladder.attempt(Form::Chunks, GiveWay::OnMisfit, || super::chunked::convolve(first, a, k, mode, correlate))? {
            return Ok((y, HostRun { chunks, ..run(Method::Fft, ladder.placed(Form::Chunks, chunks)) }));
        }
    }
    // Several GPUs, or beyond one GPU's memory: slabs of rows, each in core on one GPU, unless
    // the frequency split's parts or budgets are asked for or the halo would outweigh a slab.
    let split_options = opts.parts.is_some() || opts.max_part_bytes.is_some() || opts.in_flight.is_some();
    if !split_options {
        if let Some(done) = slabs(&mut ladder, gpus, if gpus.len() > 1 { 1 } else { 2 })? {
            return Ok(in_slabs(ladder, done));
        }
    }
    let (y, report) = split::convolve_split_with_progress(gpus, a, &kernel.view(), mode, opts, progress)?;
    let placement = ladder.placed(Form::Split, report.parts);
    Ok((y, HostRun { split: Some(report), ..run(Method::Fft, placement) }))
}

fn direct(gpu: &Gpu, a: &ArrayViewD<f32>, k: &ArrayViewD<f32>, g: &Geometry, correlate: bool) -> Result<ArrayD<f32>> {
    let mut rec = Recording::new(gpu);
    let x = rec.upload_once_real(a)?;
    let y = gpu::direct(&mut rec, x, k, g, correlate)?;
    rec.run_fetch(y)
}

fn whole_fft(gpu: &Gpu, a: &ArrayViewD<f32>, k: &ArrayViewD<f32>, mode: Mode, correlate: bool) -> Result<ArrayD<f32>> {
    let t = std::time::Instant::now();
    let spectrum = KernelSpectrum::cached(gpu, k, a.shape(), mode)?;
    crate::graph::trace("kernel spectrum", t);
    let mut rec = Recording::new(gpu);
    let x = rec.upload_once_real(a)?;
    let y = if correlate { spectrum.record_correlate(&mut rec, x)? } else { spectrum.record(&mut rec, x)? };
    rec.run_fetch(y)
}
