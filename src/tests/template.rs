//! Template matching (scikit-image's `match_template`): the f64 reference against scikit-image
//! 0.26's printed values (its docstring example; 2D and 3D cases in every pad mode), the GPU
//! against the reference on random awkward shapes (1-3 axes, odd and even templates, both
//! `pad_input`s, every mode) within 1e-4 (or, on windows of tiny contrast, the f32
//! correlation's rounding bound), the double-single window sums to 1e-12, flat windows and
//! templates, a template found where it was put, top-k peaks, the CLI, bad input. Temporaries
//! poisoned.

use crate::tests::common;
use common::*;

use lucent::kernels::window_sum;
use lucent::ops::registration::template::{self, PadMode, TemplateMatch};
use lucent::Error;
use ndarray::{ArrayD, Dimension, IxDyn};

fn f(dims: &[usize], v: impl Fn(&[usize]) -> f64) -> ArrayD<f64> {
    ArrayD::from_shape_fn(IxDyn(dims), |i| v(i.as_array_view().as_slice().unwrap()))
}

fn to32(x: &ArrayD<f64>) -> ArrayD<f32> {
    x.mapv(|v| v as f32)
}

fn gpu_match(image: &ArrayD<f64>, t: &ArrayD<f64>, how: &TemplateMatch) -> ArrayD<f32> {
    template::match_template(poisoned_gpu(), &to32(image).view(), &to32(t).view(), how).unwrap()
}

/// The response's error bound in f32: 1e-4, and where a window's contrast is tiny against the
/// data's scale, the correlation's rounding over the denominator (the numerator cancels there,
/// whatever the window sums' precision): 64 ε (a conservative multiple: the worst seen was 20)
/// of the window's Σ|x - mean|·|t - mean(t)| (a direct sum's rounding) plus an FFT's norm-wise
/// share, log2(N) ‖x - mean‖·‖t - mean(t)‖ / √N. It exceeds 1e-4 only on windows of tiny
/// contrast, whose coefficient hangs on a difference f32 cannot resolve.
fn f32_bound(image: &ArrayD<f64>, t: &ArrayD<f64>, how: &TemplateMatch) -> ArrayD<f64> {
    let mean = image.mean().unwrap();
    let centred = image.mapv(|v| v - mean);
    let tmean = t.mean().unwrap();
    let tssd: f64 = t.iter().map(|v| (v - tmean).powi(2)).sum();
    let m = t.shape();
    let pads: Vec<(usize, usize)> = m.iter().map(|&m| if how.pad_input { (m / 2, m - 1 - m / 2) } else { (0, 0) }).collect();
    let fill = match how.mode {
        PadMode::Constant(c) => c as f64 - mean,
        _ => 0.0,
    };
    let q = lucent::ops::layout::cpu::pad(&centred, &pads, how.mode.boundary(mean as f32), fill);
    let out = template::output_dims(image.shape(), m, how.pad_input);
    let n = q.len() as f64;
    let fft = n.log2().max(1.0) * q.iter().map(|v| v * v).sum::<f64>().sqrt() * tssd.sqrt() / n.sqrt();
    ArrayD::from_shape_fn(IxDyn(&out), |o| {
        let (mut rounding, mut s1, mut s2) = (0.0, 0.0, 0.0);
        for (j, &tv) in t.indexed_iter() {
            let at: Vec<usize> = (0..m.len()).map(|d| o[d] + j[d]).collect();
            let v = q[IxDyn(&at)];
            rounding += (v * (tv - tmean)).abs();
            s1 += v;
            s2 += v * v;
        }
        let den = ((s2 - s1 * s1 / t.len() as f64) * tssd).max(0.0).sqrt();
        1e-4 + if den > 0.0 { 64.0 * f32::EPSILON as f64 * (rounding + fft) / den } else { 0.0 }
    })
}

fn max_abs_diff(got: &ArrayD<f32>, want: &ArrayD<f64>) -> f64 {
    assert_eq!(got.shape(), want.shape());
    got.iter().zip(want).map(|(&g, &w)| if g.is_nan() { f64::INFINITY } else { (g as f64 - w).abs() }).fold(0.0, f64::max)
}

#[test]
fn docstring_example() {
    let mut image = ArrayD::zeros(IxDyn(&[6, 6]));
    image[[1, 1]] = 1.0;
    image[[4, 4]] = -1.0;
    let mut t = ArrayD::zeros(IxDyn(&[3, 3]));
    t[[1, 1]] = 1.0;
    let valid = [[1.0, -0.125, 0.0, 0.0], [-0.125, -0.125, 0.0, 0.0], [0.0, 0.0, 0.125, 0.125], [0.0, 0.0, 0.125, -1.0]];
    let padded = [
        [-0.125, -0.125, -0.125, 0.0, 0.0, 0.0],
        [-0.125, 1.0, -0.125, 0.0, 0.0, 0.0],
        [-0.125, -0.125, -0.125, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 0.125, 0.125, 0.125],
        [0.0, 0.0, 0.0, 0.125, -1.0, 0.125],
        [0.0, 0.0, 0.0, 0.125, 0.125, 0.125],
    ];
    for (pad_input, want) in [(false, valid.iter().flatten().copied().collect::<Vec<f64>>()), (true, padded.iter().flatten().copied().collect())] {
        let how = TemplateMatch { pad_input, ..Default::default() };
        let r = template::match_template_reference(&image, &t, &how).unwrap();
        let g = gpu_match(&image, &t, &how);
        for ((&r, &g), &w) in r.iter().zip(&g).zip(&want) {
            assert!((r - w).abs() < 5e-4 && (g as f64 - w).abs() < 5e-4, "pad_input {pad_input}: {r} / {g} vs {w}");
        }
    }
}

#[test]
fn reference_equals_scikit_image() {
    let image = f(&[9, 11], |i| (0.37 * i[0] as f64 + 0.11 * (i[1] * i[1]) as f64).sin() + (0.23 * (i[0] * i[1]) as f64).cos() + 0.05 * i[0] as f64);
    let t = f(&[4, 3], |i| (0.5 * i[0] as f64 + 0.9 * i[1] as f64).sin() + 0.1 * (i[0] * i[1]) as f64);
    // scikit-image 0.26: (pad_input, mode, probes (index, value), sum of the response).
    type Case = (bool, PadMode, [(&'static [usize], f64); 4], f64);
    let cases: [Case; 6] = [
        (
            false,
            PadMode::Constant(0.0),
            [(&[0, 0], 0.6913176614415073), (&[2, 5], 0.10321098587549309), (&[5, 8], -0.2235887023962541), (&[4, 7], -0.2800336302635908)],
            -5.0776887902948475,
        ),
        (
            true,
            PadMode::Constant(0.75),
            [(&[0, 0], -0.05136459834986873), (&[2, 5], -0.45594197911699696), (&[8, 10], 0.37761419309311367), (&[4, 7], 0.7589874052693334)],
            0.37872469734717007,
        ),
        (
            true,
            PadMode::Edge,
            [(&[0, 0], 0.050417447129053924), (&[2, 5], -0.45594197911699497), (&[8, 10], 0.11157278186965386), (&[4, 7], 0.7589874052693347)],
            -2.6723983484311646,
        ),
        (
            true,
            PadMode::Reflect,
            [(&[0, 0], -0.39949731357018126), (&[2, 5], -0.4559419791169967), (&[8, 10], 0.27141711939004637), (&[4, 7], 0.7589874052693336)],
            -2.275305136291089,
        ),
        (
            true,
            PadMode::Symmetric,
            [(&[0, 0], -0.28003398628974285), (&[2, 5], -0.4559419791169966), (&[8, 10], 0.11157278186965386), (&[4, 7], 0.7589874052693345)],
            -3.050685431857784,
        ),
        (
            true,
            PadMode::Wrap,
            [(&[0, 0], -0.14038925416122164), (&[2, 5], -0.4559419791169957), (&[8, 10], 0.3764459666071838), (&[4, 7], 0.7589874052693328)],
            0.0814768266510551,
        ),
    ];
    for (pad_input, mode, probes, sum) in cases {
        let how = TemplateMatch { pad_input, mode };
        let r = template::match_template_reference(&image, &t, &how).unwrap();
        for (at, want) in probes {
            assert!((r[IxDyn(at)] - want).abs() < 1e-12, "{how:?} at {at:?}: {} vs {want}", r[IxDyn(at)]);
        }
        assert!((r.sum() - sum).abs() < 1e-10, "{how:?}: sum {} vs {sum}", r.sum());
        let g = gpu_match(&image, &t, &how);
        assert!(max_abs_diff(&g, &r) <= 1e-4, "{how:?}: GPU {:e}", max_abs_diff(&g, &r));
    }
    let image = f(&[7, 8, 6], |i| (0.41 * i[0] as f64 + 0.3 * (i[1] * i[2]) as f64).sin() + (0.17 * (i[0] * i[1]) as f64 + 0.5 * i[2] as f64).cos());
    let t = f(&[3, 2, 4], |i| (0.7 * i[0] as f64 - 0.4 * (i[1] * i[2]) as f64).cos() + 0.2 * i[2] as f64);
    type Case3 = (bool, PadMode, [(&'static [usize], f64); 3], f64);
    let cases: [Case3; 2] = [
        (
            false,
            PadMode::Constant(0.0),
            [(&[0, 0, 0], -0.7734075518935171), (&[2, 3, 1], -0.15284725392746001), (&[4, 6, 2], -0.11911313133846854)],
            -18.56301896273052,
        ),
        (
            true,
            PadMode::Symmetric,
            [(&[0, 0, 0], -0.4888553454340276), (&[2, 3, 1], -0.33831102436725663), (&[6, 7, 5], -0.22073209646318806)],
            -65.08983893159193,
        ),
    ];
    for (pad_input, mode, probes, sum) in cases {
        let how = TemplateMatch { pad_input, mode };
        let r = template::match_template_reference(&image, &t, &how).unwrap();
        for (at, want) in probes {
            assert!((r[IxDyn(at)] - want).abs() < 1e-12, "3D {how:?} at {at:?}");
        }
        assert!((r.sum() - sum).abs() < 1e-10, "3D {how:?}: sum");
        assert!(max_abs_diff(&gpu_match(&image, &t, &how), &r) <= 1e-4, "3D {how:?}: GPU");
    }
}

#[test]
fn gpu_matches_the_reference_on_random_shapes() {
    let cases: &[(&[usize], &[usize])] = &[(&[61, 47], &[9, 6]), (&[23, 19, 17], &[5, 4, 3]), (&[101], &[8]), (&[37, 30], &[37, 1]), (&[40, 33], &[3, 2])];
    let modes = [PadMode::Constant(0.0), PadMode::Constant(-2.5), PadMode::Edge, PadMode::Reflect, PadMode::Symmetric, PadMode::Wrap];
    for &(dims, tdims) in cases {
        // An offset and a slope, so the window means vary (the centring must not lose them).
        let image = rand_array(dims).mapv(|v| v as f64) + f(dims, |i| 3.0 + 0.01 * i[0] as f64);
        let t = rand_array(tdims).mapv(|v| v as f64);
        for pad_input in [false, true] {
            for mode in if pad_input { &modes[..] } else { &modes[..1] } {
                let how = TemplateMatch { pad_input, mode: *mode };
                let want = template::match_template_reference(&image, &t, &how).unwrap();
                let got = gpu_match(&image, &t, &how);
                let bound = f32_bound(&image, &t, &how);
                for ((g, w), b) in got.iter().zip(&want).zip(&bound) {
                    assert!((*g as f64 - w).abs() <= *b, "{dims:?} template {tdims:?} {how:?}: {g} vs {w} (bound {b:e})");
                }
                assert!(got.iter().all(|v| v.abs() <= 1.0));
            }
        }
    }
}

#[test]
fn a_padding_constant_far_from_the_image_is_summed_directly_or_refused() {
    // Values near 3 padded with a constant thousands of spreads away: through an FFT the
    // padding's rounding drowned the windows inside the image; 1e8 gave a false perfect match.
    let image = rand_array(&[29, 37]).mapv(|v| v as f64) + 3.0;
    let t = rand_array(&[6, 7]).mapv(|v| v as f64);
    for c in [2003.0f32, -1500.0] {
        let how = TemplateMatch { pad_input: true, mode: PadMode::Constant(c) };
        let want = template::match_template_reference(&image, &t, &how).unwrap();
        let worst = max_abs_diff(&gpu_match(&image, &t, &how), &want);
        assert!(worst <= 1e-4, "cval {c}: {worst}");
    }
    for c in [1e8f32, -3e6] {
        let how = TemplateMatch { pad_input: true, mode: PadMode::Constant(c) };
        let refused = template::match_template(poisoned_gpu(), &to32(&image).view(), &to32(&t).view(), &how);
        assert!(matches!(&refused, Err(Error::Invalid(m)) if m.contains("nearer constant")), "cval {c}: {refused:?}");
    }
}

#[test]
fn flat_windows_and_templates_give_zero() {
    // A flat region (value 5) wider than the template: its windows give 0, as scikit-image.
    let mut image = rand_array(&[30, 28]).mapv(|v| v as f64);
    for i in 5..20 {
        for j in 4..18 {
            image[[i, j]] = 5.0;
        }
    }
    let t = rand_array(&[5, 4]).mapv(|v| v as f64);
    let how = TemplateMatch::default();
    let want = template::match_template_reference(&image, &t, &how).unwrap();
    let got = gpu_match(&image, &t, &how);
    for i in 5..=15 {
        for j in 4..=14 {
            assert_eq!((want[[i, j]], got[[i, j]]), (0.0, 0.0), "flat window at ({i}, {j})");
        }
    }
    assert!(max_abs_diff(&got, &want) <= 1e-4);
    let flat = ArrayD::from_elem(IxDyn(&[5, 4]), 2.0);
    assert!(gpu_match(&image, &flat, &how).iter().all(|&v| v == 0.0));
    assert!(template::match_template_reference(&image, &flat, &how).unwrap().iter().all(|&v| v == 0.0));
}

#[test]
fn finds_the_template_and_its_copies() {
    let mut image = rand_array(&[90, 70]).mapv(|v| v as f64 * 0.3);
    let t = f(&[9, 7], |i| ((i[0] * 7 + i[1]) as f64 * 0.9).sin());
    let places = [[12usize, 40usize], [50, 5], [70, 55]];
    for p in places {
        for ((a, b), &v) in t.indexed_iter().map(|(i, v)| ((i[0], i[1]), v)) {
            image[[p[0] + a, p[1] + b]] = v;
        }
    }
    let got = gpu_match(&image, &t, &TemplateMatch::default());
    let mut found: Vec<Vec<usize>> = template::peaks(&got.view(), 3, 5)
        .into_iter()
        .map(|(at, v)| {
            assert!(v > 0.999, "{at:?}: {v}");
            at
        })
        .collect();
    found.sort();
    assert_eq!(found, places.iter().map(|p| p.to_vec()).collect::<Vec<_>>());
    // With pad_input the peak is at the template's centre.
    let padded = gpu_match(&image, &t, &TemplateMatch { pad_input: true, ..Default::default() });
    let (best, _) = template::peaks(&padded.view(), 1, 1).remove(0);
    assert!(places.iter().any(|p| best == vec![p[0] + 4, p[1] + 3]), "{best:?}");
    // Peaks at least min_distance apart, highest first.
    let many = template::peaks(&got.view(), 10, 8);
    assert!(many.windows(2).all(|w| w[0].1 >= w[1].1));
    for (i, (a, _)) in many.iter().enumerate() {
        for (b, _) in &many[..i] {
            assert!(a.iter().zip(b).any(|(x, y)| x.abs_diff(*y) >= 8), "{a:?} {b:?}");
        }
    }
}

#[test]
fn bad_input_is_an_error() {
    let gpu = gpu();
    let image = rand_array(&[20, 20]);
    let how = TemplateMatch::default();
    let bad = |r: Result<ArrayD<f32>, Error>| assert!(matches!(r, Err(Error::Shape(_) | Error::Invalid(_) | Error::NonFinite(_))), "{r:?}");
    bad(template::match_template(gpu, &image.view(), &rand_array(&[21, 3]).view(), &how));
    bad(template::match_template(gpu, &image.view(), &rand_array(&[3, 3, 1]).view(), &how));
    let mut nan = rand_array(&[3, 3]);
    nan[[1, 1]] = f32::NAN;
    bad(template::match_template(gpu, &image.view(), &nan.view(), &how));
    let mut inf = image.clone();
    inf[[4, 2]] = f32::INFINITY;
    bad(template::match_template(gpu, &inf.view(), &rand_array(&[3, 3]).view(), &how));
    assert!(PadMode::parse("median", 0.0).is_err() && PadMode::parse("edge", 1.0).is_err() && PadMode::parse("constant", f32::NAN).is_err());
    assert_eq!(PadMode::parse("constant", 0.5).unwrap(), PadMode::Constant(0.5));
}

#[test]
fn window_sums_in_double_single_keep_48_bits() {
    // Values 1000 + [0, 1): f32 sums of a window would keep ~7 digits, the pairs keep ~14. Outputs
    // along axes 0 and 2 span several of the kernel's runs of 32, the last one partial.
    let x = rand_array(&[77, 23, 71]).mapv(|v| v + 1000.5);
    let gpu = poisoned_gpu();
    for (axis, m) in [(0usize, 9usize), (1, 23), (2, 4)] {
        for squares in [false, true] {
            let mut rec = lucent::Recording::new(gpu);
            let b = rec.upload_f32(&x.view()).unwrap();
            let input = if squares { window_sum::Input::Squares(b) } else { window_sum::Input::Values(b) };
            let (hi, lo) = window_sum::record(&mut rec, input, axis, m).unwrap();
            let (dh, dl) = (rec.download(hi), rec.download(lo));
            let r = rec.run().unwrap();
            let (hi, lo) = (r.f32(dh).unwrap(), r.f32(dl).unwrap());
            let mut out = x.shape().to_vec();
            out[axis] -= m - 1;
            assert_eq!(hi.shape(), out.as_slice());
            for (at, &h) in hi.indexed_iter() {
                let want: f64 = (0..m)
                    .map(|j| {
                        let mut i = at.as_array_view().to_vec();
                        i[axis] += j;
                        let v = x[IxDyn(&i)] as f64;
                        if squares {
                            v * v
                        } else {
                            v
                        }
                    })
                    .sum();
                let got = h as f64 + lo[&at] as f64;
                assert!((got - want).abs() <= 1e-12 * want.abs(), "axis {axis} squares {squares} at {at:?}: {got} vs {want}");
            }
        }
    }
}

/// The normalised correlation is invariant to the image's and the template's scales: data far
/// from 1 in magnitude gives the response of data near 1 (an image ×1e19 gave an all-zero map,
/// a template ×3e38 a response of −1 where +1 was right).
#[test]
fn images_and_templates_of_any_magnitude_match_as_near_one() {
    let image = rand_array(&[31, 26]);
    let template = image.slice(ndarray::s![9..16, 4..12]).to_owned().into_dyn();
    let gpu = gpu();
    for how in [TemplateMatch::default(), TemplateMatch { pad_input: true, mode: PadMode::Constant(0.5) }] {
        let want = template::match_template(gpu, &image.view(), &template.view(), &how).unwrap();
        for (image_factor, template_factor) in [(1e19f32, 1.0f32), (1.0, 3e38 / 2.0), (1e-12, 1e-9)] {
            let scaled_how = match how.mode {
                PadMode::Constant(c) => TemplateMatch { mode: PadMode::Constant(c * image_factor), ..how },
                _ => how,
            };
            let (i, t) = (image.mapv(|v| v * image_factor), template.mapv(|v| v * template_factor));
            let got = template::match_template(gpu, &i.view(), &t.view(), &scaled_how).unwrap();
            let e = rel_l2(got.as_slice().unwrap(), to64(&want).as_slice().unwrap());
            assert!(e < 1e-4, "image ×{image_factor}, template ×{template_factor}, {how:?}: relative L2 {e:e}");
        }
    }
}
