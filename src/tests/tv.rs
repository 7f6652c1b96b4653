//! Chambolle's total-variation denoising: the f64 reference against scikit-image's printed
//! results, the GPU steps against the reference on awkward sizes (1 to 3 axes, batches), with
//! temporaries poisoned.

use crate::tests::common;
use common::*;

use lucent::graph::Recording;
use lucent::ops::denoise::tv;
use ndarray::{ArrayD, IxDyn};

/// scikit-image 0.26's test input: sin(1.7 i) + 0.3 cos(0.37 i²) in C order.
#[test]
fn reference_is_scikit_images() {
    // denoise_tv_chambolle(formula((5, 7)), weight=0.3) (eps 2e-4, 200 iterations at most: it
    // stops on the energy) and formula((3, 4, 5)) with weight 0.15, eps=0, max_num_iter=7,
    // printed by scikit-image 0.26.0.
    let two = [
        0.2792378171083267,
        0.6792067715998483,
        -0.041992436849357745,
        -0.5674704876017003,
        0.23940366476005603,
        0.25247821952617605,
        0.10601465897390394,
        -0.1621413174411376,
        0.38638230293020237,
        0.2930639121114388,
        -0.181357693854291,
        0.119671149749458,
        0.2881908214310439,
        0.2853965882870587,
        -0.6905101565944456,
        0.21584696126264197,
        0.5450177231936447,
        0.01510953249392516,
        -0.03701000711211899,
        0.2911776085839852,
        0.2926572734815076,
        -0.46808032796997595,
        -0.3661691151795981,
        0.5212872282510924,
        0.1475108634099841,
        -0.21738230988887275,
        0.2869239364828001,
        0.7903057618988089,
        -0.4938584894215169,
        -0.5264655490461668,
        0.43910909292827727,
        0.2865942611483586,
        -0.2899899673765417,
        -0.05632631259989038,
        0.7903506675735466,
    ];
    let three = [
        0.3449507781951563,
        0.8845092932863887,
        -0.26943371770227975,
        -0.8201967479137823,
        0.5055744885664639,
        0.26763254335826914,
        -0.14384413561525533,
        -0.16147530351962988,
        0.4951821594337142,
        0.33581762676372623,
        -0.38689335447493,
        0.12239879689138594,
        0.3422007820934011,
        0.0910240100478,
        -0.7921595476153617,
        0.36844374519693585,
        0.6736433555422406,
        -0.14215636406807458,
        -0.166646229259178,
        0.429960045277328,
        0.061132604519645695,
        -0.27018514694735735,
        -0.3152783626228351,
        0.7228715398646324,
        0.2647358864302085,
        -0.4488013869077009,
        0.19194458226781433,
        0.6266485803316535,
        -0.1318481287885843,
        -0.545186663170809,
        0.5251903785158643,
        0.19250623363749056,
        -0.3880571002021017,
        -0.05633060062529863,
        0.6683609659533525,
        0.27098953251716296,
        -0.5610444776898617,
        -0.12418998033603922,
        0.6971592154806904,
        -0.18005947649594423,
        -0.5268011612350747,
        0.5194093731845948,
        0.6377234190703214,
        -0.1828155580217241,
        -0.12481998167592373,
        0.4950079345115328,
        0.1294040807502933,
        -0.24627118860536823,
        -0.12622083780239016,
        0.28229182248335916,
        -0.06060648857961476,
        -0.2974789473126187,
        0.1706235361750984,
        0.19864246955708714,
        -0.23899723035458065,
        -0.19577706629001101,
        0.2192261490005628,
        0.19124957597018044,
        -0.2313270632944694,
        -0.20079735302733287,
    ];
    for (shape, weight, eps, iterations, want) in [(&[5usize, 7][..], 0.3, 2e-4, 200, &two[..]), (&[3, 4, 5], 0.15, 0.0, 7, &three[..])] {
        let got = tv::cpu(&formula(shape).view(), weight, eps, iterations).unwrap();
        let worst = got.iter().zip(want).map(|(g, w)| (g - w).abs()).fold(0.0, f64::max);
        assert!(worst < 1e-12, "{shape:?}: differs from scikit-image by {worst}");
    }
    // Not the input: the reference does denoise.
    let moved = tv::cpu(&formula(&[5, 7]).view(), 0.3, 2e-4, 200).unwrap();
    assert!((&moved - &formula(&[5, 7])).iter().any(|d| d.abs() > 0.1));
}

#[test]
fn device_steps_match_the_reference() {
    // (shape, axes denoised, weight, steps): a batch of 2D images, 1D lines, odd 3D volumes.
    for (shape, ndim, weight, steps) in [(&[2usize, 23, 37][..], 2, 0.2f32, 9), (&[41], 1, 0.5, 5), (&[7, 13, 11], 3, 0.1, 12), (&[1, 17, 3], 3, 1.5, 4)] {
        let x = rand_array(shape);
        let mut rec = Recording::new(poisoned_gpu());
        let f = rec.upload_once_f32(&x.view()).unwrap();
        let y = tv::record(&mut rec, f, weight, steps, ndim).unwrap();
        let d = rec.download(y);
        let got = rec.run().unwrap().into_f32(d).unwrap();
        let got = got.into_shape_with_order(IxDyn(shape)).unwrap();
        // The reference item by item over the leading axes, eps 0 for a fixed step count.
        let lead: usize = shape[..shape.len() - ndim].iter().product();
        let item = &shape[shape.len() - ndim..];
        let x64 = to64(&x).into_shape_with_order(IxDyn(&[&[lead][..], item].concat())).unwrap();
        let mut want = Vec::new();
        for k in 0..lead {
            let one = x64.index_axis(ndarray::Axis(0), k).to_owned();
            want.extend(tv::cpu(&one.view(), weight as f64, 0.0, steps).unwrap().iter().copied());
        }
        let want = ArrayD::from_shape_vec(IxDyn(shape), want).unwrap();
        assert_rel_l2(&got, &want, 1e-6, &format!("TV steps on {shape:?} over {ndim} axes"));
        let change = rel_l2(&got.iter().copied().collect::<Vec<_>>(), &to64(&x).iter().copied().collect::<Vec<_>>());
        assert!(change > 1e-2, "{shape:?}: the steps changed the input by only {change}");
    }
}

#[test]
fn bad_weights_are_refused() {
    let x = formula(&[4, 4]);
    for w in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(tv::cpu(&x.view(), w, 0.0, 3).is_err(), "weight {w}");
    }
    assert!(tv::cpu(&x.view(), 0.1, 0.0, 0).is_err());
}

#[test]
fn denoising_stops_on_the_device_as_scikit_image_does() {
    // scikit-image's stopping rule kept on the device: each item stops at its own step (the
    // channels scaled apart stop at different ones), across the recordings' 32-step chunks, on
    // awkward sizes; against the f64 reference item by item. The rule compares energies that
    // f32 and f64 round differently, so where it is met within their difference the device
    // may stop one step before or after the reference: each item must equal the reference
    // stopped at the reference's step or one either side (a result at step k is the reference
    // run for k + 1 steps without the rule). Not stopping at all moves the result by 2e-2.
    // The fixed-step case (eps 0, past one recording's 32 steps) is a volume, not a line:
    // scikit-image's step 1/(2·ndim) is 1/2 on a line, twice the iteration's stability
    // bound, and its transients there grow f32's rounding a thousandfold (2.6e-4 from the
    // f64 reference at step 45 in 1000 draws of 61 samples, while steps 44 and 45 can be
    // 5.7e-4 apart); 5 × 7 × 61: 2.5e-6 at worst, steps 44 and 45 at least 8e-3 apart.
    let gpu = poisoned_gpu();
    let cases: [(&[usize], Option<usize>, f64, f64, usize); 5] = [
        (&[37, 53], None, 0.1, 2e-4, 200),
        (&[9, 11, 13], None, 0.05, 1e-4, 200),
        (&[31, 3, 29], Some(1), 0.2, 2e-4, 200),
        (&[5, 7, 61], None, 0.3, 0.0, 45),
        (&[4, 17, 19], Some(0), 0.1, 5e-5, 300),
    ];
    for (shape, channel_axis, weight, eps, iterations) in cases {
        let mut x = rand_array(shape);
        if let Some(c) = channel_axis {
            for (k, mut lane) in x.axis_iter_mut(ndarray::Axis(c)).enumerate() {
                lane.mapv_inplace(|v| v * (1.0 + 3.0 * k as f32));
            }
        }
        let got = lucent::denoise::denoise_tv_chambolle(gpu, &x, weight, eps, iterations, channel_axis).unwrap();
        let wide = x.mapv(f64::from);
        let items: Vec<(ArrayD<f32>, ArrayD<f64>)> = match channel_axis {
            None => vec![(got.clone(), wide.clone())],
            Some(c) => (0..shape[c]).map(|k| (got.index_axis(ndarray::Axis(c), k).to_owned(), wide.index_axis(ndarray::Axis(c), k).to_owned())).collect(),
        };
        for (k, (got, f)) in items.iter().enumerate() {
            let stopped = tv::cpu(&f.view(), weight, eps, iterations).unwrap();
            // The reference's step count: the fixed-step run it equals.
            let steps = (1..=iterations).find(|&n| tv::cpu(&f.view(), weight, 0.0, n).unwrap() == stopped).expect("the stopped result is a fixed-step one");
            let near = [steps.saturating_sub(1).max(1), steps, (steps + 1).min(iterations)];
            let errors: Vec<f64> = near
                .iter()
                .map(|&n| {
                    let want = tv::cpu(&f.view(), weight, 0.0, n).unwrap();
                    rel_l2(&got.iter().copied().collect::<Vec<f32>>(), &want.iter().copied().collect::<Vec<f64>>())
                })
                .collect();
            assert!(
                errors.iter().any(|&e| e <= 1e-5),
                "{shape:?} item {k}, weight {weight}, eps {eps}: the reference stops after {steps} steps; errors at {near:?}: {errors:?}"
            );
        }
    }
    // Refusals: a weight of 0, a negative eps, four spatial axes, a channel axis out of range.
    let x = rand_array(&[5, 6]);
    assert!(lucent::denoise::denoise_tv_chambolle(gpu, &x, 0.0, 2e-4, 200, None).is_err());
    assert!(lucent::denoise::denoise_tv_chambolle(gpu, &x, 0.1, -1.0, 200, None).is_err());
    assert!(lucent::denoise::denoise_tv_chambolle(gpu, &x, 0.1, 2e-4, 200, Some(2)).is_err());
    assert!(lucent::denoise::denoise_tv_chambolle(gpu, &rand_array(&[2, 3, 4, 5]), 0.1, 2e-4, 200, None).is_err());
}

#[test]
fn noise_estimate_is_scikit_images() {
    // skimage.restoration.estimate_sigma (0.26.0, PyWavelets 1.8.0) of the formula's arrays;
    // a patch of equal values (zero details left out); a signal of one sample (its details
    // vanish: PyWavelets' rounding leaves 2e-17). The sums run in another order than
    // PyWavelets' (a few ulps).
    use lucent::ops::denoise::sigma::estimate_sigma;
    for (shape, want) in [(&[5usize, 7][..], 0.29921457042304134), (&[3, 4, 5], 0.7423514818284108), (&[2], 0.8819050767447413), (&[6], 0.5641946059816344)] {
        let got = estimate_sigma(&formula(shape).view()).unwrap();
        assert!((got - want).abs() <= 1e-13 * want, "{shape:?}: {got} against {want}");
    }
    let mut x = formula(&[5, 7]);
    x.slice_mut(ndarray::s![1..4, 2..5]).fill(0.5);
    let got = estimate_sigma(&x.view()).unwrap();
    assert!((got - 0.2814085355249841).abs() <= 1e-13, "flat patch: {got}");
    for shape in [&[1usize][..], &[37, 1]] {
        assert!(estimate_sigma(&formula(shape).view()).unwrap() < 1e-15, "{shape:?}");
    }
    // The f32 front door, and refusals.
    let f = formula(&[5, 7]).mapv(|v| v as f32);
    assert!((lucent::denoise::estimate_sigma(&f).unwrap() - 0.29921457042304134).abs() < 1e-7);
    assert!(estimate_sigma(&ArrayD::<f64>::zeros(IxDyn(&[0, 3])).view()).is_err());
    assert!(estimate_sigma(&ArrayD::from_elem(IxDyn(&[4]), f64::NAN).view()).is_err());
}
