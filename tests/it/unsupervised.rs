//! Unsupervised Wiener-Hunt (lucent::restoration::unsupervised_wiener): the GPU against the f64
//! reference drawing the same numbers (chains and posterior mean), 2D and 3D, odd and even
//! sizes; the stopping rule; refusals. (Against scikit-image itself, in law: the Python suite.)

use crate::common;
use common::*;
use lucent::restoration::{cpu, unsupervised_wiener, GibbsParams};

/// The same seed draws the same numbers on the GPU and in the f64 reference, so the chains match
/// draw by draw (each draw's scale from f32 sums of the half spectrum: ~1e-6 relative, carried
/// through the chain) and the posterior means within 1e-4.
#[test]
fn gibbs_sampler_matches_the_f64_reference() {
    let gpu = poisoned_gpu();
    for (dims, psf_dims, seed) in [(vec![37usize, 41], vec![5usize, 5], 7u64), (vec![32, 30], vec![4, 3], 99), (vec![9, 14, 11], vec![3, 3, 3], 12345)] {
        let image = rand_array(&dims).mapv(|v| v + 0.5);
        let psf = rand_array(&psf_dims).mapv(|v| v.abs() + 0.1);
        let p = GibbsParams::default();
        let got = unsupervised_wiener(gpu, &image.view(), &psf.view(), &p, false, seed).unwrap();
        let want = cpu::unsupervised_wiener(&image.mapv(|v| v as f64), &psf.mapv(|v| v as f64), &p, false, seed).unwrap();
        let what = format!("{dims:?} psf {psf_dims:?}");
        assert_eq!(got.noise.len(), want.noise.len(), "{what}: iterations");
        assert!(got.noise.len() > p.min_num_iter + 1 && got.noise.len() <= p.max_num_iter + 1, "{what}: {} draws", got.noise.len());
        for (chain, (g, w)) in [("noise", (&got.noise, &want.noise)), ("prior", (&got.prior, &want.prior))] {
            for (k, (a, b)) in g.iter().zip(w.iter()).enumerate() {
                assert!((a - b).abs() <= 1e-3 * b.abs(), "{what}: {chain} draw {k}: {a} vs {b}");
            }
        }
        assert_rel_l2(&got.estimate, &want.estimate, 1e-4, &what);
        // The restoration is a deconvolution: closer to a sharpened image than the blur is.
        assert!(got.estimate.iter().all(|v| v.is_finite()));
    }
}

#[test]
fn unsupervised_refusals() {
    let gpu = gpu();
    let image = rand_array(&[16, 16]);
    let psf = rand_array(&[3, 3]).mapv(|v| v.abs() + 0.1);
    for (p, words) in [
        (GibbsParams { max_num_iter: 10, ..Default::default() }, "burnin + 2"),
        (GibbsParams { threshold: f64::NAN, ..Default::default() }, "threshold"),
        (GibbsParams { max_num_iter: 1 << 40, ..Default::default() }, "max_num_iter"),
    ] {
        let err = unsupervised_wiener(gpu, &image.view(), &psf.view(), &p, true, 1).err().expect("refused").to_string();
        assert!(err.contains(words), "{p:?}: {err}");
    }
    let err = unsupervised_wiener(gpu, &image.view(), &rand_array(&[3]).view(), &GibbsParams::default(), true, 1).err().unwrap().to_string();
    assert!(err.contains("PSF"), "{err}");
}

/// `lucent deconvolve --method unsupervised-wiener --seed S`: the library's result (the PSF
/// divided by its sum, as for every method) on the GPU and the reference's on the CPU, the
/// chains in the report; misplaced options refused.
#[test]
fn cli_unsupervised_wiener() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let image = rand_array(&[30, 36]).mapv(|v| v + 0.5);
    let psf = rand_array(&[5, 5]).mapv(|v| v.abs() + 0.1);
    lucent::io::write_real(path("x.npy"), &image.view()).unwrap();
    lucent::io::write_real(path("p.npy"), &psf.view()).unwrap();
    let total: f64 = psf.iter().map(|&v| v as f64).sum();
    let normalised = psf.mapv(|v| (v as f64 / total) as f32);
    let p = GibbsParams::default();
    let on_gpu = unsupervised_wiener(gpu(), &image.view(), &normalised.view(), &p, false, 5).unwrap();
    let on_cpu = cpu::unsupervised_wiener(&image.mapv(|v| v as f64), &normalised.mapv(|v| v as f64), &p, false, 5).unwrap();
    for (device, want) in [("auto", on_gpu.estimate.mapv(|v| v as f64)), ("cpu", on_cpu.estimate)] {
        let out = path(&format!("y-{device}.npy"));
        let r = lucent_json(
            &["--device", device, "deconvolve", &path("x.npy"), "--psf", &path("p.npy"), "-o", &out, "--method", "unsupervised-wiener", "--seed", "5"],
            &[],
        );
        assert_eq!((r["options"]["method"].as_str(), r["options"]["seed"].as_u64()), (Some("unsupervised-wiener"), Some(5)), "{r}");
        assert_eq!(r["details"]["chains"]["noise"].as_array().map(|c| c.len()), Some(on_gpu.noise.len()), "{r}");
        assert_rel_l2(&lucent::io::read_real(&out).unwrap(), &want, 1e-4, device);
    }
    let base = ["deconvolve", &path("x.npy"), "--psf", &path("p.npy"), "-o", &path("bad.npy")];
    for (extra, words) in [
        (&["--method", "unsupervised-wiener", "--balance", "0.1"][..], "estimates the balance"),
        (&["--seed", "3"], "--seed belongs"),
        (&["--method", "unsupervised-wiener", "--tv", "0.01"], "not --method unsupervised-wiener"),
    ] {
        let out = lucent_cli(&[&base[..], extra].concat(), &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains(words) && stderr.trim().lines().count() == 1, "{extra:?}: {stderr}");
        assert!(!std::path::Path::new(&path("bad.npy")).exists());
    }
}
