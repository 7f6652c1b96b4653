//! Richardson-Lucy of a volume larger than one GPU's memory over several GPUs, exactly: each GPU
//! owns a slab of rows along axis 0 and holds it resident with the `m - 1` rows on either side
//! that one iteration of its rows reads (the PSF's reach, twice: the blur of the estimate, then
//! the correlation of the ratio). Each iteration every GPU updates its slab as whole-image RL of
//! the rows it holds; its own rows come out exact, the halo rows stale, and those are then
//! replaced by the neighbours' fresh rows (through the host: whole padded rows, the layouts being
//! equal). Nothing else crosses between GPUs, and the result equals the whole-volume run (to f32
//! rounding: the slabs' FFT lengths differ), unlike tiles with guard bands.
//!
//! The zero boundary only, without acceleration or a stopping rule (whose sums span the whole
//! volume) and without a batch axis; other runs take tiles.

use std::ops::Range;
use std::sync::Mutex;
use std::time::Instant;

use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn, Slice};
use serde::Serialize;

use super::{gpu::RichardsonLucy, Geometry, Progress, RlBoundary, RlOptions};
use crate::error::{Error, Result};
use crate::host::ms_since;
use crate::Gpu;

/// How a slab run went (serialised into `lucent deconvolve --json`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SlabsReport {
    /// "index: name" of each GPU, in slab order.
    pub adapters: Vec<String>,
    /// Rows along axis 0 each GPU owns, and holds (its own and the halo rows around them).
    pub owned: Vec<Range<usize>>,
    pub held: Vec<Range<usize>>,
    pub halo_rows: usize,
    pub iterations: usize,
    /// Preparing every slab (uploads, padding, OTFs, compiling), all GPUs at once.
    pub setup_ms: f64,
    /// Per GPU, the time its iterations took (excluding the exchanges).
    pub step_ms: Vec<f64>,
    /// All halo exchanges (download from one GPU, upload to its neighbour).
    pub exchange_ms: f64,
    pub ms_per_iteration: f64,
    pub download_ms: f64,
    pub total_ms: f64,
}

/// The slabs (owned rows, held rows) for `gpus.len()` GPUs, or None when this run cannot be
/// split so: one GPU, options whose sums span the volume, a batch axis or another boundary,
/// or slabs thinner than the halo their neighbours need.
pub fn plan(gpus: usize, g: &Geometry, opts: &RlOptions) -> Option<Vec<(Range<usize>, Range<usize>)>> {
    let supported = gpus > 1 && opts.boundary == RlBoundary::Zero && !opts.accelerate && opts.stop.is_none() && g.batch_axes() == 0;
    let (rows, halo) = (g.image[0], g.psf[0] - 1);
    if !supported || rows / gpus < halo.max(1) {
        return None;
    }
    let owned = (0..gpus).map(|i| i * rows / gpus..(i + 1) * rows / gpus);
    Some(owned.map(|r| (r.clone(), r.start.saturating_sub(halo)..(r.end + halo).min(rows))).collect())
}

/// Richardson-Lucy of `image` with `psf` over `gpus` in the slabs of [`plan`] (None there:
/// `Invalid`); `TooLarge` when a slab does not fit its GPU. `progress` after each iteration.
pub fn richardson_lucy_slabs(
    gpus: &[Gpu],
    image: &ArrayViewD<f32>,
    psf: &ArrayViewD<f32>,
    iterations: usize,
    opts: &RlOptions,
    mut progress: impl FnMut(Progress),
) -> Result<(ArrayD<f32>, SlabsReport)> {
    let start = Instant::now();
    let g = super::validate(image, psf, iterations, opts)?;
    let slabs = plan(gpus.len(), &g, opts)
        .ok_or_else(|| Error::Invalid(format!("Richardson-Lucy of {:?} cannot be split into {} slabs exactly", g.image, gpus.len())))?;
    let parts: Vec<Mutex<Option<Result<RichardsonLucy>>>> = slabs.iter().map(|_| Mutex::new(None)).collect();
    crate::gpu::on_workers(gpus.len(), |i| {
        let held = image.slice_axis(Axis(0), Slice::from(slabs[i].1.clone()));
        *parts[i].lock().unwrap() = Some(RichardsonLucy::new(&gpus[i], &held, psf, iterations, opts));
    });
    let parts = parts.into_iter().map(|p| p.into_inner().unwrap().expect("every slab prepared")).collect::<Result<Vec<_>>>()?;
    let setup_ms = ms_since(start);

    let iterating = Instant::now();
    let (mut step_ms, mut exchange_ms) = (vec![0.0; gpus.len()], 0.0);
    for done in 1..=iterations {
        let steps: Vec<Mutex<Result<f64>>> = parts.iter().map(|_| Mutex::new(Ok(0.0))).collect();
        crate::gpu::on_workers(parts.len(), |i| {
            let t = Instant::now();
            *steps[i].lock().unwrap() = parts[i].step().map(|()| ms_since(t));
        });
        for (total, s) in step_ms.iter_mut().zip(steps) {
            *total += s.into_inner().unwrap()?;
        }
        if done < iterations {
            let t = Instant::now();
            exchange(&parts, &slabs)?;
            exchange_ms += ms_since(t);
        }
        progress(Progress::new("iterations", done, iterations));
    }
    let iterate_ms = ms_since(iterating);

    let downloading = Instant::now();
    let row: usize = g.image[1..].iter().product();
    let mut out = crate::host::zeroed_vec::<f32>(g.image.iter().product());
    let mut rest = out.as_mut_slice();
    let mut pieces = Vec::new();
    for (owned, _) in &slabs {
        let (mine, tail) = std::mem::take(&mut rest).split_at_mut(owned.len() * row);
        pieces.push(Mutex::new(mine));
        rest = tail;
    }
    let failed = Mutex::new(None);
    crate::gpu::on_workers(parts.len(), |i| {
        let (owned, held) = &slabs[i];
        let mut out = pieces[i].lock().unwrap();
        if let Err(e) = parts[i].estimate_rows_into(owned.start - held.start..owned.end - held.start, &mut out) {
            failed.lock().unwrap().get_or_insert(e);
        }
    });
    if let Some(e) = failed.into_inner().unwrap() {
        return Err(e);
    }
    let estimate = ArrayD::from_shape_vec(IxDyn(&g.image), out).expect("the image's size");
    let report = SlabsReport {
        adapters: gpus.iter().map(|g| format!("{}: {}", g.summary().index, g.summary().name)).collect(),
        owned: slabs.iter().map(|s| s.0.clone()).collect(),
        held: slabs.iter().map(|s| s.1.clone()).collect(),
        halo_rows: g.psf[0] - 1,
        iterations,
        setup_ms,
        step_ms,
        exchange_ms,
        ms_per_iteration: iterate_ms / iterations.max(1) as f64,
        download_ms: ms_since(downloading),
        total_ms: ms_since(start),
    };
    Ok((estimate, report))
}

/// Each slab's halo rows replaced by its neighbours' own rows, every boundary and direction at
/// once.
fn exchange(parts: &[RichardsonLucy], slabs: &[(Range<usize>, Range<usize>)]) -> Result<()> {
    let failed = Mutex::new(None);
    crate::gpu::on_workers(2 * (parts.len() - 1), |task| {
        let b = task / 2;
        let ((left, left_held), (right, right_held)) = (&slabs[b], &slabs[b + 1]);
        let result = match task % 2 {
            // The right slab's first halo rows, [right_held.start, right.start), are the left's own.
            0 => {
                parts[b].padded_rows(right_held.start - left_held.start..right.start - left_held.start).and_then(|rows| parts[b + 1].set_padded_rows(0, &rows))
            }
            // The left slab's last halo rows, [left.end, left_held.end), are the right's own.
            _ => parts[b + 1]
                .padded_rows(left.end - right_held.start..left_held.end - right_held.start)
                .and_then(|rows| parts[b].set_padded_rows(left.end - left_held.start, &rows)),
        };
        if let Err(e) = result {
            failed.lock().unwrap().get_or_insert(e);
        }
    });
    failed.into_inner().unwrap().map_or(Ok(()), Err)
}
