//! The CLI of registration: the commands run on files, their reports and refusals.

use crate::common;
use common::*;
use lucent::registration::cpu;
use ndarray::{ArrayD, IxDyn};
use num_complex::Complex64;

/// numpy.roll over every axis.
fn roll(x: &ArrayD<f64>, shift: &[isize]) -> ArrayD<f64> {
    let dims = x.shape().to_vec();
    ArrayD::from_shape_fn(IxDyn(&dims), |at| {
        let from: Vec<usize> = (0..dims.len()).map(|a| (at[a] as isize - shift[a]).rem_euclid(dims[a] as isize) as usize).collect();
        x[IxDyn(&from)]
    })
}

/// `lucent register` end to end, on the GPU and on the reference, JSON per moving image.
#[test]
fn cli_register() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let reference = rand_array(&[24, 31]);
    let moving = roll(&reference.mapv(|v| v as f64), &[5, -9]).mapv(|v| v as f32);
    lucent::io::write_real(path("r.npy"), &reference.view()).unwrap();
    lucent::io::write_real(path("m.npy"), &moving.view()).unwrap();
    lucent::io::write_real(path("small.npy"), &rand_array(&[24, 30]).view()).unwrap();
    for device in ["auto", "cpu"] {
        let out = lucent_json(&["--device", device, "register", &path("r.npy"), &path("m.npy"), "--upsample", "10"], &[]);
        assert_eq!(out["details"]["shift"], serde_json::json!([-5.0, 9.0]), "{device}: {out}");
        assert!(out["details"]["error"].as_f64().is_some() && out["details"]["phasediff"].as_f64().is_some(), "{device}: {out}");
    }
    // Values up to f32's limit, as either image (an int64 2^62 read as f32 was accepted as the
    // reference and refused as the moving image: its sum of squares overflowed).
    lucent::io::write_real(path("big_r.npy"), &reference.mapv(|v| v * 3e37).view()).unwrap();
    lucent::io::write_real(path("big_m.npy"), &moving.mapv(|v| v * 2.9e38).view()).unwrap();
    lucent::io::write_real(path("flat.npy"), &ArrayD::from_elem(IxDyn(&[24, 31]), 2f32.powi(62)).view()).unwrap();
    for device in ["auto", "cpu"] {
        let out = lucent_json(&["--device", device, "register", &path("big_r.npy"), &path("big_m.npy")], &[]);
        assert_eq!(out["details"]["shift"], serde_json::json!([-5.0, 9.0]), "{device}: {out}");
        for (r, m) in [("flat.npy", "r.npy"), ("r.npy", "flat.npy")] {
            let out = lucent_cli(&["--device", device, "register", &path(r), &path(m)], &[]);
            assert!(out.status.success(), "{device} {r} {m}: {}", String::from_utf8_lossy(&out.stderr));
        }
    }
    // The same images as their spectra, in Fourier space.
    let spectrum = |x: &ArrayD<f32>| {
        let axes = [0usize, 1];
        lucent::fft::cpu::c2c(&x.mapv(|v| Complex64::new(v as f64, 0.0)), &axes, false, lucent::fft::Norm::Backward)
            .mapv(|v| num_complex::Complex32::new(v.re as f32, v.im as f32))
    };
    lucent::io::write_complex(path("R.npy"), &spectrum(&reference).view()).unwrap();
    lucent::io::write_complex(path("M.npy"), &spectrum(&moving).view()).unwrap();
    for device in ["auto", "cpu"] {
        let out = lucent_json(&["--device", device, "register", &path("R.npy"), &path("M.npy"), "--space", "fourier", "--upsample", "4"], &[]);
        assert_eq!(out["details"]["shift"], serde_json::json!([-5.0, 9.0]), "fourier, {device}: {out}");
    }
    // Masked: the shift of the masked correlation, on both devices.
    let mask = ArrayD::from_shape_vec(IxDyn(&[24, 31]), random(24 * 31).iter().map(|&v| if v > -0.5 { 1.0f32 } else { 0.0 }).collect()).unwrap();
    lucent::io::write_real(path("mask.npy"), &mask.view()).unwrap();
    let want = cpu::masked_phase_cross_correlation(
        &reference.mapv(|v| v as f64),
        &moving.mapv(|v| v as f64),
        &mask.mapv(|v| v != 0.0),
        &mask.mapv(|v| v != 0.0),
        0.3,
        1.0,
    );
    for device in ["auto", "cpu"] {
        let out = lucent_json(
            &["--device", device, "register", &path("r.npy"), &path("m.npy"), "--reference-mask", &path("mask.npy"), "--moving-mask", &path("mask.npy")],
            &[],
        );
        assert_eq!(out["details"]["shift"], serde_json::json!(want), "masked, {device}: {out}");
        assert!(out["details"]["error"].is_null(), "{out}");
    }
    // Masked with --upsample: refined below a sample, in quarters, the same on both devices.
    let shifts: Vec<serde_json::Value> = ["auto", "cpu"]
        .iter()
        .map(|device| {
            let args = [
                "--device",
                device,
                "register",
                &path("r.npy"),
                &path("m.npy"),
                "--reference-mask",
                &path("mask.npy"),
                "--moving-mask",
                &path("mask.npy"),
                "--upsample",
                "4",
            ];
            lucent_json(&args, &[])["details"]["shift"].clone()
        })
        .collect();
    assert_eq!(shifts[0], shifts[1], "masked --upsample 4: GPU and CPU");
    for (got, whole) in shifts[0].as_array().unwrap().iter().zip(&want) {
        let got = got.as_f64().unwrap();
        assert!((got - whole).abs() <= 0.5 && (got * 4.0).fract() == 0.0, "masked --upsample 4: {got} near {whole}");
    }
    let refused = lucent_cli(&["register", &path("r.npy"), &path("small.npy")], &[]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("differ"));
    let refused = lucent_cli(&["register", &path("r.npy"), &path("m.npy"), "--normalization", "bogus"], &[]);
    assert_eq!(refused.status.code(), Some(1));
}

/// `lucent register --transform`: the transform in the report and as an ITK file (read back
/// as the starting transform), the registered image written; refusals leave nothing behind.
#[test]
fn cli_register_transform() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let big = lucent::ndimage::gaussian_filter(gpu(), &rand_array(&[110, 118]), &[2.0], lucent::ndimage::Boundary::Wrap).unwrap();
    let fixed = big.slice(ndarray::s![20..85, 20..91]).to_owned().into_dyn();
    // moving(p + t) = fixed(p), t = (1.75, -2.5).
    let shift = ndarray::Array2::<f64>::eye(2).into_dyn();
    let moving = lucent::ndimage::affine_transform(gpu(), &big, &shift.view(), &[18.25, 22.5], Some(&[65, 71]), &lucent::ndimage::Sampling::default()).unwrap();
    lucent::io::write_real(path("f.npy"), &fixed.view()).unwrap();
    lucent::io::write_real(path("m.npy"), &moving.view()).unwrap();
    let out = lucent_json(
        &["register", &path("f.npy"), &path("m.npy"), "--transform", "rigid", "--metric", "ncc", "-o", &path("r.npy"), "--itk", &path("t.tfm")],
        &[],
    );
    let offset: Vec<f64> = out["details"]["offset"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert!((offset[0] - 1.75).abs() < 0.03 && (offset[1] + 2.5).abs() < 0.03, "{out}");
    assert_eq!(out["shape_out"], serde_json::json!([65, 71]), "{out}");
    let text = std::fs::read_to_string(path("t.tfm")).unwrap();
    let map = lucent::registration::parse_itk_transform(&text).unwrap();
    assert!((map.offset[0] - offset[0]).abs() < 1e-12 && (map.offset[1] - offset[1]).abs() < 1e-12, "{text}");
    // The registered image is the fixed one where the moving image covers it.
    let registered = lucent::io::read_real(path("r.npy")).unwrap();
    let inner = |x: &ArrayD<f32>| x.slice(ndarray::s![5..55, 5..60]).to_owned();
    let worst = (&inner(&registered) - &inner(&fixed)).iter().fold(0f32, |m, v| m.max(v.abs()));
    assert!(worst < 0.01, "{worst}");
    // From the file's transform, one step at the full resolution stays there.
    let again = lucent_json(
        &[
            "register",
            &path("f.npy"),
            &path("m.npy"),
            "--transform",
            "translation",
            "--initial",
            &path("t.tfm"),
            "--shrink-factors",
            "1",
            "--smoothing-sigmas",
            "0",
            "--iterations",
            "1",
        ],
        &[],
    );
    let moved: Vec<f64> = again["details"]["offset"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert!((moved[0] - offset[0]).abs() < 0.01 && (moved[1] - offset[1]).abs() < 0.01, "{again}");
    // From the Fourier-Mellin start.
    let started = lucent_json(&["register", &path("f.npy"), &path("m.npy"), "--transform", "similarity", "--initial", "similarity"], &[]);
    let o: Vec<f64> = started["details"]["offset"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert!((o[0] - 1.75).abs() < 0.03 && (o[1] + 2.5).abs() < 0.03, "{started}");
    lucent::io::write_real(path("v.npy"), &rand_array(&[20, 21, 22]).view()).unwrap();
    for (args, says) in [
        (vec!["register", &path("v.npy"), &path("v.npy"), "--transform", "rigid", "--initial", "similarity", "-o", &path("no.npy")], "2D registrations"),
        (vec!["register", &path("f.npy"), &path("m.npy"), "--metric", "mi", "-o", &path("no.npy")], "add --transform"),
        (vec!["register", &path("f.npy"), &path("m.npy"), "--transform", "affine", "--bins", "20", "-o", &path("no.npy")], "add --metric mi"),
        (vec!["register", &path("f.npy"), &path("m.npy"), &path("m.npy"), "--transform", "affine", "-o", &path("no.npy")], "one at a time"),
        (
            vec![
                "register",
                &path("f.npy"),
                &path("m.npy"),
                "--transform",
                "affine",
                "--reference-mask",
                &path("m.npy"),
                "--moving-mask",
                &path("mask.npy"),
                "-o",
                &path("no.npy"),
            ],
            "mask.npy",
        ),
        (vec!["register", &path("f.npy"), &path("m.npy"), "--transform", "affine", "-o", &path("missing/no.npy")], "does not exist"),
        (vec!["register", &path("f.npy"), &path("m.npy"), "--transform", "affine", "--initial", &path("f.npy"), "-o", &path("no.npy")], "f.npy"),
        (vec!["--device", "cpu", "register", &path("f.npy"), &path("m.npy"), "--transform", "affine", "-o", &path("no.npy")], "GPU only"),
    ] {
        let out = lucent_cli(&args, &[]);
        assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains(says), "{says}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(!dir.path().join("no.npy").exists());
    }
}
