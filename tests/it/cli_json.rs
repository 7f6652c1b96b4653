//! Every subcommand's `--json` report has one shape (README "The --json report"): `command`,
//! `device` {kind, adapters}, `input`, `output`, `shape_in`, `shape_out`, `options`, `ms`
//! {stages..., total}, `host_peak_bytes`, and `details`, where what only that command found
//! goes. Small inputs, mostly on the CPU reference; the same on lavapipe or a GPU.

use crate::common;
use common::*;

use std::path::Path;

use ndarray::{ArrayD, IxDyn};
use serde_json::Value;

/// The report's top-level keys: nothing else (a command's own results go in `details`).
const KEYS: [&str; 11] = ["command", "device", "input", "output", "shape_in", "shape_out", "options", "ms", "host_peak_bytes", "placement", "details"];

/// What `input` or `output` holds for a command.
#[derive(Clone, Copy, Debug)]
enum Files {
    Null,
    Path,
    Paths,
}

/// A path in `dir`, as a string argument.
fn at(dir: &Path, name: &str) -> String {
    dir.join(name).to_str().unwrap().to_string()
}

/// Runs `lucent ARGS --json --quiet` and checks its report's shape: `input` and `output` as
/// `files`, `shapes` whether shape_in and shape_out are arrays (else null). Returns the report.
fn report(args: &[&str], command: &str, files: (Files, Files), shapes: (bool, bool)) -> Value {
    let r = lucent_json(args, &[]);
    check(&r, command, files, shapes);
    r
}

fn check(r: &Value, command: &str, (input, output): (Files, Files), (shape_in, shape_out): (bool, bool)) {
    let mut keys: Vec<&str> = r.as_object().unwrap_or_else(|| panic!("not an object: {r}")).keys().map(String::as_str).collect();
    keys.sort();
    let mut want = KEYS.to_vec();
    want.sort();
    assert_eq!(keys, want, "{command}: the report's keys: {r}");
    assert_eq!(r["command"], command, "{r}");

    let device = &r["device"];
    let adapters = device["adapters"].as_array().unwrap_or_else(|| panic!("{command}: device.adapters: {r}"));
    match device["kind"].as_str() {
        Some("gpu") => assert!(!adapters.is_empty() && adapters.iter().all(|a| a["name"].is_string()), "{command}: {r}"),
        Some("cpu" | "host") => assert!(adapters.is_empty(), "{command}: {r}"),
        _ => panic!("{command}: device.kind: {r}"),
    }

    for (key, files) in [("input", input), ("output", output)] {
        let v = &r[key];
        let ok = match files {
            Files::Null => v.is_null(),
            Files::Path => v.as_str().is_some_and(|s| !s.is_empty()),
            Files::Paths => v.as_array().is_some_and(|a| !a.is_empty() && a.iter().all(Value::is_string)),
        };
        assert!(ok, "{command}: {key} should be {files:?}: {r}");
    }
    for (key, present) in [("shape_in", shape_in), ("shape_out", shape_out)] {
        let v = &r[key];
        match present {
            true => assert!(v.as_array().is_some_and(|a| !a.is_empty() && a.iter().all(|n| n.as_u64().is_some_and(|n| n > 0))), "{command}: {key}: {r}"),
            false => assert!(v.is_null(), "{command}: {key} should be null: {r}"),
        }
    }
    // `info` has no options; every other command names them.
    assert!(r["options"].is_object() || (command == "info" && r["options"].is_null()), "{command}: options: {r}");
    let ms = r["ms"].as_object().unwrap_or_else(|| panic!("{command}: ms: {r}"));
    assert!(ms["total"].as_f64().is_some_and(|t| t >= 0.0), "{command}: ms.total: {r}");
    for (stage, v) in ms {
        assert!(["open", "pipelines", "read", "compute", "write", "total"].contains(&stage.as_str()), "{command}: ms.{stage}: {r}");
        assert!(v.as_f64().is_some_and(|t| t >= 0.0), "{command}: ms.{stage}: {r}");
    }
    assert!(r["host_peak_bytes"].is_null() || r["host_peak_bytes"].as_u64().is_some(), "{command}: {r}");
    assert!(r["details"].is_object(), "{command}: details: {r}");
}

const PATH: (Files, Files) = (Files::Path, Files::Path);
const BOTH: (bool, bool) = (true, true);

fn write(dir: &Path, name: &str, x: &ArrayD<f32>) -> String {
    let path = at(dir, name);
    lucent::io::write_real(&path, &x.view()).unwrap();
    path
}

#[test]
fn info_and_bench() {
    let r = report(&["info"], "info", (Files::Null, Files::Null), (false, false));
    assert!(r["details"]["adapters"].is_array() && r["details"].get("chosen").is_some(), "{r}");
    let r = report(&["--device", "cpu", "info"], "info", (Files::Null, Files::Null), (false, false));
    assert_eq!(r["device"]["kind"], "cpu", "{r}");
    assert!(r["details"]["chosen"].is_null(), "{r}");

    // The file I/O suite: no GPU, a megabyte, in a directory of the test's own.
    let dir = tempfile::tempdir().unwrap();
    let out = lucent_cli(&["bench", "--filter", "io", "--max-mib", "1", "--json", "--quiet"], &[("TMPDIR", dir.path().to_str().unwrap())]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    check(&r, "bench", (Files::Null, Files::Null), (false, false));
    assert_eq!(r["device"]["kind"], "host", "{r}");
    assert_eq!(r["options"]["filter"], "io", "{r}");
    let rows = r["details"]["rows"].as_array().unwrap();
    assert!(!rows.is_empty() && rows.iter().all(|row| row["case"].as_str().is_some_and(|c| c.starts_with("io")) && row["ms"].is_number()), "{r}");
}

/// The file commands of the batch (one report per input).
#[test]
fn file_commands() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let x = write(d, "x.npy", &rand_array(&[12, 10]));
    let k = write(d, "k.npy", &rand_array(&[3, 3]));
    let psf = write(d, "psf.npy", &arr(&[3, 3], random_positive(9)));
    let positive = write(d, "positive.npy", &arr(&[12, 10], random_positive(120)));

    let r = report(&["--device", "cpu", "fft", &x, "-o", &at(d, "X.npy"), "--real"], "fft", PATH, BOTH);
    assert_eq!((r["shape_in"].clone(), r["shape_out"].clone()), (serde_json::json!([12, 10]), serde_json::json!([12, 6])));
    assert_eq!((r["details"]["axes"].clone(), r["details"]["dtype_out"].clone()), (serde_json::json!([0, 1]), serde_json::json!("complex64")), "{r}");
    assert_eq!(r["options"]["transform"], "rfftn");

    let r = report(&["--device", "cpu", "convolve", &x, &k, "-o", &at(d, "c.npy"), "--mode", "same"], "convolve", PATH, BOTH);
    assert!(r["details"]["method"].is_string() && r["details"]["shape_kernel"] == serde_json::json!([3, 3]), "{r}");
    assert_eq!(r["options"]["kernel"], k.as_str());

    let r = report(&["--device", "cpu", "filter", &x, "-o", &at(d, "g.npy"), "--gaussian", "1"], "filter", PATH, BOTH);
    assert_eq!(r["options"]["filter"], "gaussian", "{r}");

    let r = report(&["--device", "cpu", "spline-filter", &x, "-o", &at(d, "s.npy")], "spline-filter", PATH, BOTH);
    assert_eq!(r["options"]["mode"], "mirror", "{r}");

    let r = report(&["--device", "cpu", "resample", &x, "-o", &at(d, "z.npy"), "--zoom", "2"], "resample", PATH, BOTH);
    assert_eq!(r["shape_out"], serde_json::json!([24, 20]), "{r}");

    let r = report(&["--device", "cpu", "deconvolve", &positive, "--psf", &psf, "-o", &at(d, "rl.npy"), "-n", "2"], "deconvolve", PATH, BOTH);
    assert_eq!(r["details"]["path"], "whole", "{r}");
    assert_eq!(r["options"]["iterations"], 2, "{r}");
    // The CPU reference has no forms to choose from.
    assert!(r["placement"].is_null(), "{r}");
}

/// register (one report per moving image) and match.
#[test]
fn registration_and_matching() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let reference = rand_array(&[16, 18]);
    // The reference moved by (2, -3), circularly: registered by (-2, 3).
    let moved = ArrayD::from_shape_fn(IxDyn(&[16, 18]), |i| reference[[(i[0] + 14) % 16, (i[1] + 3) % 18]]);
    let r_path = write(d, "r.npy", &reference);
    let m_path = write(d, "m.npy", &moved);
    let mask = write(d, "mask.npy", &ArrayD::from_elem(IxDyn(&[16, 18]), 1.0));

    let out = lucent_cli(&["--device", "cpu", "register", &r_path, &m_path, &m_path, "--upsample", "2", "--json", "--quiet"], &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2, "one report per moving image");
    for r in &lines {
        check(r, "register", (Files::Path, Files::Null), (true, false));
        assert_eq!(r["input"], m_path.as_str());
        assert_eq!(r["options"]["reference"], r_path.as_str());
        assert_eq!(r["details"]["shift"], serde_json::json!([-2.0, 3.0]), "{r}");
        assert!(r["details"]["error"].is_number() && r["details"]["masked"] == false, "{r}");
    }
    let args = ["--device", "cpu", "register", &r_path, &m_path, "--reference-mask", &mask, "--moving-mask", &mask];
    let r = report(&args, "register", (Files::Path, Files::Null), (true, false));
    assert_eq!(r["details"]["shift"], serde_json::json!([-2.0, 3.0]), "{r}");
    assert!(r["details"]["masked"] == true && r["details"]["error"].is_null(), "{r}");

    let template = ArrayD::from_shape_fn(IxDyn(&[5, 4]), |i| reference[[6 + i[0], 9 + i[1]]]);
    let t_path = write(d, "t.npy", &template);
    let args = ["--device", "cpu", "match", &r_path, &t_path, "-o", &at(d, "response.npy"), "--peaks", "2", "--min-distance", "2"];
    let r = report(&args, "match", PATH, BOTH);
    assert_eq!(r["shape_out"], serde_json::json!([12, 15]), "{r}");
    let peaks = r["details"]["peaks"].as_array().unwrap();
    assert_eq!(peaks.len(), 2, "{r}");
    assert_eq!(peaks[0]["index"], serde_json::json!([6, 9]), "{r}");
    assert_eq!(r["options"]["template"], t_path.as_str());
}

/// phantom and psf (no input), register-volume (a series in, CSV out), denoise.
#[test]
fn phantoms_volumes_and_denoising() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (reference, moving, truth) = (at(d, "ref.npy"), at(d, "m0.npy"), at(d, "truth.csv"));
    let args = ["phantom", "--aooct", "--size", "24,16,24", "-o", &reference, "--moving", &moving, "--truth", &truth];
    let r = report(&args, "phantom", (Files::Null, Files::Path), (false, true));
    assert_eq!(r["shape_out"], serde_json::json!([24, 16, 24]), "{r}");
    assert_eq!((r["options"]["phantom"].as_str(), r["options"]["moving"].clone()), (Some("aooct"), serde_json::json!([moving])), "{r}");

    // psf: no input; the model's file equals the library's, on the GPU and the CPU.
    for device in ["auto", "cpu"] {
        let out = at(d, &format!("psf-{device}.npy"));
        let args = ["--device", device, "psf", "-o", &out, "--nz", "5", "--nx", "11", "--model", "scalar", "--pz", "2", "--ns", "1.33"];
        let r = report(&args, "psf", (Files::Null, Files::Path), (false, true));
        assert_eq!(
            (r["shape_out"].clone(), r["options"]["model"].clone(), r["options"]["z"]["nz"].clone()),
            (serde_json::json!([5, 11, 11]), "scalar".into(), 5.into()),
            "{r}"
        );
        let o = lucent::psf::PsfOptions {
            z: lucent::psf::Planes::Count { nz: 5, dz: 0.05 },
            nx: 11,
            pz: 2.0,
            ns: 1.33,
            model: lucent::psf::Model::Scalar,
            ..Default::default()
        };
        let written = lucent::io::read_real(&out).unwrap();
        let want = lucent::psf::cpu::make_psf(&o).unwrap().into_dyn();
        assert_rel_l2(&written, &want, 1e-4, &format!("lucent psf on {device}"));
        // --pinhole-au: the confocal model, its parameters in the report.
        let out = at(d, &format!("confocal-{device}.npy"));
        let args = [
            "--device",
            device,
            "psf",
            "-o",
            &out,
            "--nz",
            "5",
            "--nx",
            "12",
            "--model",
            "scalar",
            "--ns",
            "1.33",
            "--pinhole-au",
            "0.8",
            "--ex-wvl",
            "0.49",
            "--em-wvl",
            "0.53",
        ];
        let r = report(&args, "psf", (Files::Null, Files::Path), (false, true));
        assert_eq!(r["options"]["confocal"]["pinhole_au"], 0.8, "{r}");
        let c = lucent::psf::Confocal { ex_wvl: 0.49, em_wvl: 0.53, pinhole_au: 0.8, ..Default::default() };
        let want = lucent::psf::cpu::confocal_psf(&lucent::psf::PsfOptions { nx: 12, pz: 0.0, ..o.clone() }, &c).unwrap().into_dyn();
        assert_rel_l2(&lucent::io::read_real(&out).unwrap(), &want, 1e-4, &format!("lucent psf --pinhole-au on {device}"));
    }
    let out = lucent_cli(&["psf", "-o", &at(d, "bad.npy"), "--pinhole-au", "1", "--wvl", "0.5"], &[]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("not --wvl"), "{}", String::from_utf8_lossy(&out.stderr));

    let args = ["--device", "cpu", "register-volume", &reference, &moving, "-o", &at(d, "shifts.csv"), "--average", &at(d, "mean.npy")];
    let r = report(&args, "register-volume", (Files::Paths, Files::Path), (true, false));
    assert_eq!(r["input"], serde_json::json!([moving]), "{r}");
    assert_eq!(r["options"]["reference"], reference.as_str());
    let volumes = r["details"]["volumes"].as_array().unwrap();
    assert_eq!(volumes.len(), 1, "{r}");
    assert_eq!(volumes[0]["ok"].as_u64().unwrap() + volumes[0]["spike"].as_u64().unwrap() + volumes[0]["interpolated"].as_u64().unwrap(), 24, "{r}");

    let (clean, noisy) = (at(d, "clean.npy"), at(d, "noisy.npy"));
    let args = ["phantom", "--series", "moving-edge", "--size", "2,4,8,8", "-o", &clean, "--noisy", &noisy];
    let r = report(&args, "phantom", (Files::Null, Files::Path), (false, true));
    assert_eq!(r["options"]["phantom"], "moving-edge", "{r}");

    let r = report(&["--device", "cpu", "denoise", &noisy, "-o", &at(d, "denoised.npy"), "--dims", "3"], "denoise", (Files::Paths, Files::Path), BOTH);
    assert_eq!(r["shape_out"], serde_json::json!([2, 4, 8, 8]), "{r}");
    assert_eq!(r["details"]["dims"], 3, "{r}");
    assert!(r["details"].get("report").is_some(), "{r}");
    for stage in ["read", "compute", "write"] {
        assert!(r["ms"][stage].is_number(), "ms.{stage}: {r}");
    }
}

/// phantom, then radon, backproject, fbp, em and find-center on its sinogram.
#[test]
fn tomography() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (p, s) = (at(d, "p.npy"), at(d, "s.npy"));
    let r = report(&["phantom", "-o", &p, "--size", "24"], "phantom", (Files::Null, Files::Path), (false, true));
    assert_eq!((r["shape_out"].clone(), r["options"]["phantom"].clone()), (serde_json::json!([24, 24]), serde_json::json!("shepp-logan")));

    let r = report(&["--device", "cpu", "radon", &p, "-o", &s, "--angles", "20"], "radon", PATH, BOTH);
    assert_eq!((r["shape_in"].clone(), r["shape_out"].clone()), (serde_json::json!([24, 24]), serde_json::json!([20, 24])));
    assert_eq!((r["details"]["angles"].as_u64(), r["details"]["method"].as_str()), (Some(20), Some("direct")), "{r}");
    // The default device (a GPU, lavapipe, or the CPU reference without one) reports alike.
    let r = report(&["radon", &p, "-o", &at(d, "s2.npy"), "--angles", "20"], "radon", PATH, BOTH);
    assert_eq!(r["shape_out"], serde_json::json!([20, 24]));

    for command in ["backproject", "fbp"] {
        let r = report(&["--device", "cpu", command, &s, "-o", &at(d, &format!("{command}.npy"))], command, PATH, BOTH);
        assert_eq!(r["shape_out"], serde_json::json!([24, 24]), "{r}");
        assert_eq!(r["details"]["center"], 11.5, "{r}");
    }
    let r = report(&["--device", "cpu", "em", &s, "-o", &at(d, "em.npy"), "-n", "3"], "em", PATH, BOTH);
    assert_eq!(r["details"]["kl_divergence"].as_array().map(Vec::len), Some(3), "{r}");
    assert_eq!(r["options"]["iterations"], 3, "{r}");

    let r = report(&["--device", "cpu", "find-center", &s, "--radius", "1"], "find-center", (Files::Path, Files::Null), (true, false));
    assert!(r["details"]["center"].is_number() && r["details"]["middle"] == 11.5 && r["details"]["tried"].is_array(), "{r}");
}

/// The demo's full sizes (a 32×128×128 specimen, a 96×64×96 AO-OCT series, a 4D series) take
/// half a minute to a minute on the CPU reference or lavapipe, beyond this suite's few seconds a
/// command; `--size small` runs in the suite (cli_report.rs). `cargo test --release --test it --
/// --ignored cli_json::demo` runs this one.
#[test]
#[ignore = "the demo's fixed sizes take 30-80 s without a hardware GPU"]
fn demo() {
    let dir = tempfile::tempdir().unwrap();
    let out = at(dir.path(), "demo");
    let r = report(&["demo", "--out", &out, "-n", "1"], "demo", (Files::Null, Files::Path), (false, false));
    assert_eq!(r["options"]["iterations"], 1, "{r}");
    for part in ["deconvolution", "registration", "similarity", "tomography", "denoising"] {
        assert!(r["details"][part].is_object(), "{part}: {r}");
    }
    // report.json is the same report.
    let file: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("demo/report.json")).unwrap()).unwrap();
    assert_eq!(file["details"]["relative_l2_error_vs_truth"], r["details"]["relative_l2_error_vs_truth"]);
}
