//! Wiener-Hunt deconvolution (scikit-image's `restoration.wiener` with its Laplacian
//! regulariser): the f64 reference against values scikit-image 0.26 printed (float32 images, so
//! within 1e-5), the GPU against the reference within 1e-5 relative L2 on awkward shapes (1-4
//! axes, odd and even PSFs, clip on and off), bad input refused.

use crate::tests::common;
use common::*;

use lucent::restoration::{cpu, wiener};
use lucent::Error;
use ndarray::{ArrayD, IxDyn};

/// The golden cases' image: a smooth pattern in [0.25, 0.75], computed in f64, stored as f32.
fn image(shape: &[usize]) -> ArrayD<f32> {
    let n = shape.len() as f64;
    ArrayD::from_shape_fn(IxDyn(shape), |i| {
        let v: f64 = (0..shape.len()).map(|d| (0.37 * (d + 1) as f64 * i[d] as f64 + 0.3 * d as f64).sin() * (0.11 * i[d] as f64 * (n - d as f64)).cos()).sum();
        (0.5 + 0.25 * v / n) as f32
    })
}

/// A Gaussian of width `s` centred on each axis' middle, summing to 1, stored as f32.
fn gaussian(shape: &[usize], s: f64) -> ArrayD<f32> {
    let g = ArrayD::from_shape_fn(IxDyn(shape), |i| {
        (-0.5 * (0..shape.len()).map(|d| ((i[d] as f64 - (shape[d] - 1) as f64 / 2.0) / s).powi(2)).sum::<f64>()).exp()
    });
    let total = g.sum();
    g.mapv(|v| (v / total) as f32)
}

type Golden = (&'static [usize], &'static [usize], f64, f64, bool, f64, f64, &'static [(usize, f64)]);

// skimage.restoration.wiener(image, gaussian, balance, clip=clip), scikit-image 0.26.0.
const GOLDEN: &[Golden] = &[
    (
        &[23, 19],
        &[5, 5],
        1.2,
        0.1,
        true,
        238.32032611966133,
        133.60814397106105,
        &[
            (13, 0.49401676654815674),
            (66, 0.666007936000824),
            (119, 0.4083525240421295),
            (172, 0.6214514374732971),
            (225, 0.5828002691268921),
            (278, 0.6228030323982239),
        ],
    ),
    (
        &[23, 19],
        &[4, 7],
        0.9,
        0.01,
        false,
        238.3203267455101,
        133.51060001137455,
        &[
            (13, 0.48315688967704773),
            (66, 0.6600090265274048),
            (119, 0.43637627363204956),
            (172, 0.6356667876243591),
            (225, 0.5894735455513),
            (278, 0.6275971531867981),
        ],
    ),
    (
        &[9, 11, 8],
        &[3, 4, 3],
        0.8,
        0.05,
        true,
        419.38674345612526,
        227.04211332843562,
        &[
            (13, 0.5479235053062439),
            (12, 0.47179096937179565),
            (11, 0.4912180006504059),
            (10, 0.5888034701347351),
            (9, 0.6400834918022156),
            (8, 0.6158443689346313),
        ],
    ),
    (
        &[31],
        &[6],
        1.5,
        0.2,
        false,
        16.396780490875244,
        9.28753956897033,
        &[
            (13, 0.4438272714614868),
            (27, 0.62082439661026),
            (10, 0.4314612150192261),
            (24, 0.3247752785682678),
            (7, 0.6382455229759216),
            (21, 0.3330644965171814),
        ],
    ),
];

#[test]
fn the_reference_and_the_gpu_equal_scikit_image() {
    for &(shape, psf_shape, s, balance, clip, sum, squares, picks) in GOLDEN {
        let (x, p) = (image(shape), gaussian(psf_shape, s));
        let what = format!("{shape:?} ⊛ {psf_shape:?}, balance {balance}");
        let want = cpu::wiener(&x.mapv(|v| v as f64), &p.mapv(|v| v as f64), balance, clip).unwrap();
        let got = wiener(poisoned_gpu(), &x.view(), &p.view(), balance, clip).unwrap();
        for (name, y) in [("reference", want.mapv(|v| v)), ("GPU", got.mapv(|v| v as f64))] {
            assert!((y.sum() - sum).abs() <= 1e-5 * sum, "{what} ({name}): sum {} vs {sum}", y.sum());
            let sq: f64 = y.iter().map(|v| v * v).sum();
            assert!((sq - squares).abs() <= 1e-5 * squares, "{what} ({name}): sum of squares {sq} vs {squares}");
            for &(i, v) in picks {
                let g = y.iter().nth(i).copied().unwrap();
                assert!((g - v).abs() <= 1e-5, "{what} ({name}): element {i} is {g}, scikit-image's {v}");
            }
        }
    }
}

#[test]
fn the_gpu_equals_the_reference_on_awkward_shapes() {
    let cases: &[(&[usize], &[usize], f64, bool)] =
        &[(&[37, 29], &[7, 4], 0.02, false), (&[13, 17, 11], &[5, 5, 2], 0.1, true), (&[5, 6, 7, 9], &[3, 2, 3, 4], 0.05, false), (&[101], &[1], 0.0, false)];
    for &(shape, psf_shape, balance, clip) in cases {
        let x = rand_array(shape).mapv(|v| v + 0.5);
        let p = rand_array(psf_shape).mapv(|v| v.abs() + 0.1);
        let want = cpu::wiener(&x.mapv(|v| v as f64), &p.mapv(|v| v as f64), balance, clip).unwrap();
        let got = wiener(poisoned_gpu(), &x.view(), &p.view(), balance, clip).unwrap();
        assert_eq!(got.shape(), shape);
        assert_rel_l2(&got, &want, 1e-5, &format!("{shape:?} ⊛ {psf_shape:?}, balance {balance}"));
    }
}

#[test]
fn bad_input_is_refused() {
    let (x, p) = (rand_array(&[8, 9]), rand_array(&[3, 3]));
    let cases = [
        (wiener(gpu(), &x.view(), &rand_array(&[3]).view(), 0.1, true), "axes"),
        (wiener(gpu(), &x.view(), &rand_array(&[9, 3]).view(), 0.1, true), "no longer"),
        (wiener(gpu(), &x.view(), &p.view(), -1.0, true), "balance"),
        (wiener(gpu(), &x.view(), &p.view(), f64::NAN, true), "balance"),
        (wiener(gpu(), &x.mapv(|v| v / 0.0).view(), &p.view(), 0.1, true), "non-finite"),
    ];
    for (result, words) in cases {
        let message = match &result {
            Err(Error::Shape(m) | Error::Invalid(m)) => m.clone(),
            Err(e) => e.to_string(),
            Ok(_) => String::new(),
        };
        assert!(message.contains(words), "{words}: {result:?}");
    }
}

#[test]
fn the_record_form_equals_the_one_call() {
    let (x, p) = (rand_array(&[19, 24]).mapv(|v| v + 0.5), rand_array(&[4, 5]).mapv(|v| v.abs() + 0.1));
    let mut rec = lucent::Recording::new(poisoned_gpu());
    let image = rec.upload_f32(&x.view()).unwrap();
    let y = lucent::restoration::record_wiener(&mut rec, image, &p.view(), 0.05, true).unwrap();
    let d = rec.download(y);
    let got = rec.run().unwrap().into_f32(d).unwrap();
    assert_eq!(got, wiener(poisoned_gpu(), &x.view(), &p.view(), 0.05, true).unwrap());
}
