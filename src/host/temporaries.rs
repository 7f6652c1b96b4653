//! The temporaries of unfinished outputs (atomic files, Zarr stores being written): tracked while
//! they exist, so that a process stopped by a signal can remove them ([`remove_tracked`], called
//! by the command line's signal thread), and recognisable by the process id in their names, so
//! that a later run removes the Zarr stores of processes that died without cleaning up
//! ([`remove_stale`]; atomic files are not looked for: a directory of many outputs would be
//! listed once per file).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

static TRACKED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Tracks `path` (a temporary file or directory) until [`untrack`].
pub fn track(path: &Path) {
    TRACKED.lock().unwrap_or_else(|e| e.into_inner()).push(path.to_path_buf());
}

/// Stops tracking `path` (it was moved into place or removed).
pub fn untrack(path: &Path) {
    TRACKED.lock().unwrap_or_else(|e| e.into_inner()).retain(|p| p != path);
}

/// Removes every tracked temporary: what a process stopped by a signal leaves unfinished.
/// The process's other threads may still be writing into a store while it is removed (a new
/// chunk makes the walk fail on a directory no longer empty, or recreates a removed one):
/// removal is tried again while the path exists, and the paths are looked at again over
/// ~100 ms.
pub fn remove_tracked() {
    let paths = std::mem::take(&mut *TRACKED.lock().unwrap_or_else(|e| e.into_inner()));
    // A writer between its chunk's path and its file recreates the store's directories after
    // they are removed: look again, a few times, before the process ends.
    for round in 0..5 {
        if round > 0 {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        for path in &paths {
            for _ in 0..50 {
                let _ = std::fs::remove_dir_all(path).or_else(|_| std::fs::remove_file(path));
                if std::fs::symlink_metadata(path).is_err() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        }
    }
}

/// Removes, from `dir`, the temporary stores of `name` (`.{name}.lucent-PID.tmp` and `.old`)
/// whose process is no longer running: a run killed hard (SIGKILL, power
/// loss) leaves them; the next run that writes `name` takes them away.
pub fn remove_stale(dir: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let prefix = format!(".{name}.");
    for entry in entries.flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        let pid = file
            .strip_prefix(&prefix)
            .and_then(|r| r.strip_prefix("lucent-"))
            .and_then(|r| r.strip_suffix(".tmp").or_else(|| r.strip_suffix(".old")))
            .and_then(|p| p.parse::<u32>().ok());
        if pid.is_some_and(|p| p != std::process::id() && !running(p)) {
            let path = entry.path();
            let _ = std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
        }
    }
}

/// Whether process `pid` is running (Linux: /proc; elsewhere assumed, so nothing is removed).
fn running(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        Path::new(&format!("/proc/{pid}")).exists()
    } else {
        true
    }
}
