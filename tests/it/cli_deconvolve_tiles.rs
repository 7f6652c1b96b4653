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

/// `--psf-model`: no PSF file; the result equals deconvolving with the model written to a file
/// (the f64 model at the image's odd sizes: 23 planes of 39², and the 2D focal plane), for
/// Richardson-Lucy and Wiener; the missing step, a 2D --dz and the optics without a model are
/// refused.
#[test]
fn cli_psf_model() {
    use lucent::psf::{Model, Planes, PsfOptions};
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let x = rand_array(&[24, 40, 44]).mapv(|v| v + 0.5);
    lucent::io::write_real(path("x3.npy"), &x.view()).unwrap();
    lucent::io::write_real(path("x2.npy"), &x.index_axis(ndarray::Axis(0), 3).to_owned().view()).unwrap();
    let optics = ["--na", "1.2", "--ni", "1.33", "--ni0", "1.33", "--ns", "1.33", "--wvl", "0.52"];
    let o =
        |z: Planes, nx: usize| PsfOptions { z, nx, dxy: 0.1, na: 1.2, ni: 1.33, ni0: 1.33, ns: 1.33, wvl: 0.52, model: Model::Scalar, ..Default::default() };
    let model3 = lucent::psf::cpu::make_psf(&o(Planes::Count { nz: 23, dz: 0.2 }, 39)).unwrap().mapv(|v| v as f32).into_dyn();
    let model2 = lucent::psf::cpu::make_psf(&o(Planes::Positions(vec![0.0]), 39)).unwrap().mapv(|v| v as f32).index_axis_move(ndarray::Axis(0), 0).into_dyn();
    lucent::io::write_real(path("p3.npy"), &model3.view()).unwrap();
    lucent::io::write_real(path("p2.npy"), &model2.view()).unwrap();
    let cases: [(&str, &str, &[&str]); 2] =
        [("x3.npy", "p3.npy", &["-n", "4", "--dz", "0.2"]), ("x2.npy", "p2.npy", &["--method", "wiener", "--balance", "0.02"])];
    for (input, psf, extra) in cases {
        let (input_path, m_path) = (path(input), path("m.npy"));
        let by_model = [&["deconvolve", &input_path, "-o", &m_path, "--psf-model", "scalar", "--dxy", "0.1"][..], &optics, extra].concat();
        let r = run_ok(&by_model, &[]);
        assert_eq!(r["options"]["psf"]["model"]["model"], "scalar", "{r}");
        let extra: Vec<&str> = extra.iter().copied().filter(|a| !["--dz", "0.2"].contains(a)).collect();
        let (f_path, psf_path) = (path("f.npy"), path(psf));
        run_ok(&[&["deconvolve", &input_path, "-o", &f_path, "--psf", &psf_path][..], &extra].concat(), &[]);
        let (m, f) = (lucent::io::read_real(path("m.npy")).unwrap(), lucent::io::read_real(path("f.npy")).unwrap());
        assert_eq!(m, f, "{input}: the model's result differs from the file's");
    }
    for (args, words) in [
        (vec!["deconvolve", "X3", "-o", "Y", "--psf-model", "scalar", "--dxy", "0.1"], "needs --dz"),
        (vec!["deconvolve", "X2", "-o", "Y", "--psf-model", "scalar", "--dxy", "0.1", "--dz", "0.2"], "--dz belongs to a 3D image"),
        (vec!["deconvolve", "X2", "-o", "Y", "--psf", "P2", "--na", "1.1"], "belong to --psf-model"),
    ] {
        let args: Vec<String> = args
            .iter()
            .map(|a| match *a {
                "X3" => path("x3.npy"),
                "X2" => path("x2.npy"),
                "Y" => path("y.npy"),
                "P2" => path("p2.npy"),
                a => a.to_string(),
            })
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = lucent(&args, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains(words), "{args:?}: {stderr}");
    }
    assert!(!std::path::Path::new(&path("y.npy")).exists());
}
