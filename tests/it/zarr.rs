//! Zarr and OME-Zarr (src/io/zarr.rs): round trips of every rank, Zarr v2 stores with OME 0.4
//! metadata written here byte by byte (as zarr-python writes them), metadata carried to outputs,
//! and volumes beyond the host memory budget (LUCENT_HOST_BUDGET_BYTES) filtered, convolved and
//! deconvolved slab by slab by the CLI against the whole-volume results; a store written twice is replaced; bad stores refused with
//! nothing left behind.

use crate::common;

use std::path::Path;

use common::specimens::{gaussian, observed, specimen};
use common::{lucent_cli, lucent_json, rand_array};
use lucent::io::{self, zarr};
use ndarray::{ArrayD, IxDyn};
use serde_json::json;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn rel_l2(a: &ArrayD<f32>, b: &ArrayD<f32>) -> f64 {
    assert_eq!(a.shape(), b.shape());
    let (d, n) = a.iter().zip(b).fold((0.0, 0.0), |(d, n), (&x, &y)| (d + (x as f64 - y as f64).powi(2), n + (y as f64).powi(2)));
    (d / n).sqrt()
}

/// A Zarr v2 OME-Zarr 0.4 image (uncompressed uint16 chunks, as zarr-python writes them) of
/// `values` with chunks of `chunks`; returns the array's path.
fn write_v2_image(root: &Path, values: &ArrayD<u16>, chunks: &[usize]) -> std::path::PathBuf {
    std::fs::create_dir_all(root.join("0")).unwrap();
    std::fs::write(root.join(".zgroup"), r#"{"zarr_format": 2}"#).unwrap();
    let attrs = json!({"multiscales": [{"version": "0.4", "name": "beads",
        "axes": [{"name": "z", "type": "space", "unit": "micrometer"}, {"name": "y", "type": "space", "unit": "micrometer"}, {"name": "x", "type": "space", "unit": "micrometer"}],
        "datasets": [{"path": "0", "coordinateTransformations": [{"type": "scale", "scale": [0.5, 0.1, 0.1]}]}]}]});
    std::fs::write(root.join(".zattrs"), attrs.to_string()).unwrap();
    let shape = values.shape();
    let zarray =
        json!({"zarr_format": 2, "shape": shape, "chunks": chunks, "dtype": "<u2", "compressor": null, "fill_value": 0, "order": "C", "filters": null});
    std::fs::write(root.join("0/.zarray"), zarray.to_string()).unwrap();
    let grid: Vec<usize> = shape.iter().zip(chunks).map(|(n, c)| n.div_ceil(*c)).collect();
    for index in ndarray::indices(IxDyn(&grid)) {
        // Edge chunks are stored whole, padded with the fill value.
        let mut bytes = Vec::new();
        for within in ndarray::indices(IxDyn(chunks)) {
            let at: Vec<usize> = (0..shape.len()).map(|d| index[d] * chunks[d] + within[d]).collect();
            let v = if at.iter().zip(shape).all(|(a, n)| a < n) { values[IxDyn(&at)] } else { 0 };
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        let key: Vec<String> = (0..shape.len()).map(|d| index[d].to_string()).collect();
        std::fs::write(root.join("0").join(key.join(".")), bytes).unwrap();
    }
    root.join("0")
}

#[test]
fn every_rank_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    for dims in [&[37][..], &[13, 300], &[3, 17, 290], &[2, 3, 5, 7]] {
        let x = rand_array(dims);
        let path = dir.path().join("x.zarr");
        io::write_real(&path, &x.view()).unwrap();
        assert_eq!(io::read_real(&path).unwrap(), x, "{dims:?}: the image's level");
        assert_eq!(io::read_real(path.join("0")).unwrap(), x, "{dims:?}: the array");
        let source = zarr::Source::open(&path).unwrap();
        assert_eq!(source.read_rows(1..dims[0]).unwrap(), x.slice_axis(ndarray::Axis(0), (1..).into()).to_owned());
        let axes = source.ome().axes.clone().unwrap();
        assert_eq!(axes.as_array().unwrap().len(), dims.len());
    }
}

#[test]
fn zarr_v2_with_ome_0_4_is_read_and_its_metadata_carried() {
    let dir = tempfile::tempdir().unwrap();
    let values = ArrayD::from_shape_fn(IxDyn(&[11, 23, 19]), |i| ((i[0] * 131 + i[1] * 17 + i[2] * 7) % 4001) as u16);
    let array = write_v2_image(&dir.path().join("in.zarr"), &values, &[4, 10, 8]);
    let expected = values.mapv(|v| v as f32);
    assert_eq!(io::read_real(&array).unwrap(), expected);
    assert_eq!(io::read_real(dir.path().join("in.zarr")).unwrap(), expected, "the image's finest level");

    let out = dir.path().join("out.zarr");
    lucent_json(&["filter", s(&array), "-o", s(&out), "--gaussian", "1.2"], &[]);
    let ome = zarr::Source::open(&out).unwrap().ome().clone();
    assert_eq!(ome.transforms.unwrap(), json!([{"type": "scale", "scale": [0.5, 0.1, 0.1]}]));
    assert_eq!(ome.axes.unwrap()[0]["unit"], "micrometer");
    assert_eq!(ome.name.as_deref(), Some("beads"));
    let group: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("zarr.json")).unwrap()).unwrap();
    assert_eq!(group["attributes"]["ome"]["version"], "0.5");

    // Written again, the store is replaced (not taken for a directory to write into).
    let first = io::read_real(&out).unwrap();
    lucent_json(&["filter", s(&array), "-o", s(&out), "--gaussian", "2.5"], &[]);
    let entries: Vec<String> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(entries.len(), 2, "{entries:?}");
    assert_ne!(io::read_real(&out).unwrap(), first);
}

/// The streamed volume, and a host budget of half its float32 bytes.
const VOLUME: [usize; 3] = [960, 24, 20];
const BUDGET: u64 = (960 * 24 * 20 * 4) / 2;

/// The CLI on a volume beyond the host budget: streamed (its report says so) and equal to the
/// whole-volume run within `tolerance`; the whole volume cannot be read under that budget.
fn streamed_equals_whole(args: &[&str], budget: u64, tolerance: f64) {
    let dir = tempfile::tempdir().unwrap();
    let (input, whole, streamed) = (dir.path().join("in.zarr"), dir.path().join("whole.zarr"), dir.path().join("streamed.zarr"));
    let psf = gaussian(&[5, 7, 7], &[1.0, 1.3, 1.3]);
    let x = observed(&specimen(&VOLUME, 60, 4), &psf);
    io::write_real(&input, &x.view()).unwrap();
    let psf_path = dir.path().join("psf.npy");
    io::write_real(&psf_path, &psf.view()).unwrap();
    let args: Vec<&str> = args.iter().map(|&a| if a == "PSF" { s(&psf_path) } else { a }).collect();
    let limit = [("LUCENT_HOST_BUDGET_BYTES", budget.to_string())];
    let limit: Vec<(&str, &str)> = limit.iter().map(|(k, v)| (*k, v.as_str())).collect();
    assert!(io::read_with_budget(&input, budget).is_err(), "the volume fits the budget");

    let with = |out: &Path| -> Vec<String> {
        // the command, the input and any other positional argument (a kernel), then -o OUT
        let positional = args[1..].iter().take_while(|a| !a.starts_with("--")).count();
        let mut all: Vec<String> = vec![args[0].into(), s(&input).into()];
        all.extend(args[1..=positional].iter().map(|a| a.to_string()));
        all.extend(["-o".into(), s(out).into()]);
        all.extend(args[1 + positional..].iter().map(|a| a.to_string()));
        all
    };
    let run = |out: &Path, env: &[(&str, &str)]| {
        let all = with(out);
        lucent_json(&all.iter().map(String::as_str).collect::<Vec<_>>(), env)
    };
    let report = run(&streamed, &limit);
    let details = &report["details"]["streamed"];
    assert!(details["slabs"].as_u64().unwrap() > 1, "{report}");
    assert!(details["peak_slab_bytes"].as_u64().unwrap() <= budget, "{report}");
    run(&whole, &[]);
    let (a, b) = (io::read_real(&streamed).unwrap(), io::read_real(&whole).unwrap());
    let err = rel_l2(&a, &b);
    assert!(err <= tolerance, "{args:?}: relative L2 {err:e} against the whole volume");
}

#[test]
fn filters_stream_exactly() {
    streamed_equals_whole(&["filter", "--gaussian", "1.5,2,2"], BUDGET, 1e-7);
    streamed_equals_whole(&["filter", "--uniform", "4,3,5", "--boundary", "nearest"], BUDGET, 1e-7);
    streamed_equals_whole(&["filter", "--median", "5,3,3", "--boundary", "mirror"], BUDGET, 0.0);
    streamed_equals_whole(&["convolve", "PSF", "--mode", "same"], BUDGET, 1e-6);
}

#[test]
fn richardson_lucy_streams_within_the_tiled_tolerance() {
    // Halos of tiles::halo_width rows (a tile's guard band and blend width): within tiled RL's
    // 1e-3 of the whole volume (tests/it/deconvolve_tiles.rs).
    streamed_equals_whole(&["deconvolve", "--psf", "PSF", "--iterations", "15"], BUDGET, 1e-3);
}

#[test]
fn bad_stores_and_outputs_are_refused_and_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let err = io::read_real(p.join("missing.zarr/0")).unwrap_err().to_string();
    assert!(err.contains("does not exist"), "{err}");
    std::fs::create_dir(p.join("empty.zarr")).unwrap();
    assert!(io::read_real(p.join("empty.zarr")).is_err());
    // float16 is not a type lucent converts
    std::fs::create_dir(p.join("half.zarr")).unwrap();
    let meta = json!({"zarr_format": 2, "shape": [4], "chunks": [4], "dtype": "<f2", "compressor": null, "fill_value": 0, "order": "C", "filters": null});
    std::fs::write(p.join("half.zarr/.zarray"), meta.to_string()).unwrap();
    let err = io::read_real(p.join("half.zarr")).unwrap_err().to_string();
    assert!(err.contains("data type"), "{err}");
    // a header promising more than the host budget: refused before any chunk is read
    std::fs::create_dir(p.join("huge.zarr")).unwrap();
    let meta = json!({"zarr_format": 2, "shape": [1u64 << 20, 1u64 << 20, 1u64 << 20], "chunks": [64, 64, 64], "dtype": "<f4", "compressor": null, "fill_value": 0, "order": "C", "filters": null});
    std::fs::write(p.join("huge.zarr/.zarray"), meta.to_string()).unwrap();
    let err = io::read_real(p.join("huge.zarr")).unwrap_err().to_string();
    assert!(err.contains("host memory") || err.contains("overflows"), "{err}");
    // malformed metadata
    std::fs::create_dir(p.join("bad.zarr")).unwrap();
    std::fs::write(p.join("bad.zarr/zarr.json"), "{\"zarr_format\": 3, \"node_type\": \"array\", \"shape\": [").unwrap();
    assert!(io::read_real(p.join("bad.zarr")).is_err());
    // a truncated chunk
    let values = ArrayD::from_elem(IxDyn(&[4, 6, 6]), 7u16);
    let array = write_v2_image(&p.join("cut.zarr"), &values, &[4, 6, 6]);
    std::fs::write(array.join("0.0.0"), [1u8, 2, 3]).unwrap();
    assert!(io::read_real(&array).is_err());
    // a NaN input fails mid-run: no output, no temporary store
    let x = rand_array(&[6, 7, 8]).mapv(|v| if v > 0.45 { f32::NAN } else { v });
    io::write_real(p.join("nan.zarr"), &x.view()).unwrap();
    let out = lucent_cli(&["filter", s(&p.join("nan.zarr")), "-o", s(&p.join("o.zarr")), "--gaussian", "1"], &[("LUCENT_HOST_BUDGET_BYTES", "2000")]);
    assert!(!out.status.success());
    let left: Vec<String> = std::fs::read_dir(p).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(!left.iter().any(|n| n.starts_with("o.zarr") || n.contains(".tmp")), "left behind: {left:?}");
    // a streamed input needs a Zarr output
    let out = lucent_cli(&["filter", s(&p.join("nan.zarr")), "-o", s(&p.join("o.npy")), "--gaussian", "1"], &[("LUCENT_HOST_BUDGET_BYTES", "2000")]);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains(".zarr output"));
    assert!(!p.join("o.npy").exists());
}

/// A streamed run stopped by SIGTERM or SIGINT leaves no temporary store and no output; a store
/// left by a process that died without cleaning up (SIGKILL) is removed by the next run that
/// writes the same output.
#[cfg(target_os = "linux")]
#[test]
fn signals_and_dead_processes_leave_no_temporaries() {
    let dir = tempfile::tempdir().unwrap();
    let (input, output, psf) = (dir.path().join("in.zarr"), dir.path().join("out.zarr"), dir.path().join("psf.npy"));
    let kernel = gaussian(&[5, 7, 7], &[1.0, 1.3, 1.3]);
    io::write_real(&input, &observed(&specimen(&VOLUME, 60, 4), &kernel).view()).unwrap();
    io::write_real(&psf, &kernel.view()).unwrap();
    let temporaries = || -> Vec<String> {
        std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| n.starts_with(".out.zarr.")).collect()
    };
    for signal in [libc::SIGTERM, libc::SIGINT] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_lucent"))
            .args(["deconvolve", s(&input), "--psf", s(&psf), "-o", s(&output), "-n", "40", "--quiet"])
            .env("LUCENT_HOST_BUDGET_BYTES", BUDGET.to_string())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let temporary = dir.path().join(format!(".out.zarr.lucent-{}.tmp", child.id()));
        let start = std::time::Instant::now();
        while !temporary.exists() && child.try_wait().unwrap().is_none() && start.elapsed().as_secs() < 60 {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        assert!(temporary.exists(), "the run wrote no temporary store to stop it in");
        // SAFETY: a signal to the child this test spawned.
        unsafe { libc::kill(child.id() as i32, signal) };
        let status = child.wait().unwrap();
        assert!(!status.success(), "signal {signal}: {status:?}");
        assert!(temporaries().is_empty() && !output.exists(), "signal {signal} left {:?}", temporaries());
    }
    // A dead process's store (no process has this id: beyond the kernel's pid range).
    let stale = dir.path().join(".out.zarr.lucent-4000000000.tmp");
    std::fs::create_dir(&stale).unwrap();
    std::fs::write(stale.join("chunk"), b"partial").unwrap();
    let out = lucent_cli(&["filter", s(&input), "-o", s(&output), "--gaussian", "1"], &[("LUCENT_HOST_BUDGET_BYTES", &BUDGET.to_string())]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(temporaries().is_empty() && output.exists(), "left {:?}", temporaries());
}

/// A group that is no image to read says so: an OME-Zarr image whose multiscales list no
/// dataset, and a plain group (it was "expected string \"array\"", zarrs' words for the node).
#[test]
fn groups_without_an_image_to_read_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let group = |name: &str, attributes: serde_json::Value| {
        let root = dir.path().join(name);
        std::fs::create_dir(&root).unwrap();
        let meta = json!({"zarr_format": 3, "node_type": "group", "attributes": attributes});
        std::fs::write(root.join("zarr.json"), meta.to_string()).unwrap();
        root
    };
    let empty = group("empty.zarr", json!({"ome": {"version": "0.5", "multiscales": [{"axes": [{"name": "y"}, {"name": "x"}], "datasets": []}]}}));
    let plain = group("plain.zarr", json!({}));
    for (store, words) in [(empty, "no datasets"), (plain, "a Zarr group, not an array")] {
        let out = lucent_cli(&["filter", s(&store), "-o", s(&dir.path().join("y.npy")), "--gaussian", "1"], &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.trim_end().lines().count() == 1 && stderr.contains(words), "{stderr}");
    }
}

/// A chunk shape beyond the host budget is refused when the store is opened, before a chunk is
/// decoded (2^31 elements: zarrs' "failed to fill whole buffer", or an abort under a cap).
#[test]
fn chunks_beyond_the_host_budget_are_refused_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("huge_chunks.zarr");
    std::fs::create_dir_all(root.join("c")).unwrap();
    let meta = json!({
        "zarr_format": 3, "node_type": "array", "shape": [10], "data_type": "float32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1u64 << 31]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0.0, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]
    });
    std::fs::write(root.join("zarr.json"), meta.to_string()).unwrap();
    std::fs::write(root.join("c/0"), [0u8; 40]).unwrap();
    let out = lucent_cli(&["filter", s(&root), "-o", s(&dir.path().join("y.npy")), "--gaussian", "1"], &[("LUCENT_HOST_BUDGET_BYTES", "1000000000")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.trim_end().lines().count() == 1 && stderr.contains("one chunk of the array"), "{stderr}");
}
