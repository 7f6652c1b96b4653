//! The cubic B-spline prefilter (ops::interpolate): the f64 reference against values scipy
//! 1.17.1 printed and against the defining property (the B-spline through the coefficients
//! passes through the samples, with the mode's extension); the GPU against the reference on
//! fresh random arrays of awkward shapes (1, 2, primes, lines beyond the initial sums' horizon),
//! every mode, one axis and all axes, temporaries poisoned.
//!
//! Tolerance: f32 recursions of gain 6 over a stable pole: relative L2 ≤ 1e-5 of the reference
//! (the bound); seen ~1e-7.

mod common;
use common::*;

use lucent::gpu::GpuOptions;
use lucent::kernels::spline_prefilter::Init;
use lucent::ndimage::{self, SplineMode};
use lucent::ops::interpolate::cpu;
use lucent::{Error, Gpu};
use ndarray::{ArrayD, IxDyn};

const MODES: [SplineMode; 7] =
    [SplineMode::Mirror, SplineMode::Reflect, SplineMode::Nearest, SplineMode::Wrap, SplineMode::GridWrap, SplineMode::Constant, SplineMode::GridConstant];

fn poisoned() -> Gpu {
    open(GpuOptions { poison: true, ..GpuOptions::from_env().unwrap() })
}

#[test]
fn reference_matches_scipy() {
    // scipy.ndimage.spline_filter1d(x, 3, mode=name), scipy 1.17.1, float64.
    // 20 samples: scipy's half-sample initial value reads an updated c[0] (gh-24550), an
    // error of order z^(2n), invisible here.
    let x = [1.0, 2.0, 0.0, 5.0, 3.0, -1.0, 4.0, 2.5, -2.0, 0.5, 7.0, -3.0, 1.5, 2.0, -0.5, 6.0, 1.0, -4.0, 3.5, 2.0];
    let golden: [(&str, [f64; 20]); 8] = [
        ("mirror", [-0.3950860046657526, 3.7901720093315054, -2.7656020326602677, 7.272236121309566, 3.6766575474220087, -3.978866310997597, 6.238807696568379, 3.023635524724083, -3.3333497954647098, -1.6902363428652467, 13.094295166925697, -8.686944324837537, 3.653482132424449, 3.0730157951397405, -3.94554531298341, 9.7091654567939, 1.1088834858078207, -8.144699400025182, 7.46991411429291, -0.7349570571464545]),
        ("reflect", [0.48936308181095795, 3.5531845909452113, -2.702101445591802, 7.255221191421998, 3.681216679903811, -3.98008791103724, 6.239134964245147, 3.0235480540566533, -3.3333271804717586, -1.6902393321696219, 13.094284509150246, -8.68689870443136, 3.6533103085751915, 3.073657470130597, -3.9479401890975785, 9.718103286259717, 1.0755270440587177, -8.020211462494586, 7.005318805919629, 0.9989362388160745]),
        ("grid-mirror", [0.48936308181095795, 3.5531845909452113, -2.702101445591802, 7.255221191421998, 3.681216679903811, -3.98008791103724, 6.239134964245147, 3.0235480540566533, -3.3333271804717586, -1.6902393321696219, 13.094284509150246, -8.68689870443136, 3.6533103085751915, 3.073657470130597, -3.9479401890975785, 9.718103286259717, 1.0755270440587177, -8.020211462494586, 7.005318805919629, 0.9989362388160745]),
        ("nearest", [0.48936308181095795, 3.5531845909452113, -2.702101445591802, 7.255221191421998, 3.681216679903811, -3.98008791103724, 6.239134964245147, 3.0235480540566533, -3.3333271804717586, -1.6902393321696219, 13.094284509150246, -8.68689870443136, 3.6533103085751915, 3.073657470130597, -3.9479401890975785, 9.718103286259717, 1.0755270440587177, -8.020211462494586, 7.005318805919629, 0.9989362388160745]),
        ("wrap", [-0.3950860046657526, 3.7901720093315054, -2.7656020326602677, 7.272236121309566, 3.6766575474220087, -3.978866310997597, 6.238807696568379, 3.023635524724083, -3.3333497954647098, -1.6902363428652467, 13.094295166925697, -8.686944324837537, 3.653482132424449, 3.0730157951397405, -3.94554531298341, 9.7091654567939, 1.1088834858078207, -8.144699400025182, 7.46991411429291, -0.7349570571464545]),
        ("grid-wrap", [0.30284636125723613, 3.603161595601259, -2.71549274366227, 7.258809379047821, 3.6802552274709885, -3.979830288931772, 6.2390659282561005, 3.023566575907373, -3.3333322318855907, -1.6902376483650114, 13.094282825345637, -8.686893653017528, 3.653291786724471, 3.073726506119644, -3.9481978112030456, 9.71906473869254, 1.0719388564328955, -8.00682016442412, 6.9553418012635815, 1.1854529593697958]),
        ("constant", [-0.3950860046657526, 3.7901720093315054, -2.7656020326602677, 7.272236121309566, 3.6766575474220087, -3.978866310997597, 6.238807696568379, 3.023635524724083, -3.3333497954647098, -1.6902363428652467, 13.094295166925697, -8.686944324837537, 3.653482132424449, 3.0730157951397405, -3.94554531298341, 9.7091654567939, 1.1088834858078207, -8.144699400025182, 7.46991411429291, -0.7349570571464545]),
        ("grid-constant", [-0.3950860046657526, 3.7901720093315054, -2.7656020326602677, 7.272236121309566, 3.6766575474220087, -3.978866310997597, 6.238807696568379, 3.023635524724083, -3.3333497954647098, -1.6902363428652467, 13.094295166925697, -8.686944324837537, 3.653482132424449, 3.0730157951397405, -3.94554531298341, 9.7091654567939, 1.1088834858078207, -8.144699400025182, 7.46991411429291, -0.7349570571464545]),
    ];
    for (name, want) in golden {
        let got = cpu::spline_filter1d(&ArrayD::from_shape_vec(IxDyn(&[20]), x.to_vec()).unwrap(), 0, SplineMode::parse(name).unwrap());
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() <= 1e-12 * w.abs().max(1.0), "{name}: {got:?} vs {want:?}");
        }
    }
    assert!(SplineMode::parse("bogus").is_err());
}

#[test]
fn reference_interpolates_the_samples() {
    // (c[i-1] + 4 c[i] + c[i+1]) / 6 = x[i], the coefficients extended as the mode extends.
    for n in [2usize, 3, 4, 5, 8, 13, 40] {
        let x: Vec<f64> = random(n).iter().map(|&v| v as f64).collect();
        for (init, ext) in [
            (Init::Mirror, (|j: isize, n: isize| if j < 0 { -j } else if j >= n { 2 * n - 2 - j } else { j }) as fn(isize, isize) -> isize),
            (Init::Reflect, |j, n| if j < 0 { -j - 1 } else if j >= n { 2 * n - 1 - j } else { j }),
            (Init::Wrap, |j, n| j.rem_euclid(n)),
        ] {
            let mut c = x.clone();
            cpu::filter_line(&mut c, init);
            let at = |j: isize| c[ext(j, n as isize) as usize];
            for i in 0..n as isize {
                let back = (at(i - 1) + 4.0 * at(i) + at(i + 1)) / 6.0;
                assert!((back - x[i as usize]).abs() <= 1e-12, "{init:?} n = {n}: sample {i} {back} vs {}", x[i as usize]);
            }
        }
    }
}

#[test]
fn gpu_matches_the_reference() {
    let gpu = poisoned();
    let shapes: &[&[usize]] = &[&[1], &[2], &[7], &[100], &[13, 1], &[5, 8], &[2, 61], &[31, 17, 3], &[4, 3, 5, 6], &[3, 1, 29, 2]];
    for &dims in shapes {
        let x = rand_array(dims);
        let x64 = x.mapv(|v| v as f64);
        for mode in MODES {
            let what = format!("{dims:?} {mode:?}");
            let all = ndimage::spline_filter(&gpu, &x, mode).unwrap();
            check(&all, &cpu::spline_filter(&x64, mode), &what);
            for axis in 0..dims.len() {
                let one = ndimage::spline_filter1d(&gpu, &x, axis, mode).unwrap();
                check(&one, &cpu::spline_filter1d(&x64, axis, mode), &format!("{what} axis {axis}"));
            }
        }
    }
}

fn check(got: &ArrayD<f32>, want: &ArrayD<f64>, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}");
    let err = rel_l2(&got.iter().copied().collect::<Vec<_>>(), &want.iter().copied().collect::<Vec<_>>());
    assert!(err <= 1e-5, "{what}: relative L2 {err:e}");
}

#[test]
fn bad_input_is_reported() {
    let gpu = poisoned();
    let x = rand_array(&[4, 5]);
    assert!(matches!(ndimage::spline_filter1d(&gpu, &x, 2, SplineMode::Mirror), Err(Error::Invalid(_))));
    let mut nan = x.clone();
    nan[[1, 2]] = f32::NAN;
    assert!(matches!(ndimage::spline_filter(&gpu, &nan, SplineMode::Mirror), Err(Error::NonFinite(_))));
    let empty = ArrayD::<f32>::zeros(IxDyn(&[0, 3]));
    assert!(matches!(ndimage::spline_filter(&gpu, &empty, SplineMode::Mirror), Err(Error::Empty(_))));
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
