//! The one `--json` report of every command (README "The --json report"), one JSON object per
//! line on stdout:
//!
//! `command`; `device` {kind: gpu | cpu (| host for `bench --filter io`), adapters};
//! `input` and `output`, the files read and written (a path, an array of paths where a command
//! takes several at once, null where there is none); `shape_in` and `shape_out` (null where
//! there is no such array); `options`, the options as plain values (names as on the command
//! line); `ms`, the milliseconds of each stage the command has (open, pipelines, read,
//! compute, write) and `total`; `host_peak_bytes`, the process's peak host memory so far (Linux;
//! null elsewhere); `placement`, how the library placed the work (the form that ran: whole,
//! chunks, slabs, tiles or split; its pieces; the larger forms that gave way and why), null where
//! the command's work has no forms to choose from or ran on the CPU reference; `details`, what
//! only this command found or measured.
//!
//! Also the one stage timer (`Stages`, which is the `ms` object), and `ms_since` (the library's,
//! `lucent::host::ms_since`).

use std::path::Path;
use std::time::Instant;

use lucent::engine::Placement;
use lucent::{Error, Gpu};
use serde::Serialize;
use serde_json::{json, Value};

/// The library's millisecond timer, which the commands name from here.
pub use lucent::host::ms_since;

/// The report's `ms`: each stage's milliseconds, added up by running it through here (a stage
/// a command does not have is left out), and the total.
#[derive(Clone, Default, Serialize)]
pub struct Stages {
    /// Opening the device (instance, adapter, device).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open: Option<f64>,
    /// Compiling pipelines (part of `compute`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pipelines: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compute: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write: Option<f64>,
    pub total: f64,
}

impl Stages {
    pub fn open<T>(&mut self, f: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
        timed(&mut self.open, f)
    }
    pub fn read<T>(&mut self, f: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
        timed(&mut self.read, f)
    }
    pub fn compute<T>(&mut self, f: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
        timed(&mut self.compute, f)
    }
    pub fn write<T>(&mut self, f: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
        timed(&mut self.write, f)
    }

    /// These stages with the total since `start`.
    pub fn total(self, start: Instant) -> Stages {
        Stages { total: ms_since(start), ..self }
    }
}

fn timed<T>(stage: &mut Option<f64>, f: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
    let t = Instant::now();
    let result = f();
    *stage.get_or_insert(0.0) += ms_since(t);
    result
}

/// The report's `device`: the GPUs a command computed on, or the CPU reference when none.
pub fn device<'a>(gpus: impl IntoIterator<Item = &'a Gpu>) -> Value {
    let adapters: Vec<_> = gpus.into_iter().map(|g| g.summary()).collect();
    match adapters.is_empty() {
        true => json!({ "kind": "cpu", "adapters": [] }),
        false => json!({ "kind": "gpu", "adapters": adapters }),
    }
}

/// A path as the report writes it.
pub fn path(p: impl AsRef<Path>) -> Value {
    Value::String(p.as_ref().display().to_string())
}

/// Several paths.
pub fn paths(ps: &[impl AsRef<Path>]) -> Value {
    Value::Array(ps.iter().map(path).collect())
}

/// One command's report: built with `Report { .., ..Report::new(command, device) }` once the
/// work is done.
#[derive(Serialize)]
pub struct Report {
    pub command: &'static str,
    pub device: Value,
    pub input: Value,
    pub output: Value,
    pub shape_in: Option<Vec<usize>>,
    pub shape_out: Option<Vec<usize>>,
    pub options: Value,
    pub ms: Stages,
    /// The process's peak host memory when the report was made.
    pub host_peak_bytes: Option<u64>,
    pub placement: Option<Placement>,
    pub details: Value,
}

impl Report {
    /// The report of `command` on `device`, the rest null, `details` empty; the peak host
    /// memory so far.
    pub fn new(command: &'static str, device: Value) -> Report {
        Report {
            command,
            device,
            input: Value::Null,
            output: Value::Null,
            shape_in: None,
            shape_out: None,
            options: Value::Null,
            ms: Stages::default(),
            host_peak_bytes: lucent::host::host_peak_bytes(),
            placement: None,
            details: json!({}),
        }
    }

    /// The report as one line of JSON.
    pub fn line(&self) -> String {
        serde_json::to_string(self).expect("reports serialise")
    }

    pub fn print(&self) {
        println!("{}", self.line());
    }
}
