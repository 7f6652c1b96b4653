//! scipy.signal.fftconvolve of host volumes whose FFT working set does not fit the device: the
//! padded volume is split along its slowest axis into P parts by decimation in frequency (Karas
//! and Svoboda, "Convolution of large 3D images on GPU and its decomposition", 2011), each part is
//! convolved on its own on a GPU, and the parts are recombined exactly on the host.
//!
//! # The math
//! Let N be the circular length along axis 0 (at least the length the output window needs, as
//! [`Geometry`] computes it), N = P·M with M a fast FFT length, W_N = exp(-2πi/N), and r the
//! other axes (padded to the geometry's lengths). Part p of an array x is the M-row slab
//!
//! ```text
//! y_p[n1, r] = W_N^(n1·p) · Σ_{n2<P} x[n1 + M·n2, r] · W_P^(n2·p) = Σ_{n ≡ n1 (mod M)} W_N^(n·p) · x[n, r]
//! ```
//!
//! whose M-point transform along axis 0 is X at the frequencies P·m + p. The product of two
//! spectra only pairs equal frequencies, so each part convolves independently:
//! z_p = IFFT(FFT(y_p) · FFT(k_p)), with k_p the kernel's part. The inverse DFT over all N
//! frequencies then regroups as
//!
//! ```text
//! z[n] = (1/P) · Σ_p W_N^(-n·p) · z_p[n mod M]
//! ```
//!
//! and z is real. Part P - p is the conjugate mirror of part p (X[N - f] = conj X[f] for real x),
//! and its term in the sum is the conjugate of part p's term, so only parts 0..=P/2 are computed
//! and the others are counted by doubling the real part of their mirror's term. Twiddles are
//! computed in f64 with the phase n·p reduced modulo N in integers.
//!
//! # Memory
//! A part holds on the device only its own slab (no halo): the image's part (min(M, image rows)
//! × the image's other axes, complex), the kernel's part, both zero-padded to M × the padded other
//! axes and transformed (complex), their product and its inverse, and the output window of the
//! part (M × the output's other axes, complex). The executor reuses buffers once they are dead;
//! [`SplitReport::peak_bytes`] is the measured peak (`Compiled::peak_bytes`), about 3-4 × 8 · M ·
//! Π(other padded axes) bytes. P is the smallest 7-smooth count whose part fits every buffer
//! limit and the memory budget per part ([`SplitOptions`]); a GPU holds `in_flight` parts at
//! once. The host holds the input, the output and, in flight, about two parts per worker.
//!
//! # What overlaps
//! One thread folds the next parts' slabs (the twiddled sums above, parallel over rows), a group
//! of workers + 1 parts per sweep over the input, into the buffers of parts already uploaded;
//! worker threads, [`SplitOptions::in_flight`] per GPU (2 by default), each with its own
//! compiled part and buffers, take prepared parts from the preparer one at a time, upload, run
//! and download them; the calling thread adds the finished parts into the output, all those
//! that have arrived in one sweep over it (the output is read and written once per sweep, each
//! part's rows once: the host's cost per part is about its own size, not the output's). The
//! twiddles and the real part of the recombination stay on the host: output rows n1 + M·q of
//! every q read the same part row with different twiddles, so a real part taken on the device
//! would be output-sized (out[0] rows, ~P/2 times the complex M-row part). So the host's folding
//! of the next parts and its recombination of earlier ones overlap the GPUs' work, several GPUs
//! work at once, and on one GPU a second part is already submitted while the first is read
//! back, so the device does not wait for the host between parts. On one GPU everything still
//! goes through one wgpu queue in submission order: its uploads, transforms and downloads do
//! not overlap each other on the device (wgpu exposes no separate copy queue).

use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use ndarray::{ArrayD, ArrayViewD, IxDyn};
use num_complex::{Complex, Complex32, Complex64};
use rustfft::FftNum;
use serde::Serialize;

use super::{check_finite, Geometry, Mode};
use crate::error::{Error, Result};
use crate::fft::plan::smooth_at_least;
use crate::fft::{FftPlan, Fusion, Norm, Transform, Window};
use crate::gpu::{Dtype, Gpu, GpuArray};
use crate::graph::{Compiled, Download, Recording};

/// How to split. The defaults choose P automatically (1, the whole array in one run, when it fits).
#[derive(Clone, Debug, Default)]
pub struct SplitOptions {
    /// Force P parts (1: the whole array in one run).
    pub parts: Option<usize>,
    /// Device memory one part (or the whole run) may hold, in bytes, on top of the per-buffer
    /// limit of each device. A GPU holds up to `in_flight` parts.
    pub max_part_bytes: Option<u64>,
    /// Parts each GPU holds at once, each with its own buffers (default 2: while one part
    /// computes, the other's upload and download and the host's handling of them proceed, so
    /// the device queue never runs dry). A GPU holds up to this many times the part's peak; a
    /// further part that does not fit is simply not started.
    pub in_flight: Option<usize>,
    /// Fill every temporary with NaN before its first use (tests).
    pub poison: bool,
}

/// Parts in flight per GPU unless [`SplitOptions::in_flight`] says otherwise.
pub const DEFAULT_IN_FLIGHT: usize = 2;

/// Where the time went, per part and in total (serialised into `lucent convolve --json`).
#[derive(Clone, Debug, Serialize)]
pub struct SplitReport {
    /// P (1: the whole array in one run).
    pub parts: usize,
    /// Parts computed on a GPU: 0..=P/2 (the others are their conjugate mirrors).
    pub computed_parts: usize,
    /// N, the circular length along axis 0.
    pub padded_len: usize,
    /// M = N / P, the rows of one part.
    pub part_len: usize,
    /// Shape of one part's transform (M and the padded other axes).
    pub part_dims: Vec<usize>,
    /// One entry per computed part, in the order they finished.
    pub per_part: Vec<PartTiming>,
    /// Host time folding slabs into parts (summed over the groups folded; overlaps the GPU).
    pub prepare_ms: f64,
    /// Host time adding parts into the output (summed over the sweeps; overlaps the GPU).
    pub recombine_ms: f64,
    pub total_ms: f64,
    /// "index: name" of every adapter that ran a part.
    pub adapters: Vec<String>,
    /// The largest device memory one part held.
    pub peak_bytes: u64,
    /// Parts each GPU was asked to hold at once (it holds up to this many times `peak_bytes`).
    pub in_flight: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct PartTiming {
    pub part: usize,
    /// Index of the GPU in the list given (two devices may be the same adapter).
    pub worker: usize,
    /// "index: name" of the adapter that ran it.
    pub adapter: String,
    /// Host wall time of the upload, run and download.
    pub ms: f64,
    /// GPU time of the dispatches, when the adapter has timestamps.
    pub gpu_ms: Option<f64>,
    pub peak_bytes: u64,
}

/// The split of one geometry into P parts along axis 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitPlan {
    pub geometry: Geometry,
    /// P.
    pub parts: usize,
    /// N = P · M.
    pub len: usize,
    /// M, a fast FFT length.
    pub part_len: usize,
    /// [M, padded other axes].
    pub part_dims: Vec<usize>,
}

impl SplitPlan {
    /// P parts of `g` (1 ≤ P ≤ the circular length axis 0 needs).
    pub fn new(g: &Geometry, parts: usize) -> Result<SplitPlan> {
        let need = needed_len0(g);
        if parts == 0 || parts > need {
            return Err(Error::Invalid(format!("a split along axis 0 (length {need}) takes 1 to {need} parts, not {parts}")));
        }
        let part_len = smooth_at_least(need.div_ceil(parts));
        let mut part_dims = g.padded.clone();
        part_dims[0] = part_len;
        Ok(SplitPlan { geometry: g.clone(), parts, len: parts * part_len, part_len, part_dims })
    }

    /// The parts computed: 0..=P/2.
    pub fn computed_parts(&self) -> std::ops::RangeInclusive<usize> {
        0..=self.parts / 2
    }

    /// How many times part p counts in the sum: once for the self-mirrored parts 0 and P/2,
    /// twice for the others (their mirror P - p is not computed).
    pub fn weight(&self, p: usize) -> f64 {
        if p == 0 || 2 * p == self.parts { 1.0 } else { 2.0 }
    }

    /// Bytes of one complex array of the part's transform shape.
    pub fn part_bytes(&self) -> u64 {
        self.part_dims.iter().map(|&d| d as u64).product::<u64>() * 8
    }

    /// Shape of x's part before padding: min(M, rows) rows and x's other axes.
    pub fn slab_dims(&self, x: &[usize]) -> Vec<usize> {
        let mut d = x.to_vec();
        d[0] = d[0].min(self.part_len);
        d
    }

    /// Shape of a part's output: M rows and the output's other axes.
    pub fn out_part_dims(&self) -> Vec<usize> {
        let mut d = self.geometry.out.clone();
        d[0] = self.part_len;
        d
    }
}

/// The most parts `g` splits into: one row of axis 0 each.
pub fn max_parts(g: &Geometry) -> usize {
    needed_len0(g)
}

/// The circular length axis 0 needs so that no wrap-around reaches the output window (what
/// [`Geometry::new`] rounds up to a fast length).
fn needed_len0(g: &Geometry) -> usize {
    let (n, m, start, out) = (g.image[0], g.kernel[0], g.start[0], g.out[0]);
    let full = n + m - 1;
    (start + out).max(full - start).max(n).max(m)
}

/// exp(-2πi t / n) for an integer phase t reduced mod n first (as `fft::twiddle` does; exact
/// quarter turns).
fn unit_root(t: u128, n: u128) -> Complex64 {
    let t = t % n;
    if (4 * t).is_multiple_of(n) {
        return [Complex64::new(1.0, 0.0), Complex64::new(0.0, -1.0), Complex64::new(-1.0, 0.0), Complex64::new(0.0, 1.0)][(4 * t / n) as usize];
    }
    let angle = -2.0 * std::f64::consts::PI * (t as f64) / (n as f64);
    Complex64::new(angle.cos(), angle.sin())
}

fn to_t<T: FftNum>(c: Complex64) -> Complex<T> {
    Complex::new(T::from_f64(c.re).unwrap(), T::from_f64(c.im).unwrap())
}

/// Columns a host loop handles at once: the rows that feed a block (a fold's input rows, a
/// recombination's part rows) stay in cache while it is written.
const BLOCK: usize = 1024;

/// y[i] += Σ_j term(w_j, x_j[i]), four rows per pass over y, so y is loaded and stored once
/// per four terms.
fn add_terms<Y, W, X>(y: &mut [Y], terms: &[(W, &[X])], term: impl Fn(W, X) -> Y)
where
    Y: Copy + std::ops::Add<Output = Y>,
    W: Copy,
    X: Copy,
{
    for chunk in terms.chunks(4) {
        if let &[(w0, x0), (w1, x1), (w2, x2), (w3, x3)] = chunk {
            for ((((y, &a), &b), &c), &d) in y.iter_mut().zip(x0).zip(x1).zip(x2).zip(x3) {
                *y = *y + term(w0, a) + term(w1, b) + term(w2, c) + term(w3, d);
            }
        } else {
            for &(w, x) in chunk {
                for (y, &a) in y.iter_mut().zip(x) {
                    *y = *y + term(w, a);
                }
            }
        }
    }
}

/// y[i] += Σ_j w_j · x_j[i] (complex weights, real rows): the fold.
fn add_weighted_rows<T: FftNum>(y: &mut [Complex<T>], terms: &[(Complex<T>, &[T])]) {
    add_terms(y, terms, |w, a| w * a);
}

/// y[i] += Σ_j Re(c_j · z_j[i]) (complex weights, complex rows): the recombination.
fn add_real_products<T: FftNum>(y: &mut [T], terms: &[(Complex<T>, &[Complex<T>])]) {
    add_terms(y, terms, |c, z| c.re * z.re - c.im * z.im);
}

/// Runs `f(row, column, segments)` over equally long `data` slices seen as rows of `row`
/// elements, on all cores: the element range is cut into one contiguous range per thread (parts
/// may have few rows but long ones), each range into its pieces of rows, and `segments` holds the
/// same piece of every slice, starting at `column` of row `row`.
fn par_rows<E: Send>(data: Vec<&mut [E]>, row: usize, f: impl Fn(usize, usize, &mut [&mut [E]]) + Sync) {
    let row = row.max(1);
    let len = data.first().map_or(0, |d| d.len());
    assert!(data.iter().all(|d| d.len() == len), "par_rows: slices of different lengths");
    // At least 4 ranges (the same cuts on any machine), none under 4096 elements (not worth a
    // thread).
    let chunk = len.div_ceil(threads().max(4)).max(1 << 12);
    let mut ranges: Vec<Vec<&mut [E]>> = (0..len.div_ceil(chunk)).map(|_| Vec::with_capacity(data.len())).collect();
    for d in data {
        for (range, piece) in ranges.iter_mut().zip(d.chunks_mut(chunk)) {
            range.push(piece);
        }
    }
    std::thread::scope(|s| {
        for (c, mut pieces) in ranges.into_iter().enumerate() {
            let f = &f;
            s.spawn(move || {
                let (first, end) = (c * chunk, c * chunk + pieces[0].len());
                let mut at = first;
                while at < end {
                    let len = (row - at % row).min(end - at);
                    let mut segments: Vec<&mut [E]> = pieces.iter_mut().map(|p| &mut p[at - first..at - first + len]).collect();
                    f(at / row, at % row, &mut segments);
                    at += len;
                }
            });
        }
    });
}

fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The parts `parts` of `x` (standard layout, the image or the kernel) in one sweep over `x`:
/// row n1 < min(M, rows) of part p is Σ_{n ≡ n1 mod M} W_N^(n·p) · x[n]. Each row of `x` is read
/// once for the whole group. Shapes [`SplitPlan::slab_dims`].
pub fn fold<T: FftNum>(x: &ArrayViewD<T>, plan: &SplitPlan, parts: &[usize]) -> Vec<ArrayD<Complex<T>>> {
    fold_reusing(x, plan, parts, &mut Vec::new())
}

/// [`fold`] into `spare` buffers of earlier parts where there are some of the right length: a
/// fresh buffer costs a page fault per 4 KiB on first write, which made up most of a fold.
pub fn fold_reusing<T: FftNum>(x: &ArrayViewD<T>, plan: &SplitPlan, parts: &[usize], spare: &mut Vec<Vec<Complex<T>>>) -> Vec<ArrayD<Complex<T>>> {
    let x = x.as_standard_layout();
    let src = x.as_slice().unwrap();
    let dims = plan.slab_dims(x.shape());
    let row: usize = dims[1..].iter().product();
    let (rows_in, m, group) = (x.shape()[0], plan.part_len, parts.len());
    // W_N^(n·p) for every input row n and part p of the group, row-major.
    let w: Vec<Complex<T>> = (0..rows_in).flat_map(|n| parts.iter().map(move |&p| to_t::<T>(unit_root(n as u128 * p as u128, plan.len as u128)))).collect();
    let zero = Complex::new(T::zero(), T::zero());
    let mut ys: Vec<Vec<Complex<T>>> = parts
        .iter()
        .map(|_| match spare.pop() {
            Some(y) if y.len() == dims[0] * row => y,
            _ => vec![zero; dims[0] * row],
        })
        .collect();
    par_rows(ys.iter_mut().map(|y| y.as_mut_slice()).collect(), row, |n1, col, outs| {
        let mut terms = Vec::new();
        for b in (0..outs[0].len()).step_by(BLOCK) {
            let end = (b + BLOCK).min(outs[0].len());
            for (k, y) in outs.iter_mut().enumerate() {
                y[b..end].fill(zero); // a reused buffer holds an earlier part
                terms.clear();
                terms.extend((n1..rows_in).step_by(m).map(|n| (w[n * group + k], &src[n * row + col + b..n * row + col + end])));
                add_weighted_rows(&mut y[b..end], &terms);
            }
        }
    });
    ys.into_iter().map(|y| ArrayD::from_shape_vec(IxDyn(&dims), y).unwrap()).collect()
}

/// Adds the terms of the finished parts `zs` ((p, z_p), z_p of shape
/// [`SplitPlan::out_part_dims`], standard layout) to the output in one sweep over it:
/// out[o] += Σ_p weight/P · Re(W_N^(-n·p) · z_p[n mod M]) with n = (start + o) mod N along axis 0.
/// The sweep goes part row by part row: the output rows ≡ n1 (mod M) all read row n1 of every
/// z_p, so each z_p is read from memory once and the output once per group.
pub fn recombine<T: FftNum>(out: &mut ArrayD<T>, zs: &[(usize, &ArrayD<Complex<T>>)], plan: &SplitPlan) {
    let row: usize = plan.geometry.out[1..].iter().product();
    let (start, n_len, m) = (plan.geometry.start[0], plan.len, plan.part_len);
    let group = zs.len();
    let src: Vec<&[Complex<T>]> = zs.iter().map(|(_, z)| z.as_slice().expect("parts come back in standard layout")).collect();
    let part_row = |o: usize| (start + o) % n_len;
    // weight/P · W_N^(-n·p) for every output row and part, row-major.
    let rows_out = plan.geometry.out[0];
    let w: Vec<Complex<T>> = (0..rows_out)
        .flat_map(|o| zs.iter().map(move |&(p, _)| to_t::<T>(unit_root(part_row(o) as u128 * p as u128, n_len as u128).conj() * (plan.weight(p) / plan.parts as f64))))
        .collect();
    // Work units: (part row n1, a column range) with the output rows that read it; about four
    // per thread (so that dealing them round-robin balances the threads), none under 4096
    // columns.
    let threads = threads();
    let cuts = (4 * threads.max(4)).div_ceil(m).min(row >> 12).max(1);
    let width = row.div_ceil(cuts).max(1);
    let mut units: Vec<Vec<(usize, &mut [T])>> = (0..m * cuts).map(|_| Vec::new()).collect();
    let dst = out.as_slice_mut().expect("the output is allocated in standard layout");
    for (o, out_row) in dst.chunks_mut(row.max(1)).enumerate() {
        for (c, piece) in out_row.chunks_mut(width).enumerate() {
            units[(part_row(o) % m) * cuts + c].push((o, piece));
        }
    }
    // No thread for under 4096 output elements.
    let busy = threads.min(units.len()).min((rows_out * row).div_ceil(1 << 12)).max(1);
    let mut dealt: Vec<Vec<_>> = (0..busy).map(|_| Vec::new()).collect();
    for (u, rows) in units.into_iter().enumerate() {
        dealt[u % busy].push((u, rows));
    }
    std::thread::scope(|s| {
        for batch in dealt {
            let (src, w) = (&src, &w);
            s.spawn(move || {
                for (u, rows) in batch {
                    let (n1, col) = (u / cuts, (u % cuts) * width);
                    let Some(len) = rows.first().map(|(_, r)| r.len()) else { continue };
                    let mut rows = rows;
                    let mut terms = Vec::with_capacity(group);
                    for b in (0..len).step_by(BLOCK) {
                        let at = n1 * row + col + b;
                        let end = (b + BLOCK).min(len);
                        for (o, dst) in rows.iter_mut() {
                            terms.clear();
                            terms.extend(src.iter().zip(&w[*o * group..(*o + 1) * group]).map(|(z, &c)| (c, &z[at..at + end - b])));
                            add_real_products(&mut dst[b..end], &terms);
                        }
                    }
                }
            });
        }
    });
}

/// The split algorithm on the CPU (rustfft), in any precision: the f64 check of the algebra.
pub fn reference<T: FftNum>(a: &ArrayViewD<T>, k: &ArrayViewD<T>, mode: Mode, parts: usize) -> Result<ArrayD<T>> {
    let g = Geometry::new(a.shape(), k.shape(), mode)?;
    let plan = SplitPlan::new(&g, parts)?;
    let axes: Vec<usize> = (0..g.padded.len()).collect();
    let spectrum = |x: ArrayD<Complex<T>>| {
        let mut padded = ArrayD::from_elem(IxDyn(&plan.part_dims), Complex::new(T::zero(), T::zero()));
        padded.slice_each_axis_mut(|ax| ndarray::Slice::from(0..x.shape()[ax.axis.0])).assign(&x);
        crate::fft::cpu::c2c(&padded, &axes, false, Norm::Backward)
    };
    // All parts folded in one group and recombined in one sweep (the pipeline's groups are
    // smaller; the loops are the same).
    let parts: Vec<usize> = plan.computed_parts().collect();
    let zs: Vec<ArrayD<Complex<T>>> = fold(a, &plan, &parts)
        .into_iter()
        .zip(fold(k, &plan, &parts))
        .map(|(ya, yk)| {
            let zf = crate::fft::cpu::c2c(&(spectrum(ya) * spectrum(yk)), &axes, true, Norm::Backward);
            ArrayD::from_shape_fn(IxDyn(&plan.out_part_dims()), |o| {
                let src: Vec<usize> = (0..axes.len()).map(|d| if d == 0 { o[0] } else { (g.start[d] + o[d]) % g.padded[d] }).collect();
                zf[IxDyn(&src)]
            })
        })
        .collect();
    let mut out = ArrayD::from_elem(IxDyn(&g.out), T::zero());
    recombine(&mut out, &parts.iter().copied().zip(&zs).collect::<Vec<_>>(), &plan);
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// The GPU side

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
        let window = plan
            .out_part_dims()
            .iter()
            .enumerate()
            .map(|(d, &len)| Window { origin: if d == 0 { 0 } else { g.start[d] as i64 }, len })
            .collect();
        let fusion = Fusion { window: Some(window), product: Some(false), ..Fusion::default() };
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

/// Errors that mean "this size does not fit this device": try more parts.
fn does_not_fit(e: &Error) -> bool {
    matches!(e, Error::TooLarge { .. } | Error::OutOfMemory(_))
}

fn adapter_name(gpu: &Gpu) -> String {
    format!("{}: {}", gpu.summary().index, gpu.summary().name)
}

/// scipy.signal.fftconvolve(a, k, mode) of finite f32 host arrays on `gpus`, split along axis 0
/// when the whole run does not fit (see the module docs). With P = 1 it is [`super::convolve_host`].
pub fn convolve_split(gpus: &[Gpu], a: &ArrayViewD<f32>, k: &ArrayViewD<f32>, mode: Mode, opts: &SplitOptions) -> Result<(ArrayD<f32>, SplitReport)> {
    convolve_split_with_progress(gpus, a, k, mode, opts, &|_, _| {})
}

/// [`convolve_split`] calling `progress(parts done, parts to compute)` as each part is added in.
pub fn convolve_split_with_progress(
    gpus: &[Gpu],
    a: &ArrayViewD<f32>,
    k: &ArrayViewD<f32>,
    mode: Mode,
    opts: &SplitOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<(ArrayD<f32>, SplitReport)> {
    let start = Instant::now();
    let first = gpus.first().ok_or_else(|| Error::Invalid("the split convolution needs at least one GPU".into()))?;
    let g = Geometry::new(a.shape(), k.shape(), mode)?;
    check_finite(a, "convolution input")?;
    check_finite(k, "convolution kernel")?;
    let budget = opts.max_part_bytes.unwrap_or(u64::MAX);
    let max_buffer = gpus.iter().map(|g| g.max_buffer_bytes()).min().unwrap();
    let need = needed_len0(&g);
    let candidates: Vec<usize> = match opts.parts {
        Some(p) => vec![p],
        // 1 (whole), then the 7-smooth counts, skipping those that do not shorten the part.
        None => (1..=need).filter(|&p| smooth_at_least(p) == p).collect(),
    };
    let mut last_m = 0;
    let mut smallest = None;
    for &parts in &candidates {
        let plan = SplitPlan::new(&g, parts)?;
        if parts > 1 && plan.part_len == last_m {
            continue;
        }
        last_m = plan.part_len;
        if parts == 1 {
            // The two half spectra multiplied are the least the whole run holds.
            let spectra = 2 * g.spectrum_dims().iter().map(|&d| d as u64).product::<u64>() * 8;
            if spectra > budget {
                continue;
            }
            if let Some(whole) = whole(first, a, k, &g, budget, opts.poison)? {
                progress(1, 1);
                return Ok(whole.report(&plan, first, start));
            }
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
    let (what, bytes) = match smallest {
        Some((plan, bytes)) => {
            let budget = opts.max_part_bytes.map_or(String::new(), |b| format!("; memory budget {b} bytes per part"));
            (format!("even one part of the split convolution of {:?} with {:?} ({} parts of {:?} complex{budget})", g.image, g.kernel, plan.parts, plan.part_dims), bytes)
        }
        None => (format!("the convolution of {:?} with {:?} in one part", g.image, g.kernel), g.padded.iter().map(|&d| d as u64).product::<u64>() * 8),
    };
    Err(Error::TooLarge { what, bytes, limit: budget.min(max_buffer) })
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
        let y = super::fftconvolve(&mut rec, ab, kb, g.mode)?;
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
    progress: &(dyn Fn(usize, usize) + Sync),
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
    let mut first = Some(first);
    let mut failure = None;
    std::thread::scope(|s| {
        // No more workers than parts (each compiles its part and holds its buffers).
        let gpus = &gpus[..gpus.len().min(total)];
        let slots = slots.min(total.div_ceil(gpus.len()));
        let workers = gpus.len() * slots;
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
            for slot in 0..slots {
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
                progress(report.per_part.len(), total);
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

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}
