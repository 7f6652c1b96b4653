//! The CLI of stripes: the commands run on files, their reports and refusals.

use crate::common;
use common::*;

#[test]
fn cli_phantom_then_register_volume() {
    let dir = std::env::temp_dir().join(format!("lucent-stripes-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let made = lucent_json(
        &[
            "phantom",
            "--aooct",
            "--size",
            "48,40,48",
            "--seed",
            "4",
            "-o",
            &path("ref.npy"),
            "--moving",
            &path("m0.npy"),
            "--moving",
            &path("m1.npy"),
            "--truth",
            &path("truth.csv"),
        ],
        &[],
    );
    assert_eq!(made["shape_out"], serde_json::json!([48, 40, 48]));
    let truth: Vec<Vec<f64>> =
        std::fs::read_to_string(path("truth.csv")).unwrap().lines().skip(1).map(|l| l.split(',').map(|v| v.parse().unwrap()).collect()).collect();
    assert_eq!(truth.len(), 96);
    let mut tables = Vec::new();
    for device in ["auto", "cpu"] {
        let csv = path(&format!("shifts-{device}.csv"));
        let report = lucent_json(
            &[
                "--device",
                device,
                "register-volume",
                &path("ref.npy"),
                &path("m0.npy"),
                &path("m1.npy"),
                "-o",
                &csv,
                "--average",
                &path("mean.npy"),
                "--coarse-step",
                "12",
            ],
            &[],
        );
        assert_eq!(report["details"]["volumes"].as_array().unwrap().len(), 2, "{report}");
        let text = std::fs::read_to_string(&csv).unwrap();
        assert!(text.starts_with("volume,bscan,dz,dy,dx,peak,status\n"), "{text}");
        let rows: Vec<Vec<String>> = text.lines().skip(1).map(|l| l.split(',').map(String::from).collect()).collect();
        assert_eq!(rows.len(), 96);
        let close = rows.iter().zip(&truth).filter(|(r, t)| (2..5).all(|c| (r[c].parse::<f64>().unwrap() - t[c]).abs() <= 1.0)).count();
        assert!(close >= 91, "{device}: {close} of 96 B-scans within one voxel");
        assert!(rows.iter().all(|r| ["ok", "spike", "interpolated"].contains(&r[6].as_str())));
        tables.push(rows);
        let mean = lucent::io::read_real(path("mean.npy")).unwrap();
        assert_eq!(mean.shape(), [48, 40, 48]);
    }
    for (g, c) in tables[0].iter().zip(&tables[1]) {
        assert_eq!((&g[0], &g[1], &g[6]), (&c[0], &c[1], &c[6]));
        assert!((2..5).all(|k| (g[k].parse::<f64>().unwrap() - c[k].parse::<f64>().unwrap()).abs() <= 0.05), "{g:?} vs {c:?}");
    }
    // One moving volume: the spec's columns, and --apply.
    lucent_json(
        &[
            "register-volume",
            &path("ref.npy"),
            &path("m0.npy"),
            "-o",
            &path("one.csv"),
            "--apply",
            &path("registered.npy"),
            "--order",
            "3",
            "--coarse-step",
            "12",
        ],
        &[],
    );
    assert!(std::fs::read_to_string(path("one.csv")).unwrap().starts_with("bscan,dz,dy,dx,peak,status\n"));
    assert_eq!(lucent::io::read_real(path("registered.npy")).unwrap().shape(), [48, 40, 48]);
    let _ = std::fs::remove_dir_all(&dir);
}
