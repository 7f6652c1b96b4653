//! Transforms of arrays held in several buffers ([`Chunked`], K equal chunks of M rows along
//! axis 0), on the device. The axes inside a chunk are transformed chunk by chunk with ordinary
//! plans; axis 0, which crosses chunks, by one step of decimation in frequency: with n = jM + m
//! (chunk j, row m) and the frequency k = k1 + K k2,
//!
//! ```text
//! X[k1 + K k2] = Σ_m W_M^(m k2) · W_N^(m k1) · Σ_j x[jM + m] W_K^(j k1)
//! ```
//!
//! so a K-point DFT across the chunks at each (m, ...) with the twiddle W_N^(m k1) (one generated
//! kernel binding all K chunks, in place), then an M-point transform along axis 0 inside each
//! chunk, leaves frequency k1 + K k2 at row k2 of chunk k1. The spectrum is in that decimated
//! order along axis 0: element-wise products of spectra of the same plan (convolution,
//! deconvolution) need no reordering, and the inverse undoes it (the M-point inverse inside each
//! chunk, the conjugate twiddles, the K-point inverse across chunks).

use std::collections::HashMap;
use std::fmt::Write;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use bytemuck::{Pod, Zeroable};
use ndarray::ArrayD;
use num_complex::Complex64;
use rayon::prelude::*;

use super::{check_axes, FftPlan, Fusion, Norm, Product, Transform};
use crate::error::{Error, Result};
use crate::gpu::{BindingInfo, BindingKind, Dtype, Gpu, GpuArray, KernelInfo};
use crate::graph::{row_ranges, Buf, Chunked, Recording};
use crate::kernels::binary::{self, BinaryOp};
use crate::kernels::copy_vec4;
use crate::placement::Misfit;

/// The fewest chunks along axis 0 in which a real array of shape `padded` and its half spectrum
/// (along the last axis) fit one buffer of `gpu` each.
pub fn least_chunks(gpu: &Gpu, padded: &[usize]) -> usize {
    let (real, spectrum) = real_and_spectrum_bytes(padded);
    real.max(spectrum).div_ceil(gpu.max_buffer_bytes().max(1)).max(1) as usize
}

/// Bytes of a real f32 array of shape `padded` and of its half spectrum (rfftn along the last
/// axis), saturating.
pub fn real_and_spectrum_bytes(padded: &[usize]) -> (u64, u64) {
    let elements = padded.iter().fold(1u64, |n, &d| n.saturating_mul(d as u64));
    let last = (*padded.last().unwrap() as u64).max(1);
    (elements.saturating_mul(4), (elements / last).saturating_mul(last / 2 + 1).saturating_mul(8))
}

/// The first of `from..=most_chunks(gpu)` chunk counts for which `attempt` does not answer
/// `TooLarge` (a count that cannot work answers `TooLarge` too); the last `TooLarge` when none fits.
pub fn first_fitting<T>(gpu: &Gpu, from: usize, mut attempt: impl FnMut(usize) -> Result<T>) -> Result<T> {
    let (mut chunks, start) = (from.max(1), std::time::Instant::now());
    loop {
        match attempt(chunks) {
            // (More chunks of the same total help a limit, not a device out of memory.)
            Err(e) if Misfit::of(&e) == Some(Misfit::Limit) && chunks < most_chunks(gpu) => {
                crate::gpu::trace(&format!("{chunks} chunks do not fit ({e})"), start);
                chunks += 1
            }
            other => return other,
        }
    }
}

/// The most chunks a transform across them may bind (every chunk and the twiddle table in one
/// kernel), and at most 256: far beyond what a GPU's memory holds at the binding limit.
pub fn most_chunks(gpu: &Gpu) -> usize {
    (gpu.limits().max_storage_buffers_per_shader_stage as usize).saturating_sub(1).clamp(1, 256)
}

/// A transform of a chunked array over `axes`.
pub struct ChunkedFft {
    transform: Transform,
    /// Per chunk, the plan over the axes inside it (none for a complex transform along axis 0
    /// alone).
    inner: Vec<Option<Arc<FftPlan>>>,
    /// Axis 0 across chunks, when it is transformed and there are several chunks.
    across: Option<Across>,
    input: Vec<usize>,
    output: Vec<usize>,
    output_rows: Vec<Range<usize>>,
    /// An inverse's input multiplied by a second array (by its conjugate: `Some(true)`): in the
    /// first pass inside the chunks, or where axis 0 crosses chunks by its own pass.
    product: Option<bool>,
}

struct Across {
    /// The M-point transform along axis 0 of one (complex) chunk.
    along: Arc<FftPlan>,
    cross: Cross,
    scale: f64,
}

impl ChunkedFft {
    /// Plans `transform` of an array of shape `dims` (for a real inverse, its half spectrum)
    /// chunked along axis 0 as `rows`; where axis 0 is transformed the chunks must be equal.
    pub fn new(gpu: &Gpu, dims: &[usize], axes: &[usize], transform: Transform, norm: Norm, rows: &[Range<usize>]) -> Result<ChunkedFft> {
        ChunkedFft::planned(gpu, dims, axes, transform, norm, rows, None, Dtype::F32)
    }

    /// [`new`](Self::new) computing in the real type `real` (F32 or F64, see `FftPlan::fused_as`).
    pub fn new_as(gpu: &Gpu, dims: &[usize], axes: &[usize], transform: Transform, norm: Norm, rows: &[Range<usize>], real: Dtype) -> Result<ChunkedFft> {
        ChunkedFft::planned(gpu, dims, axes, transform, norm, rows, None, real)
    }

    /// An inverse transform whose input is first multiplied element-wise by a second array of its
    /// shape and chunks (by its conjugate when `conj`; [`ChunkedFft::record_with`]): fused into
    /// the first pass where the chunks' own plans come first (one chunk, a batch axis 0), a pass
    /// of its own before the transform across chunks.
    pub fn inverse_of_product(
        gpu: &Gpu,
        dims: &[usize],
        axes: &[usize],
        transform: Transform,
        norm: Norm,
        rows: &[Range<usize>],
        conj: bool,
    ) -> Result<ChunkedFft> {
        if !matches!(transform, Transform::Inverse | Transform::RealInverse { .. }) {
            return Err(Error::Invalid("a fused product is planned for inverse transforms".into()));
        }
        ChunkedFft::planned(gpu, dims, axes, transform, norm, rows, Some(conj), Dtype::F32)
    }

    #[allow(clippy::too_many_arguments)]
    fn planned(
        gpu: &Gpu,
        dims: &[usize],
        axes: &[usize],
        transform: Transform,
        norm: Norm,
        rows: &[Range<usize>],
        product: Option<bool>,
        real: Dtype,
    ) -> Result<ChunkedFft> {
        let axes = check_axes(axes, dims.len())?;
        if rows.is_empty() || rows.iter().map(|r| r.len()).sum::<usize>() != dims[0] || rows.windows(2).any(|w| w[0].end != w[1].start) {
            return Err(Error::Shape(format!("chunk rows {rows:?} do not cover axis 0 of {dims:?}")));
        }
        let k = rows.len();
        let crosses = k > 1 && axes[0] == 0;
        let inner_axes: Vec<usize> = if crosses { axes[1..].to_vec() } else { axes.clone() };
        let real_transform = matches!(transform, Transform::RealForward | Transform::RealInverse { .. });
        if crosses && (inner_axes.is_empty() && real_transform) {
            return Err(Error::Invalid(format!("a real transform along axis 0 alone cannot cross chunks (shape {dims:?})")));
        }
        let m = rows[0].len();
        if crosses && rows.iter().any(|r| r.len() != m) {
            return Err(Error::Shape(format!("a transform along axis 0 needs equal chunks, got rows {rows:?}")));
        }
        let chunk = |r: &Range<usize>| {
            let mut d = dims.to_vec();
            d[0] = r.len();
            d
        };
        let mut plans: HashMap<usize, Arc<FftPlan>> = HashMap::new();
        let mut inner = Vec::with_capacity(k);
        for r in rows {
            if inner_axes.is_empty() {
                inner.push(None);
                continue;
            }
            let plan = match plans.get(&r.len()) {
                Some(p) => p.clone(),
                None => {
                    // The inner plan reads an inverse's input first unless axis 0 crosses chunks.
                    let product = product.filter(|_| !crosses).map(|conj| if conj { Product::MulConj } else { Product::Mul });
                    let fusion = Fusion { product, ..Default::default() };
                    let p = match fusion.product {
                        Some(_) => Arc::new(FftPlan::fused_as(gpu, &chunk(r), &inner_axes, transform, norm, &fusion, real)?),
                        None => FftPlan::cached_as(gpu, &chunk(r), &inner_axes, transform, norm, real)?,
                    };
                    plans.insert(r.len(), p.clone());
                    p
                }
            };
            inner.push(Some(plan));
        }
        // The complex shape axis 0 is transformed in: the inner plan's output going forward, the
        // input coming back.
        let inverse = matches!(transform, Transform::Inverse | Transform::RealInverse { .. });
        let complex_chunk = match (&inner[0], inverse) {
            (Some(p), false) => p.output_dims().to_vec(),
            _ => chunk(&rows[0]),
        };
        let across = match crosses {
            true => {
                let direction = if inverse { Transform::Inverse } else { Transform::Forward };
                // The product stays a pass of its own here: fused into this strided pass it made
                // the 1024³ RL iteration 13% slower on an H100 (BENCHMARKS.md).
                let along = FftPlan::cached_as(gpu, &complex_chunk, &[0], direction, norm, real)?;
                let cross = Cross::new(gpu, k, m, inverse, real)?;
                Some(Across { along, cross, scale: norm.factor(k, inverse) })
            }
            false => None,
        };
        let mut output = match (&inner[0], inverse) {
            (Some(p), _) => p.output_dims().to_vec(),
            (None, _) => complex_chunk,
        };
        if k > 1 {
            // Axis 0 keeps its length: with several chunks it is never the real axis.
            output[0] = dims[0];
        }
        let output_rows = if k > 1 { rows.to_vec() } else { std::iter::once(0..output[0]).collect() };
        Ok(ChunkedFft { transform, inner, across, input: dims.to_vec(), output, output_rows, product })
    }

    pub fn input_dims(&self) -> &[usize] {
        &self.input
    }

    /// The result's shape (the whole array's).
    pub fn output_dims(&self) -> &[usize] {
        &self.output
    }

    /// The result's chunks along axis 0 (the input's, unless one chunk's real axis is axis 0).
    pub fn output_rows(&self) -> &[Range<usize>] {
        &self.output_rows
    }

    /// Whether axis 0 crosses chunks (the spectrum is then in decimated order along it).
    pub fn crosses_chunks(&self) -> bool {
        self.across.is_some()
    }

    /// Records the transform of `x` (left unchanged) and returns the result, chunked alike.
    pub fn record(&self, rec: &mut Recording, x: &Chunked) -> Result<Chunked> {
        if self.product.is_some() {
            return Err(Error::Invalid("this chunked FFT multiplies its input by a second array: use record_with".into()));
        }
        self.record_steps(rec, x, None)
    }

    /// [`record`](Self::record) for a plan made by [`ChunkedFft::inverse_of_product`]: `other`
    /// is the second operand, complex, of the input's shape and chunks.
    pub fn record_with(&self, rec: &mut Recording, x: &Chunked, other: &Chunked) -> Result<Chunked> {
        if self.product.is_none() {
            return Err(Error::Invalid("this chunked FFT has no fused product".into()));
        }
        x.expect_chunked_like(rec, other)?;
        self.record_steps(rec, x, Some(other))
    }

    fn record_steps(&self, rec: &mut Recording, x: &Chunked, other: Option<&Chunked>) -> Result<Chunked> {
        if x.dims != self.input || x.len() != self.inner.len() {
            return Err(Error::Shape(format!("chunked FFT planned for {:?} in {} chunks, given {:?} in {}", self.input, self.inner.len(), x.dims, x.len())));
        }
        let inverse = matches!(self.transform, Transform::Inverse | Transform::RealInverse { .. });
        let Some(across) = &self.across else {
            return self.record_inner(rec, x, other);
        };
        if !inverse {
            let y = match self.inner[0] {
                Some(_) => self.record_inner(rec, x, None)?,
                None => copy(rec, x)?,
            };
            across.cross.record(rec, &y.parts, across.scale)?;
            y.map(rec, |rec, p| across.along.record_in_place(rec, p))
        } else {
            let y = match (other, self.product) {
                (Some(h), Some(conj)) => {
                    let op = if conj { BinaryOp::ComplexMulConj } else { BinaryOp::ComplexMul };
                    let product = x.zip(rec, h, |rec, p, h| binary::record(rec, op, p, h))?;
                    product.map(rec, |rec, p| across.along.record_in_place(rec, p))?
                }
                _ => x.map(rec, |rec, p| across.along.record(rec, p))?,
            };
            across.cross.record(rec, &y.parts, across.scale)?;
            match self.inner[0] {
                Some(_) => self.record_inner(rec, &y, None),
                None => Ok(y),
            }
        }
    }

    /// The plans inside the chunks, with the product fused into their first pass when `other`.
    fn record_inner(&self, rec: &mut Recording, x: &Chunked, other: Option<&Chunked>) -> Result<Chunked> {
        let parts = (0..x.len())
            .map(|c| self.inner[c].as_ref().expect("inner axes").record_with(rec, x.parts[c], other.map(|o| o.parts[c])))
            .collect::<Result<Vec<_>>>()?;
        Chunked::from_parts(rec, parts)
    }
}

fn copy(rec: &mut Recording, x: &Chunked) -> Result<Chunked> {
    x.map(rec, |rec, p| {
        let t = rec.temp_like(p, rec.dtype(p))?;
        copy_vec4::record(rec, p, t)?;
        Ok(t)
    })
}

/// The K-point DFT across chunks with the twiddles W_N^(m k1), N = K M (see the module's text).
struct Cross {
    kernel: &'static KernelInfo,
    /// W_N^t for t in [0, N), computed in f64.
    table: GpuArray,
}

/// Mirrors `Params` in the generated kernel.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Params {
    count: u32,
    row: u32,
    scale: f32,
    /// What `scale` left of the f64 factor (f64 kernels add it back).
    scale_lo: f32,
}

impl Cross {
    fn new(gpu: &Gpu, k: usize, m: usize, inverse: bool, real: Dtype) -> Result<Cross> {
        let per_stage = gpu.limits().max_storage_buffers_per_shader_stage as usize;
        if k + 1 > per_stage {
            return Err(Error::TooLarge {
                what: format!("a transform across {k} chunks (the adapter binds {per_stage} storage buffers per kernel)"),
                bytes: k as u64,
                limit: per_stage.saturating_sub(1) as u64,
            });
        }
        let n = k * m;
        let table = ArrayD::from_shape_vec(vec![n], (0..n).map(|t| root(t, n)).collect()).unwrap();
        let table = GpuArray::upload_complex_as(gpu, &table.view(), real)?;
        Ok(Cross { kernel: cross_kernel(k, inverse, real == Dtype::F64), table })
    }

    fn record(&self, rec: &mut Recording, parts: &[Buf], scale: f64) -> Result<()> {
        let first = parts[0];
        for &p in parts {
            rec.expect_dtype(p, self.table.dtype(), "chunked FFT")?;
            rec.expect_same_shape(first, p, "chunks of a transform along axis 0")?;
        }
        let dims = rec.dims(first);
        let count = dims.iter().product::<usize>() as u32;
        let row = dims[1..].iter().product::<usize>() as u32;
        let (scale, scale_lo) = crate::gpu::f32_pair(scale);
        let p = Params { count, row, scale, scale_lo };
        let mut bufs = parts.to_vec();
        bufs.push(rec.input(&self.table));
        rec.dispatch(self.kernel, &[], bytemuck::bytes_of(&p), &bufs, self.kernel.groups(count as u64));
        Ok(())
    }
}

/// exp(-2πi t/n) in f64.
fn root(t: usize, n: usize) -> Complex64 {
    let a = -2.0 * std::f64::consts::PI * (t % n) as f64 / n as f64;
    Complex64::new(a.cos(), a.sin())
}

/// The cross-chunk kernel for `k` chunks, generated once per (k, direction, precision).
fn cross_kernel(k: usize, inverse: bool, double: bool) -> &'static KernelInfo {
    type Kernels = HashMap<(usize, bool, bool), &'static KernelInfo>;
    static CACHE: Mutex<Option<Kernels>> = Mutex::new(None);
    let mut cache = CACHE.lock().unwrap();
    let map = cache.get_or_insert_with(HashMap::new);
    if let Some(info) = map.get(&(k, inverse, double)) {
        return info;
    }
    let mut bindings: Vec<BindingInfo> = (0..k).map(|_| BindingInfo { kind: BindingKind::StorageReadWrite, name: "chunk" }).collect();
    bindings.push(BindingInfo { kind: BindingKind::StorageRead, name: "tw" });
    bindings.push(BindingInfo { kind: BindingKind::Uniform, name: "p" });
    let name = format!("fft_across_{k}_chunks_{}{}", if inverse { "inverse" } else { "forward" }, if double { "_f64" } else { "" });
    let info: &'static KernelInfo = Box::leak(Box::new(KernelInfo {
        name: Box::leak(name.into_boxed_str()),
        path: "generated by src/fft/chunked.rs",
        source: Box::leak(cross_wgsl(k, inverse, double).into_boxed_str()),
        entry: "main",
        workgroup_size: [256, 1, 1],
        bindings: Box::leak(bindings.into_boxed_slice()),
        params_size: Some(16),
        overrides: &[],
    }));
    map.insert((k, inverse, double), info);
    info
}

/// Forward: y_k1 = W_N^(m k1) Σ_j x_j W_K^(j k1). Inverse: x_j = scale Σ_k1 conj(W_N^(m k1)) y_k1
/// W_K^(-j k1). Element i of every chunk at once; m = i / row.
fn cross_wgsl(k: usize, inverse: bool, double: bool) -> String {
    let mut s = String::new();
    let w = &mut s;
    writeln!(w, "// Generated by src/fft/chunked.rs: a {k}-point DFT across {k} chunks, {}.", if inverse { "inverse" } else { "forward" }).unwrap();
    writeln!(w, "alias real = {};", if double { "f64" } else { "f32" }).unwrap();
    writeln!(w, "struct Params {{ count: u32, row: u32, scale: f32, scale_lo: f32 }}").unwrap();
    for c in 0..k {
        writeln!(w, "@group(0) @binding({c}) var<storage, read_write> c{c}: array<vec2<real>>;").unwrap();
    }
    writeln!(w, "@group(0) @binding({k}) var<storage, read> tw: array<vec2<real>>;").unwrap();
    writeln!(w, "@group(0) @binding({}) var<uniform> p: Params;", k + 1).unwrap();
    writeln!(w, "fn cmul(a: vec2<real>, b: vec2<real>) -> vec2<real> {{ return vec2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }}").unwrap();
    writeln!(w, "fn conj(a: vec2<real>) -> vec2<real> {{ return vec2(a.x, -a.y); }}").unwrap();
    writeln!(w, "@compute @workgroup_size(256)").unwrap();
    writeln!(w, "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{")
        .unwrap();
    writeln!(w, "    let i = (wid.x + nwg.x * (wid.y + nwg.y * wid.z)) * 256u + lid;").unwrap();
    writeln!(w, "    if (i >= p.count) {{ return; }}").unwrap();
    writeln!(w, "    let m = i / p.row;").unwrap();
    let scale = if double { "(f64(p.scale) + f64(p.scale_lo))" } else { "p.scale" };
    for c in 0..k {
        match inverse {
            false => writeln!(w, "    let x{c} = c{c}[i];").unwrap(),
            true if c == 0 => writeln!(w, "    let x0 = c0[i];").unwrap(),
            true => writeln!(w, "    let x{c} = cmul(c{c}[i], conj(tw[m * {c}u]));").unwrap(),
        }
    }
    let sign = if inverse { -1.0 } else { 1.0 };
    for out in 0..k {
        let mut terms = Vec::new();
        for j in 0..k {
            let t = (j * out) % k;
            if t == 0 {
                terms.push(format!("x{j}"));
            } else {
                let a = -2.0 * std::f64::consts::PI * sign * t as f64 / k as f64;
                let (c, s) = if double {
                    (format!("{:?}", a.cos()), format!("{:?}", a.sin()))
                } else {
                    (format!("{:?}", a.cos() as f32), format!("{:?}", a.sin() as f32))
                };
                terms.push(format!("cmul(x{j}, vec2<real>({c}, {s}))"));
            }
        }
        let sum = terms.join(" + ");
        match inverse {
            false if out == 0 => writeln!(w, "    c0[i] = {scale} * ({sum});").unwrap(),
            false => writeln!(w, "    c{out}[i] = {scale} * cmul({sum}, tw[m * {out}u]);").unwrap(),
            true => writeln!(w, "    c{out}[i] = {scale} * ({sum});").unwrap(),
        }
    }
    writeln!(w, "}}").unwrap();
    s
}

/// One-call transforms of host arrays too large for one buffer, in numpy's order on both sides:
/// the array in chunks along axis 0 (a transformed axis 0 needs a chunk count that divides its
/// length), the decimated spectrum's rows put in place on the host as they come back (and an
/// inverse's input rows taken in decimated order as they go).
#[allow(clippy::too_many_arguments)]
pub(super) fn host_transform<O: Clone + Send + Sync + bytemuck::Zeroable>(
    gpu: &Gpu,
    dims: &[usize],
    axes: &[usize],
    transform: Transform,
    norm: Norm,
    real: Dtype,
    upload: &dyn Fn(&mut Recording, &[usize]) -> Result<Buf>,
    fetch: &dyn Fn(&GpuArray) -> Result<ArrayD<O>>,
) -> Result<ArrayD<O>> {
    let axes = check_axes(axes, dims.len())?;
    let n = dims[0];
    first_fitting(gpu, least_chunks(gpu, dims).max(2), |k| {
        if k > n || (axes[0] == 0 && !n.is_multiple_of(k)) {
            return Err(Error::TooLarge {
                what: format!("a transform of shape {dims:?} along axes {axes:?} (axis 0's {n} rows split into no equal chunks that each fit one buffer)"),
                bytes: dims.iter().map(|&d| d as u64).product::<u64>() * 8,
                limit: gpu.max_buffer_bytes(),
            });
        }
        host_in_chunks(gpu, dims, &axes, transform, norm, real, &row_ranges(n, n.div_ceil(k)), upload, fetch)
    })
}

#[allow(clippy::too_many_arguments)]
fn host_in_chunks<O: Clone + Send + Sync + bytemuck::Zeroable>(
    gpu: &Gpu,
    dims: &[usize],
    axes: &[usize],
    transform: Transform,
    norm: Norm,
    real: Dtype,
    rows: &[Range<usize>],
    upload: &dyn Fn(&mut Recording, &[usize]) -> Result<Buf>,
    fetch: &dyn Fn(&GpuArray) -> Result<ArrayD<O>>,
) -> Result<ArrayD<O>> {
    let plan = ChunkedFft::new_as(gpu, dims, axes, transform, norm, rows, real)?;
    let inverse = matches!(transform, Transform::Inverse | Transform::RealInverse { .. });
    let k = rows.len();
    // Chunk c's rows of the array in numpy order: consecutive, or every k-th from c where the
    // spectrum side is decimated.
    let order = |c: usize, r: &Range<usize>, n: usize| -> Vec<usize> {
        if plan.crosses_chunks() {
            (c..n).step_by(k).collect()
        } else {
            r.clone().collect()
        }
    };
    let mut rec = Recording::new(gpu);
    let parts = rows
        .iter()
        .enumerate()
        .map(|(c, r)| upload(&mut rec, &if inverse { order(c, r, dims[0]) } else { r.clone().collect() }))
        .collect::<Result<Vec<_>>>()?;
    let x = Chunked::from_parts(&rec, parts)?;
    let y = plan.record(&mut rec, &x)?;
    let outputs: Vec<_> = y.parts.iter().map(|&p| rec.output(p)).collect();
    let results = rec.run()?;
    let dims = plan.output_dims().to_vec();
    let mut out = ArrayD::from_shape_vec(ndarray::IxDyn(&dims), crate::host::zeroed_vec::<O>(dims.iter().product())).expect("the output's size");
    // Each row of the result once, taken by the part that holds it; the rows copied by every core.
    let mut rows: Vec<Option<ndarray::ArrayViewMutD<O>>> = out.axis_iter_mut(ndarray::Axis(0)).map(Some).collect();
    for ((c, r), o) in plan.output_rows().iter().enumerate().zip(outputs) {
        let part = fetch(&results.array(o))?;
        let targets: Vec<usize> = if inverse { r.clone().collect() } else { order(c, r, dims[0]) };
        let mut taken: Vec<_> = targets.iter().map(|&row| rows[row].take().expect("each row written once")).collect();
        taken.par_iter_mut().zip(part.axis_iter(ndarray::Axis(0)).into_par_iter()).for_each(|(row, src)| row.assign(&src));
    }
    drop(rows);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_kernels_validate() {
        for k in 2..=12 {
            for inverse in [false, true] {
                let src = cross_wgsl(k, inverse, inverse);
                let module = naga::front::wgsl::parse_str(&src).unwrap_or_else(|e| panic!("{}\n{src}", e.emit_to_string(&src)));
                naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
                    .validate(&module)
                    .unwrap_or_else(|e| panic!("{e:?}\n{src}"));
            }
        }
    }
}
