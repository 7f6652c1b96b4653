//! What one-call functions reuse across calls on one `Gpu`: FFT plans (their tables live on the
//! device) and kernel spectra, keyed by what they were made from. Least recently used entries
//! go first once the entries hold more than a budget of device memory or exceed a count, so a
//! long-running app that sees many shapes does not grow without bound.

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::Gpu;
use crate::error::Result;

/// Device memory the cached values may hold together.
const BUDGET_BYTES: u64 = 512 << 20;
/// Entries at most, whatever their size.
const MAX_ENTRIES: usize = 64;

struct Entry {
    value: Arc<dyn Any + Send + Sync>,
    bytes: u64,
    used: u64,
}

#[derive(Default)]
pub(crate) struct Cache {
    entries: Mutex<(HashMap<String, Entry>, u64)>,
}

impl Cache {
    fn get<T: Any + Send + Sync>(&self, key: &str) -> Option<Arc<T>> {
        let mut guard = self.entries.lock().unwrap();
        let (entries, clock) = &mut *guard;
        *clock += 1;
        let entry = entries.get_mut(key)?;
        entry.used = *clock;
        entry.value.clone().downcast::<T>().ok()
    }

    fn put<T: Any + Send + Sync>(&self, key: String, value: Arc<T>, bytes: u64) {
        let mut guard = self.entries.lock().unwrap();
        let (entries, clock) = &mut *guard;
        *clock += 1;
        entries.insert(key, Entry { value, bytes, used: *clock });
        while entries.len() > MAX_ENTRIES || entries.values().map(|e| e.bytes).sum::<u64>() > BUDGET_BYTES {
            let oldest = entries.iter().min_by_key(|(_, e)| e.used).map(|(k, _)| k.clone()).unwrap();
            entries.remove(&oldest);
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.lock().unwrap().0.len()
    }
}

impl Gpu {
    /// The value cached under `key` (its type is part of the key), else `build`'s, cached with
    /// the device memory it holds. `key` must name everything the value depends on.
    pub fn cached<T: Any + Send + Sync>(&self, key: &str, build: impl FnOnce() -> Result<(T, u64)>) -> Result<Arc<T>> {
        let key = format!("{}:{key}", std::any::type_name::<T>());
        if let Some(v) = self.cache.get::<T>(&key) {
            return Ok(v);
        }
        let (value, bytes) = build()?;
        let value = Arc::new(value);
        self.cache.put(key, value.clone(), bytes);
        Ok(value)
    }

    /// Values the one-call functions keep for later calls (plans, kernel spectra).
    pub fn cached_values(&self) -> usize {
        self.cache.len()
    }
}

/// A 64-bit FNV-1a hash of `data`'s bytes, for keys that name an array's contents (a collision
/// is only possible between arrays of one shape; callers that cannot accept one compare the
/// contents they keep).
pub fn content_hash(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}
