//! scipy.ndimage's derivative filters (lucent::ndimage: gaussian_filter with order, truncate and
//! radius, gaussian_filter1d, gaussian_laplace, gaussian_gradient_magnitude, sobel, prewitt,
//! laplace): the f64 reference against values scipy 1.17.1 printed, the GPU against the
//! reference on fresh random arrays of 1-4 awkward axes in every mode, kernels longer than their
//! axis folded, refusals.

use crate::common;
use common::*;
use lucent::ndimage::{self, cpu, Boundary, GaussianFilter};
use ndarray::{ArrayD, IxDyn};

fn fixed() -> ArrayD<f64> {
    // numpy: (np.arange(42.0).reshape(6, 7) ** 1.5) % 7
    ArrayD::from_shape_fn(IxDyn(&[6, 7]), |i| ((i[0] * 7 + i[1]) as f64).powf(1.5) % 7.0)
}

fn with_order(sigma: &[f64], order: &[usize]) -> GaussianFilter {
    GaussianFilter { order: order.to_vec(), ..GaussianFilter::new(sigma) }
}

/// The terms of each case as the library builds them, the reference's row 2 against scipy's.
#[test]
fn reference_matches_scipy() {
    let x = fixed();
    let dims = x.shape().to_vec();
    let g3 = GaussianFilter { truncate: 3.0, ..with_order(&[1.0], &[3, 1]) };
    let cases: Vec<(&str, ndimage::Terms, Boundary, [f64; 7])> = vec![
        (
            "gaussian_filter(x, 1.2, order=(1, 0))",
            ndimage::Terms { chains: vec![with_order(&[1.2], &[1, 0]).passes(&dims, Boundary::Reflect).unwrap()], root_sum_of_squares: false },
            Boundary::Reflect,
            [0.48423474205318817, 0.4310393705245551, 0.36026961802642465, 0.40523681395815975, 0.3622021157264531, 0.022112565954133245, -0.29955016236018955],
        ),
        (
            "gaussian_filter(x, (0.8, 1.5), order=(0, 2), mode='nearest')",
            ndimage::Terms { chains: vec![with_order(&[0.8, 1.5], &[0, 2]).passes(&dims, Boundary::Nearest).unwrap()], root_sum_of_squares: false },
            Boundary::Nearest,
            [
                -0.0045506323809763605,
                0.22357164932422346,
                0.37623518095778047,
                0.19799782977222813,
                -0.24224077693491386,
                -0.42202507994844607,
                -0.16520047467647708,
            ],
        ),
        (
            "gaussian_filter(x, 1.0, order=(3, 1), mode='mirror', truncate=3.0)",
            ndimage::Terms { chains: vec![g3.passes(&dims, Boundary::Mirror).unwrap()], root_sum_of_squares: false },
            Boundary::Mirror,
            [-0.0, 0.06614691697280281, -0.058681204938939975, -0.24028091329582693, 0.30046536154915526, 0.8744717299427177, 0.0],
        ),
        (
            "sobel(x, 0)",
            ndimage::edge_terms(&dims, 0, [1.0, 2.0, 1.0], Boundary::Reflect).unwrap(),
            Boundary::Reflect,
            [5.703220968007454, 7.141414889104901, 4.122710842439773, 7.726714446100665, 10.992273635849305, -0.04834791834350938, -13.72286553209905],
        ),
        (
            "prewitt(x, -1, mode='constant', cval=1.5)",
            ndimage::edge_terms(&dims, -1, [1.0, 1.0, 1.0], Boundary::Constant(1.5)).unwrap(),
            Boundary::Constant(1.5),
            [4.41131390719622, -0.8334271501674095, 0.37976598358034863, 1.546280025863993, 9.671726771561683, -3.2394039679540185, -14.462806662338252],
        ),
        (
            "laplace(x, mode='wrap')",
            ndimage::laplace_terms(&dims, Boundary::Wrap).unwrap(),
            Boundary::Wrap,
            [3.759004405286902, 2.8207663564751364, 9.491670864804021, 16.19463408142259, -12.075381215906134, 1.677658494113004, -7.400311063747466],
        ),
        (
            "gaussian_laplace(x, 1.1)",
            ndimage::laplace_of_gaussian_terms(&GaussianFilter::new(&[1.1]), &dims, Boundary::Reflect).unwrap(),
            Boundary::Reflect,
            [-0.7231599692885531, 0.06390354862253128, 0.6018010754337333, 0.5439786776315497, -0.8053797424161873, -1.6100403156440004, -0.7640145720254029],
        ),
        (
            "gaussian_gradient_magnitude(x, 0.9)",
            ndimage::gradient_magnitude_terms(&GaussianFilter::new(&[0.9]), &dims, Boundary::Reflect).unwrap(),
            Boundary::Reflect,
            [0.630666232720586, 0.6561577723539316, 0.42089090670353535, 0.9868515631196146, 1.2882603884100787, 0.21058467518827417, 0.9868328349935951],
        ),
    ];
    for (what, terms, mode, want) in cases {
        let got = cpu::filter_terms(&x, &terms, mode);
        for (k, w) in want.iter().enumerate() {
            let g = got[[2, k]];
            assert!((g - w).abs() <= 1e-12 * w.abs().max(1.0), "{what} [2, {k}]: {g} vs scipy's {w}");
        }
    }
}

/// Every filter on the GPU against the f64 reference: 1-4 axes of awkward sizes, every mode,
/// orders 0-3, within 1e-5 of the result's scale (relative L2), temporaries poisoned.
#[test]
fn gpu_matches_the_reference() {
    let gpu = poisoned_gpu();
    let modes = [Boundary::Reflect, Boundary::Constant(0.75), Boundary::Nearest, Boundary::Mirror, Boundary::Wrap];
    for dims in [vec![29usize], vec![19, 23], vec![7, 11, 13], vec![3, 5, 6, 7]] {
        let x = rand_array(&dims);
        let x64 = x.mapv(|v| v as f64);
        let d = dims.len();
        for mode in modes {
            let sigma: Vec<f64> = (0..d).map(|a| 0.7 + 0.4 * a as f64).collect();
            let order: Vec<usize> = (0..d).map(|a| (a + 1) % 4).collect();
            let g = with_order(&sigma, &order);
            let cases: Vec<(String, ndimage::Terms, ArrayD<f32>)> = vec![
                (
                    format!("gaussian_filter order {order:?}"),
                    ndimage::Terms { chains: vec![g.passes(&dims, mode).unwrap()], root_sum_of_squares: false },
                    ndimage::gaussian_filter_with(gpu, &x, &g, mode).unwrap(),
                ),
                (
                    "gaussian_laplace".into(),
                    ndimage::laplace_of_gaussian_terms(&g, &dims, mode).unwrap(),
                    ndimage::gaussian_laplace(gpu, &x, &g, mode).unwrap(),
                ),
                (
                    "gaussian_gradient_magnitude".into(),
                    ndimage::gradient_magnitude_terms(&g, &dims, mode).unwrap(),
                    ndimage::gaussian_gradient_magnitude(gpu, &x, &g, mode).unwrap(),
                ),
                ("sobel".into(), ndimage::edge_terms(&dims, -1, [1.0, 2.0, 1.0], mode).unwrap(), ndimage::sobel(gpu, &x, -1, mode).unwrap()),
                ("prewitt".into(), ndimage::edge_terms(&dims, 0, [1.0, 1.0, 1.0], mode).unwrap(), ndimage::prewitt(gpu, &x, 0, mode).unwrap()),
                ("laplace".into(), ndimage::laplace_terms(&dims, mode).unwrap(), ndimage::laplace(gpu, &x, mode).unwrap()),
            ];
            for (what, terms, got) in cases {
                let want = cpu::filter_terms(&x64, &terms, mode);
                assert_rel_l2(&got, &want, 1e-5, &format!("{dims:?} {mode:?} {what}"));
            }
        }
    }
}

/// A derivative kernel longer than its axis (σ 12 on 9 samples, order 1 and 2) folded onto the
/// axis equals the unfolded kernel's correlation with the mode's extension (the reference's
/// correlate1d reads any offset), and gaussian_filter1d is gaussian_filter along one axis.
#[test]
fn long_kernels_fold_and_one_axis_forms() {
    let gpu = gpu();
    let x = rand_array(&[9, 14]);
    let x64 = x.mapv(|v| v as f64);
    for mode in [Boundary::Reflect, Boundary::Mirror, Boundary::Wrap, Boundary::Nearest, Boundary::Constant(-0.5)] {
        for order in [1, 2] {
            let mut w = ndimage::gaussian_kernel1d_order(12.0, order, 48);
            w.reverse();
            let want = cpu::correlate1d(&x64, &w, 0, mode);
            let got = ndimage::gaussian_filter1d(gpu, &x, 12.0, 0, order, mode, 4.0, None).unwrap();
            assert_rel_l2(&got, &want, 1e-5, &format!("{mode:?} order {order}"));
        }
    }
    let one = ndimage::gaussian_filter1d(gpu, &x, 1.3, -1, 2, Boundary::Reflect, 2.5, Some(3)).unwrap();
    let g = GaussianFilter { sigma: vec![0.0, 1.3], order: vec![0, 2], truncate: 2.5, radius: Some(vec![3]) };
    assert_eq!(one, ndimage::gaussian_filter_with(gpu, &x, &g, Boundary::Reflect).unwrap());
    for (g, words) in [
        (with_order(&[1.0], &[4]), "order 4"),
        (GaussianFilter { truncate: f64::NAN, ..GaussianFilter::new(&[1.0]) }, "truncate"),
        (with_order(&[1.0, 2.0, 3.0], &[0]), "sigma"),
    ] {
        let err = ndimage::gaussian_filter_with(gpu, &x, &g, Boundary::Reflect).unwrap_err().to_string();
        assert!(err.contains(words), "{g:?}: {err}");
    }
    assert!(ndimage::sobel(gpu, &x, 2, Boundary::Reflect).unwrap_err().to_string().contains("axis 2"));
}
