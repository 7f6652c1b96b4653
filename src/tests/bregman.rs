//! Split-Bregman TV (scikit-image's `denoise_tv_bregman`): the f64 reference against values
//! scikit-image 0.26.0 printed; the device (anti-diagonal sweeps) against the reference on
//! awkward sizes, with the same number of sweeps (f32 and f64 may meet the stopping rule one
//! sweep apart: the device's count must be the reference's or one either side).

use crate::tests::common;
use common::*;

use lucent::ops::denoise::bregman::{self, Bregman};
use ndarray::ArrayD;

#[test]
fn reference_is_scikit_images() {
    // denoise_tv_bregman(formula((5, 6)), weight=2.0, max_num_iter=7, eps=1e-3); (formula((4,
    // 5, 2)), weight=1.5, max_num_iter=6, isotropic=False, channel_axis=-1); (formula((6, 4,
    // 3)), weight=3.0, max_num_iter=50, eps=1e-2), printed by scikit-image 0.26.0.
    let two = [
        0.28933256812269964,
        0.20339956714492002,
        0.32395593108116855,
        -0.01660405156270824,
        -0.0874788046358854,
        0.17396805349121236,
        -0.17525493757187838,
        -0.0325778144766203,
        0.35737692370677276,
        0.16078171591764892,
        -0.1595131627252078,
        0.04006178669638353,
        0.19603835222371827,
        0.0911308627206141,
        -0.4358828409420423,
        0.1880356858533652,
        0.43002998091729794,
        0.01911393892096845,
        0.20373135549280294,
        0.28238778587318253,
        0.11899732988252557,
        -0.06045636386646739,
        -0.1589316952114367,
        0.5462169981155299,
        -0.25020693956218354,
        -0.4748951689383397,
        0.2673805111334888,
        0.64475373836825,
        -0.3209797896933837,
        -0.9385168591828289,
    ];
    let channels = [
        -0.08558949031566242,
        -0.10532918640194458,
        -0.026666523092652626,
        0.0477712686371162,
        -0.18425511583834295,
        0.06219528157996846,
        0.3390221315643401,
        0.15139303481168614,
        0.2129121632580535,
        0.3916548241875313,
        -0.0797657525586288,
        0.16523614785089846,
        -0.1171906819826966,
        0.10243437080664314,
        -0.10697330245412975,
        0.08414732784639574,
        0.20806555986140587,
        0.19614634303845474,
        0.032986023781479495,
        0.4124445075821202,
        -0.12137800232489668,
        0.22554182088417493,
        -0.0981717999978003,
        0.09562847687439607,
        -0.07179243594779251,
        0.21020325185358418,
        0.07706760189397116,
        0.04414202423866576,
        -0.08401199655010273,
        -0.5519563445266916,
        -0.22272485544399834,
        0.20611615476570705,
        -0.25715815331690534,
        0.13814600760255977,
        0.4728563430039243,
        0.0962336704476864,
        -0.3824470422058776,
        -0.08913734085263085,
        1.182615295031658,
        -0.3816302925887011,
    ];
    let planes = [
        -0.08978265503527838,
        0.6823657032217952,
        -0.33577430463817637,
        -0.17029293628075054,
        0.8552581456897729,
        -0.032509414843081966,
        -0.3373013567932503,
        0.32997951007422877,
        0.4022421737544772,
        -0.21311591446287945,
        -0.5302995440233621,
        0.6365068380514717,
        0.4333727729348902,
        0.6905529909581498,
        -0.5370437871138842,
        0.30946714283726917,
        0.8199772563011772,
        -0.2812072415473195,
        -0.21892686204281386,
        0.4924400210909531,
        0.19509624775569698,
        -0.423769832133534,
        -0.32307284873654507,
        0.8576158124731472,
        0.689046438220919,
        -0.3673760773581235,
        -0.48032700781495713,
        0.7702476192581321,
        -0.16922437092862475,
        -0.6863381360779166,
        0.5636368069902319,
        0.27678745943615457,
        -0.46271253383605626,
        -0.05355084500550103,
        0.7847428698563237,
        0.23671917166592232,
        -0.5898678212476359,
        -0.4476757554467384,
        0.7718392332676629,
        -0.33332038088576194,
        -0.4468202018015195,
        0.48155895902513896,
        0.5280050661394545,
        -0.24386592215445826,
        -0.08126128211587803,
        0.5935465761579306,
        -0.04579483863443654,
        -0.3530796704939197,
        -0.5006191552020837,
        0.4641464058077964,
        0.29515375080884637,
        -0.530324420281629,
        0.33278317606539454,
        0.3878291417317495,
        -0.48546375146809656,
        -0.23248034837917297,
        0.4097826935770599,
        0.10905475733316093,
        -0.5595265484538552,
        0.23855307276465945,
        0.5440791062637013,
        0.603732497561056,
        -0.6175570978825393,
        -0.038498471601934314,
        0.7487590035133219,
        -0.185333667516035,
        -0.9393480669942891,
        0.3378528435202946,
        0.49306263204686046,
        -0.990012200443408,
        -0.5925744107742131,
        0.9946715114623265,
    ];
    for (shape, o, channel_axis, want) in [
        (&[5usize, 6][..], Bregman { weight: 2.0, max_num_iter: 7, eps: 1e-3, isotropic: true }, None, &two[..]),
        (&[4, 5, 2], Bregman { weight: 1.5, max_num_iter: 6, eps: 1e-3, isotropic: false }, Some(2), &channels[..]),
        (&[6, 4, 3], Bregman { weight: 3.0, max_num_iter: 50, eps: 1e-2, isotropic: true }, None, &planes[..]),
    ] {
        let (got, _) = bregman::cpu(&formula(shape).view(), &o, channel_axis).unwrap();
        assert_eq!(got.shape(), shape);
        let err = got.iter().zip(want).map(|(g, w)| (g - w).abs()).fold(0.0, f64::max);
        assert!(err < 1e-12, "{shape:?}: {err}");
    }
}

#[test]
fn device_equals_the_reference() {
    let gpu = poisoned_gpu();
    for (shape, o, channel_axis) in [
        (&[17usize, 23][..], Bregman { weight: 2.0, max_num_iter: 40, eps: 1e-3, isotropic: true }, None),
        (&[9, 31, 3][..], Bregman { weight: 0.7, max_num_iter: 25, eps: 2e-3, isotropic: false }, Some(2)),
        (&[2, 13, 11][..], Bregman { weight: 5.0, max_num_iter: 100, eps: 1e-3, isotropic: true }, Some(0)),
        (&[12, 2, 5][..], Bregman { weight: 3.0, max_num_iter: 9, eps: 0.0, isotropic: true }, None),
        (&[2, 2][..], Bregman::default(), None),
    ] {
        let x = rand_array(shape);
        let (got, sweeps) = bregman::denoise_tv_bregman(gpu, &x.view(), &o, channel_axis).unwrap();
        let (_, want_sweeps) = bregman::cpu(&to64(&x).view(), &o, channel_axis).unwrap();
        for (g, w) in sweeps.iter().zip(&want_sweeps) {
            assert!(g.abs_diff(*w) <= 1, "{shape:?}: {sweeps:?} sweeps, the reference {want_sweeps:?}");
        }
        // The reference run for exactly the device's sweeps (each channel's own where they run
        // apart).
        let (want, _) = bregman::cpu_sweeps(&to64(&x).view(), &o, channel_axis, Some(&sweeps)).unwrap();
        let err = got.iter().zip(&want).map(|(g, w)| (*g as f64 - w).abs()).fold(0.0, f64::max);
        assert!(err < 2e-5, "{shape:?}: {err}");
    }
}

#[test]
fn bad_input_is_refused() {
    let gpu = gpu();
    let run = |x: &ArrayD<f32>, o: Bregman, c: Option<usize>| bregman::denoise_tv_bregman(gpu, &x.view(), &o, c);
    assert!(run(&rand_array(&[1, 7]), Bregman::default(), None).is_err(), "one row");
    assert!(run(&rand_array(&[7]), Bregman::default(), None).is_err());
    assert!(run(&rand_array(&[2, 3, 4, 5]), Bregman::default(), None).is_err());
    assert!(run(&rand_array(&[6, 7]), Bregman { weight: 0.0, ..Bregman::default() }, None).is_err());
    assert!(run(&rand_array(&[6, 7]), Bregman { eps: f64::NAN, ..Bregman::default() }, None).is_err());
    assert!(run(&rand_array(&[6, 7]), Bregman::default(), Some(2)).is_err());
    let mut nan = rand_array(&[6, 7]);
    nan[[2, 3]] = f32::NAN;
    assert!(run(&nan, Bregman::default(), None).is_err());
}
