//! Optical flow (lucent::registration::optical_flow_ilk / optical_flow_tvl1) against values
//! scikit-image 0.26 printed for the same formula images, and the input checks. (The Python
//! suite compares whole fields with scikit-image on random images, 2D and 3D.)

use lucent::registration::{optical_flow_ilk, optical_flow_tvl1, IlkOptions, Tvl1Options};
use ndarray::{ArrayD, IxDyn};

use crate::common::{gpu, rand_array};

/// f(y, x) = sin(0.31 y + 0.17 x) + cos(0.23 x − 0.11 y) + 0.5 sin(0.007 x y): the reference on
/// a 45 × 52 grid, and the moving image f(y − 0.8 − 0.5 sin(x / 9), x + 0.6), in f32.
fn images() -> (ArrayD<f32>, ArrayD<f32>) {
    let f = |y: f64, x: f64| (0.31 * y + 0.17 * x).sin() + (0.23 * x - 0.11 * y).cos() + 0.5 * (0.07 * x * y / 10.0).sin();
    let reference = ArrayD::from_shape_fn(IxDyn(&[45, 52]), |i| f(i[0] as f64, i[1] as f64) as f32);
    let moving = ArrayD::from_shape_fn(IxDyn(&[45, 52]), |i| {
        let (y, x) = (i[0] as f64, i[1] as f64);
        f(y - 0.8 - 0.5 * (x / 9.0).sin(), x + 0.6) as f32
    });
    (reference, moving)
}

#[test]
fn flows_equal_scikit_images_printed_values() {
    let gpu = gpu();
    let (reference, moving) = images();
    // /tmp/printflow.py of the session: skimage.registration.optical_flow_ilk / _tvl1 with
    // their defaults, at (22, 26), (10, 40), (35, 7), (flow[0], flow[1]) each, 6 decimals.
    let points = [[22usize, 26usize], [10, 40], [35, 7]];
    let ilk = [[0.968353, -0.624101], [0.388081, -0.603596], [1.00238, -0.560081]];
    let tvl1 = [[0.909838, -0.648999], [0.426344, -0.635566], [1.11875, -0.588346]];
    let ours = optical_flow_ilk(gpu, &reference.view(), &moving.view(), &IlkOptions::default()).unwrap();
    assert_eq!(ours.shape(), &[2, 45, 52]);
    for (p, want) in points.iter().zip(ilk) {
        for a in 0..2 {
            let got = ours[[a, p[0], p[1]]] as f64;
            assert!((got - want[a]).abs() < 5e-5, "ilk at {p:?} axis {a}: {got} vs {}", want[a]);
        }
    }
    let ours = optical_flow_tvl1(gpu, &reference.view(), &moving.view(), &Tvl1Options::default()).unwrap();
    for (p, want) in points.iter().zip(tvl1) {
        for a in 0..2 {
            let got = ours[[a, p[0], p[1]]] as f64;
            // TV-L1's attachment branches can flip under f32 rounding (see the Python suite).
            assert!((got - want[a]).abs() < 1e-3, "tvl1 at {p:?} axis {a}: {got} vs {}", want[a]);
        }
    }
}

#[test]
fn bad_flow_requests_are_refused() {
    let gpu = gpu();
    let (a, b) = (rand_array(&[20, 24]), rand_array(&[20, 23]));
    let line = rand_array(&[30]);
    let four = rand_array(&[4, 5, 6, 7]);
    let mut bad = rand_array(&[20, 24]);
    bad[[3, 4]] = f32::NAN;
    let ilk = IlkOptions::default();
    for (r, says) in [
        (optical_flow_ilk(gpu, &a.view(), &b.view(), &ilk), "shapes differ"),
        (optical_flow_ilk(gpu, &line.view(), &line.view(), &ilk), "2D or 3D"),
        (optical_flow_ilk(gpu, &four.view(), &four.view(), &ilk), "2D or 3D"),
        (optical_flow_ilk(gpu, &a.view(), &bad.view(), &ilk), "moving"),
        (optical_flow_tvl1(gpu, &a.view(), &a.view(), &Tvl1Options { tightness: 0.0, ..Default::default() }), "tightness"),
    ] {
        let e = r.expect_err(says).to_string();
        assert!(e.contains(says), "{e}");
    }
    let one = ArrayD::<f32>::zeros(IxDyn(&[1, 1]));
    let huge = one.broadcast(IxDyn(&[200_000, 200_000])).unwrap();
    assert!(optical_flow_ilk(gpu, &huge, &huge, &ilk).unwrap_err().to_string().contains("optical flow of"));
}
