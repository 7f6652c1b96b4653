//! Large host buffers given back for reuse within a run. On some machines (virtual ones most)
//! the kernel hands out fresh memory at ~3-4 GB/s, zeroing every page: a pipeline that reads a
//! band, downloads its slices and writes them, each into fresh memory, spent more time there
//! than on the device. Buffers of 4-byte and of 2-byte elements are kept apart (a vector keeps
//! its element alignment); contents of a reused buffer are stale, so callers overwrite all of
//! it.

use std::sync::Mutex;

/// Buffers below this are not worth keeping.
const SMALLEST: usize = 16 << 20;
/// Buffers kept per element size at most.
const KEPT: usize = 8;

static WORDS: Mutex<Vec<Vec<u32>>> = Mutex::new(Vec::new());
static HALVES: Mutex<Vec<Vec<u16>>> = Mutex::new(Vec::new());

fn take<T: bytemuck::Zeroable>(pool: &Mutex<Vec<Vec<T>>>, len: usize) -> Vec<T> {
    if len * size_of::<T>() >= SMALLEST {
        let mut kept = pool.lock().unwrap_or_else(|e| e.into_inner());
        // The smallest that holds `len`, within twice of it (more would idle).
        let best = kept.iter().enumerate().filter(|(_, v)| v.len() >= len && v.len() <= 2 * len).min_by_key(|(_, v)| v.len()).map(|(i, _)| i);
        if let Some(i) = best {
            let mut v = kept.swap_remove(i);
            v.truncate(len);
            return v;
        }
    }
    super::zeroed_vec(len)
}

fn keep<T>(pool: &Mutex<Vec<Vec<T>>>, v: Vec<T>) {
    if v.len() * size_of::<T>() >= SMALLEST {
        let mut kept = pool.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() == KEPT {
            kept.remove(0);
        }
        kept.push(v);
    }
}

/// `len` 4-byte words: a buffer given back earlier (stale contents) or fresh zeroed memory.
pub fn words(len: usize) -> Vec<u32> {
    take(&WORDS, len)
}

/// `len` 2-byte values, as [`words`].
pub fn halves(len: usize) -> Vec<u16> {
    take(&HALVES, len)
}

/// `len` f32 values, as [`words`].
pub fn floats(len: usize) -> Vec<f32> {
    bytemuck::allocation::cast_vec(words(len))
}

/// Keeps `v`'s memory for [`words`], [`halves`] or [`floats`] (elements of 4 or 2 bytes;
/// anything else, or small, is dropped).
pub fn give_back<T: bytemuck::Pod>(v: Vec<T>) {
    match (size_of::<T>(), align_of::<T>()) {
        (4, 4) => {
            if let Ok(w) = bytemuck::allocation::try_cast_vec::<T, u32>(v) {
                keep(&WORDS, w);
            }
        }
        (2, 2) => {
            if let Ok(h) = bytemuck::allocation::try_cast_vec::<T, u16>(v) {
                keep(&HALVES, h);
            }
        }
        _ => {}
    }
}

/// Drops every kept buffer (at the end of a run).
pub fn release() {
    WORDS.lock().unwrap_or_else(|e| e.into_inner()).clear();
    HALVES.lock().unwrap_or_else(|e| e.into_inner()).clear();
}
