//! Direct filters on host volumes split into slabs along axis 0 (`ops::convolve::slabs`), with
//! the buffer limit lowered to 4 KiB in this test binary's own `Gpu`, so volumes of a few
//! thousand elements take several slabs; against the f64 references (`cpu::correlate`,
//! `cpu::convolve`), every boundary (the slabs' halos along axis 0 are folded on the host), and
//! the same filter on the whole volume with the default limit. Fresh random inputs.
//!
//! Tolerance: as tests/filter_tiled.rs, the error relative to Σ|w||x| stays about u = 6e-8 for
//! random data; 1e-6 of it leaves a margin of ~10.

mod common;
use common::*;

use std::sync::OnceLock;

use lucent::ops::convolve::{cpu, slabs, Boundary};
use lucent::{Error, Gpu};
use ndarray::{ArrayD, IxDyn};

const LIMIT: u64 = 4096;
const TOL: f64 = 1e-6;

const BOUNDARIES: [Boundary; 6] =
    [Boundary::Constant(0.0), Boundary::Constant(0.7), Boundary::Nearest, Boundary::Reflect, Boundary::Mirror, Boundary::Wrap];

/// A GPU whose buffers are limited to `LIMIT` bytes.
fn small_gpu() -> &'static Gpu {
    static GPU: OnceLock<Gpu> = OnceLock::new();
    GPU.get_or_init(|| {
        let mut g = Gpu::new().unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}. Run scripts/test, which installs lavapipe."));
        g.lower_max_buffer_bytes(LIMIT);
        g
    })
}

fn check(got: &ArrayD<f32>, want: &ArrayD<f64>, magnitude: &ArrayD<f64>, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    assert!(got.iter().all(|v| v.is_finite()), "{what}: non-finite output");
    let err: f64 = got.iter().zip(want).map(|(&g, &w)| (g as f64 - w).powi(2)).sum::<f64>().sqrt();
    let scale: f64 = magnitude.iter().map(|m| m * m).sum::<f64>().sqrt();
    assert!(err <= TOL * scale, "{what}: error {:e} relative to Σ|w||x|", err / scale);
}

#[test]
fn slabs_match_the_reference_and_the_whole_volume() {
    // (volume, kernel): several slabs each (the first needs 3 slabs of 3 rows and more), a
    // kernel longer along axis 0 than a slab's output, 1-4D, even kernel rows.
    let cases: &[(&[usize], &[usize])] = &[(&[37, 9, 11], &[5, 3, 4]), (&[4000], &[9]), (&[9, 7, 5, 6], &[4, 3, 3, 3]), (&[23, 40], &[6, 7])];
    for &(xd, kd) in cases {
        let plane_bytes = xd[1..].iter().product::<usize>() as u64 * 4;
        let rows = slabs::slab_rows(xd, kd[0], LIMIT).unwrap();
        assert!(rows < xd[0] && (rows + kd[0] - 1) as u64 * plane_bytes <= LIMIT, "{xd:?}: {rows} rows per slab");
        let (x, k) = (rand_array(xd), rand_array(kd));
        let (x64, k64) = (x.mapv(|v| v as f64), k.mapv(|v| v as f64));
        let (xa, ka) = (x64.mapv(f64::abs), k64.mapv(f64::abs));
        for b in BOUNDARIES {
            let what = format!("{xd:?} {kd:?} {b:?}");
            let got = slabs::correlate_host(small_gpu(), &x.view(), &k.view(), b).unwrap();
            check(&got, &cpu::correlate(&x64, &k64, b), &cpu::correlate(&xa, &ka, abs_boundary(b)), &format!("correlate {what}"));
            let whole = slabs::correlate_host(gpu(), &x.view(), &k.view(), b).unwrap();
            check(&got, &whole.mapv(|v| v as f64), &cpu::correlate(&xa, &ka, abs_boundary(b)), &format!("slabs vs whole {what}"));
            let got = slabs::convolve_host(small_gpu(), &x.view(), &k.view(), b).unwrap();
            check(&got, &cpu::convolve(&x64, &k64, b), &cpu::convolve(&xa, &ka, abs_boundary(b)), &format!("convolve {what}"));
        }
    }
}

#[test]
fn bad_input_is_reported() {
    // Not even one slab fits: the kernel's rows of a 1000-element plane exceed 4 KiB.
    let x = rand_array(&[6, 1000]);
    let k = rand_array(&[2, 3]);
    assert!(matches!(slabs::correlate_host(small_gpu(), &x.view(), &k.view(), Boundary::Reflect), Err(Error::TooLarge { .. })));
    let x = rand_array(&[30, 10]);
    let mut nan = rand_array(&[3, 3]);
    nan[[2, 2]] = f32::NAN;
    assert!(matches!(slabs::correlate_host(small_gpu(), &x.view(), &nan.view(), Boundary::Reflect), Err(Error::NonFinite(_))));
    assert!(matches!(slabs::correlate_host(small_gpu(), &nan.view(), &x.view(), Boundary::Reflect), Err(Error::NonFinite(_))));
    let line = rand_array(&[3]);
    assert!(matches!(slabs::convolve_host(small_gpu(), &x.view(), &line.view(), Boundary::Wrap), Err(Error::Shape(_))));
    let empty = ArrayD::<f32>::zeros(IxDyn(&[0, 10]));
    assert!(matches!(slabs::convolve_host(small_gpu(), &empty.view(), &k.view(), Boundary::Wrap), Err(Error::Empty(_))));
}
