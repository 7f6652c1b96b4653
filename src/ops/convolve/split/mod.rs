//! scipy.signal.fftconvolve of host volumes whose FFT working set does not fit the device: the
//! padded volume is split along its slowest axis into P parts by decimation in frequency (Karas
//! and Svoboda, "Convolution of large 3D images on GPU and its decomposition", 2011), each part is
//! convolved on its own on a GPU, and the parts are recombined exactly on the host.
//!
//! - [`plan`]: how many parts, of what shape, and what one part holds in memory.
//! - [`host`]: the math, and the host loops that fold the input into parts and add the parts'
//!   results back into the output (on all cores, through rayon).
//! - [`run`]: choosing P on the devices and scheduling the parts over the GPUs, with the host's
//!   folding and recombination overlapping the GPUs' work.

mod host;
mod plan;
mod run;

use ndarray::{ArrayD, ArrayViewD};
use serde::Serialize;

use super::Mode;
use crate::error::Result;
use crate::gpu::Gpu;
use crate::placement::Progress;

#[cfg(test)]
pub use host::{fold, fold_reusing, recombine, reference};
#[cfg(test)]
pub use plan::{max_parts, SplitPlan};

/// How to split. The defaults choose P automatically (1, the whole array in one run, when it fits).
#[derive(Clone, Debug, Default)]
pub struct SplitOptions {
    /// Force P parts (1: the whole array in one run).
    pub parts: Option<usize>,
    /// Device memory one part (or the whole run) may hold, in bytes, on top of the per-buffer
    /// limit of each device. A GPU holds up to `in_flight` parts. Whatever is asked, a part also
    /// fits the device memory budget (`Gpu::memory_budget_bytes`), and a GPU holds no more parts
    /// at once than its budget has room for.
    pub max_part_bytes: Option<u64>,
    /// Parts each GPU holds at once, each with its own buffers (default 2: while one part
    /// computes, the other's upload and download and the host's handling of them proceed, so
    /// the device queue never runs dry). A GPU holds up to this many times the part's peak; a
    /// further part that does not fit is simply not started.
    pub in_flight: Option<usize>,
    /// Fill every temporary with NaN before its first use (tests).
    pub poison: bool,
}

/// Parts in flight per GPU unless [`SplitOptions::in_flight`] says otherwise.
pub const DEFAULT_IN_FLIGHT: usize = 2;

/// Where the time went, per part and in total (serialised into `lucent convolve --json`).
#[derive(Clone, Debug, Serialize)]
pub struct SplitReport {
    /// P (1: the whole array in one run).
    pub parts: usize,
    /// Parts computed on a GPU: 0..=P/2 (the others are their conjugate mirrors).
    pub computed_parts: usize,
    /// N, the circular length along axis 0.
    pub padded_len: usize,
    /// M = N / P, the rows of one part.
    pub part_len: usize,
    /// Shape of one part's transform (M and the padded other axes).
    pub part_dims: Vec<usize>,
    /// One entry per computed part, in the order they finished.
    pub per_part: Vec<PartTiming>,
    /// Host time folding slabs into parts (summed over the groups folded; overlaps the GPU).
    pub prepare_ms: f64,
    /// Host time adding parts into the output (summed over the sweeps; overlaps the GPU).
    pub recombine_ms: f64,
    pub total_ms: f64,
    /// "index: name" of every adapter that ran a part.
    pub adapters: Vec<String>,
    /// The largest device memory one part held.
    pub peak_bytes: u64,
    /// Parts each GPU was asked to hold at once (it holds up to this many times `peak_bytes`,
    /// fewer where its device memory budget has room for fewer).
    pub in_flight: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct PartTiming {
    pub part: usize,
    /// Index of the GPU in the list given (two devices may be the same adapter).
    pub worker: usize,
    /// "index: name" of the adapter that ran it.
    pub adapter: String,
    /// Host wall time of the upload, run and download.
    pub ms: f64,
    /// GPU time of the dispatches, when the adapter has timestamps.
    pub gpu_ms: Option<f64>,
    pub peak_bytes: u64,
}

/// scipy.signal.fftconvolve(a, k, mode) of finite f32 host arrays on `gpus`, split along axis 0
/// when the whole run does not fit (see the module docs). With P = 1 it is [`super::convolve_host`].
pub fn convolve_split(gpus: &[Gpu], a: &ArrayViewD<f32>, k: &ArrayViewD<f32>, mode: Mode, opts: &SplitOptions) -> Result<(ArrayD<f32>, SplitReport)> {
    convolve_split_with_progress(gpus, a, k, mode, opts, &|_| {})
}

/// [`convolve_split`] calling `progress` (stage "parts": done, of how many to compute) as each
/// part is added in.
pub fn convolve_split_with_progress(
    gpus: &[Gpu],
    a: &ArrayViewD<f32>,
    k: &ArrayViewD<f32>,
    mode: Mode,
    opts: &SplitOptions,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<(ArrayD<f32>, SplitReport)> {
    run::convolve(gpus, a, k, mode, opts, progress)
}
