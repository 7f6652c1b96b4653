//! What every file command shares: one or many inputs (`-o OUTDIR/` for many), one output check,
//! and a report per input, printed as a line of text or as the JSON report (report.rs) with
//! `ms` {open, pipelines, read, compute, write, total}. A failed input prints
//! `{command, input, error}` instead; the exit code is 1 if any input failed.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use lucent::engine::{Form, Placement};
use lucent::{io, Error, Gpu};
use ndarray::ArrayD;
use serde_json::{json, Value};

use crate::report::{self, ms_since, Report, Stages};
use crate::Global;

/// Where a command computes: the GPUs it opened (the first unless work is spread), or the CPU
/// reference.
pub struct Device {
    pub gpus: Vec<Gpu>,
}

impl Device {
    pub fn gpu(&self) -> Option<&Gpu> {
        self.gpus.first()
    }

    pub fn name(&self) -> String {
        match self.gpus.is_empty() {
            true => "cpu".into(),
            false => format!("gpu: {}", self.gpus.iter().map(|g| g.summary().name.as_str()).collect::<Vec<_>>().join(", ")),
        }
    }

    /// Saves the pipeline caches and lets the process exit without tearing the devices down
    /// object by object (tens of ms on NVIDIA); the operating system reclaims them.
    fn close(self) {
        for gpu in &self.gpus {
            if let Err(e) = gpu.save_pipeline_cache() {
                eprintln!("lucent: warning: the pipeline cache was not saved: {e}");
            }
        }
        std::mem::forget(self);
    }

    fn pipelines(&self) -> (u64, f64) {
        self.gpus.iter().map(|g| g.pipeline_stats()).fold((0, 0.0), |(n, ms), s| (n + s.compiled, ms + s.compile_ms))
    }
}

/// What one input gave: filled in by the command, printed here.
pub struct Outcome {
    pub shape_in: Vec<usize>,
    pub shape_out: Vec<usize>,
    /// How the library placed the work (JSON `placement`; None: no forms to choose from, or
    /// the CPU reference).
    pub placement: Option<Placement>,
    /// Command-specific details (JSON `details`).
    pub details: Value,
    /// The human-readable line, without the output path.
    pub summary: String,
}

/// One file command over its inputs.
pub struct Batch<'a> {
    pub command: &'static str,
    pub global: &'a Global,
    /// The options as plain JSON values, the same for every input.
    pub options: Value,
}

impl Batch<'_> {
    /// Reads each input with `read` and hands it to `process(data, input, output, device,
    /// stages)`. One input writes to `output`; several write into the directory `output`
    /// (created if it ends with `/` or exists), each named after its input with extension
    /// `ext(input)`. The device is opened on another thread while the first input is read.
    /// Each result is written before the next input is read; a failed input is reported and
    /// skipped.
    pub fn run<T: Send>(
        &self,
        inputs: &[PathBuf],
        output: &Path,
        ext: impl Fn(&Path) -> &'static str,
        open: impl FnOnce() -> Result<Device, Error> + Send,
        read: impl Fn(&Path) -> Result<T, Error> + Sync,
        mut process: impl FnMut(T, &Path, &Path, &Device, &mut Stages) -> Result<Outcome, Error>,
    ) -> Result<(), Error> {
        let outputs = outputs(inputs, output, ext)?;
        let start = Instant::now();
        let timed_read = |input: &Path| {
            let mut stages = Stages::default();
            stages.read(|| read(input)).map(|data| (data, stages))
        };
        let (device, first) = std::thread::scope(|s| {
            let opening = s.spawn(|| {
                let t = Instant::now();
                open().map(|d| (d, ms_since(t)))
            });
            let first = timed_read(&inputs[0]);
            (opening.join().expect("opening the device does not panic"), first)
        });
        let (device, mut open_ms) = device?;
        let mut first = Some(first);
        let bar = self.progress(inputs.len());
        let mut failed = 0;
        for (input, out) in inputs.iter().zip(&outputs) {
            let t = if first.is_some() { start } else { Instant::now() };
            let (_, pipeline_ms) = device.pipelines();
            let result = first
                .take()
                .unwrap_or_else(|| timed_read(input))
                .and_then(|(data, mut stages)| process(data, input, out, &device, &mut stages).map(|r| (r, stages)));
            match result {
                Ok((r, stages)) => {
                    // Every stage, 0 where an input had none.
                    let ms = Stages {
                        open: Some(open_ms),
                        pipelines: Some(device.pipelines().1 - pipeline_ms),
                        read: Some(stages.read.unwrap_or(0.0)),
                        compute: Some(stages.compute.unwrap_or(0.0)),
                        write: Some(stages.write.unwrap_or(0.0)),
                        total: 0.0,
                    };
                    self.print(&bar, input, out, &device, r, ms.total(t));
                }
                // Named by its input unless the error names its own file already.
                Err(e @ Error::File { .. }) if inputs.len() == 1 => return Err(e),
                Err(e) if inputs.len() == 1 => return Err(Error::File { path: input.display().to_string(), message: e.to_string() }),
                Err(e) => {
                    failed += 1;
                    bar.suspend(|| eprintln!("lucent: error: {}: {e}", input.display()));
                    if self.global.json {
                        println!("{}", json!({ "command": self.command, "input": input.display().to_string(), "error": e.to_string() }));
                    }
                }
            }
            open_ms = 0.0;
            bar.inc(1);
        }
        bar.finish_and_clear();
        device.close();
        match failed {
            0 => Ok(()),
            n => Err(Error::Invalid(format!("{n} of {} inputs failed (see above); no output was written for them", inputs.len()))),
        }
    }

    fn print(&self, bar: &ProgressBar, input: &Path, output: &Path, device: &Device, r: Outcome, ms: Stages) {
        if self.global.json {
            let line = Report {
                input: report::path(input),
                output: report::path(output),
                shape_in: Some(r.shape_in),
                shape_out: Some(r.shape_out),
                options: self.options.clone(),
                ms,
                placement: r.placement,
                details: r.details,
                ..Report::new(self.command, report::device(&device.gpus))
            }
            .line();
            bar.suspend(|| println!("{line}"));
        } else if !self.global.quiet {
            bar.suspend(|| println!("{} on {}: {:.2} ms; wrote {}", r.summary, device.name(), ms.compute.unwrap_or(0.0), output.display()));
        }
    }

    /// A bar over the inputs when there are several (on stderr, only when it is a terminal).
    fn progress(&self, files: usize) -> ProgressBar {
        if files < 2 || self.global.quiet {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::new(files as u64);
        bar.set_style(ProgressStyle::with_template("{prefix} {bar:30} {pos}/{len} files [{elapsed_precise}, {eta} left]").expect("a valid template"));
        bar.set_prefix(self.command);
        bar
    }
}

/// An input of a file command: whole in memory, or a Zarr array too large for the host memory
/// budget, computed slab by slab along its slowest axis ([`stream`]).
pub enum Input {
    Whole(ArrayD<f32>),
    Rows(Box<io::zarr::Source>),
}

/// Host copies of a slab a command holds at once: the slab read, the library's staging of it,
/// the result and the slab written.
pub const SLAB_COPIES: u64 = 4;

/// [`SLAB_COPIES`], plus `device_copies` where the device's memory is host memory (a CPU
/// adapter such as lavapipe, or the CPU reference).
pub fn slab_copies(device: &Device, device_copies: u64) -> u64 {
    let host_memory = device.gpus.iter().all(|g| g.summary().device_type == "Cpu");
    SLAB_COPIES + if host_memory { device_copies } else { 0 }
}

/// Reads `path` whole, unless it is a Zarr array of which [`SLAB_COPIES`] float32 copies exceed the
/// host memory budget (`LUCENT_HOST_BUDGET_BYTES`): that one is opened to stream.
pub fn read_input(path: &Path) -> Result<Input, Error> {
    if !io::zarr::is_zarr(path) {
        return io::read_real(path).map(Input::Whole);
    }
    let source = io::zarr::Source::open(path)?;
    let shape = source.shape();
    let bytes = shape.iter().try_fold(4 * SLAB_COPIES, |b, &n| b.checked_mul(n as u64));
    match bytes.is_none_or(|b| b > lucent::host::host_budget_bytes().unwrap_or(u64::MAX)) {
        true => Ok(Input::Rows(Box::new(source))),
        false => source.read_rows(0..shape.first().copied().unwrap_or(0)).map(Input::Whole),
    }
}

/// `op` over a Zarr `source` slab by slab into the OME-Zarr `output` (its metadata carried), each
/// slab read with `halo` rows before and after and `copies` float32 copies of it fitting the host
/// budget: the result equals the whole-array one wherever `op`'s reach along axis 0 is within
/// the halo. Its report names the slabs, their peak host bytes and the budget.
pub fn stream(
    source: &io::zarr::Source,
    output: &Path,
    (halo, copies): ([usize; 2], u64),
    what: String,
    stages: &mut Stages,
    op: impl FnMut(ArrayD<f32>) -> Result<ArrayD<f32>, Error>,
) -> Result<Outcome, Error> {
    if io::Format::from_path(output)? != io::Format::Zarr {
        return Err(file_error(output, "an input streamed from Zarr (larger than the host memory budget) is written to a .zarr output".into()));
    }
    let shape = source.shape();
    let chunks = source.chunks();
    let sink = io::zarr::Sink::create(output, &shape, Some(&chunks), source.ome())?;
    let budget = lucent::host::host_budget_bytes()?;
    let rows = io::zarr::slab_rows(&shape, halo, copies, budget, sink.chunks()[0])?;
    let streamed = stages.compute(|| io::zarr::stream_rows(source, &sink, rows, halo, op, |_| {}))?;
    stages.write(|| sink.finish())?;
    Ok(Outcome {
        shape_in: shape.clone(),
        shape_out: shape,
        placement: Some(Placement::planned(Form::Slabs, streamed.slabs)),
        details: json!({ "streamed": streamed, "host_budget_bytes": budget }),
        summary: format!(
            "{what}, streamed in {} slabs of {} rows ({:?} halo rows; {} bytes a slab at most)",
            streamed.slabs, streamed.slab_rows, streamed.halo, streamed.peak_slab_bytes
        ),
    })
}

/// The output path of each input (see [`Batch::run`]), checked before any work.
fn outputs(inputs: &[PathBuf], output: &Path, ext: impl Fn(&Path) -> &'static str) -> Result<Vec<PathBuf>, Error> {
    // A Zarr store is a directory but one output: writing it again replaces it.
    let store = io::zarr::is_zarr(output);
    let as_dir = !store && (output.is_dir() || output.as_os_str().to_string_lossy().ends_with(['/', std::path::MAIN_SEPARATOR]));
    if inputs.len() == 1 && !as_dir {
        check_output_dir(output)?;
        return Ok(vec![output.to_path_buf()]);
    }
    if !as_dir {
        return Err(Error::Invalid(format!("{} inputs need an output directory: -o {}/ (it is created if missing)", inputs.len(), output.display())));
    }
    std::fs::create_dir_all(output).map_err(|e| file_error(output, format!("cannot create the output directory: {e}")))?;
    let mut seen = HashSet::new();
    inputs
        .iter()
        .map(|input| {
            let stem = input.file_stem().ok_or_else(|| file_error(input, "has no file name".into()))?;
            let out = output.join(stem).with_extension(ext(input));
            match seen.insert(out.clone()) {
                true => Ok(out),
                false => Err(file_error(input, format!("another input also writes {}", out.display()))),
            }
        })
        .collect()
}

/// Fails before any work when `path` could not be written: an unknown extension or a missing
/// directory.
fn check_output_dir(path: &Path) -> Result<(), Error> {
    io::Format::from_path(path)?;
    io::check_directory(path)
}

/// Refuses a result with a non-finite value: every command refuses non-finite input, so one in
/// the result means values near float32's limits overflowed on the way. Asked of every result
/// before it is written (README "Input limits and odd data"), instead of writing NaN or Inf.
pub fn check_result<T: lucent::check::Finite>(y: &ndarray::ArrayViewD<T>) -> Result<(), Error> {
    lucent::check::check_finite(y, "the result").map_err(|e| {
        Error::Invalid(format!(
            "{}: float32 overflowed on the way from finite input (values near its limits, ±3.4e38); scale the input (to about 1) and run again",
            e.to_string().trim_start_matches("non-finite value in ")
        ))
    })
}

/// Fails when a result of `ndim` axes (complex if `complex`) cannot go to `path`'s format.
pub fn check_format(path: &Path, ndim: usize, complex: bool) -> Result<(), Error> {
    io::check_output(path, ndim, complex)
}

/// The float32 format of an input's result in an output directory: its own, a PNG's as TIFF
/// (a PNG output is an 8-bit preview).
pub fn real_ext(input: &Path) -> &'static str {
    match io::Format::from_path(input) {
        Ok(io::Format::Npy) => "npy",
        Ok(io::Format::Zarr) => "zarr",
        _ => "tif",
    }
}

fn file_error(path: &Path, message: String) -> Error {
    Error::File { path: path.display().to_string(), message }
}
