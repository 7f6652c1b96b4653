//! Host to device and back in pieces: large arrays stream through two staging buffers of about
//! [`GpuOptions::stream_piece_bytes`](super::GpuOptions::stream_piece_bytes) bytes in turn, all cores copying one piece while the GPU copies the other,
//! so no staging buffer the size of the data is ever allocated (pinned host memory: a 4 GiB one
//! took a second, serialised by the driver across GPUs), and each mapping waits for its own
//! copy only.

use super::Gpu;
use crate::error::{Error, Result};

impl Gpu {
    /// The window `start .. start + size` (every axis) of arrays stacked along axis 0 (`sources`:
    /// each buffer and its rows; `row_dims`: the other axes; `elem`: bytes per element), into
    /// `out`. Whole rows stream through two staging buffers of about a piece's bytes in
    /// turn (the GPU fills one while all cores empty the other), each row cropped to the window
    /// on the way, so no cropped copy is made on the device (a staging buffer the size of a
    /// 4 GiB volume took a second to allocate).
    pub(crate) fn read_window_into(
        &self,
        sources: &[(&wgpu::Buffer, usize)],
        row_dims: &[usize],
        elem: usize,
        start: &[usize],
        size: &[usize],
        out: &mut [u8],
    ) -> Result<()> {
        use rayon::prelude::*;
        let begin = std::time::Instant::now();
        let total_rows: usize = sources.iter().map(|s| s.1).sum();
        let full: Vec<usize> = std::iter::once(total_rows).chain(row_dims.iter().copied()).collect();
        if start.len() != full.len() || size.len() != full.len() || (0..full.len()).any(|d| start[d] + size[d] > full[d]) {
            return Err(Error::Shape(format!("window {start:?} + {size:?} leaves the stacked arrays {full:?}")));
        }
        let row_bytes = row_dims.iter().product::<usize>() * elem;
        let out_row = size[1..].iter().product::<usize>() * elem;
        if out.len() != size[0] * out_row {
            return Err(Error::Shape(format!("a {size:?} window of {elem}-byte elements to read into {} bytes", out.len())));
        }
        let runs = row_runs(row_dims, &start[1..], &size[1..], elem);
        // (buffer, first row in it, rows, first output row), at most `per_piece` rows each.
        let per_piece = (self.stream_piece(usize::MAX) / row_bytes.max(1)).max(1);
        let mut pieces = Vec::new();
        let mut first = 0;
        for &(buffer, rows) in sources {
            let (lo, hi) = (start[0].max(first), (start[0] + size[0]).min(first + rows));
            for r in (lo..hi).step_by(per_piece) {
                pieces.push((buffer, r - first, per_piece.min(hi - r), r - start[0]));
            }
            first += rows;
        }
        const USAGE: wgpu::BufferUsages = wgpu::BufferUsages::MAP_READ.union(wgpu::BufferUsages::COPY_DST);
        let staging_bytes = (pieces.iter().map(|p| p.2).max().unwrap_or(1) * row_bytes).div_ceil(4) as u64 * 4;
        let staging = [self.buffer("lucent.stream", staging_bytes.max(4), USAGE)?, self.buffer("lucent.stream", staging_bytes.max(4), USAGE)?];
        let copy = |i: usize| {
            let (buffer, row, rows, _) = pieces[i];
            let mut encoder = self.device.create_command_encoder(&Default::default());
            encoder.copy_buffer_to_buffer(buffer, (row * row_bytes) as u64, &staging[i % 2], 0, ((rows * row_bytes).div_ceil(4) * 4) as u64);
            self.queue.submit([encoder.finish()])
        };
        // Each piece waits for its own copy only, so the next piece's copy runs meanwhile.
        let mut copies = std::collections::VecDeque::new();
        if !pieces.is_empty() {
            copies.push_back(copy(0));
        }
        let group = (COPY_PIECE / row_bytes.max(1)).max(1);
        for i in 0..pieces.len() {
            if i + 1 < pieces.len() {
                copies.push_back(copy(i + 1));
            }
            let copied = copies.pop_front();
            let (_, _, rows, at) = pieces[i];
            let dst = &mut out[at * out_row..(at + rows) * out_row];
            map_and_then_after(self, &staging[i % 2], (rows * row_bytes) as u64, copied, |src| {
                dst.par_chunks_mut(group * out_row).zip(src.par_chunks(group * row_bytes)).for_each(|(d, s)| match &runs {
                    None => d.copy_from_slice(s),
                    Some((offsets, run)) => {
                        for (d, s) in d.chunks_mut(out_row).zip(s.chunks(row_bytes)) {
                            for (d, &o) in d.chunks_mut(*run).zip(offsets) {
                                d.copy_from_slice(&s[o..o + run]);
                            }
                        }
                    }
                })
            })?;
        }
        let [a, b] = staging;
        self.recycler.give(USAGE, a);
        self.recycler.give(USAGE, b);
        super::trace(&format!("read back {} MiB", out.len() >> 20), begin);
        Ok(())
    }
}

/// Where the window `start .. start + size` of one row of shape `row_dims` lies: the byte
/// offsets of its innermost runs and their length, `None` when it is the whole row.
fn row_runs(row_dims: &[usize], start: &[usize], size: &[usize], elem: usize) -> Option<(Vec<usize>, usize)> {
    if start.iter().all(|&s| s == 0) && size == row_dims {
        return None;
    }
    let last = row_dims.len() - 1;
    let mut offsets = vec![start[last] * elem];
    let mut stride = row_dims[last] * elem;
    for d in (0..last).rev() {
        offsets = (0..size[d]).flat_map(|i| offsets.iter().map(move |o| (start[d] + i) * stride + o)).collect();
        stride *= row_dims[d];
    }
    Some((offsets, size[last] * elem))
}

impl Gpu {
    /// Bytes of one staging piece for a transfer of `bytes` (a multiple of 4).
    fn stream_piece(&self, bytes: usize) -> usize {
        (self.options().stream_piece_bytes.min(self.max_buffer_bytes()) as usize / 4 * 4).clamp(4, bytes.max(4))
    }

    /// `bytes` into `buffer` from byte `offset` on: small data through the queue's own staging,
    /// large data in pieces through two reused staging buffers, each piece
    /// submitted as soon as all cores have copied it. `bytes` and `offset` are multiples of 4
    /// (every element type is); the copy is ordered before any later submission.
    pub(crate) fn write_streamed(&self, buffer: &wgpu::Buffer, offset: u64, bytes: &[u8]) -> Result<()> {
        self.write_in_pieces(buffer, offset, bytes, self.stream_piece(bytes.len()))
    }

    /// [`Gpu::write_streamed`] in one piece (up to the largest buffer): the host copies all of
    /// it while earlier work still runs, where pieces beyond the first two would wait for it.
    pub(crate) fn write_whole(&self, buffer: &wgpu::Buffer, offset: u64, bytes: &[u8]) -> Result<()> {
        let piece = (bytes.len().min(self.max_buffer_bytes() as usize) / 4 * 4).max(self.stream_piece(bytes.len()));
        self.write_in_pieces(buffer, offset, bytes, piece)
    }

    fn write_in_pieces(&self, buffer: &wgpu::Buffer, offset: u64, bytes: &[u8], piece: usize) -> Result<()> {
        use rayon::prelude::*;
        // (The queue's staging is made per write: 16 MiB through it took 7 ms, 64 MiB streamed 5.)
        if bytes.len() <= QUEUE_WRITE_BYTES.min(piece) || !bytes.len().is_multiple_of(4) || !offset.is_multiple_of(4) {
            self.queue.write_buffer(buffer, offset, bytes);
            return Ok(());
        }
        let t = std::time::Instant::now();
        const USAGE: wgpu::BufferUsages = wgpu::BufferUsages::MAP_WRITE.union(wgpu::BufferUsages::COPY_SRC);
        // A second staging buffer only where there is a second piece.
        let second = if bytes.len() > piece { piece } else { 4 };
        let staging = [self.buffer("lucent.upload", piece as u64, USAGE)?, self.buffer("lucent.upload", second as u64, USAGE)?];
        let mut last: [Option<wgpu::SubmissionIndex>; 2] = [None, None];
        let mut result = Ok(());
        for (j, src) in bytes.chunks(piece).enumerate() {
            let s = &staging[j % 2];
            if let Err(e) = map_after(self, s, wgpu::MapMode::Write, last[j % 2].take()) {
                result = Err(e);
                break;
            }
            {
                let mut view = match s.slice(..src.len() as u64).get_mapped_range_mut() {
                    Ok(view) => view,
                    Err(e) => {
                        result = Err(Error::DeviceLost(e.to_string()));
                        break;
                    }
                };
                let mut rest = view.slice(..);
                let mut pieces = Vec::new();
                for src in src.chunks(COPY_PIECE) {
                    let (dst, tail) = rest.split_at(src.len());
                    pieces.push((Piece(dst), src));
                    rest = tail;
                }
                pieces.into_par_iter().for_each(|(mut dst, src)| dst.0.copy_from_slice(src));
            }
            s.unmap();
            let mut encoder = self.device.create_command_encoder(&Default::default());
            encoder.copy_buffer_to_buffer(s, 0, buffer, offset + (j * piece) as u64, src.len() as u64);
            last[j % 2] = Some(self.queue.submit([encoder.finish()]));
        }
        let [a, b] = staging;
        self.recycler.give(USAGE, a);
        self.recycler.give(USAGE, b);
        super::trace(&format!("write {} MiB", bytes.len() >> 20), t);
        result
    }
}

/// Pieces host copies to and from the device are split into, one per rayon task: a single
/// thread copying into fresh staging memory ran at ~0.5 GB/s (page faults included).
const COPY_PIECE: usize = 16 << 20;
/// Writes up to this size go through the queue's own staging.
const QUEUE_WRITE_BYTES: usize = 1 << 20;

/// `queue.write_buffer(buffer, 0, bytes)`, streamed for large data ([`Gpu::write_streamed`]).
pub(crate) fn write_buffer(gpu: &Gpu, buffer: &wgpu::Buffer, bytes: &[u8]) -> Result<()> {
    gpu.write_streamed(buffer, 0, bytes)
}

/// A piece of write-only mapped staging memory, copied into by another thread.
struct Piece<'a>(wgpu::WriteOnly<'a, [u8]>);

// SAFETY: a `WriteOnly<[u8]>` is exclusive access to its bytes, like `&mut [u8]`, which is Send;
// wgpu implements Send for `WriteOnly<T>` with an implicitly sized T only, so not for slices.
unsafe impl Send for Piece<'_> {}

/// `bytes` as 4-byte words, copied by all cores for large data (reads of mapped memory).
pub(crate) fn words_from(bytes: &[u8]) -> Vec<u32> {
    use rayon::prelude::*;
    let mut words = crate::host::recycle::words(bytes.len().div_ceil(4));
    if let Some(last) = words.last_mut() {
        *last = 0; // a last partial word's other bytes
    }
    let dst: &mut [u8] = &mut bytemuck::cast_slice_mut::<u32, u8>(&mut words)[..bytes.len()];
    dst.par_chunks_mut(COPY_PIECE).zip(bytes.par_chunks(COPY_PIECE)).for_each(|(d, s)| d.copy_from_slice(s));
    words
}

/// Maps a MAP_READ buffer once submission `after` (None: all work submitted so far) has
/// finished, and hands its first `bytes` bytes to `read`.
pub(crate) fn map_and_then_after<T>(
    gpu: &Gpu,
    staging: &wgpu::Buffer,
    bytes: u64,
    after: Option<wgpu::SubmissionIndex>,
    read: impl FnOnce(&[u8]) -> T,
) -> Result<T> {
    map_after(gpu, staging, wgpu::MapMode::Read, after)?;
    let slice = staging.slice(..);
    let data = read(&slice.get_mapped_range().map_err(|e| Error::DeviceLost(e.to_string()))?[..bytes as usize]);
    staging.unmap();
    Ok(data)
}

/// Maps `buffer` for `mode` once submission `after` (the last that uses it; None: all work
/// submitted so far) has finished.
fn map_after(gpu: &Gpu, buffer: &wgpu::Buffer, mode: wgpu::MapMode, after: Option<wgpu::SubmissionIndex>) -> Result<()> {
    let (tx, rx) = std::sync::mpsc::channel();
    buffer.slice(..).map_async(mode, move |r| {
        let _ = tx.send(r);
    });
    let lost = |e: &dyn std::fmt::Display| Error::DeviceLost(e.to_string());
    // A buffer no unfinished work uses maps at once, without waiting for the queue to drain
    // (other work in flight: a pipeline's next band).
    gpu.device.poll(wgpu::PollType::Poll).map_err(|e| lost(&e))?;
    if let Ok(r) = rx.try_recv() {
        return r.map_err(|e| lost(&e));
    }
    gpu.device.poll(wgpu::PollType::Wait { submission_index: after, timeout: None }).map_err(|e| lost(&e))?;
    let mapped = match rx.try_recv() {
        Ok(r) => r,
        // Still in use by later work than `after`.
        Err(_) => {
            gpu.wait()?;
            rx.recv().map_err(|e| lost(&e))?
        }
    };
    mapped.map_err(|e| lost(&e))
}
