//! The CLI of convolve split: the commands run on files, their reports and refusals.

use crate::common;
use common::*;
use lucent::signal::{self, Mode};
use ndarray::ArrayD;
const TOL: f64 = 1e-6;

fn check(got: &ArrayD<f32>, want: &ArrayD<f64>, what: &str) {
    assert_rel_l2(got, want, TOL, what);
}

/// `lucent convolve` end to end: a part budget splits the run (correlation too), LUCENT_MAX_BUFFER_BYTES
/// forces the split, and a budget no part fits is a one-line error.
#[test]
fn cli_splits_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let (a, k) = (rand_array(&[26, 7, 6]), rand_array(&[5, 3, 2]));
    lucent::io::write_real(path("a.npy"), &a.view()).unwrap();
    lucent::io::write_real(path("k.npy"), &k.view()).unwrap();
    let run = |extra: &[&str], env: &[(&str, &str)]| {
        let (a, k, y) = (path("a.npy"), path("k.npy"), path("y.npy"));
        let args = [&["convolve", a.as_str(), k.as_str(), "-o", y.as_str()], extra, &["--json", "--quiet"]].concat();
        lucent_cli(&args, env)
    };
    let (a64, k64) = (to64(&a), to64(&k));
    // Beyond one buffer the convolution streams slabs of rows (each holding its arrays in
    // chunks under this limit), with a device memory budget below the whole run's too.
    let small_buffers = [("LUCENT_MAX_BUFFER_BYTES", "4000")];
    let small_device = [("LUCENT_MAX_BUFFER_BYTES", "4000"), ("LUCENT_DEVICE_MEMORY_BYTES", "24000")];
    let cases: [(&[&str], &[(&str, &str)], &str, ArrayD<f64>); 4] = [
        (&["--mode", "same", "--max-part-bytes", "20000"], &[], "split", signal::cpu::convolve(&a64, &k64, Mode::Same).unwrap()),
        (&["--mode", "valid", "--correlate", "--parts", "3"], &[], "split", signal::cpu::correlate(&a64, &k64, Mode::Valid).unwrap()),
        (&["--method", "fft"], &small_device, "slabs", signal::cpu::convolve(&a64, &k64, Mode::Full).unwrap()),
        (&["--method", "fft"], &small_buffers, "slabs", signal::cpu::convolve(&a64, &k64, Mode::Full).unwrap()),
    ];
    for (extra, env, path_taken, want) in cases {
        let out = run(extra, env);
        assert!(out.status.success(), "{extra:?}: {}", String::from_utf8_lossy(&out.stderr));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        match path_taken {
            "split" => assert!(report["details"]["split"]["parts"].as_u64().unwrap() > 1, "{extra:?}: {report}"),
            "slabs" => assert!(report["details"]["slabs"]["slabs"].as_u64().unwrap() > 1 && report["details"]["split"].is_null(), "{extra:?}: {report}"),
            other => panic!("no such path {other}"),
        }
        // The placement names the form that ran and its pieces; under the small device the whole
        // run gave way first, with the budget it was beyond.
        let placement = &report["placement"];
        assert_eq!(placement["form"], path_taken, "{extra:?}: {report}");
        assert!(placement["pieces"].as_u64().unwrap() > 1, "{extra:?}: {report}");
        let declined = placement["declined"].as_array().unwrap();
        if !env.is_empty() {
            assert_eq!(declined[0]["form"], "whole", "{extra:?} {env:?}: {report}");
            assert!(declined[0]["why"].as_str().unwrap().contains("bytes"), "{extra:?} {env:?}: {report}");
        }
        check(&lucent::io::read_real(path("y.npy")).unwrap(), &want, &format!("cli {extra:?} {env:?}"));
    }
    let out = run(&["--max-part-bytes", "64"], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // (lavapipe may print its own warnings on stderr too.)
    let ours: Vec<&str> = stderr.lines().filter(|l| l.starts_with("lucent:")).collect();
    assert!(!out.status.success() && ours.len() == 1 && ours[0].contains("one part"), "{stderr}");
}
