//! Atomic output: write to a temporary file beside the target, fsync it, then rename it over the
//! target. A crash or an error leaves either the old file or the complete new one, never a part.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::file_error;
use crate::error::Result;

/// Calls `write` on a buffered temporary file in `path`'s directory, then moves it into place.
/// On any failure the temporary file is removed and `path` is left as it was.
pub fn write_atomic<F>(path: &Path, write: F) -> Result<()>
where
    F: FnOnce(&mut BufWriter<File>) -> Result<()>,
{
    let (tmp, file) = create_temporary(path)?;
    let result = fill_and_sync(path, file, write).and_then(|()| {
        std::fs::rename(&tmp, path).map_err(|e| file_error(path, format!("cannot move the finished file into place: {e}")))
    });
    match result {
        Ok(()) => {
            sync_directory(path);
            Ok(())
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// A new, exclusively created file `.<name>.<pid>.<n>.tmp` in the target's directory (same
/// filesystem, so the final rename is atomic).
fn create_temporary(path: &Path) -> Result<(PathBuf, File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .ok_or_else(|| file_error(path, "is not a file name".into()))?
        .to_string_lossy();
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(|e| file_error(path, format!("cannot create a file in {}: {e}", dir.display())))?;
    Ok((tmp, file))
}

fn fill_and_sync<F>(path: &Path, file: File, write: F) -> Result<()>
where
    F: FnOnce(&mut BufWriter<File>) -> Result<()>,
{
    let mut w = BufWriter::new(file);
    write(&mut w)?;
    w.flush().map_err(|e| file_error(path, format!("write failed: {e}")))?;
    let file = w.into_inner().map_err(|e| file_error(path, format!("write failed: {}", e.error())))?;
    file.sync_all().map_err(|e| file_error(path, format!("fsync failed: {e}")))
}

/// Makes the rename itself durable where the platform allows opening a directory (best effort).
fn sync_directory(path: &Path) {
    #[cfg(unix)]
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}
