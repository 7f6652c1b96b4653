//! The CLI of interpolate: the commands run on files, their reports and refusals.

use crate::common;
use common::*;
use lucent::ndimage::{self, SplineMode};
use lucent::ndimage::{cpu, AffineMap, Sampler, Sampling};
use ndarray::{ArrayD, IxDyn};

/// `lucent spline-filter` end to end, on the GPU and on the reference, every mode name, the
/// default order (3) and the others in turn.
#[test]
fn cli_spline_filter() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let x = rand_array(&[19, 6, 11]);
    lucent::io::write_real(path("x.npy"), &x.view()).unwrap();
    for (i, name) in SplineMode::NAMES.iter().enumerate() {
        // Order 3 unless given; orders 2, 4 and 5 each with some of the modes.
        let order = [3, 2, 3, 4, 3, 5, 3, 4][i];
        let want = cpu::spline_filter(&x.mapv(|v| v as f64), order, SplineMode::parse(name).unwrap());
        for device in ["auto", "cpu"] {
            let (input, output) = (path("x.npy"), path("c.npy"));
            let given = order.to_string();
            let mut args = vec!["--device", device, "spline-filter", &input, "-o", &output, "--mode", name];
            if order != 3 {
                args.extend(["--order", given.as_str()]);
            }
            let report = lucent_json(&args, &[]);
            assert_eq!((report["options"]["mode"].as_str(), report["options"]["order"].as_u64()), (Some(*name), Some(order as u64)), "{report}");
            assert_resampled(&lucent::io::read_real(&output).unwrap(), &want, &format!("cli {name} order {order} {device}"));
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
        (
            vec!["--zoom", "1.6", "--order", "1"],
            cpu::map_coordinates(&x64, &at(ndimage::zoom_map(&[13, 17], &[1.6], false).unwrap()), &how(1, SplineMode::Constant)),
        ),
        (
            vec!["--zoom", "1.6", "--order", "4", "--mode", "grid-constant"],
            cpu::map_coordinates(&x64, &at(ndimage::zoom_map(&[13, 17], &[1.6], false).unwrap()), &how(4, SplineMode::GridConstant)),
        ),
        (
            vec!["--zoom", "1.6,0.7", "--grid-mode", "--order", "5", "--mode", "grid-wrap"],
            cpu::map_coordinates(&x64, &at(ndimage::zoom_map(&[13, 17], &[1.6, 0.7], true).unwrap()), &how(5, SplineMode::GridWrap)),
        ),
        (
            vec!["--shift=-4.7,2", "--order", "5", "--mode", "mirror"],
            cpu::map_coordinates(&x64, &at(ndimage::shift_map(&[13, 17], &[-4.7, 2.0]).unwrap()), &how(5, SplineMode::Mirror)),
        ),
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
    let refused = lucent_cli(&["resample", &path("x.npy"), "-o", &path("y.npy"), "--shift", "1", "--order", "6"], &[]);
    assert!(!refused.status.success(), "order 6");
}
