//! Parallel-beam tomography: the f64 reference (the projector pair adjoint, projections keeping
//! the image's sum, Gaussians against their exact transform, scikit-image's FBP filters), the GPU
//! against it (random images and angles, odd and even sizes, other detector counts and centres,
//! stacks), FBP of the exact Shepp-Logan sinogram, bad input. Outputs poisoned.

use crate::tests::common;
use common::*;

use lucent::ops::tomography::{cpu, Filter, Geometry};
use lucent::phantom::shepp_logan;
use lucent::Error;
use ndarray::{Array3, ArrayD, Axis};

fn rel_l2_of(got: &ArrayD<f32>, want: &ArrayD<f64>) -> f64 {
    rel_l2(got.as_slice().unwrap(), want.as_slice().unwrap())
}

fn random_angles(count: usize, seed: usize) -> Vec<f64> {
    random(count + seed).iter().skip(seed).map(|&v| (v as f64 + 1.0) * 1.7).collect()
}

#[test]
fn the_projector_pair_is_adjoint_and_keeps_the_sum() {
    let g = Geometry::new(23, random_angles(17, 3), Some(41), Some(19.7)).unwrap();
    let f: Array3<f64> = rand_array(&[2, 23, 23]).mapv(f64::from).into_dimensionality().unwrap();
    let s: Array3<f64> = rand_array(&[2, 17, 41]).mapv(f64::from).into_dimensionality().unwrap();
    let (a, b) = cpu::inner_products(&f.view(), &s.view(), &g);
    assert!((a - b).abs() <= 1e-12 * a.abs().max(1.0), "⟨Rf, s⟩ {a} vs ⟨f, R#s⟩ {b}");
    // Every pixel lies within the detector's reach: each projection sums to the image's sum.
    let p = cpu::project(&f.view(), &g);
    for (image, sino) in f.axis_iter(Axis(0)).zip(p.axis_iter(Axis(0))) {
        for row in sino.rows() {
            assert!((row.sum() - image.sum()).abs() <= 1e-10 * image.sum().abs());
        }
    }
}

#[test]
fn gaussians_project_to_their_exact_transform() {
    let n = 128;
    let g = Geometry::new(n, Geometry::equally_spaced(96), None, None).unwrap();
    let (centre, sigma) = ((7.3, -11.6), 12.0);
    let image = shepp_logan::gaussian(n, centre, sigma).insert_axis(Axis(0));
    let want = shepp_logan::gaussian_sinogram(centre, sigma, &g.angles, &g.detector_coordinates()).into_dyn();
    let got = cpu::project(&image.view(), &g).index_axis_move(Axis(0), 0).into_dyn();
    let err = rel_l2(got.mapv(|v| v as f32).as_slice().unwrap(), want.as_slice().unwrap());
    assert!(err <= 1e-3, "relative L2 {err}");
    // The GPU, from the same image.
    let gpu = lucent::tomography::radon(poisoned_gpu(), &image.index_axis(Axis(0), 0).mapv(|v| v as f32), &g).unwrap().into_dyn();
    assert!(rel_l2_of(&gpu, &want) <= 1e-3);
}

#[test]
fn filters_are_scikit_images() {
    // skimage.transform.radon_transform._get_fourier_filter(64, name)[[0, 1, 5, 17, 32], 0]
    // (scikit-image 0.26).
    let golden: [(Filter, [f64; 5]); 5] = [
        (Filter::Ramp, [0.006330515403, 0.030512608549, 0.156203154102, 0.531251212187, 0.993669484597]),
        (Filter::SheppLogan, [0.006330515403, 0.030500356307, 0.154639609834, 0.471705213076, 0.632589641093]),
        (Filter::Cosine, [0.006330515403, 0.030475854776, 0.151521941326, 0.356766508817, 0.0]),
        (Filter::Hamming, [0.006326895511, 0.030355840261, 0.14566159767, 0.244440284336, 0.079493558768]),
        (Filter::Hann, [0.006326580738, 0.030342208236, 0.144744940589, 0.219500203654, 0.0]),
    ];
    for (filter, want) in golden {
        let got = cpu::filter_response(filter, 64);
        for (&k, w) in [0usize, 1, 5, 17, 32].iter().zip(want) {
            assert!((got[k] - w).abs() <= 1e-10, "{filter:?} at {k}: {} vs {w}", got[k]);
        }
    }
}

#[test]
fn gpu_equals_the_reference() {
    let gpu = poisoned_gpu();
    for (n, angles, detectors, center, batch) in [(31usize, 37usize, None, None, 1usize), (24, 19, Some(37), Some(17.25), 2), (17, 5, Some(9), Some(3.5), 3)] {
        let g = Geometry::new(n, random_angles(angles, n), detectors, center).unwrap();
        let images = rand_array(&[batch, n, n]);
        let want = cpu::project(&images.mapv(f64::from).into_dimensionality().unwrap().view(), &g).into_dyn();
        let got = lucent::tomography::radon(gpu, &images, &g).unwrap();
        assert!(rel_l2_of(&got, &want) <= 1e-5, "project {n} {angles}: {}", rel_l2_of(&got, &want));
        let sinos = rand_array(&[batch, angles, g.detectors]);
        let want = cpu::backproject(&sinos.mapv(f64::from).into_dimensionality().unwrap().view(), &g).into_dyn();
        let got = lucent::tomography::backproject(gpu, &sinos, &g).unwrap();
        assert!(rel_l2_of(&got, &want) <= 1e-5, "backproject {n} {angles}: {}", rel_l2_of(&got, &want));
        for filter in [Filter::Ramp, Filter::SheppLogan, Filter::Cosine, Filter::Hamming, Filter::Hann] {
            let want = cpu::fbp(&sinos.mapv(f64::from).into_dimensionality().unwrap().view(), &g, filter).into_dyn();
            let got = lucent::tomography::fbp(gpu, &sinos, &g, filter).unwrap();
            assert!(rel_l2_of(&got, &want) <= 1e-5, "fbp {filter:?} {n}: {}", rel_l2_of(&got, &want));
        }
    }
    // A single slice keeps two axes.
    let g = Geometry::new(12, Geometry::equally_spaced(8), None, None).unwrap();
    let got = lucent::tomography::radon(gpu, &rand_array(&[12, 12]), &g).unwrap();
    assert_eq!(got.shape(), [8, 12]);
}

#[test]
fn fbp_of_the_exact_shepp_logan_sinogram() {
    let n = 128;
    let g = Geometry::new(n, Geometry::equally_spaced(192), None, None).unwrap();
    let sinogram = shepp_logan::sinogram(n, &g.angles, &g.detector_coordinates());
    let phantom = shepp_logan::image(n);
    let got = lucent::tomography::fbp(gpu(), &sinogram.mapv(|v| v as f32), &g, Filter::Ramp).unwrap();
    let reference = cpu::fbp(&sinogram.clone().insert_axis(Axis(0)).view(), &g, Filter::Ramp).index_axis_move(Axis(0), 0);
    assert!(rel_l2_of(&got.clone().into_dyn(), &reference.clone().into_dyn()) <= 1e-5);
    // Against the phantom inside its outer ellipse (edges blur by a pixel or so).
    let inside = |r: usize, c: usize| {
        let (x, y) = g.pixel_centre(r, c);
        (x / (0.6 * n as f64 / 2.0)).powi(2) + (y / (0.85 * n as f64 / 2.0)).powi(2) < 1.0
    };
    let (mut num, mut den) = (0.0, 0.0);
    for ((r, c), &v) in got.indexed_iter() {
        if inside(r, c) {
            num += (v as f64 - phantom[[r, c]]).powi(2);
            den += phantom[[r, c]].powi(2);
        }
    }
    let err = (num / den).sqrt();
    eprintln!("FBP of the exact sinogram inside the skull: relative L2 {err}");
    // 0.070 measured (N = 128, 192 angles, ramp).
    assert!(err < 0.1, "relative L2 {err}");
}

#[test]
fn bad_input_is_refused() {
    assert!(matches!(Geometry::new(16, vec![0.1, f64::NAN], None, None), Err(Error::NonFinite(_))));
    assert!(matches!(Geometry::new(16, vec![], None, None), Err(Error::Invalid(_))));
    assert!(matches!(Geometry::new(0, vec![0.0], None, None), Err(Error::Invalid(_))));
    assert!(matches!(Geometry::new(16, vec![0.0], None, Some(f64::INFINITY)), Err(Error::NonFinite(_))));
    let gpu = gpu();
    let g = Geometry::new(16, Geometry::equally_spaced(10), None, None).unwrap();
    assert!(matches!(lucent::tomography::radon(gpu, &rand_array(&[16, 15]), &g), Err(Error::Shape(_))));
    assert!(matches!(lucent::tomography::radon(gpu, &rand_array(&[2, 2, 16, 16]), &g), Err(Error::Shape(_))));
    assert!(matches!(lucent::tomography::backproject(gpu, &rand_array(&[9, 16]), &g), Err(Error::Shape(_))));
    assert!(matches!(lucent::tomography::fbp(gpu, &rand_array(&[10, 15]), &g, Filter::Ramp), Err(Error::Shape(_))));
    let mut nan = rand_array(&[16, 16]);
    nan[[3, 3]] = f32::NAN;
    assert!(matches!(lucent::tomography::radon(gpu, &nan, &g), Err(Error::NonFinite(_))));
    let mut stack = rand_array(&[3, 16, 16]);
    stack[[2, 3, 4]] = f32::INFINITY;
    match lucent::tomography::radon(gpu, &stack, &g) {
        Err(Error::NonFinite(m)) => assert!(m.contains("[2, 3, 4]"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert!(Filter::parse("butterworth").is_err());
}

#[test]
fn mlem_equals_the_reference_and_its_kl_divergence_falls() {
    // Poisson counts of the Shepp-Logan phantom's projections (mean ~50 where it is dense).
    let n = 32;
    let g = Geometry::new(n, Geometry::equally_spaced(40), None, None).unwrap();
    let exact = shepp_logan::sinogram(n, &g.angles, &g.detector_coordinates());
    let mut rng = lucent::phantom::Rng::new(5);
    let counts = exact.mapv(|v| rng.poisson(2.0 * v.max(0.0)) as f32);
    let iterations = 12;
    let (got, kl) = lucent::tomography::mlem(poisoned_gpu(), &counts, &g, iterations).unwrap();
    let (want, want_kl) = cpu::mlem(&counts.mapv(f64::from).insert_axis(Axis(0)).view(), &g, iterations, lucent::tomography::EM_EPSILON as f64);
    let want = want.index_axis_move(Axis(0), 0);
    assert!(rel_l2_of(&got.clone().into_dyn(), &want.clone().into_dyn()) <= 1e-4, "estimate: {}", rel_l2_of(&got.into_dyn(), &want.into_dyn()));
    for (i, (a, b)) in kl.iter().zip(&want_kl).enumerate() {
        assert!((a - b).abs() <= 1e-4 * b.abs().max(1.0), "iteration {i}: KL {a} vs {b}");
    }
    assert!(kl.windows(2).all(|w| w[1] < w[0]), "KL divergence per iteration: {kl:?}");
    // Bad input.
    let mut negative = counts.clone();
    negative[[3, 3]] = -1.0;
    assert!(matches!(lucent::tomography::mlem(gpu(), &negative, &g, 3), Err(Error::Invalid(_))));
    assert!(matches!(lucent::tomography::mlem(gpu(), &counts, &g, 0), Err(Error::Invalid(_))));
}

/// A long EM run goes in several submissions, each recorded while the one before it runs
/// (memory stays flat with the iteration count): the estimate and KL divergences equal those of
/// one recording of every iteration.
#[test]
fn long_mlem_runs_in_recordings_equal_to_one() {
    let n = 12;
    let g = Geometry::new(n, Geometry::equally_spaced(14), None, None).unwrap();
    let exact = shepp_logan::sinogram(n, &g.angles, &g.detector_coordinates());
    let mut rng = lucent::phantom::Rng::new(8);
    let counts = exact.mapv(|v| rng.poisson(3.0 * v.max(0.0)) as f32);
    let iterations = 300;
    let (got, kl) = lucent::tomography::mlem(gpu(), &counts, &g, iterations).unwrap();
    let mut rec = lucent::Recording::new(gpu());
    let b = rec.upload_once_f32(&counts.view().into_dyn()).unwrap();
    let run = lucent::tomography::record_mlem(&mut rec, b, &g, iterations).unwrap();
    let d = rec.download(run.estimate);
    let last = run.sums.last().copied().unwrap();
    let (q, t) = (rec.download(last.0), rec.download(last.1));
    let results = rec.run().unwrap();
    let want = results.f32(d).unwrap();
    assert_eq!(kl.len(), iterations);
    assert!(rel_l2_of(&got.clone().into_dyn(), &want.mapv(f64::from)) <= 1e-6, "{}", rel_l2_of(&got.into_dyn(), &want.mapv(f64::from)));
    let counts_sum: f64 = counts.iter().map(|&v| v as f64).sum();
    let want_kl = lucent::tomography::kl_divergence(
        results.f32(q).unwrap().iter().next().copied().unwrap() as f64,
        results.f32(t).unwrap().iter().next().copied().unwrap() as f64,
        counts_sum,
    );
    assert!((kl[iterations - 1] - want_kl).abs() <= 1e-6 * want_kl.abs().max(1.0), "{} vs {want_kl}", kl[iterations - 1]);
}

#[test]
fn find_center_finds_a_shifted_rotation_axis() {
    let n = 64;
    for shift in [3.3, -5.6] {
        let true_centre = (n as f64 - 1.0) / 2.0 + shift;
        let taken = Geometry::new(n, Geometry::equally_spaced(96), None, Some(true_centre)).unwrap();
        let sinogram = lucent::tomography::radon(gpu(), &shepp_logan::image(n).mapv(|v| v as f32), &taken).unwrap();
        let g = Geometry::new(n, Geometry::equally_spaced(96), None, None).unwrap();
        let (found, scores) = lucent::tomography::find_center(gpu(), &sinogram.view(), &g, 8.0).unwrap();
        assert!((found - true_centre).abs() <= 0.25, "found {found}, true {true_centre}");
        assert!(scores.len() > 30);
        // The f64 reference's search agrees.
        let s = sinogram.mapv(f64::from).insert_axis(Axis(0));
        let (cpu_found, _) = lucent::ops::tomography::find_center(&g, 8.0, |centres| {
            Ok(centres
                .iter()
                .map(|&c| cpu::fbp(&s.view(), &Geometry { center: c, ..g.clone() }, Filter::Ramp).index_axis_move(Axis(0), 0).mapv(|v| v as f32).into_dyn())
                .collect())
        })
        .unwrap();
        assert!((cpu_found - found).abs() <= 0.1, "GPU {found}, CPU {cpu_found}");
    }
    let g = Geometry::new(16, Geometry::equally_spaced(8), None, None).unwrap();
    assert!(lucent::tomography::find_center(gpu(), &rand_array(&[8, 16]).into_dimensionality().unwrap().view(), &g, 0.0).is_err());
}

#[test]
fn stacks_beyond_the_budget_go_in_batches_of_slices() {
    // A device budget of 64 KiB: each submission takes one or two slices of the stack.
    let small = open(lucent::gpu::GpuOptions { device_memory_bytes: Some(64 << 10), poison: true, ..lucent::gpu::GpuOptions::from_env().unwrap() });
    let g = Geometry::new(12, Geometry::equally_spaced(10), None, None).unwrap();
    let images = rand_array(&[5, 12, 12]);
    let whole = lucent::tomography::radon(gpu(), &images, &g).unwrap();
    let mut reports = Vec::new();
    let batched = lucent::tomography::apply(&small, lucent::tomography::Operation::Radon, &images, &g, &mut |p| reports.push((p.done, p.total))).unwrap();
    assert_eq!(whole, batched);
    assert!(reports.len() >= 3 && reports.windows(2).all(|w| w[0].0 < w[1].0) && reports.last() == Some(&(5, 5)), "{reports:?}");
    let sinos = rand_array(&[5, 10, 12]).mapv(|v| v + 1.0);
    for (a, b) in [
        (lucent::tomography::fbp(gpu(), &sinos, &g, Filter::Hann).unwrap(), lucent::tomography::fbp(&small, &sinos, &g, Filter::Hann).unwrap()),
        (lucent::tomography::backproject(gpu(), &sinos, &g).unwrap(), lucent::tomography::backproject(&small, &sinos, &g).unwrap()),
    ] {
        assert!(rel_l2_of(&b, &a.mapv(f64::from)) <= 1e-6);
    }
    let (a, kl_a) = lucent::tomography::mlem(gpu(), &sinos, &g, 4).unwrap();
    let mut reports = Vec::new();
    let (b, kl_b) = lucent::tomography::mlem_with(&small, &sinos, &g, 4, &mut |p| reports.push((p.done, p.total))).unwrap();
    assert!(reports.len() >= 3 && reports.last() == Some(&(5, 5)), "{reports:?}");
    assert!(rel_l2_of(&b, &a.mapv(f64::from)) <= 1e-6);
    assert!(kl_a.iter().zip(&kl_b).all(|(x, y)| (x - y).abs() <= 1e-5 * x.abs()), "{kl_a:?} vs {kl_b:?}");
}
