//! scipy.signal.fftconvolve of host arrays over several GPUs, or beyond one GPU's memory, as
//! slabs of output rows along axis 0 (overlap-save): each slab convolves, in core on one GPU
//! (whole, or in chunks), just the input rows its outputs read — its own rows and the kernel's
//! extent minus one along axis 0 — and its rows stream back straight into the result. Slabs go
//! to the GPUs from one queue, so a faster GPU takes more of them. Unlike the frequency split
//! ([`super::split`]) nothing is folded or recombined on the host, which was nearly all of that
//! path's time (BENCHMARKS.md run 14); the price is the halo rows each slab transforms again,
//! so slabs are used while a slab's halo is no larger than its own rows.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn, Slice};
use serde::Serialize;

use super::{chunked, Geometry, KernelSpectrum, Mode};
use crate::error::{Error, Result};
use crate::gpu::{Gpu, GpuArray};
use crate::graph::Recording;

/// Where the time went (serialised into `lucent convolve --json`).
#[derive(Clone, Debug, Serialize)]
pub struct SlabReport {
    pub slabs: usize,
    /// Input rows along axis 0 each slab reads beyond its own (the kernel's rows minus one).
    pub halo_rows: usize,
    /// "index: name" of each GPU, in the order given.
    pub adapters: Vec<String>,
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

/// The fewest slabs (at least `least`, and one per GPU) whose in-core runs fit every GPU's
/// memory budget and whose halo is no larger than their rows; `None` when no such split exists.
pub fn slab_count(gpus: &[Gpu], g: &Geometry, least: usize) -> Option<usize> {
    let budget = gpus.iter().map(|gpu| gpu.memory_budget_bytes()).min()?;
    let (rows, halo) = (g.out[0], g.kernel[0] - 1);
    (least.max(gpus.len())..=rows).take_while(|&slabs| halo <= rows / slabs).find(|&slabs| slab_geometries(g, slabs).iter().all(|s| chunked::bytes_in_core(&s.padded) <= budget))
}

/// `a` convolved with `k` (oriented as a convolution) in `slabs` slabs over `gpus`;
/// `progress(done, total)` after each slab.
pub fn convolve(
    gpus: &[Gpu],
    a: &ArrayViewD<f32>,
    k: &ArrayViewD<f32>,
    mode: Mode,
    slabs: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<(ArrayD<f32>, SlabReport)> {
    let start = Instant::now();
    let g = Geometry::new(a.shape(), k.shape(), mode)?;
    let rows = even_rows(g.out[0], slabs);
    let mut y = ArrayD::from_shape_vec(IxDyn(&g.out), bytemuck::zeroed_vec(g.out.iter().product())).expect("the output's size");
    let row_len: usize = g.out[1..].iter().product();
    // Each slab's rows of the result, handed out from one queue.
    let mut rest = y.as_slice_mut().expect("a new array");
    let mut queue = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let (mine, tail) = std::mem::take(&mut rest).split_at_mut(r.len() * row_len);
        queue.push((i, r.clone(), mine));
        rest = tail;
    }
    let total = queue.len();
    let queue = Mutex::new(queue.into_iter());
    let done = Mutex::new((Vec::new(), None::<Error>));
    crate::gpu::on_workers(gpus.len(), |worker| {
        let (gpu, mut spectra) = (&gpus[worker], HashMap::new());
        loop {
            if done.lock().unwrap().1.is_some() {
                return;
            }
            let Some((slab, rows, out)) = queue.lock().unwrap().next() else { return };
            let t = Instant::now();
            let result = convolve_slab(gpu, a, k, &g, rows.clone(), out, &mut spectra);
            crate::gpu::trace(&format!("slab {slab} on GPU {worker}"), t);
            let mut done = done.lock().unwrap();
            match result {
                Ok(chunks) => {
                    done.0.push(SlabTiming { slab, rows, worker, ms: t.elapsed().as_secs_f64() * 1e3, chunks });
                    progress(done.0.len(), total);
                }
                Err(e) => {
                    done.1.get_or_insert(e);
                }
            }
        }
    });
    let (per_slab, error) = done.into_inner().unwrap();
    if let Some(e) = error {
        return Err(e);
    }
    let adapters = gpus.iter().map(|gpu| format!("{}: {}", gpu.summary().index, gpu.summary().name)).collect();
    Ok((y, SlabReport { slabs: total, halo_rows: g.kernel[0] - 1, adapters, per_slab, total_ms: start.elapsed().as_secs_f64() * 1e3 }))
}

/// `rows` rows in `slabs` consecutive ranges (at least one row each) differing by one row at most.
fn even_rows(rows: usize, slabs: usize) -> Vec<Range<usize>> {
    let slabs = slabs.clamp(1, rows);
    (0..slabs).map(|i| i * rows / slabs..(i + 1) * rows / slabs).collect()
}

/// The geometry of each of `slabs` slabs of output rows.
fn slab_geometries(g: &Geometry, slabs: usize) -> Vec<Geometry> {
    even_rows(g.out[0], slabs).into_iter().map(|r| slab_geometry(g, &r).1).collect()
}

/// The input rows output rows `rows` read, and the window of their full convolution that is
/// those output rows (the other axes' windows as the whole run's).
fn slab_geometry(g: &Geometry, rows: &Range<usize>) -> (Range<usize>, Geometry) {
    let (first, last) = (g.start[0] + rows.start, g.start[0] + rows.end);
    let input = first.saturating_sub(g.kernel[0] - 1)..last.min(g.image[0]);
    let mut image = g.image.clone();
    image[0] = input.len();
    let (mut start, mut out) = (g.start.clone(), g.out.clone());
    (start[0], out[0]) = (first - input.start, rows.len());
    (input, Geometry::window(&image, &g.kernel, g.mode, start, out))
}

/// One slab into `out`: whole when it fits one buffer (the kernel's spectrum kept per slab
/// geometry in `spectra`), else in chunks. Returns the chunk count.
fn convolve_slab(
    gpu: &Gpu,
    a: &ArrayViewD<f32>,
    k: &ArrayViewD<f32>,
    g: &Geometry,
    rows: Range<usize>,
    out: &mut [f32],
    spectra: &mut HashMap<[Vec<usize>; 3], Arc<KernelSpectrum>>,
) -> Result<usize> {
    let (input, sg) = slab_geometry(g, &rows);
    let input = a.slice_axis(Axis(0), Slice::from(input));
    let mut whole = || -> Result<()> {
        let key = [sg.image.clone(), sg.start.clone(), sg.out.clone()];
        let spectrum = match spectra.get(&key) {
            Some(s) => s.clone(),
            None => spectra.entry(key).or_insert(Arc::new(KernelSpectrum::for_geometry(gpu, k, sg.clone())?)).clone(),
        };
        let mut rec = Recording::new(gpu);
        let x = rec.upload_once_f32(&input)?;
        let y = spectrum.record(&mut rec, x)?;
        let o = rec.output(y);
        let y = rec.run()?.array(o);
        GpuArray::download_window_into_f32(gpu, &[y], &vec![0; sg.out.len()], &sg.out, out)
    };
    match whole() {
        Err(Error::TooLarge { .. } | Error::OutOfMemory(_)) => chunked::convolve_into(gpu, &input, k, &sg, out),
        other => other.map(|()| 1),
    }
}
