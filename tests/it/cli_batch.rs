//! The CLI over many inputs (`-o OUTDIR/`), its one report shape, and its quiet stderr.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{arr, lucent_cli, rand_array, random_positive, rel_l2};
use lucent::io;
use lucent::ndimage;
use lucent::ndimage::Boundary;
use lucent::restoration::{cpu as rl_cpu, RlOptions};
use lucent::signal::{self, Mode};

fn lucent(args: &[&str]) -> Output {
    lucent_cli(args, &[])
}

fn json_lines(out: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("lucent-cli-batch-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Every report has the same keys, whatever the command.
fn assert_report_shape(r: &serde_json::Value, command: &str) {
    assert_eq!(r["command"], command, "{r}");
    assert!(["gpu", "cpu"].contains(&r["device"]["kind"].as_str().unwrap()), "{r}");
    assert!(r["device"]["adapters"].is_array(), "{r}");
    for key in ["input", "output"] {
        assert!(r[key].is_string(), "{key}: {r}");
    }
    for key in ["shape_in", "shape_out"] {
        assert!(r[key].is_array(), "{key}: {r}");
    }
    for key in ["open", "pipelines", "read", "compute", "write", "total"] {
        assert!(r["ms"][key].as_f64().is_some_and(|v| v >= 0.0), "ms.{key}: {r}");
    }
    assert!(r["options"].is_object() && r["details"].is_object(), "{r}");
}

/// Two good inputs and a bad one between them: both good ones are filtered and written, the bad
/// one is reported and leaves no file, the exit code is 1.
#[test]
fn filter_goes_on_past_a_bad_file() {
    let dir = Dir::new("filter");
    let (a, b) = (rand_array(&[13, 17]), rand_array(&[6, 9, 5]));
    io::write_real(dir.path("a.npy"), &a.view()).unwrap();
    io::write_real(dir.path("b.npy"), &b.view()).unwrap();
    std::fs::write(dir.path("bad.npy"), b"not an npy file").unwrap();
    let out = dir.path("out/");
    let inputs = [dir.path("a.npy"), dir.path("bad.npy"), dir.path("b.npy")];
    let run = lucent(&["filter", s(&inputs[0]), s(&inputs[1]), s(&inputs[2]), "-o", s(&out), "--gaussian", "1.5", "--boundary", "mirror", "--json", "--quiet"]);
    assert_eq!(run.status.code(), Some(1), "{}", String::from_utf8_lossy(&run.stderr));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("bad.npy") && stderr.contains("1 of 3 inputs failed"), "{stderr}");
    let reports = json_lines(&run);
    assert_eq!(reports.len(), 3);
    assert!(reports[1]["error"].is_string(), "{}", reports[1]);
    for (r, x, name) in [(&reports[0], &a, "a.npy"), (&reports[2], &b, "b.npy")] {
        assert_report_shape(r, "filter");
        assert_eq!(r["options"]["boundary"], "mirror");
        let got = io::read_real(out.join(name)).unwrap();
        let want = ndimage::cpu::gaussian_filter(&x.mapv(f64::from), &vec![1.5; x.ndim()], Boundary::Mirror);
        assert!(rel_l2(got.as_slice().unwrap(), want.as_slice().unwrap()) < 1e-5, "{name}");
    }
    assert!(!out.join("bad.npy").exists());
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 2, "only the two results, no temporaries");
}

/// Several inputs, the kernel last; one spectrum serves all; PNG inputs are written as TIFF.
#[test]
fn convolve_many_inputs_with_one_kernel() {
    let dir = Dir::new("convolve");
    let k = rand_array(&[4, 3]);
    io::write_real(dir.path("k.npy"), &k.view()).unwrap();
    let xs: Vec<_> = (0..3).map(|_| rand_array(&[21, 16])).collect();
    for (i, x) in xs.iter().enumerate() {
        io::write_real(dir.path(&format!("x{i}.npy")), &x.view()).unwrap();
    }
    let out = dir.path("blurred");
    std::fs::create_dir_all(&out).unwrap();
    let p: Vec<PathBuf> = (0..3).map(|i| dir.path(&format!("x{i}.npy"))).collect();
    let run =
        lucent(&["convolve", s(&p[0]), s(&p[1]), s(&p[2]), s(&dir.path("k.npy")), "-o", s(&out), "--mode", "same", "--method", "fft", "--json", "--quiet"]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let reports = json_lines(&run);
    assert_eq!(reports.len(), 3);
    for (i, (r, x)) in reports.iter().zip(&xs).enumerate() {
        assert_report_shape(r, "convolve");
        assert_eq!(r["details"]["method"], "fft");
        // The device is opened once, for the first input.
        assert_eq!(r["ms"]["open"].as_f64().unwrap() > 0.0, i == 0, "{r}");
        let got = io::read_real(out.join(format!("x{i}.npy"))).unwrap();
        let want = signal::cpu::convolve(&x.mapv(f64::from), &k.mapv(f64::from), Mode::Same).unwrap();
        assert!(rel_l2(got.as_slice().unwrap(), want.as_slice().unwrap()) < 1e-5, "input {i}");
    }
    // Several inputs need a directory.
    let run = lucent(&["convolve", s(&p[0]), s(&p[1]), s(&dir.path("k.npy")), "-o", s(&dir.path("one.npy"))]);
    assert_eq!(run.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&run.stderr).contains("need an output directory"));
}

#[test]
fn deconvolve_and_fft_report_alike() {
    let dir = Dir::new("rl");
    let image = arr(&[19, 23], random_positive(437));
    let psf = arr(&[5, 5], random_positive(25));
    io::write_real(dir.path("image.npy"), &image.view()).unwrap();
    io::write_real(dir.path("psf.npy"), &psf.view()).unwrap();
    let run = lucent(&["deconvolve", s(&dir.path("image.npy")), "--psf", s(&dir.path("psf.npy")), "-o", s(&dir.path("out/")), "-n", "4", "--json", "--quiet"]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let r = &json_lines(&run)[0];
    assert_report_shape(r, "deconvolve");
    assert_eq!(r["options"]["boundary"], "zero");
    assert_eq!(r["details"]["path"], "whole");
    let got = io::read_real(dir.path("out/image.npy")).unwrap();
    let want = rl_cpu::richardson_lucy(&image.view(), &psf.view(), 4, &RlOptions::default()).unwrap().estimate;
    assert!(rel_l2(got.as_slice().unwrap(), want.as_slice().unwrap()) < 1e-4);

    let run = lucent(&["fft", s(&dir.path("image.npy")), "-o", s(&dir.path("half.npy")), "--real", "--norm", "ortho", "--json", "--quiet"]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let r = &json_lines(&run)[0];
    assert_report_shape(r, "fft");
    assert_eq!((r["options"]["transform"].as_str(), r["options"]["norm"].as_str()), (Some("rfftn"), Some("ortho")));
    assert_eq!(r["shape_out"], serde_json::json!([19, 12]));
}

/// Mesa's "XDG_RUNTIME_DIR is invalid or not set" never reaches the user.
#[test]
fn info_prints_only_its_own_output() {
    let run = Command::new(env!("CARGO_BIN_EXE_lucent")).arg("info").env_remove("XDG_RUNTIME_DIR").output().unwrap();
    assert!(run.status.success());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!stderr.contains("XDG_RUNTIME_DIR"), "{stderr}");
}
