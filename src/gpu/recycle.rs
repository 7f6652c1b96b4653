//! Device buffers kept after their last user drops them (a compiled recording, a device array),
//! for the next buffer of the same size. Allocating device memory (and touching it the first time) costs far more than the
//! work of a one-shot run on a large GPU: a 256³ convolution from host arrays spent most of its
//! ~0.7 s on fresh buffers for ~2 ms of kernels. Repeated runs (split parts, tiles, the CLI
//! over a stack, benchmarks) now take their buffers from here.

use std::sync::{Arc, Mutex};

#[derive(Debug)]
pub(crate) struct Recycler {
    cap: u64,
    kept: Mutex<Kept>,
    /// Bytes of the pooled buffers in use (not kept here).
    live: std::sync::atomic::AtomicU64,
}

#[derive(Debug, Default)]
struct Kept {
    bytes: u64,
    buffers: Vec<(wgpu::BufferUsages, wgpu::Buffer)>,
}

impl Recycler {
    pub(crate) fn new(cap: u64) -> Recycler {
        Recycler { cap, kept: Mutex::new(Kept::default()), live: Default::default() }
    }

    /// A kept buffer of exactly `size` bytes and `usage`, if there is one. Its contents are
    /// stale: the executor writes every buffer before reading it (tests poison them to check).
    pub(crate) fn take(&self, size: u64, usage: wgpu::BufferUsages) -> Option<wgpu::Buffer> {
        let mut kept = self.kept.lock().unwrap();
        let at = kept.buffers.iter().position(|(u, b)| *u == usage && b.size() == size)?;
        let (_, buffer) = kept.buffers.swap_remove(at);
        kept.bytes -= size;
        Some(buffer)
    }

    /// Device bytes held by pooled buffers: in use, and kept for reuse.
    pub(crate) fn held_bytes(&self) -> (u64, u64) {
        (self.live.load(std::sync::atomic::Ordering::Relaxed), self.kept.lock().unwrap().bytes)
    }

    /// Releases every kept buffer (an allocation failed: the memory is wanted back).
    pub(crate) fn clear(&self) -> bool {
        let mut kept = self.kept.lock().unwrap();
        let had = !kept.buffers.is_empty();
        kept.buffers.clear();
        kept.bytes = 0;
        had
    }

    /// Keeps `buffer` for a later `take`, unless that would exceed the cap (then the oldest
    /// kept buffers are released first).
    pub(crate) fn give(&self, usage: wgpu::BufferUsages, buffer: wgpu::Buffer) {
        let size = buffer.size();
        if size > self.cap {
            return;
        }
        let mut kept = self.kept.lock().unwrap();
        while kept.bytes + size > self.cap {
            let (_, old) = kept.buffers.remove(0);
            kept.bytes -= old.size();
        }
        kept.bytes += size;
        kept.buffers.push((usage, buffer));
    }
}

/// A storage buffer that goes back to its GPU's recycler when its last user drops it.
#[derive(Debug)]
pub(crate) struct Pooled {
    buffer: Option<wgpu::Buffer>,
    recycler: Arc<Recycler>,
}

impl Pooled {
    pub(crate) fn new(buffer: wgpu::Buffer, recycler: Arc<Recycler>) -> Pooled {
        recycler.live.fetch_add(buffer.size(), std::sync::atomic::Ordering::Relaxed);
        Pooled { buffer: Some(buffer), recycler }
    }
}

impl std::ops::Deref for Pooled {
    type Target = wgpu::Buffer;
    fn deref(&self) -> &wgpu::Buffer {
        self.buffer.as_ref().expect("a pooled buffer until dropped")
    }
}

impl Drop for Pooled {
    fn drop(&mut self) {
        if let Some(b) = self.buffer.take() {
            self.recycler.live.fetch_sub(b.size(), std::sync::atomic::Ordering::Relaxed);
            self.recycler.give(super::STORAGE_USAGE, b);
        }
    }
}
