//! scipy.ndimage's minimum and maximum filters over a footprint, grey morphology (erosion and
//! dilation with a flat footprint or a structure's values) and binary morphology (erosion,
//! dilation, opening, closing with a structure, iterations, a border value and a mask), all on
//! one kernel: the minimum or maximum over a footprint's taps of x[i + offset] + weight
//! (kernels::footprint_extreme).
//!
//! scipy's centring: footprint element j reads x[i + j − (m/2 + origin)] along each axis, an
//! origin within −(m/2) ..= (m − 1)/2. Dilations reflect the footprint (and the structure) and
//! negate the origin, one less for an even length, as scipy's `grey_dilation` and
//! `binary_dilation` do; a binary array is 0/1 in f32 on the device (erosion: the minimum over
//! the structure, the border `border_value`; dilation: the maximum over the reflected one).
//! The exact Euclidean distance transform (scipy's `distance_transform_edt`, in scipy's
//! morphology module too) is Felzenszwalb and Huttenlocher's lower envelopes, one pass per axis.

use ndarray::{ArrayD, ArrayViewD, IxDyn};

use crate::error::{Error, Result};
use crate::graph::{Buf, Recording};
use crate::kernels::boundary::Boundary;
use crate::kernels::footprint_extreme;

/// The taps of a footprint: one offset per axis and one weight each.
#[derive(Clone, Debug, PartialEq)]
pub struct Footprint {
    pub offsets: Vec<Vec<i64>>,
    /// The structure's values (f64: sent in the data's type).
    pub weights: Vec<f64>,
}

/// scipy's origin check for a footprint of `shape`: one origin per axis within
/// −(m/2) ..= (m − 1)/2.
pub fn check_origin(shape: &[usize], origin: &[i64]) -> Result<Vec<i64>> {
    let origin = super::per_axis(if origin.is_empty() { &[0] } else { origin }, shape.len(), "origin")?;
    for (&m, &o) in shape.iter().zip(&origin) {
        let m = m as i64;
        if o < -(m / 2) || o > (m - 1) / 2 {
            return Err(Error::Invalid(format!("invalid origin {o} for a footprint of length {m} (from {} to {})", -(m / 2), (m - 1) / 2)));
        }
    }
    Ok(origin)
}

impl Footprint {
    /// The taps of `footprint` (true: in; the input's rank) with weights `structure` (its shape;
    /// None: flat), scipy's centring with `origin` (empty: zeros).
    pub fn new(footprint: &ArrayViewD<bool>, structure: Option<&ArrayViewD<f64>>, origin: &[i64]) -> Result<Footprint> {
        if footprint.is_empty() || footprint.ndim() == 0 {
            return Err(Error::Shape(format!("a footprint of shape {:?}: at least one element and one axis", footprint.shape())));
        }
        if let Some(s) = structure {
            if s.shape() != footprint.shape() {
                return Err(Error::Shape(format!("a structure of shape {:?} for a footprint of {:?}", s.shape(), footprint.shape())));
            }
            crate::check::check_finite(s, "the structure")?;
        }
        let origin = check_origin(footprint.shape(), origin)?;
        let centre: Vec<i64> = footprint.shape().iter().zip(&origin).map(|(&m, &o)| (m / 2) as i64 + o).collect();
        let mut f = Footprint { offsets: Vec::new(), weights: Vec::new() };
        for (j, &inside) in footprint.indexed_iter() {
            if inside {
                f.offsets.push((0..footprint.ndim()).map(|a| j[a] as i64 - centre[a]).collect());
                f.weights.push(structure.map_or(0.0, |s| s[&j]));
            }
        }
        if f.offsets.is_empty() {
            return Err(Error::Invalid("the footprint selects no element (scipy: 'All-zero footprint is not supported.')".into()));
        }
        Ok(f)
    }

    /// scipy's dilation of `footprint` (and `structure`) at `origin`: both reflected along every
    /// axis, the origin negated and one less along an even axis.
    pub fn reflected(footprint: &ArrayViewD<bool>, structure: Option<&ArrayViewD<f64>>, origin: &[i64]) -> Result<Footprint> {
        let origin = check_origin(footprint.shape(), origin)?;
        let flip = |a: &ArrayViewD<bool>| {
            let mut v = a.to_owned();
            (0..v.ndim()).for_each(|k| v.invert_axis(ndarray::Axis(k)));
            v
        };
        let footprint = flip(footprint);
        let structure = structure.map(|s| {
            let mut v = s.to_owned();
            (0..v.ndim()).for_each(|k| v.invert_axis(ndarray::Axis(k)));
            v
        });
        let origin: Vec<i64> = origin.iter().zip(footprint.shape()).map(|(&o, &m)| -o - i64::from(m % 2 == 0)).collect();
        let structure = structure.as_ref().map(|s| s.view());
        Footprint::new(&footprint.view(), structure.as_ref(), &origin)
    }

    /// The same taps with every weight negated (grey erosion subtracts the structure).
    pub fn negated(mut self) -> Footprint {
        self.weights.iter_mut().for_each(|w| *w = -*w);
        self
    }
}

/// The minimum (or maximum) over the footprint, recorded.
pub fn record_extreme(rec: &mut Recording, x: Buf, f: &Footprint, maximum: bool, boundary: Boundary) -> Result<Buf> {
    if f.offsets.first().is_some_and(|o| o.len() != rec.dims(x).len()) {
        return Err(Error::Shape(format!("a footprint of {} axes for an array of {:?}: give it the input's rank", f.offsets[0].len(), rec.dims(x))));
    }
    boundary.check()?;
    // A flat box beyond 3³: one pass per axis by blocks (van Herk / Gil-Werman), as scipy runs
    // boxes separably; smaller footprints read every tap (fewer passes over memory).
    if let Some(windows) = box_windows(f).filter(|_| f.offsets.len() > 27) {
        let mut y = x;
        for (axis, &(k, lo)) in windows.iter().enumerate() {
            if k > 1 || lo != 0 {
                y = crate::kernels::box_extreme::record(rec, y, axis, k, lo, maximum, boundary)?;
            }
        }
        return Ok(y);
    }
    footprint_extreme::record(rec, x, &f.offsets, &f.weights, maximum, boundary)
}

/// The footprint as a box, (length, start offset) per axis, when it is one: as many taps as its
/// bounding box holds (the taps of a footprint are distinct: its true elements) and no weights
/// (a flat footprint).
fn box_windows(f: &Footprint) -> Option<Vec<(usize, i64)>> {
    let d = f.offsets.first()?.len();
    if f.weights.iter().any(|&w| w != 0.0) {
        return None;
    }
    let lo: Vec<i64> = (0..d).map(|a| f.offsets.iter().map(|o| o[a]).min().unwrap_or(0)).collect();
    let hi: Vec<i64> = (0..d).map(|a| f.offsets.iter().map(|o| o[a]).max().unwrap_or(0)).collect();
    let lens: Vec<usize> = (0..d).map(|a| (hi[a] - lo[a] + 1) as usize).collect();
    (lens.iter().product::<usize>() == f.offsets.len()).then(|| lens.into_iter().zip(lo).collect())
}

/// The `rank`-th smallest over the footprint (scipy's rank_filter; the weights are not used),
/// recorded.
pub fn record_rank(rec: &mut Recording, x: Buf, f: &Footprint, rank: usize, boundary: Boundary) -> Result<Buf> {
    if f.offsets.first().is_some_and(|o| o.len() != rec.dims(x).len()) {
        return Err(Error::Shape(format!("a footprint of {} axes for an array of {:?}: give it the input's rank", f.offsets[0].len(), rec.dims(x))));
    }
    boundary.check()?;
    crate::kernels::footprint_rank::record(rec, x, &f.offsets, rank, boundary)
}

/// scipy's rank rule: a negative rank counts from the end; the result within the footprint's
/// taps.
pub fn rank_within(rank: i64, taps: usize) -> Result<usize> {
    let r = if rank < 0 { rank + taps as i64 } else { rank };
    if r < 0 || r >= taps as i64 {
        return Err(Error::Invalid(format!("rank {rank} not within the footprint's {taps} elements (scipy: 'rank not within filter footprint size')")));
    }
    Ok(r as usize)
}

/// The f64 reference of [`record_rank`].
pub fn rank_reference(x: &ArrayD<f64>, f: &Footprint, rank: usize, boundary: Boundary) -> ArrayD<f64> {
    let dims = x.shape().to_vec();
    ArrayD::from_shape_fn(IxDyn(&dims), |i| {
        let mut v: Vec<f64> = f
            .offsets
            .iter()
            .map(|o| {
                let at: Option<Vec<usize>> = (0..dims.len()).map(|a| boundary.fold(i[a] as i64 + o[a], dims[a] as i64).map(|j| j as usize)).collect();
                at.map_or(boundary.cval() as f64, |at| x[IxDyn(&at)])
            })
            .collect();
        v.sort_by(f64::total_cmp);
        v[rank]
    })
}

/// The f64 reference of [`record_extreme`].
pub fn extreme_reference(x: &ArrayD<f64>, f: &Footprint, maximum: bool, boundary: Boundary) -> ArrayD<f64> {
    let dims = x.shape().to_vec();
    ArrayD::from_shape_fn(IxDyn(&dims), |i| {
        let mut best = if maximum { f64::NEG_INFINITY } else { f64::INFINITY };
        for (o, &w) in f.offsets.iter().zip(&f.weights) {
            let mut at = vec![0usize; dims.len()];
            let mut outside = false;
            for a in 0..dims.len() {
                match boundary.fold(i[a] as i64 + o[a], dims[a] as i64) {
                    Some(j) => at[a] = j as usize,
                    None => outside = true,
                }
            }
            let v = if outside { boundary.cval() as f64 } else { x[IxDyn(&at)] } + w;
            best = if maximum { best.max(v) } else { best.min(v) };
        }
        best
    })
}

/// Squared distances beyond any finite one: what the exact distance transform leaves where no
/// zero element is reachable (an input without zeros).
pub use crate::kernels::edt_axis::FAR as EDT_FAR;

/// scipy.ndimage.distance_transform_edt's squared distances, recorded: one Felzenszwalb-
/// Huttenlocher pass per axis (the first reading the input: 0 at its zeros), `sampling` one
/// spacing per axis, finite and positive.
pub fn record_squared_distances(rec: &mut Recording, x: Buf, sampling: &[f64]) -> Result<Buf> {
    Ok(distance_passes(rec, x, sampling, false)?.0)
}

/// [`record_squared_distances`] with the feature transform (scipy's `return_indices`): also the
/// linear index (u32, row-major) of each element's nearest zero.
pub fn record_feature_transform(rec: &mut Recording, x: Buf, sampling: &[f64]) -> Result<(Buf, Buf)> {
    let (d, near) = distance_passes(rec, x, sampling, true)?;
    Ok((d, near.expect("asked for")))
}

fn distance_passes(rec: &mut Recording, x: Buf, sampling: &[f64], features: bool) -> Result<(Buf, Option<Buf>)> {
    let d = rec.dims(x).len();
    let sampling = super::per_axis(if sampling.is_empty() { &[1.0] } else { sampling }, d, "sampling")?;
    if let Some(w) = sampling.iter().find(|w| !(w.is_finite() && **w > 0.0)) {
        return Err(Error::Invalid(format!("distance_transform_edt: sampling must be finite and positive, got {w}")));
    }
    // (distances, nearest zeros) after the pass along input axis `a`, at `along` of the array.
    let pass = |rec: &mut Recording, (f, near): (Buf, Option<Buf>), a: usize, along: usize| -> Result<(Buf, Option<Buf>)> {
        let w2 = sampling[a] * sampling[a];
        if features {
            let (f, near) = crate::kernels::edt_axis::record_features(rec, f, near, along, w2)?;
            Ok((f, Some(near)))
        } else {
            Ok((crate::kernels::edt_axis::record(rec, f, along, w2, a == 0)?, None))
        }
    };
    if d == 1 {
        return pass(rec, (x, None), 0, 0);
    }
    // One thread walks each line, so neighbouring threads read neighbouring memory only along
    // axes other than the last: those pass in place, the last with the last two axes swapped
    // (the passes commute; the first reads the input; indices are of the input's layout).
    let f = (0..d - 1).try_fold((x, None), |f, a| pass(rec, f, a, a))?;
    let mut swap: Vec<usize> = (0..d).collect();
    swap.swap(d - 2, d - 1);
    let permute = |rec: &mut Recording, b: Option<Buf>| b.map(|b| crate::ops::layout::permute(rec, b, &swap)).transpose();
    let t = (crate::ops::layout::permute(rec, f.0, &swap)?, permute(rec, f.1)?);
    let t = pass(rec, t, d - 1, d - 2)?;
    Ok((crate::ops::layout::permute(rec, t.0, &swap)?, permute(rec, t.1)?))
}

/// scipy.ndimage.generate_binary_structure(rank, connectivity): the elements within
/// `connectivity` steps (city-block) of the centre of a 3^rank cube.
pub fn generate_binary_structure(rank: usize, connectivity: usize) -> Result<ArrayD<bool>> {
    if !(1..=4).contains(&rank) {
        return Err(Error::Invalid(format!("generate_binary_structure: rank {rank} (1 to 4 axes here)")));
    }
    Ok(ArrayD::from_shape_fn(IxDyn(&vec![3; rank]), |i| (0..rank).map(|a| i[a].abs_diff(1)).sum::<usize>() <= connectivity.max(1)))
}

/// scipy.ndimage.label(input, structure): connected components of the non-zero elements, the
/// neighbours those `structure` (3 along every axis, symmetric; true at the centre) marks,
/// numbered 1.. in raster order of each component's first element (as scipy numbers them), 0 for
/// the background; and their count. On the device by label equivalence (kernels::label), the
/// numbering on the host.
pub fn label(gpu: &crate::gpu::Gpu, input: &ArrayViewD<bool>, structure: &ArrayViewD<bool>) -> Result<(ArrayD<u32>, usize)> {
    let t = std::time::Instant::now();
    check_label_structure(input, structure)?;
    let d = input.ndim();
    let dims = input.shape().to_vec();
    let lead = 4 - d;
    let offsets: Vec<f32> = structure
        .indexed_iter()
        .filter(|(j, &on)| on && (0..d).any(|a| j[a] != 1))
        .flat_map(|(j, _)| (0..4).map(move |a| if a < lead { 0.0 } else { j[a - lead] as f32 - 1.0 }))
        .collect();
    let mut rec = Recording::new(gpu);
    let x = rec.upload_mask(input)?;
    let labels = rec.temp(&[input.len()], crate::gpu::Dtype::U32)?;
    let changed = rec.temp(&[1], crate::gpu::Dtype::U32)?;
    // At least one tap (a structure of the centre alone: no neighbours) so the buffer exists.
    let taps = if offsets.is_empty() { vec![0.0; 4] } else { offsets.clone() };
    let off = rec.upload_f32(&ArrayD::from_shape_vec(IxDyn(&[taps.len()]), taps).expect("4 per tap").view())?;
    crate::kernels::label::record(&mut rec, crate::kernels::label::Stage::Init, x, &dims, labels, changed, off)?;
    let (x, labels, changed, off) = (rec.output(x), rec.output(labels), rec.output(changed), rec.output(off));
    let results = rec.compile()?.run(gpu)?;
    let (x, labels, changed, off) = (results.array(x), results.array(labels), results.array(changed), results.array(off));
    if !offsets.is_empty() {
        // Rounds of hooks and compressions until one changes nothing (labels only decrease:
        // bounded by the element count).
        let mut rec = Recording::new(gpu);
        let (xb, lb, cb, ob) = (rec.input(&x), rec.input(&labels), rec.input(&changed), rec.input(&off));
        crate::kernels::fill::record(&mut rec, cb, 0.0);
        for _ in 0..4 {
            crate::kernels::label::record(&mut rec, crate::kernels::label::Stage::Hook, xb, &dims, lb, cb, ob)?;
            crate::kernels::label::record(&mut rec, crate::kernels::label::Stage::Compress, xb, &dims, lb, cb, ob)?;
        }
        let round = rec.compile()?;
        for _ in 0..=input.len() {
            round.run(gpu)?;
            crate::gpu::trace("label: round", t);
            if changed.download_u32(gpu)?.iter().all(|&c| c == 0) {
                break;
            }
        }
    }
    let count = crate::kernels::label_number::number(gpu, &labels)?;
    crate::gpu::trace("label: numbered", t);
    let numbers = labels.download_u32(gpu)?;
    crate::gpu::trace("label: downloaded", t);
    Ok((numbers.into_shape_with_order(IxDyn(input.shape())).expect("the input's size"), count))
}

/// The f64 reference of scipy.ndimage.distance_transform_edt (the distance of each non-zero
/// element to the nearest zero, axes scaled by `sampling`: one value or one per axis):
/// Felzenszwalb and Huttenlocher's lower envelope of parabolas along each axis in turn, as the
/// GPU path, on the host.
pub fn distance_reference(input: &ArrayViewD<f64>, sampling: &[f64]) -> Result<ArrayD<f64>> {
    let d = input.ndim();
    crate::gpu::Shape::new(input.shape())?;
    let w = super::super::per_axis(if sampling.is_empty() { &[1.0] } else { sampling }, d, "sampling")?;
    if let Some(&bad) = w.iter().find(|&&w| !(w.is_finite() && w > 0.0)) {
        return Err(Error::Invalid(format!("distance_transform_edt: sampling must be finite and positive, got {bad}")));
    }
    if input.iter().all(|&v| v != 0.0) {
        return Err(Error::Invalid("distance_transform_edt: the input has no zero element (every distance would be infinite)".into()));
    }
    let mut f = input.mapv(|v| if v == 0.0 { 0.0 } else { f64::INFINITY });
    for (a, &wa) in w.iter().enumerate() {
        for mut line in f.lanes_mut(ndarray::Axis(a)) {
            let g: Vec<f64> = line.iter().copied().collect();
            for (q, v) in envelope(&g, wa * wa).into_iter().enumerate() {
                line[q] = v;
            }
        }
    }
    Ok(f.mapv(f64::sqrt))
}

/// min over p of w2 (q − p)² + g(p) for every q (infinite g: no parabola).
fn envelope(g: &[f64], w2: f64) -> Vec<f64> {
    let n = g.len();
    let (mut v, mut z) = (Vec::with_capacity(n), Vec::with_capacity(n + 1));
    for (q, &gq) in g.iter().enumerate() {
        if !gq.is_finite() {
            continue;
        }
        let meet = |p: usize| ((gq + w2 * (q * q) as f64) - (g[p] + w2 * (p * p) as f64)) / (2.0 * w2 * (q as f64 - p as f64));
        while let Some(&p) = v.last() {
            if meet(p) <= *z.last().unwrap() {
                v.pop();
                z.pop();
            } else {
                break;
            }
        }
        z.push(v.last().map_or(f64::NEG_INFINITY, |&p| meet(p)));
        v.push(q);
    }
    if v.is_empty() {
        return vec![f64::INFINITY; n];
    }
    let mut k = 0;
    (0..n)
        .map(|q| {
            while k + 1 < v.len() && z[k + 1] < q as f64 {
                k += 1;
            }
            w2 * (q as f64 - v[k] as f64).powi(2) + g[v[k]]
        })
        .collect()
}

/// scipy's rules for label's input and structure: 1-4 axes; the structure 3 along each of the
/// input's axes and symmetric.
fn check_label_structure(input: &ArrayViewD<bool>, structure: &ArrayViewD<bool>) -> Result<()> {
    let d = input.ndim();
    if structure.ndim() != d || structure.shape().iter().any(|&m| m != 3) {
        return Err(Error::Shape(format!(
            "structure of shape {:?} for a {d}-axis input: each axis of length 3 (scipy: 'structure dimensions must be equal to 3')",
            structure.shape()
        )));
    }
    let flat: Vec<bool> = structure.iter().copied().collect();
    if flat.iter().zip(flat.iter().rev()).any(|(a, b)| a != b) {
        return Err(Error::Invalid("Structuring element must be symmetric (scipy's rule)".into()));
    }
    crate::gpu::Shape::new(input.shape()).map(|_| ())
}

/// The reference of [`label`] (its checks too): flood fill from each unlabelled element in
/// raster order, which numbers components as scipy does.
pub fn label_reference(input: &ArrayViewD<bool>, structure: &ArrayViewD<bool>) -> Result<(ArrayD<u32>, usize)> {
    check_label_structure(input, structure)?;
    let d = input.ndim();
    let dims = input.shape().to_vec();
    let steps: Vec<Vec<i64>> =
        structure.indexed_iter().filter(|(j, &on)| on && (0..d).any(|a| j[a] != 1)).map(|(j, _)| (0..d).map(|a| j[a] as i64 - 1).collect()).collect();
    let mut out = ArrayD::<u32>::zeros(IxDyn(&dims));
    let mut count = 0u32;
    for (start, &v) in input.indexed_iter() {
        if !v || out[&start] != 0 {
            continue;
        }
        count += 1;
        let start = ndarray::Dimension::slice(&start).to_vec();
        out[IxDyn(&start)] = count;
        let mut stack = vec![start];
        while let Some(p) = stack.pop() {
            for s in &steps {
                let q: Vec<i64> = (0..d).map(|a| p[a] as i64 + s[a]).collect();
                if (0..d).any(|a| q[a] < 0 || q[a] >= dims[a] as i64) {
                    continue;
                }
                let q: Vec<usize> = q.iter().map(|&v| v as usize).collect();
                if input[IxDyn(&q)] && out[IxDyn(&q)] == 0 {
                    out[IxDyn(&q)] = count;
                    stack.push(q);
                }
            }
        }
    }
    Ok((out, count as usize))
}
