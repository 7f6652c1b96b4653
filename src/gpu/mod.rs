//! The GPU context, device arrays, the kernel registry (what build.rs reflected out of every
//! WGSL kernel) and the pipeline cache.

mod array;
mod cache;
mod context;
mod options;
mod pipelines;
mod recycle;
pub mod registry;
mod transfer;
mod tuning;

pub use array::{f32_pair, narrowed, narrowed_complex, u16_words, widened, widened_complex, Dtype, GpuArray, Real, Shape};
pub(crate) use array::{row_major_bytes, with_dim};
pub use cache::content_hash;
pub(crate) use context::STORAGE_USAGE;
pub use context::{AdapterSummary, Gpu};
#[cfg(test)]
pub(crate) use options::memory_budgets;
pub use options::GpuOptions;
pub(crate) use pipelines::Pipeline;
pub use pipelines::PipelineStats;
pub(crate) use recycle::{Pooled, Recycler};
pub use registry::{BindingInfo, BindingKind, KernelInfo};
pub(crate) use transfer::{map_and_then_after, words_from, write_buffer};
pub use tuning::Tuning;

/// Drops `value` (device buffers, compiled runs) on a thread of its own: freeing the many GiB of a
/// large run takes the driver a noticeable time (~0.4 s for RL on 1024³), which the caller
/// holding its result need not wait for.
pub(crate) fn free_in_background<T: Send + 'static>(value: T) {
    let spawned = std::thread::Builder::new().name("lucent-free".into()).spawn(move || {
        let start = std::time::Instant::now();
        drop(value);
        trace("freed in the background", start);
    });
    // No thread to be had: free here.
    drop(spawned);
}

/// Runs `work` for each of `workers` GPU workers, each on a (scoped) thread of its own; one
/// worker runs on the calling thread. (A rayon pool of its own per worker, so that one worker's
/// host copies would not queue behind another's, changed nothing measurable: BENCHMARKS.md.)
pub(crate) fn on_workers(workers: usize, work: impl Fn(usize) + Sync) {
    if workers <= 1 {
        return work(0);
    }
    std::thread::scope(|scope| {
        for worker in 0..workers {
            let work = &work;
            scope.spawn(move || work(worker));
        }
    });
}

/// With `LUCENT_TRACE=1`, prints how long a host-side phase took (compile, upload, wait,
/// download) to stderr: where the time of one-shot runs goes.
pub(crate) fn trace(what: &str, since: std::time::Instant) {
    trace_ms(what, crate::host::ms_since(since));
}

/// [`trace`] of a time already measured (with `LUCENT_PROFILE=1` too, each node's GPU time).
pub(crate) fn trace_ms(what: &str, ms: f64) {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *ON.get_or_init(|| std::env::var("LUCENT_TRACE").is_ok_and(|v| v == "1")) {
        eprintln!("lucent.trace {what} {ms:.3} ms");
    }
}
