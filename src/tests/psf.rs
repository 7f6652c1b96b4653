//! PSF models (psfmodels 0.3.3's `make_psf`): the f64 twin against values psfmodels printed
//! (sums, sums of squares and picked pixels of vectorial, scalar and Gaussian PSFs over water,
//! oil and silicone objectives, index mismatches, odd and even sizes, counts and positions of
//! planes, oversampling 1-3, normalised or not), the GPU against the twin within 1e-4 relative
//! L2 (output poisoned), and bad parameters refused.

use crate::tests::common;
use common::*;

use lucent::psf::{self, Model, Planes, PsfOptions};
use lucent::Error;

type Golden = (PsfOptions, [usize; 3], f64, f64, &'static [(usize, f64)]);

fn golden() -> Vec<Golden> {
    let d = PsfOptions::default;
    vec![
        (
            PsfOptions { z: Planes::Count { nz: 7, dz: 0.1 }, nx: 9, ..d() },
            [7, 9, 9],
            146.30736211281177,
            61.348622911726714,
            &[
                (13, 0.21226657583330671),
                (561, 0.1237905550169132),
                (542, 0.23073673299715255),
                (504, 0.1068896265285741),
                (485, 0.053560822734550956),
                (447, 0.4779732877569821),
                (283, 1.0),
            ],
        ),
        (
            PsfOptions {
                z: Planes::Positions(vec![4.0, 4.6, 5.0, 5.3, 6.1]),
                nx: 10,
                dxy: 0.1,
                na: 1.1,
                ni: 1.33,
                ni0: 1.33,
                ns: 1.33,
                pz: 5.0,
                wvl: 0.52,
                model: Model::Scalar,
                ..d()
            },
            [5, 10, 10],
            27.716755664038033,
            7.973602290597602,
            &[
                (13, 0.03370764257701098),
                (432, 0.025146171124666515),
                (351, 0.04465433240679849),
                (270, 0.0020882835406118433),
                (189, 0.007092239708374796),
                (27, 0.033954572848011136),
                (244, 1.0),
            ],
        ),
        (
            PsfOptions { z: Planes::Count { nz: 6, dz: 0.3 }, nx: 12, dxy: 0.065, na: 1.49, ns: 1.33, pz: 12.0, oversample_factor: 2, ..d() },
            [6, 12, 12],
            118.07768595873429,
            38.23538792956317,
            &[
                (13, 0.050064709892048594),
                (156, 0.045879257080389195),
                (299, 0.01556678321544398),
                (442, 0.027820586636940155),
                (728, 0.021013521053972264),
                (150, 0.07384243011506166),
                (785, 1.0),
            ],
        ),
        (
            PsfOptions {
                z: Planes::Count { nz: 5, dz: 0.5 },
                nx: 11,
                dxy: 0.1,
                na: 1.3,
                ni: 1.406,
                ni0: 1.406,
                ns: 1.38,
                pz: 30.0,
                oversample_factor: 1,
                model: Model::Scalar,
                ..d()
            },
            [5, 11, 11],
            34.0374587711021,
            7.536279361246683,
            &[
                (13, 0.020735486560983597),
                (67, 0.025756129562301815),
                (121, 0.012374538201106875),
                (175, 0.023689631146275623),
                (283, 0.030523451171003944),
                (391, 0.009682250950302234),
                (423, 1.0),
            ],
        ),
        (
            PsfOptions {
                z: Planes::Count { nz: 5, dz: 0.4 },
                nx: 13,
                dxy: 0.08,
                na: 1.3,
                ni: 1.518,
                tg: 175.0,
                ng: 1.52,
                ns: 1.36,
                pz: 3.0,
                normalize: false,
                ..d()
            },
            [5, 13, 13],
            255.92868863142905,
            268.5691911353716,
            &[
                (13, 0.10452819061559308),
                (327, 0.0279910847420026),
                (641, 0.2793401043797969),
                (110, 0.5743690703122012),
                (424, 1.4732776218129022),
                (521, 0.13275268220741704),
                (253, 4.510199466315433),
            ],
        ),
        (
            PsfOptions { z: Planes::Count { nz: 5, dz: 0.3 }, nx: 9, dxy: 0.1, na: 0.5, ni: 1.0, ni0: 1.0, model: Model::Gaussian, ..d() },
            [5, 9, 9],
            183.47127957682196,
            105.24454475229389,
            &[
                (13, 0.5126025632089235),
                (237, 0.3118722498335661),
                (56, 0.548967770400943),
                (99, 0.25066711968765965),
                (323, 0.11012970517618768),
                (366, 0.722122947350807),
                (202, 1.0),
            ],
        ),
        (
            PsfOptions { z: Planes::Count { nz: 4, dz: 0.2 }, nx: 8, dxy: 0.06, na: 1.2, ni: 1.33, ni0: 1.33, model: Model::Gaussian, ..d() },
            [4, 8, 8],
            70.66702287168387,
            34.668126482835845,
            &[
                (13, 0.19758250843214945),
                (252, 0.10782755790088272),
                (235, 0.4900908371435842),
                (201, 0.10782755790088272),
                (184, 0.026417252509174274),
                (150, 0.29782595917225385),
                (91, 1.0),
            ],
        ),
    ]
}

#[test]
fn the_reference_equals_psfmodels() {
    for (o, shape, sum, squares, picks) in golden() {
        let what = format!("{:?} {:?}", o.model, o.z);
        let psf = psf::cpu::make_psf(&o).unwrap();
        assert_eq!(psf.shape(), shape, "{what}");
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
        assert!(close(psf.sum(), sum), "{what}: sum {} vs psfmodels' {sum}", psf.sum());
        let sq: f64 = psf.iter().map(|v| v * v).sum();
        assert!(close(sq, squares), "{what}: sum of squares {sq} vs {squares}");
        for &(i, v) in picks {
            let got = psf.iter().nth(i).copied().unwrap();
            assert!(close(got, v), "{what}: element {i} is {got}, psfmodels' {v}");
        }
    }
}

#[test]
fn the_gpu_equals_the_reference_within_1e_4() {
    let mut cases: Vec<PsfOptions> = golden().into_iter().map(|g| g.0).collect();
    let d = PsfOptions::default;
    // Awkward sizes and far planes: a prime width, 3 sub-pixels, 40 µm deep in water with an oil
    // objective (strong spherical aberration), a plane 4 µm from focus.
    cases.push(PsfOptions { z: Planes::Positions(vec![36.0, 39.7, 40.0, 44.0]), nx: 17, dxy: 0.07, na: 1.4, ns: 1.33, pz: 40.0, ..d() });
    cases.push(PsfOptions {
        z: Planes::Count { nz: 3, dz: 0.25 },
        nx: 23,
        dxy: 0.04,
        na: 0.8,
        ni: 1.0,
        ni0: 1.0,
        ns: 1.0,
        pz: 0.0,
        wvl: 0.45,
        model: Model::Scalar,
        ..d()
    });
    for o in cases {
        let what = format!("{:?} nx {} {:?}", o.model, o.nx, o.z);
        let want = psf::cpu::make_psf(&o).unwrap();
        let got = psf::make_psf(poisoned_gpu(), &o).unwrap();
        assert_eq!(got.shape(), want.shape(), "{what}");
        let err = rel_l2(got.as_slice().unwrap(), want.as_slice().unwrap());
        eprintln!("{what}: relative L2 error {err:e}");
        assert!(err <= 1e-4, "{what}: relative L2 error {err:e}");
    }
}

#[test]
fn bad_parameters_are_refused() {
    let d = PsfOptions::default;
    let bad = [
        (PsfOptions { na: 1.6, ..d() }, "less than the immersion"),
        (PsfOptions { dxy: 0.0, ..d() }, "dxy"),
        (PsfOptions { pz: -1.0, ..d() }, "pz"),
        (PsfOptions { wvl: f64::NAN, ..d() }, "not finite"),
        (PsfOptions { ns: -1.33, ..d() }, "from 1 to 5"),
        (PsfOptions { wvl: 1e-45, ..d() }, "intervals"),
        (PsfOptions { tg: 1e30, ..d() }, "at most"),
        (PsfOptions { tg: -5.0, ..d() }, "negative"),
        (PsfOptions { nx: 0, ..d() }, "nx"),
        (PsfOptions { oversample_factor: 0, ..d() }, "oversample_factor"),
        (PsfOptions { z: Planes::Count { nz: 0, dz: 0.1 }, ..d() }, "planes"),
        (PsfOptions { z: Planes::Positions(vec![0.0, f64::INFINITY]), ..d() }, "within ±"),
        (PsfOptions { z: Planes::Positions(vec![1e9]), ..d() }, "within ±"),
        (PsfOptions { z: Planes::Positions(vec![9e4]), ..d() }, "too far"),
        (PsfOptions { nx: 8000, z: Planes::Count { nz: 4000, dz: 0.1 }, ..d() }, "host memory"),
    ];
    for (o, words) in bad {
        for result in [psf::make_psf(gpu(), &o).map(drop), psf::cpu::make_psf(&o).map(drop)] {
            assert!(matches!(&result, Err(Error::Invalid(m)) if m.contains(words)), "{words}: {result:?}");
        }
    }
}

#[test]
fn the_record_form_gives_the_model_at_its_own_scale() {
    for model in [Model::Vectorial, Model::Gaussian] {
        let o = PsfOptions { z: Planes::Count { nz: 3, dz: 0.2 }, nx: 9, model, normalize: false, ..PsfOptions::default() };
        let mut rec = lucent::Recording::new(poisoned_gpu());
        let planes = psf::record_psf(&mut rec, &o).unwrap();
        let d = rec.download(planes);
        let got = rec.run().unwrap().into_f32(d).unwrap();
        let want = psf::make_psf(poisoned_gpu(), &o).unwrap().into_dyn();
        assert_eq!(got, want, "{model:?}");
    }
    let mut rec = lucent::Recording::new(gpu());
    let refused = psf::record_psf(&mut rec, &PsfOptions::default());
    assert!(matches!(&refused, Err(Error::Invalid(m)) if m.contains("normalize")), "{refused:?}");
}

/// psfmodels.confocal_psf(5, nx, pinhole_au=1.0, dxy=0.1, dz=0.3, NA=1.2, ex_wvl=0.488,
/// em_wvl=0.52, ns=ni=ni0=1.33, model='scalar') printed by psfmodels 0.3.3 (odd and even nx:
/// the pinhole's centre as psfmodels puts it): the f64 twin within 1e-7 relative, the GPU
/// within 1e-4 relative L2 of the twin; a pinhole past the threshold gives the excitation PSF.
#[test]
fn confocal_equals_psfmodels() {
    let c = psf::Confocal { ex_wvl: 0.488, em_wvl: 0.52, pinhole_au: 1.0, ..Default::default() };
    let golden: [(usize, [f64; 7], [f64; 7], f64); 2] = [
        (
            15,
            [0.01968315, 0.24127455, 2.94712816, 5.48855744, 2.94712816, 0.24127455, 0.01968315],
            [0.05354288, 0.07892219, 0.056126, 0.04140883, 0.056126, 0.07892219, 0.05354288],
            58.507576879259744,
        ),
        (
            14,
            [0.01520047, 0.98292312, 4.527285, 4.12136068, 0.8400869, 0.04656817, 0.03487969],
            [0.07908577, 0.08034846, 0.05953692, 0.07084573, 0.10681232, 0.0915182, 0.04850167],
            63.905398870031604,
        ),
    ];
    for (nx, middle, first, total) in golden {
        let o = PsfOptions {
            z: Planes::Count { nz: 5, dz: 0.3 },
            nx,
            dxy: 0.1,
            na: 1.2,
            ns: 1.33,
            ni: 1.33,
            ni0: 1.33,
            model: Model::Scalar,
            ..Default::default()
        };
        let want = psf::cpu::confocal_psf(&o, &c).unwrap();
        for (plane, values) in [(2, middle), (0, first)] {
            for (k, v) in values.iter().enumerate() {
                let got = want[[plane, nx / 2, nx / 2 - 3 + k]];
                assert!((got - v).abs() <= 1e-7 * v.abs().max(1.0), "nx {nx} plane {plane} column {k}: {got} vs psfmodels' {v}");
            }
        }
        assert!((want.sum() - total).abs() < 1e-6 * total, "nx {nx}: sum {} vs {total}", want.sum());
        let got = psf::confocal_psf(gpu(), &o, &c).unwrap();
        let err = rel_l2(got.as_slice().unwrap(), want.as_slice().unwrap());
        assert!(err < 1e-4, "nx {nx}: GPU relative L2 {err:e}");
    }
    let o =
        PsfOptions { z: Planes::Count { nz: 3, dz: 0.3 }, nx: 9, dxy: 0.1, na: 1.2, ns: 1.33, ni: 1.33, ni0: 1.33, model: Model::Scalar, ..Default::default() };
    let open = psf::Confocal { pinhole_au: 50.0, ..c };
    assert_eq!(psf::cpu::confocal_psf(&o, &open).unwrap(), psf::cpu::make_psf(&PsfOptions { wvl: 0.488, ..o.clone() }).unwrap());
    for bad in [psf::Confocal { pinhole_au: -1.0, ..c }, psf::Confocal { em_wvl: 0.0, ..c }, psf::Confocal { ex_wvl: f64::NAN, ..c }] {
        assert!(matches!(psf::confocal_psf(gpu(), &o, &bad), Err(Error::Invalid(_))), "{bad:?}");
    }
}
