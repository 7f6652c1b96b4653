//! Richardson-Lucy on the GPU. The memory plan: three resident arrays of the padded shape (the
//! observed image and the estimate, f32; the OTF, the half spectrum of the wrapped PSF, computed
//! once) and the pooled temporaries of one iteration (the FFTs' scratch, the blurred estimate,
//! the ratio, the correction; with Biggs-Andrews acceleration three more resident arrays and two
//! 1-element sums, see [`Accelerated`]; with [`super::RlBoundary::Extended`] one more, the inverse
//! weights). One iteration is recorded once and compiled; each run of it
//! updates the estimate in place, so nothing crosses to the host inside the loop except, every
//! `stop.every` iterations, two sums for the stopping rule.
//!
//! Arrays larger than one buffer binding are held in chunks along axis 0 ([`Chunked`]): every
//! step runs chunk by chunk and the transforms cross chunks on the device ([`ChunkedFft`]), so a
//! volume that fits the GPU's memory but not one binding is deconvolved whole, in core. One chunk
//! is the ordinary case.

use std::ops::Range;
use std::time::Instant;

use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn};

use super::{prepared_psf, validate, Change, Geometry, Init, Progress, RlBoundary, RlOptions, RlReport, RlResult};
use crate::error::{Error, Result};
use crate::fft::plan::smooth_at_least;
use crate::fft::{first_fitting, least_chunks, most_chunks, real_and_spectrum_bytes, ChunkedFft, Norm, Transform};
use crate::gpu::{Dtype, Gpu, GpuArray};
use crate::graph::{row_ranges, Buf, Chunked, Compiled, Download, Output, Recording};
use crate::host::ms_since;
use crate::kernels::binary::{self, BinaryOp};
use crate::kernels::boundary::Boundary as Edge;
use crate::kernels::rl_ratio;
use crate::kernels::rl_tv::{self, Neighbours};
use crate::kernels::unary::{self, UnaryOp};
use crate::kernels::{copy_vec4, fill, rl_predict, rl_update};
use crate::ops::layout;
use crate::ops::layout::chunks::rows_from;
use crate::ops::reduce::{self, Reduction};

/// The observed image: on the host (negative values already clipped where the options ask), or
/// an f32 array already on the device (checked there by [`super::validate_resident`]; clipped
/// on the device with `clip`).
#[derive(Clone, Copy)]
pub enum Observed<'a> {
    Host(&'a ArrayViewD<'a, f32>),
    Device { image: &'a GpuArray, clip: bool },
}

impl Observed<'_> {
    pub fn dims(&self) -> &[usize] {
        match self {
            Observed::Host(x) => x.shape(),
            Observed::Device { image, .. } => image.dims(),
        }
    }

    /// Rows `src` (along axis 0) of the image in `rec`.
    fn rows(&self, rec: &mut Recording, src: Range<usize>) -> Result<Buf> {
        match *self {
            Observed::Host(x) => rec.upload_once_f32(&x.slice_axis(Axis(0), src.into())),
            Observed::Device { image, clip } => {
                let mut x = rec.input(image);
                if src.len() != image.dims()[0] {
                    let mut start = vec![0; image.dims().len()];
                    start[0] = src.start;
                    let mut size = image.dims().to_vec();
                    size[0] = src.len();
                    x = layout::crop(rec, x, &start, &size)?;
                }
                match clip {
                    true => unary::record(rec, UnaryOp::MaxScalar(0.0), x),
                    false => Ok(x),
                }
            }
        }
    }
}

/// The arrays that stay on the device for the whole run, all of the padded shape, each as its
/// chunks along axis 0.
struct Resident {
    observed: Vec<GpuArray>,
    estimate: Vec<GpuArray>,
    /// rfftn of the wrapped PSF (in the chunked transform's order).
    otf: Vec<GpuArray>,
    /// Bertero-Boccacci's 1 / max(Hᵀ M, floor), with [`super::RlBoundary::Extended`].
    inverse_weight: Option<Vec<GpuArray>>,
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
    previous: Vec<GpuArray>,
    /// yₖ, the prediction the RL update starts from.
    predicted: Vec<GpuArray>,
    /// gₖ₋₁ = xₖ − yₖ₋₁.
    previous_g: Vec<GpuArray>,
    /// Σ gₖ·gₖ₋₁ and Σ gₖ₋₁·gₖ₋₁ (one element each).
    cross: GpuArray,
    square: GpuArray,
}

/// The transforms of one iteration and the chunks they work on.
pub(super) struct Plans {
    forward: ChunkedFft,
    /// irfftn of the spectrum times the OTF, and times its conjugate (the product fused).
    blur: ChunkedFft,
    adjoint: ChunkedFft,
    rows: Vec<Range<usize>>,
}

/// A Richardson-Lucy run whose working set lives on the GPU: `new` validates, uploads, pads,
/// computes the OTF and compiles one iteration; `run` repeats it.
///
/// ```no_run
/// # use lucent::restoration::{RichardsonLucy, RlOptions};
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
    plans: Plans,
    resident: Resident,
    iteration: Compiled,
    monitor: Option<Monitor>,
    report: RlReport,
}

impl<'g> RichardsonLucy<'g> {
    /// Validates (see [`super::validate`]) and prepares `iterations` iterations: whole, or with
    /// the arrays in as few chunks along axis 0 as the device's buffers allow.
    pub fn new(gpu: &'g Gpu, image: &ArrayViewD<f32>, psf: &ArrayViewD<f32>, iterations: usize, opts: &RlOptions) -> Result<RichardsonLucy<'g>> {
        let start = Instant::now();
        let geometry = validate(image, psf, iterations, opts)?;
        crate::gpu::trace("rl: validated", start);
        let image = super::observed(image, opts);
        let psf = prepared_psf(psf, opts.normalize_psf);
        crate::gpu::trace("rl: prepared", start);
        RichardsonLucy::placed(gpu, geometry, Observed::Host(&image.view()), &psf, iterations, opts, start)
    }

    /// [`RichardsonLucy::new`] of a slab of an image [`super::validate`] passed (and
    /// [`super::observed`] made), with the PSF prepared once for every slab: no second pass
    /// over the data.
    pub(super) fn new_validated(gpu: &'g Gpu, image: &ArrayViewD<f32>, psf: &ArrayD<f64>, iterations: usize, opts: &RlOptions) -> Result<RichardsonLucy<'g>> {
        let start = Instant::now();
        let geometry = Geometry::new(image.shape(), psf.shape(), opts.boundary)?;
        RichardsonLucy::placed(gpu, geometry, Observed::Host(&image.view()), psf, iterations, opts, start)
    }

    /// [`RichardsonLucy::new`] of an image already on the device (f32, one buffer; checked
    /// there as [`super::validate`] checks a host image). [`RichardsonLucy::run_resident`]
    /// leaves the estimate there.
    pub fn new_resident(gpu: &'g Gpu, image: &GpuArray, psf: &ArrayViewD<f32>, iterations: usize, opts: &RlOptions) -> Result<RichardsonLucy<'g>> {
        let start = Instant::now();
        let geometry = super::validate_resident(gpu, image, psf, iterations, opts)?;
        let psf = prepared_psf(psf, opts.normalize_psf);
        RichardsonLucy::placed(gpu, geometry, Observed::Device { image, clip: opts.clip_negative }, &psf, iterations, opts, start)
    }

    /// In as few chunks along axis 0 as the device's buffers allow.
    fn placed(
        gpu: &'g Gpu,
        geometry: Geometry,
        image: Observed,
        psf: &ArrayD<f64>,
        iterations: usize,
        opts: &RlOptions,
        start: Instant,
    ) -> Result<RichardsonLucy<'g>> {
        let mut rl = first_fitting(gpu, least_chunks(gpu, &geometry.padded), |chunks| {
            RichardsonLucy::in_chunks(gpu, &geometry, chunks, image, &psf.view(), iterations, opts)
        })?;
        rl.report.setup_ms = ms_since(start);
        Ok(rl)
    }

    fn in_chunks(
        gpu: &'g Gpu,
        whole: &Geometry,
        chunks: usize,
        image: Observed,
        psf: &ArrayViewD<f64>,
        iterations: usize,
        opts: &RlOptions,
    ) -> Result<RichardsonLucy<'g>> {
        let start = Instant::now();
        let (geometry, rows) = chunked_geometry(whole, opts.boundary, chunks)?;
        check_memory(gpu, &geometry, opts)?;
        let plans = Plans::new(gpu, &geometry, rows)?;
        crate::gpu::trace("rl: plans", start);
        let (resident, setup_peak_bytes) = upload(gpu, &geometry, &plans, image, psf, opts)?;
        crate::gpu::trace("rl: upload, padding, OTF", start);

        let mut rec = Recording::new(gpu);
        record_iteration(&mut rec, &plans, &resident, &geometry, opts)?;
        let iteration = rec.compile()?;
        crate::gpu::trace("rl: iteration compiled", start);
        let monitor = opts.stop.is_some().then(|| monitor(gpu, &resident.estimate)).transpose()?;

        let mut peak_bytes = iteration.peak_bytes();
        if let Some(m) = &monitor {
            // Its pool and the copy of the estimate; the estimate itself is counted already.
            peak_bytes += m.measure.peak_bytes() - resident.estimate.iter().map(|e| e.buffer.size()).sum::<u64>();
        }
        let report = RlReport {
            device: format!("gpu: {}", gpu.summary().name),
            geometry: Some(geometry.clone()),
            chunks: plans.rows.len(),
            peak_bytes,
            setup_peak_bytes,
            dispatches_per_iteration: iteration.dispatches(),
            ..Default::default()
        };
        Ok(RichardsonLucy { gpu, geometry, iterations, opts: *opts, plans, resident, iteration, monitor, report })
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
        record_iteration(rec, &self.plans, &self.resident, &self.geometry, &self.opts)
    }

    /// Runs the iterations, calling `progress` after each, then copies the estimate back.
    pub fn run(mut self, progress: impl FnMut(Progress)) -> Result<RlResult> {
        self.iterate(progress)?;
        let start = Instant::now();
        let estimate = self.estimate()?;
        self.report.download_ms = ms_since(start);
        let RichardsonLucy { resident, iteration, monitor, plans, report, .. } = self;
        crate::gpu::free_in_background((resident, iteration, monitor, plans));
        Ok(RlResult { estimate, report })
    }

    /// [`RichardsonLucy::run`] with the estimate left on the device, cropped to the image.
    pub fn run_resident(mut self, progress: impl FnMut(Progress)) -> Result<(GpuArray, RlReport)> {
        self.iterate(progress)?;
        let g = &self.geometry;
        let mut rec = Recording::new(self.gpu);
        let parts: Vec<Buf> = self.resident.estimate.iter().map(|e| rec.input(e)).collect();
        let estimate = Chunked::from_parts(&rec, parts)?;
        let cropped = layout::chunks::crop(&mut rec, &estimate, &g.offset, &g.image)?;
        let joined = match cropped.parts.as_slice() {
            [one] => *one,
            parts => layout::concatenate(&mut rec, parts)?,
        };
        let o = rec.output(joined);
        let estimate = rec.run()?.array(o);
        Ok((estimate, self.report))
    }

    /// The iterations, `progress` called after each.
    fn iterate(&mut self, mut progress: impl FnMut(Progress)) -> Result<()> {
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
            progress(Progress::new("iterations", done, self.iterations).with_change(change));
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
        Ok(())
    }

    /// Runs one more iteration on the resident arrays (the slab decomposition steps each GPU's
    /// part, then exchanges the halo rows).
    pub(crate) fn step(&self) -> Result<()> {
        self.iteration.run(self.gpu).map(drop)
    }

    /// Rows `rows` of the padded estimate, whole padded rows as they lie on the device, into
    /// `out` (resized to them; kept by the caller between exchanges, so its pages are not
    /// faulted in again each time).
    pub(crate) fn padded_rows_into(&self, rows: Range<usize>, out: &mut Vec<f32>) -> Result<()> {
        let g = &self.geometry;
        let mut start = vec![0; g.padded.len()];
        start[0] = rows.start;
        let mut size = g.padded.clone();
        size[0] = rows.len();
        out.resize(size.iter().product(), 0.0);
        GpuArray::download_window_into_f32(self.gpu, &self.resident.estimate, &start, &size, out)
    }

    /// Overwrites whole padded rows of the estimate from row `first` on with `rows`, across
    /// the chunks they fall in.
    pub(crate) fn set_padded_rows(&self, first: usize, rows: &[f32]) -> Result<()> {
        let row = self.geometry.padded[1..].iter().product::<usize>();
        let (mut at, mut next, mut rest) = (0, first, rows);
        for chunk in &self.resident.estimate {
            let n = chunk.dims()[0];
            if !rest.is_empty() && next < at + n {
                let (mine, tail) = rest.split_at(((at + n - next) * row).min(rest.len()));
                let gpu = self.gpu;
                gpu.scoped(|| gpu.write_streamed(&chunk.buffer, ((next - at) * row * 4) as u64, bytemuck::cast_slice(mine)))??;
                (next, rest) = (next + mine.len() / row, tail);
            }
            at += n;
        }
        match rest.is_empty() {
            true => Ok(()),
            false => Err(Error::Shape(format!("padded rows {first}.. of {} do not fit an estimate of {at} rows", rows.len() / row.max(1)))),
        }
    }

    /// Rows `rows` of the current estimate (image rows) straight into `out` (their size).
    pub(crate) fn estimate_rows_into(&self, rows: Range<usize>, out: &mut [f32]) -> Result<()> {
        let g = &self.geometry;
        let mut start = g.offset.clone();
        start[0] += rows.start;
        let mut size = g.image.clone();
        size[0] = rows.len();
        GpuArray::download_window_into_f32(self.gpu, &self.resident.estimate, &start, &size, out)
    }

    /// The current estimate, cropped to the image as it streams back.
    pub fn estimate(&self) -> Result<ArrayD<f32>> {
        let image = &self.geometry.image;
        let start = Instant::now();
        let mut out = crate::host::zeroed_vec(image.iter().product());
        self.estimate_rows_into(0..image[0], &mut out)?;
        crate::gpu::trace("rl: estimate downloaded", start);
        Ok(ArrayD::from_shape_vec(IxDyn(image), out).expect("the image's size"))
    }
}

impl Plans {
    /// The forward transform of the padded arrays in chunks `rows`, and the two inverses of a
    /// product with a spectrum (the blur, and its adjoint with the conjugate).
    pub(super) fn new(gpu: &Gpu, geometry: &Geometry, rows: Vec<Range<usize>>) -> Result<Plans> {
        let axes = geometry.spatial_axes();
        let forward = ChunkedFft::new(gpu, &geometry.padded, &axes, Transform::RealForward, Norm::Backward, &rows)?;
        let len = geometry.padded[*axes.last().unwrap()];
        let inverse = |conj| {
            ChunkedFft::inverse_of_product(gpu, forward.output_dims(), &axes, Transform::RealInverse { len }, Norm::Backward, forward.output_rows(), conj)
        };
        let (blur, adjoint) = (inverse(false)?, inverse(true)?);
        Ok(Plans { forward, blur, adjoint, rows })
    }

    /// rfftn of the chunked padded array `x` (its spectrum, as the blur's other factor).
    pub(super) fn spectrum(&self, rec: &mut Recording, x: &Chunked) -> Result<Chunked> {
        self.forward.record(rec, x)
    }
}

/// Fails with `TooLarge` when the run would need more device memory than the budget
/// ([`Gpu::memory_budget_bytes`]), counted before anything is allocated: the resident arrays
/// (observed, estimate, OTF, and the options' own) and the iteration's pooled temporaries, at
/// most two spectra and a real array at once (1024³ measured 4.3 real arrays' worth in all with
/// no options; this counts 5).
fn check_memory(gpu: &Gpu, g: &Geometry, opts: &RlOptions) -> Result<()> {
    let needed = bytes_in_core(g, opts);
    let budget = gpu.memory_budget_bytes();
    if needed > budget {
        return Err(Error::TooLarge {
            what: format!("Richardson-Lucy of {:?} in core (padded {:?}; device memory budget, LUCENT_DEVICE_MEMORY_BYTES)", g.image, g.padded),
            bytes: needed,
            limit: budget,
        });
    }
    Ok(())
}

/// The device bytes [`check_memory`] counts for a run of (chunked) geometry `g`.
fn bytes_in_core(g: &Geometry, opts: &RlOptions) -> u64 {
    let (real, complex) = real_and_spectrum_bytes(&g.padded);
    let resident = 2 + 3 * opts.accelerate as u64 + g.is_extended() as u64 + opts.tv.is_some() as u64;
    real.saturating_mul(resident).saturating_add(complex.saturating_mul(3))
}

/// Whether a run of geometry `g` fits `gpu`'s memory budget in some number of chunks that
/// [`RichardsonLucy::new`] tries (from as few as the device's buffers allow).
pub(super) fn fits(gpu: &Gpu, g: &Geometry, opts: &RlOptions) -> bool {
    (least_chunks(gpu, &g.padded)..=most_chunks(gpu).max(1))
        .any(|chunks| chunked_geometry(g, opts.boundary, chunks).is_ok_and(|(chunked, _)| bytes_in_core(&chunked, opts) <= gpu.memory_budget_bytes()))
}

/// The geometry with the padded arrays in `chunks` chunks along axis 0, and their rows. A batch
/// axis is split as it is (the last chunk may be shorter); a transformed axis 0 needs equal
/// chunks, so its padded length becomes `chunks` × a fast length (for a periodic boundary,
/// whose length is the image's, `chunks` must divide it).
fn chunked_geometry(g: &Geometry, boundary: RlBoundary, chunks: usize) -> Result<(Geometry, Vec<Range<usize>>)> {
    let n = g.padded[0];
    if chunks == 1 {
        return Ok((g.clone(), std::iter::once(0..n).collect()));
    }
    if g.batch_axes() == 1 {
        return Ok((g.clone(), row_ranges(n, n.div_ceil(chunks))));
    }
    let (image, m) = (g.image[0], g.psf[0]);
    let rows = match boundary {
        RlBoundary::Periodic if image % chunks == 0 => image / chunks,
        RlBoundary::Periodic => {
            return Err(Error::TooLarge { what: format!("a periodic image of {image} rows in {chunks} equal chunks"), bytes: image as u64, limit: 0 });
        }
        RlBoundary::Zero => smooth_at_least((image + m / 2).div_ceil(chunks)),
        RlBoundary::Extended => smooth_at_least((image + m - 1).div_ceil(chunks)),
    };
    let mut chunked = g.clone();
    chunked.padded[0] = rows * chunks;
    Ok((chunked, row_ranges(rows * chunks, rows)))
}

/// Pads the observed image and the first estimate to the working shape and computes the OTF
/// (with [`super::RlBoundary::Extended`] also uploads the inverse weights), chunk by chunk, in
/// one submission; returns the resident arrays and the peak memory of that step.
fn upload(gpu: &Gpu, g: &Geometry, plans: &Plans, image: Observed, psf: &ArrayViewD<f64>, opts: &RlOptions) -> Result<(Resident, u64)> {
    let mut rec = Recording::new(gpu);
    let (mut observed, mut estimate, mut wrapped, mut weights) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for r in &plans.rows {
        let (o, e) = observed_and_first(&mut rec, g, r, image, opts)?;
        observed.push(rec.output(o));
        estimate.push(rec.output(e));
        wrapped.push(wrapped_psf(&mut rec, g, r, psf)?);
        if g.is_extended() {
            // Exact box sums on the host (see Geometry::inverse_weights), not an f32 transform of M.
            let w = rec.upload_f32(&g.inverse_weights_rows(psf, r.clone()).mapv(|v| v as f32).view())?;
            weights.push(rec.output(w));
        }
    }
    let wrapped = Chunked::from_parts(&rec, wrapped)?;
    let otf = plans.forward.record(&mut rec, &wrapped)?;
    let otf: Vec<Output> = otf.parts.iter().map(|&p| rec.output(p)).collect();
    let accelerated = opts.accelerate.then(|| record_zeros(&mut rec, &g.padded, &plans.rows)).transpose()?;
    let compiled = rec.compile()?;
    let peak = compiled.peak_bytes();
    let results = compiled.run(gpu)?;
    let arrays = |outs: &[Output]| outs.iter().map(|&o| results.array(o)).collect::<Vec<_>>();
    let accelerated = accelerated.map(|z| Accelerated {
        previous: arrays(&z.previous),
        predicted: arrays(&z.predicted),
        previous_g: arrays(&z.previous_g),
        cross: results.array(z.cross),
        square: results.array(z.square),
    });
    let inverse_weight = g.is_extended().then(|| arrays(&weights));
    let resident = Resident { observed: arrays(&observed), estimate: arrays(&estimate), otf: arrays(&otf), inverse_weight, accelerated };
    Ok((resident, peak))
}

/// The chunk `r` of the observed image placed in the padded array (zeros around it) and of the
/// first estimate (as [`Geometry::first_estimate`]).
pub(super) fn observed_and_first(rec: &mut Recording, g: &Geometry, r: &Range<usize>, image: Observed, opts: &RlOptions) -> Result<(Buf, Buf)> {
    let observed = layout::chunks::place_rows_with(rec, image.dims(), Dtype::F32, &g.padded, &g.offset, r, |rec, src| image.rows(rec, src))?;
    let first = match (opts.init, g.is_extended()) {
        (Init::Observed, false) => copy(rec, observed)?,
        (Init::Constant(c), false) => constant_rows(rec, g, r, c)?,
        (_, true) => extended_first(rec, g, r, image, opts)?,
    };
    Ok((observed, first))
}

/// Chunk `r` of the constant `c` on the image's window, zeros around it (filled on the device).
fn constant_rows(rec: &mut Recording, g: &Geometry, r: &Range<usize>, c: f32) -> Result<Buf> {
    let (value, rows, pads) = match rows_from(r.start, r.end, g.offset[0], g.image[0], false) {
        None => (0.0, r.len(), vec![(0, 0); g.image.len()]),
        Some((src, before, after)) => {
            let pads = (0..g.image.len()).map(|d| if d == 0 { (before, after) } else { (g.offset[d], g.padded[d] - g.image[d] - g.offset[d]) }).collect();
            (c, src.len(), pads)
        }
    };
    let mut dims: Vec<usize> = (0..g.image.len()).map(|d| g.padded[d] - pads[d].0 - pads[d].1).collect();
    dims[0] = rows;
    let t = rec.temp(&dims, Dtype::F32)?;
    fill::record(rec, t, value);
    if pads.iter().all(|&p| p == (0, 0)) {
        return Ok(t);
    }
    layout::pad(rec, t, &pads, Edge::Constant(0.0))
}

/// With [`RlBoundary::Extended`]: the support's rows of the first estimate repeat the nearest
/// image element, zeros beyond it.
fn extended_first(rec: &mut Recording, g: &Geometry, r: &Range<usize>, image: Observed, opts: &RlOptions) -> Result<Buf> {
    let nd = g.image.len();
    let end = r.end.min(g.support[0]);
    if r.start >= end {
        let mut dims = g.padded.clone();
        dims[0] = r.len();
        let t = rec.temp(&dims, Dtype::F32)?;
        fill::record(rec, t, 0.0);
        return Ok(t);
    }
    let (src, before, after) = rows_from(r.start, end, g.offset[0], g.image[0], true).expect("clamped rows");
    let x = match opts.init {
        Init::Constant(c) => {
            let mut d = g.image.clone();
            d[0] = src.len();
            let t = rec.temp(&d, Dtype::F32)?;
            fill::record(rec, t, c);
            t
        }
        Init::Observed => image.rows(rec, src)?,
    };
    let nearest: Vec<(usize, usize)> = (0..nd).map(|d| if d == 0 { (before, after) } else { (g.offset[d], g.support[d] - g.image[d] - g.offset[d]) }).collect();
    let x = layout::pad(rec, x, &nearest, Edge::Nearest)?;
    let zeros: Vec<(usize, usize)> = (0..nd).map(|d| if d == 0 { (0, r.end - end) } else { (0, g.padded[d] - g.support[d]) }).collect();
    layout::pad(rec, x, &zeros, Edge::Constant(0.0))
}

pub(super) fn copy(rec: &mut Recording, x: Buf) -> Result<Buf> {
    let t = rec.temp_like(x, Dtype::F32)?;
    copy_vec4::record(rec, x, t)?;
    Ok(t)
}

/// Rows `r` of the PSF wrapped around the origin of the padded array ([`Geometry::wrap_psf`]):
/// axis 0 wrapped on the host (a few of the PSF's rows, or its copies along a batch axis), the
/// other axes zero-padded and rolled on the device.
pub(super) fn wrapped_psf(rec: &mut Recording, g: &Geometry, r: &Range<usize>, psf: &ArrayViewD<f64>) -> Result<Buf> {
    let batch = g.batch_axes();
    let mut dims = vec![r.len()];
    dims.extend_from_slice(&psf.shape()[1 - batch..]);
    let rows = ArrayD::from_shape_fn(IxDyn(&dims), |i| {
        let mut at: Vec<usize> = (0..dims.len()).map(|d| i[d]).collect();
        if batch == 1 {
            at.remove(0);
            return psf[IxDyn(&at)] as f32;
        }
        let wrapped = (r.start + i[0] + g.centre[0]) % g.padded[0];
        if wrapped >= g.psf[0] {
            return 0.0;
        }
        at[0] = wrapped;
        psf[IxDyn(&at)] as f32
    });
    let x = rec.upload_f32(&rows.view())?;
    if g.padded.len() == 1 {
        return Ok(x);
    }
    let pads: Vec<(usize, usize)> = (0..g.padded.len()).map(|d| if d == 0 { (0, 0) } else { (0, g.padded[d] - dims[d]) }).collect();
    let padded = layout::pad(rec, x, &pads, Edge::Constant(0.0))?;
    let axes: Vec<usize> = (1..g.padded.len()).collect();
    let shifts: Vec<isize> = axes.iter().map(|&d| -(g.centre[d - batch] as isize)).collect();
    layout::roll(rec, padded, &shifts, &axes)
}

/// The acceleration's arrays, zero: xₖ₋₁, yₖ and gₖ₋₁ of the padded shape, then the two sums.
struct Zeros {
    previous: Vec<Output>,
    predicted: Vec<Output>,
    previous_g: Vec<Output>,
    cross: Output,
    square: Output,
}

fn record_zeros(rec: &mut Recording, padded: &[usize], rows: &[Range<usize>]) -> Result<Zeros> {
    let mut zeros = |dims: &[usize]| -> Result<Output> {
        let t = rec.temp(dims, Dtype::F32)?;
        fill::record(rec, t, 0.0);
        Ok(rec.output(t))
    };
    let mut chunks = || -> Result<Vec<Output>> {
        rows.iter()
            .map(|r| {
                let mut d = padded.to_vec();
                d[0] = r.len();
                zeros(&d)
            })
            .collect()
    };
    let (previous, predicted, previous_g) = (chunks()?, chunks()?, chunks()?);
    Ok(Zeros { previous, predicted, previous_g, cross: zeros(&[1])?, square: zeros(&[1])? })
}

/// estimate *= psf* ⊛ (observed / (psf ⊛ estimate + eps)) [× the TV factor] [× the inverse
/// weights], in place, chunk by chunk.
fn record_iteration(rec: &mut Recording, plans: &Plans, res: &Resident, g: &Geometry, opts: &RlOptions) -> Result<()> {
    let e = Chunked::inputs(rec, &res.estimate)?;
    let o = Chunked::inputs(rec, &res.observed)?;
    let h = Chunked::inputs(rec, &res.otf)?;
    let predicted = res.accelerated.as_ref().map(|a| record_prediction(rec, a, &e)).transpose()?;
    let tv = opts.tv.map(|lambda| record_tv(rec, &e, &plans.rows, g, lambda)).transpose()?;
    let blurred = convolve(rec, plans, &e, &h, false)?;
    let r = o.zip(rec, &blurred, |rec, o, b| rl_ratio::record(rec, opts.ratio(), o, b))?;
    let correction = convolve(rec, plans, &r, &h, true)?;
    let w = res.inverse_weight.as_ref().map(|w| Chunked::inputs(rec, w)).transpose()?;
    for c in 0..e.len() {
        let t = tv.as_ref().map(|t| t.parts[c]);
        let w = w.as_ref().map(|w| w.parts[c]);
        rl_update::record_weighted(rec, e.parts[c], correction.parts[c], t, w)?;
    }
    match (&res.accelerated, predicted) {
        (Some(a), Some(y)) => record_step_sums(rec, a, &e, &y),
        _ => Ok(()),
    }
}

/// The TV factor chunk by chunk, each chunk reading its neighbours' edge rows.
fn record_tv(rec: &mut Recording, e: &Chunked, rows: &[Range<usize>], g: &Geometry, lambda: f32) -> Result<Chunked> {
    let k = e.len();
    let parts = (0..k)
        .map(|c| {
            let n = Neighbours { x: e.parts[c], prev: e.parts[c.saturating_sub(1)], next: e.parts[(c + 1).min(k - 1)], first: rows[c].start };
            rl_tv::record_chunk(rec, n, &g.support, g.psf.len(), lambda)
        })
        .collect::<Result<Vec<_>>>()?;
    Chunked::from_parts(rec, parts)
}

/// irfftn(rfftn(x) · h), or with conj(h) (the adjoint), the product fused into the inverse.
pub(super) fn convolve(rec: &mut Recording, plans: &Plans, x: &Chunked, h: &Chunked, adjoint: bool) -> Result<Chunked> {
    let spectrum = plans.forward.record(rec, x)?;
    let inverse = if adjoint { &plans.adjoint } else { &plans.blur };
    inverse.record_with(rec, &spectrum, h)
}

/// Σ x over all chunks, one element.
pub(super) fn sum(rec: &mut Recording, x: &Chunked) -> Result<Buf> {
    let mut total = reduce::record(rec, x.parts[0], Reduction::Sum, None)?;
    for &p in &x.parts[1..] {
        let part = reduce::record(rec, p, Reduction::Sum, None)?;
        total = binary::record(rec, BinaryOp::Add, total, part)?;
    }
    Ok(total)
}

fn monitor(gpu: &Gpu, estimate: &[GpuArray]) -> Result<Monitor> {
    let previous = estimate.iter().map(|e| GpuArray::empty(gpu, e.dims(), Dtype::F32)).collect::<Result<Vec<_>>>()?;
    let mut rec = Recording::new(gpu);
    let (e, p) = (Chunked::inputs(&mut rec, estimate)?, Chunked::inputs(&mut rec, &previous)?);
    e.each_pair(&mut rec, &p, copy_vec4::record)?;
    let snapshot = rec.compile()?;

    let mut rec = Recording::new(gpu);
    let (e, p) = (Chunked::inputs(&mut rec, estimate)?, Chunked::inputs(&mut rec, &previous)?);
    let d2 = e.zip(&mut rec, &p, |rec, e, p| {
        let d = binary::record(rec, BinaryOp::Sub, e, p)?;
        binary::record(rec, BinaryOp::Mul, d, d)
    })?;
    let e2 = e.map(&mut rec, |rec, e| binary::record(rec, BinaryOp::Mul, e, e))?;
    let change = sum(&mut rec, &d2)?;
    let norm = sum(&mut rec, &e2)?;
    let (squared_change, squared_norm) = (rec.download(change), rec.download(norm));
    let measure = rec.compile()?;
    Ok(Monitor { snapshot, measure, squared_change, squared_norm })
}

/// yₖ = max(xₖ + α (xₖ − xₖ₋₁), 0) becomes the estimate the RL update starts from; xₖ is kept
/// as the previous estimate and yₖ as the prediction.
fn record_prediction(rec: &mut Recording, a: &Accelerated, e: &Chunked) -> Result<Chunked> {
    let (p, y) = (Chunked::inputs(rec, &a.previous)?, Chunked::inputs(rec, &a.predicted)?);
    let (cross, square) = (rec.input(&a.cross), rec.input(&a.square));
    for c in 0..e.len() {
        rl_predict::record_into(rec, e.parts[c], p.parts[c], cross, square, y.parts[c])?;
        copy_vec4::record(rec, e.parts[c], p.parts[c])?;
        copy_vec4::record(rec, y.parts[c], e.parts[c])?;
    }
    Ok(y)
}

/// gₖ = xₖ₊₁ − yₖ; the sums Σ gₖ·gₖ₋₁ and Σ gₖ₋₁·gₖ₋₁ for the next prediction; gₖ kept.
fn record_step_sums(rec: &mut Recording, a: &Accelerated, e: &Chunked, y: &Chunked) -> Result<()> {
    let gp = Chunked::inputs(rec, &a.previous_g)?;
    let g = e.zip(rec, y, |rec, e, y| binary::record(rec, BinaryOp::Sub, e, y))?;
    let cross = g.zip(rec, &gp, |rec, g, gp| binary::record(rec, BinaryOp::Mul, g, gp))?;
    let square = gp.map(rec, |rec, gp| binary::record(rec, BinaryOp::Mul, gp, gp))?;
    let cross = sum(rec, &cross)?;
    let square = sum(rec, &square)?;
    let (cross_out, square_out) = (rec.input(&a.cross), rec.input(&a.square));
    copy_vec4::record(rec, cross, cross_out)?;
    copy_vec4::record(rec, square, square_out)?;
    g.each_pair(rec, &gp, copy_vec4::record)
}

/// ‖x − x_previous‖ / ‖x‖ from the monitor's two sums.
fn relative_change(gpu: &Gpu, m: &Monitor) -> Result<f64> {
    let r = m.measure.run(gpu)?;
    let change = r.f32(m.squared_change)?[[0]] as f64;
    let norm = r.f32(m.squared_norm)?[[0]] as f64;
    Ok(if norm > 0.0 {
        (change / norm).sqrt()
    } else if change > 0.0 {
        f64::INFINITY
    } else {
        0.0
    })
}

fn median(v: &mut [f64]) -> Option<f64> {
    (!v.is_empty()).then(|| crate::ops::reduce::cpu::median(v))
}
