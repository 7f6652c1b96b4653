//! `FftPlan`: the GPU recipe of a transform as a list of steps (line passes and axis maps), with
//! its tables in one device buffer. `record` replays the steps into a recording.

use std::sync::Arc;

use super::plan::{plan_axis, wide_columns, AxisPlan, DeviceLimits, LinePass};
use super::twiddle::Twiddles;
use super::{check_axes, Norm, Transform};
use crate::error::{Error, Result};
use crate::gpu::{Dtype, Gpu, GpuArray, Shape};
use crate::graph::{Buf, Recording};
use crate::kernels::fft_axis_map::{self, AxisMap, Map, Pairs};
use crate::kernels::binary::{self, BinaryOp};
use super::lines::{self, Chirp, Crop, LinePair, Lines, PairsIn, PairsOut, Pass, Rader, StoreTwiddle};
use crate::kernels::gather;
use crate::kernels::boundary::Boundary;

/// One step of the recipe: a dispatch producing a new array of shape `out`, or a view.
#[derive(Clone, Debug)]
enum Step {
    Lines { pass: Pass, out: Vec<usize> },
    Map { map: Map, out: Vec<usize> },
    /// The same bytes with another shape and type (even-length reals as complex pairs).
    View { dims: Vec<usize>, dtype: Dtype },
    /// Zeros appended along axes (padding no pass could fuse).
    Pad { pads: Vec<(usize, usize)> },
    /// The element-wise product with the second operand (one no pass could fuse).
    Product { conj: bool },
    /// A gather: the output window where no pass could crop it, or the permutation that packs
    /// real lines two to a complex one.
    Gather { maps: Vec<gather::AxisMap> },
}

/// A cyclic window along one axis: element w of the result is element (origin + w) mod n of the
/// full transform of length n.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub origin: i64,
    pub len: usize,
}

/// Work fused into a plan's passes where they allow it (else done by extra dispatches, with the
/// same result): what convolutions need around their transforms.
#[derive(Clone, Debug, Default)]
pub struct Fusion {
    /// The input's shape when smaller than the transform: zeros appended along those axes.
    pub input: Option<Vec<usize>>,
    /// Only this window of the result, one per axis.
    pub window: Option<Vec<Window>>,
    /// The input multiplied element-wise by a second array of its shape before the transform
    /// (`Some(true)`: by its conjugate), given to [`FftPlan::record_with`].
    pub product: Option<bool>,
}

pub struct FftPlan {
    input: Shape,
    transform: Transform,
    steps: Vec<Step>,
    output: Vec<usize>,
    tables: GpuArray,
    product: Option<bool>,
    bluestein: bool,
}

/// Builds the steps of complex transforms along one axis at a time.
struct Builder<'a> {
    limits: DeviceLimits,
    tw: &'a mut Twiddles,
    dims: Vec<usize>,
    steps: Vec<Step>,
    /// Whether some axis went through Bluestein's algorithm.
    bluestein: bool,
}

impl DeviceLimits {
    /// What `gpu` allows one workgroup (plans stay GPU-free; this is where they meet one).
    pub fn of(gpu: &Gpu) -> Self {
        DeviceLimits { workgroup_bytes: gpu.workgroup_memory_bytes() as usize, max_threads: gpu.limits().max_compute_invocations_per_workgroup as usize }
    }
}

impl Builder<'_> {
    /// Whether this transform is large enough for wide strided passes (`wide_columns`).
    fn wide(&self) -> bool {
        wide_columns(self.dims.iter().product())
    }

    fn outer_inner(&self, axis: usize) -> (usize, usize) {
        (self.dims[..axis].iter().product(), self.dims[axis + 1..].iter().product())
    }

    /// Complex transform along `axis`, its result scaled by `scale`.
    fn axis(&mut self, axis: usize, inverse: bool, scale: f64) -> Result<()> {
        self.axis_fused(axis, self.dims[axis], inverse, scale, None).map(|_| ())
    }

    /// Complex transform of length `n` along `axis`, whose current length may be shorter (zeros
    /// appended), keeping only `window` of the result. True if a pass applied the window.
    fn axis_fused(&mut self, axis: usize, n: usize, inverse: bool, scale: f64, window: Option<Window>) -> Result<bool> {
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
    fn lines(&mut self, plan: &AxisPlan, outer: usize, inner: usize, inverse: bool, scale: f64, len_in: usize, crop: Option<Crop>, out: Vec<usize>) -> Result<()> {
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
                let twiddle = StoreTwiddle {
                    lo: self.tw.powers(n, 1, s),
                    hi: self.tw.powers(n, s, n.div_ceil(s)),
                    s: s as u32,
                    div: inner as u32,
                };
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
                    kind, outer, len_in, len_out, inner, table, scale: scale as f32, conj_in, conj_out, pairs: None,
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

    /// Whether the real transform of `len` reals along the contiguous last axis takes one pass.
    fn real_pass_fits(&self, len: usize) -> bool {
        // (The untangling reads pairs k, n - k from workgroup memory: not split-exchange passes.)
        len.is_multiple_of(2) && len >= 4 && matches!(plan_axis(len / 2, self.limits, 1, self.wide()), Some(AxisPlan::Single(p)) if !p.split)
    }

    /// The real transform of `len` (even) reals along the contiguous last axis as one pass of
    /// the half-length complex transform, the spectrum untangled in its store (forward: the
    /// array is the packed pairs, `len_in` of them then zeros, and becomes len/2 + 1 values) or
    /// packed in its load (inverse: len/2 + 1 values become len/2 packed pairs). Only where
    /// `real_pass_fits`.
    fn real_pass(&mut self, inverse: bool, len: usize, scale: f64, len_in: usize) {
        let last = self.dims.len() - 1;
        let (half, outer) = (len / 2, self.outer_inner(last).0);
        let Some(AxisPlan::Single(p)) = plan_axis(half, self.limits, 1, self.wide()) else { unreachable!("checked by real_pass_fits") };
        let table = self.tw.roots(len);
        let n_out = if inverse { half } else { half + 1 };
        let roots = self.tw.stage_roots(&p);
        let mut pass = Pass::plain(p, inverse, outer, 1, Lines::axis(len_in, 1), Lines::axis(n_out, 1), scale, roots);
        pass.real_post = (!inverse).then_some(table);
        pass.real_pre = inverse.then_some(table);
        pass.pad_in = (!inverse && len_in < half).then_some(len_in as u32);
        self.dims[last] = n_out;
        self.steps.push(Step::Lines { pass, out: self.dims.clone() });
    }

    /// Changes the length of `axis` to `len` with an element map (half/full spectrum).
    fn resize(&mut self, axis: usize, kind: AxisMap, len: usize, table: u32, scale: f64) {
        let (outer, inner) = self.outer_inner(axis);
        let len_in = self.dims[axis];
        self.dims[axis] = len;
        let map = Map { kind, outer, len_in, len_out: len, inner, table, scale: scale as f32, conj_in: false, conj_out: false, pairs: None };
        self.steps.push(Step::Map { map, out: self.dims.clone() });
    }

    /// The same bytes with `len` elements of `dtype` along `axis`.
    fn view(&mut self, axis: usize, len: usize, dtype: Dtype) {
        let mut dims = self.dims.clone();
        dims[axis] = len;
        self.reshape(dims, dtype);
    }

    /// The same bytes as an array of shape `dims` and type `dtype`.
    fn reshape(&mut self, dims: Vec<usize>, dtype: Dtype) {
        self.dims = dims;
        self.steps.push(Step::View { dims: self.dims.clone(), dtype });
    }

    /// The axes in the order `order` (a gather).
    fn permute(&mut self, order: &[usize]) {
        let maps = order.iter().map(|&a| gather::AxisMap::identity(a, self.dims[a])).collect();
        self.dims = order.iter().map(|&a| self.dims[a]).collect();
        self.steps.push(Step::Gather { maps });
    }

    /// The leading `dims` of every axis (a gather).
    fn crop(&mut self, dims: Vec<usize>) {
        let maps = dims.iter().enumerate().map(|(a, &len)| gather::AxisMap::identity(a, len)).collect();
        self.dims = dims;
        self.steps.push(Step::Gather { maps });
    }

    fn map(&mut self, map: Map) {
        self.dims = map.output().to_vec();
        self.steps.push(Step::Map { map, out: self.dims.clone() });
    }

    /// The real transform of length `n` along `axis` as the complex transform of its lines
    /// packed two to one, z = x_a + i·x_b (half the work of transforming each line as complex;
    /// any length, any plan). Forward: the current reals (`dims[axis]` ≤ n, zeros beyond) become
    /// n/2 + 1 values, X_a and X_b untangled from Z; inverse: n/2 + 1 values become n reals,
    /// Re z and Im z of the inverse transform of Z = X_a + i·X_b (full Hermitian spectra).
    /// Adjacent columns pair up where there is an even number of them (the reals are then the
    /// packed lines as they lie), else adjacent rows; a single row of an odd number of columns
    /// pairs its columns, the last with zeros. An odd row count: the last row pairs with zeros.
    fn real_pairs(&mut self, axis: usize, n: usize, inverse: bool, scale: f64) -> Result<()> {
        let (outer, inner) = self.outer_inner(axis);
        let (len_in, half) = (self.dims[axis], n / 2 + 1);
        let mut result = self.dims.clone();
        result[axis] = if inverse { n } else { half };
        let pairs = if inner % 2 == 0 || (outer == 1 && inner > 1) { Pairs::Columns } else { Pairs::Rows };
        let map = |kind, len_in, len_out| Map { kind, outer, len_in, len_out, inner, table: 0, scale: 1.0, conj_in: false, conj_out: false, pairs: Some(pairs) };
        if let Some(plan) = self.pairs_pass_plan(pairs, n, inner) {
            self.pairs_pass(plan, pairs, outer, inner, len_in, inverse, scale);
        } else if inverse {
            self.map(map(AxisMap::HermitianPairs, half, n));
            self.axis(1, true, scale)?;
            if !(pairs == Pairs::Rows && self.unpack_in_store(n * inner, outer)) {
                self.unpack(pairs, outer, inner);
            }
        } else {
            // Rows are packed in the load of the first pass where it reads whole lines, else by
            // gathers before it.
            let at = self.steps.len();
            self.pack(pairs, outer, inner);
            let packing: Vec<Step> = if pairs == Pairs::Rows { self.steps.drain(at..).collect() } else { Vec::new() };
            self.axis_fused(1, n, false, scale, None)?;
            if !packing.is_empty() && !self.pack_in_load(at, len_in * inner, outer) {
                self.steps.splice(at..at, packing);
            }
            self.map(map(AxisMap::RealPairs, n, half));
        }
        self.reshape(result, if inverse { Dtype::F32 } else { Dtype::C32 });
        Ok(())
    }

    /// The single pass for packed pairs of lines of `n`, where one holds a line in workgroup
    /// memory (the untangling reads pairs k, n − k there). Not for an odd column count (a
    /// column of zeros is padded by a gather).
    fn pairs_pass_plan(&self, pairs: Pairs, n: usize, inner: usize) -> Option<LinePass> {
        if pairs == Pairs::Columns && inner % 2 == 1 {
            return None;
        }
        let (_, columns) = pairs.packed(1, inner);
        match plan_axis(n, self.limits, columns, self.wide()) {
            Some(AxisPlan::Single(p)) if !p.split && !p.radices.is_empty() => Some(p),
            _ => None,
        }
    }

    /// `real_pairs` as one pass (`pairs_pass_plan`) over the (outer, ·, inner) lines: forward,
    /// the reals (len_in ≤ n of them, zeros beyond) packed in its load and the spectra untangled
    /// in its store; inverse, the Hermitian spectra packed in its load and the reals unpacked in
    /// its store (columns: the packed lines are the reals as they lie).
    #[allow(clippy::too_many_arguments)]
    fn pairs_pass(&mut self, plan: LinePass, pairs: Pairs, outer: usize, inner: usize, len_in: usize, inverse: bool, scale: f64) {
        let (n, half) = (plan.n, plan.n / 2 + 1);
        let (rows, columns) = pairs.packed(outer, inner);
        let u = |x: usize| x as u32;
        // Line l of the pass is packed row l / inner (rows), or packed column l % columns of row
        // l / columns (columns: the pass's inner is 1, the split walks the columns).
        let (lines, pass_inner) = match pairs {
            Pairs::Rows => (rows * inner, inner),
            Pairs::Columns => (outer * columns, 1),
        };
        // Lines of `len` on the real side (line a; b by the pair) and on the packed side.
        let real_side = |len: usize| match pairs {
            Pairs::Rows => (Lines { split: 1, hi: u(2 * len * inner), lo: 0, elem: u(inner) }, LinePair { offset: u(len * inner), end: u(outer * len * inner) }),
            Pairs::Columns => (Lines { split: u(columns), hi: u(len * inner), lo: 2, elem: u(inner) }, LinePair { offset: 1, end: u(outer * len * inner) }),
        };
        let packed = |len: usize| match pairs {
            Pairs::Rows => Lines::axis(len, inner),
            Pairs::Columns => Lines { split: u(columns), hi: u(len * columns), lo: 1, elem: u(columns) },
        };
        let roots = self.tw.stage_roots(&plan);
        if inverse {
            let (input, pair) = real_side(half);
            let (output, pairs_out, dims) = match pairs {
                Pairs::Rows => {
                    let (lines, pair) = real_side(n);
                    (lines, Some(PairsOut::Real(pair)), vec![outer, n, inner])
                }
                Pairs::Columns => (packed(n), None, vec![outer, n, columns]),
            };
            let mut pass = Pass::plain(plan, true, lines, pass_inner, input, output, scale, roots);
            pass.pairs_in = Some(PairsIn::Hermitian(pair));
            pass.pairs_out = pairs_out;
            self.dims = dims;
            self.steps.push(Step::Lines { pass, out: self.dims.clone() });
            if pairs == Pairs::Columns {
                self.reshape(vec![outer, n, inner], Dtype::F32);
            }
        } else {
            let (input, pairs_in) = match pairs {
                Pairs::Rows => {
                    let (lines, pair) = real_side(len_in);
                    (lines, Some(PairsIn::Real(pair)))
                }
                Pairs::Columns => {
                    self.reshape(vec![outer, len_in, columns], Dtype::C32);
                    (packed(len_in), None)
                }
            };
            let (output, pair) = real_side(half);
            let mut pass = Pass::plain(plan, false, lines, pass_inner, input, output, scale, roots);
            pass.pad_in = (len_in < n).then_some(u(len_in));
            pass.pairs_in = pairs_in;
            pass.pairs_out = Some(PairsOut::Untangled(pair));
            self.dims = vec![outer, half, inner];
            self.steps.push(Step::Lines { pass, out: self.dims.clone() });
        }
    }

    /// Packs rows 2m and 2m + 1 of the `outer` real rows (of `row` elements) into the load of
    /// the pass at step `at`, if that step is a pass reading rows of the packed lines (row m).
    fn pack_in_load(&mut self, at: usize, row: usize, outer: usize) -> bool {
        let Some(Step::Lines { pass, .. }) = self.steps.get_mut(at) else { return false };
        let Some(pair) = pair_rows(&mut pass.input, row, outer) else { return false };
        pass.pairs_in = Some(PairsIn::Real(pair));
        true
    }

    /// Unpacks packed row m (of `row` elements) into real rows 2m and 2m + 1 of `outer` in the
    /// store of the last pass, if the last step is a pass writing rows of the packed lines.
    fn unpack_in_store(&mut self, row: usize, outer: usize) -> bool {
        let Some(Step::Lines { pass, out }) = self.steps.last_mut() else { return false };
        let Some(pair) = pair_rows(&mut pass.output, row, outer) else { return false };
        pass.pairs_out = Some(PairsOut::Real(pair));
        out[0] = outer;
        self.dims = out.clone();
        true
    }

    /// The current reals, viewed as (outer, len, inner), as complex lines holding two each.
    fn pack(&mut self, pairs: Pairs, outer: usize, inner: usize) {
        let len = self.dims.iter().product::<usize>() / (outer * inner);
        self.reshape(vec![outer, len, inner], Dtype::F32);
        match pairs {
            Pairs::Columns => {
                if inner % 2 == 1 {
                    self.pad(2, inner + 1);
                }
                self.reshape(vec![outer, len, inner.div_ceil(2)], Dtype::C32);
            }
            Pairs::Rows => {
                let rows = outer.div_ceil(2);
                if outer % 2 == 1 {
                    self.pad(0, 2 * rows);
                }
                // Rows 2m and 2m + 1 interleaved: (rows, 2, len·inner) to (rows, len·inner, 2).
                self.reshape(vec![rows, 2, len * inner], Dtype::F32);
                self.permute(&[0, 2, 1]);
                self.reshape(vec![rows, len, inner], Dtype::C32);
            }
        }
    }

    /// The inverse of `pack`: the current packed complex lines as reals (outer, len, inner).
    fn unpack(&mut self, pairs: Pairs, outer: usize, inner: usize) {
        let [rows, len, columns] = self.dims[..] else { unreachable!("packed lines are (outer, len, inner)") };
        match pairs {
            Pairs::Columns => self.reshape(vec![outer, len, 2 * columns], Dtype::F32),
            Pairs::Rows => {
                self.reshape(vec![rows, len * inner, 2], Dtype::F32);
                self.permute(&[0, 2, 1]);
                self.reshape(vec![2 * rows, len, inner], Dtype::F32);
            }
        }
        if self.dims != [outer, len, inner] {
            self.crop(vec![outer, len, inner]);
        }
    }

    /// Appends zeros along `axis` up to `len`.
    fn pad(&mut self, axis: usize, len: usize) {
        let mut pads = vec![(0, 0); self.dims.len()];
        pads[axis].1 = len - self.dims[axis];
        self.dims[axis] = len;
        self.steps.push(Step::Pad { pads });
    }
}

/// `lines` over the rows (of `row` elements) of packed lines, turned into lines over rows 2m of
/// the `outer` real ones with rows 2m + 1 one row further (the pair): None unless packed row m
/// is the lines' row o / split.
fn pair_rows(lines: &mut Lines, row: usize, outer: usize) -> Option<LinePair> {
    if lines.hi as usize != row {
        return None;
    }
    lines.hi *= 2;
    Some(LinePair { offset: row as u32, end: (outer * row) as u32 })
}

impl FftPlan {
    /// Plans `transform` of an array of shape `dims` over `axes`.
    pub fn new(gpu: &Gpu, dims: &[usize], axes: &[usize], transform: Transform, norm: Norm) -> Result<FftPlan> {
        FftPlan::fused(gpu, dims, axes, transform, norm, &Fusion::default())
    }

    /// Device memory of the plan's tables.
    pub fn table_bytes(&self) -> u64 {
        self.tables.bytes()
    }

    /// The plan `new` makes, kept on `gpu` for later calls with the same arguments (the
    /// one-call functions plan through here).
    pub fn cached(gpu: &Gpu, dims: &[usize], axes: &[usize], transform: Transform, norm: Norm) -> Result<Arc<FftPlan>> {
        let key = format!("{dims:?} {axes:?} {transform:?} {norm:?}");
        gpu.cached(&key, || {
            let plan = FftPlan::new(gpu, dims, axes, transform, norm)?;
            let bytes = plan.table_bytes();
            Ok((plan, bytes))
        })
    }

    /// Plans `transform` of shape `dims` (the transform's, for a real inverse its half-spectrum
    /// input) over `axes`, with the zero padding, window and product of `fusion`.
    pub fn fused(gpu: &Gpu, dims: &[usize], axes: &[usize], transform: Transform, norm: Norm, fusion: &Fusion) -> Result<FftPlan> {
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
        let limits = DeviceLimits::of(gpu);
        let mut tw = Twiddles::default();
        let mut b = Builder { limits, tw: &mut tw, dims: from, steps: Vec::new(), bluestein: false };
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
        if let Some(conj) = fusion.product {
            match b.steps.first_mut() {
                Some(Step::Lines { pass, .. }) => pass.product = Some(conj),
                _ => b.steps.insert(0, Step::Product { conj }),
            }
        }
        let (steps, output, bluestein) = (b.steps, b.dims, b.bluestein);
        Shape::new(&output)?;
        if tw.data.is_empty() {
            tw.data.push(num_complex::Complex32::new(0.0, 0.0));
        }
        let table = ndarray::ArrayD::from_shape_vec(vec![tw.data.len()], tw.data).unwrap();
        let tables = GpuArray::upload_c32(gpu, &table.view())?;
        Ok(FftPlan { input, transform, steps, output, tables, product: fusion.product, bluestein })
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
        rec.expect_dtype(x, if real_in { Dtype::F32 } else { Dtype::C32 }, "FFT input")?;
        match (self.product, other) {
            (Some(_), Some(o)) => {
                rec.expect_dtype(o, Dtype::C32, "FFT product operand")?;
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
                    let same = in_place && pass.in_place_ok() && pass.product.is_none() && rec.dims(cur) == out.as_slice() && rec.dtype(cur) == Dtype::C32;
                    let dtype = if pass.real_out() { Dtype::F32 } else { Dtype::C32 };
                    let next = if same { cur } else { rec.temp(out, dtype)? };
                    lines::record(rec, pass, cur, next, table, pass.product.and(other));
                    cur = next;
                }
                Step::Map { map, out } => {
                    let next = rec.temp(out, Dtype::C32)?;
                    fft_axis_map::record(rec, map, cur, next, table);
                    cur = next;
                }
                Step::View { dims, dtype } => cur = rec.reinterpret(cur, dims, *dtype)?,
                Step::Pad { pads } => cur = gather::pad(rec, cur, pads, Boundary::Constant(0.0))?,
                Step::Product { conj } => {
                    let op = if *conj { BinaryOp::ComplexMulConj } else { BinaryOp::ComplexMul };
                    cur = binary::record(rec, op, cur, other.expect("checked above"))?;
                }
                Step::Gather { maps } => cur = gather::record(rec, cur, maps, Boundary::Wrap)?,
            }
        }
        Ok(cur)
    }
}
