//! Every numeric option of every command at its extremes (0, negative, NaN, infinite, huge,
//! u64::MAX and beyond): the CLI either runs (exit 0) or refuses with exit code 1 and one line on
//! stderr, quickly; never a panic, an abort or a hang.

use crate::common;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{rand_array, random_positive};

const EXTREMES: [&str; 9] = ["0", "-1", "nan", "inf", "-inf", "1e30", "18446744073709551615", "18446744073709551616", "1e-45"];

/// Runs the binary; None if it outlives `limit` (then it is killed).
fn run(args: &[String], limit: Duration) -> Option<(i32, String)> {
    run_capped(args, limit, None)
}

/// Runs the binary with its address space capped at `cap` bytes (`ulimit -v`; Linux), where an
/// allocation beyond the cap aborts the process unless the size was checked before.
fn run_capped(args: &[String], limit: Duration, cap: Option<u64>) -> Option<(i32, String)> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lucent"));
    #[cfg(target_os = "linux")]
    if let Some(cap) = cap {
        use std::os::unix::process::CommandExt;
        // SAFETY: between fork and exec the child only sets its own limit (async-signal-safe).
        unsafe {
            command.pre_exec(move || {
                let limit = libc::rlimit { rlim_cur: cap, rlim_max: cap };
                match libc::setrlimit(libc::RLIMIT_AS, &limit) {
                    0 => Ok(()),
                    _ => Err(std::io::Error::last_os_error()),
                }
            });
        }
    }
    let mut child = command.args(args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
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
    // The newer commands' inputs: a 12² image and its 12-angle sinogram, a mask, a 6×8×10
    // volume, a 3×6×8 series, an affine matrix.
    lucent::io::write_real(p("ph12.npy"), &ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[12, 12]), random_positive(144)).unwrap().view()).unwrap();
    lucent::io::write_real(p("sino.npy"), &ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[12, 12]), random_positive(144)).unwrap().view()).unwrap();
    lucent::io::write_real(p("mask.npy"), &ndarray::ArrayD::from_elem(ndarray::IxDyn(&[9, 12]), 1.0f32).view()).unwrap();
    lucent::io::write_real(p("vol.npy"), &ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[6, 8, 10]), random_positive(480)).unwrap().view()).unwrap();
    lucent::io::write_real(p("series.npy"), &rand_array(&[3, 6, 8]).view()).unwrap();
    lucent::io::write_real(p("m.npy"), &ndarray::arr1(&[1.0f32, 1.0]).into_dyn().view()).unwrap();
    let radon = base(&["radon", &p("ph12.npy"), "-o", &p("y.npy")]);
    // A cone geometry (8 views of 8 × 10 pixels) for that volume, and its projections.
    let angles: Vec<f64> = (0..8).map(|i| i as f64 * 0.785).collect();
    std::fs::write(
        p("g.json"),
        serde_json::json!({"type": "cone", "DetectorSpacingX": 1.5, "DetectorSpacingY": 1.5, "DetectorRowCount": 8, "DetectorColCount": 10,
                           "ProjectionAngles": angles, "DistanceOriginSource": 30.0, "DistanceOriginDetector": 15.0})
        .to_string(),
    )
    .unwrap();
    std::fs::write(p("v.json"), serde_json::json!({"GridRowCount": 8, "GridColCount": 10, "GridSliceCount": 6}).to_string()).unwrap();
    lucent::io::write_real(p("cone.npy"), &ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[8, 8, 10]), random_positive(640)).unwrap().view()).unwrap();
    let solve = |command: &str| base(&[command, &p("cone.npy"), "--geometry", &p("g.json"), "--volume", &p("v.json"), "-o", &p("y.npy"), "-n", "2"]);
    let matching = base(&["match", &p("x.npy"), &p("k.npy"), "-o", &p("y.npy"), "--pad-input"]);
    let volume = base(&["register-volume", &p("vol.npy"), &p("vol.npy"), "-o", &p("s.csv")]);
    let denoise = base(&["denoise", &p("series.npy"), "-o", &p("y.npy"), "--dims", "2"]);
    let aooct = base(&["phantom", "--aooct", "--size", "8,6,8", "-o", &p("ph.npy"), "--moving", &p("mov.npy")]);
    let resample = base(&["resample", &p("x.npy"), "-o", &p("y.npy")]);
    // The beamline pipeline on a 12-angle scan of 3 rows of 16 (no flats: the data is
    // transmission), and the synthetic scan's generator.
    lucent::io::write_real(p("raw.npy"), &ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[12, 3, 16]), random_positive(576)).unwrap().view()).unwrap();
    let recon = |more: &[&str]| [base(&["recon", &p("raw.npy"), "-o", &p("r.npy"), "--center", "7.5"]), base(more)].concat();
    let paganin = recon(&["--paganin"]);
    let scan = base(&["phantom", "--scan", "-o", &p("scan.h5"), "--size", "16"]);
    let cases: Vec<(Vec<String>, &str)> = vec![
        (base(&["recon", &p("raw.npy"), "-o", &p("r.npy")]), "--center"),
        (recon(&["--stripe", "sorting"]), "--stripe-size"),
        (recon(&["--stripe", "sorting"]), "--stripe-dim"),
        (recon(&["--stripe", "large"]), "--snr"),
        (recon(&["--stripe", "large"]), "--drop-ratio"),
        (recon(&["--stripe", "fw"]), "--fw-level"),
        (recon(&["--stripe", "fw"]), "--sigma"),
        (recon(&[]), "--outliers"),
        (recon(&["--outliers", "1"]), "--outlier-size"),
        (recon(&[]), "--cutoff"),
        (paganin.clone(), "--energy"),
        (paganin.clone(), "--distance"),
        (paganin.clone(), "--pixel"),
        (paganin.clone(), "--alpha"),
        (recon(&["--method", "gridrec"]), "--center"),
        (scan.clone(), "--angles"),
        (scan.clone(), "--rows"),
        (base(&["phantom", "--scan", "-o", &p("scan.h5")]), "--size"),
        (conv.clone(), "--parts"),
        (conv.clone(), "--max-part-bytes"),
        (conv.clone(), "--in-flight"),
        (filt.clone(), "--gaussian"),
        (filt.clone(), "--uniform"),
        (filt.clone(), "--median"),
        (filt.clone(), "--minimum"),
        (filt.clone(), "--maximum"),
        ([filt.clone(), base(&["--distance"])].concat(), "--sampling"),
        (base(&["label", &p("x.npy"), "-o", &p("l.npy")]), "--threshold"),
        (base(&["label", &p("x.npy"), "-o", &p("l.npy")]), "--connectivity"),
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
        // (A filter no case matches: the sizes are checked, then nothing runs; the copy
        // benchmark took 6 s per accepted value. A huge --max-mib is a valid request.)
        (base(&["bench", "--filter", "no-such-case", "--max-mib", "1"]), "--min-mib"),
        (radon.clone(), "--angles"),
        (radon.clone(), "--detectors"),
        (radon.clone(), "--center"),
        (base(&["backproject", &p("sino.npy"), "-o", &p("y.npy")]), "--size"),
        (base(&["fbp", &p("sino.npy"), "-o", &p("y.npy")]), "--size"),
        (base(&["fbp", &p("sino.npy"), "-o", &p("y.npy")]), "--center"),
        (base(&["em", &p("sino.npy"), "-o", &p("y.npy"), "--size", "8"]), "-n"),
        (base(&["em", &p("sino.npy"), "-o", &p("y.npy"), "-n", "2"]), "--size"),
        (base(&["find-center", &p("sino.npy")]), "--radius"),
        (base(&["sirt", &p("cone.npy"), "--geometry", &p("g.json"), "--volume", &p("v.json"), "-o", &p("y.npy")]), "-n"),
        (solve("sirt"), "--min"),
        (solve("sirt"), "--max"),
        (solve("sirt"), "--relaxation"),
        (solve("cgls"), "--relaxation"),
        (solve("sart"), "--subset-size"),
        (solve("osem"), "--subset-size"),
        ([solve("fista"), base(&["--tv-weight", "0.5"])].concat(), "--tv-iterations"),
        ([solve("fista"), base(&["--tv-iterations", "3"])].concat(), "--tv-weight"),
        ([solve("fista"), base(&["--tv-weight", "0.5"])].concat(), "--min"),
        (base(&["find-center", &p("cone.npy"), "--geometry", &p("g.json")]), "--radius"),
        (base(&["phantom", "--3d", "-o", &p("ph3.npy")]), "--size"),
        (base(&["find-center", &p("sino.npy")]), "--slice"),
        (matching.clone(), "--cval"),
        (matching.clone(), "--peaks"),
        (matching.clone(), "--min-distance"),
        (base(&["register", &p("x.npy"), &p("x.npy")]), "--upsample"),
        (base(&["register", &p("x.npy"), &p("x.npy"), "--reference-mask", &p("mask.npy"), "--moving-mask", &p("mask.npy")]), "--overlap-ratio"),
        (volume.clone(), "--order"),
        (volume.clone(), "--stripe"),
        (volume.clone(), "--coarse-step"),
        (volume.clone(), "--window"),
        (volume.clone(), "--window-step"),
        (volume.clone(), "--spike"),
        (volume.clone(), "--coarse-spike"),
        (volume.clone(), "--median"),
        (volume.clone(), "--min-peak"),
        (base(&["denoise", &p("series.npy"), "-o", &p("y.npy")]), "--dims"),
        (denoise.clone(), "--noise-level"),
        (base(&["denoise", &p("vol.npy"), "-o", &p("y.npy"), "--method", "bm"]), "--sigma"),
        (base(&["denoise", &p("vol.npy"), "-o", &p("y.npy"), "--method", "nlm"]), "--h"),
        (base(&["denoise", &p("vol.npy"), "-o", &p("y.npy"), "--method", "tv"]), "--weight"),
        (denoise.clone(), "--alpha"),
        (denoise.clone(), "--beta"),
        (denoise.clone(), "--isotropy-alpha"),
        (denoise.clone(), "--isotropy-beta"),
        (denoise.clone(), "--lowpass"),
        (denoise.clone(), "--tensor-sigma"),
        (denoise.clone(), "--control-sigma"),
        (denoise.clone(), "--structure-taps"),
        (denoise.clone(), "--reconstruction-taps"),
        (denoise.clone(), "--slab"),
        (base(&["phantom", "-o", &p("ph.npy")]), "--size"),
        (base(&["phantom", "-o", &p("ph.npy"), "--size", "16"]), "--seed"),
        (base(&["phantom", "--series", "moving-edge", "--size", "2,4,8,8", "-o", &p("ph.npy"), "--noisy", &p("n.npy")]), "--sigma"),
        (base(&["phantom", "--series", "moving-edge", "--size", "2,4,8,8", "-o", &p("ph.npy")]), "--speed"),
        (aooct.clone(), "--drift"),
        (aooct.clone(), "--tremor"),
        (aooct.clone(), "--axial"),
        (aooct.clone(), "--saccades"),
        (aooct.clone(), "--saccade"),
        (resample.clone(), "--shift"),
        (resample.clone(), "--zoom"),
        (resample.clone(), "--rotate"),
        ([resample.clone(), base(&["--zoom", "1.5"])].concat(), "--order"),
        ([resample.clone(), base(&["--zoom", "1.5"])].concat(), "--cval"),
        ([resample.clone(), base(&["--affine", &p("m.npy")])].concat(), "--offset"),
        ([resample.clone(), base(&["--affine", &p("m.npy")])].concat(), "--output-shape"),
        (base(&["deconvolve", &p("pos.npy"), "--psf", &p("psf.npy"), "-o", &p("y.npy"), "--method", "wiener"]), "--balance"),
        (base(&["deconvolve", &p("pos.npy"), "-o", &p("y.npy"), "-n", "2", "--psf-model", "gaussian"]), "--dxy"),
        (base(&["deconvolve", &p("pos.npy"), "-o", &p("y.npy"), "-n", "2", "--psf-model", "scalar", "--dxy", "0.1"]), "--na"),
        (base(&["deconvolve", &p("pos.npy"), "--psf", &p("psf.npy"), "-o", &p("y.npy"), "-n", "2", "--method", "blind"]), "--psf-iterations"),
        (base(&["deconvolve", &p("pos.npy"), "--psf", &p("psf.npy"), "-o", &p("y.npy"), "-n", "2", "--method", "blind"]), "--psf-prior"),
        (base(&["deconvolve", &p("pos.npy"), "--psf", &p("psf.npy"), "-o", &p("y.npy"), "--method", "unsupervised-wiener"]), "--seed"),
        (base(&["deconvolve", &p("pos.npy"), "-o", &p("y.npy"), "-n", "2", "--psf-model", "gaussian", "--dxy", "0.1", "--dz", "0.2"]), "--deskew"),
        (base(&["psf", "-o", &p("psf.npy"), "--nx", "9"]), "--nz"),
        (base(&["psf", "-o", &p("psf.npy"), "--nz", "5"]), "--nx"),
    ];
    let psf = base(&["psf", "-o", &p("psf.npy"), "--nz", "5", "--nx", "9"]);
    let psf_options =
        ["--dz", "--z", "--dxy", "--pz", "--na", "--wvl", "--ns", "--ni", "--ni0", "--ng", "--ng0", "--tg", "--tg0", "--ti0", "--oversample-factor"];
    let confocal = base(&["psf", "-o", &p("psf.npy"), "--nz", "5", "--nx", "9", "--pinhole-au", "1"]);
    let cases: Vec<(Vec<String>, &str)> = cases.into_iter().chain(["--pinhole-au", "--ex-wvl", "--em-wvl"].iter().map(|&o| (confocal.clone(), o))).collect();
    let deskew = base(&["deskew", &p("vol.npy"), "-o", &p("y.npy")]);
    let deskew_options = ["--angle", "--dzdata", "--dxdata", "--width", "--shift", "--pad-val"];
    let cases: Vec<(Vec<String>, &str)> =
        cases.into_iter().chain(psf_options.iter().map(|&o| (psf.clone(), o))).chain(deskew_options.iter().map(|&o| (deskew.clone(), o))).collect();
    // Three runs at a time (most are refusals, quick; a few open the device).
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for worker in 0..3 {
            let (cases, failures) = (&cases, &failures);
            scope.spawn(move || {
                for (line, option) in cases.iter().skip(worker).step_by(3) {
                    for value in EXTREMES {
                        // The value joined with `=` so that a leading '-' is a value, not an option.
                        let args = [line.clone(), vec![format!("{option}={value}")]].concat();
                        let args = if option == &"-n" { [line.clone(), vec!["-n".into(), value.into()]].concat() } else { args };
                        let failure = match run(&args, Duration::from_secs(60)) {
                            None => Some(format!("{option} {value}: still running after 60 s")),
                            Some((0, _)) => None,
                            Some((1, stderr)) if stderr.trim_end().lines().count() == 1 && stderr.starts_with("lucent: error: ") => None,
                            Some((code, stderr)) => Some(format!("{option} {value}: exit {code}, stderr: {stderr}")),
                        };
                        failures.lock().unwrap().extend(failure);
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{} cases:\n{}", failures.len(), failures.join("\n"));
}

/// Counts and sizes whose arrays would not fit the memory the process may map, under a 4 GiB
/// address-space cap, and outputs that cannot hold their result: refused in one line before
/// anything is allocated or written (or, where the value only widens a search, run within
/// bounds), never an abort; a refused run writes nothing.
#[cfg(target_os = "linux")]
#[test]
fn bad_counts_sizes_and_outputs_are_refused_before_any_work() {
    let dir = std::env::temp_dir().join(format!("lucent-huge-counts-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let p = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let image = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[24, 24]), random_positive(24 * 24)).unwrap();
    lucent::io::write_real(p("ph.npy"), &image.view()).unwrap();
    let sinogram = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[20, 24]), random_positive(20 * 24)).unwrap();
    lucent::io::write_real(p("sino.npy"), &sinogram.view()).unwrap();
    lucent::io::write_real(p("x.npy"), &rand_array(&[32, 32]).view()).unwrap();
    lucent::io::write_real(p("m.npy"), &ndarray::arr1(&[1.0f32, 2.0]).into_dyn().view()).unwrap();
    lucent::io::write_real(p("zero.npy"), &ndarray::ArrayD::<f32>::zeros(ndarray::IxDyn(&[20, 24])).view()).unwrap();
    lucent::io::write_real(p("one.npy"), &ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[20, 1]), random_positive(20)).unwrap().view()).unwrap();
    lucent::io::write_real(p("same.npy"), &ndarray::ArrayD::<f32>::from_elem(ndarray::IxDyn(&[20]), 0.3).view()).unwrap();
    lucent::io::write_real(p("vol.npy"), &ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[8, 16, 16]), random_positive(8 * 16 * 16)).unwrap().view()).unwrap();
    lucent::io::write_real(p("series.npy"), &rand_array(&[3, 4, 8, 8]).view()).unwrap();
    let base = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<String>>();
    // (command line, the error's words or "" for a run that succeeds, a file the run must not
    // leave behind)
    let cases: Vec<(Vec<String>, &str, Option<String>)> = vec![
        (base(&["backproject", &p("sino.npy"), "-o", &p("bp.npy"), "--size", "32768"]), "host memory", Some(p("bp.npy"))),
        (base(&["backproject", &p("sino.npy"), "-o", &p("bp.npy"), "--size", "65536"]), "host memory", Some(p("bp.npy"))),
        (base(&["fbp", &p("sino.npy"), "-o", &p("fbp.npy"), "--size", "65536"]), "host memory", Some(p("fbp.npy"))),
        (base(&["radon", &p("ph.npy"), "-o", &p("s.npy"), "--angles", "1000000000"]), "angles", Some(p("s.npy"))),
        // The radius only widens the search; it stays on the detector. (It also shows that the
        // device opens and computes under the cap.)
        (base(&["find-center", &p("sino.npy"), "--radius", "1e9"]), "", None),
        (
            base(&[
                "phantom",
                "--aooct",
                "--size",
                "32,16,32",
                "--saccades",
                "1000000000",
                "-o",
                &p("ref.npy"),
                "--moving",
                &p("mov.npy"),
                "--truth",
                &p("t.csv"),
            ]),
            "saccades",
            Some(p("ref.npy")),
        ),
        (base(&["resample", &p("x.npy"), "-o", &p("r.npy"), "--affine", &p("m.npy"), "--output-shape", "1,1,1"]), "--output-shape", Some(p("r.npy"))),
        // Sinograms with no centre to find: refused, not answered with the search window's edge.
        (base(&["find-center", &p("zero.npy")]), "constant", None),
        (base(&["find-center", &p("one.npy")]), "detector", None),
        (base(&["find-center", &p("sino.npy"), "--angles-file", &p("same.npy")]), "same angle", None),
        (base(&["--device", "cpu", "find-center", &p("zero.npy")]), "constant", None),
        // Outputs whose format cannot hold the result: refused before anything is computed or
        // written (register-volume wrote its CSV, then failed on the PNG; denoise failed after
        // computing).
        (base(&["register-volume", &p("vol.npy"), &p("vol.npy"), "-o", &p("s.csv"), "--apply", &p("out.png")]), "PNG", Some(p("s.csv"))),
        (base(&["denoise", &p("series.npy"), "-o", &p("d.tif")]), "TIFF", Some(p("d.tif"))),
        (
            base(&["phantom", "--aooct", "--size", "32,16,32", "-o", &p("ref.npy"), "--moving", &p("mov.png"), "--truth", &p("t.csv")]),
            "PNG",
            Some(p("ref.npy")),
        ),
        // A fractional upsample factor misplaces the refinement: refused, on the CPU too.
        (base(&["register", &p("x.npy"), &p("x.npy"), "--upsample", "1.5"]), "whole number", None),
        (base(&["--device", "cpu", "register", &p("x.npy"), &p("x.npy"), "--upsample", "2.5"]), "whole number", None),
    ];
    let mut failures = Vec::new();
    for (args, words, absent) in &cases {
        match run_capped(args, Duration::from_secs(60), Some(4 << 30)) {
            None => failures.push(format!("{args:?}: still running after 60 s")),
            Some((code, stderr)) => {
                let refused = code == 1 && stderr.trim_end().lines().count() == 1 && stderr.starts_with("lucent: error: ") && stderr.contains(words);
                if (words.is_empty() && code != 0) || (!words.is_empty() && !refused) {
                    failures.push(format!("{args:?}: exit {code}, stderr: {stderr}"));
                }
                if let Some(path) = absent.as_ref().filter(|path| std::path::Path::new(path).exists()) {
                    failures.push(format!("{args:?}: left {path} behind"));
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{} cases:\n{}", failures.len(), failures.join("\n"));
}

/// A long EM run's host memory stays flat with its iteration count (one recording of every
/// iteration held about 40 KB per iteration: 20 000 iterations took 856 MB).
#[test]
fn long_em_runs_keep_memory_flat() {
    let dir = std::env::temp_dir().join(format!("lucent-em-memory-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let p = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let sinogram = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[20, 24]), random_positive(20 * 24)).unwrap();
    lucent::io::write_real(p("sino.npy"), &sinogram.view()).unwrap();
    let peak = |iterations: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_lucent"))
            .args(["em", &p("sino.npy"), "-o", &p("em.npy"), "-n", iterations, "--json", "--quiet"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        report["host_peak_bytes"].as_u64()
    };
    let (short, long) = (peak("100"), peak("4000"));
    let _ = std::fs::remove_dir_all(&dir);
    // (Linux reports the peak; elsewhere it is null.)
    if let (Some(short), Some(long)) = (short, long) {
        assert!(long < short + (40 << 20), "4000 iterations peaked at {long} bytes, 100 at {short}");
    }
}

/// Finite input near float32's largest value: every command either writes a finite result or
/// refuses in one line and writes nothing; never NaN or Inf with exit 0.
#[test]
fn input_near_the_float32_limit_never_gives_silent_non_finite_results() {
    let dir = std::env::temp_dir().join(format!("lucent-near-max-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let p = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let huge = |dims: &[usize]| {
        let n = dims.iter().product();
        ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(dims), random_positive(n).into_iter().map(|v| 1e38 + 2.3e38 * v.min(1.0)).collect()).unwrap()
    };
    lucent::io::write_real(p("big.npy"), &huge(&[24, 24]).view()).unwrap();
    lucent::io::write_real(p("sino.npy"), &huge(&[20, 24]).view()).unwrap();
    lucent::io::write_real(p("series.npy"), &huge(&[3, 4, 8, 8]).view()).unwrap();
    lucent::io::write_real(p("k.npy"), &rand_array(&[3, 4]).view()).unwrap();
    lucent::io::write_real(p("psf.npy"), &ndarray::ArrayD::from_elem(ndarray::IxDyn(&[3, 3]), 1.0f32).view()).unwrap();
    let base = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<String>>();
    let out = p("out.npy");
    let cases = [
        base(&["fft", &p("big.npy"), "-o", &out, "--real"]),
        base(&["fft", &p("big.npy"), "-o", &out]),
        base(&["convolve", &p("big.npy"), &p("k.npy"), "-o", &out]),
        base(&["spline-filter", &p("big.npy"), "-o", &out]),
        base(&["resample", &p("big.npy"), "-o", &out, "--zoom", "2"]),
        base(&["radon", &p("big.npy"), "-o", &out]),
        base(&["fbp", &p("sino.npy"), "-o", &out]),
        base(&["deconvolve", &p("big.npy"), "--psf", &p("psf.npy"), "-o", &out, "-n", "3"]),
        base(&["denoise", &p("series.npy"), "-o", &out, "--dims", "3"]),
        base(&["filter", &p("big.npy"), "-o", &out, "--gaussian", "2"]),
    ];
    let mut failures = Vec::new();
    for args in &cases {
        let _ = std::fs::remove_file(&out);
        match run(args, Duration::from_secs(60)) {
            None => failures.push(format!("{args:?}: still running after 60 s")),
            Some((0, _)) => {
                let finite = match lucent::io::read(&out).unwrap() {
                    lucent::io::Loaded::Real(y) => y.iter().all(|v| v.is_finite()),
                    lucent::io::Loaded::Complex(y) => y.iter().all(|v| v.re.is_finite() && v.im.is_finite()),
                };
                if !finite {
                    failures.push(format!("{args:?}: exit 0 with a non-finite result"));
                }
            }
            Some((1, stderr)) if stderr.trim_end().lines().count() == 1 && stderr.starts_with("lucent: error: ") => {
                if std::path::Path::new(&out).exists() {
                    failures.push(format!("{args:?}: refused but wrote {out}"));
                }
            }
            Some((code, stderr)) => failures.push(format!("{args:?}: exit {code}, stderr: {stderr}")),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{} cases:\n{}", failures.len(), failures.join("\n"));
}

/// Options that would be silently ignored are refused in one line: each applies to another
/// option or has no meaning at that value.
#[test]
fn options_that_would_be_ignored_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let positive = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[9, 12]), random_positive(108)).unwrap();
    lucent::io::write_real(p("pos.npy"), &positive.view()).unwrap();
    lucent::io::write_real(p("psf.npy"), &ndarray::ArrayD::from_elem(ndarray::IxDyn(&[3, 3]), 1.0f32).view()).unwrap();
    lucent::io::write_real(p("series.npy"), &rand_array(&[3, 4, 8, 8]).view()).unwrap();
    let cases: [(&[&str], &[(&str, &str)], &str); 6] = [
        (&["filter", &p("pos.npy"), "-o", &p("y.npy"), "--gaussian", "1", "--convolve"], &[], "--convolve applies to --kernel"),
        (&["resample", &p("pos.npy"), "-o", &p("y.npy"), "--zoom", "2", "--offset", "1,2"], &[], "--offset applies to --affine"),
        (&["resample", &p("pos.npy"), "-o", &p("y.npy"), "--zoom", "2", "--output-shape", "4,4"], &[], "--output-shape applies to --affine"),
        (&["deconvolve", &p("pos.npy"), "--psf", &p("psf.npy"), "-o", &p("y.npy"), "-n", "2", "--filter-epsilon=-1"], &[], "filter_epsilon"),
        (&["denoise", &p("series.npy"), "-o", &p("y.npy"), "--slab", "0"], &[], "slab length of 0"),
        (&["convolve", &p("pos.npy"), &p("psf.npy"), "-o", &p("y.npy")], &[("LUCENT_SLAB_MIB", "abc")], "LUCENT_SLAB_MIB=abc"),
    ];
    for (args, env, words) in cases {
        let out = common::lucent_cli(args, env);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.trim_end().lines().count() == 1 && stderr.contains(words), "{args:?}: {stderr}");
        assert!(!dir.path().join("y.npy").exists(), "{args:?} wrote its output");
    }
}

/// Refusals name the file and the problem in one line: 0-d, 5-D and empty arrays name their
/// input; a path without an extension says so; a regular file named .zarr is not a store; a
/// negative number after a space is a value (`--cval -inf`, `--gaussian -1`), refused for what
/// it is, not taken for an option.
#[test]
fn refusals_name_the_file_and_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    lucent::io::write_real(p("img.npy"), &rand_array(&[8, 9]).view()).unwrap();
    lucent::io::write_real(p("five.npy"), &ndarray::ArrayD::<f32>::zeros(ndarray::IxDyn(&[2, 2, 2, 2, 2])).view()).unwrap();
    lucent::io::write_real(p("empty.npy"), &ndarray::ArrayD::<f32>::zeros(ndarray::IxDyn(&[0, 4])).view()).unwrap();
    std::fs::write(p("file.zarr"), b"not a store").unwrap();
    std::fs::write(p("noext"), b"").unwrap();
    lucent::io::write_real(p("row.npy"), &rand_array(&[1, 8]).view()).unwrap();
    let (five, empty, zarr, noext) = (p("five.npy"), p("empty.npy"), p("file.zarr"), p("noext"));
    let cases: [(&[&str], &[&str]); 8] = [
        (&["filter", &five, "-o", &p("y.npy"), "--gaussian", "1"], &[&five, "1 to 4 axes"]),
        (&["filter", &empty, "-o", &p("y.npy"), "--gaussian", "1"], &[&empty, "no elements"]),
        (&["filter", &noext, "-o", &p("y.npy"), "--gaussian", "1"], &[&noext, "no file extension"]),
        (&["filter", &zarr, "-o", &p("y.npy"), "--gaussian", "1"], &[&zarr, "is a file, not a Zarr store"]),
        (&["filter", &p("img.npy"), "-o", &p("y.npy"), "--uniform", "3", "--boundary", "constant", "--cval", "-inf"], &["cval", "inf"]),
        (&["filter", &p("img.npy"), "-o", &p("y.npy"), "--gaussian", "-1"], &["-1"]),
        (&["resample", &p("img.npy"), "-o", &p("y.npy"), "--shift", "-2.5,1"], &[]),
        // An axis of one sample zooms as scipy zooms it (it was refused as a singular map).
        (&["resample", &p("row.npy"), "-o", &p("y.npy"), "--zoom", "2"], &[]),
    ];
    for (args, words) in cases {
        let out = common::lucent_cli(args, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if words.is_empty() {
            assert!(out.status.success(), "{args:?}: {stderr}");
            continue;
        }
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        assert!(!stderr.contains("unexpected argument"), "{args:?}: {stderr}");
        for w in words {
            assert!(stderr.contains(w), "{args:?}: `{w}` not in {stderr}");
        }
    }
}
