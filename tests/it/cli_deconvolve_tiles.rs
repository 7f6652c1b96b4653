//! The CLI of deconvolve tiles: the commands run on files, their reports and refusals.

use crate::common;
use common::specimens::*;
use common::*;
use lucent::restoration::{cpu, PsfGrid, RlOptions, TileOptions};
use ndarray::Axis;

/// GPU against the f64 reference after `iterations` (tests/deconvolve.rs derives it: four f32
/// transforms per iteration within 2e-6 each, adding in quadrature).
fn tolerance(iterations: usize) -> f64 {
    2e-6 * (4.0 * iterations as f64).sqrt()
}

/// The binary with poisoned temporaries (LUCENT_POISON=1) and `env`.
fn lucent(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    lucent_cli(args, &[env, &[("LUCENT_POISON", "1")]].concat())
}

fn run_ok(args: &[&str], env: &[(&str, &str)]) -> serde_json::Value {
    lucent_json(args, &[env, &[("LUCENT_POISON", "1")]].concat())
}

#[test]
fn cli_psf_grid_and_automatic_tiles() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let (input, psf_file, output) = (path("x.npy"), path("psfs.npy"), path("y.npy"));
    let x = specimen(&[36, 40], 10, 2).mapv(|v| v as f32);
    let psfs = psf_grid([2, 2], &[5, 5]);
    lucent::io::write_real(&input, &x.view()).unwrap();
    lucent::io::write_real(&psf_file, &psfs.view()).unwrap();
    let args = ["deconvolve", &input, "--psf", &psf_file, "-o", &output, "-n", "3", "--psf-grid", "2,2"];

    // The GPU run against the library's CPU twin.
    let report = run_ok(&args, &[]);
    assert_eq!(report["details"]["tiles"], 4, "{report}");
    assert_eq!(report["details"]["tile_ms"].as_array().unwrap().len(), 4, "{report}");
    let grid = PsfGrid::new(psfs.view(), [2, 2]).unwrap();
    let (want, _) = cpu::richardson_lucy_tiled_cpu(&x.view(), &grid, 3, &RlOptions::default(), &TileOptions::default(), |_| {}).unwrap();
    let got = lucent::io::read_real(&output).unwrap();
    assert!(rel_l2(&flat(&got), &flat64(&want)) <= tolerance(3));

    // A grid that does not match the PSF file, and a malformed grid.
    let out = lucent(&["deconvolve", &input, "--psf", &psf_file, "-o", &output, "--psf-grid", "2,3"], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("PSF grid"), "{stderr}");
    assert!(!lucent(&["deconvolve", &input, "--psf", &psf_file, "-o", &output, "--psf-grid", "2"], &[]).status.success());

    // One PSF and a device the image does not fit: tiles without being asked.
    let single = path("psf.npy");
    lucent::io::write_real(&single, &psfs.index_axis(Axis(0), 0).index_axis(Axis(0), 0)).unwrap();
    let report = run_ok(
        &["deconvolve", &input, "--psf", &single, "-o", &output, "-n", "2"],
        &[("LUCENT_MAX_BUFFER_BYTES", "4096"), ("LUCENT_DEVICE_MEMORY_BYTES", "32768")],
    );
    let tiles = report["details"]["tiles"].as_u64().unwrap();
    assert!(tiles > 1, "{report}");
    assert!(report["details"]["guard"].is_array(), "{report}");
    // The whole run gave way (beyond a buffer or the device), then tiles ran.
    let placement = &report["placement"];
    assert_eq!(placement["form"], "tiles", "{report}");
    assert_eq!(placement["pieces"].as_u64(), Some(tiles), "{report}");
    assert_eq!(placement["declined"][0]["form"], "whole", "{report}");
}

/// `--method wiener`: the file equals the library's result on the PSF divided by its sum (GPU
/// and f64 reference); Richardson-Lucy's options and a missing --balance are refused.
#[test]
fn cli_wiener() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let x = rand_array(&[27, 33]).mapv(|v| v + 0.5);
    let psf = rand_array(&[5, 4]).mapv(|v| v.abs() + 0.2);
    lucent::io::write_real(path("x.npy"), &x.view()).unwrap();
    lucent::io::write_real(path("psf.npy"), &psf.view()).unwrap();
    let normalised = psf.mapv(|v| v as f64) / psf.iter().map(|&v| v as f64).sum::<f64>();
    let want = cpu::wiener(&x.mapv(|v| v as f64), &normalised, 0.05, false).unwrap();
    for device in ["auto", "cpu"] {
        let out = path(&format!("w-{device}.npy"));
        let r =
            run_ok(&["--device", device, "deconvolve", &path("x.npy"), "--psf", &path("psf.npy"), "-o", &out, "--method", "wiener", "--balance", "0.05"], &[]);
        assert_eq!(r["options"]["method"], "wiener", "{r}");
        assert_rel_l2(&lucent::io::read_real(&out).unwrap(), &want, 1e-5, &format!("lucent deconvolve --method wiener on {device}"));
    }
    let base = ["deconvolve", &path("x.npy"), "--psf", &path("psf.npy"), "-o", &path("y.npy"), "--method", "wiener"];
    for (extra, words) in [
        (&[][..], "needs --balance"),
        (&["--balance", "0.1", "-n", "5"][..], "--iterations belongs"),
        (&["--balance", "0.1", "--tv", "0.01"][..], "--tv belongs"),
    ] {
        let out = lucent(&[&base[..], extra].concat(), &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains(words), "{extra:?}: {stderr}");
    }
    let out = lucent(&["deconvolve", &path("x.npy"), "--psf", &path("psf.npy"), "-o", &path("y.npy"), "--balance", "0.1"], &[]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("belong to --method wiener"));
    assert!(!std::path::Path::new(&path("y.npy")).exists());
}
