//! The CLI of tomography: the commands run on files, their reports and refusals.

use crate::common;
use common::*;
use lucent::phantom::shepp_logan;
use ndarray::{ArrayD, Axis};

fn rel_l2_of(got: &ArrayD<f32>, want: &ArrayD<f64>) -> f64 {
    rel_l2(got.as_slice().unwrap(), want.as_slice().unwrap())
}

#[test]
fn cli_phantom_radon_fbp_backproject() {
    let dir = std::env::temp_dir().join(format!("lucent-tomo-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    lucent_json(&["phantom", "-o", &path("p.npy"), "--size", "48"], &[]);
    let phantom = lucent::io::read_real(path("p.npy")).unwrap();
    assert_eq!(phantom.shape(), [48, 48]);
    let want = shepp_logan::image(48);
    assert!(phantom.iter().zip(want.iter()).all(|(&a, &b)| a == b as f32));
    let mut results = Vec::new();
    for device in ["auto", "cpu"] {
        let out =
            lucent_json(&["--device", device, "radon", &path("p.npy"), "-o", &path("s.npy"), "--angles", "60", "--detectors", "53", "--center", "26.5"], &[]);
        assert_eq!(out["shape_out"], serde_json::json!([60, 53]), "{out}");
        lucent_json(
            &["--device", device, "fbp", &path("s.npy"), "-o", &path(&format!("f-{device}.npy")), "--size", "48", "--center", "26.5", "--filter", "hamming"],
            &[],
        );
        lucent_json(&["--device", device, "backproject", &path("s.npy"), "-o", &path(&format!("b-{device}.npy")), "--size", "48", "--center", "26.5"], &[]);
        results.push(["f", "b"].map(|k| lucent::io::read_real(path(&format!("{k}-{device}.npy"))).unwrap()));
    }
    for (k, (gpu, cpu)) in results[0].iter().zip(&results[1]).enumerate() {
        assert_eq!(gpu.shape(), [48, 48]);
        assert!(rel_l2_of(gpu, &cpu.mapv(f64::from)) <= 1e-5, "GPU and CPU differ ({k})");
    }
    // EM on both devices: the same KL divergences.
    let kl: Vec<Vec<f64>> = ["auto", "cpu"]
        .iter()
        .map(|device| {
            let out = lucent_json(&["--device", device, "em", &path("s.npy"), "-o", &path("e.npy"), "-n", "4", "--size", "48", "--center", "26.5"], &[]);
            out["details"]["kl_divergence"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect()
        })
        .collect();
    assert_eq!(kl[0].len(), 4);
    assert!(kl[0].iter().zip(&kl[1]).all(|(a, b)| (a - b).abs() <= 1e-4 * b.abs()), "{kl:?}");
    // The rotation centre the sinogram was taken with (26.5; the middle of 53 bins is 26).
    for device in ["auto", "cpu"] {
        let out = lucent_json(&["--device", device, "find-center", &path("s.npy"), "--radius", "3"], &[]);
        assert!((out["details"]["center"].as_f64().unwrap() - 26.5).abs() <= 0.3, "{device}: {out}");
    }
    // A stack of two slices, with its angles from a file.
    let stack = ndarray::stack(Axis(0), &[phantom.view(), phantom.view()]).unwrap();
    lucent::io::write_real(path("stack.npy"), &stack.view()).unwrap();
    let angles = ArrayD::from_shape_vec(ndarray::IxDyn(&[7]), (0..7).map(|i| 0.3 * i as f32).collect()).unwrap();
    lucent::io::write_real(path("angles.npy"), &angles.view()).unwrap();
    let out = lucent_json(&["radon", &path("stack.npy"), "-o", &path("ss.npy"), "--angles-file", &path("angles.npy")], &[]);
    assert_eq!(out["shape_out"], serde_json::json!([2, 7, 48]), "{out}");
    // Refusals.
    let refused = |args: &[&str], says: &str| {
        let out = lucent_cli(args, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    };
    lucent::io::write_real(path("wide.npy"), &rand_array(&[8, 9]).view()).unwrap();
    refused(&["radon", &path("wide.npy"), "-o", &path("x.npy")], "square images");
    refused(&["fbp", &path("s.npy"), "-o", &path("x.npy"), "--angles-file", &path("angles.npy")], "7 angles for a sinogram of 60 rows");
    refused(&["radon", &path("p.npy"), "-o", &path("x.npy"), "--angles", "4", "--angles-file", &path("angles.npy")], "give one");
    refused(&["radon", &path("p.npy"), "-o", &path("x.npy"), "--center", "nan"], "rotation centre");
    refused(&["fbp", &path("s.npy"), "-o", &path("x.npy"), "--filter", "butterworth"], "possible values");
    // The log-polar method where asked (the GPU against the direct reference on the CPU), and
    // refused where it does not apply or on the CPU.
    let out = lucent_json(&["radon", &path("p.npy"), "-o", &path("lp.npy"), "--angles", "72", "--method", "logpolar"], &[]);
    assert_eq!(out["details"]["method"], "logpolar", "{out}");
    let out = lucent_json(&["--device", "cpu", "radon", &path("p.npy"), "-o", &path("dp.npy"), "--angles", "72"], &[]);
    assert_eq!(out["details"]["method"], "direct", "{out}");
    let (lp, dp) = (lucent::io::read_real(path("lp.npy")).unwrap(), lucent::io::read_real(path("dp.npy")).unwrap());
    assert!(rel_l2_of(&lp, &dp.mapv(f64::from)) <= 0.05, "log-polar and direct projections differ by {}", rel_l2_of(&lp, &dp.mapv(f64::from)));
    refused(&["radon", &path("p.npy"), "-o", &path("x.npy"), "--method", "logpolar", "--center", "20"], "log-polar method does not apply");
    refused(&["--device", "cpu", "radon", &path("p.npy"), "-o", &path("x.npy"), "--method", "logpolar"], "runs on a GPU");
    refused(&["radon", &path("p.npy"), "-o", &path("x.npy"), "--method", "fourier"], "possible values");
    lucent::io::write_real(path("negative.npy"), &rand_array(&[6, 8]).view()).unwrap();
    for device in ["auto", "cpu"] {
        refused(&["--device", device, "em", &path("negative.npy"), "-o", &path("x.npy"), "-n", "2"], "counts of 0 or more");
    }
    lucent::io::write_real(path("four.npy"), &rand_array(&[2, 2, 4, 4]).view()).unwrap();
    refused(&["radon", &path("four.npy"), "-o", &path("x.npy")], "2 axes, or 3");
    assert!(!dir.join("x.npy").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
