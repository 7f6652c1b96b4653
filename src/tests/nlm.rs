//! Non-local means in scikit-image's fast mode: the f64 reference against values scikit-image
//! 0.26.0 printed, the device against the reference on awkward sizes (images and volumes,
//! channels, even patch sizes, padding wider than the image, σ), with temporaries poisoned.

use crate::tests::common;
use common::*;

use lucent::denoise::NlMeans;
use lucent::ops::denoise::nlm;
use ndarray::{ArrayD, IxDyn};

/// (planes, rows, cols, channels) of an array with its channels last (`channels`) or none.
fn four(x: &ArrayD<f64>, channels: bool) -> ndarray::Array4<f64> {
    let x = if channels { x.clone() } else { x.clone().insert_axis(ndarray::Axis(x.ndim())) };
    let x = if x.ndim() == 3 { x.insert_axis(ndarray::Axis(0)) } else { x };
    x.into_dimensionality().unwrap()
}

#[test]
fn reference_is_scikit_images() {
    // denoise_nl_means(formula((5, 6)), patch_size=3, patch_distance=2, h=0.8, fast_mode=True),
    // (formula((4, 5, 2)), patch_size=4, patch_distance=3, h=0.6, sigma=0.2, channel_axis=-1)
    // and the volume (formula((3, 4, 5)), patch_size=3, patch_distance=2, h=0.9, sigma=0.1),
    // printed by scikit-image 0.26.0.
    let two = [
        0.13619613199467187,
        0.31257736799292346,
        -0.012382582415749637,
        -0.2508844551662234,
        0.3578538210054877,
        0.20571827263248957,
        -0.016104745058917905,
        -0.04828850228616044,
        0.3463634240117368,
        0.21981817862664424,
        -0.24963385583437864,
        0.07679775771322107,
        0.263677773984223,
        0.061696103175115174,
        -0.24291416959116852,
        0.15793418898027214,
        0.3542113720347533,
        -0.17935702007411117,
        -0.08836052150561803,
        0.24913443038483774,
        0.06291187843134724,
        -0.2076403285203882,
        -0.13665880078788453,
        0.41532194053260296,
        0.13647455254646906,
        -0.14395047432219307,
        0.056663976534198794,
        0.38135428439776875,
        0.08991132219170525,
        -0.23588861812953354,
    ];
    let rgb = [
        0.18474673633729555,
        0.38078827687561223,
        -0.134017690809161,
        -0.22217453759917385,
        0.24649559815930316,
        0.28446676591301695,
        -0.16935694670741447,
        -0.08580934538533866,
        0.317455116366461,
        0.19088631314395355,
        -0.2880078517276627,
        0.0352559404961077,
        0.28825090026888894,
        0.15615293151841575,
        -0.2543700135577744,
        0.12649812382780792,
        0.3683168141261257,
        0.06528964209723463,
        -0.28639429172393294,
        0.1557488876727129,
        0.16391730748349992,
        -0.08993809725711,
        -0.11871384846453187,
        0.3338982564964185,
        0.10171256914108867,
        -0.13216316184658994,
        0.04325492782610449,
        0.3564051800253026,
        0.0341132246937002,
        -0.15267517785977125,
        0.32008526056179326,
        0.18726957493821986,
        -0.27475549079053435,
        -0.05366421359526196,
        0.41327710367919857,
        0.11817351268687608,
        -0.3578119598611831,
        -0.04169862686097077,
        0.4946887597053636,
        0.10596347099516888,
    ];
    let volume = [
        0.015847722740508052,
        0.13959196290982037,
        0.10872132776985674,
        -0.09173725068090625,
        0.03197474138880292,
        0.15824479945689865,
        0.0498988034863824,
        -0.06743393213045176,
        0.07243619858547166,
        0.17489578578887596,
        -0.030311105889470384,
        -0.014355586958753804,
        0.1084059457104849,
        0.13612987046911157,
        -0.11118018521847024,
        0.06101170543927805,
        0.13210385517651635,
        0.0018577506930083823,
        -0.07159938090066179,
        0.17445966923657397,
        0.15132004352101777,
        0.012290165063181896,
        -0.07955066591633847,
        0.12885491929754814,
        0.124143873855722,
        -0.058437227730706115,
        0.02825134146833332,
        0.1628127588501334,
        0.0953133038221197,
        -0.0759644256947326,
        0.03221793341545434,
        0.14318506602591555,
        0.018414078494384666,
        -0.046723957514199166,
        0.18060948149372855,
        0.06422633097625527,
        -0.03817198148444064,
        0.035376128331348115,
        0.16017481314971774,
        -0.06539139647345259,
        -0.027148182426140127,
        0.12917268212604294,
        0.16711397559393937,
        -0.016837735465576025,
        -0.0278069643024395,
        0.15656539127591357,
        0.10083795003565962,
        -0.051236102392399695,
        0.034630385310664,
        0.1919161818297864,
        0.03459843932086254,
        -0.008635914487161764,
        0.10043304345910978,
        0.16153967761753094,
        -0.08860062718730222,
        0.028179107282970704,
        0.1478276234006247,
        0.03720871707642409,
        -0.05643949159681319,
        0.15848202723925042,
    ];
    let cases: [(&[usize], bool, bool, NlMeans, &[f64]); 3] = [
        (&[5, 6], false, false, NlMeans { patch_size: 3, patch_distance: 2, h: 0.8, ..NlMeans::default() }, &two),
        (&[4, 5, 2], true, false, NlMeans { patch_size: 4, patch_distance: 3, h: 0.6, sigma: 0.2, ..NlMeans::default() }, &rgb),
        (&[3, 4, 5], false, true, NlMeans { patch_size: 3, patch_distance: 2, h: 0.9, sigma: 0.1, ..NlMeans::default() }, &volume),
    ];
    for (shape, channels, is_volume, o, want) in cases {
        let got = nlm::cpu(&four(&formula(shape), channels).view(), &o, is_volume).unwrap();
        for (g, w) in got.iter().zip(want) {
            // Their integral images sum in another order than the direct box sums here.
            assert!((g - w).abs() <= 1e-13, "{shape:?}: {g} against {w}");
        }
    }
}

#[test]
fn device_is_the_reference() {
    // h large enough that no distance comes near the cutoff of 5 (where f32 and f64 could part:
    // one weight of e^-5 in or out), except the two-level image, whose distances are either
    // small or far beyond it.
    let gpu = poisoned_gpu();
    let two_level = |shape: &[usize]| rand_array(shape).mapv(|v| if v > 0.0 { 1.0 + 0.01 * v } else { 0.01 * v });
    let cases: Vec<(ArrayD<f32>, Option<usize>, NlMeans)> = vec![
        (rand_array(&[13, 17]), None, NlMeans { h: 1.0, ..NlMeans::default() }),
        (rand_array(&[9, 11, 3]), Some(2), NlMeans { patch_size: 4, patch_distance: 5, h: 1.2, sigma: 0.1, ..NlMeans::default() }),
        (rand_array(&[2, 10, 7]), Some(0), NlMeans { patch_size: 5, patch_distance: 3, h: 0.9, ..NlMeans::default() }),
        (two_level(&[23, 19]), None, NlMeans::default()),
        (rand_array(&[6, 5]), None, NlMeans { patch_size: 1, patch_distance: 4, h: 0.7, ..NlMeans::default() }),
        (rand_array(&[5, 6, 7]), None, NlMeans { patch_size: 3, patch_distance: 2, h: 1.0, ..NlMeans::default() }),
        (rand_array(&[4, 5, 6, 2]), Some(3), NlMeans { patch_size: 4, patch_distance: 1, h: 1.1, sigma: 0.05, ..NlMeans::default() }),
    ];
    for (x, channel_axis, o) in cases {
        let got = lucent::denoise::denoise_nl_means(gpu, &x, &o, channel_axis).unwrap();
        // The reference on (planes, rows, cols, channels).
        let wide = x.mapv(f64::from);
        let moved = match channel_axis {
            Some(c) => {
                let mut axes: Vec<usize> = (0..wide.ndim()).filter(|&a| a != c).collect();
                axes.push(c);
                wide.view().permuted_axes(axes).to_owned()
            }
            None => wide.clone(),
        };
        let is_volume = moved.ndim() - usize::from(channel_axis.is_some()) == 3;
        let want = nlm::cpu(&four(&moved, channel_axis.is_some()).view(), &o, is_volume).unwrap().into_dyn();
        let want = if is_volume { want } else { want.index_axis_move(ndarray::Axis(0), 0) };
        let spatial = want.ndim() - 1;
        let want = match channel_axis {
            Some(c) => {
                let mut axes: Vec<usize> = (0..spatial).collect();
                axes.insert(c, spatial);
                want.permuted_axes(axes).as_standard_layout().to_owned()
            }
            None => want.index_axis_move(ndarray::Axis(spatial), 0),
        };
        assert_rel_l2(&got, &want, 2e-6, &format!("{:?}, channel axis {channel_axis:?}, {o:?}", x.shape()));
    }
    // Refusals: h 0, a negative σ, a 4-D image, NaN.
    let x = rand_array(&[6, 7]);
    for o in [NlMeans { h: 0.0, ..NlMeans::default() }, NlMeans { sigma: -1.0, ..NlMeans::default() }] {
        assert!(lucent::denoise::denoise_nl_means(gpu, &x, &o, None).is_err(), "{o:?}");
    }
    assert!(lucent::denoise::denoise_nl_means(gpu, &rand_array(&[2, 3, 4, 5]), &NlMeans::default(), None).is_err());
    let mut bad = x.clone();
    bad[[2, 3]] = f32::NAN;
    assert!(lucent::denoise::denoise_nl_means(gpu, &bad, &NlMeans::default(), None).is_err());
}

#[test]
fn slow_mode_is_scikit_images() {
    // fast_mode=False: (formula((5, 6)), patch_size=3, patch_distance=2, h=0.8), the volume
    // (formula((3, 4, 5)), patch_size=3, patch_distance=1, h=0.9, sigma=0.1) and two channels
    // (formula((4, 5, 2)), patch_size=4, patch_distance=2, h=0.6, sigma=0.2, channel_axis=-1),
    // printed by scikit-image 0.26.0; then the device against the reference.
    let two = [
        0.3510154056688633,
        0.7459157549828357,
        -0.1590273805474956,
        -0.802550637935465,
        0.6112859268073219,
        0.3755786581525005,
        -0.24395874631630757,
        -0.309546870690603,
        0.6691037646363486,
        0.39949956019937327,
        -0.5445831154068749,
        0.1200672146669636,
        0.4897855480344514,
        0.15113859552171682,
        -0.7298750269357097,
        0.35408175841392636,
        0.7748549278855287,
        -0.2849412244450929,
        -0.34104314892607174,
        0.5248315937098449,
        0.23250462391811572,
        -0.4762146058004969,
        -0.4178977373742081,
        0.9075655350327768,
        0.3188786245926577,
        -0.5977495518845136,
        0.26104531369455064,
        0.8558230795653933,
        -0.1900433171391103,
        -0.741873306381113,
    ];
    let volume = [
        0.10337567315633805,
        0.6719010546217521,
        -0.08122969359996786,
        -0.7427493316416683,
        0.6069215604768005,
        0.35512764323421353,
        -0.2853672941926416,
        -0.26332415339421367,
        0.643491856698067,
        0.4571796062590985,
        -0.4177609548689396,
        0.018999794007058354,
        0.4999143280887418,
        0.1319995414130192,
        -0.7485095136550766,
        0.3564447907011473,
        0.6147023259416146,
        -0.13447587600666194,
        -0.4044665981020545,
        0.7762606960798589,
        0.31489359443667103,
        -0.34292513932981417,
        -0.36625735223038347,
        0.7087794346311956,
        0.2421596771316363,
        -0.41449127439460853,
        0.24809221834819706,
        0.6562422865796675,
        -0.21517335596624595,
        -0.649453719675138,
        0.4975005573057911,
        0.26624960089149724,
        -0.39482736302784877,
        -0.1983011548230553,
        0.7175247124699925,
        0.1951334235305354,
        -0.5078509437017399,
        0.0035404080726789654,
        0.6303383984784641,
        -0.5107236945396315,
        -0.49872287017311284,
        0.5458302549494546,
        0.6751276778671269,
        -0.35265826095341674,
        -0.27084259336884176,
        0.5167251447570315,
        0.036763245678366356,
        -0.42625193775432907,
        -0.08035061065069458,
        0.5668665533764666,
        -0.08727479051600072,
        -0.426558149674614,
        0.2653293775346586,
        0.4015174064846811,
        -0.4958907426121483,
        -0.29763633338865964,
        0.3532385162419719,
        0.20163159771159445,
        -0.43670029198338484,
        0.2933517878276266,
    ];
    let rgb = [
        0.3610958032409808,
        0.865759053988113,
        -0.2886412294072538,
        -0.6884660263761665,
        0.5994685743855811,
        0.6251904151067308,
        -0.419558922738363,
        -0.45951244529852975,
        0.7917273276924449,
        0.36970803867715535,
        -0.7660720568496849,
        0.09213410400530664,
        0.7426009760280838,
        0.10287023200126771,
        -0.7174874821873507,
        0.27754598185343027,
        0.8071962742521875,
        -0.12004549717394104,
        -0.6338289667779887,
        0.49242329018308595,
        0.24319650078172228,
        -0.5948654786731041,
        -0.17707740536584796,
        0.9052533776663675,
        0.13604474201188288,
        -0.7056452278606272,
        0.03473151780699828,
        0.9444109760762412,
        -0.055883579311127106,
        -0.8625175319195397,
        0.9130400760990044,
        0.35115551126861244,
        -0.8468559012359491,
        -0.14771406541737583,
        1.0082697979379498,
        0.1455673912835623,
        -0.9414705755792002,
        -0.12809174725880834,
        1.1746976589431883,
        -0.16438970525520913,
    ];
    let slow = |patch_size, patch_distance, h, sigma| NlMeans { patch_size, patch_distance, h, sigma, fast_mode: false };
    let cases: [(&[usize], bool, bool, NlMeans, &[f64]); 3] = [
        (&[5, 6], false, false, slow(3, 2, 0.8, 0.0), &two),
        (&[3, 4, 5], false, true, slow(3, 1, 0.9, 0.1), &volume),
        (&[4, 5, 2], true, false, slow(4, 2, 0.6, 0.2), &rgb),
    ];
    let gpu = poisoned_gpu();
    for (shape, channels, is_volume, o, want) in cases {
        let x = formula(shape);
        let reference = nlm::cpu(&four(&x, channels).view(), &o, is_volume).unwrap();
        for (g, w) in reference.iter().zip(want) {
            assert!((g - w).abs() <= 1e-13, "{shape:?}: {g} against {w}");
        }
        let got = lucent::denoise::denoise_nl_means(gpu, &x.mapv(|v| v as f32), &o, channels.then_some(shape.len() - 1)).unwrap();
        let want = ArrayD::from_shape_vec(IxDyn(shape), want.to_vec()).unwrap();
        assert_rel_l2(&got, &want, 2e-6, &format!("device, {shape:?}"));
    }
    // Refusals: a one-pixel patch, a volume with channels.
    assert!(lucent::denoise::denoise_nl_means(gpu, &rand_array(&[6, 7]), &slow(1, 2, 0.5, 0.0), None).is_err());
    assert!(lucent::denoise::denoise_nl_means(gpu, &rand_array(&[4, 5, 6, 2]), &slow(3, 1, 0.5, 0.0), Some(3)).is_err());
}
