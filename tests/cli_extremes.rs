//! Every numeric option of every command at its extremes (0, negative, NaN, infinite, huge,
//! u64::MAX and beyond): the CLI either runs (exit 0) or refuses with exit code 1 and one line on
//! stderr, quickly; never a panic, an abort or a hang.
#![cfg(all(feature = "cli", feature = "io", feature = "zarr"))] // needs the `lucent` binary

mod common;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{rand_array, random_positive};

const EXTREMES: [&str; 9] = ["0", "-1", "nan", "inf", "-inf", "1e30", "18446744073709551615", "18446744073709551616", "1e-45"];

/// Runs the binary; None if it outlives `limit` (then it is killed).
fn run(args: &[String], limit: Duration) -> Option<(i32, String)> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lucent")).args(args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut stderr = String::new();
            child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
            return Some((status.code().unwrap_or(-1), stderr));
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn option_extremes_run_or_fail_in_one_line() {
    let dir = std::env::temp_dir().join(format!("lucent-extremes-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let p = |name: &str| dir.join(name).to_str().unwrap().to_string();
    lucent::io::write_real(p("x.npy"), &rand_array(&[9, 12]).view()).unwrap();
    lucent::io::write_real(p("k.npy"), &rand_array(&[3, 4]).view()).unwrap();
    let positive = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[9, 12]), random_positive(108)).unwrap();
    lucent::io::write_real(p("pos.npy"), &positive.view()).unwrap();
    lucent::io::write_real(p("psf.npy"), &ndarray::ArrayD::from_elem(ndarray::IxDyn(&[3, 3]), 1.0f32).view()).unwrap();
    let half = rand_array(&[9, 7]).mapv(|v| num_complex::Complex32::new(v, 0.5 * v));
    lucent::io::write_complex(p("half.npy"), &half.view()).unwrap();

    // (command line before the option, the option, what follows it)
    let base = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let conv = base(&["convolve", &p("x.npy"), &p("k.npy"), "-o", &p("y.npy"), "--mode", "same"]);
    let filt = base(&["filter", &p("x.npy"), "-o", &p("y.npy")]);
    let rl = base(&["deconvolve", &p("pos.npy"), "--psf", &p("psf.npy"), "-o", &p("y.npy"), "-n", "2"]);
    let fft = base(&["fft", &p("half.npy"), "-o", &p("y.npy"), "--real", "--inverse"]);
    let cases: Vec<(Vec<String>, &str)> = vec![
        (conv.clone(), "--parts"),
        (conv.clone(), "--max-part-bytes"),
        (conv.clone(), "--in-flight"),
        (filt.clone(), "--gaussian"),
        (filt.clone(), "--uniform"),
        ([filt.clone(), base(&["--uniform", "3", "--boundary", "constant"])].concat(), "--cval"),
        (rl.clone(), "--init"),
        (rl.clone(), "--stop-tolerance"),
        ([rl.clone(), base(&["--stop-tolerance", "0.1"])].concat(), "--check-every"),
        (rl.clone(), "--filter-epsilon"),
        (rl.clone(), "--tv"),
        (rl.clone(), "--psf-grid"),
        (base(&["deconvolve", &p("pos.npy"), "--psf", &p("psf.npy"), "-o", &p("y.npy")]), "-n"),
        (fft.clone(), "--len"),
        (base(&["fft", &p("half.npy"), "-o", &p("y.npy")]), "--axes"),
        (base(&["demo", "--out", &p("demo")]), "-n"),
        (base(&["bench", "--filter", "copy", "--max-mib", "1"]), "--min-mib"),
        // (A huge --max-mib is a valid request: every size up to the device's buffer limit.)
    ];
    let mut failures = Vec::new();
    for (line, option) in &cases {
        for value in EXTREMES {
            // The value joined with `=` so that a leading '-' is a value, not an option.
            let args = [line.clone(), vec![format!("{option}={value}")]].concat();
            let args = if option == &"-n" { [line.clone(), vec!["-n".into(), value.into()]].concat() } else { args };
            match run(&args, Duration::from_secs(60)) {
                None => failures.push(format!("{option} {value}: still running after 60 s")),
                Some((0, _)) => {}
                Some((1, stderr)) if stderr.trim_end().lines().count() == 1 && stderr.starts_with("lucent: error: ") => {}
                Some((code, stderr)) => failures.push(format!("{option} {value}: exit {code}, stderr: {stderr}")),
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{} cases:\n{}", failures.len(), failures.join("\n"));
}
