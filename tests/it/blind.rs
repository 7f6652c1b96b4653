//! Blind Richardson-Lucy (lucent::restoration::blind_richardson_lucy): the GPU against the f64
//! reference (same geometry, updates and order) on awkward sizes, boundaries and options,
//! temporaries poisoned; a synthetic study (a PSF recovered from a wrong start); refusals.

use crate::common;
use common::*;
use lucent::restoration::{blind_richardson_lucy, cpu, BlindOptions, RlBoundary, RlOptions};
use ndarray::{ArrayD, IxDyn};

fn positive(dims: &[usize]) -> ArrayD<f32> {
    ArrayD::from_shape_vec(IxDyn(dims), random_positive(dims.iter().product())).unwrap()
}

/// 2D and 3D, zero and periodic boundaries, several updates per iteration, with and without the
/// prior: the image within 1e-4 and the PSF within 1e-4 (relative L2) of the f64 reference.
/// (Richardson-Lucy's own bound is 2e-6·√(4 n) for n updates; the PSF's update divides by its
/// sum and feeds the next object update, seen ~1e-6.)
#[test]
fn blind_matches_the_f64_reference() {
    let gpu = poisoned_gpu();
    for (dims, psf_dims, boundary, object_iterations, psf_iterations, psf_prior) in [
        (vec![37usize, 41], vec![7usize, 5], RlBoundary::Zero, 2, 1, 0.0),
        (vec![29, 32], vec![6, 9], RlBoundary::Periodic, 1, 3, 0.5),
        (vec![11, 13, 17], vec![5, 3, 5], RlBoundary::Zero, 1, 2, 0.2),
    ] {
        let image = positive(&dims).mapv(|v| v + 0.1);
        let psf = positive(&psf_dims).mapv(|v| v + 0.05);
        let o = BlindOptions { iterations: 4, object_iterations, psf_iterations, psf_prior, rl: RlOptions { boundary, ..Default::default() } };
        let got = blind_richardson_lucy(gpu, &image.view(), &psf.view(), &o).unwrap();
        let (want, want_psf) = cpu::blind_richardson_lucy(&image.view(), &psf.view(), &o).unwrap();
        let what = format!("{dims:?} psf {psf_dims:?} {boundary:?} {object_iterations}+{psf_iterations} prior {psf_prior}");
        assert_rel_l2(&got.estimate, &want, 1e-4, &format!("{what}: image"));
        assert_rel_l2(&got.psf, &want_psf, 1e-4, &format!("{what}: PSF"));
        let total: f64 = got.psf.iter().map(|&v| v as f64).sum();
        assert!((total - 1.0).abs() < 1e-5 && got.psf.iter().all(|&v| v >= 0.0), "{what}: the PSF sums to {total}");
        assert_eq!(got.report.iterations, 4);
    }
}

#[test]
fn blind_refusals() {
    let gpu = gpu();
    let image = positive(&[20, 20]);
    let psf = positive(&[5, 5]);
    let base = BlindOptions::default();
    for (o, words) in [
        (BlindOptions { iterations: 0, ..base }, "at least 1 iteration"),
        (BlindOptions { psf_iterations: 0, ..base }, "PSF updates"),
        (BlindOptions { psf_prior: -1.0, ..base }, "prior"),
        (BlindOptions { psf_prior: f64::NAN, ..base }, "prior"),
        (BlindOptions { rl: RlOptions { accelerate: true, ..Default::default() }, ..base }, "acceleration"),
        (BlindOptions { rl: RlOptions { boundary: RlBoundary::Extended, ..Default::default() }, ..base }, "extended"),
    ] {
        let err = blind_richardson_lucy(gpu, &image.view(), &psf.view(), &o).err().expect("refused").to_string();
        assert!(err.contains(words), "{o:?}: {err}");
    }
    let err = blind_richardson_lucy(gpu, &image.view(), &positive(&[5]).view(), &base).err().unwrap().to_string();
    assert!(err.contains("one PSF of the image's rank"), "{err}");
    let err = blind_richardson_lucy(gpu, &image.view(), &positive(&[25, 3]).view(), &base).err().unwrap().to_string();
    assert!(err.contains("larger") || err.contains("PSF"), "{err}");
}

/// A synthetic study: beads and blobs blurred by a Gaussian PSF (σ 1.8 px), restored from a
/// PSF twice too wide (σ 3.6). Blind RL must bring the PSF at least halfway to the truth and
/// restore the object better than Richardson-Lucy with the wrong PSF, and within reach of RL with
/// the true one (the numbers are printed: the report).
#[test]
fn blind_recovers_a_psf_from_a_wrong_start() {
    use rand::Rng;
    let gpu = gpu();
    let n = 128usize;
    let mut rng = rand::rng();
    let mut object = ArrayD::<f64>::from_elem(IxDyn(&[n, n]), 0.02);
    for _ in 0..60 {
        let (y, x) = (rng.random_range(8..n - 8), rng.random_range(8..n - 8));
        object[[y, x]] += rng.random_range(1.0..3.0);
    }
    for _ in 0..4 {
        let (cy, cx, a) = (rng.random_range(20.0..108.0), rng.random_range(20.0..108.0), rng.random_range(0.2..0.5));
        object.indexed_iter_mut().for_each(|(i, v)| *v += a * (-((i[0] as f64 - cy).powi(2) + (i[1] as f64 - cx).powi(2)) / 32.0).exp());
    }
    let gaussian = |sigma: f64| {
        let g = ArrayD::from_shape_fn(IxDyn(&[17, 17]), |i| (-((i[0] as f64 - 8.0).powi(2) + (i[1] as f64 - 8.0).powi(2)) / (2.0 * sigma * sigma)).exp());
        let total = g.sum();
        g / total
    };
    let (truth, wrong) = (gaussian(1.8), gaussian(3.6));
    let image = cpu::convolve(&object.view(), &truth.view(), RlBoundary::Zero).unwrap().mapv(|v| v as f32);
    let rel = |a: &ArrayD<f32>, b: &ArrayD<f64>| {
        let d: f64 = a.iter().zip(b).map(|(&x, &y)| (x as f64 - y).powi(2)).sum();
        (d / b.iter().map(|y| y * y).sum::<f64>()).sqrt()
    };
    let iterations = 60;
    let rl = |psf: &ArrayD<f64>| lucent::restoration::richardson_lucy(gpu, &image, &psf.mapv(|v| v as f32), iterations, &RlOptions::default()).unwrap();
    let (with_truth, with_wrong) = (rel(&rl(&truth), &object), rel(&rl(&wrong), &object));
    let o = BlindOptions { iterations, ..Default::default() };
    let blind = blind_richardson_lucy(gpu, &image.view(), &wrong.mapv(|v| v as f32).view(), &o).unwrap();
    let (psf_start, psf_end) = (rel(&wrong.mapv(|v| v as f32), &truth), rel(&blind.psf, &truth));
    let restored = rel(&blind.estimate, &object);
    eprintln!(
        "blind study: PSF error {psf_start:.3} -> {psf_end:.3}; object error: RL true PSF {with_truth:.3}, RL wrong PSF {with_wrong:.3}, blind {restored:.3}, observed {:.3}",
        rel(&image, &object)
    );
    assert!(psf_end < 0.5 * psf_start, "the PSF moved from {psf_start:.3} only to {psf_end:.3}");
    assert!(restored < with_wrong, "blind {restored:.3} is no better than RL with the wrong PSF {with_wrong:.3}");
}

/// `lucent deconvolve --method blind` on files, on the GPU and the CPU reference: the library's
/// result and its PSF (--psf-out), the options in the report; misplaced options refused in one
/// line with nothing written.
#[test]
fn cli_blind() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let image = positive(&[33, 38]).mapv(|v| v + 0.2);
    let psf = positive(&[7, 7]).mapv(|v| v + 0.1);
    lucent::io::write_real(path("x.npy"), &image.view()).unwrap();
    lucent::io::write_real(path("p.npy"), &psf.view()).unwrap();
    let o = BlindOptions { iterations: 5, psf_iterations: 2, psf_prior: 0.25, ..Default::default() };
    let (want, want_psf) = cpu::blind_richardson_lucy(&image.view(), &psf.view(), &o).unwrap();
    for device in ["auto", "cpu"] {
        let (out, psf_out) = (path(&format!("y-{device}.npy")), path(&format!("h-{device}.npy")));
        let r = lucent_json(
            &[
                "--device",
                device,
                "deconvolve",
                &path("x.npy"),
                "--psf",
                &path("p.npy"),
                "-o",
                &out,
                "--method",
                "blind",
                "-n",
                "5",
                "--psf-iterations",
                "2",
                "--psf-prior",
                "0.25",
                "--psf-out",
                &psf_out,
            ],
            &[("LUCENT_POISON", "1")],
        );
        assert_eq!(r["options"]["method"], "blind", "{r}");
        assert_eq!(r["options"]["blind"]["psf_iterations"], 2, "{r}");
        assert_rel_l2(&lucent::io::read_real(&out).unwrap(), &want, 1e-4, &format!("{device}: image"));
        assert_rel_l2(&lucent::io::read_real(&psf_out).unwrap(), &want_psf, 1e-4, &format!("{device}: PSF"));
    }
    let base = ["deconvolve", &path("x.npy"), "--psf", &path("p.npy"), "-o", &path("bad.npy")];
    for (extra, words) in [
        (&["--method", "blind", "--accelerate"][..], "--accelerate is not available"),
        (&["--method", "blind", "--boundary", "extended"], "extended is not available"),
        (&["--method", "blind", "--tv", "0.01"], "--tv is not available"),
        (&["--psf-prior", "0.5"], "belong to --method blind"),
        (&["--method", "wiener", "--balance", "0.1", "--psf-out", &path("h.npy")], "belong to --method blind"),
        (&["--method", "blind", "--psf-prior", "-1"], "prior"),
        (&["--method", "blind", "--psf-iterations", "0"], "PSF updates"),
    ] {
        let out = lucent_cli(&[&base[..], extra].concat(), &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains(words) && stderr.trim().lines().count() == 1, "{extra:?}: {stderr}");
        assert!(!std::path::Path::new(&path("bad.npy")).exists() && !std::path::Path::new(&path("h.npy")).exists());
    }
}
