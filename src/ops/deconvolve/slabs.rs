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
    /// "index: name" of each slab's GPU, in slab order (a GPU too small for a slab is left out).
    pub adapters: Vec<String>,
    /// Each slab's GPU's memory budget (`Gpu::memory_budget_bytes`), which capped its rows.
    pub budgets: Vec<u64>,
    /// Rows along axis 0 each GPU owns, and holds (its own and the halo rows around them).
    pub owned: Vec<Range<usize>>,
    pub held: Vec<Range<usize>>,
    pub halo_rows: usize,
    pub iterations: usize,
    /// Preparing every slab (uploads, padding, OTFs, compiling), all GPUs at once.
    pub setup_ms: f64,
    /// Per slab (its GPU), the time its iterations took (excluding the exchanges).
    pub step_ms: Vec<f64>,
    /// All halo exchanges (download from one GPU, upload to its neighbour).
    pub exchange_ms: f64,
    pub ms_per_iteration: f64,
    pub download_ms: f64,
    pub total_ms: f64,
}

/// One GPU's slab: the rows along axis 0 it owns, and those it holds (its own and the halo rows
/// around them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slab {
    /// Index into the GPUs given.
    pub gpu: usize,
    pub owned: Range<usize>,
    pub held: Range<usize>,
}

/// The slabs for `gpus`, in row order, or None when this run cannot be split so: fewer than two
/// GPUs that can each hold a slab, options whose sums span the volume, a batch axis or another
/// boundary, slabs thinner than the halo their neighbours need, or more rows than the GPUs'
/// budgets hold together.
///
/// GPUs may differ in memory (`GpuOptions::device_memory_bytes`, per adapter through
/// `LUCENT_DEVICE_MEMORY_BYTES`): each GPU owns at most the rows whose slab fits its budget, and
/// the largest slab, which every iteration waits for, is as small as those caps allow (the
/// rows shared evenly, a GPU capped below its share leaving the rest to the others). A GPU that
/// cannot hold a halo's worth of rows is left out.
pub fn plan(gpus: &[Gpu], g: &Geometry, opts: &RlOptions) -> Option<Vec<Slab>> {
    let supported = opts.boundary == RlBoundary::Zero && !opts.accelerate && opts.stop.is_none() && g.batch_axes() == 0;
    if !supported {
        return None;
    }
    let (rows, halo) = (g.image[0], g.psf[0] - 1);
    let thinnest = halo.max(1);
    // The most rows GPU `i` can own: its slab, with a halo on `sides` sides (one at either end of
    // the volume, two between), within its budget.
    let cap = |i: usize, sides: usize| {
        let holds = |owned: usize| {
            let mut dims = g.image.clone();
            dims[0] = (owned + sides * halo).min(rows);
            owned > 0 && Geometry::new(&dims, &g.psf, opts.boundary).is_ok_and(|slab| super::gpu::fits(&gpus[i], &slab, opts))
        };
        least(0, rows, |c| !holds(c + 1))
    };
    let mut usable: Vec<usize> = (0..gpus.len()).filter(|&i| cap(i, 1) >= thinnest).collect();
    loop {
        if usable.len() < 2 {
            return None;
        }
        let ends = [0, usable.len() - 1];
        let caps: Vec<usize> = usable.iter().enumerate().map(|(k, &i)| cap(i, if ends.contains(&k) { 1 } else { 2 })).collect();
        // The least largest slab t: every GPU owns min(cap, t) rows, together at least all.
        let share = |t: usize| caps.iter().map(|&c| c.min(t)).sum::<usize>();
        if share(rows) < rows {
            return None;
        }
        let t = least(1, rows, |t| share(t) >= rows);
        let mut counts: Vec<usize> = caps.iter().map(|&c| c.min(t)).collect();
        // Fewer than one row per slab at t too many: one off the last of them.
        let mut excess = share(t) - rows;
        for c in counts.iter_mut().rev().filter(|c| **c == t) {
            if excess == 0 {
                break;
            }
            *c -= 1;
            excess -= 1;
        }
        if counts.iter().any(|&c| c < thinnest) {
            // Too thin for exact halos: one GPU fewer (the one that holds least, the last of equals).
            let drop = (0..usable.len()).rev().min_by_key(|&k| caps[k]).expect("two or more");
            usable.remove(drop);
            continue;
        }
        let mut start = 0;
        return Some(
            usable
                .iter()
                .zip(counts)
                .map(|(&gpu, count)| {
                    let owned = start..start + count;
                    start += count;
                    Slab { gpu, held: owned.start.saturating_sub(halo)..(owned.end + halo).min(rows), owned }
                })
                .collect(),
        );
    }
}

/// The least `v` in `from..=to` with `ok(v)` (`ok` monotone: false, then true), else `to`.
fn least(from: usize, to: usize, ok: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (from, to);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if ok(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
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
    let slabs = plan(gpus, &g, opts).ok_or_else(|| {
        Error::Invalid(format!("Richardson-Lucy of {:?} cannot be split into exact slabs over {} GPUs within their memory budgets", g.image, gpus.len()))
    })?;
    // Validated once above: each slab's data is not checked again.
    let (image, psf) = (super::observed(image, opts), super::prepared_psf(psf, opts.normalize_psf));
    let parts: Vec<Mutex<Option<Result<RichardsonLucy>>>> = slabs.iter().map(|_| Mutex::new(None)).collect();
    crate::gpu::on_workers(slabs.len(), |i| {
        let held = image.slice_axis(Axis(0), Slice::from(slabs[i].held.clone()));
        *parts[i].lock().unwrap() = Some(RichardsonLucy::new_validated(&gpus[slabs[i].gpu], &held, &psf, iterations, opts));
    });
    let parts = parts.into_iter().map(|p| p.into_inner().unwrap().expect("every slab prepared")).collect::<Result<Vec<_>>>()?;
    let setup_ms = ms_since(start);

    let iterating = Instant::now();
    let (mut step_ms, mut exchange_ms) = (vec![0.0; slabs.len()], 0.0);
    // Host rows of each boundary's two directions, reused every iteration.
    let carried: Vec<Mutex<Vec<f32>>> = (0..2 * (slabs.len() - 1)).map(|_| Mutex::new(Vec::new())).collect();
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
            exchange(&parts, &slabs, &carried)?;
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
    for slab in &slabs {
        let (mine, tail) = std::mem::take(&mut rest).split_at_mut(slab.owned.len() * row);
        pieces.push(Mutex::new(mine));
        rest = tail;
    }
    let failed = Mutex::new(None);
    crate::gpu::on_workers(parts.len(), |i| {
        let Slab { owned, held, .. } = &slabs[i];
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
        adapters: slabs.iter().map(|s| format!("{}: {}", gpus[s.gpu].summary().index, gpus[s.gpu].summary().name)).collect(),
        budgets: slabs.iter().map(|s| gpus[s.gpu].memory_budget_bytes()).collect(),
        owned: slabs.iter().map(|s| s.owned.clone()).collect(),
        held: slabs.iter().map(|s| s.held.clone()).collect(),
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
/// once, through `carried` (one host buffer per boundary and direction).
fn exchange(parts: &[RichardsonLucy], slabs: &[Slab], carried: &[Mutex<Vec<f32>>]) -> Result<()> {
    let failed = Mutex::new(None);
    crate::gpu::on_workers(2 * (parts.len() - 1), |task| {
        let b = task / 2;
        let (Slab { owned: left, held: left_held, .. }, Slab { owned: right, held: right_held, .. }) = (&slabs[b], &slabs[b + 1]);
        let rows = &mut carried[task].lock().unwrap();
        let result = match task % 2 {
            // The right slab's first halo rows, [right_held.start, right.start), are the left's own.
            0 => parts[b]
                .padded_rows_into(right_held.start - left_held.start..right.start - left_held.start, rows)
                .and_then(|()| parts[b + 1].set_padded_rows(0, rows)),
            // The left slab's last halo rows, [left.end, left_held.end), are the right's own.
            _ => parts[b + 1]
                .padded_rows_into(left.end - right_held.start..left_held.end - right_held.start, rows)
                .and_then(|()| parts[b].set_padded_rows(left.end - left_held.start, rows)),
        };
        if let Err(e) = result {
            failed.lock().unwrap().get_or_insert(e);
        }
    });
    failed.into_inner().unwrap().map_or(Ok(()), Err)
}
