//! File I/O, chosen by extension: `.npy` (any numeric dtype in; float32 or complex64 out),
//! `.tif`/`.tiff` (grayscale; a multi-page file is a 3D stack, pages along the slowest axis) and
//! `.png` (8/16-bit grayscale in; 2D previews out, min..max scaled).
//!
//! Real data comes back as `ArrayD<f32>`, complex as `ArrayD<Complex32>`. Conversion to f32
//! rounds to the nearest value and never rescales: integers are exact up to 2^24 in magnitude,
//! f64 beyond f32's range becomes ±inf, booleans are 0/1, complex128 converts per component. A
//! u8 pixel of 200 reads as 200.0.
//!
//! Every output is written atomically ([`write_atomic`]): a failed write leaves no partial file.
//! Every failure is an [`Error::File`] naming the path and the problem.
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

mod atomic;
pub mod npy;
pub mod png;
pub mod tiff;
pub mod zarr;

use std::path::Path;

use ndarray::{ArrayD, ArrayViewD};
use num_complex::Complex32;

pub use atomic::write_atomic;

use crate::error::{Error, Result};

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
    /// A Zarr array or OME-Zarr image: any path with a component ending in .zarr ([`zarr`]).
    Zarr,
}

impl Format {
    pub fn from_path(path: &Path) -> Result<Format> {
        if zarr::is_zarr(path) {
            return Ok(Format::Zarr);
        }
        let ext = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
        match ext.as_str() {
            "npy" => Ok(Format::Npy),
            "tif" | "tiff" => Ok(Format::Tiff),
            "png" => Ok(Format::Png),
            _ => Err(file_error(path, format!("unknown extension `.{ext}`; lucent reads and writes .npy, .tif, .tiff, .png and .zarr"))),
        }
    }
}

/// A zeroed vector for a large result, its memory in transparent huge pages where Linux offers
/// them on request (`madvise` mode): the first write into a fresh 4 GiB result otherwise takes
/// a million page faults, which contend when several GPUs stream into one array.
pub fn zeroed_vec<T: bytemuck::Zeroable>(len: usize) -> Vec<T> {
    let v = bytemuck::zeroed_vec::<T>(len);
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let (start, bytes) = (v.as_ptr() as usize, std::mem::size_of_val(v.as_slice()));
        let (first, end) = (start.next_multiple_of(HUGE), (start + bytes) / HUGE * HUGE);
        if end > first {
            // SAFETY: advice on whole pages inside this vector's own (untouched, zeroed)
            // allocation; it changes how the pages are backed, never their contents.
            unsafe { libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE) };
        }
    }
    v
}

/// The host memory a reader may use for one file, in bytes: `LUCENT_HOST_BUDGET_BYTES` if set,
/// else three quarters of physical memory (from /proc/meminfo on Linux, 16 GiB elsewhere).
pub fn host_budget_bytes() -> Result<u64> {
    if let Ok(v) = std::env::var("LUCENT_HOST_BUDGET_BYTES") {
        return v.trim().parse::<u64>().ok().filter(|&b| b > 0).ok_or_else(|| {
            Error::Invalid(format!("LUCENT_HOST_BUDGET_BYTES=`{v}` is not a positive number of bytes"))
        });
    }
    Ok(physical_memory().map_or(16 << 30, |m| m / 4 * 3))
}

/// Fails unless an array of `dims` with elements of `elem_bytes` bytes fits the host budget: for
/// results a computation is about to allocate (an input's size is checked by its reader).
pub fn check_host_array(what: &str, dims: &[usize], elem_bytes: u64) -> Result<()> {
    let budget = host_budget_bytes()?;
    let bytes = dims.iter().try_fold(elem_bytes, |b, &d| b.checked_mul(d as u64));
    check_budget(&format!("{what} (shape {dims:?})"), bytes, budget).map_err(Error::Invalid)
}

/// Fails unless `bytes` (None: the computation of the size overflowed) of host memory fit the
/// host budget: for a computation's working set, summed with checked arithmetic by its plan.
pub fn check_host_bytes(what: &str, bytes: Option<u64>) -> Result<()> {
    check_budget(what, bytes, host_budget_bytes()?).map_err(Error::Invalid)
}

/// The most host memory this process has held so far (VmHWM of /proc/self/status), in bytes,
/// where the platform says.
pub fn host_peak_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.trim_start_matches("VmHWM:").trim().trim_end_matches("kB").trim().parse().ok()?;
    kib.checked_mul(1024)
}

/// MemTotal of /proc/meminfo in bytes, where there is one.
fn physical_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.trim_start_matches("MemTotal:").trim().trim_end_matches("kB").trim().parse().ok()?;
    kib.checked_mul(1024)
}

/// Fails unless `bytes` of host memory fit in `budget`; `what` says what they are for. The
/// message has no path: the readers add it.
pub(crate) fn check_budget(what: &str, bytes: Option<u64>, budget: u64) -> std::result::Result<(), String> {
    match bytes {
        Some(b) if b <= budget => Ok(()),
        Some(b) => Err(format!(
            "{what} needs {} of host memory, beyond the limit of {}; set LUCENT_HOST_BUDGET_BYTES to change the limit",
            human(b),
            human(budget)
        )),
        None => Err(format!("{what} overflows: its size in bytes is beyond 64 bits")),
    }
}

/// "N bytes", with the size in MiB or GiB beside it where that reads more easily.
fn human(bytes: u64) -> String {
    match bytes {
        0..0x10_0000 => format!("{bytes} bytes"),
        0x10_0000..0x4000_0000 => format!("{bytes} bytes ({:.1} MiB)", bytes as f64 / (1u64 << 20) as f64),
        _ => format!("{bytes} bytes ({:.1} GiB)", bytes as f64 / (1u64 << 30) as f64),
    }
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
    if zarr::is_zarr(path) {
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

/// Writes real data: float32 `.npy`, float32 `.tif` (2D: one page, 3D: one page per slice), or an
/// 8-bit `.png` preview of a 2D array scaled min..max to 0..255 (see [`png::write`] for 16 bits).
pub fn write_real(path: impl AsRef<Path>, x: &ArrayViewD<f32>) -> Result<()> {
    let path = path.as_ref();
    match Format::from_path(path)? {
        Format::Npy => npy::write_f32(path, x),
        Format::Tiff => tiff::write_f32(path, x),
        Format::Png => png::write(path, x, png::Depth::Eight).map(|_| ()),
        Format::Zarr => zarr::write(path, x, None),
    }
}

/// [`write_real`] of a result computed from the file `input`: an OME-Zarr output from an
/// OME-Zarr input keeps its axes and coordinate transformations.
pub fn write_real_like(path: impl AsRef<Path>, x: &ArrayViewD<f32>, input: &Path) -> Result<()> {
    let path = path.as_ref();
    match (Format::from_path(path)?, zarr::is_zarr(input)) {
        (Format::Zarr, true) => zarr::write(path, x, Some(zarr::Source::open(input)?.ome())),
        _ => write_real(path, x),
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

pub(crate) fn file_error(path: &Path, message: String) -> Error {
    Error::File { path: path.display().to_string(), message }
}
