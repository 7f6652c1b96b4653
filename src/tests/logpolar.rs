//! The log-polar projector pair (ops::tomography::logpolar) on the GPU: Gaussians against their
//! exact transform, back-projection against the f64 direct reference, adjointness, sums kept,
//! FBP of the exact Shepp-Logan sinogram against the equally filtered reference, stacks,
//! odd sizes and other detector counts, the method's choice and its refusals. Outputs poisoned.

use crate::tests::common;
use common::*;

use lucent::ops::tomography::{cpu, logpolar, Filter, Geometry, Method};
use lucent::phantom::shepp_logan;
use lucent::Error;
use ndarray::{Array2, Array3, ArrayD, Axis};

fn rel(got: &ArrayD<f32>, want: &ArrayD<f64>) -> f64 {
    rel_l2(got.as_slice().unwrap(), want.as_slice().unwrap())
}

fn lp(n: usize, angles: usize, detectors: Option<usize>) -> Geometry {
    Geometry::new(n, Geometry::equally_spaced(angles), detectors, None).unwrap().with_method(Method::LogPolar)
}

/// Three Gaussians well inside the disk, as an image and as their exact sinogram.
fn gaussians(g: &Geometry) -> (Array2<f64>, Array2<f64>) {
    let n = g.size as f64 / 128.0;
    let blobs = [((10.3 * n, -20.1 * n), 6.0 * n), ((-30.0 * n, 15.0 * n), 4.0 * n), ((5.0 * n, 30.0 * n), 5.0 * n)];
    let t = g.detector_coordinates();
    blobs.iter().fold((Array2::zeros((g.size, g.size)), Array2::zeros((g.angles.len(), g.detectors))), |(i, s), &(c, sigma)| {
        (i + shepp_logan::gaussian(g.size, c, sigma), s + shepp_logan::gaussian_sinogram(c, sigma, &g.angles, &t))
    })
}

#[test]
fn gaussians_project_to_their_exact_transform() {
    for (n, angles, detectors) in [(256usize, 384usize, None), (131, 200, Some(150))] {
        let g = lp(n, angles, detectors);
        let (image, want) = gaussians(&g);
        let got = lucent::tomography::radon(poisoned_gpu(), &image.mapv(|v| v as f32), &g).unwrap().into_dyn();
        let err = rel(&got, &want.into_dyn());
        eprintln!("N = {n}: log-polar projection of Gaussians, relative L2 {err:.2e}");
        assert!(err <= 1e-3, "N = {n}: relative L2 {err}");
    }
}

#[test]
fn backprojection_matches_the_direct_reference() {
    // A smooth sinogram (the Gaussians'), where the strip model and the B-splines agree.
    let g = lp(97, 151, Some(101));
    let (_, sinogram) = gaussians(&g);
    let sinograms = Array3::from_shape_fn((2, g.angles.len(), g.detectors), |(b, a, k)| sinogram[[a, k]] * (1.0 + b as f64));
    let want = cpu::backproject(&sinograms.view(), &g);
    let got = lucent::tomography::backproject(poisoned_gpu(), &sinograms.mapv(|v| v as f32), &g).unwrap();
    // Inside the object's disk (outside it the log-polar back-projection is 0).
    let mid = (g.size as f64 - 1.0) / 2.0;
    let (mut num, mut den) = (0.0, 0.0);
    for ((b, r, c), &v) in got.indexed_iter() {
        if (r as f64 - mid).hypot(c as f64 - mid) < mid {
            num += (v as f64 - want[[b, r, c]]).powi(2);
            den += want[[b, r, c]].powi(2);
        }
    }
    let err = (num / den).sqrt();
    eprintln!("log-polar back-projection against the direct reference: relative L2 {err:.2e}");
    assert!(err <= 3e-3, "relative L2 {err}");
}

/// `x` blurred by a Gaussian of `sigma` pixels (separable, f64).
fn smoothed(x: &ArrayD<f32>, sigma: f64) -> Array2<f32> {
    let reach = (3.0 * sigma).ceil() as i64;
    let w: Vec<f64> = (-reach..=reach).map(|d| (-(d * d) as f64 / (2.0 * sigma * sigma)).exp()).collect();
    let total: f64 = w.iter().sum();
    let (h, wd) = (x.shape()[0], x.shape()[1]);
    let along = |get: &dyn Fn(i64) -> f64| -> f64 { (-reach..=reach).zip(&w).map(|(d, wt)| wt * get(d)).sum::<f64>() / total };
    let rows = Array2::from_shape_fn((h, wd), |(r, c)| along(&|d| x[[r, (c as i64 + d).clamp(0, wd as i64 - 1) as usize]] as f64));
    Array2::from_shape_fn((h, wd), |(r, c)| along(&|d| rows[[(r as i64 + d).clamp(0, h as i64 - 1) as usize, c]]) as f32)
}

#[test]
fn the_pair_is_adjoint_and_keeps_the_sum() {
    let g = lp(128, 192, None);
    let gpu = poisoned_gpu();
    // Random images and sinograms inside the disk, smoothed so that they are sampled well.
    let mid = 63.5;
    let noise = rand_array(&[128, 128]).mapv(|v| v + 1.0);
    let f = smoothed(&noise, 2.0);
    // Tapered to 0 between radii 40 and 56 (a smooth image inside the disk).
    let taper = |d: f64| {
        if d < 40.0 {
            1.0
        } else if d < 56.0 {
            (std::f64::consts::FRAC_PI_2 * (d - 40.0) / 16.0).cos().powi(2) as f32
        } else {
            0.0
        }
    };
    let f = Array2::from_shape_fn((128, 128), |(r, c)| f[[r, c]] * taper((r as f64 - mid).hypot(c as f64 - mid)));
    let s = rand_array(&[192, 128]);
    let rf = lucent::tomography::radon(gpu, &f, &g).unwrap();
    let bs = lucent::tomography::backproject(gpu, &s, &g).unwrap();
    let a: f64 = rf.iter().zip(s.iter()).map(|(&x, &y)| x as f64 * y as f64).sum();
    let b: f64 = f.iter().zip(bs.iter()).map(|(&x, &y)| x as f64 * y as f64).sum();
    let scale = (rf.iter().map(|&v| (v as f64).powi(2)).sum::<f64>() * s.iter().map(|&v| (v as f64).powi(2)).sum::<f64>()).sqrt();
    eprintln!("⟨Rf, g⟩ {a:.6e}, ⟨f, R#g⟩ {b:.6e}: {:.2e} of |Rf| |g|", (a - b).abs() / scale);
    assert!((a - b).abs() <= 1e-3 * scale, "⟨Rf, g⟩ {a} vs ⟨f, R#g⟩ {b}");
    let total: f64 = f.iter().map(|&v| v as f64).sum();
    let worst = rf.rows().into_iter().map(|row| (row.iter().map(|&v| v as f64).sum::<f64>() - total).abs() / total).fold(0.0, f64::max);
    eprintln!("projections' sums off the image's by {worst:.2e} at most");
    assert!(worst <= 1e-3, "a projection's sum is {worst} off the image's");
}

#[test]
fn fbp_of_the_exact_shepp_logan_sinogram() {
    let n = 256;
    let g = lp(n, 384, None);
    let sinogram = shepp_logan::sinogram(n, &g.angles, &g.detector_coordinates());
    let direct = g.clone().with_method(Method::Direct);
    let gpu = poisoned_gpu();
    let got = lucent::tomography::fbp(gpu, &sinogram.mapv(|v| v as f32), &g, Filter::Ramp).unwrap();
    let filtered = cpu::filter_sinograms(&sinogram.clone().insert_axis(Axis(0)).view(), Filter::Ramp, g.padded_detectors());
    let scale = std::f64::consts::PI / (2.0 * g.angles.len() as f64);
    let reference = cpu::backproject_spline(&filtered.view(), &g).index_axis_move(Axis(0), 0) * scale;
    let direct = cpu::fbp(&sinogram.clone().insert_axis(Axis(0)).view(), &direct, Filter::Ramp).index_axis_move(Axis(0), 0);
    // Inside the inscribed circle (the log-polar reconstruction is 0 beyond the object's disk).
    let mid = (n as f64 - 1.0) / 2.0;
    let phantom = shepp_logan::image(n);
    let (mut num, mut den, mut to_phantom, mut direct_to_phantom) = (0.0, 0.0, 0.0, 0.0);
    for ((r, c), &v) in got.indexed_iter() {
        if (r as f64 - mid).hypot(c as f64 - mid) < mid {
            num += (v as f64 - reference[[r, c]]).powi(2);
            den += reference[[r, c]].powi(2);
            to_phantom += (v as f64 - phantom[[r, c]]).powi(2);
            direct_to_phantom += (direct[[r, c]] - phantom[[r, c]]).powi(2);
        }
    }
    let err = (num / den).sqrt();
    eprintln!(
        "FBP, N = {n}, {} angles: log-polar against the equally filtered reference: relative L2 {err:.2e}; to the phantom {:.4} (direct {:.4})",
        g.angles.len(),
        (to_phantom / den).sqrt(),
        (direct_to_phantom / den).sqrt()
    );
    assert!(err < 0.02, "relative L2 {err}");
    assert!(to_phantom <= 1.05 * direct_to_phantom);
}

#[test]
fn the_method_is_chosen_and_refused() {
    let g = Geometry::new(256, Geometry::equally_spaced(300), None, None).unwrap();
    assert!(g.uses_logpolar().unwrap());
    assert!(!g.clone().with_method(Method::Direct).uses_logpolar().unwrap());
    assert!(!Geometry::new(64, Geometry::equally_spaced(300), None, None).unwrap().uses_logpolar().unwrap());
    // Angles not equally spaced over [0, π), a centre off the middle, too few angles: the
    // automatic choice goes direct, an explicit log-polar is refused.
    let mut uneven = Geometry::equally_spaced(300);
    uneven[7] += 1e-3;
    let half: Vec<f64> = Geometry::equally_spaced(300).iter().map(|a| a / 2.0).collect();
    for bad in [
        Geometry::new(256, uneven, None, None).unwrap(),
        Geometry::new(256, half, None, None).unwrap(),
        Geometry::new(256, Geometry::equally_spaced(300), None, Some(130.0)).unwrap(),
        Geometry::new(256, Geometry::equally_spaced(8), None, None).unwrap(),
    ] {
        assert!(!bad.uses_logpolar().unwrap());
        let forced = bad.with_method(Method::LogPolar);
        assert!(matches!(forced.uses_logpolar(), Err(Error::Invalid(_))));
        assert!(matches!(lucent::tomography::radon(gpu(), &rand_array(&[256, 256]), &forced), Err(Error::Invalid(_))));
    }
    assert!(Method::parse("fourier").is_err());
    assert_eq!(Method::parse("logpolar").unwrap(), Method::LogPolar);
    // A first angle other than 0 is equally spaced still.
    let shifted: Vec<f64> = Geometry::equally_spaced(64).iter().map(|a| a + 0.3).collect();
    assert!(logpolar::unsuitable(&Geometry::new(32, shifted, None, None).unwrap()).is_none());
}

#[test]
fn shifted_angles_and_stacks() {
    // Angles starting at 0.3 rad (the spans still cover [0, π) once), a stack of 3.
    let angles: Vec<f64> = Geometry::equally_spaced(150).iter().map(|a| a + 0.3).collect();
    let g = Geometry::new(101, angles, None, None).unwrap().with_method(Method::LogPolar);
    let (image, want) = gaussians(&g);
    let stack = Array3::from_shape_fn((3, 101, 101), |(b, r, c)| (image[[r, c]] * (b as f64 + 1.0)) as f32);
    let got = lucent::tomography::radon(poisoned_gpu(), &stack, &g).unwrap();
    for (b, slice) in got.axis_iter(Axis(0)).enumerate() {
        let err = rel(&slice.to_owned().into_dyn(), &want.mapv(|v| v * (b as f64 + 1.0)).into_dyn());
        assert!(err <= 1e-3, "slice {b}: relative L2 {err}");
    }
}

#[test]
fn fbp_off_the_detectors_middle_goes_log_polar_through_the_filter() {
    // A rotation centre 3.3 bins right of the middle: the filter shifts the projections back.
    let n = 256;
    let g = Geometry::new(n, Geometry::equally_spaced(384), None, Some(127.5 + 3.3)).unwrap();
    let (at, shift) = g.fbp_geometry();
    assert!(at.uses_logpolar().unwrap() && (shift - 3.3).abs() < 1e-12 && at.center == 127.5);
    assert_eq!(g.clone().with_method(Method::Direct).fbp_geometry().1, 0.0);
    let sinogram = shepp_logan::sinogram(n, &g.angles, &g.detector_coordinates());
    let got = lucent::tomography::fbp(poisoned_gpu(), &sinogram.mapv(|v| v as f32), &g, Filter::Hann).unwrap();
    let filtered = cpu::filter_sinograms(&sinogram.insert_axis(Axis(0)).view(), Filter::Hann, g.padded_detectors());
    let scale = std::f64::consts::PI / (2.0 * g.angles.len() as f64);
    let reference = cpu::backproject_spline(&filtered.view(), &g).index_axis_move(Axis(0), 0) * scale;
    let mid = (n as f64 - 1.0) / 2.0;
    let (mut num, mut den) = (0.0, 0.0);
    for ((r, c), &v) in got.indexed_iter() {
        if (r as f64 - mid).hypot(c as f64 - mid) < mid - 4.0 {
            num += (v as f64 - reference[[r, c]]).powi(2);
            den += reference[[r, c]].powi(2);
        }
    }
    let err = (num / den).sqrt();
    eprintln!("FBP with the centre 3.3 bins off: log-polar against the equally filtered reference {err:.2e}");
    assert!(err < 0.02, "relative L2 {err}");
}

#[test]
fn mlem_through_the_log_polar_method() {
    // Poisson counts of the Shepp-Logan phantom's projections: the KL divergence falls every
    // iteration, and the estimate is as close to the phantom as the direct pair's.
    let n = 128;
    let g = lp(n, 192, None);
    let exact = shepp_logan::sinogram(n, &g.angles, &g.detector_coordinates());
    let mut rng = lucent::phantom::Rng::new(11);
    let dose = 0.5;
    let counts = exact.mapv(|v| rng.poisson(dose * v.max(0.0)) as f32);
    let gpu = poisoned_gpu();
    let (got, kl) = lucent::tomography::mlem(gpu, &counts, &g, 20).unwrap();
    let (direct, _) = lucent::tomography::mlem(gpu, &counts, &g.clone().with_method(Method::Direct), 20).unwrap();
    assert!(kl.windows(2).all(|w| w[1] < w[0]), "KL divergence per iteration: {kl:?}");
    assert!(got.iter().all(|&v| v >= 0.0 && v.is_finite()));
    let phantom = shepp_logan::image(n).mapv(|v| v * dose);
    let mid = (n as f64 - 1.0) / 2.0;
    let error = |x: &Array2<f32>| {
        let (mut num, mut den) = (0.0, 0.0);
        for ((r, c), &v) in x.indexed_iter() {
            if (r as f64 - mid).hypot(c as f64 - mid) < mid - 2.0 {
                num += (v as f64 - phantom[[r, c]]).powi(2);
                den += phantom[[r, c]].powi(2);
            }
        }
        (num / den).sqrt()
    };
    let (ours, theirs) = (error(&got), error(&direct));
    eprintln!("MLEM, 20 iterations: to the phantom log-polar {ours:.4}, direct {theirs:.4}; KL {:.1} → {:.1}", kl[0], kl[19]);
    assert!(ours <= 1.05 * theirs, "log-polar {ours} vs direct {theirs}");
}

#[test]
fn gpu_equals_the_f64_log_polar_reference() {
    // Odd and even sizes, other detector counts, a first angle off 0, angles on the spans'
    // edges (90 angles: 15 and 75 of them), stacks of two.
    for (n, angles, detectors, first) in [(61usize, 90usize, None, 0.0), (48, 64, Some(57), 0.4)] {
        let list: Vec<f64> = Geometry::equally_spaced(angles).iter().map(|a| a + first).collect();
        let g = Geometry::new(n, list, detectors, None).unwrap().with_method(Method::LogPolar);
        // Fresh noise (the method's two devices agree on any input, smooth or not).
        let images = rand_array(&[2, n, n]).mapv(f64::from).into_dimensionality::<ndarray::Ix3>().unwrap();
        let want = cpu::logpolar::project(&images.view(), &g).into_dyn();
        let got = lucent::tomography::radon(poisoned_gpu(), &images.mapv(|v| v as f32), &g).unwrap().into_dyn();
        assert!(rel(&got, &want) <= 1e-4, "project {n}: {}", rel(&got, &want));
        let sinograms = rand_array(&[2, angles, g.detectors]).mapv(f64::from).into_dimensionality::<ndarray::Ix3>().unwrap();
        let want = cpu::logpolar::backproject(&sinograms.view(), &g).into_dyn();
        let got = lucent::tomography::backproject(poisoned_gpu(), &sinograms.mapv(|v| v as f32), &g).unwrap().into_dyn();
        assert!(rel(&got, &want) <= 1e-4, "backproject {n}: {}", rel(&got, &want));
    }
}
