//! The CLI of interpolate: the commands run on files, their reports and refusals.

use lucent::ndimage::{cpu, AffineMap, Sampler, Sampling};
use crate::common;
use common::*;
use lucent::ndimage::{self, SplineMode};
use ndarray::{ArrayD, IxDyn};
const MODES: [SplineMode; 7] =
    [SplineMode::Mirror, SplineMode::Reflect, SplineMode::Nearest, SplineMode::Wrap, SplineMode::GridWrap, SplineMode::Constant, SplineMode::GridConstant];
const FS_A: &[(f64, f64)] = &[(-0.8019314252534474, -1.2894187467538587), (1.2531465693283224, -0.4289271703765991), (-0.22319745288345944, 0.11533309035388394), (-0.4933459228867795, -0.1612621010697683), (1.5350366963809254, -0.18003895378281032), (-0.22676653107749617, 0.3428982537074422), (-1.0544744010256344, 0.620081906004255), (0.9711443084244307, -1.2285559344771193), (-0.3040681328416974, -0.7202023502465341), (-0.5524957202267116, 1.8968187476339562), (1.134270498262186, 0.39676971442008313), (-0.3873583706570414, -1.3727894794004687), (1.2011018242047486, 1.8619608343013658), (1.563607393421285, -0.4350254314032229), (0.606281994778653, 0.9419994453090177), (-1.2098255698754046, -1.2400427342125957), (0.09436340558849654, 0.0020859418457195023), (-0.7700274557510831, -2.1711760420129127), (0.5950703697903316, 0.31045262911820126), (-0.5272921708277563, -0.15981611401600634), (0.16163398182272992, -1.186648829829569), (1.3019018411900158, -0.08423709032560733), (0.5512121395883037, -0.49482406974590654), (-0.06541350334202783, -1.2453479093901008), (0.3049157938509993, 0.4296314271472249), (-1.0204447809904185, -0.5947666991728197), (-2.1035802309609855, -0.6109814714015905), (0.08769938911659422, 0.6173210685722946), (-1.248530203705498, -2.3057234596144154), (0.5330960654799202, 0.3973008363960576)];
const FS_R: &[(f64, f64)] = &[(2.151673261299335, 0.0), (0.5565242490590827, 0.311427162119909), (2.318021014890125, -1.8372081957782689), (-0.9929073265817611, 0.9377307797590969), (-0.44884577741163184, 0.0), (-0.20351465009921682, -0.5250950004625806), (0.3277647007403803, -1.9488790240458245), (0.025890726604138208, -0.6206243366990211), (-3.2509779770885774, 0.0), (0.11255149840768197, 2.0514464700250885), (2.61113964594293, -1.8041491252515247), (2.0370384953567298, 1.678003325461292), (-3.9469619448778253, 0.0), (0.0194435575216928, 0.09867961594926178), (0.4602829756901944, -2.1379625403391667), (-2.482320440436738, 1.627077042367316)];
const FS_B: &[(f64, f64)] = &[(2.151673261299335, 0.0), (0.03911935559789159, -0.6365342041983617), (-0.008875255970486773, 2.9577823804226275), (-1.1766777958059698, 0.6932772456561287), (-0.2638249285163073, 0.36312386177944506), (0.10648475318902935, 0.5529954517480915), (1.9658444862424318, -0.2025206293873938), (-0.38883521793525594, -0.4844089907510306), (1.0046074432590586, -3.091863789442128), (0.38690523985528524, 2.0177722355470986), (-2.9441635547594784, -1.185287003044765), (-2.485275502718647, 0.8880465457457405), (-2.319966022558803, -3.193159289557355), (0.0961105214867802, 0.02963926774622372), (-0.5557388280295815, 2.115159236706312), (-2.4717565982154506, -1.643080579273943)];

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
        (vec!["--shift=-4.7,2", "--mode", "nearest"], cpu::map_coordinates(&x64, &at(ndimage::shift_map(&[13, 17], &[-4.7, 2.0]).unwrap()), &how(3, SplineMode::Nearest))),
        (vec!["--zoom", "1.6", "--order", "1"], cpu::map_coordinates(&x64, &at(ndimage::zoom_map(&[13, 17], &[1.6]).unwrap()), &how(1, SplineMode::Constant))),
        (vec!["--rotate", "-30", "--reshape", "--mode", "mirror"], cpu::map_coordinates(&x64, &at(ndimage::rotate_map(&[13, 17], -30.0, [1, 0], true).unwrap()), &how(3, SplineMode::Mirror))),
        (
            vec!["--affine", "M", "--offset", "0.4,-0.8", "--output-shape", "9,20", "--mode", "grid-wrap"],
            cpu::map_coordinates(&x64, &ndimage::coordinates(&AffineMap::new(&m64.view(), &[0.4, -0.8], 2).unwrap(), &[9, 20]), &how(3, SplineMode::GridWrap)),
        ),
        (vec!["--coordinates", "C", "--mode", "reflect", "--order", "0"], cpu::map_coordinates(&x64, &c.mapv(|v| v as f64), &how(0, SplineMode::Reflect))),
    ];
    for (extra, want) in cases {
        let extra: Vec<String> = extra.iter().map(|a| match *a { "M" => path("m.npy"), "C" => path("c.npy"), a => a.to_string() }).collect();
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
