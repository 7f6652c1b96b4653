//! Measurements of labelled regions (lucent::ndimage::measurements): values scipy 1.17.1
//! printed for a fixed volume with negative labels, repeated and absent index values; the
//! parallel reduction against one sequential pass over a volume of many chunks; refusals. The
//! Python suite compares every function with scipy itself on random inputs.

use lucent::ndimage::{self, Regions};
use ndarray::{ArrayD, IxDyn};
use rand::Rng;

/// numpy: i = arange(60).reshape(3, 4, 5); x = (i * 7 % 11) - 3.5 + i / 64;
/// labels = (i * 5 % 7) % 4 - 1.
fn fixed() -> (ArrayD<f64>, ArrayD<i32>) {
    let shape = IxDyn(&[3, 4, 5]);
    let flat = |i: &IxDyn| (i[0] * 20 + i[1] * 5 + i[2]) as i64;
    let x = ArrayD::from_shape_fn(shape.clone(), |i| ((flat(&i) * 7) % 11) as f64 - 3.5 + flat(&i) as f64 / 64.0);
    let labels = ArrayD::from_shape_fn(shape, |i| ((flat(&i) * 5 % 7) % 4 - 1) as i32);
    (x, labels)
}

fn close(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!((g.is_nan() && w.is_nan()) || (g - w).abs() <= 1e-12 * w.abs().max(1.0), "{got:?} != {want:?}");
    }
}

#[test]
fn measurements_match_scipy() {
    let (x, labels) = fixed();
    let (x, l) = (x.view(), labels.view());
    let index = [0, 1, 2, 5, 2];
    let each = Regions::Each(l.clone(), &index);
    close(&ndimage::sum_labels(&x, &each).unwrap(), &[40.4375, 32.375, 14.71875, 0.0, 14.71875]);
    close(&ndimage::mean(&x, &each).unwrap(), &[2.2465277777777777, 2.0234375, 1.6354166666666667, f64::NAN, 1.6354166666666667]);
    close(&ndimage::variance(&x, &each).unwrap(), &[9.650405695408953, 10.15582275390625, 10.642252604166666, f64::NAN, 10.642252604166666]);
    let three = Regions::Each(l.clone(), &index[..3]);
    let median: Vec<f64> = ndimage::median(&x, &three).unwrap().into_iter().map(Option::unwrap).collect();
    close(&median, &[2.34375, 2.171875, 2.296875]);
    let e: Vec<_> = ndimage::extrema(&x, &three).unwrap().into_iter().map(Option::unwrap).collect();
    close(&e.iter().map(|e| e.min).collect::<Vec<_>>(), &[-3.15625, -3.328125, -2.8125]);
    close(&e.iter().map(|e| e.max).collect::<Vec<_>>(), &[7.0625, 6.890625, 7.40625]);
    assert_eq!(e.iter().map(|e| e.min_position.clone()).collect::<Vec<_>>(), [[1, 0, 2], [0, 2, 1], [2, 0, 4]]);
    assert_eq!(e.iter().map(|e| e.max_position.clone()).collect::<Vec<_>>(), [[1, 3, 1], [1, 1, 0], [2, 3, 3]]);
    let com = ndimage::center_of_mass(&x, &three).unwrap();
    close(&com[0], &[0.9242658423493045, 1.9698608964451314, 1.2982998454404946]);
    close(&com[2], &[1.2696390658174097, 2.2335456475583864, 3.218683651804671]);
    let one = Regions::Each(l.clone(), &[1]);
    assert_eq!(ndimage::histogram(&x, -2.0, 6.0, 4, &one).unwrap(), [Some(vec![3, 3, 2, 4])]);
    assert_eq!(ndimage::histogram(&x, -2.0, 6.0, 4, &Regions::Each(l.clone(), &[7])).unwrap(), [None]);
    close(&ndimage::sum_labels(&x, &Regions::<i32>::Whole).unwrap(), &[118.65625]);
    close(&ndimage::mean(&x, &Regions::Labelled(l.clone())).unwrap(), &[1.88375]);
    close(&ndimage::median(&x, &Regions::<i32>::Whole).unwrap().into_iter().map(Option::unwrap).collect::<Vec<_>>(), &[2.0390625]);
    // ndimage.label(x > 4.5) and its find_objects.
    let runs = [(3, 1), (6, 2), (9, 3), (14, 3), (17, 4), (20, 5), (25, 5), (28, 6), (31, 7), (36, 7), (39, 8), (42, 9), (47, 9), (50, 10), (53, 11), (58, 11)];
    let mut objects = ArrayD::<i64>::zeros(IxDyn(&[3, 4, 5]));
    runs.iter().for_each(|&(at, label)| objects.as_slice_mut().unwrap()[at] = label);
    let boxes = ndimage::find_objects(&objects.view(), 0).unwrap();
    assert_eq!(boxes.len(), 11);
    assert_eq!(boxes[2], Some(vec![0..1, 1..3, 4..5]));
    assert_eq!(boxes[10], Some(vec![2..3, 2..4, 3..4]));
    let padded = ndimage::find_objects(&objects.view(), 13).unwrap();
    assert_eq!((padded.len(), &padded[11], &padded[..11]), (13, &None, &boxes[..]));
}

#[test]
fn parallel_chunks_equal_one_sequential_pass() {
    // 300 001 elements in many chunks, 40 labels with 0 and negatives, ties (values of 1/8):
    // every region's count, extrema (the first position on ties) and median as one pass finds.
    let mut rng = rand::rng();
    let n = 300_001;
    let x: Vec<f64> = (0..n).map(|_| (rng.random_range(-800i32..800) as f64) / 8.0).collect();
    let labels: Vec<i64> = (0..n).map(|_| rng.random_range(-3i64..37)).collect();
    let (xa, la) = (ArrayD::from_shape_vec(IxDyn(&[n]), x.clone()).unwrap(), ArrayD::from_shape_vec(IxDyn(&[n]), labels.clone()).unwrap());
    let index: Vec<i64> = (-4..40).collect();
    let each = Regions::Each(la.view(), &index);
    let sums = ndimage::sum_labels(&xa.view(), &each).unwrap();
    let extrema = ndimage::extrema(&xa.view(), &each).unwrap();
    let medians = ndimage::median(&xa.view(), &each).unwrap();
    for (k, &label) in index.iter().enumerate() {
        let mut values: Vec<(f64, usize)> = (0..n).filter(|&i| labels[i] == label).map(|i| (x[i], i)).collect();
        let sum: f64 = values.iter().map(|v| v.0).sum();
        assert!((sums[k] - sum).abs() <= 1e-9 * sum.abs().max(1.0));
        if values.is_empty() {
            assert!(extrema[k].is_none() && medians[k].is_none());
            continue;
        }
        let e = extrema[k].as_ref().unwrap();
        let min = values.iter().copied().fold((f64::INFINITY, 0), |a, v| if v.0 < a.0 { v } else { a });
        let max = values.iter().copied().fold((f64::NEG_INFINITY, 0), |a, v| if v.0 > a.0 { v } else { a });
        assert_eq!((e.min, e.min_position[0], e.max, e.max_position[0]), (min.0, min.1, max.0, max.1), "label {label}");
        values.sort_by(|a, b| a.0.total_cmp(&b.0));
        let m = values.len();
        assert_eq!(medians[k], Some((values[(m - 1) / 2].0 + values[m / 2].0) / 2.0), "label {label}");
    }
}

#[test]
fn measurements_refuse_bad_input() {
    let (x, labels) = fixed();
    let short = ArrayD::<i32>::zeros(IxDyn(&[3, 4, 4]));
    let e = ndimage::mean(&x.view(), &Regions::Labelled(short.view())).unwrap_err().to_string();
    assert!(e.contains("labels of shape [3, 4, 4]"), "{e}");
    let r = Regions::Labelled(labels.view());
    assert!(ndimage::histogram(&x.view(), 1.0, 0.0, 3, &r).unwrap_err().to_string().contains("monotonically"));
    assert!(ndimage::histogram(&x.view(), 0.0, 1.0, 0, &r).unwrap_err().to_string().contains("bins"));
    assert!(ndimage::histogram(&x.view(), 0.0, f64::INFINITY, 2, &r).unwrap_err().to_string().contains("not finite"));
    // A label far beyond the host budget's count of boxes is refused before allocating.
    let huge = ArrayD::from_elem(IxDyn(&[2]), i64::MAX / 2);
    assert!(ndimage::find_objects(&huge.view(), 0).is_err());
}
