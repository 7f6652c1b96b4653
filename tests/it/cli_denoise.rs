//! The CLI of denoise: the commands run on files, their reports and refusals.

use crate::common;
use common::*;
use lucent::denoise::cpu;
use lucent::denoise::Options;
use ndarray::ArrayD;

/// Smooth random data (noise through a small Gaussian, plus noise): both structure and noise.
fn textured(dims: &[usize]) -> ArrayD<f32> {
    let noise = to64(&rand_array(dims));
    let sigmas = vec![1.5; dims.len()];
    let smooth = lucent::ndimage::cpu::gaussian_filter(&noise, &sigmas, lucent::ndimage::Boundary::Mirror);
    (smooth * 8.0 + to64(&rand_array(dims)) * 0.3).mapv(|v| v as f32)
}

fn rel(got: &ArrayD<f32>, want: &ArrayD<f64>) -> f64 {
    rel_l2(got.as_standard_layout().as_slice().unwrap(), want.as_standard_layout().as_slice().unwrap())
}

#[test]
fn the_cli_denoises_npy_and_tiff_series_on_the_gpu_and_the_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let x = textured(&[3, 8, 11, 10]);
    lucent::io::write_real(path("series.npy"), &x.view()).unwrap();
    let out = lucent_json(&["denoise", &path("series.npy"), "-o", &path("gpu.npy"), "--dims", "4", "--sigma", "0.3"], &[]);
    assert_eq!(out["shape_out"], serde_json::json!([3, 8, 11, 10]), "{out}");
    assert_eq!(out["details"]["dims"], 4, "{out}");
    assert!(out["details"]["report"]["slabs"].as_u64().unwrap() >= 1, "{out}");
    let o = Options { dims: Some(4), sigma: 0.3, ..Options::default() };
    let want = cpu::adaptive_filter(&to64(&x), &o).unwrap();
    let got = lucent::io::read_real(path("gpu.npy")).unwrap();
    assert!(rel(&got, &want) < 1e-5, "{}", rel(&got, &want));
    let out = lucent_json(&["denoise", &path("series.npy"), "-o", &path("cpu.npy"), "--dims", "4", "--sigma", "0.3", "--device", "cpu"], &[]);
    assert!(out["details"]["report"].is_null(), "{out}");
    let got = lucent::io::read_real(path("cpu.npy")).unwrap();
    assert!(rel(&got, &want) < 1e-6, "{}", rel(&got, &want));
    // TIFF volumes as time points: the same as the .npy series.
    let frames: Vec<String> = (0..3)
        .map(|t| {
            let p = path(&format!("t{t}.tif"));
            lucent::io::write_real(&p, &x.index_axis(ndarray::Axis(0), t).to_owned().view()).unwrap();
            p
        })
        .collect();
    let mut args: Vec<&str> = vec!["denoise"];
    args.extend(frames.iter().map(|s| s.as_str()));
    let tiff_out = path("tiff.npy");
    args.extend(["-o", &tiff_out, "--dims", "4", "--sigma", "0.3"]);
    lucent_json(&args, &[]);
    let got = lucent::io::read_real(path("tiff.npy")).unwrap();
    assert!(rel(&got, &want) < 1e-5, "{}", rel(&got, &want));
    // Refusals leave no output.
    for (args, says) in [
        (vec!["denoise".to_string(), path("series.npy"), "-o".into(), path("bad.npy"), "--dims".into(), "5".into()], "2, 3 or 4 axes"),
        (vec!["denoise".to_string(), path("series.npy"), "-o".into(), path("bad.npy"), "--sigma".into(), "0".into()], "sigma"),
        (vec!["denoise".to_string(), frames[0].clone(), path("series.npy"), "-o".into(), path("bad.npy")], "shape"),
    ] {
        let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        let out = lucent_cli(&args, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!dir.path().join("bad.npy").exists());
    }
}
