//! HDF5 scans in the DXchange layout (APS, TomoPy, tomocupy): projections `/exchange/data`
//! (angles, rows, columns), flat fields `/exchange/data_white`, dark fields `/exchange/data_dark`
//! (each (count, rows, columns)), angles `/exchange/theta` in degrees. [`Scan`] reads them by
//! hyperslabs — every angle of a band of detector rows, which is a band of sinograms — so a scan
//! never has to fit in memory. 16-bit unsigned counts come back as they are (the GPU converts
//! them: half the bytes to move); any other numeric type as f32, converted by the HDF5 library.
//! Contiguous, unfiltered, little-endian datasets (what detectors write) are read straight from
//! the file at their offset by several threads; chunked or compressed ones through the library.
//!
//! [`ScanWriter`] writes the same layout (16-bit counts, contiguous), hyperslab by hyperslab,
//! into a temporary file moved into place when it is finished: synthetic scans for tests and
//! benchmarks.

use std::ops::Range;
use std::path::{Path, PathBuf};

use ndarray::{s, Array3, ArrayView3};

use crate::error::Result;
use crate::host::file_error;
use crate::tomography::ScanSource;
pub use crate::tomography::{Part, Samples};

/// A scan's projections (`/exchange/data`) as f32, within a host memory budget of `budget`
/// bytes: what `io::read` returns for an HDF5 file.
pub fn read(path: &Path, budget: u64) -> Result<ndarray::ArrayD<f32>> {
    let scan = Scan::open(path)?;
    let [a, r, c] = scan.shape();
    crate::host::check_budget("the projections", (a as u64).checked_mul(r as u64).and_then(|n| n.checked_mul(c as u64 * 4)), budget)
        .map_err(|e| file_error(path, e))?;
    Ok(scan.read(Part::Data, None, 0..r)?.to_f32().into_dyn())
}

/// The DXchange datasets.
pub const DATA: &str = "/exchange/data";
pub const FLAT: &str = "/exchange/data_white";
pub const DARK: &str = "/exchange/data_dark";
pub const THETA: &str = "/exchange/theta";

/// One 3D image dataset of a scan.
struct Images {
    dataset: hdf5::Dataset,
    shape: [usize; 3],
    u16: bool,
    /// The byte offset of a contiguous, unfiltered, little-endian dataset in the file: read
    /// directly, in parallel.
    raw: Option<u64>,
}

fn part_path(part: Part) -> &'static str {
    match part {
        Part::Data => DATA,
        Part::Flat => FLAT,
        Part::Dark => DARK,
    }
}

/// An open DXchange scan.
pub struct Scan {
    path: PathBuf,
    /// Held open for the direct reads (the library's own handle stays open too).
    file: std::fs::File,
    _h5: hdf5::File,
    data: Images,
    flat: Option<Images>,
    dark: Option<Images>,
    theta: Option<Vec<f64>>,
}

/// Files opened without the library's lock: a process started while one was open (a test's
/// or an app's child) inherits the descriptor and held the lock for its whole life, so that
/// a finished scan could not be opened again. Our writers write a temporary and rename it
/// into place, so no reader ever sees a file being written.
fn unlocked() -> hdf5::FileBuilder {
    let mut builder = hdf5::File::with_options();
    builder.with_fapl(|p| p.file_locking(false));
    builder
}

fn h5_error(path: &Path, what: &str, e: hdf5::Error) -> crate::Error {
    file_error(path, format!("{what}: {e}"))
}

impl Scan {
    /// Opens `path` and checks the layout: a 3D `/exchange/data`, flats and darks (optional)
    /// of its rows and columns, theta (optional) with one finite angle per projection.
    pub fn open(path: impl AsRef<Path>) -> Result<Scan> {
        let path = path.as_ref();
        let (file, _) = super::open(path)?;
        let h5 = unlocked().open(path).map_err(|e| h5_error(path, "is not a readable HDF5 file", e))?;
        let data = images(path, &h5, DATA)?.ok_or_else(|| file_error(path, format!("has no {DATA} dataset (the DXchange layout's projections)")))?;
        let [angles, rows, cols] = data.shape;
        if angles == 0 || rows == 0 || cols == 0 {
            return Err(file_error(path, format!("{DATA} is empty ({angles}, {rows}, {cols})")));
        }
        let flat = images(path, &h5, FLAT)?;
        let dark = images(path, &h5, DARK)?;
        for (name, part) in [(FLAT, &flat), (DARK, &dark)] {
            if let Some(p) = part {
                if p.shape[1..] != data.shape[1..] || p.shape[0] == 0 {
                    return Err(file_error(path, format!("{name} {:?} does not match the projections {:?} (count, rows, columns)", p.shape, data.shape)));
                }
            }
        }
        let theta = match h5.link_exists(THETA) {
            false => None,
            true => {
                let t: Vec<f64> =
                    h5.dataset(THETA).and_then(|d| d.read_raw::<f64>()).map_err(|e| h5_error(path, &format!("{THETA} cannot be read as numbers"), e))?;
                if t.len() != angles {
                    return Err(file_error(path, format!("{THETA} has {} angles for {angles} projections", t.len())));
                }
                if let Some(v) = t.iter().find(|v| !v.is_finite()) {
                    return Err(file_error(path, format!("{THETA} holds a non-finite angle ({v})")));
                }
                Some(t)
            }
        };
        Ok(Scan { path: path.to_path_buf(), file, _h5: h5, data, flat, dark, theta })
    }

    /// The projections' shape (angles, rows, columns).
    pub fn shape(&self) -> [usize; 3] {
        self.data.shape
    }

    /// A part's shape, None when the file has no such dataset.
    pub fn part_shape(&self, part: Part) -> Option<[usize; 3]> {
        self.images(part).map(|i| i.shape)
    }

    /// `/exchange/theta` (degrees), when the file has it.
    pub fn theta_degrees(&self) -> Option<&[f64]> {
        self.theta.as_deref()
    }

    /// Whether the projections are 16-bit counts (read as they are).
    pub fn is_u16(&self) -> bool {
        self.data.u16
    }

    fn images(&self, part: Part) -> Option<&Images> {
        match part {
            Part::Data => Some(&self.data),
            Part::Flat => self.flat.as_ref(),
            Part::Dark => self.dark.as_ref(),
        }
    }

    /// The hyperslab `[images, rows, :]` of a part (all of its images when `images` is None).
    pub fn read(&self, part: Part, images: Option<Range<usize>>, rows: Range<usize>) -> Result<Samples> {
        let set = self.images(part).ok_or_else(|| file_error(&self.path, format!("has no {} dataset", part_path(part))))?;
        let [n, r, c] = set.shape;
        let images = images.unwrap_or(0..n);
        if images.start > images.end || images.end > n || rows.start > rows.end || rows.end > r {
            return Err(file_error(&self.path, format!("{}[{images:?}, {rows:?}, :] lies outside its shape {:?}", part_path(part), set.shape)));
        }
        let bytes = (images.len() * rows.len() * c) as u64 * if set.u16 { 2 } else { 4 };
        crate::host::check_host_bytes(&format!("{}[{images:?}, {rows:?}, :]", part_path(part)), Some(bytes))?;
        let out = [images.len(), rows.len(), c];
        if let Some(offset) = set.raw {
            return self.read_direct(set, offset, out, images.start, rows.start);
        }
        let selection = s![images.clone(), rows.clone(), ..];
        let read = |e: hdf5::Error| h5_error(&self.path, &format!("{}[{images:?}, {rows:?}, :] cannot be read", part_path(part)), e);
        Ok(if set.u16 {
            Samples::U16(set.dataset.read_slice::<u16, _, _>(selection).map_err(read)?)
        } else {
            Samples::F32(set.dataset.read_slice::<f32, _, _>(selection).map_err(read)?)
        })
    }

    /// Reads each image's band of rows at its place in the file, images in parallel, straight
    /// into the result's memory (the values are little-endian, as this machine's).
    fn read_direct(&self, set: &Images, offset: u64, out: [usize; 3], first: usize, row: usize) -> Result<Samples> {
        let shape = (out[0], out[1], out[2]);
        let len = out[0] * out[1] * out[2];
        Ok(if set.u16 {
            let mut v = crate::host::recycle::halves(len);
            self.read_bands(set, offset, out, first, row, bytemuck::cast_slice_mut(&mut v))?;
            Samples::U16(Array3::from_shape_vec(shape, v).expect("sizes match"))
        } else {
            let mut v = crate::host::recycle::floats(len);
            self.read_bands(set, offset, out, first, row, bytemuck::cast_slice_mut(&mut v))?;
            Samples::F32(Array3::from_shape_vec(shape, v).expect("sizes match"))
        })
    }

    fn read_bands(&self, set: &Images, offset: u64, out: [usize; 3], first: usize, row: usize, bytes: &mut [u8]) -> Result<()> {
        use rayon::prelude::*;
        let [_, rows, cols] = set.shape;
        let elem = if set.u16 { 2 } else { 4 };
        let band = out[1] * out[2] * elem;
        if band == 0 {
            return Ok(());
        }
        crate::host::read_pool().install(|| {
            bytes.par_chunks_mut(band).enumerate().try_for_each(|(i, dst)| {
                let at = offset + (((first + i) * rows + row) * cols * elem) as u64;
                read_at(&self.file, dst, at).map_err(|e| file_error(&self.path, format!("cannot read {band} bytes at {at}: {e} (a truncated file?)")))
            })
        })
    }
}

impl ScanSource for Scan {
    fn shape(&self) -> [usize; 3] {
        self.data.shape
    }

    fn count(&self, part: Part) -> usize {
        self.images(part).map_or(0, |i| i.shape[0])
    }

    fn read(&self, part: Part, images: Option<Range<usize>>, rows: Range<usize>) -> Result<Samples> {
        Scan::read(self, part, images, rows)
    }

    fn theta_degrees(&self) -> Option<Vec<f64>> {
        self.theta.clone()
    }
}

#[cfg(unix)]
fn read_at(file: &std::fs::File, dst: &mut [u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, dst, at)
}

#[cfg(windows)]
fn read_at(file: &std::fs::File, mut dst: &mut [u8], mut at: u64) -> std::io::Result<()> {
    while !dst.is_empty() {
        match std::os::windows::fs::FileExt::seek_read(file, dst, at)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                dst = &mut dst[n..];
                at += n as u64;
            }
        }
    }
    Ok(())
}

/// The dataset at `name`, if the file has one: 3D and numeric, else an error.
fn images(path: &Path, h5: &hdf5::File, name: &str) -> Result<Option<Images>> {
    if !h5.link_exists(name) {
        return Ok(None);
    }
    let dataset = h5.dataset(name).map_err(|e| h5_error(path, &format!("{name} is not a dataset"), e))?;
    let shape = dataset.shape();
    let [n, r, c] = shape[..] else {
        return Err(file_error(path, format!("{name} has shape {shape:?}; DXchange images are 3D (count, rows, columns)")));
    };
    use hdf5::types::{FloatSize, IntSize, TypeDescriptor as T};
    let dtype = dataset.dtype().map_err(|e| h5_error(path, &format!("{name}'s type cannot be read"), e))?;
    let described = dtype.to_descriptor().map_err(|e| h5_error(path, &format!("{name}'s type cannot be read"), e))?;
    if !matches!(described, T::Integer(_) | T::Unsigned(_) | T::Float(_) | T::Boolean) {
        return Err(file_error(path, format!("{name} holds {described}, not numbers")));
    }
    let u16 = matches!(described, T::Unsigned(IntSize::U2));
    let f32 = matches!(described, T::Float(FloatSize::U4));
    // Only when the stored type is exactly our little-endian u16 or f32 (H5Tequal: order too).
    let native = (u16 && dtype == hdf5::Datatype::from_type::<u16>().map_err(|e| h5_error(path, "u16", e))?)
        || (f32 && dtype == hdf5::Datatype::from_type::<f32>().map_err(|e| h5_error(path, "f32", e))?);
    let raw = (native && cfg!(target_endian = "little") && !dataset.is_chunked() && dataset.filters().is_empty()).then(|| dataset.offset()).flatten();
    if let Some(offset) = raw {
        let (_, len) = super::open(path)?;
        let need = offset + (n * r * c) as u64 * if u16 { 2 } else { 4 };
        if len.is_some_and(|len| len < need) {
            return Err(file_error(path, format!("is truncated: {name} needs {need} bytes, the file has {}", len.unwrap_or(0))));
        }
    }
    Ok(Some(Images { dataset, shape: [n, r, c], u16, raw }))
}

/// Writes a DXchange scan: 16-bit projections, flats and darks, theta in degrees; contiguous
/// datasets filled hyperslab by hyperslab, in a temporary file renamed over `path` by
/// [`ScanWriter::finish`] (dropped unfinished, it removes the temporary).
pub struct ScanWriter {
    path: PathBuf,
    temporary: PathBuf,
    file: Option<hdf5::File>,
    shapes: [[usize; 3]; 3],
}

impl ScanWriter {
    /// A new scan of `shape` (angles, rows, columns) with `flats` and `darks` images.
    pub fn create(path: impl AsRef<Path>, shape: [usize; 3], flats: usize, darks: usize, theta_degrees: &[f64]) -> Result<ScanWriter> {
        let path = path.as_ref().to_path_buf();
        if theta_degrees.len() != shape[0] {
            return Err(crate::Error::Shape(format!("{} angles for {} projections", theta_degrees.len(), shape[0])));
        }
        super::check_directory(&path)?;
        let temporary = crate::host::temporary_path(&path)?;
        let fail = |e: hdf5::Error| h5_error(&path, "cannot be written", e);
        let file = unlocked().create_excl(&temporary).map_err(fail)?;
        let shapes = [shape, [flats, shape[1], shape[2]], [darks, shape[1], shape[2]]];
        let writer = ScanWriter { path: path.clone(), temporary, file: Some(file), shapes };
        let h5 = writer.file.as_ref().expect("open");
        h5.create_group("exchange").map_err(fail)?;
        for (name, s) in [(DATA, shape), (FLAT, shapes[1]), (DARK, shapes[2])] {
            h5.new_dataset::<u16>().shape(s.to_vec()).create(name).map_err(fail)?;
        }
        h5.new_dataset_builder().with_data(theta_degrees).create(THETA).map_err(fail)?;
        Ok(writer)
    }

    /// Writes `values` (images, rows, columns) at `[image.., row.., ..]` of a part.
    pub fn write(&self, part: Part, [image, row]: [usize; 2], values: &ArrayView3<u16>) -> Result<()> {
        let shape = self.shapes[part as usize];
        let [n, r, c] = [values.shape()[0], values.shape()[1], values.shape()[2]];
        if image + n > shape[0] || row + r > shape[1] || c != shape[2] {
            return Err(crate::Error::Shape(format!("{:?} values at image {image}, row {row} for {} of shape {shape:?}", values.shape(), part_path(part))));
        }
        let h5 = self.file.as_ref().expect("open until finished");
        let d = h5.dataset(part_path(part)).map_err(|e| h5_error(&self.path, "cannot be written", e))?;
        let values = values.as_standard_layout();
        d.write_slice(&values, s![image..image + n, row..row + r, ..]).map_err(|e| h5_error(&self.path, "cannot be written", e))
    }

    /// Closes the file and moves it into place.
    pub fn finish(mut self) -> Result<()> {
        drop(self.file.take());
        let (temporary, target) = (self.temporary.clone(), self.path.clone());
        crate::host::commit_temporary(&temporary, &target)
    }
}

impl Drop for ScanWriter {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            crate::host::discard_temporary(&self.temporary);
        }
    }
}
