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
use crate::kernels::fft_lines::{self, Lines, Pass, StoreTwiddle};
use crate::kernels::real_to_complex;

/// One dispatch of the recipe, producing a new complex array of shape `out`.
#[derive(Clone, Debug)]
enum Step {
    Lines { pass: Pass, out: Vec<usize> },
    Map { map: Map, out: Vec<usize> },
}

pub struct FftPlan {
    input: Shape,
    transform: Transform,
    steps: Vec<Step>,
    output: Vec<usize>,
    tables: GpuArray,
}

/// Builds the steps of complex transforms along one axis at a time.
struct Builder<'a> {
    limits: DeviceLimits,
    tw: &'a mut Twiddles,
    dims: Vec<usize>,
    steps: Vec<Step>,
}

impl Builder<'_> {
    fn outer_inner(&self, axis: usize) -> (usize, usize) {
        (self.dims[..axis].iter().product(), self.dims[axis + 1..].iter().product())
    }

    /// Complex transform along `axis`, its result scaled by `scale`.
    fn axis(&mut self, axis: usize, inverse: bool, scale: f64) -> Result<()> {
        let n = self.dims[axis];
        let plan = plan_axis(n, self.limits)
            .ok_or_else(|| Error::Invalid(format!("axis length {n} is beyond what this device's FFT can plan")))?;
        let (outer, inner) = self.outer_inner(axis);
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
                };
                self.steps.push(Step::Lines { pass, out });
            }
            AxisPlan::Bluestein { n, m, inner: padded } => {
                let (n, m) = (*n, *m);
                let chirp = self.tw.chirp(n);
                let spectrum = self.tw.chirp_spectrum(n, m);
                let wide = vec![outer, m, inner];
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

    /// Changes the length of `axis` with an element map (half/full spectrum).
    fn resize(&mut self, axis: usize, kind: AxisMap, len: usize) {
        let (outer, inner) = self.outer_inner(axis);
        let len_in = self.dims[axis];
        self.dims[axis] = len;
        let map = Map { kind, outer, len_in, len_out: len, inner, table: 0, scale: 1.0, conj_in: false, conj_out: false };
        self.steps.push(Step::Map { map, out: self.dims.clone() });
    }
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
        let mut b = Builder { limits, tw: &mut tw, dims: dims.to_vec(), steps: Vec::new() };
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
                // The last axis in full, keep n/2 + 1, then the others on the half spectrum.
                let n = dims[last];
                b.axis(last, false, factor(n, false))?;
                b.resize(last, AxisMap::Truncate, n / 2 + 1);
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
                b.resize(last, AxisMap::Hermitian, len);
                b.axis(last, true, factor(len, true))?;
            }
        }
        let (steps, output) = (b.steps, b.dims);
        Shape::new(&output)?;
        if tw.data.is_empty() {
            tw.data.push(num_complex::Complex32::new(0.0, 0.0));
        }
        let table = ndarray::ArrayD::from_shape_vec(vec![tw.data.len()], tw.data).unwrap();
        let tables = GpuArray::upload_c32(gpu, &table.view())?;
        Ok(FftPlan { input, transform, steps, output, tables })
    }

    pub fn output_dims(&self) -> &[usize] {
        &self.output
    }

    /// Dispatches the plan has, for reports.
    pub fn dispatches(&self) -> usize {
        self.steps.len() + matches!(self.transform, Transform::RealForward | Transform::RealInverse { .. }) as usize
    }

    /// Records the transform of `x` (complex, or real for `RealForward`) and returns the result.
    pub fn record(&self, rec: &mut Recording, x: Buf) -> Result<Buf> {
        if rec.dims(x) != self.input.dims() {
            return Err(Error::Shape(format!("FFT planned for {:?}, given {:?}", self.input.dims(), rec.dims(x))));
        }
        let real_in = self.transform == Transform::RealForward;
        rec.expect_dtype(x, if real_in { Dtype::F32 } else { Dtype::C32 }, "FFT input")?;
        let table = rec.input(&self.tables);
        let mut cur = if real_in { real_to_complex::record(rec, x)? } else { x };
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
            }
        }
        if matches!(self.transform, Transform::RealInverse { .. }) {
            cur = complex_to_real::record(rec, ComplexToReal::Re, cur)?;
        }
        Ok(cur)
    }
}
