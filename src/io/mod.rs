//! File I/O, chosen by extension: `.npy` (any numeric dtype in; float32 or complex64 out),
//! `.tif`/`.tiff` (grayscale; a multi-page file is a 3D stack, pages along the slowest axis) and
//! `.png` (8/16-bit grayscale in; 2D previews out, min..max scaled), with the `io` feature; Zarr
//! arrays and OME-Zarr images (`.zarr`) with the `zarr` feature. The engine below never uses
//! this module: an app that embeds lucent without these features compiles none of it.
//!
//! Real data comes back as `ArrayD<f32>`, complex as `ArrayD<Complex32>`. Conversion to f32
//! rounds to the nearest value and never rescales: integers are exact up to 2^24 in magnitude,
//! f64 beyond f32's range becomes ±inf, booleans are 0/1, complex128 converts per component. A
//! u8 pixel of 200 reads as 200.0.
//!
//! Every output is written atomically ([`write_atomic`](crate::host::write_atomic)): a failed
//! write leaves no partial file. Every failure is an [`Error::File`](crate::Error::File) naming
//! the path and the problem.
//!
//! Reading is bounded: each reader checks its header first, computes sizes with checked
//! arithmetic, compares the promised bytes with the file's size and with the host memory budget
//! ([`host_budget_bytes`]) and only then allocates and reads; nothing reads a whole file blindly.
//!
//! ```no_run
//! let image = lucent::io::read_real("stack.tif")?;      // (pages, height, width)
//! lucent::io::write_real("stack.npy", &image.view())?;  // float32 .npy
//! # Ok::<(), lucent::Error>(())
//! ```

pub mod astra;
#[cfg(feature = "hdf5")]
pub mod hdf5;
pub mod npy;
pub mod png;
pub mod tiff;
pub mod volume;
#[cfg(feature = "zarr")]
pub mod zarr;

use std::path::Path;

use ndarray::{ArrayD, ArrayViewD};
use num_complex::Complex32;

use crate::error::Result;
use crate::host::{file_error, host_budget_bytes};

/// Without the `zarr` feature a path in a Zarr store is still recognised (it is no unknown
/// extension) and refused with a message that names the feature.
#[cfg(not(feature = "zarr"))]
mod zarr {
    use super::*;

    pub fn read(path: &Path, _budget: u64) -> Result<ArrayD<f32>> {
        Err(without_zarr(path))
    }

    pub fn write_like(path: &Path, _x: &ArrayViewD<f32>, _like: Option<&Path>) -> Result<()> {
        Err(without_zarr(path))
    }

    fn without_zarr(path: &Path) -> crate::Error {
        file_error(path, "is in a Zarr store, and this build of lucent has no Zarr support (its `zarr` feature)".into())
    }
}

/// Without the `hdf5` feature an HDF5 file is recognised and refused with a message that names
/// the feature.
#[cfg(not(feature = "hdf5"))]
mod hdf5 {
    use super::*;

    pub fn read(path: &Path, _budget: u64) -> Result<ArrayD<f32>> {
        Err(file_error(path, "is an HDF5 file, and this build of lucent has no HDF5 support (its `hdf5` feature)".into()))
    }
}

/// What a file held, after conversion to the engine's element types.
#[derive(Clone, Debug, PartialEq)]
pub enum Loaded {
    Real(ArrayD<f32>),
    Complex(ArrayD<Complex32>),
}

impl Loaded {
    pub fn shape(&self) -> &[usize] {
        match self {
            Loaded::Real(a) => a.shape(),
            Loaded::Complex(a) => a.shape(),
        }
    }

    /// "real" or "complex", for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Loaded::Real(_) => "real",
            Loaded::Complex(_) => "complex",
        }
    }
}

/// The file formats, known by extension (case-insensitive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Npy,
    Tiff,
    Png,
    /// A Zarr array or OME-Zarr image: any path with a component ending in .zarr (read and
    /// written with the `zarr` feature, `io::zarr`).
    Zarr,
    /// An HDF5 file (.h5, .hdf5, .hdf, .nxs): read as a DXchange scan's projections
    /// (`/exchange/data`, with the `hdf5` feature, `io::hdf5`); not written.
    Hdf5,
}

impl Format {
    pub fn from_path(path: &Path) -> Result<Format> {
        if is_zarr(path) {
            return Ok(Format::Zarr);
        }
        let ext = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
        match ext.as_str() {
            "npy" => Ok(Format::Npy),
            "tif" | "tiff" => Ok(Format::Tiff),
            "png" => Ok(Format::Png),
            "h5" | "hdf5" | "hdf" | "nxs" => Ok(Format::Hdf5),
            "" => Err(file_error(path, "has no file extension; lucent reads and writes .npy, .tif, .tiff, .png and .zarr (and reads .h5)".into())),
            _ => Err(file_error(path, format!("unknown extension `.{ext}`; lucent reads and writes .npy, .tif, .tiff, .png and .zarr (and reads .h5)"))),
        }
    }
}

/// Whether `path` lies in a Zarr store (a component ends in `.zarr`).
pub fn is_zarr(path: &Path) -> bool {
    path.components().any(|c| c.as_os_str().to_string_lossy().to_ascii_lowercase().ends_with(".zarr"))
}

/// Opens a file to read, with its length when it is a regular file (None for devices, pipes).
pub(crate) fn open(path: &Path) -> Result<(std::fs::File, Option<u64>)> {
    let file = std::fs::File::open(path).map_err(|e| file_error(path, format!("cannot read: {e}")))?;
    let meta = file.metadata().map_err(|e| file_error(path, format!("cannot read: {e}")))?;
    if meta.is_dir() {
        return Err(file_error(path, "is a directory, not a file".into()));
    }
    Ok((file, meta.is_file().then_some(meta.len())))
}

/// Reads any supported file, within the host memory budget ([`host_budget_bytes`]).
pub fn read(path: impl AsRef<Path>) -> Result<Loaded> {
    read_with_budget(path, host_budget_bytes()?)
}

/// Reads any supported file using at most about `budget` bytes of host memory: a file whose
/// header promises more is refused before anything is allocated.
pub fn read_with_budget(path: impl AsRef<Path>, budget: u64) -> Result<Loaded> {
    let path = path.as_ref();
    if is_zarr(path) {
        return zarr::read(path, budget).map(Loaded::Real);
    }
    // A directory has no extension to go by; say what it is.
    if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        return Err(file_error(path, "is a directory, not a file".into()));
    }
    match Format::from_path(path)? {
        Format::Npy => npy::read(path, budget),
        Format::Tiff => tiff::read(path, budget).map(Loaded::Real),
        Format::Png => png::read(path, budget).map(Loaded::Real),
        Format::Zarr => zarr::read(path, budget).map(Loaded::Real),
        Format::Hdf5 => hdf5::read(path, budget).map(Loaded::Real),
    }
}

/// Reads a file that must hold real data.
pub fn read_real(path: impl AsRef<Path>) -> Result<ArrayD<f32>> {
    let path = path.as_ref();
    match read(path)? {
        Loaded::Real(a) => Ok(a),
        Loaded::Complex(_) => Err(file_error(path, "holds complex data where real data was expected".into())),
    }
}

/// Reads a file that must hold complex data (complex64 or complex128 `.npy`).
pub fn read_complex(path: impl AsRef<Path>) -> Result<ArrayD<Complex32>> {
    let path = path.as_ref();
    match read(path)? {
        Loaded::Complex(a) => Ok(a),
        Loaded::Real(_) => Err(file_error(path, "holds real data where complex data was expected".into())),
    }
}

/// Fails unless the directory an output goes into exists (none named: the current one).
pub fn check_directory(path: &Path) -> Result<()> {
    match path.parent().filter(|d| !d.as_os_str().is_empty() && !d.is_dir()) {
        Some(dir) => Err(file_error(path, format!("the directory {} does not exist", dir.display()))),
        None => Ok(()),
    }
}

/// Fails unless a result of `ndim` axes (complex or real) can be written to `path`: its
/// directory exists and its format is known and holds that many axes of that kind. Commands ask
/// this of every output before they compute, so that a run does not fail, or write some
/// outputs and not others, at its end.
pub fn check_output(path: &Path, ndim: usize, complex: bool) -> Result<()> {
    check_directory(path)?;
    match Format::from_path(path)? {
        Format::Npy => Ok(()),
        Format::Hdf5 => Err(not_written(path)),
        _ if complex => Err(file_error(path, "a complex result can only be written to .npy".into())),
        Format::Png if ndim != 2 => Err(file_error(path, format!("a PNG holds a 2D image; this result has {ndim} axes (write .npy or .tif)"))),
        Format::Tiff if !(2..=3).contains(&ndim) => {
            Err(file_error(path, format!("TIFF holds 2D images or 3D stacks; this result has {ndim} axes (write .npy or .zarr)")))
        }
        _ => Ok(()),
    }
}

/// lucent reads HDF5 scans and writes its results in other formats.
fn not_written(path: &Path) -> crate::Error {
    file_error(path, "lucent reads HDF5 files but does not write them: write .npy, .tif or .zarr".into())
}

/// Writes real data: float32 `.npy`, float32 `.tif` (2D: one page, 3D: one page per slice), or an
/// 8-bit `.png` preview of a 2D array scaled min..max to 0..255 (see [`png::write`] for 16 bits).
pub fn write_real(path: impl AsRef<Path>, x: &ArrayViewD<f32>) -> Result<()> {
    let path = path.as_ref();
    match Format::from_path(path)? {
        Format::Npy => npy::write_f32(path, x),
        Format::Tiff => tiff::write_f32(path, x),
        Format::Png => png::write(path, x, png::Depth::Eight).map(|_| ()),
        Format::Zarr => zarr::write_like(path, x, None),
        Format::Hdf5 => Err(not_written(path)),
    }
}

/// [`write_real`] of a result computed from the file `input`: an OME-Zarr output from an
/// OME-Zarr input keeps its axes and coordinate transformations.
pub fn write_real_like(path: impl AsRef<Path>, x: &ArrayViewD<f32>, input: &Path) -> Result<()> {
    let path = path.as_ref();
    match (Format::from_path(path)?, is_zarr(input)) {
        (Format::Zarr, true) => zarr::write_like(path, x, Some(input)),
        _ => write_real(path, x),
    }
}

/// Writes labels (0 for the background, 1.. for regions): int32 `.npy` as scipy.ndimage.label
/// returns them, or uint32 `.tif` pages (what Fiji and napari read as a label image).
pub fn write_labels(path: impl AsRef<Path>, x: &ArrayViewD<u32>) -> Result<()> {
    let path = path.as_ref();
    match Format::from_path(path)? {
        Format::Npy => {
            if x.iter().any(|&l| l > i32::MAX as u32) {
                return Err(file_error(path, "labels beyond int32's range: write .tif (uint32)".into()));
            }
            npy::write_i32(path, &x.mapv(|l| l as i32).view())
        }
        Format::Tiff => tiff::write_u32(path, x),
        _ => Err(file_error(path, "labels are written to .npy (int32) or .tif (uint32)".into())),
    }
}

/// Writes complex data as complex64 `.npy` (the only format here that holds complex values).
pub fn write_complex(path: impl AsRef<Path>, x: &ArrayViewD<Complex32>) -> Result<()> {
    let path = path.as_ref();
    match Format::from_path(path)? {
        Format::Npy => npy::write_c32(path, x),
        _ => Err(file_error(path, "complex data can only be written to .npy".into())),
    }
}
