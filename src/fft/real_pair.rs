//! Real transforms through complex ones of half the work: the FFT plan builder's steps that
//! pack reals into complex lines and untangle the spectra after (and the reverse). Along the
//! contiguous last axis one pass of the half-length transform takes pairs of adjacent reals
//! (`real_pass`); along any axis two real lines share one complex line, z = x_a + i·x_b
//! (`real_pairs`), packed and unpacked in a pass's load and store where it allows, else by
//! gathers and element maps.

use super::gpu::{Builder, Step};
use super::lines::{LinePair, Lines, PairsIn, PairsOut, Pass};
use super::plan::{plan_axis, AxisPlan, LinePass};
use crate::error::Result;
use crate::gpu::Dtype;
use crate::kernels::fft_axis_map::{AxisMap, Map, Pairs};

impl Builder<'_> {
    /// Whether the real transform of `len` reals along the contiguous last axis takes one pass.
    pub(super) fn real_pass_fits(&self, len: usize) -> bool {
        // (The untangling reads pairs k, n - k from workgroup memory: not split-exchange passes.)
        len.is_multiple_of(2) && len >= 4 && matches!(plan_axis(len / 2, self.limits, 1, self.wide()), Some(AxisPlan::Single(p)) if !p.split)
    }

    /// The real transform of `len` (even) reals along the contiguous last axis as one pass of
    /// the half-length complex transform, the spectrum untangled in its store (forward: the
    /// array is the packed pairs, `len_in` of them then zeros, and becomes len/2 + 1 values) or
    /// packed in its load (inverse: len/2 + 1 values become len/2 packed pairs). Only where
    /// `real_pass_fits`.
    pub(super) fn real_pass(&mut self, inverse: bool, len: usize, scale: f64, len_in: usize) {
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

    /// The real transform of length `n` along `axis` as the complex transform of its lines
    /// packed two to one, z = x_a + i·x_b (half the work of transforming each line as complex;
    /// any length, any plan). Forward: the current reals (`dims[axis]` ≤ n, zeros beyond) become
    /// n/2 + 1 values, X_a and X_b untangled from Z; inverse: n/2 + 1 values become n reals,
    /// Re z and Im z of the inverse transform of Z = X_a + i·X_b (full Hermitian spectra).
    /// Adjacent columns pair up where there is an even number of them (the reals are then the
    /// packed lines as they lie), else adjacent rows; a single row of an odd number of columns
    /// pairs its columns, the last with zeros. An odd row count: the last row pairs with zeros.
    pub(super) fn real_pairs(&mut self, axis: usize, n: usize, inverse: bool, scale: f64) -> Result<()> {
        let (outer, inner) = self.outer_inner(axis);
        let (len_in, half) = (self.dims[axis], n / 2 + 1);
        let mut result = self.dims.clone();
        result[axis] = if inverse { n } else { half };
        let pairs = if inner % 2 == 0 || (outer == 1 && inner > 1) { Pairs::Columns } else { Pairs::Rows };
        let map =
            |kind, len_in, len_out| Map { kind, outer, len_in, len_out, inner, table: 0, scale: 1.0, conj_in: false, conj_out: false, pairs: Some(pairs) };
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
            Pairs::Rows => {
                (Lines { split: 1, hi: u(2 * len * inner), lo: 0, elem: u(inner) }, LinePair { offset: u(len * inner), end: u(outer * len * inner) })
            }
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
