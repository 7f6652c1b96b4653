//! The CLI refuses what it cannot do with one clear line and exit code 1, before any work and
//! without leaving files behind.

use crate::common;

use common::{lucent_cli, rand_array};

fn refused(args: &[&str], env: &[(&str, &str)], says: &str) {
    let out = lucent_cli(args, env);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
    assert!(stderr.contains(says), "{args:?}: expected `{says}` in: {stderr}");
}

#[test]
fn bad_settings_and_options_are_errors() {
    refused(&["info"], &[("LUCENT_MAX_BUFFER_BYTES", "abc")], "LUCENT_MAX_BUFFER_BYTES=abc");
    refused(&["info"], &[("LUCENT_FFT_THREADS", "100")], "LUCENT_FFT_THREADS=100");
    refused(&["info"], &[("LUCENT_POISON", "yes")], "LUCENT_POISON=yes");
    // An adapter named but absent is an error, not a silent fall-back to the CPU.
    refused(&["info", "--adapter", "99"], &[], "no GPU adapter matches `99`");
    refused(&["bench", "--max-mib", "0"], &[], "--max-mib 0 is below --min-mib 1");
    let dir = std::env::temp_dir().join(format!("lucent-cli-errors-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for n in ["0", "1000000000000"] {
        refused(&["demo", "--out", dir.to_str().unwrap(), "-n", n], &[], "iteration");
        assert!(!dir.exists(), "demo -n {n} left a folder");
    }
}

#[test]
fn len_zero_is_named() {
    let dir = std::env::temp_dir().join(format!("lucent-cli-len-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let x = rand_array(&[4, 6]).mapv(|v| num_complex::Complex32::new(v, -v));
    let input = dir.join("h.npy");
    lucent::io::write_complex(&input, &x.view()).unwrap();
    let output = dir.join("y.npy");
    refused(&["fft", input.to_str().unwrap(), "-o", output.to_str().unwrap(), "--real", "--inverse", "--len", "0"], &[], "--len must be at least 1");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A result beyond the host budget is refused before it is allocated, on the GPU path and the
/// CPU reference alike (full mode of a row with a column: 20000² floats).
#[test]
fn results_beyond_host_memory_are_refused() {
    let dir = std::env::temp_dir().join(format!("lucent-cli-budget-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (row, col) = (dir.join("row.npy"), dir.join("col.npy"));
    lucent::io::write_real(&row, &rand_array(&[1, 20000]).view()).unwrap();
    lucent::io::write_real(&col, &rand_array(&[20000, 1]).view()).unwrap();
    let out = dir.join("y.npy");
    let budget = [("LUCENT_HOST_BUDGET_BYTES", "100000000")];
    for device in ["auto", "cpu"] {
        let args = ["--device", device, "convolve", row.to_str().unwrap(), col.to_str().unwrap(), "-o", out.to_str().unwrap(), "--mode", "full"];
        refused(&args, &budget, "beyond the limit of 100000000 bytes");
        assert!(!out.exists());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The CPU references check their working arrays against the host budget too.
#[test]
fn references_beyond_host_memory_are_refused() {
    let dir = std::env::temp_dir().join(format!("lucent-cli-refs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (x, k) = (dir.join("x.npy"), dir.join("k.npy"));
    lucent::io::write_real(&x, &rand_array(&[32, 32]).mapv(|v| v + 1.0).view()).unwrap();
    lucent::io::write_real(&k, &rand_array(&[3, 3]).mapv(f32::abs).view()).unwrap();
    let out = dir.join("y.npy");
    let (x, k, o) = (x.to_str().unwrap(), k.to_str().unwrap(), out.to_str().unwrap());
    // 10000 bytes: the 4 KiB input is read, the references' f64 arrays do not fit.
    let budget = [("LUCENT_HOST_BUDGET_BYTES", "10000")];
    refused(&["--device", "cpu", "filter", x, "-o", o, "--gaussian", "1"], &budget, "beyond the limit of 10000 bytes");
    refused(&["--device", "cpu", "deconvolve", x, "--psf", k, "-o", o, "-n", "2"], &budget, "beyond the limit of 10000 bytes");
    assert!(!out.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The split convolution and the tiled Richardson-Lucy check the host buffers their plans
/// allocate (folded parts, finished parts, tile windows, the blended result) against the host
/// budget before allocating them: 15000 bytes hold the inputs as read (a 40 × 40 image, a 16 × 16
/// kernel) and the 'same' result, not the parts or the tiles.
#[test]
fn split_and_tiles_beyond_host_memory_are_refused() {
    let dir = std::env::temp_dir().join(format!("lucent-cli-split-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (x, k, psfs) = (dir.join("x.npy"), dir.join("k.npy"), dir.join("psfs.npy"));
    lucent::io::write_real(&x, &rand_array(&[40, 40]).mapv(|v| v + 1.0).view()).unwrap();
    lucent::io::write_real(&k, &rand_array(&[16, 16]).view()).unwrap();
    lucent::io::write_real(&psfs, &rand_array(&[2, 2, 5, 5]).mapv(|v| v + 1.0).view()).unwrap();
    let out = dir.join("y.npy");
    let (x, k, psfs, o) = (x.to_str().unwrap(), k.to_str().unwrap(), psfs.to_str().unwrap(), out.to_str().unwrap());
    // (A CPU adapter's device memory is the host's: a device budget of its own keeps the tiles
    // at the PSF grid's four, rather than sized down to fit 15000 bytes.)
    let budget = [("LUCENT_HOST_BUDGET_BYTES", "15000"), ("LUCENT_DEVICE_MEMORY_BYTES", "1000000000")];
    let says_all = |args: &[&str], what: &str| {
        let run = lucent_cli(args, &budget);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        for s in [what, "needs", "beyond the limit of 15000 bytes", "LUCENT_HOST_BUDGET_BYTES"] {
            assert!(stderr.contains(s), "{args:?}: expected `{s}` in: {stderr}");
        }
        assert!(!out.exists());
    };
    says_all(&["--device", "gpu", "convolve", x, k, "-o", o, "--mode", "same", "--parts", "2"], "the split convolution of [40, 40] with [16, 16] (2 parts");
    for device in ["gpu", "cpu"] {
        says_all(
            &["--device", device, "deconvolve", x, "--psf", psfs, "--psf-grid", "2,2", "-o", o, "-n", "2"],
            "tiled Richardson-Lucy of [40, 40] in 4 tiles",
        );
    }
    // A budget that holds them runs both.
    for args in [
        vec!["--device", "gpu", "convolve", x, k, "-o", o, "--mode", "same", "--parts", "2"],
        vec!["--device", "gpu", "deconvolve", x, "--psf", psfs, "--psf-grid", "2,2", "-o", o, "-n", "2"],
    ] {
        let run = lucent_cli(&args, &[("LUCENT_HOST_BUDGET_BYTES", "1000000")]);
        assert!(run.status.success(), "{args:?}: {}", String::from_utf8_lossy(&run.stderr));
        std::fs::remove_file(&out).unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `lucent resample` and `lucent spline-filter` name what is wrong with their input and options,
/// and write nothing.
#[test]
fn resample_and_spline_filter_refuse_bad_input() {
    let dir = std::env::temp_dir().join(format!("lucent-cli-resample-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    lucent::io::write_real(path("x.npy"), &rand_array(&[20, 30]).view()).unwrap();
    let mut nan = rand_array(&[20, 30]);
    nan[[3, 4]] = f32::NAN;
    lucent::io::write_real(path("nan.npy"), &nan.view()).unwrap();
    lucent::io::write_real(path("c3.npy"), &rand_array(&[3, 5, 5]).view()).unwrap();
    lucent::io::write_real(path("line.npy"), &rand_array(&[40]).view()).unwrap();
    lucent::io::write_real(path("singular.npy"), &ndarray::ArrayD::<f32>::zeros(ndarray::IxDyn(&[2, 2])).view()).unwrap();
    std::fs::write(path("junk.npy"), b"junk").unwrap();
    let (x, out) = (path("x.npy"), path("y.npy"));
    let cases: &[(&[&str], &str)] = &[
        (&["--shift", "1,2,3"], "3 values for a 2-D array"),
        (&["--zoom", "0"], "finite and positive"),
        (&["--zoom", "1e30"], "samples; lucent resamples 1 to"),
        (&["--affine", &path("singular.npy")], "is singular"),
        (&["--coordinates", &path("c3.npy")], "the first axis must be 2"),
        (&["--rotate", "10", "--axes", "0,0"], "must differ"),
        (&["--shift", "1", "--cval", "nan"], "cval"),
        (&["--affine", &path("missing.npy")], "missing.npy"),
    ];
    for (options, says) in cases {
        let args: Vec<&str> = ["resample", x.as_str(), "-o", out.as_str()].iter().copied().chain(options.iter().copied()).collect();
        refused(&args, &[], says);
    }
    refused(&["resample", &path("nan.npy"), "-o", &out, "--shift", "1"], &[], "NaN at index [3, 4]");
    refused(&["spline-filter", &path("nan.npy"), "-o", &out], &[], "NaN at index [3, 4]");
    refused(&["resample", &path("line.npy"), "-o", &out, "--shift", "1", "--sampler", "texture"], &[], "2 or 3 axes");
    refused(&["resample", &x, "-o", &out, "--shift", "1", "--sampler", "hardware"], &[], "possible values");
    refused(&["spline-filter", &path("junk.npy"), "-o", &out], &[], "not an .npy file");
    assert!(!dir.join("y.npy").exists(), "a refused run left its output");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn register_refuses_bad_input() {
    let dir = std::env::temp_dir().join(format!("lucent-cli-register-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    lucent::io::write_real(path("r.npy"), &rand_array(&[6, 7, 8]).view()).unwrap();
    lucent::io::write_real(path("m.npy"), &rand_array(&[6, 7, 9]).view()).unwrap();
    let mut nan = rand_array(&[6, 7, 8]);
    nan[[1, 2, 3]] = f32::NAN;
    lucent::io::write_real(path("nan.npy"), &nan.view()).unwrap();
    let (r, m) = (path("r.npy"), path("m.npy"));
    refused(&["register", &r, &m], &[], "differ");
    refused(&["register", &r, &path("nan.npy")], &[], "NaN");
    refused(&["register", &r, &r, "--upsample", "-1"], &[], "upsample factor -1");
    refused(&["register", &r, &r, "--upsample", "0.5"], &[], "upsample factor 0.5");
    refused(&["register", &r, &r, "--space", "fourier"], &[], "real data where complex data was expected");
    // A refinement grid beyond any memory: refused before it is made, on the GPU and the CPU.
    refused(&["register", &r, &r, "--upsample", "10000"], &[], "the refinement at upsample factor 10000");
    refused(&["--device", "cpu", "register", &r, &r, "--upsample", "10000"], &[], "the refinement at upsample factor 10000");
    refused(&["register", &r, &path("missing.npy")], &[], "missing.npy");
    // lucent match: a template larger than the image, of other axes, non-finite, bad modes;
    // nothing written.
    let out = path("map.npy");
    lucent::io::write_real(path("line.npy"), &rand_array(&[9]).view()).unwrap();
    for device in ["auto", "cpu"] {
        refused(&["--device", device, "match", &r, &m, "-o", &out], &[], "larger than the image");
        refused(&["--device", device, "match", &r, &path("line.npy"), "-o", &out], &[], "give both the same axes");
        refused(&["--device", device, "match", &r, &path("nan.npy"), "-o", &out], &[], "NaN");
        refused(&["--device", device, "match", &path("nan.npy"), &r, "-o", &out], &[], "NaN");
    }
    refused(&["match", &r, &r, "-o", &out, "--pad-input", "--mode", "edge", "--cval", "2"], &[], "only used with mode constant");
    refused(&["match", &r, &r, "-o", &out, "--mode", "median"], &[], "possible values");
    refused(&["match", &r, &r, "-o", &out, "--cval", "nan"], &[], "constant_values must be finite");
    refused(&["match", &r, &path("missing.npy"), "-o", &out], &[], "missing.npy");
    assert!(!dir.join("map.npy").exists(), "a refused run left its output");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn register_volume_and_phantom_refuse_bad_input() {
    let dir = std::env::temp_dir().join(format!("lucent-cli-volume-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    lucent::io::write_real(path("r.npy"), &rand_array(&[6, 7, 8]).view()).unwrap();
    lucent::io::write_real(path("m.npy"), &rand_array(&[6, 7, 9]).view()).unwrap();
    lucent::io::write_real(path("flat.npy"), &ndarray::ArrayD::<f32>::from_elem(vec![6, 7, 8], 3.0).view()).unwrap();
    lucent::io::write_real(path("plane.npy"), &rand_array(&[7, 8]).view()).unwrap();
    let mut nan = rand_array(&[6, 7, 8]);
    nan[[1, 2, 3]] = f32::INFINITY;
    lucent::io::write_real(path("inf.npy"), &nan.view()).unwrap();
    let (r, csv) = (path("r.npy"), path("shifts.csv"));
    for device in ["auto", "cpu"] {
        let run = |extra: &[&str], says: &str| {
            let args: Vec<&str> = ["--device", device, "register-volume"].iter().copied().chain(extra.iter().copied()).chain(["-o", csv.as_str()]).collect();
            refused(&args, &[], says);
        };
        run(&[&r, &path("m.npy")], "differ");
        run(&[&r, &path("plane.npy")], "3 axes (slow, depth, fast)");
        run(&[&r, &path("inf.npy")], "inf");
        run(&[&r, &path("flat.npy")], "constant");
        run(&[&path("flat.npy"), &r], "constant");
        run(&[&r, &path("missing.npy")], "missing.npy");
        run(&[&r, &r, "--window", "0"], "window must be at least 1");
        run(&[&r, &r, "--median", "4"], "must be odd");
        run(&[&r, &r, "--spike", "-1"], "spike threshold -1");
        run(&[&r, &r, "--min-peak", "1.5"], "minimum peak 1.5");
        run(&[&r, &r, "--order", "6"], "--order 6");
        run(&[&r, &r, &r, "--apply", &path("a.npy")], "--apply writes one registered volume");
    }
    assert!(!dir.join("shifts.csv").exists() && !dir.join("a.npy").exists(), "a refused run left its output");
    let out = path("p.npy");
    refused(&["phantom", "-o", &out, "--moving", &path("m.npy")], &[], "belong to --aooct");
    refused(&["phantom", "-o", &out, "--size", "8,8"], &[], "one side N");
    refused(&["phantom", "--aooct", "-o", &out, "--size", "8,8"], &[], "three lengths");
    refused(&["phantom", "--aooct", "-o", &out, "--size", "8,1,8"], &[], "from 2 to 4096");
    refused(&["phantom", "--aooct", "-o", &out, "--drift", "nan"], &[], "motion amplitudes");
    refused(&["phantom", "--aooct", "-o", &out, "--saccade", "-3"], &[], "motion amplitudes");
    refused(&["phantom", "--aooct", "-o", &out, "--size", "4096,4096,4096"], &[], "each volume");
    assert!(!dir.join("p.npy").exists(), "a refused phantom left its output");
    let _ = std::fs::remove_dir_all(&dir);
}
