//! How a `Gpu` is opened and behaves, as one value: read from the environment once
//! ([`GpuOptions::from_env`], at the edge: `Gpu::new`, the CLI), or built by an app or a test.

use std::path::PathBuf;

use crate::error::{Error, Result};

use super::Tuning;

/// Options of a [`super::Gpu`]. `Default` is what an unset environment gives.
#[derive(Clone, Debug)]
pub struct GpuOptions {
    /// Adapter: a name substring (case-insensitive) or an index from `Gpu::list_adapters`;
    /// None: the best (discrete, integrated, virtual, CPU). `LUCENT_ADAPTER`.
    pub adapter: Option<String>,
    /// Lowers the largest buffer lucent creates (forces tiled and split paths).
    /// `LUCENT_MAX_BUFFER_BYTES`.
    pub max_buffer_bytes: Option<u64>,
    /// Device memory the in-core paths may plan to use; beyond it they go to tiles or the split
    /// (tests lower it to reach those paths). None: for a CPU adapter the host budget, for
    /// others no limit is assumed and an allocation that fails sends the work to tiles.
    /// `LUCENT_DEVICE_MEMORY_BYTES` (one number for every adapter).
    pub device_memory_bytes: Option<u64>,
    /// Budgets per adapter, for GPUs of unequal memory or one kept partly free: entry `i` for
    /// adapter `i` (the order of `Gpu::list_adapters`), None for `device_memory_bytes`; what
    /// `Gpu::open` resolves into `device_memory_bytes` for the adapter it opens.
    /// `LUCENT_DEVICE_MEMORY_BYTES` as a comma list, an empty entry for the default (`,16000000000`:
    /// adapter 1 limited to 16 GB).
    pub device_memory_per_adapter: Vec<Option<u64>>,
    /// Device memory is sub-allocated from blocks of this many MiB (4, the least wgpu allows):
    /// arrays in wgpu's default 128-256 MiB blocks ran strided FFT passes up to a third slower
    /// depending on where they landed (BENCHMARKS.md). `LUCENT_MEMBLOCK_MIB`.
    pub memblock_mib: u64,
    /// Bytes of freed device buffers kept for reuse (0: none; None: a quarter of the memory
    /// budget where the device tells its memory, at least 4 GiB). Kept buffers are released when
    /// an allocation runs out of memory. `LUCENT_RECYCLE_BYTES`.
    pub recycle_bytes: Option<u64>,
    /// Host-device transfers of large arrays stream through two staging buffers of this many
    /// bytes in turn (at least 4 KiB; tests lower it to reach many pieces).
    /// `LUCENT_STREAM_PIECE_BYTES`.
    pub stream_piece_bytes: u64,
    /// Where compiled pipelines are kept between processes, where the backend offers a
    /// pipeline cache (Vulkan); None: not kept. Safe to delete: the driver checks what it
    /// loads and recompiles what does not match. `LUCENT_CACHE_DIR` (empty: off), else the
    /// user's cache directory.
    pub cache_dir: Option<PathBuf>,
    /// Fill every temporary with NaN when it is handed out, so a kernel that leaves an element
    /// unwritten shows up in the result (tests). `LUCENT_POISON=1`.
    pub poison: bool,
    /// Time every dispatch with GPU timestamps, where the adapter has them. `LUCENT_PROFILE=1`.
    pub profile: bool,
    /// Write each kernel's WGSL to this directory when it is first compiled (inspection).
    /// `LUCENT_DUMP_SHADERS`.
    pub dump_shaders: Option<PathBuf>,
    /// Leave the adapter's f64 (`SHADER_F64`) unused: f64 data is computed in f32, as on
    /// devices without it (tests of that path, A/B measurements). `LUCENT_NO_F64=1`.
    pub no_f64: bool,
    /// Overrides of the FFT planner's defaults (A/B measurements, tests). `LUCENT_FFT_*`.
    pub tuning: Tuning,
}

impl Default for GpuOptions {
    fn default() -> Self {
        GpuOptions {
            adapter: None,
            max_buffer_bytes: None,
            device_memory_bytes: None,
            device_memory_per_adapter: Vec::new(),
            memblock_mib: 4,
            recycle_bytes: None,
            stream_piece_bytes: 128 << 20,
            cache_dir: user_cache_dir(),
            poison: false,
            profile: false,
            dump_shaders: None,
            no_f64: false,
            tuning: Tuning::default(),
        }
    }
}

impl GpuOptions {
    /// The defaults, overridden by the `LUCENT_*` variables named on each field (unset or empty:
    /// the default). A value that does not parse is an error naming the variable.
    pub fn from_env() -> Result<GpuOptions> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let number = |name: &str, least: u64| -> Result<Option<u64>> {
            match var(name) {
                None => Ok(None),
                Some(v) => match v.trim().parse::<u64>() {
                    Ok(n) if n >= least => Ok(Some(n)),
                    _ => Err(Error::Invalid(format!("{name}={v}: expected a whole number of at least {least}"))),
                },
            }
        };
        let flag = |name: &str| -> Result<bool> {
            match var(name).as_deref().map(str::trim) {
                None | Some("0") => Ok(false),
                Some("1") => Ok(true),
                Some(v) => Err(Error::Invalid(format!("{name}={v}: expected 0 or 1"))),
            }
        };
        // Read by the slab planner of the convolution; an unparsable value is an error here, once.
        number("LUCENT_SLAB_MIB", 1)?;
        let (all, per_adapter) = var("LUCENT_DEVICE_MEMORY_BYTES").map_or(Ok((None, Vec::new())), |v| memory_budgets(&v))?;
        let d = GpuOptions::default();
        Ok(GpuOptions {
            adapter: var("LUCENT_ADAPTER"),
            max_buffer_bytes: number("LUCENT_MAX_BUFFER_BYTES", 16)?,
            device_memory_bytes: all,
            device_memory_per_adapter: per_adapter,
            memblock_mib: number("LUCENT_MEMBLOCK_MIB", 1)?.unwrap_or(d.memblock_mib),
            recycle_bytes: number("LUCENT_RECYCLE_BYTES", 0)?.or(d.recycle_bytes),
            stream_piece_bytes: number("LUCENT_STREAM_PIECE_BYTES", 4096)?.unwrap_or(d.stream_piece_bytes),
            cache_dir: match std::env::var_os("LUCENT_CACHE_DIR") {
                Some(dir) if dir.is_empty() => None,
                Some(dir) => Some(PathBuf::from(dir)),
                None => d.cache_dir,
            },
            poison: flag("LUCENT_POISON")?,
            profile: flag("LUCENT_PROFILE")?,
            dump_shaders: std::env::var_os("LUCENT_DUMP_SHADERS").filter(|d| !d.is_empty()).map(PathBuf::from),
            no_f64: flag("LUCENT_NO_F64")?,
            tuning: Tuning::from_env()?,
        })
    }
}

impl GpuOptions {
    /// The memory budget for adapter `index`: its own entry in `device_memory_per_adapter`, else
    /// `device_memory_bytes`.
    pub fn budget_of(&self, index: usize) -> Option<u64> {
        self.device_memory_per_adapter.get(index).copied().flatten().or(self.device_memory_bytes)
    }
}

/// `LUCENT_DEVICE_MEMORY_BYTES`: one budget for every adapter, or a comma list of budgets per
/// adapter (empty entries: the default), as (`device_memory_bytes`, `device_memory_per_adapter`).
pub(crate) fn memory_budgets(v: &str) -> Result<(Option<u64>, Vec<Option<u64>>)> {
    let entries = v
        .split(',')
        .map(|entry| match entry.trim() {
            "" => Some(None),
            n => n.parse::<u64>().ok().filter(|&n| n >= 16).map(Some),
        })
        .collect::<Option<Vec<_>>>()
        .filter(|e| e.iter().any(Option::is_some))
        .ok_or_else(|| {
            Error::Invalid(format!(
                "LUCENT_DEVICE_MEMORY_BYTES={v}: expected a whole number of at least 16, or a comma list of them (one per adapter, empty for the default)"
            ))
        })?;
    Ok(if entries.len() == 1 { (entries[0], Vec::new()) } else { (None, entries) })
}

/// The platform's per-user cache directory, `lucent` inside it: `$XDG_CACHE_HOME` or
/// `~/.cache` on Linux and BSDs, `~/Library/Caches` on macOS, `%LOCALAPPDATA%` on Windows.
fn user_cache_dir() -> Option<PathBuf> {
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let base = if cfg!(windows) {
        env("LOCALAPPDATA")
    } else if cfg!(target_os = "macos") {
        env("HOME").map(|h| h.join("Library/Caches"))
    } else {
        env("XDG_CACHE_HOME").or_else(|| env("HOME").map(|h| h.join(".cache")))
    };
    base.map(|b| b.join("lucent"))
}
