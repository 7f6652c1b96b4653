//! The CLI in ASTRA's geometries: `phantom --3d` with exact projections, `radon`, `backproject`,
//! `fbp` (FDK), `em` with --geometry/--volume, `fdk`, `sirt`, `cgls`; GPU against the library and
//! the f64 reference (--device cpu), reports, refusals, nothing written on failure.

use crate::common;
use common::*;
use lucent::tomography::{self as tomo, Filter, Projector};
use serde_json::json;

fn write(path: &std::path::Path, v: serde_json::Value) {
    std::fs::write(path, v.to_string()).unwrap();
}

#[test]
fn cli_cone_beam_commands() {
    let dir = std::env::temp_dir().join(format!("lucent-beam-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    // As an ASTRA script dumps its dicts: astra.create_proj_geom('cone', ...), create_vol_geom(18, 20, 16).
    let angles: Vec<f64> = (0..24).map(|i| i as f64 * std::f64::consts::TAU / 24.0).collect();
    write(
        &dir.join("g.json"),
        json!({"type": "cone", "DetectorSpacingX": 1.5, "DetectorSpacingY": 1.5, "DetectorRowCount": 22, "DetectorColCount": 27,
               "ProjectionAngles": angles, "DistanceOriginSource": 60.0, "DistanceOriginDetector": 30.0}),
    );
    write(
        &dir.join("v.json"),
        json!({"GridRowCount": 18, "GridColCount": 20, "GridSliceCount": 16,
               "option": {"WindowMinX": -10.0, "WindowMaxX": 10.0, "WindowMinY": -9.0, "WindowMaxY": 9.0, "WindowMinZ": -8.0, "WindowMaxZ": 8.0}}),
    );
    let geometry = ["--geometry", &path("g.json"), "--volume", &path("v.json")];
    let report = lucent_json(
        &[&["phantom", "--3d", "-o", &path("x.npy"), "--projections", &path("p.npy"), "--geometry", &path("g.json"), "--volume", &path("v.json")][..]].concat(),
        &[],
    );
    assert_eq!(report["shape_out"], json!([16, 18, 20]), "{report}");
    let (x, p) = (lucent::io::read_real(path("x.npy")).unwrap(), lucent::io::read_real(path("p.npy")).unwrap());
    assert_eq!(p.shape(), [22, 24, 27]);
    let g = lucent::io::astra::projection_geometry(&lucent::io::astra::read_json(&dir.join("g.json")).unwrap()).unwrap();
    let v = lucent::io::astra::volume_geometry(&lucent::io::astra::read_json(&dir.join("v.json")).unwrap()).unwrap();
    let gpu = gpu();

    // Each command on the GPU equals the library's call; on the CPU, the f64 reference.
    let (xs, ps) = (path("x.npy"), path("p.npy"));
    let cases: [(&str, Vec<&str>, ndarray::ArrayD<f32>); 4] = [
        ("radon", vec!["radon", &xs], tomo::forward_project(gpu, &x.view(), &g, &v).unwrap()),
        ("backproject", vec!["backproject", &ps, "--projector", "astra"], tomo::back_project(gpu, &p.view(), &g, &v, Projector::Astra).unwrap()),
        ("fbp", vec!["fbp", &ps, "--filter", "hann"], tomo::fdk(gpu, &p.view(), &g, &v, Filter::Hann).unwrap()),
        ("fdk", vec!["fdk", &ps], tomo::fdk(gpu, &p.view(), &g, &v, Filter::Ramp).unwrap()),
    ];
    for (name, args, want) in cases {
        for device in ["auto", "cpu"] {
            let out = path(&format!("{name}-{device}.npy"));
            let report = lucent_json(&[&["--device", device][..], &args, &geometry, &["-o", &out]].concat(), &[]);
            assert_eq!(report["details"]["geometry"], "cone", "{report}");
            let got = lucent::io::read_real(&out).unwrap();
            assert_rel_l2(&got, &want.mapv(f64::from), if device == "cpu" { 1e-5 } else { 0.0 }, &format!("{name} on {device}"));
        }
    }
    // FDK gives the phantom back (inside its skull, roughly).
    let f = lucent::io::read_real(path("fdk-auto.npy")).unwrap();
    assert!((f[[8, 9, 10]] - x[[8, 9, 10]]).abs() < 0.1, "{} vs {}", f[[8, 9, 10]], x[[8, 9, 10]]);

    // The iterative commands: residuals reported, falling; bounds kept.
    let report = lucent_json(&[&["sirt", &path("p.npy")][..], &geometry, &["-o", &path("s.npy"), "-n", "12", "--min", "0", "--max", "0.3"]].concat(), &[]);
    let residuals: Vec<f64> = serde_json::from_value(report["details"]["residuals"].clone()).unwrap();
    assert_eq!(residuals.len(), 12);
    assert!(residuals[11] < 0.5 * residuals[0], "{residuals:?}");
    let s = lucent::io::read_real(path("s.npy")).unwrap();
    assert!(s.iter().all(|&v| (0.0..=0.3).contains(&v)));
    let report = lucent_json(&[&["cgls", &path("p.npy")][..], &geometry, &["-o", &path("c.npy"), "-n", "6"]].concat(), &[]);
    let want =
        tomo::iterative(gpu, tomo::Algorithm::Cgls, &p.view(), &g, &v, &tomo::IterativeOptions { iterations: 6, ..Default::default() }, &mut |_| {}).unwrap();
    assert_eq!(lucent::io::read_real(path("c.npy")).unwrap(), want.volume);
    assert_eq!(report["details"]["residuals"].as_array().unwrap().len(), 6);
    lucent_json(&[&["em", &path("p.npy")][..], &geometry, &["-o", &path("e.npy"), "-n", "5"]].concat(), &[]);
    let report =
        lucent_json(&[&["sart", &path("p.npy")][..], &geometry, &["-o", &path("os.npy"), "-n", "3", "--subset-size", "5", "--min", "0"]].concat(), &[]);
    assert_eq!(report["options"]["subset_size"], 5, "{report}");
    let want = tomo::iterative(
        gpu,
        tomo::Algorithm::Sart { subset_size: 5 },
        &p.view(),
        &g,
        &v,
        &tomo::IterativeOptions { iterations: 3, min: Some(0.0), ..Default::default() },
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(lucent::io::read_real(path("os.npy")).unwrap(), want.volume);
    let report = lucent_json(&[&["osem", &path("p.npy")][..], &geometry, &["-o", &path("oe.npy"), "-n", "2", "--subset-size", "6"]].concat(), &[]);
    assert_eq!(report["options"]["subset_size"], 6, "{report}");
    let want = tomo::iterative(
        gpu,
        tomo::Algorithm::Osem { subset_size: 6 },
        &p.view(),
        &g,
        &v,
        &tomo::IterativeOptions { iterations: 2, ..Default::default() },
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(lucent::io::read_real(path("oe.npy")).unwrap(), want.volume);
    let report =
        lucent_json(&[&["fista", &path("p.npy")][..], &geometry, &["-o", &path("ft.npy"), "-n", "4", "--tv-weight", "0.3", "--min", "0"]].concat(), &[]);
    assert!(report["details"]["lipschitz"].as_f64().unwrap() > 0.0 && report["options"]["tv_iterations"] == 20, "{report}");
    let fista = tomo::Algorithm::FistaTv { weight: 0.3, tv_iterations: 20 };
    let want =
        tomo::iterative(gpu, fista, &p.view(), &g, &v, &tomo::IterativeOptions { iterations: 4, min: Some(0.0), ..Default::default() }, &mut |_| {}).unwrap();
    assert_eq!(lucent::io::read_real(path("ft.npy")).unwrap(), want.volume);

    // The detector offset search runs and reports (its accuracy: the library's tests; 24 views of
    // a 20³ phantom are too few for the entropy criterion).
    let report = lucent_json(&["find-center", &path("p.npy"), "--geometry", &path("g.json"), "--radius", "4"], &[]);
    assert!(report["details"]["offset"].as_f64().unwrap().abs() <= 4.5 && report["details"]["tried"].as_array().unwrap().len() > 20, "{report}");

    // Refusals: one line, nothing written.
    let refuse = |args: Vec<&str>, what: &str| {
        let out = lucent_cli(&args, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(what), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    };
    refuse([&["radon", &path("p.npy")][..], &geometry, &["-o", &path("bad.npy")]].concat(), "the geometry takes [16, 18, 20]");
    refuse(vec!["fdk", &path("p.npy"), "--geometry", &path("g.json"), "-o", &path("bad.npy")], "--geometry and --volume go together");
    refuse([&["radon", &path("x.npy"), "--angles", "5"][..], &geometry, &["-o", &path("bad.npy")]].concat(), "leave out --angles");
    write(&dir.join("h.json"), json!({"type": "helical", "DetectorRowCount": 4}));
    refuse(vec!["fdk", &path("p.npy"), "--geometry", &path("h.json"), "--volume", &path("v.json"), "-o", &path("bad.npy")], "type 'helical'");
    write(&dir.join("n.json"), json!({"type": "cone", "DetectorSpacingX": 1.0}));
    refuse(vec!["fdk", &path("p.npy"), "--geometry", &path("n.json"), "--volume", &path("v.json"), "-o", &path("bad.npy")], "no 'DetectorSpacingY'");
    refuse([&["sirt", &path("p.npy")][..], &geometry, &["-o", &path("bad.npy"), "-n", "0"]].concat(), "iterations");
    refuse([&["fista", &path("p.npy")][..], &geometry, &["-o", &path("bad.npy"), "--tv-weight", "-1"]].concat(), "TV weight");
    refuse([&["osem", &path("x.npy")][..], &geometry, &["-o", &path("bad.npy")]].concat(), "the geometry takes");
    assert!(!dir.join("bad.npy").exists());
    std::fs::remove_dir_all(&dir).ok();
}
