//! B-spline orders 0 to 5 (ops::interpolate): the prefilter of orders 2-5 and sampling of every
//! order on the GPU against the f64 reference, every spline mode, shapes of 1-4 axes (1, 2,
//! primes, lines beyond the prefilter's segments), fresh random inputs, temporaries poisoned;
//! the reference and the GPU against values scipy 1.17.1 printed for orders 2, 4 and 5, and for
//! zoom's grid_mode; the refusals (order 6, and orders other than 0, 1 and 3 with the texture sampler).
//!
//! Tolerance: the interpolation engine's (`assert_resampled`: relative L2 and largest error
//! 1e-5 of the f64 reference); f32 recursions over stable poles and f32 weights give ~1e-7.
//! Sampled values of orders 4 and 5 are bounded by [`sampled_tolerance`]: their f32 coefficients
//! alternate with more gain than cubic ones, and rounding scipy's own f64 coefficients to f32
//! already moves order 5 in 4 axes by 1e-5 (relative L2, scipy 1.17.1, random [3, 4, 5, 2]).

use crate::common;
use common::*;

use lucent::ndimage::{self, cpu, AffineMap, Sampler, Sampling, SplineMode};
use lucent::Error;
use ndarray::{ArrayD, IxDyn};
use rand::Rng;

const MODES: [SplineMode; 7] =
    [SplineMode::Mirror, SplineMode::Reflect, SplineMode::Nearest, SplineMode::Wrap, SplineMode::GridWrap, SplineMode::Constant, SplineMode::GridConstant];

fn sampling(order: u32, mode: SplineMode, cval: f32) -> Sampling {
    Sampling { order, mode, cval, prefilter: true, sampler: Sampler::Buffer }
}

#[test]
fn prefilter_of_every_order_matches_the_reference() {
    let gpu = poisoned_gpu();
    // (Lines of 100 and 2500 samples: many segments, staged along the last axis, both
    // segment geometries.)
    let shapes: &[&[usize]] =
        &[&[1], &[2], &[3], &[7], &[100], &[13, 1], &[5, 8], &[2, 61], &[31, 17, 3], &[4, 3, 5, 6], &[3, 1, 29, 2], &[3, 2500], &[70, 130]];
    for &dims in shapes {
        let x = rand_array(dims);
        let x64 = x.mapv(|v| v as f64);
        for order in 2..=5 {
            for mode in MODES {
                let what = format!("{dims:?} order {order} {mode:?}");
                let all = ndimage::spline_filter(gpu, &x, order, mode).unwrap();
                assert_resampled(&all, &cpu::spline_filter(&x64, order, mode), &what);
                for axis in 0..dims.len() {
                    let one = ndimage::spline_filter1d(gpu, &x, order, axis, mode).unwrap();
                    assert_resampled(&one, &cpu::spline_filter1d(&x64, order, axis, mode), &format!("{what} axis {axis}"));
                }
            }
        }
        // Orders 0 and 1 need no coefficients: spline_filter1d copies, as scipy's.
        for order in [0, 1] {
            assert_eq!(ndimage::spline_filter1d(gpu, &x, order, 0, SplineMode::Mirror).unwrap(), x, "{dims:?} order {order}");
        }
    }
}

/// Coordinates (shape (rank, points)) from well outside an array of `dims` to well outside, a few
/// exactly on samples.
fn random_coordinates(dims: &[usize], points: usize) -> ArrayD<f32> {
    let mut rng = rand::rng();
    let mut c = ArrayD::<f32>::zeros(IxDyn(&[dims.len(), points]));
    for a in 0..dims.len() {
        for i in 0..points {
            let n = dims[a] as f32;
            c[[a, i]] = if i % 9 == 0 { (i % dims[a]) as f32 } else { rng.random::<f32>() * (3.0 * n + 4.0) - (n + 2.0) };
        }
    }
    c
}

/// The bound on sampled values of `order` from an array of `rank` axes: the engine's 1e-5 for
/// orders up to 3, scaled for orders 4 and 5 by how much more their prefilter amplifies the
/// alternating component (and with it the f32 coefficients' rounding) along each axis than the
/// cubic one: 1/|Σ_k (−1)^k b(k)|, 4.8 and 7.5 against 3.
fn sampled_tolerance(order: u32, rank: usize) -> f64 {
    let gain = match order {
        4 => 384.0 / 80.0,
        5 => 120.0 / 16.0,
        _ => 3.0,
    };
    1e-5 * (gain / 3.0f64).powi(rank as i32)
}

/// Order 0 equals the reference but where a coordinate within an f32 ulp of a .5 tie rounds the
/// other way (at most `ties` samples); other orders within [`sampled_tolerance`] in relative L2
/// and pointwise of the largest value.
fn assert_sampled(got: &ArrayD<f32>, want: &ArrayD<f64>, order: u32, rank: usize, ties: usize, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}");
    if order == 0 {
        let differ = got.iter().zip(want).filter(|(g, w)| (**g as f64 - **w).abs() > 1e-6).count();
        assert!(differ <= ties, "{what}: {differ} of {} differ", got.len());
        return;
    }
    let tol = sampled_tolerance(order, rank);
    assert_rel_l2(got, want, tol, what);
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let worst = got.iter().zip(want).fold(0.0f64, |m, (&g, w)| m.max((g as f64 - w).abs()));
    assert!(worst <= tol * scale, "{what}: largest error {worst:e} of values up to {scale:e}");
}

#[test]
fn map_coordinates_of_every_order_matches_the_reference() {
    let gpu = poisoned_gpu();
    let shapes: &[&[usize]] = &[&[1], &[2], &[17], &[5, 8], &[1, 9], &[13, 7, 4], &[3, 4, 5, 2]];
    for &dims in shapes {
        let x = rand_array(dims);
        let x64 = x.mapv(|v| v as f64);
        let c = random_coordinates(dims, 41);
        let c64 = c.mapv(|v| v as f64);
        for mode in MODES {
            for order in 0..=5 {
                let how = sampling(order, mode, 0.25);
                let got = ndimage::map_coordinates(gpu, &x, &c, &how).unwrap();
                assert_sampled(&got, &cpu::map_coordinates(&x64, &c64, &how), order, dims.len(), 1, &format!("{dims:?} {mode:?} order {order}"));
            }
        }
    }
}

#[test]
fn affine_family_of_every_order_matches_the_reference() {
    // The GPU's affine kernel (axes left alone read with order 0, unfiltered) against the f64
    // map_coordinates of the same coordinates (every axis filtered and read with the order).
    let gpu = poisoned_gpu();
    let m = ArrayD::from_shape_vec(IxDyn(&[3, 3]), vec![0.8, 0.3, 0.0, -0.2, 1.1, 0.1, 0.05, 0.0, 0.9]).unwrap();
    let diagonal = ArrayD::from_shape_vec(IxDyn(&[4]), vec![1.0, 0.7, 1.0, 1.3]).unwrap();
    let cases: Vec<(&str, Vec<usize>, AffineMap, Vec<usize>)> = vec![
        ("affine", vec![9, 11, 7], AffineMap::new(&m.view(), &[0.7, -1.4, 2.2], 3).unwrap(), vec![10, 8, 9]),
        ("shift", vec![9, 11, 7], AffineMap::shift(&[2.4, 0.0, -3.6]), vec![9, 11, 7]),
        ("zoom", vec![9, 11, 7], AffineMap::zoom(&[9, 11, 7], &[14, 6, 7], false), vec![14, 6, 7]),
        ("rotate", vec![9, 11, 7], AffineMap::rotate(37.0, [0, 2], &[9, 11, 7], &[9, 11, 7]), vec![9, 11, 7]),
        // 4 axes, two of them left alone (one moved by whole samples).
        ("diagonal", vec![3, 5, 4, 6], AffineMap::new(&diagonal.view(), &[0.0, -0.8, 2.0, 1.3], 4).unwrap(), vec![3, 7, 4, 5]),
    ];
    for (name, dims, map, out) in &cases {
        let x = rand_array(dims);
        let x64 = x.mapv(|v| v as f64);
        let coords = ndimage::coordinates(map, out);
        for mode in MODES {
            for order in 0..=5 {
                let how = sampling(order, mode, -0.3);
                let mut rec = lucent::Recording::new(gpu);
                let xb = rec.upload_f32(&x.view()).unwrap();
                let y = ndimage::record_affine_transform(&mut rec, xb, map, out, &how).unwrap();
                let d = rec.download(y);
                let got = rec.run().unwrap().into_f32(d).unwrap();
                let want = cpu::map_coordinates(&x64, &coords, &how);
                assert_sampled(&got, &want, order, dims.len(), got.len() / 100, &format!("{name} {mode:?} order {order}"));
            }
        }
    }
}

#[test]
fn shift_zoom_and_rotate_of_orders_2_4_and_5() {
    // The front doors (their maps, shapes and prefilter paths) against the reference at their
    // maps' coordinates.
    let gpu = poisoned_gpu();
    let x = rand_array(&[13, 10]);
    let x64 = x.mapv(|v| v as f64);
    for order in [2, 4, 5] {
        for mode in [SplineMode::Constant, SplineMode::Nearest, SplineMode::GridWrap] {
            let how = sampling(order, mode, 0.4);
            let what = format!("order {order} {mode:?}");
            let (map, out) = ndimage::shift_map(&[13, 10], &[1.3, -2.6]).unwrap();
            let want = cpu::map_coordinates(&x64, &ndimage::coordinates(&map, &out), &how);
            assert_sampled(&ndimage::shift(gpu, &x, &[1.3, -2.6], &how).unwrap(), &want, order, 2, 0, &format!("shift {what}"));
            let (map, out) = ndimage::zoom_map(&[13, 10], &[0.7, 1.9], false).unwrap();
            let want = cpu::map_coordinates(&x64, &ndimage::coordinates(&map, &out), &how);
            assert_sampled(&ndimage::zoom(gpu, &x, &[0.7, 1.9], false, &how).unwrap(), &want, order, 2, 0, &format!("zoom {what}"));
            let (map, out) = ndimage::rotate_map(&[13, 10], 28.0, [1, 0], true).unwrap();
            let want = cpu::map_coordinates(&x64, &ndimage::coordinates(&map, &out), &how);
            assert_sampled(&ndimage::rotate(gpu, &x, 28.0, [1, 0], true, &how).unwrap(), &want, order, 2, 0, &format!("rotate {what}"));
        }
    }
}

/// `got` against scipy's values within `tol` relative to max(|value|, 1).
fn assert_close<T: Into<f64> + Copy>(got: impl IntoIterator<Item = T>, want: &[f64], tol: f64, what: &str) {
    let got: Vec<f64> = got.into_iter().map(Into::into).collect();
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol * w.abs().max(1.0), "{what}: element {i}: {g} vs {w}");
    }
}

const LINE: [f64; 20] = [1.0, 2.0, 0.0, 5.0, 3.0, -1.0, 4.0, 2.5, -2.0, 0.5, 7.0, -3.0, 1.5, 2.0, -0.5, 6.0, 1.0, -4.0, 3.5, 2.0];
const PLANE: [[f64; 6]; 5] = [
    [1.0, 2.0, 0.0, 5.0, 3.0, -1.0],
    [4.0, 2.5, -2.0, 0.5, 7.0, -3.0],
    [1.5, 2.0, -0.5, 6.0, 1.0, -4.0],
    [3.5, 2.0, 0.25, -1.5, 2.75, 1.0],
    [0.0, -2.5, 3.0, 4.5, -0.75, 2.0],
];
const COORDS: [[f64; 12]; 2] =
    [[0.3, 2.7, -0.4, 4.2, 5.9, -3.3, 1.0, 3.6, -7.2, 9.1, 2.2, -0.9], [1.2, 4.6, 2.9, -0.7, 5.4, 1.1, 7.8, -2.6, 0.1, 3.3, 12.4, -5.1]];

#[test]
fn orders_2_4_and_5_match_scipy() {
    // The reference to f64 rounding (1e-12 for the prefilter, 1e-9 after sampling: no line
    // here is short enough for scipy's half-sample initial value, gh-24550, to show), the GPU to
    // f32's (2e-5).
    let gpu = poisoned_gpu();
    let line = ArrayD::from_shape_vec(IxDyn(&[20]), LINE.to_vec()).unwrap();
    for &(order, name, want) in FILTER1D_GOLDEN {
        let mode = SplineMode::parse(name).unwrap();
        let what = format!("spline_filter1d order {order} {name}");
        assert_close(cpu::spline_filter1d(&line, order, 0, mode), want, 1e-12, &what);
        assert_close(ndimage::spline_filter1d(gpu, &line.mapv(|v| v as f32), order, 0, mode).unwrap(), want, 2e-5, &what);
    }
    let plane = ArrayD::from_shape_vec(IxDyn(&[5, 6]), PLANE.concat()).unwrap();
    let plane32 = plane.mapv(|v| v as f32);
    for &(order, want) in FILTER_GOLDEN {
        let what = format!("spline_filter order {order}");
        assert_close(cpu::spline_filter(&plane, order, SplineMode::Mirror), want, 1e-12, &what);
        assert_close(ndimage::spline_filter(gpu, &plane32, order, SplineMode::Mirror).unwrap(), want, 2e-5, &what);
    }
    let coords = ArrayD::from_shape_vec(IxDyn(&[2, 12]), COORDS.concat()).unwrap();
    for &(order, name, want) in MAP_GOLDEN {
        let how = sampling(order, SplineMode::parse(name).unwrap(), 0.5);
        let what = format!("map_coordinates order {order} {name}");
        assert_close(cpu::map_coordinates(&plane, &coords, &how), want, 1e-9, &what);
        assert_close(ndimage::map_coordinates(gpu, &plane32, &coords.mapv(|v| v as f32), &how).unwrap(), want, 2e-5, &what);
    }
    for &(order, name, want) in ZOOM_GOLDEN {
        let how = sampling(order, SplineMode::parse(name).unwrap(), 0.5);
        let what = format!("zoom order {order} {name}");
        let (map, out) = ndimage::zoom_map(&[5, 6], &[1.7, 0.6], false).unwrap();
        assert_eq!(out, [8, 4], "{what}");
        assert_close(cpu::map_coordinates(&plane, &ndimage::coordinates(&map, &out), &how), want, 1e-9, &what);
        assert_close(ndimage::zoom(gpu, &plane32, &[1.7, 0.6], false, &how).unwrap(), want, 2e-5, &what);
    }
}

#[test]
fn zoom_in_grid_mode() {
    // scipy's grid_mode: the pixels' outer edges aligned, input (o + 0.5) · n_in / n_out − 0.5;
    // the mode as given (scipy only warns about constant and wrap).
    let gpu = poisoned_gpu();
    let plane = ArrayD::from_shape_vec(IxDyn(&[5, 6]), PLANE.concat()).unwrap();
    let (map, out) = ndimage::zoom_map(&[5, 6], &[1.7, 0.6], true).unwrap();
    assert_eq!(out, [8, 4]);
    assert_eq!((map.matrix[0][0], map.offset[0], map.matrix[1][1], map.offset[1]), (5.0 / 8.0, 0.5 * 5.0 / 8.0 - 0.5, 1.5, 0.25));
    for &(order, name, want) in ZOOM_GRID_GOLDEN {
        let how = sampling(order, SplineMode::parse(name).unwrap(), 0.5);
        let what = format!("zoom grid_mode order {order} {name}");
        assert_close(cpu::map_coordinates(&plane, &ndimage::coordinates(&map, &out), &how), want, 1e-9, &what);
        assert_close(ndimage::zoom(gpu, &plane.mapv(|v| v as f32), &[1.7, 0.6], true, &how).unwrap(), want, 2e-5, &what);
    }
    let x = rand_array(&[7, 10, 5]);
    let x64 = x.mapv(|v| v as f64);
    let (map, out) = ndimage::zoom_map(&[7, 10, 5], &[1.6, 0.7, 1.0], true).unwrap();
    assert_eq!(out, [11, 7, 5]);
    let coords = ndimage::coordinates(&map, &out);
    for mode in MODES {
        for order in 0..=5 {
            let how = sampling(order, mode, 0.2);
            let got = ndimage::zoom(gpu, &x, &[1.6, 0.7, 1.0], true, &how).unwrap();
            assert_sampled(&got, &cpu::map_coordinates(&x64, &coords, &how), order, 3, got.len() / 100, &format!("grid_mode {mode:?} order {order}"));
        }
    }
}

#[test]
fn orders_beyond_5_and_the_texture_sampler_are_refused() {
    let gpu = gpu();
    let x = rand_array(&[6, 7]);
    let c = rand_array(&[2, 5]);
    let m = ArrayD::from_shape_vec(IxDyn(&[2]), vec![1.0, 0.5]).unwrap();
    let one_line = |e: Error, words: &str, what: &str| {
        let text = e.to_string();
        assert!(matches!(e, Error::Invalid(_)) && text.contains(words) && text.lines().count() == 1, "{what}: {text}");
    };
    let six = sampling(6, SplineMode::Constant, 0.0);
    one_line(ndimage::map_coordinates(gpu, &x, &c, &six).unwrap_err(), "order 6", "map_coordinates");
    one_line(ndimage::shift(gpu, &x, &[0.5], &six).unwrap_err(), "order 6", "shift");
    one_line(ndimage::zoom(gpu, &x, &[1.5], false, &six).unwrap_err(), "order 6", "zoom");
    one_line(ndimage::rotate(gpu, &x, 10.0, [1, 0], true, &six).unwrap_err(), "order 6", "rotate");
    one_line(ndimage::affine_transform(gpu, &x, &m.view(), &[], None, &six).unwrap_err(), "order 6", "affine_transform");
    one_line(ndimage::spline_filter(gpu, &x, 6, SplineMode::Mirror).unwrap_err(), "order 6", "spline_filter");
    one_line(ndimage::spline_filter1d(gpu, &x, 6, 0, SplineMode::Mirror).unwrap_err(), "order 6", "spline_filter1d");
    // scipy's spline_filter takes orders 2-5 (spline_filter1d copies for 0 and 1).
    for order in [0, 1] {
        one_line(ndimage::spline_filter(gpu, &x, order, SplineMode::Mirror).unwrap_err(), &format!("order {order}"), "spline_filter");
    }
    // The texture sampler reads orders 0, 1 and 3 only; `auto` takes the buffer for the others.
    for order in [2, 4, 5] {
        let texture = Sampling { sampler: Sampler::Texture, ..sampling(order, SplineMode::Mirror, 0.0) };
        one_line(ndimage::shift(gpu, &x, &[0.5], &texture).unwrap_err(), "texture sampler reads orders 0, 1 and 3", "texture");
        one_line(ndimage::map_coordinates(gpu, &x, &c, &texture).unwrap_err(), "texture sampler reads orders 0, 1 and 3", "texture");
        let auto = Sampling { sampler: Sampler::Auto, ..texture };
        let want = ndimage::shift(gpu, &x, &[0.5], &Sampling { sampler: Sampler::Buffer, ..texture }).unwrap();
        assert_eq!(ndimage::shift(gpu, &x, &[0.5], &auto).unwrap(), want, "auto, order {order}");
    }
}

/// scipy.ndimage.spline_filter1d(LINE, order, mode=mode), scipy 1.17.1, float64: (order, mode, values).
const FILTER1D_GOLDEN: &[(u32, &str, &[f64])] = &[
    (
        2,
        "mirror",
        &[
            0.3802512163055548,
            2.859246351083336,
            -1.5357293228055722,
            6.355129585750096,
            3.404951808304995,
            -2.7848404355800653,
            5.304090805175396,
            2.960295604527686,
            -3.0658644323415145,
            -0.5651090104786,
            10.456518495213114,
            -6.174001960800093,
            2.5874932695874415,
            2.649042343275444,
            -2.481747329240106,
            8.241441632165193,
            1.0330975362489532,
            -6.440026849658912,
            5.607063561704514,
            0.7976454794318288,
        ],
    ),
    (
        2,
        "reflect",
        &[
            0.7432916485295294,
            2.796958460293294,
            -1.5250424102892954,
            6.3532960014424775,
            3.405266401634427,
            -2.784894411249037,
            5.304100065859797,
            2.9602940160902516,
            -3.065864162401306,
            -0.5651090416824159,
            10.456518412495802,
            -6.174001433292395,
            2.5874901872585654,
            2.6490603097410053,
            -2.481852045704597,
            8.242051964486576,
            1.029540258785146,
            -6.419293517197452,
            5.486220844399565,
            1.5019684508000621,
        ],
    ),
    (
        2,
        "grid-wrap",
        &[
            0.5861645380503759,
            2.823917210418528,
            -1.5296678005615458,
            6.3540895929507455,
            3.4051302428570747,
            -2.784871050093195,
            5.304096057702094,
            2.9602947038806264,
            -3.065864280985853,
            -0.5651090179655066,
            10.456518388778893,
            -6.174001314707847,
            2.5874894994681896,
            2.649064317898708,
            -2.481875406860439,
            8.242188123263928,
            1.0287466672768792,
            -6.414668126925202,
            5.459262094274331,
            1.6590955612792158,
        ],
    ),
    (
        4,
        "mirror",
        &[
            -1.8778663401587172,
            5.428744629714219,
            -4.629962740028077,
            8.555000630211893,
            4.004656792231821,
            -5.555637545933937,
            7.6073061215848305,
            2.732453484527965,
            -3.1230760898889116,
            -3.710146304387752,
            17.00484886220859,
            -12.413534171640633,
            5.407553960070338,
            3.480391288534419,
            -5.823400562313988,
            11.527879579241814,
            1.3459894211531171,
            -10.60944778592556,
            10.445017405061641,
            -3.471407608684862,
        ],
    ),
    (
        4,
        "reflect",
        &[
            0.08137855064241832,
            4.72041783871301,
            -4.3740100774816515,
            8.462514585147412,
            4.038075056745635,
            -5.567710846679807,
            7.611662902448062,
            2.7308952524873615,
            -3.12255746117384,
            -3.710210762254144,
            17.004531909810666,
            -12.412478030432833,
            5.404566448931143,
            3.4886824974283956,
            -5.846354655636089,
            11.591407331478033,
            1.1701773504811424,
            -10.122893545599414,
            9.098516318198346,
            0.25338933674616604,
        ],
    ),
    (
        4,
        "grid-wrap",
        &[
            -0.05620516941549807,
            4.77048545213058,
            -4.39210641825043,
            8.469053615773266,
            4.035712206322305,
            -5.566856973444177,
            7.611354147109587,
            2.731007415563779,
            -3.1225996426168185,
            -3.7101909476752692,
            17.004512095231792,
            -12.412435848989857,
            5.404454285854726,
            3.488991252766871,
            -5.847208528871722,
            11.593770181901363,
            1.163638319855286,
            -10.104797204830634,
            9.048448704780775,
            0.39097305680408256,
        ],
    ),
    (
        5,
        "mirror",
        &[
            -4.074884636536717,
            7.751169690315257,
            -7.059218942485013,
            10.158323803442691,
            4.336504002840838,
            -7.4099522867843,
            9.392295321871488,
            1.9497446818005855,
            -2.2625975167825114,
            -6.645339644367723,
            22.024609812519845,
            -17.1696478427016,
            7.828024554275015,
            3.6736037260066854,
            -7.77708336060321,
            13.387330890793402,
            1.8751772087344893,
            -13.787882569784573,
            14.42973123789741,
            -7.314700897440851,
        ],
    ),
    (
        5,
        "reflect",
        &[
            -0.4404482926751782,
            6.1816469633737885,
            -6.383225084976453,
            9.867256528947538,
            4.461813100766583,
            -7.463866284454669,
            9.415414077567371,
            1.940011608377802,
            -2.258920642214489,
            -6.645729187655185,
            22.02200536980088,
            -17.16208814038178,
            7.8098167643177145,
            3.7161709657694346,
            -7.876065274849044,
            13.617265673413621,
            1.3411387569597553,
            -12.547615945946914,
            11.550014401370793,
            -0.6445953575115709,
        ],
    ),
    (
        5,
        "grid-wrap",
        &[
            -0.4457730296364967,
            6.187858530163338,
            -6.386068528512851,
            9.868488141653057,
            4.461282444258436,
            -7.463637688650307,
            9.415315429384542,
            1.940054594549684,
            -2.2589403370220063,
            -6.645717953054783,
            22.021994135200476,
            -17.162068445574263,
            7.809773778145831,
            3.7162696139522646,
            -7.876293870653407,
            13.617796329921765,
            1.3399071442542365,
            -12.544772502410517,
            11.543802834581244,
            -0.6392706205502465,
        ],
    ),
];

/// scipy.ndimage.spline_filter(PLANE, order, mode="mirror"), scipy 1.17.1: (order, values).
const FILTER_GOLDEN: &[(u32, &[f64])] = &[
    (
        2,
        &[
            -1.5139457486106298,
            2.728111755635812,
            -0.8841365499101242,
            10.037491857550423,
            -0.4486577326473065,
            -0.2524082067646232,
            6.062442796714986,
            3.253848080443279,
            -3.4972959852570127,
            -4.652425110077673,
            14.735376057487755,
            -9.039242999554741,
            -0.5495251611998879,
            2.81524215026633,
            -2.841927740398094,
            13.069657625455566,
            -2.4093513456686293,
            -6.030216218110457,
            5.45506140849948,
            3.1936393039133235,
            0.29486747390293394,
            -7.580491206154456,
            6.86455035125909,
            0.17260086330579377,
            0.04287411979089338,
            -6.648230202509936,
            4.875918859974602,
            10.265266062270157,
            -5.693005429673971,
            4.63296259420505,
        ],
    ),
    (
        4,
        &[
            -12.743738997911704,
            8.409001615520001,
            -9.13893865917534,
            35.826922702671204,
            -25.81578378865679,
            17.13951404010422,
            14.637796435914405,
            0.9537980188979763,
            2.135390210128755,
            -32.65532024791833,
            48.128025649983115,
            -36.177655817667905,
            -11.111622676478648,
            8.456307383998027,
            -14.358542862489712,
            42.70452262647239,
            -26.183441851902554,
            5.304853136953916,
            12.075548843615575,
            3.8577134286767283,
            6.555032628246729,
            -35.0902011026531,
            30.94612887187642,
            -14.071824376338657,
            0.15745097296702915,
            -14.89577908184593,
            3.788727915951952,
            36.23468366254805,
            -30.86276935038432,
            21.742801846319665,
        ],
    ),
    (
        5,
        &[
            -30.063730130244096,
            20.56755478173269,
            -27.217244807287834,
            76.43813272677072,
            -68.63713294966067,
            52.181404402101016,
            29.624220270179126,
            -8.731230018844151,
            19.05152648748532,
            -75.6585623594872,
            96.88493299293776,
            -78.1818936887434,
            -27.62825869778571,
            20.247241225827388,
            -34.69573484458355,
            85.73366997116581,
            -66.7069326815236,
            34.67489635601356,
            23.102046750388382,
            -1.1980150059130406,
            21.64203247747374,
            -75.49749660547185,
            70.33181203181942,
            -43.7568733318241,
            -3.895525283583053,
            -17.145868779036395,
            -6.091162606520015,
            74.51813861108775,
            -70.37561317961789,
            52.882993416789404,
        ],
    ),
];

/// scipy.ndimage.map_coordinates(PLANE, COORDS, order=order, mode=mode, cval=0.5), scipy 1.17.1.
const MAP_GOLDEN: &[(u32, &str, &[f64])] = &[
    (2, "constant", &[1.6773736456735762, 0.47813269677930287, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]),
    (
        2,
        "nearest",
        &[
            1.668051876800793,
            0.7724697214626361,
            5.326889763367945,
            -0.1797787519649473,
            2.371488101522051,
            1.8567945966280386,
            -3.008365235731373,
            1.4476112436113417,
            1.1000928077977732,
            3.116667583697032,
            -3.3295021852411426,
            0.9597969843834794,
        ],
    ),
    (4, "constant", &[1.6530259487109087, 0.3749424018892394, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]),
    (
        4,
        "nearest",
        &[
            1.6369609982044357,
            0.6537225493148295,
            5.618055674468141,
            -0.13925988287308608,
            2.541663203963425,
            1.794224220313269,
            -3.0732692881606716,
            1.6917171018440151,
            1.1619705745177986,
            2.8102060976578795,
            -3.258806964623602,
            0.90274847223414,
        ],
    ),
    (5, "constant", &[1.6777279460816872, 0.35598920261748873, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]),
    (
        5,
        "nearest",
        &[
            1.663358532789632,
            0.6121232967595184,
            5.734655194480555,
            -0.1500260652428861,
            2.5771375023571,
            1.7855196822204884,
            -3.1133659030684924,
            1.7717058116011353,
            1.1811474212245967,
            2.735324977180598,
            -3.246187626866143,
            0.8835726145166097,
        ],
    ),
];

/// scipy.ndimage.zoom(PLANE, [1.7, 0.6], order=order, mode=mode, cval=0.5), scipy 1.17.1: shape (8, 4).
const ZOOM_GOLDEN: &[(u32, &str, &[f64])] = &[
    (
        4,
        "mirror",
        &[
            1.0000000000000004,
            0.15227638042250066,
            5.497940765414456,
            -1.0000000000000036,
            2.773710195356196,
            -0.1458778311306427,
            4.453444104022167,
            -1.7437448173878716,
            3.9302632134369104,
            -0.6960922657337874,
            4.363705197036463,
            -3.444623099972374,
            2.0161473391603844,
            -0.8149778291159429,
            6.091002730713996,
            -4.4558707199461285,
            1.9015170842889086,
            -0.027381745885071487,
            4.3353254431095225,
            -2.810645424642751,
            3.5229288045088274,
            0.9529675887897724,
            0.30016779782959246,
            0.3870374448725157,
            1.9812142878635195,
            0.9117143492674342,
            0.6169753565872312,
            1.9420656924618462,
            -3.260602508478594e-16,
            0.5446966389741994,
            2.439449653219513,
            1.9999999999999982,
        ],
    ),
    (
        4,
        "grid-constant",
        &[
            0.9999999999999992,
            0.06309074838748367,
            5.453335553697591,
            -1.0000000000000009,
            3.2489123308373684,
            -0.37860888707659013,
            4.451451837633171,
            -2.0155275939051154,
            3.8256958836355013,
            -0.8070217587054173,
            4.068172343288096,
            -3.371387592770855,
            1.954148735653788,
            -0.872356430095113,
            5.984404139243941,
            -4.360166752970132,
            1.8647224435101264,
            -0.15901337717260514,
            4.470195392486157,
            -2.9042384655590996,
            3.437296810449918,
            0.8336014553094119,
            0.2742771739743548,
            0.3180390048634982,
            2.387274509055091,
            1.0590296109478534,
            0.23870339823271222,
            2.1900396246391076,
            4.881772747546489e-16,
            0.6907453607408474,
            2.551154544042608,
            2.0000000000000013,
        ],
    ),
    (
        5,
        "mirror",
        &[
            1.0000000000000069,
            0.18811567029052742,
            5.5698152564167716,
            -0.9999999999999982,
            2.766789042388251,
            -0.04125065205389237,
            4.588693871936041,
            -1.7209730553427236,
            3.9254428180763203,
            -0.584295976825242,
            4.5859399926593385,
            -3.46323083472052,
            2.0248999826256586,
            -0.7907258563255459,
            6.219921900832868,
            -4.483318051883306,
            1.9163149873273453,
            0.014722398602684972,
            4.35087617476816,
            -2.7823450646752805,
            3.520740319901903,
            1.006697611325358,
            0.3574975924839314,
            0.39189151181935233,
            1.9707012890212734,
            0.8569025448751357,
            0.6005595654302008,
            1.9330870554617188,
            3.6458209597579045e-15,
            0.41334479861586415,
            2.3121461635136265,
            1.9999999999999978,
        ],
    ),
    (
        5,
        "grid-constant",
        &[
            1.0000000000000064,
            0.06545410582186725,
            5.523301261861076,
            -0.9999999999999973,
            3.2996428158185616,
            -0.3078840690994014,
            4.518770971560983,
            -1.9919833513798446,
            3.803793604812106,
            -0.7460719644814331,
            4.217130204002641,
            -3.3828361822599784,
            1.9463119778558096,
            -0.8757638431761183,
            6.095531086862815,
            -4.363562583297202,
            1.871815111808107,
            -0.16119501535226538,
            4.542944306510697,
            -2.9074415155045017,
            3.422664243682871,
            0.8503114788985933,
            0.31984087294371355,
            0.30279788496803955,
            2.42509674863878,
            1.0371908422190104,
            0.12989890006834606,
            2.228487413025196,
            9.657172830916036e-16,
            0.6044694356078795,
            2.4674773379688664,
            1.9999999999999991,
        ],
    ),
];

/// scipy.ndimage.zoom(PLANE, [1.7, 0.6], order=order, mode=mode, cval=0.5, grid_mode=True), scipy
/// 1.17.1: shape (8, 4).
const ZOOM_GRID_GOLDEN: &[(u32, &str, &[f64])] = &[
    (
        1,
        "grid-constant",
        &[
            1.109375,
            0.5,
            3.75,
            0.09375,
            2.2890625,
            -0.1015625,
            3.4609375,
            -0.21875,
            3.5,
            -0.8125,
            2.2890625,
            -0.640625,
            2.25,
            -0.1875,
            3.9296875,
            -2.046875,
            2.09375,
            0.30078125,
            3.12890625,
            -1.44140625,
            3.03125,
            0.65234375,
            -0.11328125,
            1.17578125,
            1.015625,
            1.21484375,
            1.6015625,
            1.3671875,
            -0.4140625,
            1.4140625,
            2.68359375,
            1.16015625,
        ],
    ),
    (
        3,
        "grid-wrap",
        &[
            0.7112521605058149,
            0.27628605582497456,
            5.5621347947554165,
            -0.2996267145330259,
            3.7683118646795113,
            -0.7458883805708448,
            3.8892273296009425,
            -0.5676152316006738,
            4.835405245694249,
            -1.2655096921053794,
            2.997099720348012,
            -1.4167190898548472,
            3.0381820678710945,
            -1.0719280242919909,
            5.67003173828125,
            -3.6179828643798824,
            2.7998435974121096,
            -0.2950925827026354,
            4.298038673400879,
            -2.6080427169799796,
            3.644939838756216,
            0.7054960944435815,
            -0.36382950869473446,
            1.0856847763061535,
            0.8807567423040219,
            1.4017766432328658,
            0.5532183040272127,
            1.9960568341341896,
            -1.2567097577181727,
            1.264373623241078,
            4.158461796153675,
            0.8143078890713775,
        ],
    ),
    (
        4,
        "grid-constant",
        &[
            0.9878990748386967,
            0.10156449735909544,
            5.132828302314087,
            -0.512621753255446,
            3.166791555873609,
            -0.557553229515192,
            4.365296184357671,
            -0.3209457748650607,
            4.247130881803059,
            -1.118186047316684,
            3.075520077548501,
            -1.1315829620298967,
            2.4793594863971085,
            -1.0631864900202863,
            5.899146511483892,
            -3.711248016096904,
            2.455411388258516,
            -0.28950384648838734,
            4.404947085331861,
            -2.639354864847423,
            3.6018798564353145,
            0.7461569439974558,
            -0.46022540884982927,
            1.4372331884423715,
            1.1304453049965417,
            1.3274657703070754,
            0.9430356951198965,
            2.2430889501763236,
            -1.1160976965177651,
            1.163043980829254,
            3.3113317528975976,
            0.908206817275729,
        ],
    ),
    (
        5,
        "constant",
        &[
            0.5,
            0.5,
            0.5,
            0.5,
            2.255538370395587,
            -0.2136842742706208,
            4.50348741108421,
            -0.790915396719945,
            3.921504283478904,
            -0.9188930998529478,
            3.459309926845483,
            -2.0185896441650066,
            2.2208720458568294,
            -1.0160558705410627,
            6.099948459344791,
            -3.8478904211168063,
            2.154220237412903,
            -0.1399263906675484,
            4.274572846009752,
            -2.3940785563790845,
            3.4163395827913834,
            0.8595321717816162,
            -0.3719456133822677,
            1.0740199081112354,
            0.9577339147731537,
            1.098195451573108,
            1.362173598917383,
            1.844492994540235,
            0.5,
            0.5,
            0.5,
            0.5,
        ],
    ),
    (
        5,
        "grid-wrap",
        &[
            0.5977130264262959,
            0.17127617608359313,
            5.910075646970854,
            -0.5161323423587357,
            4.330742963415553,
            -0.7540671122746176,
            3.7471005410712017,
            -0.3882018513967851,
            5.079035560400705,
            -1.260100954721693,
            3.2823372113166376,
            -1.4849242501592155,
            3.104546938757785,
            -1.206959800649432,
            6.009876418052852,
            -3.832592265662489,
            2.9987152115945017,
            -0.41789271931651367,
            4.568728418084887,
            -2.7838721840770573,
            3.722806988059813,
            0.7399095021661979,
            -0.2691720268270488,
            1.068825108570875,
            0.9595098339969744,
            1.4158180234339393,
            0.0708240095073481,
            2.200169565452636,
            -1.5255516871604287,
            1.132415820566781,
            4.340344807593273,
            0.569926203135096,
        ],
    ),
];
