//! Rank filters and morphology (lucent::ndimage: minimum_filter, maximum_filter, grey_erosion,
//! grey_dilation, binary_erosion/dilation/opening/closing, generate_binary_structure): values
//! scipy 1.17.1 printed, the GPU against the f64 reference on random footprints of odd and even
//! lengths with origins over 1-4 axes in every mode (selections: bit for bit), refusals. The
//! Python suite compares every function with scipy itself.

use crate::common;
use common::*;
use lucent::ndimage::{self, cpu, Binary, Boundary, Footprint};
use ndarray::{arr2, ArrayD, Dimension, IxDyn};
use rand::Rng;

fn fixed() -> ArrayD<f32> {
    // numpy: ((np.arange(35).reshape(5, 7) * 7) % 11).astype(float)
    ArrayD::from_shape_fn(IxDyn(&[5, 7]), |i| (((i[0] * 7 + i[1]) * 7) % 11) as f32)
}

#[test]
fn morphology_matches_scipy() {
    let gpu = gpu();
    let x = fixed();
    let ones = |s: &[usize]| ArrayD::from_elem(IxDyn(s), true);
    let min = ndimage::minimum_filter(gpu, &x, &ones(&[2, 3]).view(), &[], Boundary::Wrap).unwrap();
    assert_eq!(
        min.index_axis(ndarray::Axis(0), 2).iter().copied().collect::<Vec<f32>>(),
        [1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0],
        "minimum_filter(x, size=(2, 3), mode='wrap')"
    );
    let structure = arr2(&[[0.0f32, 1.5], [2.0, 0.25]]).into_dyn();
    let gd = ndimage::grey_dilation(gpu, &x, &ones(&[2, 2]).view(), Some(&structure.view()), &[], Boundary::Nearest).unwrap();
    assert_eq!(
        gd.index_axis(ndarray::Axis(0), 2).iter().copied().collect::<Vec<f32>>(),
        [10.25, 7.0, 11.0, 10.0, 11.5, 10.0, 10.0],
        "grey_dilation(x, structure=..., mode='nearest')"
    );
    let b = x.mapv(|v| v > 1.0);
    let s12 = ones(&[1, 2]);
    let be = ndimage::binary_erosion(gpu, &b, &Binary { structure: s12.view(), iterations: 1, border_value: false, origin: vec![], mask: None }).unwrap();
    let want = [[0, 0, 1, 1, 1, 1, 1], [0, 0, 0, 1, 0, 0, 1], [0, 1, 1, 1, 1, 0, 0], [0, 0, 0, 1, 1, 1, 1], [0, 1, 0, 0, 1, 0, 0]];
    assert_eq!(be.mapv(u8::from), arr2(&want).mapv(|v: u8| v).into_dyn(), "binary_erosion(x > 1, ones((1, 2)))");
    let s22 = ones(&[2, 2]);
    let bd =
        ndimage::binary_dilation(gpu, &x.mapv(|v| v > 8.0), &Binary { structure: s22.view(), iterations: 1, border_value: true, origin: vec![], mask: None })
            .unwrap();
    let want = [[0, 0, 1, 1, 0, 1, 1], [1, 0, 1, 1, 0, 0, 1], [1, 0, 1, 1, 1, 0, 1], [1, 0, 0, 1, 1, 0, 1], [1, 1, 1, 1, 1, 1, 1]];
    assert_eq!(bd.mapv(u8::from), arr2(&want).mapv(|v: u8| v).into_dyn(), "binary_dilation(x > 8, ones((2, 2)), border_value=1)");
    let cross = ndimage::generate_binary_structure(2, 1).unwrap();
    assert_eq!(cross.mapv(u8::from), arr2(&[[0u8, 1, 0], [1, 1, 1], [0, 1, 0]]).into_dyn());
}

/// Random footprints (odd and even lengths, origins at both ends) over 1-4 axes in every mode,
/// flat (bit for bit) and with a structure's weights (within f32's rounding of the sum), on a
/// poisoned GPU, against the f64 reference.
#[test]
fn footprint_extremes_match_the_reference() {
    let gpu = poisoned_gpu();
    let mut rng = rand::rng();
    for dims in [vec![29usize], vec![19, 23], vec![7, 11, 13], vec![3, 5, 6, 7]] {
        let x = rand_array(&dims);
        let x64 = x.mapv(|v| v as f64);
        let fdims: Vec<usize> = dims.iter().enumerate().map(|(a, &n)| (2 + a % 3).min(n)).collect();
        let mut fp = ArrayD::from_shape_fn(IxDyn(&fdims), |_| rng.random::<f32>() > 0.3);
        fp.as_slice_mut().unwrap()[0] = true;
        let origin: Vec<i64> = fdims.iter().enumerate().map(|(a, &m)| if a % 2 == 0 { (m as i64 - 1) / 2 } else { -(m as i64 / 2) }).collect();
        let structure = ArrayD::from_shape_fn(IxDyn(&fdims), |_| rng.random::<f32>());
        for mode in [Boundary::Reflect, Boundary::Constant(0.75), Boundary::Nearest, Boundary::Mirror, Boundary::Wrap] {
            for maximum in [false, true] {
                let f = Footprint::new(&fp.view(), None, &origin).unwrap();
                let got = if maximum {
                    ndimage::maximum_filter(gpu, &x, &fp.view(), &origin, mode)
                } else {
                    ndimage::minimum_filter(gpu, &x, &fp.view(), &origin, mode)
                }
                .unwrap();
                assert_eq!(got, cpu::footprint_extreme(&x64, &f, maximum, mode).mapv(|v| v as f32), "{dims:?} {mode:?} max {maximum}");
            }
            let erosion = ndimage::grey_erosion(gpu, &x, &fp.view(), Some(&structure.view()), &origin, mode).unwrap();
            let want =
                cpu::footprint_extreme(&x64, &Footprint::new(&fp.view(), Some(&structure.mapv(f64::from).view()), &origin).unwrap().negated(), false, mode);
            assert_rel_l2(&erosion, &want, 1e-7, &format!("{dims:?} {mode:?} grey erosion"));
            let dilation = ndimage::grey_dilation(gpu, &x, &fp.view(), Some(&structure.view()), &origin, mode).unwrap();
            let want = cpu::footprint_extreme(&x64, &Footprint::reflected(&fp.view(), Some(&structure.mapv(f64::from).view()), &origin).unwrap(), true, mode);
            assert_rel_l2(&dilation, &want, 1e-7, &format!("{dims:?} {mode:?} grey dilation"));
        }
    }
}

#[test]
fn morphology_refusals() {
    let gpu = gpu();
    let x = rand_array(&[6, 7]);
    let fp = ArrayD::from_elem(IxDyn(&[3, 3]), true);
    let empty = ArrayD::from_elem(IxDyn(&[3, 3]), false);
    assert!(ndimage::minimum_filter(gpu, &x, &empty.view(), &[], Boundary::Reflect).unwrap_err().to_string().contains("no element"));
    assert!(ndimage::minimum_filter(gpu, &x, &fp.view(), &[2], Boundary::Reflect).unwrap_err().to_string().contains("invalid origin"));
    assert!(ndimage::maximum_filter(gpu, &x, &ArrayD::from_elem(IxDyn(&[3]), true).view(), &[], Boundary::Reflect).unwrap_err().to_string().contains("rank"));
    let b = x.mapv(|v| v > 0.0);
    let s3 = ArrayD::from_elem(IxDyn(&[3]), true);
    let err = ndimage::binary_erosion(gpu, &b, &Binary { structure: s3.view(), iterations: 1, border_value: false, origin: vec![], mask: None }).unwrap_err();
    assert!(err.to_string().contains("rank"), "{err}");
}

/// The exact distance transform against brute force (the nearest zero by exhaustive search, in
/// f64) on random masks of 1-4 awkward axes with anisotropic sampling: within f32's rounding of
/// the squared distance; scipy's printed values for one case; no zero refused.
#[test]
fn distance_transform_is_exact() {
    let gpu = poisoned_gpu();
    let mut rng = rand::rng();
    for (dims, sampling) in [(vec![37usize], vec![0.7]), (vec![13, 17], vec![1.0, 2.5]), (vec![7, 9, 11], vec![1.3, 0.6, 1.0]), (vec![3, 5, 4, 6], vec![1.0])] {
        for density in [0.02, 0.3] {
            let mut x = ArrayD::from_shape_fn(IxDyn(&dims), |_| if rng.random::<f64>() < density { 0.0f32 } else { 1.0 });
            x.as_slice_mut().unwrap()[0] = 0.0;
            let got = ndimage::distance_transform_edt(gpu, &x, &sampling).unwrap();
            let w: Vec<f64> = (0..dims.len()).map(|a| *sampling.get(a).unwrap_or(&sampling[0])).collect();
            let zeros: Vec<Vec<usize>> = x.indexed_iter().filter(|(_, &v)| v == 0.0).map(|(i, _)| i.slice().to_vec()).collect();
            let want = ArrayD::from_shape_fn(IxDyn(&dims), |i| {
                zeros.iter().map(|z| (0..dims.len()).map(|a| (w[a] * (i[a] as f64 - z[a] as f64)).powi(2)).sum::<f64>()).fold(f64::INFINITY, f64::min).sqrt()
            });
            let envelope = cpu::distance_transform_edt(&x.mapv(|v| v as f64).view(), &sampling).unwrap();
            for (k, ((g, e), r)) in got.iter().zip(want.iter()).zip(&envelope).enumerate() {
                assert!((*g as f64 - e).abs() <= 1e-6 * e.max(1.0), "{dims:?} {sampling:?}: element {k}: {g} vs {e}");
                assert!((r - e).abs() <= 1e-12 * e.max(1.0), "the reference, {dims:?} {sampling:?}: element {k}: {r} vs {e}");
            }
            // The same from the mask (sent as bytes, widened on the device; f64 where it can),
            // with the feature transform: each index names a zero at the element's distance.
            let mask = x.mapv(|v| v != 0.0);
            let wide = ndimage::distance_transform_edt_mask(gpu, &mask, &sampling).unwrap();
            let (same, near) = ndimage::distance_transform_edt_mask_with_indices(gpu, &mask, &sampling).unwrap();
            assert_eq!(wide, same, "{dims:?}");
            let tol = if gpu.has_f64() { 1e-12 } else { 1e-6 };
            for (k, ((i, g), e)) in wide.indexed_iter().zip(want.iter()).enumerate() {
                assert!((g - e).abs() <= tol * e.max(1.0), "mask, {dims:?} {sampling:?}: element {k}: {g} vs {e}");
                let z: Vec<usize> = (0..dims.len()).map(|a| near[&[&[a][..], i.slice()].concat()[..]] as usize).collect();
                assert!(!mask[&z[..]], "{dims:?}: element {k}'s nearest zero {z:?} is not one");
                let d = (0..dims.len()).map(|a| (w[a] * (i[a] as f64 - z[a] as f64)).powi(2)).sum::<f64>().sqrt();
                assert!((d - e).abs() <= 1e-6 * e.max(1.0), "{dims:?}: element {k}'s nearest zero {z:?} lies {d} away, not {e}");
            }
            if dims.len() == 2 {
                // A mask that is not in standard layout: its transpose's distances, transposed.
                let t = ndimage::distance_transform_edt_mask(gpu, &mask.t(), &[sampling[0]]).unwrap();
                let direct = ndimage::distance_transform_edt_mask(gpu, &mask.t().to_owned(), &[sampling[0]]).unwrap();
                assert_eq!(t, direct, "{dims:?} transposed");
            }
        }
    }
    // scipy.ndimage.distance_transform_edt(x > 1, sampling=(1.5, 1)) for the fixed array, row 2.
    let x = fixed().mapv(|v| if v > 1.0 { 1.0f32 } else { 0.0 });
    let got = ndimage::distance_transform_edt(gpu, &x, &[1.5, 1.0]).unwrap();
    let row: Vec<f32> = got.index_axis(ndarray::Axis(0), 2).iter().copied().collect();
    let want: [f64; 7] = [1.8027756377319946, 1.5, 1.8027756377319946, 1.8027756377319946, 1.0, 0.0, 1.0];
    for (g, w) in row.iter().zip(want) {
        assert!((*g as f64 - w).abs() < 1e-6, "{row:?} vs {want:?}");
    }
    let err = ndimage::distance_transform_edt(gpu, &ArrayD::from_elem(IxDyn(&[4, 5]), 1.0f32), &[]).unwrap_err().to_string();
    assert!(err.contains("no zero element"), "{err}");
    assert!(ndimage::distance_transform_edt(gpu, &x, &[0.0]).unwrap_err().to_string().contains("sampling"));
    let err = ndimage::distance_transform_edt_mask(gpu, &ArrayD::from_elem(IxDyn(&[4, 5]), true), &[]).unwrap_err().to_string();
    assert!(err.contains("no zero element"), "{err}");
}

/// label against flood fill (random masks of 1-4 axes, both connectivities, a long snake that
/// takes many rounds) and scipy's printed labels; the structure's rules.
#[test]
fn label_matches_flood_fill_and_scipy() {
    let gpu = poisoned_gpu();
    let mut rng = rand::rng();
    for dims in [vec![97usize], vec![31, 37], vec![9, 13, 11], vec![4, 5, 6, 7]] {
        for density in [0.3, 0.55] {
            let x = ArrayD::from_shape_fn(IxDyn(&dims), |_| if rng.random::<f64>() < density { 1.0f32 } else { 0.0 });
            for connectivity in [1, dims.len()] {
                let s = ndimage::generate_binary_structure(dims.len(), connectivity).unwrap();
                let (got, n) = ndimage::label(gpu, &x.mapv(|v| v != 0.0).view(), &s.view()).unwrap();
                let (want, m) = ndimage::cpu::label(&x.mapv(|v| v != 0.0).view(), &s.view()).unwrap();
                assert_eq!((n, &got), (m, &want), "{dims:?} density {density} connectivity {connectivity}");
            }
        }
    }
    // A serpentine path through a 41 × 41 grid: one component, labels travel ~800 steps.
    let snake = ArrayD::from_shape_fn(IxDyn(&[41, 41]), |i| {
        let (r, c) = (i[0], i[1]);
        f32::from(u8::from(r % 2 == 0 || (r % 4 == 1 && c == 40) || (r % 4 == 3 && c == 0)))
    });
    let s = ndimage::generate_binary_structure(2, 1).unwrap();
    let (got, n) = ndimage::label(gpu, &snake.mapv(|v| v != 0.0).view(), &s.view()).unwrap();
    assert_eq!((n, got), (1, snake.mapv(|v| v as u32)));
    let x = fixed().mapv(|v| if v > 5.0 { 1.0f32 } else { 0.0 });
    let (got, n) = ndimage::label(gpu, &x.mapv(|v| v != 0.0).view(), &s.view()).unwrap();
    let want = [[0u32, 1, 0, 2, 2, 0, 3], [0, 0, 4, 0, 0, 5, 0], [6, 6, 0, 7, 0, 0, 8], [0, 0, 9, 0, 10, 10, 0], [11, 0, 0, 12, 0, 0, 13]];
    assert_eq!((n, got), (13, arr2(&want).into_dyn()), "scipy.ndimage.label(x > 5)");
    let full = ndimage::generate_binary_structure(2, 2).unwrap();
    let (got, n) = ndimage::label(gpu, &x.mapv(|v| v != 0.0).view(), &full.view()).unwrap();
    let want = [[0u32, 1, 0, 1, 1, 0, 1], [0, 0, 1, 0, 0, 1, 0], [1, 1, 0, 1, 0, 0, 1], [0, 0, 1, 0, 1, 1, 0], [2, 0, 0, 1, 0, 0, 1]];
    assert_eq!((n, got), (2, arr2(&want).into_dyn()), "scipy.ndimage.label(x > 5, full connectivity)");
    let mut odd = full.clone();
    odd[[0, 0]] = false;
    assert!(ndimage::label(gpu, &x.mapv(|v| v != 0.0).view(), &odd.view()).unwrap_err().to_string().contains("symmetric"));
    assert!(ndimage::label(gpu, &x.mapv(|v| v != 0.0).view(), &ArrayD::from_elem(IxDyn(&[3, 2]), true).view()).unwrap_err().to_string().contains("equal to 3"));
}

/// rank_filter and median_filter against the f64 reference (sorting every window): random
/// footprints over 1-4 axes, every mode, every rank from the ends and the middle; bit for bit (a
/// selection); the rank and size rules.
#[test]
fn rank_filters_match_the_reference() {
    let gpu = poisoned_gpu();
    let mut rng = rand::rng();
    for dims in [vec![41usize], vec![17, 19], vec![6, 9, 7], vec![3, 4, 5, 6]] {
        let x = rand_array(&dims);
        let x64 = x.mapv(|v| v as f64);
        let fdims: Vec<usize> = dims.iter().enumerate().map(|(a, &n)| (3 + a % 2).min(n)).collect();
        let mut fp = ArrayD::from_shape_fn(IxDyn(&fdims), |_| rng.random::<f32>() > 0.25);
        fp.as_slice_mut().unwrap()[0] = true;
        let f = Footprint::new(&fp.view(), None, &[]).unwrap();
        let taps = f.offsets.len() as i64;
        // Every mode in 2D, two elsewhere (lavapipe runs the per-thread arrays slowly).
        let modes = [Boundary::Reflect, Boundary::Constant(0.25), Boundary::Nearest, Boundary::Mirror, Boundary::Wrap];
        for mode in if dims.len() == 2 { &modes[..] } else { &modes[..2] } {
            let mode = *mode;
            // A random footprint may hold a single element: only the ranks within it.
            for rank in [0, taps / 2, -2].into_iter().filter(|&r| -taps <= r && r < taps) {
                let got = ndimage::rank_filter(gpu, &x, rank, &fp.view(), &[], mode).unwrap();
                let r = ndimage::rank_within(rank, taps as usize).unwrap();
                assert_eq!(got, cpu::footprint_rank(&x64, &f, r, mode).mapv(|v| v as f32), "{dims:?} {mode:?} rank {rank}");
            }
            let median = ndimage::median_filter(gpu, &x, &fp.view(), &[], mode).unwrap();
            assert_eq!(median, cpu::footprint_rank(&x64, &f, (taps / 2) as usize, mode).mapv(|v| v as f32), "{dims:?} {mode:?} median");
        }
    }
    // Footprints of 30 taps (the largest sorting network, 32, padded) and of 49 (the loop).
    let x = rand_array(&[23, 29]);
    for fdims in [[5usize, 6], [7, 7]] {
        let fp = ArrayD::from_elem(IxDyn(&fdims), true);
        let f = Footprint::new(&fp.view(), None, &[]).unwrap();
        for rank in [0usize, 5, f.offsets.len() / 2, f.offsets.len() - 1] {
            let got = ndimage::rank_filter(gpu, &x, rank as i64, &fp.view(), &[], Boundary::Mirror).unwrap();
            assert_eq!(got, cpu::footprint_rank(&x.mapv(|v| v as f64), &f, rank, Boundary::Mirror).mapv(|v| v as f32), "{fdims:?} rank {rank}");
        }
    }
    let x = rand_array(&[8, 9]);
    let fp = ArrayD::from_elem(IxDyn(&[3, 3]), true);
    assert!(ndimage::rank_filter(gpu, &x, 9, &fp.view(), &[], Boundary::Reflect).unwrap_err().to_string().contains("not within"));
    let big = ArrayD::from_elem(IxDyn(&[19, 19]), true);
    assert!(ndimage::median_filter(gpu, &x, &big.view(), &[], Boundary::Reflect).unwrap_err().to_string().contains("343"));
}

/// binary_fill_holes by labelling the background equals scipy's definition (a dilation from the
/// border within the background until stable, complemented) on random masks of 1-4 axes and
/// both connectivities; and a ring's hole, but not a notch open to the edge, is filled.
#[test]
fn fill_holes_by_labels_equals_scipys_dilation() {
    let gpu = gpu();
    let mut rng = rand::rng();
    for dims in [&[41][..], &[13, 17], &[7, 9, 11], &[4, 5, 6, 3]] {
        let x = ArrayD::from_shape_fn(IxDyn(dims), |_| rng.random::<f32>() > 0.45);
        for connectivity in [1, dims.len()] {
            let s = ndimage::generate_binary_structure(dims.len(), connectivity).unwrap();
            let filled = ndimage::binary_fill_holes(gpu, &x, &s.view(), &[]).unwrap();
            let mask = x.mapv(|v| !v);
            let b = Binary { structure: s.view(), iterations: 0, border_value: true, origin: vec![], mask: Some(mask.view()) };
            let outside = ndimage::binary_dilation(gpu, &ArrayD::from_elem(IxDyn(dims), false), &b).unwrap();
            assert_eq!(filled, outside.mapv(|v| !v), "{dims:?} connectivity {connectivity}");
        }
    }
    // numpy: a 5 × 6 ring with a hole at (2, 2) and a notch at (2, 5) open to the edge.
    let mut ring = ArrayD::from_elem(IxDyn(&[5, 6]), false);
    for (i, j) in (1..4).flat_map(|i| (1..6).map(move |j| (i, j))) {
        ring[[i, j]] = !((i, j) == (2, 2) || (i, j) == (2, 5));
    }
    let s = ndimage::generate_binary_structure(2, 1).unwrap();
    let filled = ndimage::binary_fill_holes(gpu, &ring, &s.view(), &[]).unwrap();
    assert!(filled[[2, 2]] && !filled[[2, 5]] && !filled[[0, 0]]);
    assert_eq!(filled.iter().filter(|&&v| v).count(), 14, "scipy: 14 true elements");
}

/// origin_weights: scipy's origin as padding, a convolution's weights flipped (row-major, origin
/// 0 included) with its origin negated, one more along even lengths; invalid origins refused.
#[test]
fn origin_weights_move_the_centre() {
    let w = ArrayD::from_shape_vec(IxDyn(&[4]), vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let at = |o: i64, conv: bool| ndimage::origin_weights(&w.view(), &[o], conv).unwrap().iter().copied().collect::<Vec<f32>>();
    // Convolution, origin 0 on an even length: correlate origin −1 with the flipped weights.
    assert_eq!(at(0, true), [0.0, 0.0, 4.0, 3.0, 2.0, 1.0]);
    assert_eq!(at(1, false), [1.0, 2.0, 3.0, 4.0, 0.0, 0.0]);
    assert_eq!(at(-2, false), [0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0]);
    assert_eq!(ndimage::origin_weights(&w.view(), &[1], true).unwrap().iter().copied().collect::<Vec<f32>>(), [0.0, 0.0, 0.0, 0.0, 4.0, 3.0, 2.0, 1.0]);
    assert!(ndimage::origin_weights(&w.view(), &[2], false).unwrap_err().to_string().contains("invalid origin"));
    let w2 = ArrayD::from_shape_fn(IxDyn(&[2, 3]), |i| (i[0] * 3 + i[1]) as f32);
    let flipped = ndimage::origin_weights(&w2.view(), &[0], true).unwrap();
    assert_eq!(flipped.shape(), &[4, 3]);
    assert_eq!(flipped.as_slice().unwrap(), &[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 5.0, 4.0, 3.0, 2.0, 1.0, 0.0]);
}

/// Boxes beyond 3³ take the block (van Herk / Gil-Werman) passes: equal to the footprint reference
/// bit for bit (a selection), f32 and f64, every mode, origins, windows longer than the axis,
/// 1-4 axes; the direct kernel's boxes (3³) agree too.
#[test]
fn box_extremes_by_blocks_are_exact() {
    let gpu = poisoned_gpu();
    let modes = [Boundary::Constant(0.3), Boundary::Nearest, Boundary::Reflect, Boundary::Mirror, Boundary::Wrap];
    for (dims, size, origin) in [
        (vec![97usize], vec![29usize], vec![3i64]),
        (vec![31, 23], vec![7, 5], vec![-3, 1]),
        (vec![9, 13, 11], vec![3, 9, 4], vec![0, -2, 1]),
        (vec![5, 6, 4, 7], vec![2, 3, 1, 6], vec![0, 0, 0, -2]),
        (vec![6, 40], vec![11, 50], vec![2, 0]),
        (vec![8, 9, 10], vec![3, 3, 3], vec![0, 0, 0]),
    ] {
        let x = rand_array(&dims).mapv(|v| v as f64);
        let fp = ArrayD::from_elem(IxDyn(&size), true);
        let f = Footprint::new(&fp.view(), None, &origin).unwrap();
        for mode in modes {
            for maximum in [false, true] {
                let want = cpu::footprint_extreme(&x, &f, maximum, mode);
                let (got64, got32) = if maximum {
                    (
                        ndimage::maximum_filter(gpu, &x, &fp.view(), &origin, mode).unwrap(),
                        ndimage::maximum_filter(gpu, &x.mapv(|v| v as f32), &fp.view(), &origin, mode).unwrap(),
                    )
                } else {
                    (
                        ndimage::minimum_filter(gpu, &x, &fp.view(), &origin, mode).unwrap(),
                        ndimage::minimum_filter(gpu, &x.mapv(|v| v as f32), &fp.view(), &origin, mode).unwrap(),
                    )
                };
                assert_eq!(got64, want, "f64 {dims:?} size {size:?} origin {origin:?} {mode:?} maximum {maximum}");
                assert_eq!(got32, want.mapv(|v| v as f32), "f32 {dims:?} size {size:?} origin {origin:?} {mode:?} maximum {maximum}");
            }
        }
    }
}
