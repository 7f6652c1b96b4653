//! `lucent demo`'s report.html as a person sees it: every embedded figure decoded and looked at
//! (large enough, not blank), the page opened in headless Chromium, which must decode every
//! figure at its size, and a screenshot of it checked (not blank) and kept in
//! target/artifacts/ beside the page. The demo runs at `--size small` (seconds on lavapipe).
//! Chromium is needed (Debian: `apt-get install chromium`; scripts/test installs it as root);
//! without it the test fails and says so. `LUCENT_CHROMIUM` names another binary.

use crate::common::*;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;

/// The figures the page holds, in order (each also written as `<name>.png`).
const FIGURES: [&str; 12] = [
    "panels",
    "psf",
    "registration",
    "registration_trace",
    "similarity",
    "tomography",
    "sinogram",
    "mlem_kl",
    "conebeam",
    "sirt_residual",
    "denoise",
    "denoise_psnr",
];

/// The browser's window: wider than the widest figure, tall enough for the whole page.
const WINDOW: (u32, u32) = (1920, 8000);

#[test]
fn demo_report_in_chromium() {
    let chromium = chromium();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("demo");
    let r = lucent_json(&["demo", "--out", out.to_str().unwrap(), "--size", "small", "-n", "5"], &[]);
    assert_eq!(r["details"]["size"], "small", "{r}");
    let html = std::fs::read_to_string(out.join("report.html")).expect("the demo writes report.html");
    check_similarity(&r["details"]["similarity"]);

    // Self-contained: every source or link on the page is data it carries.
    for attribute in ["src=\"", "href=\""] {
        for (at, _) in html.match_indices(attribute) {
            assert!(html[at + attribute.len()..].starts_with("data:"), "report.html fetches something: {}", &html[at..(at + 80).min(html.len())]);
        }
    }
    assert!(!html.contains("url("), "report.html's style fetches something");
    for number in [
        "relative L2 error vs truth, restored",
        "B-scans within one voxel",
        "angle (degrees), true | found",
        "registration error of the image centre",
        "KL divergence, first and last iterate",
        "PSNR, denoised over 4 axes",
        "lucent demo --out",
    ] {
        assert!(html.contains(number), "report.html lacks {number:?}");
    }

    // Every figure: on the page, decodable, large, not blank, and the PNG file beside it.
    let figures = embedded(&html);
    let ids: Vec<&str> = figures.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, FIGURES, "the page's figures");
    let mut sizes = Vec::new();
    for (id, png) in &figures {
        sizes.push(check_figure(png, 384).unwrap_or_else(|e| panic!("figure {id}: {e}")));
        assert!(std::fs::read(out.join(format!("{id}.png"))).is_ok_and(|file| file == *png), "{id}.png differs from the page's figure");
    }

    // Chromium decodes each figure at its size: a copy of the page with a script that marks
    // each decoded image (the report itself has no script), its DOM after loading.
    let probe = out.join("probe.html");
    let script = "<script>addEventListener('load',()=>{for(const i of document.images)if(i.complete&&i.naturalWidth>0)i.setAttribute('data-decoded',i.naturalWidth+'x'+i.naturalHeight)})</script>";
    std::fs::write(&probe, html.replace("</body>", &format!("{script}</body>"))).unwrap();
    let dom = browse(&chromium, dir.path(), &["--dump-dom", "--virtual-time-budget=10000"], &probe);
    let dom = String::from_utf8_lossy(&dom.stdout);
    let decoded: Vec<(u32, u32)> = dom
        .match_indices("data-decoded=\"")
        .map(|(at, m)| {
            let v = &dom[at + m.len()..];
            let (w, h) = v[..v.find('"').unwrap()].split_once('x').unwrap();
            (w.parse().unwrap(), h.parse().unwrap())
        })
        .collect();
    assert_eq!(decoded, sizes, "the figures Chromium decoded (width x height), against the PNGs' sizes");
    assert_eq!(dom.matches("<figure").count(), FIGURES.len(), "figures in Chromium's DOM");

    // The screenshot of the page itself, kept.
    let artifacts = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap().join("artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let shot = artifacts.join("demo_report.png");
    let _ = std::fs::remove_file(&shot);
    let size = format!("--window-size={},{}", WINDOW.0, WINDOW.1);
    browse(&chromium, dir.path(), &[&format!("--screenshot={}", shot.display()), &size, "--hide-scrollbars"], &out.join("report.html"));
    std::fs::copy(out.join("report.html"), artifacts.join("demo_report.html")).unwrap();
    let screenshot = std::fs::read(&shot).unwrap_or_else(|e| panic!("Chromium wrote no screenshot {}: {e}", shot.display()));
    let (w, h) = check_figure(&screenshot, 1000).unwrap_or_else(|e| panic!("the screenshot {}: {e}", shot.display()));
    assert_eq!((w, h), WINDOW, "the screenshot's size");
}

/// The similarity panel's numbers: the found transform within the 2D method's precision of the
/// truth (half a log-polar sample in angle and log scale, as tests/it/similarity_3d.rs: 0.70°
/// and 1.7% at 128²; 0.29° and 0.2% measured), the image's centre registered to a fifth of a
/// pixel (0.04 measured), and the registered image far closer to the reference than the moving.
fn check_similarity(s: &serde_json::Value) {
    let n = s["shape"][0].as_f64().unwrap();
    let (found, truth) = (&s["found"], &s["true"]);
    let v = |x: &serde_json::Value| x.as_f64().unwrap_or_else(|| panic!("not a number: {s}"));
    let turn = ((v(&found["angle"]) - v(&truth["angle"]) + 180.0).rem_euclid(360.0) - 180.0).abs();
    assert!(turn < 180.0 / n / 2.0, "angle: {s}");
    assert!((v(&found["scale"]) / v(&truth["scale"])).ln().abs() < (n * 1.1 / 2.0).ln() / n / 2.0, "scale: {s}");
    for k in 0..2 {
        assert!((v(&found["tvec"][k]) - v(&truth["tvec_for_found_angle_and_scale"][k])).abs() < 0.2, "shift: {s}");
    }
    assert!(v(&s["centre_error_px"]) < 0.2, "{s}");
    let (before, after) = (v(&s["relative_rms_difference"]["before"]), v(&s["relative_rms_difference"]["after"]));
    assert!(after < 0.1 && before > 0.5, "{s}");
    assert_eq!(v(&s["made"]["angle"]), -v(&truth["angle"]), "{s}");
}

/// The checks refuse what a broken figure would be: a blank picture, a garbled file, a tiny one.
#[test]
fn figure_checks_refuse_blank_garbled_and_small_pictures() {
    let png = |w: u32, h: u32, f: &dyn Fn(u32, u32) -> u8| {
        let mut bytes = Vec::new();
        image::GrayImage::from_fn(w, h, |x, y| image::Luma([f(x, y)])).write_to(&mut std::io::Cursor::new(&mut bytes), image::ImageFormat::Png).unwrap();
        bytes
    };
    let stripes = |x: u32, y: u32| ((x / 7 + y / 5) % 2 * 200) as u8;
    assert_eq!(check_figure(&png(400, 390, &stripes), 384), Ok((400, 390)));
    let blank = check_figure(&png(400, 400, &|_, _| 255), 384);
    assert!(blank.as_ref().is_err_and(|e| e.contains("blank")), "{blank:?}");
    let tiny = check_figure(&png(128, 128, &stripes), 384);
    assert!(tiny.as_ref().is_err_and(|e| e.contains("384")), "{tiny:?}");
    let mut garbled = png(400, 400, &stripes);
    let middle = garbled.len() / 2;
    garbled[middle..middle + 16].fill(0x5a);
    assert!(check_figure(&garbled, 384).is_err(), "a garbled PNG passed");
}

/// The PNG's size if it decodes, its shorter side is at least `min_side` and its pixels vary
/// (standard deviation of the grey level above 5 of 255): else why not.
fn check_figure(png: &[u8], min_side: u32) -> Result<(u32, u32), String> {
    let image = image::load_from_memory_with_format(png, image::ImageFormat::Png).map_err(|e| format!("does not decode: {e}"))?.to_luma8();
    let (w, h) = image.dimensions();
    if w.min(h) < min_side {
        return Err(format!("{w}x{h} pixels: a side below {min_side}"));
    }
    let n = (w * h) as f64;
    let mean = image.pixels().map(|p| p.0[0] as f64).sum::<f64>() / n;
    let variance = image.pixels().map(|p| (p.0[0] as f64 - mean).powi(2)).sum::<f64>() / n;
    if variance.sqrt() <= 5.0 {
        return Err(format!("blank: grey levels vary by {:.2} around {mean:.1}", variance.sqrt()));
    }
    Ok((w, h))
}

/// Each `<figure id=...>`'s embedded PNG, in page order.
fn embedded(html: &str) -> Vec<(String, Vec<u8>)> {
    let prefix = "data:image/png;base64,";
    html.match_indices("<figure id=\"")
        .map(|(at, m)| {
            let rest = &html[at + m.len()..];
            let id = rest[..rest.find('"').unwrap()].to_string();
            let data = &rest[rest.find(prefix).unwrap_or_else(|| panic!("figure {id} has no PNG")) + prefix.len()..];
            let data = &data[..data.find('"').unwrap()];
            (id.clone(), base64::engine::general_purpose::STANDARD.decode(data).unwrap_or_else(|e| panic!("figure {id}: not base64: {e}")))
        })
        .collect()
}

/// The Chromium binary: `LUCENT_CHROMIUM`, else `chromium` or `chromium-browser` on the PATH;
/// none is a failure that says how to install it.
fn chromium() -> PathBuf {
    let names: Vec<String> = match std::env::var("LUCENT_CHROMIUM") {
        Ok(name) => vec![name],
        Err(_) => vec!["chromium".into(), "chromium-browser".into()],
    };
    for name in &names {
        let runs = Command::new(name).arg("--version").stdin(Stdio::null()).output().is_ok_and(|o| o.status.success());
        if runs {
            return PathBuf::from(name);
        }
    }
    panic!("no Chromium ({}): the report test opens report.html in headless Chromium. Install it (Debian: apt-get install chromium; scripts/test does as root) or name one in LUCENT_CHROMIUM", names.join(", "));
}

/// Runs headless Chromium on `page` with `args` (its profile in `scratch`), at most two minutes.
fn browse(chromium: &Path, scratch: &Path, args: &[&str], page: &Path) -> Output {
    let profile = scratch.join("chromium-profile");
    let mut child = Command::new(chromium)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{} does not start: {e}", chromium.display()));
    // Read the pipes while it runs, so a large DOM cannot fill one and stall it.
    let (mut stdout, mut stderr) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut v).map(|_| v)
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut v).map(|_| v)
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("Chromium ran past two minutes on {} ({args:?})", page.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = Output { status, stdout: out.join().unwrap().unwrap_or_default(), stderr: err.join().unwrap().unwrap_or_default() };
    assert!(output.status.success(), "Chromium failed ({args:?}): {}", String::from_utf8_lossy(&output.stderr));
    output
}
