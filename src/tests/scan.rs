//! Prefix sums and summed-area tables on the GPU against the f64 CPU reference, on fresh random
//! inputs, every axis of awkward shapes, long rows (several recursion levels), many short rows
//! and tall thin columns, with temporaries poisoned so an unwritten element fails.
//!
//! Tolerance: an f32 output carries the rounding of each addition on its summation path. Both
//! row-scan kernels shrink a row by 1024 a recursion level. The scalar one (scan_rows) adds at
//! most ITEMS (4) serial + 8 tree + 1 offset additions a level; the vec4 one (scan_rows_vec4,
//! rows of whole vec4s above 1024) at most 2 within a vec4 + 2 for the vec4's sum + 8 tree (4
//! radix-4 rounds of pairwise sums) + 2 for the carry. The tile totals either kernel hands the
//! next level are pairwise reductions, 2 + 8 additions deep, so a level adds at most about 24
//! additions to a path and 3 levels about 70; the column scan is Kahan-compensated (about one
//! rounding). With rounding errors of random sign and partial sums no larger than the outputs
//! (which holds for these random walks), the expected relative L2 error is about
//! sqrt(70) * 2^-24 / sqrt(3) ≈ 3e-7; we allow 1e-6 (measured up to 2.3e-7 on 1021 elements
//! with the earlier kernel; 0.7e-7 to 2e-7 on 1021 and 3 x 4100, 1e-7 on 4,194,308 on lavapipe).
//! A summed-area table chains 2 or 3 scans, each within that bound: 2e-6 (measured 1.8e-7).
//! Long Kahan-compensated columns are held to 1.5e-7: three roundings (the chunk offsets of two
//! recursion levels, then the output), each of relative rms 2^-24/sqrt(3) to twice that, give
//! 6e-8 to 1.2e-7 (measured 5.5e-8 to 7e-8 on lavapipe, 5.3e-8 to 7.3e-8 on an NVIDIA H200);
//! a plain running sum, which is what Mesa's optimiser once made of the Kahan loop, measured
//! 2.7e-7 to 2.9e-7 on that data.

use crate::tests::common;
use common::*;

use lucent::kernels::{scan_columns, scan_rows};
use lucent::ops::scan::{self, cpu};
use lucent::{Dtype, Error, Recording};
use ndarray::{ArrayD, IxDyn};
use rand::Rng;

const SCAN_TOL: f64 = 1e-6;
const SAT_TOL: f64 = 2e-6;
const KAHAN_TOL: f64 = 1.5e-7;

/// Small integers: every partial sum is exact in f32 (below 2^24), so the GPU must match exactly.
fn random_integers(n: usize) -> Vec<f32> {
    let mut rng = rand::rng();
    (0..n).map(|_| rng.random_range(-3..=4) as f32).collect()
}

fn gpu_cumsum(x: &ArrayD<f32>, axis: usize, exclusive: bool) -> Vec<f32> {
    let mut rec = Recording::new(gpu());
    rec.set_poison(true);
    let xb = rec.upload_f32(&x.view()).unwrap();
    let y = scan::cumsum(&mut rec, xb, axis, exclusive).unwrap();
    let d = rec.download(y);
    let got = rec.run().unwrap().f32(d).unwrap();
    assert_eq!(got.shape(), x.shape());
    got.into_raw_vec_and_offset().0
}

fn gpu_sat(x: &ArrayD<f32>, dims: usize) -> Vec<f32> {
    let mut rec = Recording::new(gpu());
    rec.set_poison(true);
    let xb = rec.upload_f32(&x.view()).unwrap();
    let y = scan::summed_area_table(&mut rec, xb, dims).unwrap();
    let d = rec.download(y);
    rec.run().unwrap().f32(d).unwrap().into_raw_vec_and_offset().0
}

/// Inclusive and exclusive cumsum along `axis` of random data within `tol` of the reference.
fn check_cumsum(dims: &[usize], axis: usize) {
    check_cumsum_within(dims, axis, SCAN_TOL);
}

fn check_cumsum_within(dims: &[usize], axis: usize, tol: f64) {
    let x = arr(dims, random(dims.iter().product()));
    for exclusive in [false, true] {
        let want = cpu::cumsum(&x.view(), axis, exclusive).unwrap();
        let got = gpu_cumsum(&x, axis, exclusive);
        let err = rel_l2(&got, want.as_slice().unwrap());
        eprintln!("cumsum {dims:?} axis {axis} exclusive {exclusive}: relative L2 {err:.2e}");
        assert!(err <= tol, "cumsum {dims:?} axis {axis} exclusive {exclusive}: relative L2 {err:e}");
    }
}

/// Integer data: exact sums, so any misplaced offset or lost element shows as a mismatch.
fn check_cumsum_exact(dims: &[usize], axis: usize) {
    let x = arr(dims, random_integers(dims.iter().product()));
    for exclusive in [false, true] {
        let want = cpu::cumsum(&x.view(), axis, exclusive).unwrap();
        let got = gpu_cumsum(&x, axis, exclusive);
        let first_bad = got.iter().zip(want.iter()).position(|(&g, &w)| g as f64 != w);
        assert!(first_bad.is_none(), "cumsum {dims:?} axis {axis} exclusive {exclusive}: first mismatch at {first_bad:?}");
    }
}

#[test]
fn cumsum_every_axis_of_every_shape() {
    for dims in SHAPES {
        for axis in 0..dims.len() {
            check_cumsum(dims, axis);
        }
    }
}

#[test]
fn long_row_takes_several_recursion_levels() {
    // 2,000,003 = 1954 tiles of 1024, whose totals take 2 tiles, whose totals take 1: 3 levels.
    check_cumsum(&[2_000_003], 0);
    check_cumsum_exact(&[2_000_003], 0);
    // Rows just over one tile, several of them, and a long row in a batch.
    check_cumsum_exact(&[3, 1025], 1);
    check_cumsum_exact(&[2, 3, 300_007], 2);
}

#[test]
fn long_rows_of_whole_vec4s_take_the_vec4_tiles() {
    // scan_rows_vec4 (rows of a multiple of 4 above 1024): one tile of 4096 (PHASE 2) up to
    // 4096, then tiles whose quarter totals (4 per tile) are scanned by scan_rows, or by this
    // kernel again while they are long and whole vec4s. Rows that end inside a vec4 of the last
    // tile's quarters, and batches of rows.
    for dims in [&[1028][..], &[5, 1028], &[3, 2052], &[3, 4092], &[2, 4096], &[4100], &[3, 4100], &[2, 8192], &[3, 12_292]] {
        check_cumsum_exact(dims, dims.len() - 1);
    }
    check_cumsum_exact(&[2, 3, 300_008], 2);
    check_cumsum(&[3, 4100], 1);
    // Around the scalar kernel's tile: packed (1023, 1024), its block mode (1025, 1027, 4095,
    // 4097: not whole vec4s).
    for dims in [&[3, 1023][..], &[2, 1024], &[3, 1025], &[2, 1027], &[2, 4095], &[2, 4097]] {
        check_cumsum_exact(dims, 1);
    }
}

#[test]
fn vec4_recursion_levels_change_at_their_edges() {
    // A level shrinks a row of whole vec4s by 1024 (4 totals per tile of 4096): 1024^2 elements
    // leave 1024 totals (one packed scan_rows tile), 4 more leave 1028 (one vec4 tile); 4096 *
    // 1024 leave 4096 (one vec4 tile) and 4 more leave 4100 (two vec4 tiles, whose 8 totals take
    // a third level). One element off: the scalar kernel's levels (1024 and 1025 totals).
    for n in [1_048_576, 1_048_580, 4_194_304, 4_194_308, 1_048_575, 1_048_577] {
        check_cumsum_exact(&[n], 0);
    }
    check_cumsum(&[4_194_308], 0);
    check_cumsum(&[2_000_000], 0);
}

#[test]
fn many_short_rows_share_workgroups() {
    for dims in [&[100_003, 3][..], &[20_001, 1], &[5_000, 37], &[7, 1024], &[3, 2048], &[513, 2]] {
        check_cumsum_exact(dims, dims.len() - 1);
    }
    check_cumsum(&[100_003, 3], 1);
    // Trailing axes of length one: still contiguous rows.
    check_cumsum_exact(&[1_000, 17, 1], 1);
}

#[test]
fn tall_columns_are_chunked() {
    // Few columns: len is cut into chunks (three levels for 100,003 x 16: 1,563 chunks of 64,
    // then 25, then 1).
    check_cumsum_within(&[100_003, 16], 0, KAHAN_TOL);
    // Enough columns to fill the GPU: one pass, no chunks.
    check_cumsum_exact(&[3, 70_000], 0);
    check_cumsum_exact(&[300_001, 2], 0);
    check_cumsum_exact(&[4, 5_000, 3], 1);
    check_cumsum_exact(&[130, 2, 1, 3], 0);
}

#[test]
fn summed_area_tables_2d_and_3d() {
    let cases: &[(&[usize], usize)] = &[
        (&[1, 1], 2),
        (&[17, 31], 2),
        (&[129, 64], 2),
        (&[3, 2_000], 2),
        (&[5, 7, 11], 3),
        (&[9, 1, 13], 3),
        (&[5, 7, 11], 2),      // batched 2D
        (&[3, 5, 7, 9], 2),    // batched 4D
        (&[2, 13, 17, 19], 3), // batched 3D
    ];
    for &(dims, n) in cases {
        for positive in [false, true] {
            let data = if positive { random_positive(dims.iter().product()) } else { random(dims.iter().product()) };
            let x = arr(dims, data);
            let want = cpu::summed_area_table(&x.view(), n).unwrap();
            let err = rel_l2(&gpu_sat(&x, n), want.as_slice().unwrap());
            assert!(err <= SAT_TOL, "SAT {n}D of {dims:?} (positive {positive}): relative L2 {err:e}");
        }
    }
}

#[test]
fn summed_area_table_of_integers_is_exact() {
    for (dims, n) in [(&[23, 29][..], 2), (&[2, 11, 13, 7], 3)] {
        let x = arr(dims, random_integers(dims.iter().product()));
        let want = cpu::summed_area_table(&x.view(), n).unwrap();
        let got = gpu_sat(&x, n);
        assert!(got.iter().zip(want.iter()).all(|(&g, &w)| g as f64 == w), "SAT {n}D of {dims:?}");
    }
}

#[test]
fn kernel_twins_match_the_reference() {
    // Integer data: the twins' f32 results are exact, so they must equal the f64 reference.
    let dims = [2, 5, 3];
    let x = random_integers(30);
    let exact = |got: &[f32], want: &ArrayD<f64>| got.iter().zip(want.iter()).all(|(&g, &w)| g as f64 == w);
    let rows = cpu::cumsum(&arr(&dims, x.clone()).view(), 2, false).unwrap();
    assert!(exact(&scan_rows::cpu(&x, 3, false), &rows));
    let columns = cpu::cumsum(&arr(&dims, x.clone()).view(), 1, true).unwrap();
    assert!(exact(&scan_columns::cpu(&x, 5, 3, true), &columns));
}

#[test]
fn bad_input_is_an_error() {
    let mut rec = Recording::new(gpu());
    let a = rec.temp(&[3, 4], Dtype::F32).unwrap();
    let c = rec.temp(&[3, 4], Dtype::C32).unwrap();
    let v = rec.temp(&[5], Dtype::F32).unwrap();
    assert!(matches!(scan::cumsum(&mut rec, a, 2, false), Err(Error::Invalid(_))));
    assert!(matches!(scan::cumsum(&mut rec, c, 0, false), Err(Error::Dtype(_))));
    assert!(matches!(scan::summed_area_table(&mut rec, a, 1), Err(Error::Invalid(_))));
    assert!(matches!(scan::summed_area_table(&mut rec, a, 4), Err(Error::Invalid(_))));
    assert!(matches!(scan::summed_area_table(&mut rec, a, 3), Err(Error::Shape(_))));
    assert!(matches!(scan::summed_area_table(&mut rec, v, 2), Err(Error::Shape(_))));
    assert!(matches!(scan::summed_area_table(&mut rec, c, 2), Err(Error::Dtype(_))));
    assert!(matches!(scan_rows::record(&mut rec, a, 5, false), Err(Error::Shape(_))));
    assert!(matches!(scan_rows::record(&mut rec, a, 0, false), Err(Error::Shape(_))));
    assert!(matches!(scan_columns::record(&mut rec, a, 3, 1, false), Err(Error::Shape(_))));
    assert!(matches!(scan_columns::record(&mut rec, a, 2, 4, false), Err(Error::Shape(_))));
    let x = ArrayD::<f32>::zeros(IxDyn(&[2, 3]));
    assert!(matches!(cpu::cumsum(&x.view(), 2, false), Err(Error::Invalid(_))));
    assert!(matches!(cpu::summed_area_table(&x.view(), 3), Err(Error::Shape(_))));
}
