//! The CLI of interpolate: the commands run on files, their reports and refusals.

use crate::common;
use common::*;
use lucent::ndimage::{self, SplineMode};
use lucent::ndimage::{cpu, AffineMap, Sampler, Sampling};
use ndarray::{ArrayD, IxDyn};

fn check(got: &ArrayD<f32>, want: &ArrayD<f64>, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}");
    let err = rel_l2(&got.iter().copied().collect::<Vec<_>>(), &want.iter().copied().collect::<Vec<_>>());
    assert!(err <= 1e-5, "{what}: relative L2 {err:e}");
    // Pointwise too: one wrong segment of a long line barely moves the L2 norm.
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let worst = got.iter().zip(want).fold(0.0f64, |m, (&g, w)| m.max((g as f64 - w).abs()));
    assert!(worst <= 1e-5 * scale, "{what}: largest error {worst:e} of values up to {scale:e}");
}

/// `lucent spline-filter` end to end, on the GPU and on the reference, every mode name.
#[test]
fn cli_spline_filter() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let x = rand_array(&[19, 6, 11]);
    lucent::io::write_real(path("x.npy"), &x.view()).unwrap();
    for name in SplineMode::NAMES {
        let want = cpu::spline_filter(&x.mapv(|v| v as f64), SplineMode::parse(name).unwrap());
        for device in ["auto", "cpu"] {
            let (input, output) = (path("x.npy"), path("c.npy"));
            let report = lucent_json(&["--device", device, "spline-filter", &input, "-o", &output, "--mode", name], &[]);
            assert_eq!(report["options"]["mode"], name, "{report}");
            check(&lucent::io::read_real(&output).unwrap(), &want, &format!("cli {name} {device}"));
        }
    }
}

/// The texture sampler's documented bound: with `bits` fraction bits in the filter's weights
/// (8 on NVIDIA; the Vulkan minimum `subTexelPrecisionBits` is 4, lavapipe's error is ~100×
/// below this), each of the rank axes' linear fetches may be off by 2^-bits of the largest
/// difference between the values it blends: the samples' range for order 1, the coefficients'
/// (at most 3× the samples', the prefilter's ℓ1 gain) for order 3. Order 0 reads texel centres:
/// exact, as the buffer path (ties aside).
fn check_texture(got: &ArrayD<f32>, want: &ArrayD<f64>, x: &ArrayD<f32>, cval: f32, order: u32, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}");
    let (lo, hi) = x.iter().fold((cval, cval), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let gain = if order == 3 { 3.0 } else { 1.0 };
    let bound = x.ndim() as f64 * (hi - lo) as f64 * gain / 256.0;
    let worst = got.iter().zip(want).fold(0.0f64, |m, (&g, w)| m.max((g as f64 - w).abs()));
    if order == 0 {
        let differ = got.iter().zip(want).filter(|(g, w)| (**g as f64 - **w).abs() > 1e-6).count();
        assert!(differ * 100 <= got.len().max(100), "{what}: {differ} of {} differ", got.len());
    } else {
        assert!(worst <= bound, "{what}: largest error {worst:e}, bound {bound:e}");
    }
}

/// `lucent resample` end to end: every transform on the GPU and on the reference against the
/// library's f64 reference, negative lists both ways, one transform at a time.
#[test]
fn cli_resample() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let x = rand_array(&[13, 17]);
    let x64 = x.mapv(|v| v as f64);
    lucent::io::write_real(path("x.npy"), &x.view()).unwrap();
    let m = ArrayD::from_shape_vec(IxDyn(&[2, 2]), vec![0.9f32, 0.2, -0.3, 1.1]).unwrap();
    lucent::io::write_real(path("m.npy"), &m.view()).unwrap();
    let c = rand_array(&[2, 5, 4]).mapv(|v| v * 30.0 + 6.0);
    lucent::io::write_real(path("c.npy"), &c.view()).unwrap();
    let how = |order, mode| Sampling { order, mode, cval: 0.0, prefilter: true, sampler: Sampler::Buffer };
    let at = |(map, out): (AffineMap, Vec<usize>)| ndimage::coordinates(&map, &out);
    let m64 = m.mapv(|v| v as f64);
    let cases: Vec<(Vec<&str>, ArrayD<f64>)> = vec![
        (vec!["--shift", "-4.7,2"], cpu::map_coordinates(&x64, &at(ndimage::shift_map(&[13, 17], &[-4.7, 2.0]).unwrap()), &how(3, SplineMode::Constant))),
        (
            vec!["--shift=-4.7,2", "--mode", "nearest"],
            cpu::map_coordinates(&x64, &at(ndimage::shift_map(&[13, 17], &[-4.7, 2.0]).unwrap()), &how(3, SplineMode::Nearest)),
        ),
        (vec!["--zoom", "1.6", "--order", "1"], cpu::map_coordinates(&x64, &at(ndimage::zoom_map(&[13, 17], &[1.6]).unwrap()), &how(1, SplineMode::Constant))),
        (
            vec!["--rotate", "-30", "--reshape", "--mode", "mirror"],
            cpu::map_coordinates(&x64, &at(ndimage::rotate_map(&[13, 17], -30.0, [1, 0], true).unwrap()), &how(3, SplineMode::Mirror)),
        ),
        (
            vec!["--affine", "M", "--offset", "0.4,-0.8", "--output-shape", "9,20", "--mode", "grid-wrap"],
            cpu::map_coordinates(&x64, &ndimage::coordinates(&AffineMap::new(&m64.view(), &[0.4, -0.8], 2).unwrap(), &[9, 20]), &how(3, SplineMode::GridWrap)),
        ),
        (vec!["--coordinates", "C", "--mode", "reflect", "--order", "0"], cpu::map_coordinates(&x64, &c.mapv(|v| v as f64), &how(0, SplineMode::Reflect))),
    ];
    for (extra, want) in cases {
        let extra: Vec<String> = extra
            .iter()
            .map(|a| match *a {
                "M" => path("m.npy"),
                "C" => path("c.npy"),
                a => a.to_string(),
            })
            .collect();
        for device in ["auto", "cpu"] {
            let (input, output) = (path("x.npy"), path("y.npy"));
            let args: Vec<&str> = ["--device", device, "resample", &input, "-o", &output].into_iter().chain(extra.iter().map(String::as_str)).collect();
            lucent_json(&args, &[]);
            let got = lucent::io::read_real(&output).unwrap();
            check(&got, &want, &format!("{extra:?} on {device}"));
        }
    }
    // The texture sampler, within its bound.
    let args = ["resample", &path("x.npy"), "-o", &path("y.npy"), "--rotate", "-30", "--sampler", "texture"];
    lucent_json(&args, &[]);
    let want = cpu::map_coordinates(&x64, &at(ndimage::rotate_map(&[13, 17], -30.0, [1, 0], false).unwrap()), &how(3, SplineMode::Constant));
    check_texture(&lucent::io::read_real(path("y.npy")).unwrap(), &want, &x, 0.0, 3, "--sampler texture");
    let refused = lucent_cli(&["resample", &path("x.npy"), "-o", &path("y.npy"), "--shift", "1", "--zoom", "2"], &[]);
    assert_eq!(refused.status.code(), Some(1), "two transforms at once");
    let refused = lucent_cli(&["resample", &path("x.npy"), "-o", &path("y.npy"), "--shift", "1", "--order", "2"], &[]);
    assert!(!refused.status.success(), "order 2");
}
