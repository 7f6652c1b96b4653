//! scipy.ndimage's measurements of labelled regions: [`sum_labels`], [`mean`], [`variance`],
//! [`standard_deviation`], [`minimum`], [`maximum`], [`minimum_position`],
//! [`maximum_position`], [`extrema`], [`median`], [`center_of_mass`], [`histogram`] and
//! [`find_objects`], with scipy's rules for `labels` and `index` ([`Regions`]).
//!
//! They run on the host, in f64, in parallel chunks of the array: each is one or two passes
//! that reduce the whole array to a few numbers per region, bound by the host's memory
//! bandwidth, and scipy's sums are f64 (bincount), which the GPU lacks on many devices. The
//! labels usually come from [`super::label`]; any integer labels work (negative or sparse
//! values, index values absent from the array: an empty region).
//!
//! Empty regions give what scipy gives where scipy defines it (sums and counts 0, mean and
//! variance NaN) and `None` where scipy returns an artefact of its sort (the extrema and the
//! median of an index value absent from the labels). A NaN value makes its region's extrema
//! NaN (numpy's min and max; the position of the first NaN) and its median NaN.

use std::ops::Range;

use ndarray::ArrayViewD;
use rayon::prelude::*;

use crate::error::{Error, Result};

/// A value a measurement reads (as f64).
pub trait Value: Copy + Send + Sync {
    fn get(self) -> f64;
}

/// A label (as i64).
pub trait LabelValue: Copy + Send + Sync {
    fn get(self) -> i64;
}

macro_rules! values {
    ($($t:ty),*) => {$(impl Value for $t { fn get(self) -> f64 { self as f64 } })*};
}
macro_rules! labels {
    ($($t:ty),*) => {$(impl LabelValue for $t { fn get(self) -> i64 { self as i64 } })*};
}
values!(f32, f64, i8, i16, i32, i64, u8, u16, u32, u64);
labels!(i8, i16, i32, i64, u8, u16, u32);

impl Value for bool {
    fn get(self) -> f64 {
        f64::from(u8::from(self))
    }
}

impl LabelValue for bool {
    fn get(self) -> i64 {
        i64::from(self)
    }
}

/// The regions a measurement reports on: scipy's `labels` and `index`.
pub enum Regions<'a, L> {
    /// The whole array as one region (`labels=None`; scipy ignores `index` then).
    Whole,
    /// The elements whose label is above 0, as one region (`index=None`).
    Labelled(ArrayViewD<'a, L>),
    /// One region per index value, in the index's order (repeats allowed): the elements with
    /// that label (a scalar `index` is a list of one).
    Each(ArrayViewD<'a, L>, &'a [i64]),
}

/// The lowest and highest value of a region and their positions (the first in C order).
#[derive(Clone, Debug, PartialEq)]
pub struct Extrema {
    pub min: f64,
    pub max: f64,
    pub min_position: Vec<usize>,
    pub max_position: Vec<usize>,
}

/// scipy.ndimage.sum_labels: the sum of each region (0 for an empty one).
pub fn sum_labels<T: Value, L: LabelValue>(input: &ArrayViewD<T>, regions: &Regions<L>) -> Result<Vec<f64>> {
    Ok(moments(input, regions, false)?.into_iter().map(|m| m.sum).collect())
}

/// scipy.ndimage.mean: the mean of each region (NaN for an empty one).
pub fn mean<T: Value, L: LabelValue>(input: &ArrayViewD<T>, regions: &Regions<L>) -> Result<Vec<f64>> {
    Ok(moments(input, regions, false)?.into_iter().map(|m| m.sum / m.count as f64).collect())
}

/// scipy.ndimage.variance: the population variance of each region (the mean of the squared
/// differences from the region's mean, two passes as scipy; NaN for an empty region).
pub fn variance<T: Value, L: LabelValue>(input: &ArrayViewD<T>, regions: &Regions<L>) -> Result<Vec<f64>> {
    Ok(moments(input, regions, true)?.into_iter().map(|m| m.centred_squares / m.count as f64).collect())
}

/// scipy.ndimage.standard_deviation: the square root of [`variance`].
pub fn standard_deviation<T: Value, L: LabelValue>(input: &ArrayViewD<T>, regions: &Regions<L>) -> Result<Vec<f64>> {
    Ok(variance(input, regions)?.into_iter().map(f64::sqrt).collect())
}

/// scipy.ndimage.extrema: each region's lowest and highest values and their positions.
pub fn extrema<T: Value, L: LabelValue>(input: &ArrayViewD<T>, regions: &Regions<L>) -> Result<Vec<Option<Extrema>>> {
    let shape = input.shape().to_vec();
    let plan = Plan::new(input, regions)?;
    let found = plan.reduce(
        || None::<Extreme>,
        |acc, flat, v| match acc {
            None => *acc = Some(Extreme { min: (v, flat), max: (v, flat) }),
            Some(e) => e.visit(v, flat),
        },
        |acc, other| match (acc.as_mut(), other) {
            (_, None) => {}
            (None, Some(o)) => *acc = Some(o.clone()),
            (Some(a), Some(o)) => {
                a.visit(o.min.0, o.min.1);
                a.visit(o.max.0, o.max.1);
            }
        },
    );
    Ok(plan.per_entry(found, |e| {
        e.as_ref().map(|e| Extrema { min: e.min.0, max: e.max.0, min_position: unravel(e.min.1, &shape), max_position: unravel(e.max.1, &shape) })
    }))
}

/// scipy.ndimage.minimum: each region's lowest value.
pub fn minimum<T: Value, L: LabelValue>(input: &ArrayViewD<T>, regions: &Regions<L>) -> Result<Vec<Option<f64>>> {
    Ok(extrema(input, regions)?.into_iter().map(|e| e.map(|e| e.min)).collect())
}

/// scipy.ndimage.maximum: each region's highest value.
pub fn maximum<T: Value, L: LabelValue>(input: &ArrayViewD<T>, regions: &Regions<L>) -> Result<Vec<Option<f64>>> {
    Ok(extrema(input, regions)?.into_iter().map(|e| e.map(|e| e.max)).collect())
}

/// scipy.ndimage.minimum_position: the index of each region's lowest value (the first).
pub fn minimum_position<T: Value, L: LabelValue>(input: &ArrayViewD<T>, regions: &Regions<L>) -> Result<Vec<Option<Vec<usize>>>> {
    Ok(extrema(input, regions)?.into_iter().map(|e| e.map(|e| e.min_position)).collect())
}

/// scipy.ndimage.maximum_position: the index of each region's highest value (the first).
pub fn maximum_position<T: Value, L: LabelValue>(input: &ArrayViewD<T>, regions: &Regions<L>) -> Result<Vec<Option<Vec<usize>>>> {
    Ok(extrema(input, regions)?.into_iter().map(|e| e.map(|e| e.max_position)).collect())
}

/// scipy.ndimage.median: each region's median (the mean of the two middle values of an even
/// count).
pub fn median<T: Value, L: LabelValue>(input: &ArrayViewD<T>, regions: &Regions<L>) -> Result<Vec<Option<f64>>> {
    let plan = Plan::new(input, regions)?;
    let counts = plan.reduce(|| 0usize, |c, _, _| *c += 1, |c, o| *c += o);
    let total: usize = counts.iter().sum();
    crate::host::check_host_bytes("median's grouped values", (total as u64).checked_mul(8))?;
    // Group the values by region (a counting sort), then select the middle of each group.
    let mut start = Vec::with_capacity(counts.len() + 1);
    start.push(0);
    for c in &counts {
        start.push(start.last().unwrap() + c);
    }
    let mut next = start.clone();
    let mut grouped = vec![0f64; total];
    plan.visit(0..plan.len(), false, |slot, _, _, v| {
        grouped[next[slot]] = v;
        next[slot] += 1;
    });
    let medians: Vec<Option<f64>> = (0..counts.len())
        .map(|slot| {
            let group = &mut grouped[start[slot]..start[slot + 1]];
            if group.is_empty() {
                return None;
            }
            if group.iter().any(|v| v.is_nan()) {
                return Some(f64::NAN);
            }
            let n = group.len();
            let (_, hi, _) = group.select_nth_unstable_by(n / 2, f64::total_cmp);
            let hi = *hi;
            let lo = if n.is_multiple_of(2) { group[..n / 2].iter().copied().fold(f64::NEG_INFINITY, f64::max) } else { hi };
            Some((lo + hi) / 2.0)
        })
        .collect();
    Ok(plan.per_entry(medians, |m| *m))
}

/// scipy.ndimage.center_of_mass: Σ value · index / Σ value along every axis, per region (NaN
/// where a region's values sum to 0).
pub fn center_of_mass<T: Value, L: LabelValue>(input: &ArrayViewD<T>, regions: &Regions<L>) -> Result<Vec<Vec<f64>>> {
    let shape = input.shape().to_vec();
    let ndim = shape.len();
    let plan = Plan::new(input, regions)?;
    // [Σ value, Σ value · index along each axis]
    let sums = plan.reduce_indexed(
        || vec![0f64; ndim + 1],
        |acc, index, v| {
            acc[0] += v;
            for (a, &i) in acc[1..].iter_mut().zip(index) {
                *a += v * i as f64;
            }
        },
        |acc, other| acc.iter_mut().zip(other).for_each(|(a, o)| *a += o),
    );
    Ok(plan.per_entry(sums, |s| s[1..].iter().map(|m| m / s[0]).collect()))
}

/// scipy.ndimage.histogram: counts of each region's values in `bins` equal bins from `min` to
/// `max` (numpy's edges: `linspace(min, max, bins + 1)`, each bin closed below, the last closed
/// above too; values outside and NaN not counted); `None` for an empty region (scipy's
/// `labeled_comprehension` default).
pub fn histogram<T: Value, L: LabelValue>(input: &ArrayViewD<T>, min: f64, max: f64, bins: usize, regions: &Regions<L>) -> Result<Vec<Option<Vec<u64>>>> {
    if bins == 0 {
        return Err(Error::Invalid("histogram: bins must be at least 1".into()));
    }
    if !(min.is_finite() && max.is_finite()) {
        return Err(Error::Invalid(format!("histogram: the range [{min}, {max}] is not finite")));
    }
    let edges = linspace(min, max, bins + 1);
    if edges.windows(2).any(|w| w[1] < w[0]) {
        return Err(Error::Invalid(format!("histogram: bins must increase monotonically (min {min} > max {max})")));
    }
    let plan = Plan::new(input, regions)?;
    crate::host::check_host_bytes("histogram's counts", (bins as u64).checked_mul(8 * plan.slots as u64 * plan.chunks() as u64))?;
    let counts = plan.reduce(
        || None::<Vec<u64>>,
        |acc, _, v| {
            let counts = acc.get_or_insert_with(|| vec![0; bins]);
            if v >= edges[0] && v <= edges[bins] {
                // The last edge at or below v; the top edge belongs to the last bin.
                let bin = edges.partition_point(|&e| e <= v) - 1;
                counts[bin.min(bins - 1)] += 1;
            }
        },
        |acc, other| match (acc.as_mut(), other) {
            (_, None) => {}
            (None, Some(o)) => *acc = Some(o.clone()),
            (Some(a), Some(o)) => a.iter_mut().zip(o).for_each(|(a, o)| *a += o),
        },
    );
    Ok(plan.per_entry(counts, |c| c.clone()))
}

/// scipy.ndimage.find_objects: for labels 1..=`max_label` (0: the largest label present), the
/// smallest box holding each (a range per axis), `None` for a label absent from the array.
pub fn find_objects<L: LabelValue>(labels: &ArrayViewD<L>, max_label: usize) -> Result<Vec<Option<Vec<Range<usize>>>>> {
    let ndim = labels.ndim();
    let max_label = match max_label {
        0 => labels.iter().map(|l| l.get()).max().unwrap_or(0).max(0) as usize,
        n => n,
    };
    crate::host::check_host_bytes("find_objects' boxes", (max_label as u64).checked_mul(16 * ndim as u64 + 32))?;
    let each: Vec<i64> = (1..=max_label as i64).collect();
    let regions = Regions::Each(labels.view(), &each);
    let plan = Plan::<u8, L>::over(None, labels.shape(), &regions)?;
    let boxes = plan.reduce_indexed(
        || None::<Vec<Range<usize>>>,
        |acc, index, _| match acc {
            None => *acc = Some(index.iter().map(|&i| i..i + 1).collect()),
            Some(b) => b.iter_mut().zip(index).for_each(|(r, &i)| *r = r.start.min(i)..r.end.max(i + 1)),
        },
        |acc, other| match (acc.as_mut(), other) {
            (_, None) => {}
            (None, Some(o)) => *acc = Some(o.clone()),
            (Some(a), Some(o)) => a.iter_mut().zip(o).for_each(|(r, o)| *r = r.start.min(o.start)..r.end.max(o.end)),
        },
    );
    Ok(plan.per_entry(boxes, |b| b.clone()))
}

/// Count, sum and (with `centred`) the sum of squared differences from the mean of each entry.
#[derive(Clone, Copy, Default)]
struct Moments {
    count: u64,
    sum: f64,
    centred_squares: f64,
}

fn moments<T: Value, L: LabelValue>(input: &ArrayViewD<T>, regions: &Regions<L>, centred: bool) -> Result<Vec<Moments>> {
    let plan = Plan::new(input, regions)?;
    let mut m = plan.reduce(
        Moments::default,
        |m, _, v| {
            m.count += 1;
            m.sum += v;
        },
        |m, o| {
            m.count += o.count;
            m.sum += o.sum;
        },
    );
    if centred {
        let means: Vec<f64> = m.iter().map(|m| m.sum / m.count as f64).collect();
        let squares = plan.reduce_with(
            false,
            || 0f64,
            |s, slot, _, _, v| {
                let d = v - means[slot];
                *s += d * d;
            },
            |s, o| *s += o,
        );
        m.iter_mut().zip(squares).for_each(|(m, s)| m.centred_squares = s);
    }
    Ok(plan.per_entry(m, |m| *m))
}

#[derive(Clone)]
struct Extreme {
    min: (f64, usize),
    max: (f64, usize),
}

impl Extreme {
    /// Takes `v` at `flat` if it is lower (higher) than the extreme so far, or earlier and equal;
    /// a NaN wins over numbers (the first NaN).
    fn visit(&mut self, v: f64, flat: usize) {
        let beats = |v: f64, flat: usize, best: (f64, usize), lower: bool| {
            let (b, at) = best;
            if b.is_nan() || v.is_nan() {
                return v.is_nan() && (!b.is_nan() || flat < at);
            }
            if lower {
                v < b || (v == b && flat < at)
            } else {
                v > b || (v == b && flat < at)
            }
        };
        if beats(v, flat, self.min, true) {
            self.min = (v, flat);
        }
        if beats(v, flat, self.max, false) {
            self.max = (v, flat);
        }
    }
}

/// How the elements map to the regions' slots (one per distinct index value), and how the index
/// entries map to slots.
struct Plan<'a, T: Clone, L: Clone> {
    /// None: every value is 0 (find_objects reads only the labels).
    values: Option<std::borrow::Cow<'a, [T]>>,
    len: usize,
    labels: Option<std::borrow::Cow<'a, [L]>>,
    shape: Vec<usize>,
    /// Distinct index values, sorted (for `Regions::Each`).
    keys: Vec<i64>,
    /// Slot of each key value minus `table_base`, when the keys span a short range.
    table: Option<(i64, Vec<u32>)>,
    /// The slot of each index entry.
    entries: Vec<usize>,
    slots: usize,
}

const NO_SLOT: u32 = u32::MAX;

impl<'a, T: Value, L: LabelValue> Plan<'a, T, L> {
    fn new(input: &'a ArrayViewD<'_, T>, regions: &'a Regions<'_, L>) -> Result<Self> {
        Self::over(Some(input), input.shape(), regions)
    }

    fn over(input: Option<&'a ArrayViewD<'_, T>>, shape: &[usize], regions: &'a Regions<'_, L>) -> Result<Self> {
        let values = input.map(contiguous);
        let len = shape.iter().product();
        let shape = shape.to_vec();
        let (labels, index): (Option<&ArrayViewD<L>>, Option<&[i64]>) = match regions {
            Regions::Whole => (None, None),
            Regions::Labelled(l) => (Some(l), None),
            Regions::Each(l, i) => (Some(l), Some(i)),
        };
        if let Some(l) = labels {
            if l.shape() != shape {
                return Err(Error::Invalid(format!("labels of shape {:?} for an input of shape {shape:?}", l.shape())));
            }
        }
        let labels = labels.map(contiguous);
        let Some(index) = index else {
            return Ok(Plan { values, len, labels, shape, keys: vec![], table: None, entries: vec![0], slots: 1 });
        };
        let mut keys = index.to_vec();
        keys.sort_unstable();
        keys.dedup();
        let entries = index.iter().map(|i| keys.binary_search(i).unwrap()).collect();
        let slots = keys.len();
        let table = match (keys.first(), keys.last()) {
            (Some(&lo), Some(&hi)) if hi.abs_diff(lo) < (1 << 22).max(4 * slots as u64) => {
                let mut t = vec![NO_SLOT; (hi - lo + 1) as usize];
                keys.iter().enumerate().for_each(|(s, &k)| t[(k - lo) as usize] = s as u32);
                Some((lo, t))
            }
            _ => None,
        };
        let plan = Plan { values, len, labels, shape, keys, table, entries, slots };
        // Every chunk holds an accumulator per region (at most ~128 bytes each), and so does the
        // merge: checked before any is allocated.
        let bytes = (plan.slots as u64).checked_mul((plan.chunks() as u64 + 1) * 128);
        crate::host::check_host_bytes(&format!("measurements of {} regions", plan.slots), bytes)?;
        Ok(plan)
    }

    fn len(&self) -> usize {
        self.len
    }

    fn value(&self, i: usize) -> f64 {
        self.values.as_ref().map_or(0.0, |v| v[i].get())
    }

    /// The slot of an element's label, if it is in a region.
    fn slot(&self, label: i64) -> Option<usize> {
        if self.keys.is_empty() {
            return (label > 0).then_some(0);
        }
        match &self.table {
            Some((lo, t)) => {
                let at = label.checked_sub(*lo)?;
                let s = *t.get(usize::try_from(at).ok()?)?;
                (s != NO_SLOT).then_some(s as usize)
            }
            None => self.keys.binary_search(&label).ok(),
        }
    }

    /// Calls `f(slot, flat index, index along each axis, value)` for every element of `range` in
    /// a region, in order; the index along each axis is tracked only when `indexed` (else empty).
    fn visit(&self, range: Range<usize>, indexed: bool, mut f: impl FnMut(usize, usize, &[usize], f64)) {
        let mut index = if indexed { unravel(range.start, &self.shape) } else { vec![] };
        for i in range {
            let slot = match &self.labels {
                None => Some(0),
                Some(labels) => self.slot(labels[i].get()),
            };
            if let Some(s) = slot {
                f(s, i, &index, self.value(i));
            }
            // The next element's index: the last axis steps, carrying into the ones before.
            for (k, n) in index.iter_mut().zip(&self.shape).rev() {
                *k += 1;
                if *k < *n {
                    break;
                }
                *k = 0;
            }
        }
    }

    /// Chunks of the array reduced in parallel (each holds one accumulator per slot).
    fn chunks(&self) -> usize {
        let by_size = self.len().div_ceil(1 << 16).max(1);
        let by_memory = ((1usize << 24) / self.slots.max(1)).max(1);
        by_size.min(rayon::current_num_threads() * 4).min(by_memory)
    }

    /// One accumulator per slot: `add(acc, slot, flat, index, value)` over the elements of each
    /// chunk (`index` as in [`Self::visit`]), the chunks merged in order (so ties keep the first
    /// element).
    fn reduce_with<A: Clone + Send>(
        &self,
        indexed: bool,
        init: impl Fn() -> A + Sync,
        add: impl Fn(&mut A, usize, usize, &[usize], f64) + Sync,
        merge: impl Fn(&mut A, &A) + Sync,
    ) -> Vec<A> {
        let chunks = self.chunks();
        let step = self.len().div_ceil(chunks).max(1);
        let partial: Vec<Vec<A>> = (0..chunks)
            .into_par_iter()
            .map(|c| {
                let mut acc: Vec<A> = (0..self.slots).map(|_| init()).collect();
                let range = (c * step).min(self.len())..((c + 1) * step).min(self.len());
                self.visit(range, indexed, |s, i, index, v| add(&mut acc[s], s, i, index, v));
                acc
            })
            .collect();
        let mut out: Vec<A> = (0..self.slots).map(|_| init()).collect();
        for p in &partial {
            out.iter_mut().zip(p).for_each(|(a, o)| merge(a, o));
        }
        out
    }

    /// [`Self::reduce_with`] given the flat index and value.
    fn reduce<A: Clone + Send>(&self, init: impl Fn() -> A + Sync, add: impl Fn(&mut A, usize, f64) + Sync, merge: impl Fn(&mut A, &A) + Sync) -> Vec<A> {
        self.reduce_with(false, init, |a, _, i, _, v| add(a, i, v), merge)
    }

    /// [`Self::reduce_with`] given the index along every axis and the value.
    fn reduce_indexed<A: Clone + Send>(
        &self,
        init: impl Fn() -> A + Sync,
        add: impl Fn(&mut A, &[usize], f64) + Sync,
        merge: impl Fn(&mut A, &A) + Sync,
    ) -> Vec<A> {
        self.reduce_with(true, init, |a, _, _, index, v| add(a, index, v), merge)
    }

    /// The result of each index entry from the result of each slot.
    fn per_entry<A, R>(&self, slots: Vec<A>, f: impl Fn(&A) -> R) -> Vec<R> {
        self.entries.iter().map(|&s| f(&slots[s])).collect()
    }
}

fn contiguous<'a, T: Copy>(a: &'a ArrayViewD<'_, T>) -> std::borrow::Cow<'a, [T]> {
    match a.as_slice() {
        Some(s) => std::borrow::Cow::Borrowed(s),
        None => std::borrow::Cow::Owned(a.iter().copied().collect()),
    }
}

fn unravel(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut index = vec![0; shape.len()];
    for (i, &n) in index.iter_mut().zip(shape).rev() {
        *i = flat % n;
        flat /= n;
    }
    index
}

/// numpy.linspace(start, stop, n) for n ≥ 2: i · step + start, the last exactly `stop`.
fn linspace(start: f64, stop: f64, n: usize) -> Vec<f64> {
    let step = (stop - start) / (n - 1) as f64;
    let mut y: Vec<f64> = (0..n).map(|i| i as f64 * step + start).collect();
    y[n - 1] = stop;
    y
}
