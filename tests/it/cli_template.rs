//! The CLI of template: the commands run on files, their reports and refusals.

use crate::common;
use common::*;
use lucent::registration::{self, PadMode, TemplateMatch};
use ndarray::{ArrayD, IxDyn};

fn max_abs_diff(got: &ArrayD<f32>, want: &ArrayD<f64>) -> f64 {
    assert_eq!(got.shape(), want.shape());
    got.iter().zip(want).map(|(&g, &w)| if g.is_nan() { f64::INFINITY } else { (g as f64 - w).abs() }).fold(0.0, f64::max)
}

#[test]
fn cli_writes_the_map_and_prints_peaks() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let mut image = rand_array(&[40, 36]);
    let t = ArrayD::from_shape_fn(IxDyn(&[5, 6]), |i| ((i[0] * 6 + i[1]) as f32 * 0.8).cos());
    for ((a, b), &v) in t.indexed_iter().map(|(i, v)| ((i[0], i[1]), v)) {
        image[[21 + a, 9 + b]] = v;
    }
    lucent::io::write_real(path("image.npy"), &image.view()).unwrap();
    lucent::io::write_real(path("t.npy"), &t.view()).unwrap();
    let how = TemplateMatch { pad_input: true, mode: PadMode::Symmetric };
    let want = registration::cpu::match_template(&image.mapv(|v| v as f64), &t.mapv(|v| v as f64), &how).unwrap();
    for device in ["auto", "cpu"] {
        let (i, tp, o) = (path("image.npy"), path("t.npy"), path("map.npy"));
        let report =
            lucent_json(&["--device", device, "match", &i, &tp, "-o", &o, "--pad-input", "--mode", "symmetric", "--peaks", "2", "--min-distance", "4"], &[]);
        let map = lucent::io::read_real(&o).unwrap();
        assert!(max_abs_diff(&map, &want) <= 1e-4, "{device}");
        assert_eq!(report["details"]["peaks"][0]["index"], serde_json::json!([23, 12]), "{device}: {report}");
        assert_eq!(report["details"]["peaks"].as_array().unwrap().len(), 2);
    }
    let out = lucent_cli(&["match", &path("t.npy"), &path("image.npy"), "-o", &path("bad.npy")], &[]);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("larger than the image"));
    assert!(!std::path::Path::new(&path("bad.npy")).exists());
}
