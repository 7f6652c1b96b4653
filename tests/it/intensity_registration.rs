//! Intensity-based registration (lucent::registration::register_affine) in 2D and 3D with each
//! metric, masks and optimiser: known transforms of smooth random textures are recovered.

use lucent::ndimage::{affine_transform, AffineMap, Boundary, Sampling};
use lucent::registration::{register_affine, register_affine_masked, AffineOptions, AffineResult, Metric, Optimizer, TransformKind};
use ndarray::{ArrayD, IxDyn, SliceInfoElem};

use crate::common::{gpu, rand_array};

fn texture(dims: &[usize]) -> ArrayD<f32> {
    lucent::ndimage::gaussian_filter(gpu(), &rand_array(dims), &[2.0], Boundary::Wrap).unwrap()
}

fn inverse(a: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let d = a.len();
    let mut m: Vec<Vec<f64>> = (0..d).map(|i| a[i].iter().copied().chain((0..d).map(|j| f64::from(u8::from(i == j)))).collect()).collect();
    for c in 0..d {
        let p = (c..d).max_by(|&x, &y| m[x][c].abs().total_cmp(&m[y][c].abs())).unwrap();
        m.swap(c, p);
        let pivot = m[c][c];
        m[c].iter_mut().for_each(|x| *x /= pivot);
        for r in (0..d).filter(|&r| r != c) {
            let k = m[r][c];
            let row = m[c].clone();
            m[r].iter_mut().zip(&row).for_each(|(x, y)| *x -= k * y);
        }
    }
    m.into_iter().map(|row| row[d..].to_vec()).collect()
}

/// The fixed image (`big` cropped at `corner` to `dims`) and the moving one with
/// moving(A p + t) = fixed(p), both `dims`.
fn pair(big: &ArrayD<f32>, corner: usize, dims: &[usize], a: &[Vec<f64>], t: &[f64]) -> (ArrayD<f32>, ArrayD<f32>) {
    let d = dims.len();
    let crop: Vec<SliceInfoElem> = dims.iter().map(|&n| SliceInfoElem::from(corner..corner + n)).collect();
    let fixed = big.slice(crop.as_slice()).to_owned();
    // moving(q) = big(A⁻¹ (q − t) + corner).
    let b = inverse(a);
    let offset: Vec<f64> = (0..d).map(|i| corner as f64 - (0..d).map(|j| b[i][j] * t[j]).sum::<f64>()).collect();
    let matrix = ArrayD::from_shape_vec(IxDyn(&[d, d]), b.into_iter().flatten().collect()).unwrap();
    let moving = affine_transform(gpu(), big, &matrix.view(), &offset, Some(dims), &Sampling::default()).unwrap();
    (fixed, moving)
}

fn assert_found(r: &AffineResult, a: &[Vec<f64>], t: &[f64], matrix_tol: f64, offset_tol: f64, what: &str) {
    for (i, row) in a.iter().enumerate() {
        for (j, want) in row.iter().enumerate() {
            assert!((r.map.matrix[i][j] - want).abs() < matrix_tol, "{what}: matrix {:?} vs {a:?} ({r:?})", r.map.matrix);
        }
        assert!((r.map.offset[i] - t[i]).abs() < offset_tol, "{what}: offset {:?} vs {t:?} ({r:?})", r.map.offset);
    }
}

/// The rotation by the rotation vector `r` (Rodrigues).
fn rotation(r: [f64; 3]) -> Vec<Vec<f64>> {
    let theta = (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]).sqrt();
    let k: Vec<f64> = r.iter().map(|x| x / theta).collect();
    let (s, c) = theta.sin_cos();
    let cross = [[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]];
    (0..3).map(|i| (0..3).map(|j| c * f64::from(u8::from(i == j)) + s * cross[i][j] + (1.0 - c) * k[i] * k[j]).collect()).collect()
}

#[test]
fn volumes_are_registered_rigidly_and_affinely() {
    let gpu = gpu();
    let big = texture(&[58, 62, 66]);
    let dims = [37usize, 41, 43];
    let o = AffineOptions { shrink_factors: vec![2, 1], smoothing_sigmas: vec![1.0, 0.0], ..Default::default() };
    let t = [1.5, -2.0, 0.75];
    // A turn of 5.5° about an oblique axis, the centre of the turn at the fixed image's centre.
    let r = rotation([0.05, -0.03, 0.08]);
    let c: Vec<f64> = dims.iter().map(|&n| (n as f64 - 1.0) / 2.0).collect();
    let rigid_offset: Vec<f64> = (0..3).map(|i| t[i] + c[i] - (0..3).map(|j| r[i][j] * c[j]).sum::<f64>()).collect();
    let (fixed, moving) = pair(&big, 10, &dims, &r, &rigid_offset);
    let found = register_affine(gpu, &fixed.view(), &moving.view(), &AffineOptions { kind: TransformKind::Rigid, ..o.clone() }).unwrap();
    assert_found(&found, &r, &rigid_offset, 2e-3, 0.05, "rigid 3D");
    let a = vec![vec![1.02, 0.03, -0.01], vec![-0.02, 0.97, 0.04], vec![0.01, -0.03, 1.01]];
    let (fixed, moving) = pair(&big, 10, &dims, &a, &t);
    let found = register_affine(gpu, &fixed.view(), &moving.view(), &o).unwrap();
    assert_found(&found, &a, &t, 2e-3, 0.05, "affine 3D");
}

#[test]
fn correlation_and_mutual_information_register_changed_intensities() {
    let gpu = gpu();
    let big = texture(&[150, 170]);
    let dims = [97usize, 113];
    let (angle, scale): (f64, f64) = (4f64.to_radians(), 1.03);
    let a = vec![vec![scale * angle.cos(), -scale * angle.sin()], vec![scale * angle.sin(), scale * angle.cos()]];
    let c = [(dims[0] as f64 - 1.0) / 2.0, (dims[1] as f64 - 1.0) / 2.0];
    let t: Vec<f64> = (0..2).map(|i| [1.5, -2.0][i] + c[i] - a[i][0] * c[0] - a[i][1] * c[1]).collect();
    let (fixed, moving) = pair(&big, 25, &dims, &a, &t);
    let o = AffineOptions { kind: TransformKind::Similarity, ..Default::default() };
    // A linear change for the correlation; a nonlinear, decreasing one for mutual information.
    let linear = moving.mapv(|x| 3.0 * x - 2.0);
    let found = register_affine(gpu, &fixed.view(), &linear.view(), &AffineOptions { metric: Metric::Correlation, ..o.clone() }).unwrap();
    assert_found(&found, &a, &t, 2e-3, 0.05, "correlation");
    assert!(found.metric < -0.99, "{found:?}");
    let bent = moving.mapv(|x| (-6.0 * x).exp());
    let mi = Metric::MattesMutualInformation { bins: 50 };
    let found = register_affine(gpu, &fixed.view(), &bent.view(), &AffineOptions { metric: mi, ..o.clone() }).unwrap();
    assert_found(&found, &a, &t, 3e-3, 0.1, "mutual information");
    // SimpleITK's regular steps reach it too, if more slowly.
    let regular = Optimizer::RegularStep { learning_rate: 1.0, min_step: 1e-3, relaxation: 0.5 };
    let found =
        register_affine(gpu, &fixed.view(), &linear.view(), &AffineOptions { metric: Metric::Correlation, optimizer: regular, iterations: 300, ..o }).unwrap();
    assert_found(&found, &a, &t, 3e-3, 0.1, "correlation by regular steps");
}

#[test]
fn masks_leave_bands_without_data_out() {
    let gpu = gpu();
    let big = texture(&[140, 150]);
    let dims = [89usize, 101];
    let a = vec![vec![1.0, 0.0], vec![0.0, 1.0]];
    let t = vec![2.25, -1.5];
    let (mut fixed, mut moving) = pair(&big, 20, &dims, &a, &t);
    // A bright band in each (a detector gap, a border of no data) that would pull the images
    // 7.5 columns apart if it counted; masked out.
    fixed.slice_mut(ndarray::s![.., 0..14]).fill(1.0);
    moving.slice_mut(ndarray::s![.., 6..20]).fill(1.0);
    let mut fixed_mask = fixed.mapv(|_| true);
    fixed_mask.slice_mut(ndarray::s![.., 0..14]).fill(false);
    let mut moving_mask = moving.mapv(|_| true);
    moving_mask.slice_mut(ndarray::s![.., 6..20]).fill(false);
    let o = AffineOptions { kind: TransformKind::Translation, ..Default::default() };
    let found = register_affine_masked(gpu, &fixed.view(), &moving.view(), Some(&fixed_mask.view()), Some(&moving_mask.view()), &o).unwrap();
    assert_found(&found, &a, &t, 1e-9, 0.02, "masked");
    // Without the masks the bands pull the fit away.
    let unmasked = register_affine(gpu, &fixed.view(), &moving.view(), &o).unwrap();
    assert!((unmasked.map.offset[1] - t[1]).abs() > 1.0, "{unmasked:?}");
}

#[test]
fn bad_registration_requests_are_refused() {
    let gpu = gpu();
    let x = rand_array(&[16, 18]);
    let o = AffineOptions::default();
    let mask = ArrayD::from_elem(IxDyn(&[16, 17]), true);
    let volume4 = rand_array(&[4, 4, 4, 4]);
    let cases: Vec<(Result<AffineResult, lucent::Error>, &str)> = vec![
        (register_affine_masked(gpu, &x.view(), &x.view(), Some(&mask.view()), None, &o), "mask's shape"),
        (register_affine(gpu, &volume4.view(), &volume4.view(), &o), "2D or two 3D"),
        (
            register_affine(gpu, &x.view(), &x.view(), &AffineOptions { metric: Metric::Correlation, optimizer: Optimizer::LevenbergMarquardt, ..o.clone() }),
            "mean squares only",
        ),
        (register_affine(gpu, &x.view(), &x.view(), &AffineOptions { metric: Metric::MattesMutualInformation { bins: 3 }, ..o.clone() }), "histogram bins"),
        (
            register_affine(
                gpu,
                &x.view(),
                &x.view(),
                &AffineOptions { initial: Some(AffineMap { matrix: vec![vec![1.0; 3]; 3], offset: vec![0.0; 3] }), ..o.clone() },
            ),
            "initial transform",
        ),
        (
            register_affine(
                gpu,
                &x.view(),
                &x.view(),
                &AffineOptions { optimizer: Optimizer::RegularStep { learning_rate: 1.0, min_step: 0.0, relaxation: 0.5 }, ..o },
            ),
            "regular steps",
        ),
    ];
    // Sizes beyond the device are refused before anything is read or allocated (broadcast
    // views: no memory behind them).
    let one = ArrayD::<f32>::zeros(IxDyn(&[1, 1]));
    let huge = one.broadcast(IxDyn(&[300_000, 300_000])).unwrap();
    let e = register_affine(gpu, &huge, &huge, &AffineOptions::default()).expect_err("too large").to_string();
    assert!(e.contains("register_affine of"), "{e}");
    for (r, says) in cases {
        let e = r.expect_err(says).to_string();
        assert!(e.contains(says), "{e}");
    }
}
