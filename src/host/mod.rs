//! The host machine, below the engine: its memory (the budget a computation or a reader may use,
//! zeroed vectors for large results in huge pages, the process's peak) and its files (atomic
//! writes, [`write_atomic`]) and its clock ([`ms_since`], the one millisecond timer of every
//! report). Everything above uses these, the file formats of `io` included; nothing here knows a
//! file format.

mod atomic;
pub mod recycle;
pub mod temporaries;

use std::path::Path;

#[cfg(feature = "zarr")]
pub(crate) use atomic::move_into_place;
pub use atomic::{all_or_nothing, commit_temporary, discard_temporary, temporary_path, write_atomic, Output};

use crate::error::{Error, Result};

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
/// else three quarters of physical memory (from /proc/meminfo on Linux, 16 GiB elsewhere), and
/// no more than three quarters of the address space the process has left under its limit
/// (`ulimit -v`, Linux): past it an allocation aborts the process instead of failing cleanly.
pub fn host_budget_bytes() -> Result<u64> {
    if let Ok(v) = std::env::var("LUCENT_HOST_BUDGET_BYTES") {
        return v
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|&b| b > 0)
            .ok_or_else(|| Error::Invalid(format!("LUCENT_HOST_BUDGET_BYTES=`{v}` is not a positive number of bytes")));
    }
    let physical = physical_memory().map_or(16 << 30, |m| m / 4 * 3);
    Ok(address_space_left().map_or(physical, |left| physical.min(left / 4 * 3)))
}

/// The address space this process may still map under its limit (RLIMIT_AS less what it maps
/// now), or None without a limit.
#[cfg(target_os = "linux")]
fn address_space_left() -> Option<u64> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes one rlimit into the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } != 0 || limit.rlim_cur == libc::RLIM_INFINITY {
        return None;
    }
    // /proc/self/statm: the mapped size in pages first.
    let pages: u64 = std::fs::read_to_string("/proc/self/statm").ok()?.split_whitespace().next()?.parse().ok()?;
    // SAFETY: sysconf only reads a system constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
    #[allow(clippy::unnecessary_cast)] // rlim_t is u64 here, narrower on some targets
    let limit = limit.rlim_cur as u64;
    Some(limit.saturating_sub(pages.saturating_mul(page)))
}

#[cfg(not(target_os = "linux"))]
fn address_space_left() -> Option<u64> {
    None
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

/// Milliseconds since `t` (host wall time): the unit of every `*_ms` a report holds.
/// The threads that read files, apart from rayon's global pool and from the writers': a file
/// call blocks its thread (a write on a disk at its write-back limit, for seconds), and sharing
/// a pool stalled the host copies to and from the device beside them, and the reads of the next
/// band behind the writes of the last. As many as the cores, in each pool.
pub fn read_pool() -> &'static rayon::ThreadPool {
    static POOL: std::sync::OnceLock<rayon::ThreadPool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| file_pool("read"))
}

/// The threads that write files ([`read_pool`]).
pub fn write_pool() -> &'static rayon::ThreadPool {
    static POOL: std::sync::OnceLock<rayon::ThreadPool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| file_pool("write"))
}

fn file_pool(what: &'static str) -> rayon::ThreadPool {
    let threads = std::thread::available_parallelism().map_or(4, |n| n.get());
    rayon::ThreadPoolBuilder::new().num_threads(threads).thread_name(move |i| format!("lucent-{what}-{i}")).build().expect("a thread pool for file I/O")
}

/// How a volume's values are stored: f32, or IEEE half precision (tomocupy's `--dtype
/// float16`: half the bytes to move and write, 11 significant bits, ±65504 at most).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize)]
pub enum Precision {
    #[default]
    F32,
    F16,
}

impl Precision {
    /// numpy's name for it.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "float32",
            Precision::F16 => "float16",
        }
    }
}

/// A slab of a volume's slices (slices, rows, cols) in host memory, as it is written: f32
/// values, or IEEE binary16 bit patterns.
#[derive(Clone, Debug, PartialEq)]
pub enum Slab {
    F32(ndarray::Array3<f32>),
    F16(ndarray::Array3<u16>),
}

impl Slab {
    pub fn shape(&self) -> [usize; 3] {
        let s = match self {
            Slab::F32(a) => a.shape(),
            Slab::F16(a) => a.shape(),
        };
        [s[0], s[1], s[2]]
    }

    pub fn precision(&self) -> Precision {
        match self {
            Slab::F32(_) => Precision::F32,
            Slab::F16(_) => Precision::F16,
        }
    }

    /// Gives the slab's memory back for reuse ([`recycle`]).
    pub fn give_back(self) {
        match self {
            Slab::F32(a) => recycle::give_back(a.into_raw_vec_and_offset().0),
            Slab::F16(a) => recycle::give_back(a.into_raw_vec_and_offset().0),
        }
    }

    /// The values' bytes in row-major order, in this machine's byte order.
    pub fn bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        fn of<T: bytemuck::Pod>(a: &ndarray::Array3<T>) -> std::borrow::Cow<'_, [u8]> {
            match a.as_slice() {
                Some(s) => std::borrow::Cow::Borrowed(bytemuck::cast_slice(s)),
                None => std::borrow::Cow::Owned(bytemuck::cast_slice(&a.iter().copied().collect::<Vec<T>>()).to_vec()),
            }
        }
        match self {
            Slab::F32(a) => of(a),
            Slab::F16(a) => of(a),
        }
    }
}

pub fn ms_since(t: std::time::Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
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
        Some(b) => {
            Err(format!("{what} needs {} of host memory, beyond the limit of {}; set LUCENT_HOST_BUDGET_BYTES to change the limit", human(b), human(budget)))
        }
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

/// An [`Error::File`] naming `path` and the problem.
pub(crate) fn file_error(path: &Path, message: String) -> Error {
    Error::File { path: path.display().to_string(), message }
}
