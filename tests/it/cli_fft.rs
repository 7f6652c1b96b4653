//! `lucent fft` end to end: the built binary on temporary .npy files, its output against the
//! f64 CPU reference, and bad input giving a one-line error and a non-zero exit.
//!
//! Tolerance: inputs are f32, the transforms run in f32 (GPU or rustfft) with f64 twiddles, so
//! the relative L2 error is a few f32 epsilons (6e-8) times the log of the size: ~1e-7 at these
//! sizes. 1e-6 leaves a margin of ~10 and still catches any wrong index, scale or sign.

use crate::common;

use std::path::Path;

use common::{lucent_cli, lucent_json, random, random_complex, rel_l2, rel_l2_c, to64};
use lucent::fft::{cpu, Norm};
use lucent::io;
use ndarray::{ArrayD, IxDyn};
use num_complex::Complex32;

const TOLERANCE: f64 = 1e-6;

fn random_complex_array(dims: &[usize]) -> ArrayD<Complex32> {
    ArrayD::from_shape_vec(IxDyn(dims), random_complex(dims.iter().product())).unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A complex transform: its flags, and what the reference must do to match them.
struct ComplexCase {
    dims: &'static [usize],
    args: &'static [&'static str],
    axes: &'static [usize],
    inverse: bool,
    norm: Norm,
    device: &'static str,
}

#[test]
fn complex_transforms_match_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let (input, output) = (dir.path().join("x.npy"), dir.path().join("y.npy"));
    let cases = [
        ComplexCase { dims: &[3, 5, 7], args: &[], axes: &[0, 1, 2], inverse: false, norm: Norm::Backward, device: "gpu" },
        ComplexCase {
            dims: &[2, 3, 4, 5],
            args: &["--inverse", "--axes", "0,-1", "--norm", "ortho"],
            axes: &[0, 3],
            inverse: true,
            norm: Norm::Ortho,
            device: "gpu",
        },
        ComplexCase { dims: &[11, 6], args: &["--axes=1", "--norm", "forward"], axes: &[1], inverse: false, norm: Norm::Forward, device: "cpu" },
    ];
    for ComplexCase { dims, args: extra, axes, inverse, norm, device } in cases {
        let x = random_complex_array(dims);
        io::write_complex(&input, &x.view()).unwrap();
        let report = lucent_json(&[&["fft", s(&input), "-o", s(&output), "--device", device], extra].concat(), &[]);
        let y = io::read_complex(&output).unwrap();
        let want = cpu::c2c(&to64(&x), axes, inverse, norm);
        assert_eq!(y.shape(), want.shape());
        let err = rel_l2_c(y.as_slice().unwrap(), want.as_slice().unwrap());
        assert!(err < TOLERANCE, "{dims:?} {extra:?} on {device}: rel L2 {err:e}");
        assert_eq!(report["device"]["kind"], device, "{report}");
        assert_eq!(report["shape_out"], serde_json::json!(dims));
        assert_eq!(report["options"]["transform"], if inverse { "ifftn" } else { "fftn" });
    }
    // Real input, as numpy.fft.fftn/ifftn take it: complex with zero imaginary parts.
    let x = ArrayD::from_shape_vec(IxDyn(&[7, 10]), random(70)).unwrap();
    io::write_real(&input, &x.view()).unwrap();
    let complex = to64(&x.mapv(|v| Complex32::new(v, 0.0)));
    for (device, inverse) in [("gpu", false), ("cpu", false), ("gpu", true)] {
        let flags: &[&str] = if inverse { &["--inverse"] } else { &[] };
        let report = lucent_json(&[&["fft", s(&input), "-o", s(&output), "--device", device], flags].concat(), &[]);
        let want = cpu::c2c(&complex, &[0, 1], inverse, Norm::Backward);
        let err = rel_l2_c(io::read_complex(&output).unwrap().as_slice().unwrap(), want.as_slice().unwrap());
        assert!(err < TOLERANCE, "real input on {device}, inverse {inverse}: rel L2 {err:e}");
        assert_eq!(report["details"]["dtype_out"], "complex64", "{report}");
    }
}

#[test]
fn real_transforms_match_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let (input, output) = (dir.path().join("x.npy"), dir.path().join("y.npy"));
    for device in ["gpu", "cpu"] {
        // rfftn over the last two axes of an odd 3D volume.
        let dims = [2, 9, 7];
        let x = ArrayD::from_shape_vec(IxDyn(&dims), random(dims.iter().product())).unwrap();
        io::write_real(&input, &x.view()).unwrap();
        let report = lucent_json(&["fft", s(&input), "-o", s(&output), "--real", "--axes", "1,2", "--device", device], &[]);
        let y = io::read_complex(&output).unwrap();
        let want = cpu::r2c(&x.mapv(|v| v as f64), &[1, 2], Norm::Backward);
        assert_eq!(y.shape(), &[2, 9, 4]);
        let err = rel_l2_c(y.as_slice().unwrap(), want.as_slice().unwrap());
        assert!(err < TOLERANCE, "rfftn on {device}: rel L2 {err:e}");
        assert_eq!(report["shape_out"], serde_json::json!([2, 9, 4]));

        // irfftn of a genuine half spectrum, odd output length 9 (5 values) and the default 8.
        let spectrum = cpu::r2c(&ArrayD::from_shape_vec(IxDyn(&[6, 9]), random(54)).unwrap().mapv(|v| v as f64), &[0, 1], Norm::Backward);
        let h = spectrum.mapv(|c| Complex32::new(c.re as f32, c.im as f32));
        io::write_complex(&input, &h.view()).unwrap();
        for (len_args, len) in [(&["--len", "9"][..], 9), (&[][..], 8)] {
            lucent_json(&[&["fft", s(&input), "-o", s(&output), "--real", "--inverse", "--device", device], len_args].concat(), &[]);
            let y = io::read_real(&output).unwrap();
            let want = cpu::c2r(&to64(&h), &[0, 1], len, Norm::Backward);
            assert_eq!(y.shape(), &[6, len]);
            let err = rel_l2(y.as_slice().unwrap(), want.as_slice().unwrap());
            assert!(err < TOLERANCE, "irfftn len {len} on {device}: rel L2 {err:e}");
        }
    }
}

#[test]
fn bad_input_fails_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let (input, output) = (dir.path().join("real.npy"), dir.path().join("y.npy"));
    io::write_real(&input, &ArrayD::from_shape_vec(IxDyn(&[4, 4]), random(16)).unwrap().view()).unwrap();
    let garbage = dir.path().join("garbage.npy");
    std::fs::write(&garbage, b"not an array").unwrap();
    let (tif, missing_dir) = (dir.path().join("y.tif"), dir.path().join("no/y.npy"));
    let nan = dir.path().join("nan.npy");
    let mut x = ArrayD::from_shape_vec(IxDyn(&[4, 4]), random(16)).unwrap();
    x[[1, 2]] = f32::NAN;
    io::write_real(&nan, &x.view()).unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["fft", s(&garbage), "-o", s(&output), "--real"], "not an .npy file"),
        (&["fft", s(&input), "-o", s(&output), "--real", "--axes", "2"], "axis 2 out of range"),
        (&["fft", s(&input), "-o", s(&output), "--real", "--len", "5"], "--len applies only"),
        (&["fft", s(&input), "-o", s(&tif), "--real"], "only be written to .npy"),
        (&["fft", s(&input), "-o", s(&missing_dir), "--real"], "does not exist"),
        (&["fft", s(&nan), "-o", s(&output), "--real"], "NaN at index [1, 2]"),
        (&["bench", "--fft-shape", "64x0"], "--fft-shape 64x0: 1 to 4 positive sizes"),
        (&["bench", "--fft-shape", "2x2x2x2x2"], "1 to 4 positive sizes"),
        (&["bench", "--fft-shape", "30x20,7", "--fft-axes", "1"], "--fft-axes for 7: axis 1 out of range"),
    ];
    for &(args, words) in cases {
        let out = lucent_cli(&[args, &["--device", "cpu"]].concat(), &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "one line expected: {stderr}");
        assert!(stderr.starts_with("lucent: error: ") && stderr.contains(words), "{args:?}: {stderr}");
        assert!(!output.exists() && !tif.exists(), "a failed run wrote a file");
    }
}
