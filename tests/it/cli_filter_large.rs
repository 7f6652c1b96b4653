//! The CLI of filter large: the commands run on files, their reports and refusals.

use crate::common;
use common::*;
use lucent::ndimage::{self, Boundary};
use lucent::Error;
use ndarray::ArrayD;
use std::time::{Duration, Instant};
const TOL: f64 = 4e-6;

fn check(got: &ArrayD<f32>, want: &ArrayD<f64>, what: &str) {
    assert_rel_l2(got, want, TOL, what);
}

/// Uniform in [0, 1).
fn image(dims: &[usize]) -> ArrayD<f32> {
    rand_array(dims).mapv(|v| v + 0.5)
}

/// The same through the command line, GPU and CPU: the CPU fallback folds too (it once took
/// 4 GB and 24 s for --gaussian 1e6), and absurd sizes give one line on stderr, exit 1.
#[test]
fn cli_huge_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let x = image(&[32, 32]);
    lucent::io::write_real(path("x.npy"), &x.view()).unwrap();
    let read = |name: &str| lucent::io::read_real(path(name)).unwrap();
    let x64 = to64(&x);
    for device in ["gpu", "cpu"] {
        let t = Instant::now();
        lucent_json(&["--device", device, "filter", &path("x.npy"), "-o", &path("g.npy"), "--gaussian", "1e6"], &[]);
        let passes = ndimage::gaussian_passes(&[1e6], x.shape(), Boundary::Reflect).unwrap();
        check(&read("g.npy"), &ndimage::cpu::separable(&x64, &passes, Boundary::Reflect), &format!("cli gaussian 1e6 {device}"));
        lucent_json(&["--device", device, "filter", &path("x.npy"), "-o", &path("u.npy"), "--uniform", "18446744073709551615", "--boundary", "wrap"], &[]);
        check(&read("u.npy"), &ArrayD::from_elem(x.shape(), x64.mean().unwrap()), &format!("cli uniform u64::MAX {device}"));
        assert!(t.elapsed() < Duration::from_secs(30), "{device}: {:?}", t.elapsed());
        for sigma in ["1e8", "1e10", "1e15", "1e19", "1e30"] {
            let out = lucent_cli(&["--device", device, "filter", &path("x.npy"), "-o", &path("bad.npy"), "--gaussian", sigma], &[]);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.code() == Some(1) && stderr.trim().lines().count() == 1 && stderr.contains("taps"), "{device} {sigma}: {stderr}");
            assert!(!dir.path().join("bad.npy").exists());
        }
    }
}

/// One rule for non-finite values: the input (with the first bad index) and cval are refused,
/// by the library's one-calls and by the command line on either device.
#[test]
fn non_finite_input_and_cval_are_refused() {
    let mut x = image(&[9, 9]);
    x[[4, 3]] = f32::NAN;
    let non_finite = |r: Result<ArrayD<f32>, Error>| matches!(r, Err(Error::NonFinite(m)) if m.contains("[4, 3]"));
    let k = ArrayD::from_elem(vec![3, 3], 1.0f32 / 9.0);
    assert!(non_finite(ndimage::gaussian_filter(gpu(), &x, &[1.0], Boundary::Reflect)));
    assert!(non_finite(ndimage::uniform_filter(gpu(), &x, &[3], Boundary::Reflect)));
    assert!(non_finite(ndimage::correlate(gpu(), &x, &k, Boundary::Reflect)));
    assert!(non_finite(ndimage::convolve(gpu(), &x, &k, Boundary::Reflect)));
    assert!(non_finite(ndimage::correlate1d(gpu(), &x, &[0.5, 0.5], 1, Boundary::Reflect)));
    assert!(non_finite(ndimage::convolve1d(gpu(), &x, &[0.5, 0.5], 0, Boundary::Reflect)));

    let y = image(&[9, 9]);
    for cval in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let b = Boundary::Constant(cval);
        let refused = |r: Result<ArrayD<f32>, Error>| matches!(r, Err(Error::NonFinite(m)) if m.contains("cval"));
        assert!(refused(ndimage::gaussian_filter(gpu(), &y, &[1.0], b)));
        assert!(refused(ndimage::uniform_filter(gpu(), &y, &[3], b)));
        assert!(refused(ndimage::correlate(gpu(), &y, &k, b)));
        assert!(refused(ndimage::convolve1d(gpu(), &y, &[0.5, 0.5], 0, b)));
        assert!(Boundary::from_name("constant", cval).is_err());
    }

    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    lucent::io::write_real(path("nan.npy"), &x.view()).unwrap();
    lucent::io::write_real(path("y.npy"), &y.view()).unwrap();
    let mut inf = y.clone();
    inf[[0, 8]] = f32::INFINITY;
    lucent::io::write_real(path("inf.npy"), &inf.view()).unwrap();
    for device in ["gpu", "cpu"] {
        for (args, expect) in [
            (vec!["filter", &path("nan.npy"), "-o", &path("bad.npy"), "--gaussian", "1"], "[4, 3]"),
            (vec!["filter", &path("inf.npy"), "-o", &path("bad.npy"), "--uniform", "3"], "[0, 8]"),
            (vec!["filter", &path("y.npy"), "-o", &path("bad.npy"), "--gaussian", "1", "--boundary", "constant", "--cval", "inf"], "cval"),
            (vec!["filter", &path("y.npy"), "-o", &path("bad.npy"), "--uniform", "3", "--boundary", "constant", "--cval", "NaN"], "cval"),
        ] {
            let mut all = vec!["--device", device];
            all.extend(args.iter().copied());
            let out = lucent_cli(&all, &[]);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.code() == Some(1) && stderr.trim().lines().count() == 1 && stderr.contains(expect), "{all:?}: {stderr}");
            assert!(!dir.path().join("bad.npy").exists());
        }
    }
}
