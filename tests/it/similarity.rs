//! Similarity registration (Fourier-Mellin, imreg_dft's conventions): a textured image turned,
//! scaled and shifted by imreg_dft's `transform_img` geometry is registered back; the Python
//! suite compares with imreg_dft itself (python/tests/test_similarity.py).

use lucent::registration::{similarity, similarity_map, transform_similarity, SimilarityOptions};
use ndarray::ArrayD;

use crate::common::{gpu, rand_array};

/// Smoothed noise (a Gaussian of σ 2): texture for the correlations, smooth enough that two
/// cubic resamplings (there and back) change it by well under the residual bound.
fn texture(n: usize) -> ArrayD<f32> {
    lucent::ndimage::gaussian_filter(gpu(), &rand_array(&[n, n]), &[2.0], lucent::ndimage::Boundary::Wrap).unwrap()
}

#[test]
fn turned_scaled_shifted_images_are_registered_back() {
    let gpu = gpu();
    let n = 192;
    let im0 = texture(n);
    let big = (n as f64 * 1.2).round();
    for (scale, angle, tvec) in [(1.0, 0.0, [1.25, -2.5]), (1.12, 37.0, [0.0, 0.0]), (0.87, -121.0, [2.0, 3.5]), (1.05, 171.0, [-1.5, 0.5])] {
        let im1 = transform_similarity(gpu, &im0.view(), scale, angle, tvec, 0.0, 3).unwrap();
        let r = similarity(gpu, &im0.view(), &im1.view(), &SimilarityOptions::default()).unwrap();
        // The inverse of the zoom scipy made (corners aligned on the 1.2× canvas) and of the turn.
        let true_scale = (big - 1.0) / ((big * scale).round_ties_even() - 1.0);
        // imreg_dft's stated precision: a quarter of a log-polar sample in angle and in log scale.
        let d_angle = 180.0 / n as f64 / 4.0;
        let d_scale = ((n as f64 * 1.1 / 2.0).ln() / n as f64).exp_m1() / 4.0;
        assert!(((r.angle + angle + 180.0).rem_euclid(360.0) - 180.0).abs() < d_angle, "{scale} {angle}: {r:?}");
        assert!((r.scale / true_scale - 1.0).abs() < d_scale, "{scale} {angle}: {r:?}");
        // The registered image matches the reference in its middle.
        let back = transform_similarity(gpu, &im1.view(), r.scale, r.angle, r.tvec, 0.0, 3).unwrap();
        let c = n / 4..3 * n / 4;
        let (mut num, mut den) = (0.0, 0.0);
        for i in c.clone() {
            for j in c.clone() {
                num += ((back[[i, j]] - im0[[i, j]]) as f64).powi(2);
                den += (im0[[i, j]] as f64).powi(2);
            }
        }
        // (Within the scale's precision, a quarter of a log-polar sample, 0.25% here: up to
        // 0.25 px at the window's edge, some 7% of this texture.)
        assert!((num / den).sqrt() < 0.1, "{scale} {angle}: residual {} {r:?}", (num / den).sqrt());
    }
}

#[test]
fn a_shift_alone_is_the_shift_and_small_images_are_refused() {
    // Scale 1 and angle 0: the canvas's embedding and the cut back cancel (imreg_dft centres
    // both by the same whole number of samples), leaving scipy's shift. The whole geometry is
    // compared with imreg_dft's transform_img in python/tests/test_similarity.py.
    let map = similarity_map(&[64, 80], 1.0, 0.0, [2.0, -1.0]).unwrap();
    assert_eq!(map.matrix, vec![vec![1.0, 0.0], vec![0.0, 1.0]]);
    assert_eq!(map.offset, vec![-2.0, 1.0]);
    let small = ArrayD::zeros(ndarray::IxDyn(&[8, 8]));
    let e = similarity(gpu(), &small.view(), &small.view(), &SimilarityOptions::default()).unwrap_err();
    assert!(e.to_string().contains("at least 16"), "{e}");
}

#[test]
fn a_shifted_stack_is_registered_and_transformed_back() {
    use lucent::registration::{register_stack, transform_stack, StackReference, StackTransform};
    let gpu = gpu();
    let base = texture(128);
    let shifts = [[0.0, 0.0], [1.25, -2.5], [-3.0, 0.75]];
    let frames: Vec<ArrayD<f32>> = shifts.iter().map(|&s| transform_similarity(gpu, &base.view(), 1.0, 0.0, s, 0.0, 3).unwrap()).collect();
    let views: Vec<_> = frames.iter().map(|f| f.view().into_dimensionality::<ndarray::Ix2>().unwrap()).collect();
    let stack = ndarray::stack(ndarray::Axis(0), &views).unwrap();
    for reference in [StackReference::First(1), StackReference::Previous] {
        let tmats = register_stack(gpu, &stack.view(), StackTransform::Translation, reference, 100.0).unwrap();
        for (t, s) in tmats.iter().zip(shifts) {
            // pystackreg's form: the reference's (x, y) lies at (x + s_x, y + s_y) in the frame.
            assert!((t[0][2] - s[1]).abs() < 0.05 && (t[1][2] - s[0]).abs() < 0.05, "{reference:?}: {t:?} for {s:?}");
        }
        let back = transform_stack(gpu, &stack.view(), &tmats, 3).unwrap();
        for k in 0..3 {
            let (mut num, mut den) = (0.0, 0.0);
            for i in 32..96 {
                for j in 32..96 {
                    num += ((back[[k, i, j]] - base[[i, j]]) as f64).powi(2);
                    den += (base[[i, j]] as f64).powi(2);
                }
            }
            assert!((num / den).sqrt() < 0.05, "{reference:?} frame {k}: {}", (num / den).sqrt());
        }
    }
    assert!(transform_stack(gpu, &stack.view(), &[[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]], 3).is_err());
}

#[test]
fn register_stack_command_writes_the_stack_and_the_matrices() {
    use crate::common::{lucent_cli, lucent_json};
    let dir = std::env::temp_dir().join(format!("lucent-cli-stackreg-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let p = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let gpu = gpu();
    let base = texture(80);
    let shifts = [[0.0, 0.0], [2.5, 1.0], [-1.0, 3.25]];
    let frames: Vec<ArrayD<f32>> = shifts.iter().map(|&s| transform_similarity(gpu, &base.view(), 1.0, 0.0, s, 0.0, 3).unwrap()).collect();
    let views: Vec<_> = frames.iter().map(|f| f.view()).collect();
    let stack = ndarray::stack(ndarray::Axis(0), &views).unwrap();
    lucent::io::write_real(p("stack.npy"), &stack.view()).unwrap();
    let report = lucent_json(&["register-stack", &p("stack.npy"), "-o", &p("out.npy"), "--reference", "first", "--tmats", &p("t.csv")], &[]);
    assert_eq!(report["command"], "register-stack");
    assert_eq!(report["shape_out"], serde_json::json!([3, 80, 80]));
    let csv = std::fs::read_to_string(p("t.csv")).unwrap();
    let rows: Vec<Vec<f64>> = csv.lines().skip(1).map(|l| l.split(',').map(|v| v.parse().unwrap()).collect()).collect();
    for (row, s) in rows.iter().zip(shifts) {
        // frame, m00 m01 m02 (x's row: tx = m02), m10 m11 m12 (ty), m20 m21 m22. (The plumbing;
        // the accuracy is a_shifted_stack_is_registered_and_transformed_back's: a tenth here,
        // on 80² frames, where correlation peaks move by up to 0.08.)
        assert!((row[3] - s[1]).abs() < 0.1 && (row[6] - s[0]).abs() < 0.1, "{row:?} for {s:?}");
    }
    assert_eq!(lucent::io::read_real(p("out.npy")).unwrap().shape(), &[3, 80, 80]);
    // Affine matrices by the intensity fit, on crops of one texture (no empty bands): frame k
    // is the texture from corner (5, 5) + o_k, so the reference's (x, y) lies at (x, y) − o_k.
    let wide = texture(96);
    let corners = [[0usize, 0usize], [2, 1], [5, 3]];
    let crops: Vec<_> = corners.iter().map(|o| wide.slice(ndarray::s![8 - 3 + o[0]..8 - 3 + o[0] + 80, 8 - 3 + o[1]..8 - 3 + o[1] + 80])).collect();
    lucent::io::write_real(p("crops.npy"), &ndarray::stack(ndarray::Axis(0), &crops).unwrap().into_dyn().view()).unwrap();
    let report = lucent_json(&["register-stack", &p("crops.npy"), "-o", &p("affine.npy"), "--reference", "first", "--transformation", "affine"], &[]);
    let tmats = report["details"]["tmats"].as_array().unwrap();
    for (t, o) in tmats.iter().zip(corners) {
        let at = |i: usize, j: usize| t[i][j].as_f64().unwrap();
        assert!((at(0, 2) + o[1] as f64).abs() < 0.02 && (at(1, 2) + o[0] as f64).abs() < 0.02, "{t} for {o:?}");
        assert!((at(0, 0) - 1.0).abs() < 2e-3 && at(0, 1).abs() < 2e-3 && at(1, 0).abs() < 2e-3 && (at(1, 1) - 1.0).abs() < 2e-3, "{t}");
    }
    // A 2D image and --device cpu are refused, and nothing is written.
    lucent::io::write_real(p("flat.npy"), &base.view()).unwrap();
    for (args, says) in [
        (vec!["register-stack", &p("flat.npy") as &str, "-o", &p("no.npy")], "3 axes"),
        (vec!["--device", "cpu", "register-stack", &p("stack.npy"), "-o", &p("no.npy")], "GPU only"),
    ] {
        let out = lucent_cli(&args, &[]);
        assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains(says), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(!dir.join("no.npy").exists());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn intensity_based_registration_recovers_known_transforms() {
    use lucent::ndimage::{affine_transform, AffineMap, Sampling};
    use lucent::registration::{register_affine, AffineOptions, TransformKind};
    let gpu = gpu();
    // A crop of a larger texture (no empty band), and the moving image with
    // moving(A p + t) = fixed(p).
    let (n, m) = (96usize, 160usize);
    let big = texture(m);
    let fixed = big.slice(ndarray::s![32..32 + n, 32..32 + n]).to_owned().into_dyn();
    let (t, a) = ([2.0, -3.0], [[1.03, -0.06], [0.04, 0.97]]);
    let det = a[0][0] * a[1][1] - a[0][1] * a[1][0];
    let inv = [[a[1][1] / det, -a[0][1] / det], [-a[1][0] / det, a[0][0] / det]];
    let offset: Vec<f64> = (0..2).map(|i| 32.0 - inv[i][0] * t[0] - inv[i][1] * t[1]).collect();
    let matrix = ndarray::arr2(&[[inv[0][0], inv[0][1]], [inv[1][0], inv[1][1]]]).into_dyn();
    let moving = affine_transform(gpu, &big, &matrix.view(), &offset, Some(&[n, n]), &Sampling::default()).unwrap();
    let r = register_affine(gpu, &fixed.view(), &moving.view(), &AffineOptions::default()).unwrap();
    for (i, row) in a.iter().enumerate() {
        for (j, want) in row.iter().enumerate() {
            assert!((r.map.matrix[i][j] - want).abs() < 1e-3, "{r:?}");
        }
        assert!((r.map.offset[i] - t[i]).abs() < 0.02, "{r:?}");
    }
    // A translation fit from a given start (the initial transform is used).
    let o = AffineOptions {
        kind: TransformKind::Translation,
        initial: Some(AffineMap { matrix: vec![vec![1.0, 0.0], vec![0.0, 1.0]], offset: vec![1.0, 1.0] }),
        ..Default::default()
    };
    let shifted = affine_transform(gpu, &big, &ndarray::Array2::<f64>::eye(2).into_dyn().view(), &[33.5, 31.25], Some(&[n, n]), &Sampling::default()).unwrap();
    let r = register_affine(gpu, &fixed.view(), &shifted.view(), &o).unwrap();
    assert!((r.map.offset[0] + 1.5).abs() < 0.01 && (r.map.offset[1] - 0.75).abs() < 0.01, "{r:?}");
    let bad = AffineOptions { shrink_factors: vec![2, 1], smoothing_sigmas: vec![1.0], ..Default::default() };
    assert!(register_affine(gpu, &fixed.view(), &moving.view(), &bad).is_err());
}
