//! The CLI of convolve: the commands run on files, their reports and refusals.

use crate::common;
use common::*;
use lucent::ndimage::{self, Boundary};
use lucent::signal::{self, Mode};
use ndarray::ArrayD;
const TOL: f64 = 1e-6;

fn check(got: &ArrayD<f32>, want: &ArrayD<f64>, tol: f64, what: &str) {
    assert_rel_l2(got, want, tol, what);
}

#[test]
fn cli_convolve_and_filter() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let (a, k) = (rand_array(&[23, 19]), rand_array(&[5, 4]));
    lucent::io::write_real(path("a.npy"), &a.view()).unwrap();
    lucent::io::write_real(path("k.npy"), &k.view()).unwrap();
    let (a64, k64) = (to64(&a), to64(&k));
    let read = |name: &str| lucent::io::read_real(path(name)).unwrap();

    // GPU, FFT; then the CPU reference, direct (exact in f64, then rounded to f32).
    let report = lucent_json(&["convolve", &path("a.npy"), &path("k.npy"), "-o", &path("y.npy"), "--mode", "same", "--method", "fft"], &[]);
    assert_eq!((report["details"]["method"].as_str(), report["options"]["mode"].as_str()), (Some("fft"), Some("same")));
    check(&read("y.npy"), &signal::cpu::convolve(&a64, &k64, Mode::Same).unwrap(), TOL, "cli convolve");
    let args = ["--device", "cpu", "convolve", &path("a.npy"), &path("k.npy"), "-o", &path("z.npy"), "--mode", "valid", "--method", "direct", "--correlate"];
    assert_eq!(lucent_json(&args, &[])["device"]["kind"].as_str(), Some("cpu"));
    check(&read("z.npy"), &signal::cpu::correlate(&a64, &k64, Mode::Valid).unwrap(), TOL, "cli correlate on the CPU");

    // Filters: a Gaussian on the GPU, a kernel convolution with a constant boundary on the CPU.
    lucent_json(&["filter", &path("a.npy"), "-o", &path("g.npy"), "--gaussian", "1.5,0.8", "--boundary", "nearest"], &[]);
    check(&read("g.npy"), &ndimage::cpu::gaussian_filter(&a64, &[1.5f32 as f64, 0.8f32 as f64], Boundary::Nearest), TOL, "cli gaussian");
    let args = [
        "--device",
        "cpu",
        "filter",
        &path("a.npy"),
        "-o",
        &path("c.npy"),
        "--kernel",
        &path("k.npy"),
        "--convolve",
        "--boundary",
        "constant",
        "--cval",
        "-0.25",
    ];
    lucent_json(&args, &[]);
    check(&read("c.npy"), &ndimage::cpu::convolve(&a64, &k64, Boundary::Constant(-0.25)), TOL, "cli convolve filter");

    // Rank filters over a box: median on the GPU, minimum and maximum on the CPU reference and
    // the GPU, each equal to the reference (selections: exactly).
    use ndimage::{cpu, Footprint};
    let boxed = |size: &[usize]| Footprint::new(&ndarray::ArrayD::from_elem(ndarray::IxDyn(size), true).view(), None, &[]).unwrap();
    let f = boxed(&[3, 5]);
    lucent_json(&["filter", &path("a.npy"), "-o", &path("m.npy"), "--median", "3,5", "--boundary", "reflect"], &[]);
    assert_eq!(read("m.npy").mapv(f64::from), cpu::footprint_rank(&a64, &f, 7, Boundary::Reflect), "cli median");
    for device in ["gpu", "cpu"] {
        lucent_json(&["--device", device, "filter", &path("a.npy"), "-o", &path("lo.npy"), "--minimum", "4", "--boundary", "constant", "--cval", "0.5"], &[]);
        assert_eq!(read("lo.npy").mapv(f64::from), cpu::footprint_extreme(&a64, &boxed(&[4, 4]), false, Boundary::Constant(0.5)), "cli minimum {device}");
        lucent_json(&["--device", device, "filter", &path("a.npy"), "-o", &path("hi.npy"), "--maximum", "2,3", "--boundary", "wrap"], &[]);
        assert_eq!(read("hi.npy").mapv(f64::from), cpu::footprint_extreme(&a64, &boxed(&[2, 3]), true, Boundary::Wrap), "cli maximum {device}");
    }

    // Bad input: one line on stderr, non-zero exit, no output file.
    let line = rand_array(&[7]);
    lucent::io::write_real(path("line.npy"), &line.view()).unwrap();
    for args in [
        vec!["convolve", &path("a.npy"), &path("line.npy"), "-o", &path("bad.npy")],
        vec!["convolve", &path("a.npy"), &path("missing.npy"), "-o", &path("bad.npy")],
        vec!["filter", &path("a.npy"), "-o", &path("bad.npy"), "--uniform", "3,3,3"],
        vec!["filter", &path("a.npy"), "-o", &path("bad.npy"), "--gaussian", "1", "--cval", "2"],
        vec!["filter", &path("a.npy"), "-o", &path("bad.npy"), "--median", "3,3,3"],
        vec!["filter", &path("a.npy"), "-o", &path("bad.npy"), "--median", "0"],
        vec!["filter", &path("a.npy"), "-o", &path("bad.npy"), "--median", "19"],
        vec!["--device", "cpu", "filter", &path("a.npy"), "-o", &path("bad.npy"), "--minimum", "3", "--cval", "1"],
    ] {
        let out = lucent_cli(&args, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.trim().lines().count() == 1 && stderr.starts_with("lucent: error:"), "{args:?}: {stderr}");
        assert!(!dir.path().join("bad.npy").exists());
    }
}
