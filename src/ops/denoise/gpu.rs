//! The adaptive filter on the GPU, in slabs along one axis, in two passes over the data:
//!
//! 1. **Structure** (per slab, the data's window with `Halo::structure` downsampled samples on
//!    each side): downsampling, the monomial filters (a [`FilterBank`]: two kernels per complex
//!    transform, the data mirrored at its borders), the structure tensor and its lowpass. The
//!    slab's own part of the tensor goes to a host array of the whole volume; its largest norm
//!    over the whole volume sets the magnitude mapping's scale.
//! 2. **Reconstruction** (per slab, the data with `Halo::data` samples and the tensor with
//!    `Halo::weights` on each side): the control tensor's weights and their lowpass at low
//!    resolution, then the reconstruction bank's pairs, each added into the result as it comes
//!    (`kernels::denoise_accumulate` interpolates the weights), so one pair lives at a time.
//!
//! Every stage reaches a bounded distance, so each slab's own part equals the whole-volume
//! result; the slab length is the longest whose windows fit the device's buffers and memory.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn, Slice, Zip};
use rayon::prelude::*;

use super::{filters, tensor_components, weight_coefficients, Options};
use crate::error::{Error, Result};
use crate::gpu::{Dtype, Gpu, GpuArray};
use crate::graph::{Buf, Recording};
use crate::kernels::boundary::Boundary;
use crate::kernels::denoise_accumulate::{self, AccumulateParams, NO_RESPONSE};
use crate::kernels::denoise_control::{self, ControlParams};
use crate::kernels::denoise_direct::{self, four, DIRECT_FILTERS};
use crate::kernels::gather::{self, AxisMap};
use crate::kernels::{copy_range, fill};
use crate::kernels::{denoise_normalize, denoise_structure};
use crate::ops::convolve::bank::FilterBank;
use crate::ops::convolve::{Geometry, Mode};
use crate::ops::filter::{correlate1d, gaussian_weights};
use crate::ops::layout;
use crate::placement::Progress;

/// Where the work went: slabs, seconds per stage (host transfers included), the largest device
/// memory one run held.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Report {
    /// The reconstruction's slabs (the structure pass's are fewer or as many).
    pub slabs: usize,
    pub structure_slabs: usize,
    pub axis: usize,
    pub structure_s: f64,
    pub reconstruction_s: f64,
    pub peak_bytes: u64,
}

/// Reconstruction filters a direct pass computes (two pairs: the pass's stack stays small).
const RECONSTRUCTION_CHUNK: usize = 4;

/// Direct passes over the input the reconstruction takes in d dimensions (one vec4 each).
fn reconstruction_passes(d: usize) -> usize {
    (d * (d + 1) / 2 + 1).div_ceil(RECONSTRUCTION_CHUNK)
}

/// The vec4 multiply-adds a tap of the structure bank takes (all its filters in one pass).
fn structure_groups(d: usize) -> usize {
    (d + d * (d + 1) / 2).div_ceil(4)
}

/// The slabs: interior ranges along `axis` (one of the filtered axes), at full resolution.
#[derive(Clone, Debug, PartialEq)]
pub struct Slabs {
    pub axis: usize,
    pub ranges: Vec<Range<usize>>,
}

/// The low-resolution length of an axis of `n` samples and factor `f`.
fn low_len(n: usize, f: usize) -> usize {
    n.div_ceil(f)
}

/// The slab axis: the longest downsampled axis but the last (whole rows stay contiguous), else
/// the first.
fn slab_axis(dims: &[usize], d: usize, factors: &[usize]) -> usize {
    let lead = dims.len() - d;
    (lead..dims.len() - 1).filter(|&a| factors[a] == 2).max_by_key(|&a| (dims[a], std::cmp::Reverse(a))).unwrap_or(lead)
}

/// The downsampling factor of every axis of data of `rank` axes whose last d are filtered (1
/// along the leading, batch, axes).
fn factors_of(rank: usize, d: usize, o: &Options) -> Vec<usize> {
    let mut f = vec![1; rank - d];
    f.extend(o.factors(d));
    f
}

/// Padding of `r` samples on each side of the last d of `rank` axes.
fn pads(rank: usize, d: usize, r: usize) -> Vec<(usize, usize)> {
    (0..rank).map(|a| if a + d >= rank { (r, r) } else { (0, 0) }).collect()
}

/// The windows of one slab: the data's for the structure pass (full resolution, starting at an
/// even sample along a downsampled axis), the tensor's own part (low resolution), and for the
/// reconstruction the data's and the tensor's windows.
#[derive(Clone, Debug, PartialEq)]
struct Windows {
    structure_data: Range<usize>,
    structure_own: Range<usize>,
    data: Range<usize>,
    tensor: Range<usize>,
}

fn windows(n: usize, f: usize, own: &Range<usize>, o: &Options) -> Windows {
    let h = o.halo();
    let low_n = low_len(n, f);
    let low_own = own.start / f..low_len(own.end, f).min(low_n);
    let low_structure = low_own.start.saturating_sub(h.structure)..(low_own.end + h.structure).min(low_n);
    let reach = h.weights.max(h.data.div_ceil(f) + 1);
    Windows {
        structure_data: low_structure.start * f..(low_structure.end * f).min(n),
        structure_own: low_own.clone(),
        data: own.start.saturating_sub(h.data)..(own.end + h.data).min(n),
        // (Also every sample of the data's window reads its cell and the next.)
        tensor: (own.start / f).saturating_sub(reach)..(own.end.div_ceil(f) + reach).min(low_n),
    }
}

/// Device bytes a pass over one window takes at most, and its largest buffer: the structure
/// pass over a data window of `dims` (`structure`), else the reconstruction pass (estimates
/// from the FFT geometries: the spectrum, the product, the inverse and the window of one pair,
/// the stacks).
fn pass_bytes(dims: &[usize], d: usize, o: &Options, factors: &[usize], structure: bool, axis: usize) -> Result<(u64, u64)> {
    let rank = dims.len();
    let low: Vec<usize> = dims.iter().zip(factors).map(|(&n, &f)| low_len(n, f)).collect();
    let padded = |dims: &[usize], taps: usize| -> Result<u64> {
        // (The reconstruction's window along the slab axis holds its halos: no padding there.)
        let mut p = pads(rank, d, taps / 2);
        if !structure {
            p[axis] = (0, 0);
        }
        let image: Vec<usize> = dims.iter().zip(p).map(|(&n, (a, b))| n + a + b).collect();
        let kernel: Vec<usize> = pads(rank, d, taps / 2).iter().map(|&(a, b)| a + b + 1).collect();
        Ok(Geometry::new(&image, &kernel, Mode::Valid)?.padded.iter().map(|&n| n as u64).product())
    };
    let count: u64 = dims.iter().map(|&n| n as u64).product();
    let low_count: u64 = low.iter().map(|&n| n as u64).product();
    let components = (d * (d + 1) / 2) as u64;
    let stacks = 4 * components * low_count;
    if structure {
        let fft = if o.method.spatial(o.structure_taps, d, structure_groups(d)) { 0 } else { 8 * padded(&low, o.structure_taps)? };
        let pairs = 8 * (d as u64 + components).div_ceil(2) * low_count;
        Ok((3 * fft + pairs + 3 * stacks + 8 * count, fft.max(pairs)))
    } else if o.method.spatial(o.reconstruction_taps, d, reconstruction_passes(d)) {
        let pairs = 8 * (RECONSTRUCTION_CHUNK as u64 / 2) * count;
        Ok((pairs + 12 * count + 3 * stacks, pairs.max(stacks)))
    } else {
        let fft = 8 * padded(dims, o.reconstruction_taps)?;
        Ok((3 * fft + 8 * count + 12 * count + 3 * stacks, fft.max(stacks)))
    }
}

/// Which pass a slab plan is for: each pass takes the longest slabs its own windows allow (the
/// structure pass's halos are three times the reconstruction's, its buffers smaller).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    Structure,
    Reconstruction,
}

/// Slabs of `pass` for data of `dims` (the last d axes filtered): as long as the device holds
/// (or `o.slab_len`'s length), even along a downsampled axis so every slab's low-resolution grid
/// is the whole one's.
pub fn plan(gpu: &Gpu, dims: &[usize], d: usize, o: &Options, pass: Pass) -> Result<Slabs> {
    let factors = factors_of(dims.len(), d, o);
    let axis = slab_axis(dims, d, &factors);
    let n = dims[axis];
    let f = factors[axis];
    let h = o.halo();
    let structure = pass == Pass::Structure;
    let bytes = |len: usize| -> Result<(u64, u64)> {
        let mut window = dims.to_vec();
        // (A reconstruction slab's window with its padding is its rows and both halos, at the
        // volume's ends too.)
        window[axis] = if structure { (len + 2 * (f * h.structure + f)).min(n) } else { len + 2 * h.data };
        pass_bytes(&window, d, o, &factors, structure, axis)
    };
    let fits = |len: usize| -> Result<bool> {
        let (total, largest) = bytes(len)?;
        Ok(total <= gpu.memory_budget_bytes() && largest <= gpu.max_buffer_bytes())
    };
    let mut len = match o.slab_len {
        Some(len) => len.max(1),
        None => {
            let mut len = n;
            while len > f && !fits(len)? {
                len = len.div_ceil(2);
            }
            // Halving overshoots: grow back by eighths of the last step while it fits.
            let step = (len / 8).max(1);
            while len + step < n && fits(len + step)? {
                len += step;
            }
            if !fits(len)? {
                let mut window = dims.to_vec();
                window[axis] = len;
                let (total, largest) = bytes(len)?;
                return Err(Error::TooLarge {
                    what: format!("adaptive filtering of a slab of shape {window:?} (largest buffer {largest} bytes)"),
                    bytes: total,
                    limit: gpu.memory_budget_bytes().min(gpu.max_buffer_bytes()),
                });
            }
            len
        }
    };
    if f == 2 && len < n {
        len += len % 2;
    }
    let ranges = (0..n.div_ceil(len)).map(|s| s * len..((s + 1) * len).min(n)).collect();
    Ok(Slabs { axis, ranges })
}

/// A window of `x` along `axis`, copied out in standard layout (in parallel: the windows of
/// large volumes are most of the host's work).
fn window_of(x: &ArrayViewD<f32>, axis: usize, range: &Range<usize>) -> ArrayD<f32> {
    let view = x.slice_axis(Axis(axis), Slice::from(range.clone()));
    let mut out = ArrayD::zeros(view.raw_dim());
    Zip::from(&mut out).and(&view).par_for_each(|o, &v| *o = v);
    out
}

/// A stack of arrays (one buffer) of shape `dims` filtered by normalised convolution with a
/// Gaussian of `sigma` samples along the last d axes (certainty 1 inside, 0 outside).
fn lowpass_stack(rec: &mut Recording, stack: Buf, arrays: usize, dims: &[usize], d: usize, sigma: f64) -> Result<Buf> {
    let count: usize = dims.iter().product();
    let zero = Boundary::Constant(0.0);
    let filter = |rec: &mut Recording, x: Buf, copies: usize| -> Result<Buf> {
        let mut y = x;
        for a in dims.len() - d..dims.len() {
            let before: usize = copies * dims[..a].iter().product::<usize>();
            let after: usize = dims[a + 1..].iter().product();
            let weights: Vec<f32> = gaussian_weights(sigma, dims[a], zero)?.iter().map(|&w| w as f32).collect();
            let view = rec.reinterpret(y, &[before, dims[a], after], Dtype::F32)?;
            y = correlate1d(rec, view, &weights, 1, zero)?;
        }
        rec.reinterpret(y, &[copies * count], Dtype::F32)
    };
    let ones = rec.temp(&[count], Dtype::F32)?;
    fill::record(rec, ones, 1.0);
    let certainty = filter(rec, ones, 1)?;
    let filtered = filter(rec, stack, arrays)?;
    denoise_normalize::record(rec, filtered, certainty)
}

/// A bank of designed kernels for inputs (already extended past their borders) of one shape,
/// applied by FFT or by direct sums (in chunks of filters, each chunk one pass over the input).
enum Bank {
    Fft(Box<FilterBank>),
    Spatial { chunks: Vec<(GpuArray, usize)>, taps: Vec<usize> },
}

impl Bank {
    /// `chunk` (even) filters at most per direct pass: all of a bank whose responses are needed
    /// together, a few where pairs are consumed one by one (the stack of all would be large).
    fn new(gpu: &Gpu, kernels: &[ArrayD<f64>], image: &[usize], spatial: bool, chunk: usize) -> Result<Bank> {
        // Taps 1 along the leading (batch) axes.
        let mut shape = vec![1; image.len() - kernels[0].ndim()];
        shape.extend(kernels[0].shape());
        let taps = shape.clone();
        if spatial {
            let chunks = kernels
                .chunks(chunk)
                .map(|part| {
                    // Correlation taps (the kernels flipped), four filters to a vec4.
                    let groups = part.len().div_ceil(4);
                    let mut w = vec![0f32; part[0].len() * groups * 4];
                    for (k, kernel) in part.iter().enumerate() {
                        // Reversing the row-major order reverses every axis.
                        let values: Vec<f64> = kernel.iter().copied().collect();
                        for (t, &v) in values.iter().rev().enumerate() {
                            w[t * groups * 4 + k] = v as f32;
                        }
                    }
                    let w = ArrayD::from_shape_vec(IxDyn(&[w.len()]), w).map_err(|e| Error::Invalid(e.to_string()))?;
                    Ok((GpuArray::upload_f32(gpu, &w.view())?, part.len()))
                })
                .collect::<Result<Vec<_>>>()?;
            return Ok(Bank::Spatial { chunks, taps });
        }
        let kernels: Vec<ArrayD<f32>> = kernels
            .iter()
            .map(|k| k.mapv(|v| v as f32).into_shape_with_order(IxDyn(&shape)))
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| Error::Invalid(e.to_string()))?;
        let views: Vec<ArrayViewD<f32>> = kernels.iter().map(|k| k.view()).collect();
        Ok(Bank::Fft(Box::new(FilterBank::new(gpu, &views, image, Mode::Valid)?)))
    }

    /// Every response, packed in pairs in one complex stack of `count` samples per pair, with
    /// each pair's imaginary part's inverse scale.
    fn record_stack(&self, rec: &mut Recording, x: Buf, count: usize) -> Result<(Buf, Vec<f32>)> {
        if let Bank::Spatial { chunks, taps } = self {
            if let [(weights, filters)] = &chunks[..] {
                let w = rec.input(weights);
                let (stack, _) = denoise_direct::record(rec, x, w, taps, *filters)?;
                return Ok((stack, vec![1.0; filters.div_ceil(2)]));
            }
        }
        let mut stack = None;
        let mut inverse_scales = Vec::new();
        self.record_pairs(rec, x, count, |rec, q, pairs, at, scale| {
            inverse_scales.resize(q + 1, 1.0);
            inverse_scales[q] = 1.0 / scale;
            let target = match stack {
                Some(t) => t,
                None => {
                    let t = rec.temp(&[self.pairs() * count], Dtype::C32)?;
                    stack = Some(t);
                    t
                }
            };
            copy_range::record(rec, pairs, at, target, q * count, count)
        })?;
        Ok((stack.expect("a pair at least"), inverse_scales))
    }

    fn pairs(&self) -> usize {
        match self {
            Bank::Fft(bank) => bank.len().div_ceil(2),
            Bank::Spatial { chunks, .. } => chunks.iter().map(|(_, f)| f.div_ceil(2)).sum(),
        }
    }

    /// The responses pair by pair: `consume(rec, q, stack, offset, scale)` with pair q at
    /// `offset` of `stack` (by FFT one pair lives at a time, by direct sums one chunk).
    fn record_pairs(
        &self,
        rec: &mut Recording,
        x: Buf,
        count: usize,
        mut consume: impl FnMut(&mut Recording, usize, Buf, usize, f32) -> Result<()>,
    ) -> Result<()> {
        match self {
            Bank::Fft(bank) => bank.record_pairs(rec, x, |rec, q, window, scale| consume(rec, q, window, 0, scale)),
            Bank::Spatial { chunks, taps } => {
                let mut q = 0;
                for (weights, filters) in chunks {
                    let w = rec.input(weights);
                    let (stack, _) = denoise_direct::record(rec, x, w, taps, *filters)?;
                    for p in 0..filters.div_ceil(2) {
                        consume(rec, q, stack, p * count, 1.0)?;
                        q += 1;
                    }
                }
                Ok(())
            }
        }
    }
}

/// The structure tensor's components (a stack, lowpass filtered) of one data window of `dims`.
fn record_tensor(rec: &mut Recording, x: Buf, dims: &[usize], d: usize, o: &Options, bank: &Bank) -> Result<Buf> {
    let rank = dims.len();
    let factors = factors_of(rank, d, o);
    let mut y = x;
    for a in (0..rank).filter(|&a| factors[a] == 2) {
        y = correlate1d(rec, y, &[0.25, 0.5, 0.25], a, Boundary::Mirror)?;
    }
    let low: Vec<usize> = dims.iter().zip(&factors).map(|(&n, &f)| low_len(n, f)).collect();
    if factors.contains(&2) {
        let maps: Vec<AxisMap> = (0..rank).map(|a| AxisMap { len: low[a], src_axis: a, origin: 0, step: factors[a] as i64 }).collect();
        y = gather::record(rec, y, &maps, Boundary::Nearest)?;
    }
    let r = o.structure_taps / 2;
    let padded = layout::pad(rec, y, &pads(rank, d, r), Boundary::Mirror)?;
    let (stack, inverse_scales) = bank.record_stack(rec, padded, low.iter().product())?;
    let tensor = denoise_structure::record(rec, stack, d, &inverse_scales)?;
    lowpass_stack(rec, tensor, d * (d + 1) / 2, &low, d, o.tensor_sigma)
}

/// The low-resolution placement of one reconstruction window.
struct Placement {
    full_start: Vec<usize>,
    low_start: Vec<usize>,
    low_dims: Vec<usize>,
    low_total: Vec<usize>,
}

/// The result for one slab of `dims` from its data window padded by `pads` (mirrored: past the
/// volume's ends, and along the slab's axis only where the window lacks data) and the structure
/// tensor's window (a stack).
#[allow(clippy::too_many_arguments)]
fn record_reconstruction(
    rec: &mut Recording,
    x: Buf,
    dims: &[usize],
    pads: &[(usize, usize)],
    d: usize,
    tensor: Buf,
    at: &Placement,
    largest: f64,
    o: &Options,
    bank: &Bank,
) -> Result<Buf> {
    let rank = dims.len();
    let components = d * (d + 1) / 2;
    let mut coefficients = [0.0f32; 100];
    for (k, row) in weight_coefficients(d).iter().enumerate() {
        for (c, &m) in row.iter().enumerate() {
            coefficients[10 * k + c] = m as f32;
        }
    }
    let p = ControlParams {
        count: 0,
        largest: largest as f32,
        sigma: o.sigma as f32,
        alpha: o.alpha as f32,
        beta: o.beta as f32,
        isotropy_alpha: o.isotropy_alpha as f32,
        isotropy_beta: o.isotropy_beta as f32,
        gamma0: o.gamma0 as f32,
        coefficients,
    };
    let weights = denoise_control::record(rec, tensor, d, &p)?;
    let weights = lowpass_stack(rec, weights, components, &at.low_dims, d, o.control_sigma)?;
    let padded = layout::pad(rec, x, pads, Boundary::Mirror)?;
    let out = rec.temp(dims, Dtype::F32)?;
    let factors = factors_of(rank, d, o);
    let filters = components + 1;
    bank.record_pairs(rec, padded, dims.iter().product(), |rec, q, pair, at_pair, scale| {
        let p = AccumulateParams {
            dims: four(dims, 1),
            low_dims: four(&at.low_dims, 1),
            full_start: four(&at.full_start, 0),
            low_start: four(&at.low_start, 0),
            low_total: four(&at.low_total, 1),
            factors: four(&factors, 1),
            count: 0,
            low_count: 0,
            a: 2 * q as u32,
            b: if 2 * q + 1 < filters { 2 * q as u32 + 1 } else { NO_RESPONSE },
            inverse_scale: 1.0 / scale,
            accumulate: (q > 0) as u32,
            pair_at: at_pair as u32,
            unused: 0,
        };
        denoise_accumulate::record(rec, pair, weights, out, &p)
    })?;
    Ok(out)
}

/// Runs `n` slabs with the host's work beside the device's: while slab s runs on the GPU,
/// slab s − 1's result is put in place (`post`) and slab s + 1's windows are cut (`prep`).
fn pipelined<P: Send, R: Send>(
    n: usize,
    prep: impl Fn(usize) -> Result<P> + Sync,
    run: impl Fn(usize, P) -> Result<R> + Sync,
    mut post: impl FnMut(usize, R) -> Result<()> + Send,
    progress: &mut dyn FnMut(usize),
) -> Result<()> {
    let mut next = Some(prep(0)?);
    let mut done: Option<(usize, R)> = None;
    for s in 0..n {
        progress(s);
        let input = next.take().expect("prepared");
        let (result, side) = rayon::join(
            || run(s, input),
            || -> Result<Option<P>> {
                if let Some((k, r)) = done.take() {
                    post(k, r)?;
                }
                if s + 1 < n {
                    prep(s + 1).map(Some)
                } else {
                    Ok(None)
                }
            },
        );
        next = side?;
        done = Some((s, result?));
    }
    if let Some((k, r)) = done {
        post(k, r)?;
    }
    Ok(())
}

/// The bank for inputs of `padded`, made once per shape (by whichever thread first needs it).
fn bank_for(banks: &Mutex<HashMap<Vec<usize>, Arc<Bank>>>, padded: &[usize], make: impl FnOnce() -> Result<Bank>) -> Result<Arc<Bank>> {
    let mut banks = banks.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(b) = banks.get(padded) {
        return Ok(b.clone());
    }
    let bank = Arc::new(make()?);
    banks.insert(padded.to_vec(), bank.clone());
    Ok(bank)
}

/// The structure pass over data of exactly d axes: the lowpass filtered tensor's components at
/// low resolution (one host array each) and the largest tensor norm.
pub fn structure(
    gpu: &Gpu,
    x: &ArrayViewD<f32>,
    d: usize,
    o: &Options,
    slabs: &Slabs,
    report: &mut Report,
    progress: &mut dyn FnMut(Progress),
) -> Result<(Vec<ArrayD<f32>>, f64)> {
    let dims = x.shape().to_vec();
    let rank = dims.len();
    let factors = factors_of(rank, d, o);
    let (axis, f) = (slabs.axis, factors[slabs.axis]);
    let low: Vec<usize> = dims.iter().zip(&factors).map(|(&n, &f)| low_len(n, f)).collect();
    let components = d * (d + 1) / 2;
    let mut tensor: Vec<ArrayD<f32>> = (0..components).map(|_| ArrayD::zeros(IxDyn(&low))).collect();
    let set = filters(d, o);
    let banks = Mutex::new(HashMap::new());
    let spatial = o.method.spatial(o.structure_taps, d, structure_groups(d));
    let peak = AtomicU64::new(0);
    let started = Instant::now();
    let window = |s: usize| windows(dims[axis], f, &slabs.ranges[s], o);
    let prep = |s: usize| -> Result<(ArrayD<f32>, Arc<Bank>)> {
        let w = window(s);
        let data = window_of(x, axis, &w.structure_data);
        let r = o.structure_taps / 2;
        let padded: Vec<usize> = data.shape().iter().zip(&factors).zip(pads(rank, d, r)).map(|((&n, &f), (a, b))| low_len(n, f) + a + b).collect();
        let bank = bank_for(&banks, &padded, || Bank::new(gpu, &set.structure, &padded, spatial, DIRECT_FILTERS))?;
        Ok((data, bank))
    };
    let run = |s: usize, (data, bank): (ArrayD<f32>, Arc<Bank>)| -> Result<ArrayD<f32>> {
        let mut rec = Recording::new(gpu);
        let xb = rec.upload_once_f32(&data.view())?;
        let t = record_tensor(&mut rec, xb, data.shape(), d, o, &bank)?;
        // Only the slab's own rows come back (its window's halos were half the stack).
        let w = window(s);
        let skip = w.structure_own.start - w.structure_data.start / f;
        let mut stacked: Vec<usize> = data.shape().iter().zip(&factors).map(|(&n, &f)| low_len(n, f)).collect();
        let (before, after) = (components * stacked[..axis].iter().product::<usize>(), stacked[axis + 1..].iter().product::<usize>());
        let t = rec.reinterpret(t, &[before, stacked[axis], after], Dtype::F32)?;
        let rows = AxisMap { len: w.structure_own.len(), src_axis: 1, origin: skip as i64, step: 1 };
        let own = gather::record(&mut rec, t, &[AxisMap::identity(0, before), rows, AxisMap::identity(2, after)], Boundary::Nearest)?;
        let download = rec.download(own);
        let results = rec.run()?;
        peak.fetch_max(results.report.peak_bytes, Ordering::Relaxed);
        stacked[axis] = w.structure_own.len();
        stacked.insert(0, components);
        results.into_f32(download)?.into_shape_with_order(IxDyn(&stacked)).map_err(|e| Error::Invalid(e.to_string()))
    };
    let post = |s: usize, stack: ArrayD<f32>| -> Result<()> {
        let own = window(s).structure_own;
        for (c, t) in tensor.iter_mut().enumerate() {
            Zip::from(t.slice_axis_mut(Axis(axis), Slice::from(own.clone()))).and(stack.index_axis(Axis(0), c)).par_for_each(|o, &v| *o = v);
        }
        Ok(())
    };
    pipelined(slabs.ranges.len(), prep, run, post, &mut |s| progress(Progress::new("structure", s, slabs.ranges.len())))?;
    report.peak_bytes = report.peak_bytes.max(peak.into_inner());
    let largest = largest_norm(&tensor, d);
    report.structure_s += started.elapsed().as_secs_f64();
    Ok((tensor, largest))
}

/// The largest Frobenius norm of the tensor over the whole volume.
fn largest_norm(tensor: &[ArrayD<f32>], d: usize) -> f64 {
    let pairs = tensor_components(d);
    let slices: Vec<&[f32]> = tensor.iter().map(|t| t.as_slice().expect("standard layout")).collect();
    (0..slices[0].len())
        .into_par_iter()
        .map(|i| pairs.iter().enumerate().map(|(c, &(a, b))| (if a == b { 1.0 } else { 2.0 }) * (slices[c][i] as f64).powi(2)).sum::<f64>())
        .reduce(|| 0.0, f64::max)
        .sqrt()
}

/// The reconstruction pass: the result for data of exactly d axes from the structure pass.
pub fn reconstruction(
    gpu: &Gpu,
    x: &ArrayViewD<f32>,
    d: usize,
    tensor: &[ArrayD<f32>],
    largest: f64,
    o: &Options,
    slabs: &Slabs,
    report: &mut Report,
    progress: &mut dyn FnMut(Progress),
) -> Result<ArrayD<f32>> {
    let dims = x.shape().to_vec();
    let rank = dims.len();
    let factors = factors_of(rank, d, o);
    let (axis, f) = (slabs.axis, factors[slabs.axis]);
    let low: Vec<usize> = dims.iter().zip(&factors).map(|(&n, &f)| low_len(n, f)).collect();
    let set = filters(d, o);
    let banks = Mutex::new(HashMap::new());
    let spatial = o.method.spatial(o.reconstruction_taps, d, reconstruction_passes(d));
    let mut out = ArrayD::<f32>::zeros(IxDyn(&dims));
    let peak = AtomicU64::new(0);
    let started = Instant::now();
    let window = |s: usize| windows(dims[axis], f, &slabs.ranges[s], o);
    let r = o.reconstruction_taps / 2;
    // A slab's own rows are filtered from its data window: the rows of its halos, padded only
    // past the volume's ends (a window's mirrored ends reached only rows that were dropped).
    let slab_pads = |s: usize| -> Vec<(usize, usize)> {
        let (own, w) = (&slabs.ranges[s], window(s));
        let mut p = pads(rank, d, r);
        p[axis] = (r - (own.start - w.data.start), r - (w.data.end - own.end));
        p
    };
    // A slab's data window, its tensor window, where it goes, and the bank it is filtered with.
    type Prepared = (ArrayD<f32>, ArrayD<f32>, Placement, Arc<Bank>);
    let prep = |s: usize| -> Result<Prepared> {
        let w = window(s);
        let data = window_of(x, axis, &w.data);
        // The components' windows copied by all cores straight into one stack (a concatenation
        // of copies took a second copy, on one core).
        let parts: Vec<ArrayViewD<f32>> = tensor.iter().map(|t| t.slice_axis(Axis(axis), Slice::from(w.tensor.clone()))).collect();
        let mut stacked = vec![parts.len()];
        stacked.extend(parts[0].shape());
        let mut stack = ArrayD::<f32>::zeros(IxDyn(&stacked));
        for (mut slot, part) in stack.outer_iter_mut().zip(&parts) {
            Zip::from(&mut slot).and(part).par_for_each(|o, &v| *o = v);
        }
        let stack = stack.into_shape_with_order(IxDyn(&[parts.len() * parts[0].len()])).map_err(|e| Error::Invalid(e.to_string()))?;
        let mut full_start = vec![0; rank];
        full_start[axis] = slabs.ranges[s].start;
        let mut low_start = vec![0; rank];
        low_start[axis] = w.tensor.start;
        let at = Placement { full_start, low_start, low_dims: stacked[1..].to_vec(), low_total: low.clone() };
        let padded: Vec<usize> = data.shape().iter().zip(slab_pads(s)).map(|(&n, (a, b))| n + a + b).collect();
        let bank = bank_for(&banks, &padded, || Bank::new(gpu, &set.reconstruction, &padded, spatial, RECONSTRUCTION_CHUNK))?;
        Ok((data, stack, at, bank))
    };
    let run = |s: usize, (data, stack, at, bank): (ArrayD<f32>, ArrayD<f32>, Placement, Arc<Bank>)| -> Result<ArrayD<f32>> {
        let mut rec = Recording::new(gpu);
        let xb = rec.upload_once_f32(&data.view())?;
        let tb = rec.upload_once_f32(&stack.view())?;
        let mut own = data.shape().to_vec();
        own[axis] = slabs.ranges[s].len();
        let y = record_reconstruction(&mut rec, xb, &own, &slab_pads(s), d, tb, &at, largest, o, &bank)?;
        let download = rec.download(y);
        let results = rec.run()?;
        peak.fetch_max(results.report.peak_bytes, Ordering::Relaxed);
        results.into_f32(download)
    };
    let post = |s: usize, y: ArrayD<f32>| -> Result<()> {
        Zip::from(out.slice_axis_mut(Axis(axis), Slice::from(slabs.ranges[s].clone()))).and(&y).par_for_each(|o, &v| *o = v);
        Ok(())
    };
    pipelined(slabs.ranges.len(), prep, run, post, &mut |s| progress(Progress::new("reconstruction", s, slabs.ranges.len())))?;
    report.peak_bytes = report.peak_bytes.max(peak.into_inner());
    report.reconstruction_s += started.elapsed().as_secs_f64();
    Ok(out)
}

/// Whether both banks go by direct sums, so a batch of items can run as one array (a leading
/// axis with taps 1; by FFT every item takes its own pass).
pub fn batches_together(d: usize, o: &Options) -> bool {
    d <= 3 && o.method.spatial(o.structure_taps, d, structure_groups(d)) && o.method.spatial(o.reconstruction_taps, d, reconstruction_passes(d))
}

/// The adaptive filter of data whose last d axes are filtered (at most one leading, batch, axis;
/// checked by the caller), slab by slab.
pub fn adaptive_filter(gpu: &Gpu, x: &ArrayViewD<f32>, d: usize, o: &Options, report: &mut Report, progress: &mut dyn FnMut(Progress)) -> Result<ArrayD<f32>> {
    let (first, second) = (plan(gpu, x.shape(), d, o, Pass::Structure)?, plan(gpu, x.shape(), d, o, Pass::Reconstruction)?);
    report.slabs = second.ranges.len();
    report.structure_slabs = first.ranges.len();
    report.axis = second.axis;
    let (tensor, largest) = structure(gpu, x, d, o, &first, report, progress)?;
    let y = reconstruction(gpu, x, d, &tensor, largest, o, &second, report, progress)?;
    let t = Instant::now();
    drop(tensor);
    crate::gpu::trace("denoise: the tensor freed", t);
    Ok(y)
}
