//! The file I/O suite of `lucent bench` (the readers' and writers' speed): write and read a `.npy` (float32, complex64,
//! and a float64 file read with conversion) and a float32 TIFF of `--max-mib` (at most 1 GiB) in
//! a temporary directory (`TMPDIR`; on tmpfs such as /dev/shm the writes' fsync costs nothing),
//! median of 3 runs each. Reads come from the page cache (the file was just written). The roof
//! (`% copy`) is a fresh host copy of the same bytes (`to_vec`: allocation, page faults, copy),
//! the least a read into a new array can cost. No GPU is used.

use std::path::Path;
use std::time::Instant;

use lucent::io;
use lucent::Error;
use ndarray::{ArrayD, IxDyn};
use num_complex::Complex32;

use super::{Args, Row};
use crate::report::ms_since;
use crate::Global;

pub fn suite(args: &Args, global: &Global) -> Result<Vec<Row>, Error> {
    let mib = args.max_mib.min(1024).max(args.min_mib.max(1));
    let bytes = mib << 20;
    let dir = tempdir()?;
    let result = run_cases(args, global, dir.as_path(), mib, bytes);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn run_cases(args: &Args, global: &Global, dir: &Path, mib: u64, bytes: u64) -> Result<Vec<Row>, Error> {
    let wanted = |case: &str| args.filter.as_deref().is_none_or(|f| case.contains(f) || f == "io");
    let n = (bytes / 4) as usize;
    let real = ArrayD::from_shape_vec(IxDyn(&[n]), values(n)).unwrap();
    let roof = median_ms(|| {
        std::hint::black_box(real.as_slice().unwrap().to_vec());
        Ok(())
    })?;
    let mut rows = Vec::new();
    let mut row = |case: &str, ms: f64| {
        let gbs = bytes as f64 / (ms * 1e6);
        if !global.quiet && !global.json {
            eprintln!("{case:<16} {mib:>6} MiB {ms:>10.1} ms {gbs:>9.2} GB/s {:>6.1}% of copy", 100.0 * roof / ms);
        }
        rows.push(Row { case: case.to_string(), shape: vec![n], mib, ms, gb_per_s: gbs, percent_of_copy: 100.0 * roof / ms, timer: "wall" });
    };
    let f32_path = dir.join("f32.npy");
    if wanted("io_npy_f32") {
        row("io_npy_f32_write", median_ms(|| io::write_real(&f32_path, &real.view()))?);
        row("io_npy_f32_read", median_ms(|| io::read(&f32_path).map(drop))?);
    }
    if wanted("io_tiff_f32") {
        // Pages of 2048 x 2048 (16 MiB), as microscopes store stacks (512 x 512 for odd sizes).
        let edge = if mib.is_multiple_of(16) { 2048 } else { 512 };
        let pages = real.view().into_shape_with_order(IxDyn(&[n / (edge * edge), edge, edge])).unwrap();
        let path = dir.join("f32.tif");
        row("io_tiff_f32_write", median_ms(|| io::write_real(&path, &pages))?);
        row("io_tiff_f32_read", median_ms(|| io::read(&path).map(drop))?);
        std::fs::remove_file(&path).ok();
    }
    if wanted("io_npy_c64") {
        let complex = ArrayD::from_shape_vec(IxDyn(&[n / 2]), real.as_slice().unwrap().chunks_exact(2).map(|p| Complex32::new(p[0], p[1])).collect()).unwrap();
        let path = dir.join("c64.npy");
        row("io_npy_c64_write", median_ms(|| io::write_complex(&path, &complex.view()))?);
        row("io_npy_c64_read", median_ms(|| io::read(&path).map(drop))?);
        std::fs::remove_file(&path).ok();
    }
    if wanted("io_npy_f64") {
        // Half the elements as f64: the same file size, read with conversion to f32.
        let path = dir.join("f64.npy");
        let mut file = io::npy::header_bytes("<f8", &[n / 2]);
        file.extend(real.as_slice().unwrap()[..n / 2].iter().flat_map(|&v| (v as f64).to_le_bytes()));
        std::fs::write(&path, file).map_err(|e| Error::Invalid(format!("cannot write {}: {e}", path.display())))?;
        row("io_npy_f64_read", median_ms(|| io::read(&path).map(drop))?);
        std::fs::remove_file(&path).ok();
    }
    Ok(rows)
}

/// A fresh directory under the system's temporary directory.
fn tempdir() -> Result<std::path::PathBuf, Error> {
    let dir = std::env::temp_dir().join(format!("lucent-bench-io-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| Error::Invalid(format!("cannot create {}: {e}", dir.display())))?;
    Ok(dir)
}

/// Non-trivial values in [-0.5, 0.5), so nothing compresses or short-cuts.
fn values(n: usize) -> Vec<f32> {
    super::uniform(&[n], 0x9E3779B97F4A7C15).iter().map(|v| v - 0.5).collect()
}

/// Median wall time of 3 runs, in milliseconds.
fn median_ms(mut f: impl FnMut() -> Result<(), Error>) -> Result<f64, Error> {
    let mut times = Vec::new();
    for _ in 0..3 {
        let start = Instant::now();
        f()?;
        times.push(ms_since(start));
    }
    times.sort_by(f64::total_cmp);
    Ok(times[1])
}
