//! The CLI of interpolate: the commands run on files, their reports and refusals.

use crate::common;
use common::*;
use lucent::ndimage::{self, SplineMode};
use lucent::ndimage::{cpu, AffineMap, Sampler, Sampling};
use ndarray::{ArrayD, IxDyn};

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
            assert_resampled(&lucent::io::read_real(&output).unwrap(), &want, &format!("cli {name} {device}"));
        }
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
            assert_resampled(&got, &want, &format!("{extra:?} on {device}"));
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
