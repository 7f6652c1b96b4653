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
    let out = lucent_json(&["denoise", &path("series.npy"), "-o", &path("gpu.npy"), "--dims", "4", "--noise-level", "0.3"], &[]);
    assert_eq!(out["shape_out"], serde_json::json!([3, 8, 11, 10]), "{out}");
    assert_eq!(out["details"]["dims"], 4, "{out}");
    assert!(out["details"]["report"]["slabs"].as_u64().unwrap() >= 1, "{out}");
    let o = Options { dims: Some(4), sigma: 0.3, ..Options::default() };
    let want = cpu::adaptive_filter(&to64(&x), &o).unwrap();
    let got = lucent::io::read_real(path("gpu.npy")).unwrap();
    assert!(rel(&got, &want) < 1e-5, "{}", rel(&got, &want));
    let out = lucent_json(&["denoise", &path("series.npy"), "-o", &path("cpu.npy"), "--dims", "4", "--noise-level", "0.3", "--device", "cpu"], &[]);
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
    args.extend(["-o", &tiff_out, "--dims", "4", "--noise-level", "0.3"]);
    lucent_json(&args, &[]);
    let got = lucent::io::read_real(path("tiff.npy")).unwrap();
    assert!(rel(&got, &want) < 1e-5, "{}", rel(&got, &want));
    // Refusals leave no output.
    for (args, says) in [
        (vec!["denoise".to_string(), path("series.npy"), "-o".into(), path("bad.npy"), "--dims".into(), "5".into()], "2, 3 or 4 axes"),
        (vec!["denoise".to_string(), path("series.npy"), "-o".into(), path("bad.npy"), "--noise-level".into(), "0".into()], "sigma"),
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

#[test]
fn the_cli_runs_block_matching_non_local_means_and_total_variation() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let x = textured(&[13, 17, 11]);
    lucent::io::write_real(path("volume.npy"), &x.view()).unwrap();
    let gpu = gpu();
    let volume = path("volume.npy");
    // Each method equals its library call on the same file.
    let bm = lucent::denoise::bm4d(gpu, &x, &lucent::denoise::Bm4dNoise::Sigma(0.3), None, lucent::denoise::Bm4dStage::All).unwrap();
    let nlm = lucent::denoise::denoise_nl_means(gpu, &x, &lucent::denoise::NlMeans { h: 0.5, ..Default::default() }, None).unwrap();
    let tv = lucent::denoise::denoise_tv_chambolle(gpu, &x, 0.2, 2e-4, 200, None).unwrap();
    for (args, want) in
        [(vec!["--method", "bm", "--sigma", "0.3"], &bm), (vec!["--method", "nlm", "--h", "0.5"], &nlm), (vec!["--method", "tv", "--weight", "0.2"], &tv)]
    {
        let out_path = path(&format!("{}.npy", args[1]));
        let mut cmd = vec!["denoise", &volume, "-o", &out_path];
        cmd.extend(args.iter().copied());
        let out = lucent_json(&cmd, &[]);
        assert_eq!(out["shape_out"], serde_json::json!([13, 17, 11]), "{out}");
        let got = lucent::io::read_real(&out_path).unwrap();
        assert!(rel(&got, &to64(want)) < 1e-6, "{args:?}");
    }
    // Correlated noise from a PSD file (bm4d's sigma_psd), as the library takes it.
    let psd = rand_array(&[13, 17, 11]).mapv(|v| 0.5 + 100.0 * v.abs());
    lucent::io::write_real(path("psd.npy"), &psd.view()).unwrap();
    let want = lucent::denoise::bm4d(gpu, &x, &lucent::denoise::Bm4dNoise::Psd(psd.view()), None, lucent::denoise::Bm4dStage::All).unwrap();
    let out = lucent_json(&["denoise", &volume, "-o", &path("corr.npy"), "--method", "bm", "--psd", &path("psd.npy")], &[]);
    assert!(out["details"]["sigma"].is_null(), "{out}");
    assert!(rel(&lucent::io::read_real(path("corr.npy")).unwrap(), &to64(&want)) < 1e-6);
    lucent::io::write_real(path("short.npy"), &psd.slice(ndarray::s![..12, .., ..]).to_owned().into_dyn().view()).unwrap();
    lucent::io::write_real(path("negative.npy"), &psd.mapv(|v| -v).view()).unwrap();
    // Without --sigma block matching estimates it (scikit-image's estimate_sigma).
    let out = lucent_json(&["denoise", &volume, "-o", &path("est.npy"), "--method", "bm"], &[]);
    let est = lucent::denoise::estimate_sigma(&x).unwrap();
    assert!((out["details"]["sigma"].as_f64().unwrap() - est).abs() < 1e-12, "{out}");
    // Refusals: one line each, nothing written.
    let (short, negative) = (path("short.npy"), path("negative.npy"));
    for (args, says) in [
        (vec!["--method", "bm", "--sigma", "0"], "sigma"),
        (vec!["--method", "bm", "--device", "cpu"], "GPU only"),
        (vec!["--method", "tv", "--weight", "-1"], "weight"),
        (vec!["--method", "bm", "--psd", &short], "PSD of shape"),
        (vec!["--method", "bm", "--psd", &negative], "PSD must be finite"),
        (vec!["--method", "nlm", "--psd", &short], "--psd is block matching's"),
        (vec!["--method", "bm", "--psd", &short, "--sigma", "0.1"], "cannot be used with"),
    ] {
        let mut cmd = vec!["denoise", &volume];
        let bad = path("bad.npy");
        cmd.extend(["-o", &bad]);
        cmd.extend(args.iter().copied());
        let out = lucent_cli(&cmd, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(says), "{args:?}: {err}");
        assert!(!std::path::Path::new(&bad).exists());
    }
}
