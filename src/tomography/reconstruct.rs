//! The beamline pipeline: raw projections with flat and dark fields to a volume, every slice
//! reconstructed, in bands of detector rows streamed through the device: a reader thread fetches
//! band k + 1 (and averages its flats and darks) while the device works on band k, and the
//! caller's `write` takes each band of slices as it is done. Per band, one recording: outlier
//! replacement, normalisation and −log in sinogram order, stripe removal, FBP (the log-polar
//! method where it applies, or gridding), the slices packed to halves for a float16 volume;
//! compiled once per band shape (`BandPlan`), two of them alternating so that band k is
//! submitted before band k − 1 is read back. Phase retrieval needs whole projections: with it,
//! a first pass filters chunks of projections into host memory, which the bands then read.
//! [`ScanSource`] is where the rows come from (an HDF5 file in `io::hdf5`, arrays in
//! [`ArrayScan`]).

use std::ops::Range;

use ndarray::{Array2, Array3, Axis};

use super::{Filter, Geometry, Progress};
use crate::error::{Error, Result};
use crate::gpu::{Gpu, GpuArray};
use crate::graph::Recording;
pub use crate::host::{Precision, Slab};
use crate::kernels::prep_normalize::Raw;
use crate::ops::tomography::prep::{self};
pub use crate::ops::tomography::prep::{Normalize, Outliers, Paganin};

/// Detector values: 16-bit counts as stored (converted on the device), anything else as f32.
#[derive(Clone, Debug, PartialEq)]
pub enum Samples {
    U16(Array3<u16>),
    F32(Array3<f32>),
}

impl Samples {
    pub fn shape(&self) -> [usize; 3] {
        let s = match self {
            Samples::U16(a) => a.shape(),
            Samples::F32(a) => a.shape(),
        };
        [s[0], s[1], s[2]]
    }

    /// The values as f32 (exact for 16-bit counts).
    pub fn to_f32(&self) -> Array3<f32> {
        match self {
            Samples::U16(a) => a.mapv(f32::from),
            Samples::F32(a) => a.clone(),
        }
    }

    /// Rows `rows` of images `images`, copied (only those).
    pub fn window(&self, images: Range<usize>, rows: Range<usize>) -> Samples {
        let s = ndarray::s![images, rows, ..];
        match self {
            Samples::U16(a) => Samples::U16(a.slice(s).to_owned()),
            Samples::F32(a) => Samples::F32(a.slice(s).to_owned()),
        }
    }

    /// The mean over the images, in f64 (TomoPy averages flats and darks the same way).
    fn mean(&self) -> Array2<f64> {
        match self {
            Samples::U16(a) => a.mapv(f64::from).mean_axis(Axis(0)).expect("at least one image"),
            Samples::F32(a) => a.mapv(f64::from).mean_axis(Axis(0)).expect("at least one image"),
        }
    }

    fn check_finite(&self, what: &str) -> Result<()> {
        match self {
            Samples::U16(_) => Ok(()),
            Samples::F32(a) => crate::check::check_finite(&a.view().into_dyn(), what),
        }
    }

    /// Uploads the values as they are: 16-bit counts two to a word.
    fn upload(&self, gpu: &Gpu) -> Result<(GpuArray, bool)> {
        let (array, u16) = self.empty_like(gpu)?;
        self.write_into(gpu, &array)?;
        Ok((array, u16))
    }

    /// Gives the values' memory back for reuse (`host::recycle`).
    fn give_back(self) {
        match self {
            Samples::U16(a) => crate::host::recycle::give_back(a.into_raw_vec_and_offset().0),
            Samples::F32(a) => crate::host::recycle::give_back(a.into_raw_vec_and_offset().0),
        }
    }

    /// A device array that [`Samples::write_into`] fills with values of this shape and type.
    fn empty_like(&self, gpu: &Gpu) -> Result<(GpuArray, bool)> {
        let shape = self.shape();
        Ok(match self {
            Samples::U16(_) => (GpuArray::empty(gpu, &[crate::gpu::u16_words(shape.iter().product())], crate::gpu::Dtype::U32)?, true),
            Samples::F32(_) => (GpuArray::empty(gpu, &shape, crate::gpu::Dtype::F32)?, false),
        })
    }

    /// Overwrites `array` (from [`Samples::empty_like`]) with the values.
    fn write_into(&self, gpu: &Gpu, array: &GpuArray) -> Result<()> {
        match self {
            Samples::U16(a) => array.write_u16(gpu, a.as_standard_layout().as_slice().expect("standard layout")),
            Samples::F32(a) => array.write(gpu, bytemuck::cast_slice(a.as_standard_layout().as_slice().expect("standard layout"))),
        }
    }
}

/// A scan's three image sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// The projections (angles, rows, cols).
    Data,
    /// Flat (white) fields (count, rows, cols).
    Flat,
    /// Dark fields (count, rows, cols).
    Dark,
}

/// Where a scan's rows come from.
pub trait ScanSource: Sync {
    /// The projections' shape (angles, rows, cols).
    fn shape(&self) -> [usize; 3];
    /// How many images a part holds (0: none).
    fn count(&self, part: Part) -> usize;
    /// `part`'s images `images` (None: all), rows `rows`, every column.
    fn read(&self, part: Part, images: Option<Range<usize>>, rows: Range<usize>) -> Result<Samples>;
    /// The projection angles in degrees, when the scan records them.
    fn theta_degrees(&self) -> Option<Vec<f64>>;
}

/// A scan held in memory.
pub struct ArrayScan {
    pub data: Samples,
    pub flat: Option<Samples>,
    pub dark: Option<Samples>,
    pub theta_degrees: Option<Vec<f64>>,
}

impl ArrayScan {
    /// Checks that flats and darks have the projections' rows and columns.
    pub fn new(data: Samples, flat: Option<Samples>, dark: Option<Samples>, theta_degrees: Option<Vec<f64>>) -> Result<ArrayScan> {
        let [a, r, c] = data.shape();
        if a == 0 || r == 0 || c == 0 {
            return Err(Error::Shape(format!("projections of shape {:?}", [a, r, c])));
        }
        for (what, part) in [("flat fields", &flat), ("dark fields", &dark)] {
            if let Some(p) = part {
                let s = p.shape();
                if s[0] == 0 || s[1..] != [r, c] {
                    return Err(Error::Shape(format!("{what} of shape {s:?} for projections of {:?}", [a, r, c])));
                }
            }
        }
        if let Some(t) = &theta_degrees {
            if t.len() != a {
                return Err(Error::Shape(format!("{} angles for {a} projections", t.len())));
            }
        }
        Ok(ArrayScan { data, flat, dark, theta_degrees })
    }

    fn part(&self, part: Part) -> Option<&Samples> {
        match part {
            Part::Data => Some(&self.data),
            Part::Flat => self.flat.as_ref(),
            Part::Dark => self.dark.as_ref(),
        }
    }
}

impl ScanSource for ArrayScan {
    fn shape(&self) -> [usize; 3] {
        self.data.shape()
    }

    fn count(&self, part: Part) -> usize {
        self.part(part).map_or(0, |p| p.shape()[0])
    }

    fn read(&self, part: Part, images: Option<Range<usize>>, rows: Range<usize>) -> Result<Samples> {
        let p = self.part(part).ok_or_else(|| Error::Invalid(format!("the scan has no {part:?} images")))?;
        let [n, r, _] = p.shape();
        let images = images.unwrap_or(0..n);
        if images.end > n || rows.end > r || images.start > images.end || rows.start > rows.end {
            return Err(Error::Shape(format!("images {images:?}, rows {rows:?} of {:?}", p.shape())));
        }
        Ok(p.window(images, rows))
    }

    fn theta_degrees(&self) -> Option<Vec<f64>> {
        self.theta_degrees.clone()
    }
}

/// Ring (stripe) removal on the sinograms.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum Stripe {
    #[default]
    None,
    /// Vo et al.'s sorting-based method (`remove_stripe_based_sorting`): median `size` along
    /// the detector (`dim` 1) or size × size (`dim` 2).
    Sorting { size: usize, dim: usize },
    /// Vo et al.'s large-stripe method (`remove_large_stripe`): columns whose sorted values
    /// stand `snr` noise levels off their neighbours' (median `size` along the detector, the
    /// `drop_ratio` extremes left out) are replaced by the smoothed sorted values, every column
    /// first divided by its factor when `norm`.
    Large { snr: f64, size: usize, drop_ratio: f64, norm: bool },
    /// Münch et al.'s Fourier-wavelet method (`remove_stripe_fw`, db5): `level` levels (None:
    /// ⌈log2 max(angles, cols)⌉), damping width `sigma`, the angles padded by an eighth.
    Fw { level: Option<usize>, sigma: f64, pad: bool },
}

/// The rotation centre.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum Center {
    /// Found on the middle row's preprocessed sinogram by TomoPy's `find_center_vo` (Vo et
    /// al. 2014, its defaults; the f64 reference on the host).
    #[default]
    Auto,
    /// This detector coordinate.
    At(f64),
}

/// What [`reconstruct`] does besides FBP.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    pub outliers: Option<Outliers>,
    /// Transmission clipped above this (TomoPy's normalize `cutoff`).
    pub cutoff: Option<f32>,
    /// −log's floor: transmission below it counts as it.
    pub log_floor: f32,
    pub stripe: Stripe,
    pub paganin: Option<Paganin>,
    pub center: Center,
    pub filter: Filter,
    /// FBP's method: the log-polar one where it applies (`Auto`), or gridding (`Gridrec`).
    pub method: super::Method,
    /// Angles in radians (None: the scan's theta, else equally spaced over [0, π)).
    pub angles: Option<Vec<f64>>,
    /// The volume's values as written (half precision: converted on the device, before the
    /// download).
    pub precision: Precision,
}

/// TomoPy's find_center_vo defaults: the coarse search's reach (smin = −50, smax = 50), then
/// srad, step, ratio, drop.
const VO_REACH: f64 = 50.0;
const VO_DEFAULTS: (f64, f64, f64, usize) = (6.0, 0.25, 0.5, 20);

/// −log's default floor (transmission below it, from zero or negative counts, counts as it).
pub const LOG_FLOOR: f32 = 1e-6;

impl Default for Options {
    fn default() -> Options {
        Options {
            outliers: None,
            cutoff: None,
            log_floor: LOG_FLOOR,
            stripe: Stripe::None,
            paganin: None,
            center: Center::Auto,
            filter: Filter::Ramp,
            method: super::Method::Auto,
            angles: None,
            precision: Precision::F32,
        }
    }
}

/// How a run went: the centre used, the bands, and wall time per stage (ms; the reader's and
/// the writer's overlap the device's).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Report {
    pub center: f64,
    pub angles: usize,
    pub slices: usize,
    pub size: usize,
    pub bands: usize,
    pub rows_per_band: usize,
    pub uses_logpolar: bool,
    pub read_ms: f64,
    pub phase_ms: f64,
    pub center_ms: f64,
    pub device_ms: f64,
    /// The device's own time (its timestamps; 0 where it has none).
    pub gpu_ms: f64,
    pub write_ms: f64,
}

/// The volume (rows, cols, cols) of a scan: each detector row's slice, written band by band
/// through `write(first_slice, slices)` in order; `progress` (stage "projections" through
/// phase retrieval's first pass, then "slices") after each chunk and band.
pub fn reconstruct(
    gpu: &Gpu,
    scan: &dyn ScanSource,
    options: &Options,
    progress: &mut dyn FnMut(Progress),
    write: &mut dyn FnMut(usize, Slab) -> Result<()>,
) -> Result<Report> {
    let [angles, rows, cols] = scan.shape();
    check_options(options)?;
    let radians = match (&options.angles, scan.theta_degrees()) {
        (Some(a), _) => a.clone(),
        (None, Some(t)) => t.iter().map(|d| d.to_radians()).collect(),
        (None, None) => Geometry::equally_spaced(angles),
    };
    if radians.len() != angles {
        return Err(Error::Shape(format!("{} angles for {angles} projections", radians.len())));
    }
    crate::host::check_host_array("a band of the volume", &[1, cols, cols], 4)?;
    let mut report = Report {
        center: 0.0,
        angles,
        slices: rows,
        size: cols,
        bands: 0,
        rows_per_band: 0,
        uses_logpolar: false,
        read_ms: 0.0,
        phase_ms: 0.0,
        center_ms: 0.0,
        device_ms: 0.0,
        gpu_ms: 0.0,
        write_ms: 0.0,
    };
    // With phase retrieval the bands read the filtered transmission from host memory.
    let filtered;
    let (source, normalize): (&dyn ScanSource, Normalize) = match &options.paganin {
        Some(paganin) => {
            let t = std::time::Instant::now();
            filtered = retrieve_phase(gpu, scan, options, paganin, progress)?;
            report.phase_ms = crate::host::ms_since(t);
            (&filtered, Normalize { outliers: None, cutoff: f32::INFINITY, minus_log: Some(options.log_floor), sinograms: true })
        }
        None => (
            scan,
            Normalize { outliers: options.outliers, cutoff: options.cutoff.unwrap_or(f32::INFINITY), minus_log: Some(options.log_floor), sinograms: true },
        ),
    };
    let geometry = |center: f64| Geometry::new(cols, radians.clone(), Some(cols), Some(center)).map(|g| g.with_method(options.method));
    let t = std::time::Instant::now();
    report.center = match options.center {
        Center::At(c) => c,
        Center::Auto => {
            let middle = rows / 2;
            let sinogram = band(gpu, source, &normalize, options.stripe, middle..middle + 1)?;
            let s = sinogram.index_axis(Axis(0), 0).mapv(f64::from);
            // TomoPy's ±50 columns, within a quarter of a narrow detector (where the metric
            // is flat over the air beside the object and the search would settle at an end).
            let reach = VO_REACH.min(cols as f64 / 4.0);
            let v = VO_DEFAULTS;
            crate::ops::tomography::prep::cpu::find_center_vo(s.view(), -reach, reach, v.0, v.1, v.2, v.3)?
        }
    };
    report.center_ms = crate::host::ms_since(t);
    let g = geometry(report.center)?;
    report.uses_logpolar = g.fbp_geometry().0.uses_logpolar()?;
    let halo = normalize.outliers.map_or(0, |o| o.halo());
    let band_rows = band_rows(gpu, &g, halo, scan_is_u16(source)).min(rows);
    report.rows_per_band = band_rows;
    let bands: Vec<Range<usize>> = (0..rows).step_by(band_rows).map(|r| r..(r + band_rows).min(rows)).collect();
    report.bands = bands.len();

    // The reader runs one band ahead; the device's results go to `write` on this thread.
    let (tx, rx) = std::sync::mpsc::sync_channel::<Result<(Range<usize>, Fetched)>>(1);
    let read_ms = std::thread::scope(|s| -> Result<f64> {
        let reader = s.spawn(|| {
            let mut ms = 0.0;
            for b in &bands {
                let t = std::time::Instant::now();
                let fetched = fetch(source, b.clone(), halo);
                ms += crate::host::ms_since(t);
                let failed = fetched.is_err();
                if tx.send(fetched.map(|f| (b.clone(), f))).is_err() || failed {
                    break;
                }
            }
            drop(tx);
            ms
        });
        // Two compiled bands alternate: band k is submitted before band k − 1 is read back, so
        // the host copies, checks and hands on one band while the device works on the next.
        let mut plans: [Option<BandPlan>; 2] = [None, None];
        let mut in_flight: Option<(usize, Range<usize>, crate::graph::Started)> = None;
        let mut done = |report: &mut Report, b: Range<usize>, volume: Slab| -> Result<()> {
            let t = std::time::Instant::now();
            write(b.start, volume)?;
            report.write_ms += crate::host::ms_since(t);
            progress(Progress::new("slices", b.end, rows));
            Ok(())
        };
        for (k, received) in rx.iter().enumerate() {
            let (b, fetched) = received?;
            let t = std::time::Instant::now();
            if matches!(options.stripe, Stripe::Large { .. }) {
                // Stripes found on the host between two recordings: band by band.
                let volume = reconstruct_band(gpu, &fetched, &b, &normalize, options, &g)?;
                report.device_ms += crate::host::ms_since(t);
                done(&mut report, b, volume)?;
                continue;
            }
            let slot = k % 2;
            let key = BandPlan::key(&fetched, b.len());
            if plans[slot].as_ref().is_none_or(|p| p.key != key) {
                plans[slot] = None;
                plans[slot] = Some(BandPlan::new(gpu, &fetched, b.len(), &normalize, options, &g)?);
            }
            let started = plans[slot].as_ref().expect("made above").start(gpu, &fetched)?;
            fetched.raw.give_back();
            let previous = in_flight.replace((slot, b, started));
            let finished = previous.map(|(s, b, started)| plans[s].as_ref().expect("in flight").finish(gpu, started, &b).map(|v| (b, v))).transpose()?;
            report.device_ms += crate::host::ms_since(t);
            if let Some((b, (volume, gpu_ms))) = finished {
                report.gpu_ms += gpu_ms;
                done(&mut report, b, volume)?;
            }
        }
        if let Some((s, b, started)) = in_flight.take() {
            let t = std::time::Instant::now();
            let (volume, gpu_ms) = plans[s].as_ref().expect("in flight").finish(gpu, started, &b)?;
            report.device_ms += crate::host::ms_since(t);
            report.gpu_ms += gpu_ms;
            done(&mut report, b, volume)?;
        }
        reader.join().map_err(|_| Error::Invalid("the scan reader stopped unexpectedly".into()))
    });
    crate::host::recycle::release();
    report.read_ms = read_ms?;
    Ok(report)
}

fn check_options(o: &Options) -> Result<()> {
    if let Some(out) = o.outliers {
        out.check()?;
    }
    if let Some(c) = o.cutoff {
        if !c.is_finite() {
            return Err(Error::NonFinite(format!("a cutoff of {c}")));
        }
    }
    if !(o.log_floor.is_finite() && o.log_floor > 0.0) {
        return Err(Error::Invalid(format!("a −log floor of {} (a positive number)", o.log_floor)));
    }
    if let Stripe::Sorting { size, dim } = o.stripe {
        if !(1..=255).contains(&size) || !(1..=2).contains(&dim) {
            return Err(Error::Invalid(format!("a sorting stripe filter of size {size}, dim {dim} (size 1 to 255, dim 1 or 2)")));
        }
    }
    if let Stripe::Large { snr, size, drop_ratio, .. } = o.stripe {
        if !(1..=255).contains(&size) || !snr.is_finite() || !drop_ratio.is_finite() {
            return Err(Error::Invalid(format!("a large-stripe filter of size {size} (1 to 255), snr {snr}, drop ratio {drop_ratio} (finite)")));
        }
    }
    if let Stripe::Fw { level, sigma, .. } = o.stripe {
        if !(sigma.is_finite() && sigma > 0.0) || level.is_some_and(|l| l > 64) {
            return Err(Error::Invalid(format!("a Fourier-wavelet filter of sigma {sigma} (more than 0), level {level:?} (at most 64)")));
        }
    }
    if let Some(p) = &o.paganin {
        p.check()?;
    }
    if let Center::At(c) = o.center {
        if !c.is_finite() {
            return Err(Error::NonFinite(format!("a rotation centre of {c}")));
        }
    }
    Ok(())
}

fn scan_is_u16(scan: &dyn ScanSource) -> bool {
    matches!(scan.read(Part::Data, Some(0..1), 0..1), Ok(Samples::U16(_)))
}

/// The most rows in a band: FBP goes slice by slice (one slice's temporaries at a time, the
/// log-polar grids of a 2048² slice take 1.7 GB), so per row the band holds its raw values,
/// sinograms and stripe removal's arrays ([`band_bytes`]) and its slice; every array within one
/// buffer; at most [`MAX_BAND_ROWS`].
fn band_rows(gpu: &Gpu, g: &Geometry, halo: usize, u16: bool) -> usize {
    let slice = 4 * (g.size * g.size) as u64;
    let per_row = band_bytes(g, halo, u16) + 2 * slice;
    let budget = (gpu.memory_budget_bytes() / 4).saturating_sub(super::slice_bytes(g));
    let buffer = gpu.max_buffer_bytes() / (4 * (g.angles.len() * g.detectors) as u64).max(slice).max(1);
    (budget / per_row.max(1)).min(buffer).clamp(1, MAX_BAND_ROWS as u64) as usize
}

/// Rows per band at most: enough to keep the device busy between submissions.
const MAX_BAND_ROWS: usize = 64;

/// Device bytes per detector row of a band besides FBP's: the raw values with the outlier
/// median's halo (and their f32 copy and medians), the sinograms and the stripe removal's
/// sorted values, positions and medians.
fn band_bytes(g: &Geometry, halo: usize, u16: bool) -> u64 {
    let plane = (g.angles.len() * g.detectors) as u64;
    let raw = plane * if u16 { 2 } else { 4 } * (1 + 2 * halo as u64);
    raw + 3 * 4 * plane * (1 + 2 * halo as u64) + 5 * 4 * plane
}

/// A band's raw rows (with the halo), and the flat and dark means of its own rows.
struct Fetched {
    raw: Samples,
    /// The first of the band's rows within `raw`.
    row0: usize,
    flat_dark: Array3<f32>,
}

fn fetch(scan: &dyn ScanSource, rows: Range<usize>, halo: usize) -> Result<Fetched> {
    let total = scan.shape()[1];
    let read = rows.start.saturating_sub(halo)..(rows.end + halo).min(total);
    let raw = scan.read(Part::Data, None, read.clone())?;
    raw.check_finite("the projections")?;
    let flat_dark = flat_dark_means(scan, rows.clone())?;
    Ok(Fetched { raw, row0: rows.start - read.start, flat_dark })
}

/// The flat and dark fields' means over rows `rows` (2, rows, cols): a flat of 1 and a dark of
/// 0 where the scan has none.
fn flat_dark_means(scan: &dyn ScanSource, rows: Range<usize>) -> Result<Array3<f32>> {
    let mut flat_dark = Array3::<f32>::zeros((2, rows.len(), scan.shape()[2]));
    flat_dark.index_axis_mut(Axis(0), 0).fill(1.0);
    for (i, part) in [(0, Part::Flat), (1, Part::Dark)] {
        if scan.count(part) > 0 {
            let images = scan.read(part, None, rows.clone())?;
            images.check_finite(if part == Part::Flat { "the flat fields" } else { "the dark fields" })?;
            flat_dark.index_axis_mut(Axis(0), i).assign(&images.mean().mapv(|v| v as f32));
        }
    }
    Ok(flat_dark)
}

/// A band's recording, compiled once and run again for every band of the same shape: the raw
/// rows and the flat and dark means are written into its input arrays before each run.
/// (Compiling a 64-row band of 2048² took ~0.6 s, most of it allocating buffers and staging:
/// more than the device's work on it.)
struct BandPlan {
    /// The raw values' shape, the band's first row within them, its rows.
    key: ([usize; 3], usize, usize),
    compiled: crate::graph::Compiled,
    raw: GpuArray,
    flat_dark: GpuArray,
    volume: crate::graph::Download,
    precision: Precision,
    size: usize,
}

impl BandPlan {
    fn key(fetched: &Fetched, rows: usize) -> ([usize; 3], usize, usize) {
        (fetched.raw.shape(), fetched.row0, rows)
    }

    /// Stripe removal other than the large-stripe method's (which needs the host in between).
    fn new(gpu: &Gpu, fetched: &Fetched, rows: usize, normalize: &Normalize, options: &Options, g: &Geometry) -> Result<BandPlan> {
        let (raw, u16) = fetched.raw.empty_like(gpu)?;
        let flat_dark = GpuArray::empty(gpu, fetched.flat_dark.shape(), crate::gpu::Dtype::F32)?;
        let mut rec = Recording::new(gpu);
        let raw_in = Raw { buf: rec.input(&raw), u16, dims: fetched.raw.shape() };
        let fd = rec.input(&flat_dark);
        let sinograms = record_sinograms(&mut rec, raw_in, fd, fetched.row0, rows, normalize, options.stripe)?;
        let volume = record_slices(&mut rec, sinograms, g, options.filter)?;
        let volume = record_stored(&mut rec, volume, options.precision)?;
        Ok(BandPlan { key: Self::key(fetched, rows), compiled: rec.compile()?, raw, flat_dark, volume, precision: options.precision, size: g.size })
    }

    /// Writes the band's values into the inputs and submits the run.
    fn start(&self, gpu: &Gpu, fetched: &Fetched) -> Result<crate::graph::Started> {
        fetched.raw.write_into(gpu, &self.raw)?;
        self.flat_dark.write(gpu, bytemuck::cast_slice(fetched.flat_dark.as_slice().expect("standard layout")))?;
        self.compiled.start(gpu)
    }

    /// Waits for the run and reads the slices back (with the GPU's time, where it has
    /// timestamps).
    fn finish(&self, gpu: &Gpu, started: crate::graph::Started, rows: &Range<usize>) -> Result<(Slab, f64)> {
        let mut results = self.compiled.finish(gpu, started)?;
        let gpu_ms = results.report.gpu_ms.unwrap_or(0.0);
        Ok((checked_slices(&mut results, self.volume, self.precision, [rows.len(), self.size, self.size], rows)?, gpu_ms))
    }
}

/// Normalisation and stripe removal (not the large-stripe method's) of a band's raw values:
/// its sinograms (rows, angles, cols).
fn record_sinograms(
    rec: &mut Recording,
    raw: Raw,
    flat_dark: crate::graph::Buf,
    row0: usize,
    rows: usize,
    normalize: &Normalize,
    stripe: Stripe,
) -> Result<crate::graph::Buf> {
    let sinograms = prep::record_normalize(rec, raw, row0, rows, flat_dark, normalize)?;
    match stripe {
        Stripe::None => Ok(sinograms),
        Stripe::Sorting { size, dim } => prep::record_stripe_sorting(rec, sinograms, size, dim),
        Stripe::Fw { level, sigma, pad } => prep::record_stripe_fw(rec, sinograms, level, sigma, pad),
        Stripe::Large { .. } => Err(Error::Invalid("the large-stripe method runs in two recordings".into())),
    }
}

/// FBP of a band's sinograms (rows, angles, cols) slice by slice (each slice's temporaries, the
/// log-polar grids, reused by the next; gridding takes two at a time, as one complex
/// sinogram): the slices (rows, N, N).
fn record_slices(rec: &mut Recording, sinograms: crate::graph::Buf, g: &Geometry, filter: Filter) -> Result<crate::graph::Buf> {
    let rows = rec.dims(sinograms)[0];
    let step = if g.method == super::Method::Gridrec { 2 } else { 1 };
    let slices = (0..rows)
        .step_by(step)
        .map(|i| {
            let some = crate::ops::layout::crop(rec, sinograms, &[i, 0, 0], &[step.min(rows - i), g.angles.len(), g.detectors])?;
            super::record_fbp(rec, some, g, filter)
        })
        .collect::<Result<Vec<_>>>()?;
    if slices.len() == 1 {
        Ok(slices[0])
    } else {
        crate::ops::layout::concatenate(rec, &slices)
    }
}

/// The slices as downloaded for storing: f32, or packed into halves on the device.
fn record_stored(rec: &mut Recording, volume: crate::graph::Buf, precision: Precision) -> Result<crate::graph::Download> {
    Ok(match precision {
        Precision::F32 => rec.download(volume),
        Precision::F16 => {
            let words = crate::kernels::pack_half::record(rec, volume)?;
            rec.download(words)
        }
    })
}

/// The slices (`shape`) of rows `rows` from a [`record_stored`] download, refused if any
/// overflowed f32 or half precision (checked by all cores).
fn checked_slices(
    results: &mut crate::graph::Results,
    d: crate::graph::Download,
    precision: Precision,
    shape: [usize; 3],
    rows: &Range<usize>,
) -> Result<Slab> {
    use rayon::prelude::*;
    match precision {
        Precision::F32 => {
            let volume = results.take_f32(d)?.into_dimensionality::<ndarray::Ix3>().map_err(|e| Error::Shape(e.to_string()))?;
            if volume.as_slice().expect("standard layout").par_iter().any(|v| !v.is_finite()) {
                return Err(Error::NonFinite(format!("slices {rows:?} overflow f32: scale the input down")));
            }
            Ok(Slab::F32(volume))
        }
        Precision::F16 => {
            let words = results.take_u32(d)?;
            let count: usize = shape.iter().product();
            let mut halves = crate::host::recycle::halves(count);
            const PIECE: usize = 1 << 20;
            halves.par_chunks_mut(2 * PIECE).zip(words.par_chunks(PIECE)).for_each(|(h, w)| {
                for (pair, &word) in h.chunks_mut(2).zip(w) {
                    pair[0] = word as u16;
                    if let Some(second) = pair.get_mut(1) {
                        *second = (word >> 16) as u16;
                    }
                }
            });
            crate::host::recycle::give_back(words);
            if halves.par_iter().any(|&h| !crate::kernels::pack_half::half_is_finite(h)) {
                return Err(Error::NonFinite(format!("slices {rows:?} exceed half precision (±65504): write float32, or scale the input down")));
            }
            Ok(Slab::F16(Array3::from_shape_vec(shape, halves).expect("sizes match")))
        }
    }
}

/// A recording holding a band's sinograms (rows, angles, cols) after stripe removal, for more
/// steps to be added. The large-stripe method runs a first recording to detect the stripes.
fn sinograms<'g>(gpu: &'g Gpu, fetched: &Fetched, rows: usize, normalize: &Normalize, stripe: Stripe) -> Result<(Recording<'g>, crate::graph::Buf)> {
    let mut rec = Recording::new(gpu);
    let (raw, u16) = fetched.raw.upload(gpu)?;
    let raw = Raw { buf: rec.input(&raw), u16, dims: fetched.raw.shape() };
    let fd = rec.upload_once_f32(&fetched.flat_dark.view().into_dyn())?;
    match stripe {
        Stripe::Large { snr, size, drop_ratio, norm } => {
            let sinograms = prep::record_normalize(&mut rec, raw, fetched.row0, rows, fd, normalize)?;
            let (smooth, sorted_mean, smooth_mean) = prep::record_large_stripe_means(&mut rec, sinograms, size, drop_ratio)?;
            let (keep_s, keep_m) = (rec.output(sinograms), rec.output(smooth));
            let (d1, d2) = (rec.download(sorted_mean), rec.download(smooth_mean));
            let results = rec.run()?;
            let two = |d| -> Result<Array2<f32>> { results.f32(d)?.into_dimensionality().map_err(|e| Error::Shape(e.to_string())) };
            let (factors, stripes) = prep::large_stripe_columns(&two(d1)?, &two(d2)?, snr);
            let (x, m) = (results.array(keep_s), results.array(keep_m));
            let mut rec = Recording::new(gpu);
            let (x, m) = (rec.input(&x), rec.input(&m));
            let f = rec.upload_f32(&factors.into_dyn().view())?;
            let st = rec.upload_f32(&stripes.into_dyn().view())?;
            let out = prep::record_large_stripe_fill(&mut rec, x, m, f, st, norm)?;
            Ok((rec, out))
        }
        _ => {
            let out = record_sinograms(&mut rec, raw, fd, fetched.row0, rows, normalize, stripe)?;
            Ok((rec, out))
        }
    }
}

/// One band's slices, in a recording of its own (the large-stripe method's way).
fn reconstruct_band(gpu: &Gpu, fetched: &Fetched, rows: &Range<usize>, normalize: &Normalize, options: &Options, g: &Geometry) -> Result<Slab> {
    let (mut rec, sinograms) = sinograms(gpu, fetched, rows.len(), normalize, options.stripe)?;
    let volume = record_slices(&mut rec, sinograms, g, options.filter)?;
    let d = record_stored(&mut rec, volume, options.precision)?;
    checked_slices(&mut rec.run()?, d, options.precision, [rows.len(), g.size, g.size], rows)
}

/// The preprocessed sinograms (rows, angles, cols) of a few rows: what the centre search reads.
fn band(gpu: &Gpu, scan: &dyn ScanSource, normalize: &Normalize, stripe: Stripe, rows: Range<usize>) -> Result<Array3<f32>> {
    let fetched = fetch(scan, rows.clone(), normalize.outliers.map_or(0, |o| o.halo()))?;
    let (mut rec, sinograms) = sinograms(gpu, &fetched, rows.len(), normalize, stripe)?;
    let d = rec.download(sinograms);
    rec.run()?.into_f32(d)?.into_dimensionality::<ndarray::Ix3>().map_err(|e| Error::Shape(e.to_string()))
}

/// Phase retrieval of every projection, in chunks: outliers, normalisation, Paganin's filter;
/// the filtered transmission in host memory, as a scan without flats.
fn retrieve_phase(gpu: &Gpu, scan: &dyn ScanSource, options: &Options, paganin: &Paganin, progress: &mut dyn FnMut(Progress)) -> Result<ArrayScan> {
    let [angles, rows, cols] = scan.shape();
    crate::host::check_host_array("the phase-retrieved projections", &[angles, rows, cols], 4)?;
    let (p1, p2) = (rows + 2 * paganin.pad_width(rows), cols + 2 * paganin.pad_width(cols));
    // A projection's raw values, its transmission, the padded image and its spectrum (twice).
    let per = (rows * cols * 16 + p1 * p2 * 4 + 2 * p1 * (p2 / 2 + 1) * 8) as u64;
    // Within a quarter of the memory, and the largest array (the spectra) within one buffer.
    let largest = (p1 * (p2 / 2 + 1) * 8) as u64;
    let chunk = (gpu.memory_budget_bytes() / 4 / per.max(1)).min(gpu.max_buffer_bytes() / largest.max(1)).clamp(1, angles as u64) as usize;
    let mut out = Array3::<f32>::zeros((angles, rows, cols));
    let flat_dark = flat_dark_means(scan, 0..rows)?;
    let normalize = Normalize { outliers: options.outliers, cutoff: options.cutoff.unwrap_or(f32::INFINITY), minus_log: None, sinograms: false };
    let plan = prep::PaganinPlan::new(gpu, paganin, rows, cols)?;
    for start in (0..angles).step_by(chunk) {
        let end = (start + chunk).min(angles);
        let raw = scan.read(Part::Data, Some(start..end), 0..rows)?;
        raw.check_finite("the projections")?;
        let mut rec = Recording::new(gpu);
        let (buf, u16) = raw.upload(gpu)?;
        let raw = Raw { buf: rec.input(&buf), u16, dims: raw.shape() };
        let fd = rec.upload_once_f32(&flat_dark.view().into_dyn())?;
        let transmission = prep::record_normalize(&mut rec, raw, 0, rows, fd, &normalize)?;
        let filtered = prep::record_paganin(&mut rec, transmission, &plan)?;
        let d = rec.download(filtered);
        let part = rec.run()?.into_f32(d)?;
        out.slice_axis_mut(Axis(0), (start..end).into()).assign(&part.into_dimensionality::<ndarray::Ix3>().map_err(|e| Error::Shape(e.to_string()))?);
        progress(Progress::new("projections", end, angles));
    }
    ArrayScan::new(Samples::F32(out), None, None, scan.theta_degrees())
}

/// [`reconstruct`] into a host array (rows, cols, cols) of f32 (half precision is for written
/// volumes).
pub fn reconstruct_array(gpu: &Gpu, scan: &dyn ScanSource, options: &Options, progress: &mut dyn FnMut(Progress)) -> Result<(Array3<f32>, Report)> {
    let [_, rows, cols] = scan.shape();
    if options.precision != Precision::F32 {
        return Err(Error::Invalid("a reconstructed array is float32 (half precision is for volumes written to files)".into()));
    }
    crate::host::check_host_array("the volume", &[rows, cols, cols], 4)?;
    let mut volume = Array3::<f32>::zeros((rows, cols, cols));
    let report = reconstruct(gpu, scan, options, progress, &mut |start, slices: Slab| {
        let Slab::F32(slices) = slices else { return Err(Error::Invalid("half-precision slices for a float32 array".into())) };
        volume.slice_axis_mut(Axis(0), (start..start + slices.shape()[0]).into()).assign(&slices);
        Ok(())
    })?;
    Ok((volume, report))
}
