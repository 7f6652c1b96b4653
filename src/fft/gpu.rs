//! `FftPlan`: the GPU recipe of a transform as a list of steps (line passes and axis maps), with
//! its tables in one device buffer. `record` replays the steps into a recording.

use super::plan::{plan_axis, AxisPlan, DeviceLimits};
use super::twiddle::Twiddles;
use super::{check_axes, Norm, Transform};
use crate::error::{Error, Result};
use crate::gpu::{Dtype, Gpu, GpuArray, Shape};
use crate::graph::{Buf, Recording};
use crate::kernels::complex_to_real::{self, ComplexToReal};
use crate::kernels::fft_axis_map::{self, AxisMap, Map};
use crate::kernels::fft_lines::{self, Chirp, Lines, Pass, Rader, StoreTwiddle};
use crate::kernels::real_to_complex;

/// One step of the recipe: a dispatch producing a new array of shape `out`, or a view.
#[derive(Clone, Debug)]
enum Step {
    Lines { pass: Pass, out: Vec<usize> },
    Map { map: Map, out: Vec<usize> },
    RealToComplex,
    RealPart,
    /// The same bytes with another shape and type (even-length reals as complex pairs).
    View { dims: Vec<usize>, dtype: Dtype },
}

pub struct FftPlan {
    input: Shape,
    transform: Transform,
    steps: Vec<Step>,
    output: Vec<usize>,
    tables: GpuArray,
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

impl Builder<'_> {
    fn outer_inner(&self, axis: usize) -> (usize, usize) {
        (self.dims[..axis].iter().product(), self.dims[axis + 1..].iter().product())
    }

    /// Complex transform along `axis`, its result scaled by `scale`.
    fn axis(&mut self, axis: usize, inverse: bool, scale: f64) -> Result<()> {
        let n = self.dims[axis];
        let (outer, inner) = self.outer_inner(axis);
        let min_batch = strided_min_batch().min(inner);
        let plan = plan_axis(n, self.limits, min_batch)
            .ok_or_else(|| Error::Invalid(format!("axis length {n} is beyond what this device's FFT can plan")))?;
        let out = self.dims.clone();
        self.lines(&plan, outer, inner, inverse, scale, out)
    }

    /// Steps transforming the middle axis of an (outer, n, inner) array into an array of shape `out`.
    fn lines(&mut self, plan: &AxisPlan, outer: usize, inner: usize, inverse: bool, scale: f64, out: Vec<usize>) -> Result<()> {
        match plan {
            AxisPlan::Single(p) => {
                let pass = Pass {
                    plan: p.clone(),
                    inverse,
                    lines: outer * inner,
                    inner,
                    input: Lines::axis(p.n, inner),
                    output: Lines::axis(p.n, inner),
                    scale: scale as f32,
                    roots: self.tw.roots(p.n),
                    twiddle: None,
                    conj_source: false,
                    conj_result: false,
                    chirp_in: None,
                    chirp_out: None,
                    real_post: None,
                    real_pre: None,
                    rader: None,
                };
                self.steps.push(Step::Lines { pass, out });
            }
            AxisPlan::FourStep { n, first, second } => {
                let (n, n1, n2) = (*n, first.n, second.n);
                // Pass 1: length n1 at stride n2·inner, then W_n^(k1·j2) with j2 = i / inner.
                let s = (n as f64).sqrt().ceil() as usize;
                let twiddle = StoreTwiddle {
                    lo: self.tw.powers(n, 1, s),
                    hi: self.tw.powers(n, s, n.div_ceil(s)),
                    s: s as u32,
                    div: inner as u32,
                };
                let pass = Pass {
                    plan: first.clone(),
                    inverse,
                    lines: outer * n2 * inner,
                    inner: n2 * inner,
                    input: Lines::axis(n1, n2 * inner),
                    output: Lines::axis(n1, n2 * inner),
                    scale: 1.0,
                    roots: self.tw.roots(n1),
                    twiddle: Some(twiddle),
                    conj_source: false,
                    conj_result: false,
                    chirp_in: None,
                    chirp_out: None,
                    real_post: None,
                    real_pre: None,
                    rader: None,
                };
                self.steps.push(Step::Lines { pass, out: out.clone() });
                // Pass 2: length n2 along rows o·n1 + k1; writes k1 + n1·k2, the transpose, directly.
                let pass = Pass {
                    plan: second.clone(),
                    inverse,
                    lines: outer * n1 * inner,
                    inner,
                    input: Lines::axis(n2, inner),
                    output: Lines { split: n1 as u32, hi: (n * inner) as u32, lo: inner as u32, elem: (n1 * inner) as u32 },
                    scale: scale as f32,
                    roots: self.tw.roots(n2),
                    twiddle: None,
                    conj_source: false,
                    conj_result: false,
                    chirp_in: None,
                    chirp_out: None,
                    real_post: None,
                    real_pre: None,
                    rader: None,
                };
                self.steps.push(Step::Lines { pass, out });
            }
            AxisPlan::Rader { n, root, inner: p } => {
                let (n, len) = (*n, p.n);
                let indices = self.tw.rader_indices(n, *root);
                let spectrum = self.tw.rader_spectrum(n, *root);
                // Workspace lines of n + 1: the n − 1 spectrum products, then x_0 and A[0].
                let wide = vec![outer, len + 2, inner];
                // Forward transform of x[g^−q] times the kernel's spectrum (inverse transforms
                // by conjugation on both ends, as Bluestein's).
                let gather = Pass {
                    plan: p.clone(),
                    inverse: false,
                    lines: outer * inner,
                    inner,
                    input: Lines::axis(n, inner),
                    output: Lines::axis(len + 2, inner),
                    scale: 1.0,
                    roots: self.tw.roots(len),
                    twiddle: None,
                    conj_source: inverse,
                    conj_result: false,
                    chirp_in: None,
                    chirp_out: Some(Chirp { table: spectrum, len: len as u32 }),
                    real_post: None,
                    real_pre: None,
                    rader: Some(Rader::Gather { indices }),
                };
                self.steps.push(Step::Lines { pass: gather, out: wide });
                // Unscaled inverse (the spectrum holds the 1/(n − 1)) with x_0 added to its DC
                // input, which adds x_0 to every output: X[g^q] = x_0 + (convolution)_q.
                let scatter = Pass {
                    plan: p.clone(),
                    inverse: true,
                    lines: outer * inner,
                    inner,
                    input: Lines::axis(len + 2, inner),
                    output: Lines::axis(n, inner),
                    scale: scale as f32,
                    roots: self.tw.roots(len),
                    twiddle: None,
                    conj_source: false,
                    conj_result: inverse,
                    chirp_in: None,
                    chirp_out: None,
                    real_post: None,
                    real_pre: None,
                    rader: Some(Rader::Scatter { indices }),
                };
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
                    let chirp_in = |len: usize| Some(Chirp { table: chirp, len: len as u32 });
                    let forward = Pass {
                        plan: p.clone(),
                        inverse: false,
                        lines: outer * inner,
                        inner,
                        input: Lines::axis(n, inner),
                        output: Lines::axis(m, inner),
                        scale: 1.0,
                        roots: self.tw.roots(m),
                        twiddle: None,
                        conj_source: inverse,
                        conj_result: false,
                        chirp_in: chirp_in(n),
                        chirp_out: Some(Chirp { table: spectrum, len: m as u32 }),
                        real_post: None,
                        real_pre: None,
                        rader: None,
                    };
                    self.steps.push(Step::Lines { pass: forward, out: wide });
                    // Unscaled inverse: the spectrum table already holds the 1/m.
                    let back = Pass {
                        plan: p.clone(),
                        inverse: true,
                        lines: outer * inner,
                        inner,
                        input: Lines::axis(m, inner),
                        output: Lines::axis(n, inner),
                        scale: scale as f32,
                        roots: self.tw.roots(m),
                        twiddle: None,
                        conj_source: false,
                        conj_result: inverse,
                        chirp_in: None,
                        chirp_out: chirp_in(n),
                        real_post: None,
                        real_pre: None,
                        rader: None,
                    };
                    self.steps.push(Step::Lines { pass: back, out });
                    return Ok(());
                }
                let map = |kind, len_in, len_out, table, scale: f64, conj_in, conj_out| Map {
                    kind, outer, len_in, len_out, inner, table, scale: scale as f32, conj_in, conj_out,
                };
                self.steps.push(Step::Map { map: map(AxisMap::Chirp, n, m, chirp, 1.0, inverse, false), out: wide.clone() });
                self.lines(padded, outer, inner, false, 1.0, wide.clone())?;
                self.steps.push(Step::Map { map: map(AxisMap::Multiply, m, m, spectrum, 1.0, false, false), out: wide.clone() });
                // Unscaled inverse: the spectrum table already holds the 1/m.
                self.lines(padded, outer, inner, true, 1.0, wide)?;
                self.steps.push(Step::Map { map: map(AxisMap::Crop, m, n, chirp, scale, false, inverse), out });
            }
        }
        Ok(())
    }

    /// The real transform of `len` (even) reals along the contiguous last axis as one pass of
    /// the half-length complex transform, the spectrum untangled in its store (forward: the
    /// array is the packed pairs, it becomes len/2 + 1 values) or packed in its load (inverse:
    /// len/2 + 1 values become len/2 packed pairs). False, recording nothing, when that length
    /// needs more than one pass.
    fn real_pass(&mut self, inverse: bool, len: usize, scale: f64) -> bool {
        let last = self.dims.len() - 1;
        let (half, outer) = (len / 2, self.outer_inner(last).0);
        let Some(AxisPlan::Single(p)) = plan_axis(half, self.limits, 1) else { return false };
        if half < 2 {
            return false;
        }
        let table = self.tw.roots(len);
        let (n_in, n_out) = if inverse { (half + 1, half) } else { (half, half + 1) };
        let pass = Pass {
            plan: p.clone(),
            inverse,
            lines: outer,
            inner: 1,
            input: Lines::axis(n_in, 1),
            output: Lines::axis(n_out, 1),
            scale: scale as f32,
            roots: self.tw.roots(half),
            twiddle: None,
            conj_source: false,
            conj_result: false,
            chirp_in: None,
            chirp_out: None,
            real_post: (!inverse).then_some(table),
            real_pre: inverse.then_some(table),
            rader: None,
        };
        self.dims[last] = n_out;
        self.steps.push(Step::Lines { pass, out: self.dims.clone() });
        true
    }

    /// Changes the length of `axis` to `len` with an element map (half/full spectrum).
    fn resize(&mut self, axis: usize, kind: AxisMap, len: usize, table: u32, scale: f64) {
        let (outer, inner) = self.outer_inner(axis);
        let len_in = self.dims[axis];
        self.dims[axis] = len;
        let map = Map { kind, outer, len_in, len_out: len, inner, table, scale: scale as f32, conj_in: false, conj_out: false };
        self.steps.push(Step::Map { map, out: self.dims.clone() });
    }

    fn view(&mut self, axis: usize, len: usize, dtype: Dtype) {
        self.dims[axis] = len;
        self.steps.push(Step::View { dims: self.dims.clone(), dtype });
    }
}

/// Lines a single pass over a strided axis must hold per workgroup (else four-step): adjacent
/// columns are what make its loads coalesce. `LUCENT_FFT_STRIDED_BATCH` overrides it for tuning.
fn strided_min_batch() -> usize {
    std::env::var("LUCENT_FFT_STRIDED_BATCH").ok().and_then(|s| s.parse().ok()).unwrap_or(4)
}

impl FftPlan {
    /// Plans `transform` of an array of shape `dims` over `axes`.
    pub fn new(gpu: &Gpu, dims: &[usize], axes: &[usize], transform: Transform, norm: Norm) -> Result<FftPlan> {
        let input = Shape::new(dims)?;
        let axes = check_axes(axes, dims.len())?;
        let limits = DeviceLimits {
            workgroup_bytes: gpu.workgroup_memory_bytes() as usize,
            max_threads: gpu.limits().max_compute_invocations_per_workgroup as usize,
        };
        let mut tw = Twiddles::default();
        let mut b = Builder { limits, tw: &mut tw, dims: dims.to_vec(), steps: Vec::new(), bluestein: false };
        let last = *axes.last().unwrap();
        let factor = |n: usize, inverse: bool| norm.factor(n, inverse);
        match transform {
            Transform::Forward | Transform::Inverse => {
                let inverse = transform == Transform::Inverse;
                for &a in axes.iter().rev() {
                    b.axis(a, inverse, factor(b.dims[a], inverse))?;
                }
            }
            Transform::RealForward => {
                let n = dims[last];
                // Pairs of adjacent reals are complex numbers only along the contiguous axis.
                let contiguous = last == dims.len() - 1;
                if n % 2 == 0 && contiguous {
                    // n reals are n/2 complex pairs: transform those, then untangle the spectrum.
                    b.view(last, n / 2, Dtype::C32);
                    if !b.real_pass(false, n, factor(n, false)) {
                        b.axis(last, false, 1.0)?;
                        let roots = b.tw.roots(n);
                        b.resize(last, AxisMap::RealPost, n / 2 + 1, roots, factor(n, false));
                    }
                } else {
                    // Odd: the complex transform of the full line, keeping n/2 + 1 values.
                    b.steps.push(Step::RealToComplex);
                    b.axis(last, false, factor(n, false))?;
                    b.resize(last, AxisMap::Truncate, n / 2 + 1, 0, 1.0);
                }
                for &a in axes.iter().rev().skip(1) {
                    b.axis(a, false, factor(b.dims[a], false))?;
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
                    b.axis(a, true, factor(b.dims[a], true))?;
                }
                if len % 2 == 0 && last == dims.len() - 1 {
                    // The inverse of the even forward path; the half-length inverse carries 2/n.
                    if !b.real_pass(true, len, 2.0 * factor(len, true)) {
                        let roots = b.tw.roots(len);
                        b.resize(last, AxisMap::RealPre, len / 2, roots, 1.0);
                        b.axis(last, true, 2.0 * factor(len, true))?;
                    }
                    b.view(last, len, Dtype::F32);
                } else {
                    b.resize(last, AxisMap::Hermitian, len, 0, 1.0);
                    b.axis(last, true, factor(len, true))?;
                    b.steps.push(Step::RealPart);
                }
            }
        }
        let (steps, output, bluestein) = (b.steps, b.dims, b.bluestein);
        Shape::new(&output)?;
        if tw.data.is_empty() {
            tw.data.push(num_complex::Complex32::new(0.0, 0.0));
        }
        let table = ndarray::ArrayD::from_shape_vec(vec![tw.data.len()], tw.data).unwrap();
        let tables = GpuArray::upload_c32(gpu, &table.view())?;
        Ok(FftPlan { input, transform, steps, output, tables, bluestein })
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
        if rec.dims(x) != self.input.dims() {
            return Err(Error::Shape(format!("FFT planned for {:?}, given {:?}", self.input.dims(), rec.dims(x))));
        }
        let real_in = self.transform == Transform::RealForward;
        rec.expect_dtype(x, if real_in { Dtype::F32 } else { Dtype::C32 }, "FFT input")?;
        let table = rec.input(&self.tables);
        let mut cur = x;
        for step in &self.steps {
            match step {
                Step::Lines { pass, out } => {
                    let next = rec.temp(out, Dtype::C32)?;
                    fft_lines::record(rec, pass, cur, next, table);
                    cur = next;
                }
                Step::Map { map, out } => {
                    let next = rec.temp(out, Dtype::C32)?;
                    fft_axis_map::record(rec, map, cur, next, table);
                    cur = next;
                }
                Step::RealToComplex => cur = real_to_complex::record(rec, cur)?,
                Step::RealPart => cur = complex_to_real::record(rec, ComplexToReal::Re, cur)?,
                Step::View { dims, dtype } => cur = rec.reinterpret(cur, dims, *dtype)?,
            }
        }
        Ok(cur)
    }
}
