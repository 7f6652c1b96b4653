//! `FftPlan`: the GPU recipe of a transform as a list of steps (line passes and axis maps), with
//! its tables in one device buffer. `record` replays the steps into a recording.

use std::sync::Arc;

use super::lines::{self, Chirp, Crop, Lines, Pass, Rader, StoreTwiddle};
use super::plan::{plan_axis, wide_columns, AxisPlan, DeviceLimits};
use super::twiddle::Twiddles;
use super::{check_axes, Norm, Transform};
use crate::error::{Error, Result};
use crate::gpu::{Dtype, Gpu, GpuArray, Shape};
use crate::graph::{Buf, Recording};
use crate::kernels::binary::{self, BinaryOp};
use crate::kernels::boundary::Boundary;
use crate::kernels::fft_axis_map::{self, AxisMap, Map};
use crate::kernels::gather;

/// One step of the recipe: a dispatch producing a new array of shape `out`, or a view. (A plan
/// has a handful: the size of the line pass's variant costs nothing worth a box.)
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)]
pub(super) enum Step {
    Lines {
        pass: Pass,
        out: Vec<usize>,
    },
    Map {
        map: Map,
        out: Vec<usize>,
    },
    /// The same bytes with another shape and type (even-length reals as complex pairs).
    View {
        dims: Vec<usize>,
        dtype: Dtype,
    },
    /// Zeros appended along axes (padding no pass could fuse).
    Pad {
        pads: Vec<(usize, usize)>,
    },
    /// The element-wise product with the second operand (one no pass could fuse).
    Product {
        product: Product,
    },
    /// A gather: the output window where no pass could crop it, or the permutation that packs
    /// real lines two to a complex one.
    Gather {
        maps: Vec<gather::AxisMap>,
    },
}

/// A cyclic window along one axis: element w of the result is element (origin + w) mod n of the
/// full transform of length n.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub origin: i64,
    pub len: usize,
}

/// The element-wise product a plan applies to its input with a second array of its shape, fused
/// into its first load where a pass allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Product {
    /// x · y (convolution).
    Mul,
    /// x · conj(y) (correlation).
    MulConj,
    /// x · conj(y) / max(|x · conj(y)|, 100 ε): phase correlation's cross-power spectrum
    /// ([`BinaryOp::CrossPower`]).
    CrossPower,
}

impl Product {
    pub fn binary(self) -> BinaryOp {
        match self {
            Product::Mul => BinaryOp::ComplexMul,
            Product::MulConj => BinaryOp::ComplexMulConj,
            Product::CrossPower => BinaryOp::CrossPower,
        }
    }
}

/// Work fused into a plan's passes where they allow it (else done by extra dispatches, with the
/// same result): what convolutions need around their transforms.
#[derive(Clone, Debug, Default)]
pub struct Fusion {
    /// The input's shape when smaller than the transform: zeros appended along those axes.
    pub input: Option<Vec<usize>>,
    /// Only this window of the result, one per axis.
    pub window: Option<Vec<Window>>,
    /// The input multiplied element-wise by a second array of its shape before the transform,
    /// given to [`FftPlan::record_with`].
    pub product: Option<Product>,
}

pub struct FftPlan {
    input: Shape,
    transform: Transform,
    steps: Vec<Step>,
    output: Vec<usize>,
    tables: GpuArray,
    product: Option<Product>,
    bluestein: bool,
    /// The real type it computes in (F32, or F64 on devices with `SHADER_F64`).
    real: Dtype,
}

/// Builds the steps of complex transforms along one axis at a time.
pub(super) struct Builder<'a> {
    pub(super) limits: DeviceLimits,
    pub(super) tw: &'a mut Twiddles,
    pub(super) dims: Vec<usize>,
    pub(super) steps: Vec<Step>,
    /// Whether some axis went through Bluestein's algorithm.
    bluestein: bool,
    /// The real type of the plan (its complex type is `real.complex()`).
    pub(super) real: Dtype,
}

impl DeviceLimits {
    /// What `gpu` allows one workgroup (plans stay GPU-free; this is where they meet one).
    pub fn of(gpu: &Gpu) -> Self {
        DeviceLimits {
            workgroup_bytes: gpu.workgroup_memory_bytes() as usize,
            max_threads: gpu.limits().max_compute_invocations_per_workgroup as usize,
            tuning: gpu.options().tuning,
        }
    }
}

impl Builder<'_> {
    /// Whether this transform is large enough for wide strided passes (`wide_columns`).
    pub(super) fn wide(&self) -> bool {
        wide_columns(self.dims.iter().product(), self.limits.tuning)
    }

    pub(super) fn outer_inner(&self, axis: usize) -> (usize, usize) {
        (self.dims[..axis].iter().product(), self.dims[axis + 1..].iter().product())
    }

    /// Complex transform along `axis`, its result scaled by `scale`.
    pub(super) fn axis(&mut self, axis: usize, inverse: bool, scale: f64) -> Result<()> {
        self.axis_fused(axis, self.dims[axis], inverse, scale, None).map(|_| ())
    }

    /// Complex transform of length `n` along `axis`, whose current length may be shorter (zeros
    /// appended), keeping only `window` of the result. True if a pass applied the window.
    pub(super) fn axis_fused(&mut self, axis: usize, n: usize, inverse: bool, scale: f64, window: Option<Window>) -> Result<bool> {
        let (outer, inner) = self.outer_inner(axis);
        let plan = plan_axis(n, self.limits, inner, self.wide())
            .ok_or_else(|| Error::Invalid(format!("axis length {n} is beyond what this device's FFT can plan")))?;
        // Single passes (and Bluestein around one) read and write whole lines: they pad and crop.
        let fusable = match &plan {
            AxisPlan::Single(_) => true,
            AxisPlan::Bluestein { inner, .. } => matches!(**inner, AxisPlan::Single(_)),
            AxisPlan::FourStep { .. } | AxisPlan::Rader { .. } => false,
        };
        if !fusable && self.dims[axis] < n {
            self.pad(axis, n);
        }
        let crop = window.filter(|_| fusable).map(|w| Crop { shift: (-w.origin).rem_euclid(n as i64) as u32, len: w.len as u32, modulus: n as u32 });
        let mut out = self.dims.clone();
        out[axis] = crop.map_or(n, |c| c.len as usize);
        let len_in = self.dims[axis];
        self.lines(&plan, outer, inner, inverse, scale, len_in, crop, out.clone())?;
        self.dims = out;
        Ok(crop.is_some())
    }

    /// Steps transforming the middle axis of an (outer, len_in, inner) array (zeros appended up
    /// to the plan's length) into an array of shape `out`, cropped by `crop`. Only single passes
    /// (and Bluestein around one) take len_in below the length or a crop.
    #[allow(clippy::too_many_arguments)]
    fn lines(
        &mut self,
        plan: &AxisPlan,
        outer: usize,
        inner: usize,
        inverse: bool,
        scale: f64,
        len_in: usize,
        crop: Option<Crop>,
        out: Vec<usize>,
    ) -> Result<()> {
        let len_out = crop.map_or(plan.len(), |c| c.len as usize);
        match plan {
            AxisPlan::Single(p) => {
                let roots = self.tw.stage_roots(p);
                let mut pass = Pass::plain(p.clone(), inverse, outer * inner, inner, Lines::axis(len_in, inner), Lines::axis(len_out, inner), scale, roots);
                pass.pad_in = (len_in < p.n).then_some(len_in as u32);
                pass.crop = crop;
                self.steps.push(Step::Lines { pass, out });
            }
            AxisPlan::FourStep { n, first, second } => {
                assert!(len_in == *n && crop.is_none(), "four-step passes neither pad nor crop");
                let (n, n1, n2) = (*n, first.n, second.n);
                // Pass 1: length n1 at stride n2·inner, then W_n^(k1·j2) with j2 = i / inner.
                let s = (n as f64).sqrt().ceil() as usize;
                let twiddle = StoreTwiddle { lo: self.tw.powers(n, 1, s), hi: self.tw.powers(n, s, n.div_ceil(s)), s: s as u32, div: inner as u32 };
                let roots = self.tw.stage_roots(first);
                let strided = Lines::axis(n1, n2 * inner);
                let mut pass = Pass::plain(first.clone(), inverse, outer * n2 * inner, n2 * inner, strided, strided, 1.0, roots);
                pass.twiddle = Some(twiddle);
                self.steps.push(Step::Lines { pass, out: out.clone() });
                // Pass 2: length n2 along rows o·n1 + k1; writes k1 + n1·k2, the transpose, directly.
                let transposed = Lines { split: n1 as u32, hi: (n * inner) as u32, lo: inner as u32, elem: (n1 * inner) as u32 };
                let roots = self.tw.stage_roots(second);
                let pass = Pass::plain(second.clone(), inverse, outer * n1 * inner, inner, Lines::axis(n2, inner), transposed, scale, roots);
                self.steps.push(Step::Lines { pass, out });
            }
            AxisPlan::Rader { n, root, inner: p } => {
                assert!(len_in == *n && crop.is_none(), "Rader's passes neither pad nor crop");
                let (n, len) = (*n, p.n);
                let indices = self.tw.rader_indices(n, *root);
                let spectrum = self.tw.rader_spectrum(n, *root);
                let roots = self.tw.stage_roots(p);
                // Workspace lines of n + 1: the n − 1 spectrum products, then x_0 and A[0].
                let wide = vec![outer, len + 2, inner];
                // Forward transform of x[g^−q] times the kernel's spectrum (inverse transforms
                // by conjugation on both ends, as Bluestein's).
                let mut gather = Pass::plain(p.clone(), false, outer * inner, inner, Lines::axis(n, inner), Lines::axis(len + 2, inner), 1.0, roots);
                gather.conj_source = inverse;
                gather.chirp_out = Some(Chirp { table: spectrum, len: len as u32 });
                gather.rader = Some(Rader::Gather { indices });
                self.steps.push(Step::Lines { pass: gather, out: wide });
                // Unscaled inverse (the spectrum holds the 1/(n − 1)) with x_0 added to its DC
                // input, which adds x_0 to every output: X[g^q] = x_0 + (convolution)_q.
                let mut scatter = Pass::plain(p.clone(), true, outer * inner, inner, Lines::axis(len + 2, inner), Lines::axis(n, inner), scale, roots);
                scatter.conj_result = inverse;
                scatter.rader = Some(Rader::Scatter { indices });
                self.steps.push(Step::Lines { pass: scatter, out });
            }
            AxisPlan::Bluestein { n, m, inner: padded } => {
                self.bluestein = true;
                let (n, m) = (*n, *m);
                let chirp = self.tw.chirp(n);
                let spectrum = self.tw.chirp_spectrum(n, m);
                let wide = vec![outer, m, inner];
                if let AxisPlan::Single(p) = padded.as_ref() {
                    // Two passes: the pre-multiply and zero-padding fused into the forward
                    // transform's load, the chirp spectrum into its store; the inverse
                    // transform's store post-multiplies and crops.
                    let roots = self.tw.stage_roots(p);
                    let mut forward = Pass::plain(p.clone(), false, outer * inner, inner, Lines::axis(len_in, inner), Lines::axis(m, inner), 1.0, roots);
                    forward.conj_source = inverse;
                    forward.chirp_in = Some(Chirp { table: chirp, len: len_in as u32 });
                    forward.chirp_out = Some(Chirp { table: spectrum, len: m as u32 });
                    self.steps.push(Step::Lines { pass: forward, out: wide });
                    // Unscaled inverse: the spectrum table already holds the 1/m.
                    let mut back = Pass::plain(p.clone(), true, outer * inner, inner, Lines::axis(m, inner), Lines::axis(len_out, inner), scale, roots);
                    back.conj_result = inverse;
                    back.chirp_out = Some(Chirp { table: chirp, len: n as u32 });
                    back.crop = crop;
                    self.steps.push(Step::Lines { pass: back, out });
                    return Ok(());
                }
                assert!(len_in == n && crop.is_none(), "Bluestein over four-step passes neither pads nor crops");
                let map = |kind, len_in, len_out, table, scale: f64, conj_in, conj_out| Map {
                    kind,
                    outer,
                    len_in,
                    len_out,
                    inner,
                    table,
                    scale,
                    conj_in,
                    conj_out,
                    pairs: None,
                };
                self.steps.push(Step::Map { map: map(AxisMap::Chirp, n, m, chirp, 1.0, inverse, false), out: wide.clone() });
                self.lines(padded, outer, inner, false, 1.0, m, None, wide.clone())?;
                self.steps.push(Step::Map { map: map(AxisMap::Multiply, m, m, spectrum, 1.0, false, false), out: wide.clone() });
                // Unscaled inverse: the spectrum table already holds the 1/m.
                self.lines(padded, outer, inner, true, 1.0, m, None, wide)?;
                self.steps.push(Step::Map { map: map(AxisMap::Crop, m, n, chirp, scale, false, inverse), out });
            }
        }
        Ok(())
    }

    /// Changes the length of `axis` to `len` with an element map (half/full spectrum).
    fn resize(&mut self, axis: usize, kind: AxisMap, len: usize, table: u32, scale: f64) {
        let (outer, inner) = self.outer_inner(axis);
        let len_in = self.dims[axis];
        self.dims[axis] = len;
        let map = Map { kind, outer, len_in, len_out: len, inner, table, scale, conj_in: false, conj_out: false, pairs: None };
        self.steps.push(Step::Map { map, out: self.dims.clone() });
    }

    /// The same bytes with `len` elements of `dtype` (the plan's real or complex type) along `axis`.
    fn view(&mut self, axis: usize, len: usize, dtype: Dtype) {
        let mut dims = self.dims.clone();
        dims[axis] = len;
        self.reshape(dims, dtype);
    }

    /// The same bytes as an array of shape `dims` and type `dtype`, given as F32 or C32 and
    /// taken in the plan's precision.
    pub(super) fn reshape(&mut self, dims: Vec<usize>, dtype: Dtype) {
        self.dims = dims;
        let dtype = if dtype == Dtype::C32 { self.real.complex() } else { self.real };
        self.steps.push(Step::View { dims: self.dims.clone(), dtype });
    }

    /// The axes in the order `order` (a gather).
    pub(super) fn permute(&mut self, order: &[usize]) {
        let maps = order.iter().map(|&a| gather::AxisMap::identity(a, self.dims[a])).collect();
        self.dims = order.iter().map(|&a| self.dims[a]).collect();
        self.steps.push(Step::Gather { maps });
    }

    /// The leading `dims` of every axis (a gather).
    pub(super) fn crop(&mut self, dims: Vec<usize>) {
        let maps = dims.iter().enumerate().map(|(a, &len)| gather::AxisMap::identity(a, len)).collect();
        self.dims = dims;
        self.steps.push(Step::Gather { maps });
    }

    pub(super) fn map(&mut self, map: Map) {
        self.dims = map.output().to_vec();
        self.steps.push(Step::Map { map, out: self.dims.clone() });
    }

    /// Appends zeros along `axis` up to `len`.
    pub(super) fn pad(&mut self, axis: usize, len: usize) {
        let mut pads = vec![(0, 0); self.dims.len()];
        pads[axis].1 = len - self.dims[axis];
        self.dims[axis] = len;
        self.steps.push(Step::Pad { pads });
    }
}

impl FftPlan {
    /// Plans `transform` of an array of shape `dims` over `axes`.
    pub fn new(gpu: &Gpu, dims: &[usize], axes: &[usize], transform: Transform, norm: Norm) -> Result<FftPlan> {
        FftPlan::fused(gpu, dims, axes, transform, norm, &Fusion::default())
    }

    /// The real type the plan computes in (its inputs and outputs are of it or its complex type).
    pub fn real(&self) -> Dtype {
        self.real
    }

    /// Device memory of the plan's tables.
    pub fn table_bytes(&self) -> u64 {
        self.tables.bytes()
    }

    /// The plan `new` makes, kept on `gpu` for later calls with the same arguments (the
    /// one-call functions plan through here).
    pub fn cached(gpu: &Gpu, dims: &[usize], axes: &[usize], transform: Transform, norm: Norm) -> Result<Arc<FftPlan>> {
        FftPlan::cached_as(gpu, dims, axes, transform, norm, Dtype::F32)
    }

    /// [`cached`](Self::cached) computing in the real type `real` (F32 or F64).
    pub fn cached_as(gpu: &Gpu, dims: &[usize], axes: &[usize], transform: Transform, norm: Norm, real: Dtype) -> Result<Arc<FftPlan>> {
        let key = format!("{dims:?} {axes:?} {transform:?} {norm:?} {real:?}");
        gpu.cached(&key, || {
            let plan = FftPlan::fused_as(gpu, dims, axes, transform, norm, &Fusion::default(), real)?;
            let bytes = plan.table_bytes();
            Ok((plan, bytes))
        })
    }

    /// Plans `transform` of shape `dims` (the transform's, for a real inverse its half-spectrum
    /// input) over `axes`, with the zero padding, window and product of `fusion`.
    pub fn fused(gpu: &Gpu, dims: &[usize], axes: &[usize], transform: Transform, norm: Norm, fusion: &Fusion) -> Result<FftPlan> {
        FftPlan::fused_as(gpu, dims, axes, transform, norm, fusion, Dtype::F32)
    }

    /// [`fused`](Self::fused) computing in the real type `real`: F32, or F64 where the device
    /// has `SHADER_F64` (tables, passes and workgroup memory in f64).
    pub fn fused_as(gpu: &Gpu, dims: &[usize], axes: &[usize], transform: Transform, norm: Norm, fusion: &Fusion, real: Dtype) -> Result<FftPlan> {
        if !matches!(real, Dtype::F32 | Dtype::F64) {
            return Err(Error::Dtype(format!("an FFT computes in f32 or f64, not {real:?}")));
        }
        gpu.check_dtype(real)?;
        Shape::new(dims)?;
        let axes = check_axes(axes, dims.len())?;
        let from = fusion.input.clone().unwrap_or_else(|| dims.to_vec());
        let input = Shape::new(&from)?;
        if from.len() != dims.len() || from.iter().zip(dims).enumerate().any(|(a, (&f, &d))| f > d || (f < d && !axes.contains(&a))) {
            return Err(Error::Shape(format!("an input of shape {from:?} cannot be zero-padded to {dims:?} along axes {axes:?}")));
        }
        if from != dims && matches!(transform, Transform::RealInverse { .. }) {
            return Err(Error::Invalid("a real inverse transform takes its whole half spectrum: no padding".into()));
        }
        if fusion.window.as_ref().is_some_and(|w| w.len() != dims.len()) {
            return Err(Error::Shape(format!("a window for each of the {} axes, not {:?}", dims.len(), fusion.window)));
        }
        if fusion.product.is_some() && transform == Transform::RealForward {
            return Err(Error::Invalid("a fused product needs a complex input".into()));
        }
        let mut limits = DeviceLimits::of(gpu);
        if real == Dtype::F64 {
            // Elements twice the size: plans of the same lengths with half the workgroup memory.
            limits.workgroup_bytes /= 2;
        }
        let mut tw = Twiddles::default();
        let mut b = Builder { limits, tw: &mut tw, dims: from, steps: Vec::new(), bluestein: false, real };
        let last = *axes.last().unwrap();
        let factor = |n: usize, inverse: bool| norm.factor(n, inverse);
        // The full result's shape, for the window.
        let mut full = dims.to_vec();
        let window = |a: usize| fusion.window.as_ref().map(|w| w[a]);
        let mut cropped = vec![false; dims.len()];
        match transform {
            Transform::Forward | Transform::Inverse => {
                let inverse = transform == Transform::Inverse;
                for &a in axes.iter().rev() {
                    cropped[a] = b.axis_fused(a, dims[a], inverse, factor(dims[a], inverse), window(a))?;
                }
            }
            Transform::RealForward => {
                let n = dims[last];
                // Pairs of adjacent reals are complex numbers only along the contiguous axis.
                if last == dims.len() - 1 && b.real_pass_fits(n) {
                    // n reals are n/2 complex pairs: transform those and untangle the spectrum in
                    // one pass; an odd input length gets one zero first to make whole pairs.
                    if b.dims[last] % 2 == 1 {
                        b.pad(last, b.dims[last] + 1);
                    }
                    let pairs = b.dims[last] / 2;
                    b.view(last, pairs, Dtype::C32);
                    b.real_pass(false, n, factor(n, false), pairs);
                } else if n.is_multiple_of(2) && last == dims.len() - 1 {
                    // The same as separate steps.
                    if b.dims[last] < n {
                        b.pad(last, n);
                    }
                    b.view(last, n / 2, Dtype::C32);
                    b.axis(last, false, 1.0)?;
                    let roots = b.tw.roots(n);
                    b.resize(last, AxisMap::RealPost, n / 2 + 1, roots, factor(n, false));
                } else {
                    // Odd lengths, strided axes: whole lines, two to a complex transform.
                    b.real_pairs(last, n, false, factor(n, false))?;
                }
                full[last] = n / 2 + 1;
                for &a in axes.iter().rev().skip(1) {
                    cropped[a] = b.axis_fused(a, dims[a], false, factor(dims[a], false), window(a))?;
                }
            }
            Transform::RealInverse { len } => {
                if len == 0 || dims[last] != len / 2 + 1 {
                    return Err(Error::Invalid(format!(
                        "a real inverse transform of length {len} needs {} values along axis {last}, the input has {}",
                        len / 2 + 1,
                        dims[last]
                    )));
                }
                for &a in axes.iter().rev().skip(1) {
                    cropped[a] = b.axis_fused(a, dims[a], true, factor(dims[a], true), window(a))?;
                }
                if last == dims.len() - 1 && b.real_pass_fits(len) {
                    // The inverse of the even forward pass; the half-length inverse carries 2/n.
                    b.real_pass(true, len, 2.0 * factor(len, true), len / 2 + 1);
                    b.view(last, len, Dtype::F32);
                } else if len % 2 == 0 && last == dims.len() - 1 {
                    let roots = b.tw.roots(len);
                    b.resize(last, AxisMap::RealPre, len / 2, roots, 1.0);
                    b.axis(last, true, 2.0 * factor(len, true))?;
                    b.view(last, len, Dtype::F32);
                } else {
                    b.real_pairs(last, len, true, factor(len, true))?;
                }
                full[last] = len;
            }
        }
        if let Some(w) = &fusion.window {
            if w.iter().zip(&full).any(|(w, &n)| w.len == 0 || w.len > n) {
                return Err(Error::Shape(format!("window {w:?} does not fit a result of shape {full:?}")));
            }
            // What no pass cropped: one gather, wrapping around.
            if (0..dims.len()).any(|a| !cropped[a] && (w[a].len < full[a] || w[a].origin.rem_euclid(full[a] as i64) != 0)) {
                let maps = (0..dims.len())
                    .map(|a| gather::AxisMap { len: w[a].len, src_axis: a, origin: if cropped[a] { 0 } else { w[a].origin }, step: 1 })
                    .collect();
                b.dims = w.iter().map(|w| w.len).collect();
                b.steps.push(Step::Gather { maps });
            }
        }
        if let Some(product) = fusion.product {
            match b.steps.first_mut() {
                Some(Step::Lines { pass, .. }) => pass.product = Some(product),
                _ => b.steps.insert(0, Step::Product { product }),
            }
        }
        let (steps, output, bluestein) = (b.steps, b.dims, b.bluestein);
        Shape::new(&output)?;
        if tw.data.is_empty() {
            tw.data.push(num_complex::Complex64::new(0.0, 0.0));
        }
        let table = ndarray::ArrayD::from_shape_vec(vec![tw.data.len()], tw.data).unwrap();
        let tables = GpuArray::upload_complex_as(gpu, &table.view(), real)?;
        Ok(FftPlan { input, transform, steps, output, tables, product: fusion.product, bluestein, real })
    }

    pub fn input_dims(&self) -> &[usize] {
        self.input.dims()
    }

    pub fn output_dims(&self) -> &[usize] {
        &self.output
    }

    /// Dispatches the plan records, for reports.
    pub fn dispatches(&self) -> usize {
        self.steps.iter().filter(|s| !matches!(s, Step::View { .. })).count()
    }

    /// Whether an axis needs Bluestein's algorithm (composite lengths with a prime factor above
    /// 13, primes that Rader's algorithm cannot take in one pass): its accuracy bound is twice
    /// that of the others.
    pub fn uses_bluestein(&self) -> bool {
        self.bluestein
    }

    /// Records the transform of `x` (complex, or real for `RealForward`) and returns the result.
    pub fn record(&self, rec: &mut Recording, x: Buf) -> Result<Buf> {
        self.record_with(rec, x, None)
    }

    /// [`record`](Self::record) for a plan with a fused product: `other` is its second operand,
    /// complex, of the input's shape.
    pub fn record_with(&self, rec: &mut Recording, x: Buf, other: Option<Buf>) -> Result<Buf> {
        self.record_steps(rec, x, other, false)
    }

    /// [`record`](Self::record), overwriting `x` where the layout allows: every pass that reads
    /// and writes whole lines in the same places transforms in place (all of a complex transform
    /// whose axes take one pass each), so no second array of the input's size is needed. The
    /// result is `x` itself when every step ran in place.
    pub fn record_in_place(&self, rec: &mut Recording, x: Buf) -> Result<Buf> {
        self.record_steps(rec, x, None, true)
    }

    /// Whether every step of the plan runs in place (`record_in_place` returns its input).
    pub fn is_in_place(&self) -> bool {
        self.steps.iter().all(|s| matches!(s, Step::Lines { pass, .. } if pass.in_place_ok() && pass.product.is_none()) || matches!(s, Step::View { .. }))
    }

    fn record_steps(&self, rec: &mut Recording, x: Buf, other: Option<Buf>, in_place: bool) -> Result<Buf> {
        if rec.dims(x) != self.input.dims() {
            return Err(Error::Shape(format!("FFT planned for {:?}, given {:?}", self.input.dims(), rec.dims(x))));
        }
        let real_in = self.transform == Transform::RealForward;
        let complex = self.real.complex();
        rec.expect_dtype(x, if real_in { self.real } else { complex }, "FFT input")?;
        match (self.product, other) {
            (Some(_), Some(o)) => {
                rec.expect_dtype(o, complex, "FFT product operand")?;
                if rec.dims(o) != self.input.dims() {
                    return Err(Error::Shape(format!("FFT product operand of shape {:?}, the input's is {:?}", rec.dims(o), self.input.dims())));
                }
            }
            (None, None) => {}
            (Some(_), None) => return Err(Error::Invalid("this FFT plan multiplies its input by a second array: use record_with".into())),
            (None, Some(_)) => return Err(Error::Invalid("this FFT plan has no fused product".into())),
        }
        let table = rec.input(&self.tables);
        let mut cur = x;
        for step in &self.steps {
            match step {
                Step::Lines { pass, out } => {
                    let same = in_place && pass.in_place_ok() && pass.product.is_none() && rec.dims(cur) == out.as_slice() && rec.dtype(cur) == complex;
                    let dtype = if pass.real_out() { self.real } else { complex };
                    let next = if same { cur } else { rec.temp(out, dtype)? };
                    lines::record(rec, pass, cur, next, table, pass.product.and(other));
                    cur = next;
                }
                Step::Map { map, out } => {
                    let next = rec.temp(out, complex)?;
                    fft_axis_map::record(rec, map, cur, next, table);
                    cur = next;
                }
                Step::View { dims, dtype } => cur = rec.reinterpret(cur, dims, *dtype)?,
                Step::Pad { pads } => cur = gather::pad(rec, cur, pads, Boundary::Constant(0.0))?,
                Step::Product { product } => {
                    cur = binary::record(rec, product.binary(), cur, other.expect("checked above"))?;
                }
                Step::Gather { maps } => cur = gather::record(rec, cur, maps, Boundary::Wrap)?,
            }
        }
        Ok(cur)
    }
}
