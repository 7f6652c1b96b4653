//! Stripe-wise registration of AO-OCT volumes distorted by eye motion (N. Do, "Parallel
//! processing for AO-OCT image registration using GPU", 2016, chapters 7-8; Kurokawa et al.,
//! JBO 2021). Volumes are (slow, depth, fast): B-scans along the slow axis, each imaged fast
//! enough to move as one, the whole volume slowly enough for the eye to drift, tremble and jump.
//!
//! 1. Coarse: stripes of `stripe` B-scans, one every `coarse_step`, each phase-correlated in 3D
//!    (placed at its own rows of an otherwise zero volume) against the whole reference.
//! 2. The coarse shifts cleaned ([`clean`]), then every B-scan's position along the slow axis
//!    predicted by linear interpolation between the stripes.
//! 3. Fine: each B-scan phase-correlated (placed in the middle of a zero sub-volume) against
//!    the reference sub-volume of `window` B-scans, one starting every `window_step`, nearest its
//!    predicted position; each sub-volume's spectrum is computed once for all its B-scans. The
//!    peak is refined below a voxel by a parabola through its neighbours along each axis.
//! 4. The per-B-scan shifts cleaned the same way.
//!
//! Shifts are in array axis order (slow, depth, fast) and register the moving B-scan onto the
//! reference: B-scan j shows the reference at (j + dy, z + dz, x + dx).

use std::collections::BTreeMap;
use std::time::Instant;

use ndarray::{s, Array3, ArrayD, ArrayView3};
use num_complex::Complex64;

use super::{forward, parabola, record_phase_correlation, Normalization};
use crate::error::{Error, Result};
use crate::fft::{cpu as fft_cpu, Norm};
use crate::gpu::{Dtype, Gpu, GpuArray};
use crate::graph::{Buf, Recording};
use crate::host::ms_since;
use crate::kernels::boundary::Boundary;
use crate::kernels::{affine_sample, copy_range, fill, peak_neighbours};
use crate::ops::interpolate::{cpu as interpolate_cpu, spline_filter1d, Sampling, SplineMode};
use crate::ops::layout;
use crate::ops::reduce::cpu::median;
use crate::placement::Progress;

/// The stages' sizes and the cleaning's thresholds.
#[derive(Clone, Debug, PartialEq)]
pub struct StripeRegistration {
    /// B-scans per coarse stripe.
    pub stripe: usize,
    /// A coarse stripe every this many B-scans.
    pub coarse_step: usize,
    /// B-scans in each reference sub-volume of the fine stage (at most the volume's).
    pub window: usize,
    /// A sub-volume starts every this many B-scans.
    pub window_step: usize,
    /// Neighbours (odd count, itself included) whose median a shift is compared with.
    pub median: usize,
    /// A B-scan's shift further than this from that median, along any axis, is a spike (voxels).
    pub spike: f64,
    /// The same for the coarse stripes, further apart (a wrong one would send the B-scans
    /// near it to a sub-volume that cannot reach their position: a quarter window by default).
    pub coarse_spike: f64,
    /// A peak below this fraction of the median peak is no measurement.
    pub min_peak: f64,
}

impl Default for StripeRegistration {
    fn default() -> StripeRegistration {
        StripeRegistration { stripe: 3, coarse_step: 16, window: 32, window_step: 16, median: 5, spike: 2.0, coarse_spike: 8.0, min_peak: 0.3 }
    }
}

impl StripeRegistration {
    fn check(&self) -> Result<()> {
        let sizes =
            [("stripe", self.stripe), ("coarse step", self.coarse_step), ("window", self.window), ("window step", self.window_step), ("median", self.median)];
        if let Some((name, _)) = sizes.iter().find(|(_, v)| *v == 0) {
            return Err(Error::Invalid(format!("the {name} must be at least 1")));
        }
        if self.median.is_multiple_of(2) {
            return Err(Error::Invalid(format!("the median's width {} must be odd", self.median)));
        }
        for (name, v) in [("spike threshold", self.spike), ("coarse spike threshold", self.coarse_spike)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(Error::Invalid(format!("the {name} {v} (more than 0 voxels)")));
            }
        }
        if !(self.min_peak.is_finite() && (0.0..1.0).contains(&self.min_peak)) {
            return Err(Error::Invalid(format!("the minimum peak {} (a fraction in [0, 1))", self.min_peak)));
        }
        Ok(())
    }
}

/// How a B-scan's (or stripe's) shift was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Measured and consistent with its neighbours.
    Ok,
    /// Measured, but far from its neighbours: replaced by interpolation.
    Spike,
    /// Its peak was too weak to count: interpolated (or extrapolated at the ends).
    Interpolated,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Spike => "spike",
            Status::Interpolated => "interpolated",
        }
    }
}

/// One B-scan's (or a stripe's centre B-scan's) registering shift.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct BscanShift {
    pub bscan: usize,
    /// (slow, depth, fast), voxels.
    pub shift: [f64; 3],
    /// The phase correlation's peak height (as measured, also where the shift was replaced).
    pub peak: f64,
    pub status: Status,
}

/// What [`register_volume`] found and how long each stage took (ms).
#[derive(Clone, Debug, serde::Serialize)]
pub struct VolumeRegistration {
    pub bscans: Vec<BscanShift>,
    /// The coarse stage's stripes, by centre B-scan.
    pub stripes: Vec<BscanShift>,
    pub upload_ms: f64,
    pub coarse_ms: f64,
    pub fine_ms: f64,
}

/// A correlation peak: its whole-voxel position's shift refined by parabolas, and its height.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Peak {
    shift: [f64; 3],
    peak: f64,
}

/// The peak of a map of `dims` from [`peak_neighbours`]' values: the flat index, |peak|, then
/// each axis' lower and upper neighbour.
fn peak_of(dims: &[usize], slots: &[f64]) -> Peak {
    let (flat, centre) = (slots[0] as usize, slots[1]);
    let at = super::unravel(flat.min(dims.iter().product::<usize>() - 1), dims);
    let mut shift = [0.0; 3];
    for a in 0..3 {
        let n = dims[a];
        let whole = if at[a] > n / 2 { at[a] as f64 - n as f64 } else { at[a] as f64 };
        let (lo, hi) = (slots[2 + 2 * a], slots[3 + 2 * a]);
        shift[a] = whole + if n >= 3 { parabola(lo, centre, hi) } else { 0.0 };
    }
    Peak { shift, peak: centre }
}

/// The rows of the stripe centred on B-scan `centre`, inside a volume of `slow` B-scans.
fn stripe_rows(centre: usize, stripe: usize, slow: usize) -> (usize, usize) {
    let len = stripe.min(slow);
    (centre.saturating_sub(stripe / 2).min(slow - len), len)
}

/// The coarse stripes' centre B-scans: one every `coarse_step`, the first half a step in.
fn stripe_centres(slow: usize, how: &StripeRegistration) -> Vec<usize> {
    let centres: Vec<usize> = (how.coarse_step / 2..slow).step_by(how.coarse_step).collect();
    if centres.is_empty() {
        vec![slow / 2]
    } else {
        centres
    }
}

/// How the stages measure a correlation peak: on the GPU, or in f64 on the CPU.
trait Measure {
    /// Each stripe's rows (start, count) of the moving volume, kept at its own rows of a zero
    /// volume, against the whole reference.
    fn stripes(&mut self, rows: &[(usize, usize)]) -> Result<Vec<Peak>>;
    /// Each of `bscans` (B-scan, row), alone at its row of a zero sub-volume of `window` rows,
    /// against the reference's rows start .. start + window.
    fn window(&mut self, start: usize, window: usize, bscans: &[(usize, usize)]) -> Result<Vec<Peak>>;
}

/// The stages over one measurer, for a volume of `slow` B-scans.
fn register_with(
    measure: &mut impl Measure,
    slow: usize,
    how: &StripeRegistration,
    progress: &mut dyn FnMut(Progress),
) -> Result<(Vec<BscanShift>, Vec<BscanShift>, f64, f64)> {
    let window = how.window.min(slow);
    let t = Instant::now();
    let centres = stripe_centres(slow, how);
    let rows: Vec<(usize, usize)> = centres.iter().map(|&c| stripe_rows(c, how.stripe, slow)).collect();
    let stripes = clean(&centres, &measure.stripes(&rows)?, how.coarse_spike, how)?;
    let coarse_ms = ms_since(t);

    let t = Instant::now();
    // Each B-scan sits at its predicted row of its window, so the shift left to measure is
    // small: a circular correlation cannot tell a shift of window / 2 from one of −window / 2
    // (a B-scan at the volume's first row, centred in a window clamped to start at 0, was one).
    let mut groups: BTreeMap<usize, Vec<(usize, usize)>> = BTreeMap::new();
    let coarse: Vec<(f64, [f64; 3])> = stripes.iter().map(|b| (b.bscan as f64, b.shift)).collect();
    for j in 0..slow {
        let predicted = j as f64 + linear(&coarse, j as f64, 0);
        let nearest = ((predicted - (window / 2) as f64) / how.window_step as f64).round().max(0.0) as usize * how.window_step;
        let start = nearest.min(slow - window);
        let row = (predicted.round() - start as f64).clamp(0.0, (window - 1) as f64) as usize;
        groups.entry(start).or_default().push((j, row));
    }
    let mut measured = vec![Peak { shift: [0.0; 3], peak: f64::NAN }; slow];
    let mut done = 0;
    for (&start, bscans) in &groups {
        done += bscans.len();
        progress(Progress::new("B-scans", done, slow));
        for (&(j, row), peak) in bscans.iter().zip(measure.window(start, window, bscans)?) {
            let dy = (start + row) as f64 + peak.shift[0] - j as f64;
            measured[j] = Peak { shift: [dy, peak.shift[1], peak.shift[2]], peak: peak.peak };
        }
    }
    let all: Vec<usize> = (0..slow).collect();
    let bscans = clean(&all, &measured, how.spike, how)?;
    Ok((bscans, stripes, coarse_ms, ms_since(t)))
}

/// Shifts measured at B-scans `at` (ascending), cleaned: a peak below `min_peak` of the median
/// peak (or not finite) is no measurement; a measured shift further than `spike` from the
/// median of the measured shifts among its `median` nearest (itself included; the window kept
/// whole at the ends) along any axis is a spike (found worst first, each time without those
/// found before); both are
/// replaced by linear interpolation between the nearest good shifts (the nearest one's value
/// beyond the ends). A median keeps a micro-saccade's step, which a mean would smear.
fn clean(at: &[usize], measured: &[Peak], spike: f64, how: &StripeRegistration) -> Result<Vec<BscanShift>> {
    let mut peaks: Vec<f64> = measured.iter().map(|p| p.peak).filter(|p| p.is_finite()).collect();
    let floor = how.min_peak * median(&mut peaks);
    let mut out: Vec<BscanShift> = at
        .iter()
        .zip(measured)
        .map(|(&bscan, p)| {
            let good = p.peak.is_finite() && p.peak > 0.0 && p.peak >= floor && p.shift.iter().all(|s| s.is_finite());
            BscanShift { bscan, shift: p.shift, peak: p.peak, status: if good { Status::Ok } else { Status::Interpolated } }
        })
        .collect();
    // The worst spike first, then again without it, so one wild value cannot make its
    // neighbours look like spikes.
    let width = how.median.min(out.len());
    loop {
        let deviation = |i: usize| {
            let first = i.saturating_sub(width / 2).min(out.len() - width);
            let near: Vec<&BscanShift> = out[first..first + width].iter().filter(|b| b.status == Status::Ok).collect();
            (0..3).map(|a| (out[i].shift[a] - median(&mut near.iter().map(|b| b.shift[a]).collect::<Vec<_>>())).abs()).fold(0.0, f64::max)
        };
        let worst = (0..out.len()).filter(|&i| out[i].status == Status::Ok).map(|i| (i, deviation(i))).max_by(|a, b| a.1.total_cmp(&b.1));
        match worst {
            Some((i, d)) if d > spike => out[i].status = Status::Spike,
            _ => break,
        }
    }
    let good: Vec<(f64, [f64; 3])> = out.iter().filter(|b| b.status == Status::Ok).map(|b| (b.bscan as f64, b.shift)).collect();
    if good.is_empty() {
        return Err(Error::Invalid("no B-scan could be registered: every correlation peak is weak (are the volumes of one retina, and not flat?)".into()));
    }
    for b in out.iter_mut().filter(|b| b.status != Status::Ok) {
        b.shift = std::array::from_fn(|a| linear(&good, b.bscan as f64, a));
    }
    Ok(out)
}

/// Piecewise-linear interpolation of axis `axis` of `points` (ascending positions) at `x`.
fn linear(points: &[(f64, [f64; 3])], x: f64, axis: usize) -> f64 {
    let after = points.partition_point(|p| p.0 <= x);
    match (after.checked_sub(1).map(|i| points[i]), points.get(after)) {
        (Some(a), Some(b)) => a.1[axis] + (b.1[axis] - a.1[axis]) * (x - a.0) / (b.0 - a.0),
        (Some(a), None) => a.1[axis],
        (None, Some(b)) => b.1[axis],
        (None, None) => 0.0,
    }
}

/// Two volumes of one shape (slow, depth, fast), finite and not constant.
fn check_volumes(reference: &ArrayView3<f32>, moving: &ArrayView3<f32>) -> Result<()> {
    if reference.shape() != moving.shape() {
        return Err(Error::Shape(format!("the reference volume {:?} and the moving one {:?} differ", reference.shape(), moving.shape())));
    }
    for (x, what) in [(reference.view(), "the reference volume"), (moving.view(), "the moving volume")] {
        if x.is_empty() {
            return Err(Error::Empty(format!("{what} of shape {:?}", x.shape())));
        }
        crate::check::check_finite(&x.view().into_dyn(), what)?;
        let first = x[[0, 0, 0]];
        if x.iter().all(|&v| v == first) {
            return Err(Error::Invalid(format!("{what} is constant ({first}): there is nothing to register")));
        }
    }
    Ok(())
}

/// Registers every B-scan of `moving` onto `reference` (volumes of one shape: slow, depth,
/// fast) on the GPU.
pub fn register_volume(gpu: &Gpu, reference: &ArrayView3<f32>, moving: &ArrayView3<f32>, how: &StripeRegistration) -> Result<VolumeRegistration> {
    register_volume_with(gpu, reference, moving, how, &mut |_| {})
}

/// [`register_volume`], calling `progress` (stage "B-scans") as the fine stage registers B-scans.
pub fn register_volume_with(
    gpu: &Gpu,
    reference: &ArrayView3<f32>,
    moving: &ArrayView3<f32>,
    how: &StripeRegistration,
    progress: &mut dyn FnMut(Progress),
) -> Result<VolumeRegistration> {
    how.check()?;
    check_volumes(reference, moving)?;
    let t = Instant::now();
    let mut measure = GpuMeasure::new(gpu, reference, moving)?;
    let upload_ms = ms_since(t);
    let (bscans, stripes, coarse_ms, fine_ms) = register_with(&mut measure, reference.dim().0, how, progress)?;
    Ok(VolumeRegistration { bscans, stripes, upload_ms, coarse_ms, fine_ms })
}

/// [`register_volume_with`] with every correlation in f64 on the CPU: the reference.
pub fn register_volume_reference(
    reference: &ArrayView3<f32>,
    moving: &ArrayView3<f32>,
    how: &StripeRegistration,
    progress: &mut dyn FnMut(Progress),
) -> Result<VolumeRegistration> {
    how.check()?;
    check_volumes(reference, moving)?;
    let mut measure = CpuMeasure { reference: reference.mapv(f64::from), moving: moving.mapv(f64::from), spectrum: None };
    let (bscans, stripes, coarse_ms, fine_ms) = register_with(&mut measure, reference.dim().0, how, progress)?;
    Ok(VolumeRegistration { bscans, stripes, upload_ms: 0.0, coarse_ms, fine_ms })
}

/// Both volumes on the device; each stage's peaks gathered into one small array per submission.
struct GpuMeasure<'g> {
    gpu: &'g Gpu,
    reference: GpuArray,
    moving: GpuArray,
    dims: [usize; 3],
}

impl<'g> GpuMeasure<'g> {
    fn new(gpu: &'g Gpu, reference: &ArrayView3<f32>, moving: &ArrayView3<f32>) -> Result<GpuMeasure<'g>> {
        let upload = |x: &ArrayView3<f32>| GpuArray::upload_f32(gpu, &x.view().into_dyn());
        let (r, z, x) = reference.dim();
        Ok(GpuMeasure { gpu, reference: upload(reference)?, moving: upload(moving)?, dims: [r, z, x] })
    }

    /// Phase-correlates each of `movings` against `spectrum` and gathers their peaks.
    fn peaks(&self, mut rec: Recording<'g>, spectrum: Buf, movings: &[Buf]) -> Result<Vec<Peak>> {
        let slots = peak_neighbours::slots(3);
        let results = rec.temp(&[movings.len() * slots], Dtype::F32)?;
        let mut dims = Vec::new();
        for (k, &m) in movings.iter().enumerate() {
            dims = rec.dims(m).to_vec();
            let peak = record_phase_correlation(&mut rec, spectrum, m, &dims, Normalization::Phase, None)?;
            peak_neighbours::record_into(&mut rec, peak.map, peak.index, results, k * slots)?;
        }
        let results = rec.download(results);
        let values = rec.run()?.f32(results)?;
        let values: Vec<f32> = values.iter().copied().collect();
        Ok(values
            .chunks(slots)
            .map(|c| {
                // Slot 0 holds the index's bits.
                let mut v: Vec<f64> = c.iter().map(|&x| x as f64).collect();
                v[0] = c[0].to_bits() as f64;
                peak_of(&dims, &v)
            })
            .collect())
    }
}

impl Measure for GpuMeasure<'_> {
    fn stripes(&mut self, rows: &[(usize, usize)]) -> Result<Vec<Peak>> {
        let [slow, depth, width] = self.dims;
        let mut rec = Recording::new(self.gpu);
        let (r, m) = (rec.input(&self.reference), rec.input(&self.moving));
        let spectrum = forward(&mut rec, r)?;
        let mut movings = Vec::new();
        for &(start, len) in rows {
            let stripe = layout::crop(&mut rec, m, &[start, 0, 0], &[len, depth, width])?;
            movings.push(layout::pad(&mut rec, stripe, &[(start, slow - start - len), (0, 0), (0, 0)], Boundary::Constant(0.0))?);
        }
        self.peaks(rec, spectrum, &movings)
    }

    fn window(&mut self, start: usize, window: usize, bscans: &[(usize, usize)]) -> Result<Vec<Peak>> {
        let [_, depth, width] = self.dims;
        let mut rec = Recording::new(self.gpu);
        let (r, m) = (rec.input(&self.reference), rec.input(&self.moving));
        let sub = layout::crop(&mut rec, r, &[start, 0, 0], &[window, depth, width])?;
        let spectrum = forward(&mut rec, sub)?;
        let mut movings = Vec::new();
        for &(j, row) in bscans {
            let bscan = layout::crop(&mut rec, m, &[j, 0, 0], &[1, depth, width])?;
            movings.push(layout::pad(&mut rec, bscan, &[(row, window - row - 1), (0, 0), (0, 0)], Boundary::Constant(0.0))?);
        }
        self.peaks(rec, spectrum, &movings)
    }
}

/// The f64 reference: the same correlations on the CPU (the reference's spectrum kept).
struct CpuMeasure {
    reference: Array3<f64>,
    moving: Array3<f64>,
    spectrum: Option<ArrayD<Complex64>>,
}

/// The full spectrum of a real volume.
fn spectrum(x: &Array3<f64>) -> ArrayD<Complex64> {
    fft_cpu::c2c(&x.mapv(|v| Complex64::new(v, 0.0)).into_dyn(), &[0, 1, 2], false, Norm::Backward)
}

/// Phase correlation of a moving volume against a reference spectrum, as the GPU computes it
/// (the cross-power spectrum floored at 100 ε of f32; the first largest |map|).
fn correlate(reference: &ArrayD<Complex64>, moving: &Array3<f64>) -> Peak {
    let floor = 100.0 * f32::EPSILON as f64;
    let product = ndarray::Zip::from(reference).and(&spectrum(moving)).map_collect(|r, m| {
        let p = r * m.conj();
        p / p.norm().max(floor)
    });
    let map = fft_cpu::c2c(&product, &[0, 1, 2], true, Norm::Backward).mapv(|v| v.re);
    let flat = map.iter().enumerate().fold((0, f64::MIN), |best, (i, v)| if v.abs() > best.1 { (i, v.abs()) } else { best }).0;
    peak_of(map.shape(), &peak_neighbours::cpu(map.as_slice().expect("standard layout"), map.shape(), flat))
}

impl Measure for CpuMeasure {
    fn stripes(&mut self, rows: &[(usize, usize)]) -> Result<Vec<Peak>> {
        let reference = self.spectrum.get_or_insert_with(|| spectrum(&self.reference));
        Ok(rows
            .iter()
            .map(|&(start, len)| {
                let mut m = Array3::zeros(self.moving.dim());
                m.slice_mut(s![start..start + len, .., ..]).assign(&self.moving.slice(s![start..start + len, .., ..]));
                correlate(reference, &m)
            })
            .collect())
    }

    fn window(&mut self, start: usize, window: usize, bscans: &[(usize, usize)]) -> Result<Vec<Peak>> {
        let sub = spectrum(&self.reference.slice(s![start..start + window, .., ..]).to_owned());
        let (_, depth, width) = self.moving.dim();
        Ok(bscans
            .iter()
            .map(|&(j, row)| {
                let mut m = Array3::zeros((window, depth, width));
                m.slice_mut(s![row, .., ..]).assign(&self.moving.slice(s![j, .., ..]));
                correlate(&sub, &m)
            })
            .collect())
    }
}

/// The moving volume registered: reference row y is the B-scan whose position j + dy rounds to
/// y (the strongest peak among several; `Ok` ones first), shifted by (−dz, −dx) with the
/// spline of `order` (0-5; zero outside). Rows no B-scan lands on stay 0 and are
/// reported false in the second result.
pub fn apply(gpu: &Gpu, moving: &ArrayView3<f32>, shifts: &[BscanShift], order: u32) -> Result<(Array3<f32>, Vec<bool>)> {
    let sources = landing(moving, shifts, order)?;
    let (slow, depth, width) = moving.dim();
    let mut rec = Recording::new(gpu);
    let mut coefficients = rec.upload_f32(&moving.view().into_dyn())?;
    if order > 1 {
        for axis in [1, 2] {
            coefficients = spline_filter1d(&mut rec, coefficients, order, axis, SplineMode::Constant)?;
        }
    }
    let out = rec.temp(&[slow, depth, width], Dtype::F32)?;
    fill::record(&mut rec, out, 0.0);
    let identity = vec![vec![1.0, 0.0, 0.0], vec![0.0, 1.0, 0.0], vec![0.0, 0.0, 1.0]];
    for (y, source) in sources.iter().enumerate() {
        let Some(b) = source else { continue };
        let offset = [b.bscan as f64, -b.shift[1], -b.shift[2]];
        let row = affine_sample::record(&mut rec, coefficients, &identity, &offset, &[1, depth, width], &[0, order, order], SplineMode::Constant.code(), 0.0)?;
        copy_range::record(&mut rec, row, 0, out, y * depth * width, depth * width)?;
    }
    let d = rec.download(out);
    let volume = rec.run()?.f32(d)?.into_dimensionality::<ndarray::Ix3>().map_err(|e| Error::Shape(e.to_string()))?;
    Ok((volume, sources.iter().map(Option::is_some).collect()))
}

/// [`apply`] in f64 on the CPU (scipy's map_coordinates of each B-scan): the reference.
pub fn apply_reference(moving: &ArrayView3<f32>, shifts: &[BscanShift], order: u32) -> Result<(Array3<f32>, Vec<bool>)> {
    let sources = landing(moving, shifts, order)?;
    let (_, depth, width) = moving.dim();
    let how = Sampling { order, mode: SplineMode::Constant, ..Sampling::default() };
    let mut out = Array3::zeros(moving.dim());
    for (y, source) in sources.iter().enumerate() {
        let Some(b) = source else { continue };
        let bscan = moving.slice(s![b.bscan, .., ..]).mapv(f64::from).into_dyn();
        let coords = ArrayD::from_shape_fn(ndarray::IxDyn(&[2, depth, width]), |i| if i[0] == 0 { i[1] as f64 - b.shift[1] } else { i[2] as f64 - b.shift[2] });
        let row = interpolate_cpu::map_coordinates(&bscan, &coords, &how);
        out.slice_mut(s![y, .., ..]).assign(&row.mapv(|v| v as f32).into_dimensionality::<ndarray::Ix2>().map_err(|e| Error::Shape(e.to_string()))?);
    }
    Ok((out, sources.iter().map(Option::is_some).collect()))
}

/// For each reference row, the B-scan that lands there (see [`apply`]), once the arguments
/// are checked.
fn landing<'s>(moving: &ArrayView3<f32>, shifts: &'s [BscanShift], order: u32) -> Result<Vec<Option<&'s BscanShift>>> {
    let slow = moving.dim().0;
    if shifts.len() != slow {
        return Err(Error::Shape(format!("{} shifts for {slow} B-scans", shifts.len())));
    }
    crate::ops::interpolate::check_order(order)?;
    if shifts.iter().any(|b| b.shift.iter().any(|v| !v.is_finite()) || b.bscan >= slow) {
        return Err(Error::Invalid("a shift that is not finite, or of a B-scan beyond the volume".into()));
    }
    crate::check::check_finite(&moving.view().into_dyn(), "the moving volume")?;
    let mut rows: Vec<Option<&BscanShift>> = vec![None; slow];
    let rank = |b: &BscanShift| (b.status == Status::Ok, b.peak);
    for b in shifts {
        let y = (b.bscan as f64 + b.shift[0]).round();
        if (0.0..slow as f64).contains(&y) {
            let row = &mut rows[y as usize];
            if row.is_none_or(|held| rank(b).partial_cmp(&rank(held)) == Some(std::cmp::Ordering::Greater)) {
                *row = Some(b);
            }
        }
    }
    Ok(rows)
}

/// The average of registered volumes: per row, the mean over the volumes that cover it (0
/// where none does).
pub fn average(volumes: &[(Array3<f32>, Vec<bool>)]) -> Result<Array3<f32>> {
    let Some((first, _)) = volumes.first() else { return Err(Error::Empty("no volumes to average".into())) };
    let mut mean = Average::new(first.dim());
    for (v, covered) in volumes {
        mean.add(v, covered)?;
    }
    Ok(mean.finish())
}

/// [`average`] one registered volume at a time (a series need not be held at once).
pub struct Average {
    sum: Array3<f32>,
    count: Vec<u32>,
}

impl Average {
    pub fn new(dim: (usize, usize, usize)) -> Average {
        Average { sum: Array3::zeros(dim), count: vec![0; dim.0] }
    }

    /// Adds the rows of `volume` that `covered` marks.
    pub fn add(&mut self, volume: &Array3<f32>, covered: &[bool]) -> Result<()> {
        if volume.dim() != self.sum.dim() || covered.len() != self.count.len() {
            return Err(Error::Shape(format!("volumes of shapes {:?} and {:?} averaged", self.sum.dim(), volume.dim())));
        }
        for (y, _) in covered.iter().enumerate().filter(|(_, &c)| c) {
            self.count[y] += 1;
            let mut row = self.sum.slice_mut(s![y, .., ..]);
            row += &volume.slice(s![y, .., ..]);
        }
        Ok(())
    }

    /// Each row's mean over the volumes that covered it (0 where none did).
    pub fn finish(mut self) -> Array3<f32> {
        for (y, &c) in self.count.iter().enumerate().filter(|(_, &c)| c > 1) {
            self.sum.slice_mut(s![y, .., ..]).mapv_inplace(|v| v / c as f32);
        }
        self.sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(dy: &[f64], peaks: &[f64]) -> Vec<Peak> {
        dy.iter().zip(peaks).map(|(&d, &peak)| Peak { shift: [d, 0.0, -d], peak }).collect()
    }

    #[test]
    fn clean_keeps_steps_and_replaces_spikes_and_weak_peaks() {
        let how = StripeRegistration::default();
        let dy = [9.0, 0.0, 0.1, 0.0, 30.0, 0.2, 3.0, 6.0, 6.1, 6.0, 5.9, 6.0, -4.0];
        let mut peaks = vec![1.0; dy.len()];
        peaks[0] = 0.1; // too weak: extrapolated from B-scan 1
        peaks[12] = f64::NAN; // no measurement at the end: extrapolated from B-scan 11
        let at: Vec<usize> = (0..dy.len()).collect();
        let out = clean(&at, &measured(&dy, &peaks), how.spike, &how).unwrap();
        let status: Vec<Status> = out.iter().map(|b| b.status).collect();
        use Status::*;
        assert_eq!(status, [Interpolated, Ok, Ok, Ok, Spike, Ok, Ok, Ok, Ok, Ok, Ok, Ok, Interpolated]);
        // The spike lies between 0.0 and 0.2; the step 0.2 → 3 → 6 (a saccade) is kept.
        assert!((out[4].shift[0] - 0.1).abs() < 1e-12 && (out[4].shift[2] + 0.1).abs() < 1e-12);
        assert_eq!((out[0].shift[0], out[12].shift[0]), (0.0, 6.0));
        assert_eq!(out[6].shift[0], 3.0);
    }

    #[test]
    fn nothing_measured_is_an_error() {
        let how = StripeRegistration::default();
        assert!(clean(&[0, 1], &measured(&[1.0, 2.0], &[0.0, f64::NAN]), 2.0, &how).is_err());
    }

    #[test]
    fn stripes_cover_the_volume() {
        let how = StripeRegistration::default();
        assert_eq!(stripe_centres(64, &how), [8, 24, 40, 56]);
        assert_eq!(stripe_centres(5, &how), [2]);
        assert_eq!(stripe_rows(0, 3, 64), (0, 3));
        assert_eq!(stripe_rows(63, 3, 64), (61, 3));
        assert_eq!(stripe_rows(1, 3, 2), (0, 2));
    }
}
