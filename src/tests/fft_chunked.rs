//! Transforms of arrays held in several buffers (`ChunkedFft`) against rustfft in f64: chunk
//! counts 2 to 5, prime chunk lengths, odd real lengths, batch axes with a shorter last chunk.
//! Spectra across chunks come in decimated order (chunk k1, row k2 = frequency k1 + K k2).
//! Temporaries poisoned.

use crate::tests::common;
use common::*;

use lucent::fft::{cpu, ChunkedFft, Norm, Transform};
use lucent::gpu::GpuOptions;
use lucent::graph::{row_ranges, Chunked};
use lucent::{Gpu, Recording};
use ndarray::{ArrayD, Axis, IxDyn};
use num_complex::{Complex32, Complex64};

fn chunky_gpu() -> &'static Gpu {
    static GPU: std::sync::OnceLock<Gpu> = std::sync::OnceLock::new();
    GPU.get_or_init(|| open(GpuOptions { poison: true, ..GpuOptions::from_env().unwrap() }))
}

/// The f64 spectrum's rows along axis 0 in the decimated order of `k` chunks.
fn decimated(x: &ArrayD<Complex64>, k: usize) -> ArrayD<Complex64> {
    let n = x.shape()[0];
    let m = n / k;
    let order: Vec<usize> = (0..k).flat_map(|k1| (0..m).map(move |k2| k1 + k * k2)).collect();
    x.select(Axis(0), &order)
}

fn max_err(got: &[Complex32], want: &ArrayD<Complex64>) -> f64 {
    let scale = want.iter().map(|v| v.norm()).fold(0.0, f64::max);
    got.iter().zip(want.iter()).map(|(g, w)| (Complex64::new(g.re as f64, g.im as f64) - w).norm()).fold(0.0, f64::max) / scale
}

/// Runs `plan` on `x` split into `rows` and returns the chunks' results joined along axis 0.
fn run_c32(gpu: &Gpu, plan: &ChunkedFft, x: Chunks, rows: &[std::ops::Range<usize>]) -> ArrayD<Complex32> {
    let mut rec = Recording::new(gpu);
    let xs = match x {
        Chunks::Real(x) => Chunked::upload_f32(&mut rec, &x.view(), rows).unwrap(),
        Chunks::Complex(x) => {
            let parts = rows.iter().map(|r| rec.upload_c32(&x.slice_axis(Axis(0), r.clone().into())).unwrap()).collect();
            Chunked::from_parts(&rec, parts).unwrap()
        }
    };
    let y = plan.record(&mut rec, &xs).unwrap();
    let downloads: Vec<_> = y.parts.iter().map(|&p| rec.download(p)).collect();
    let r = rec.run().unwrap();
    let parts: Vec<ArrayD<Complex32>> = downloads.into_iter().map(|d| r.c32(d).unwrap()).collect();
    let views: Vec<_> = parts.iter().map(|p| p.view()).collect();
    ndarray::concatenate(Axis(0), &views).unwrap()
}

enum Chunks {
    Real(ArrayD<f32>),
    Complex(ArrayD<Complex32>),
}

fn random_c(dims: &[usize]) -> ArrayD<Complex32> {
    ArrayD::from_shape_vec(IxDyn(dims), random_complex(dims.iter().product())).unwrap()
}

#[test]
fn real_forward_across_chunks_matches_rfftn_in_decimated_order() {
    let gpu = chunky_gpu();
    for (k, m, dims) in [(2, 7, vec![6, 11]), (3, 5, vec![4, 9]), (5, 3, vec![7, 8]), (4, 13, vec![3])] {
        let mut full = vec![k * m];
        full.extend(&dims);
        let axes: Vec<usize> = (0..full.len()).collect();
        let rows = row_ranges(k * m, m);
        let x = rand_array(&full);
        let plan = ChunkedFft::new(gpu, &full, &axes, Transform::RealForward, Norm::Backward, &rows).unwrap();
        assert!(plan.crosses_chunks());
        let got = run_c32(gpu, &plan, Chunks::Real(x.clone()), &rows);
        let want = decimated(&cpu::r2c(&to64(&x), &axes, Norm::Backward), k);
        assert_eq!(got.shape(), want.shape());
        let err = max_err(got.as_slice().unwrap(), &want);
        assert!(err < 3e-6, "{full:?} in {k} chunks: max error {err:e}");
    }
}

#[test]
fn real_round_trip_across_chunks_is_identity() {
    let gpu = chunky_gpu();
    for (k, m, dims) in [(3, 7, vec![5, 13]), (2, 11, vec![10])] {
        let mut full = vec![k * m];
        full.extend(&dims);
        let axes: Vec<usize> = (0..full.len()).collect();
        let rows = row_ranges(k * m, m);
        let x = rand_array(&full);
        let fwd = ChunkedFft::new(gpu, &full, &axes, Transform::RealForward, Norm::Backward, &rows).unwrap();
        let len = *full.last().unwrap();
        let inv = ChunkedFft::new(gpu, fwd.output_dims(), &axes, Transform::RealInverse { len }, Norm::Backward, &rows).unwrap();
        let mut rec = Recording::new(gpu);
        let xs = Chunked::upload_f32(&mut rec, &x.view(), &rows).unwrap();
        let s = fwd.record(&mut rec, &xs).unwrap();
        let y = inv.record(&mut rec, &s).unwrap();
        assert_eq!(y.dims, full);
        let d = y.download(&mut rec);
        let mut r = rec.run().unwrap();
        let got = d.into_f32(&mut r).unwrap();
        let err = got.iter().zip(x.iter()).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
        assert!(err < 2e-6, "{full:?}: round trip error {err:e}");
    }
}

#[test]
fn complex_transforms_across_chunks_both_directions() {
    let gpu = chunky_gpu();
    for (k, m, rest, axes) in [(3, 7, vec![6], vec![0, 1]), (2, 5, vec![9], vec![0]), (5, 2, vec![3, 4], vec![0, 2])] {
        let mut full = vec![k * m];
        full.extend(&rest);
        let rows = row_ranges(k * m, m);
        let x = random_c(&full);
        let x64 = x.mapv(|v| Complex64::new(v.re as f64, v.im as f64));
        let fwd = ChunkedFft::new(gpu, &full, &axes, Transform::Forward, Norm::Ortho, &rows).unwrap();
        let got = run_c32(gpu, &fwd, Chunks::Complex(x.clone()), &rows);
        let want = decimated(&cpu::c2c(&x64, &axes, false, Norm::Ortho), k);
        let err = max_err(got.as_slice().unwrap(), &want);
        assert!(err < 3e-6, "forward {full:?} axes {axes:?}: {err:e}");
        // The inverse of a decimated spectrum is the plain inverse of the spectrum.
        let inv = ChunkedFft::new(gpu, &full, &axes, Transform::Inverse, Norm::Ortho, &rows).unwrap();
        let spectrum = decimated(&cpu::c2c(&x64, &axes, false, Norm::Ortho), k).mapv(|v| Complex32::new(v.re as f32, v.im as f32));
        let back = run_c32(gpu, &inv, Chunks::Complex(spectrum), &rows);
        let err = max_err(back.as_slice().unwrap(), &x64);
        assert!(err < 3e-6, "inverse {full:?} axes {axes:?}: {err:e}");
    }
}

#[test]
fn batch_axis_chunks_may_be_unequal() {
    let gpu = chunky_gpu();
    let full = [13, 6, 9];
    let rows = row_ranges(13, 5);
    assert_eq!(rows.len(), 3);
    let x = rand_array(&full);
    let plan = ChunkedFft::new(gpu, &full, &[1, 2], Transform::RealForward, Norm::Backward, &rows).unwrap();
    assert!(!plan.crosses_chunks());
    let got = run_c32(gpu, &plan, Chunks::Real(x.clone()), &rows);
    let want = cpu::r2c(&to64(&x), &[1, 2], Norm::Backward);
    let err = max_err(got.as_slice().unwrap(), &want);
    assert!(err < 3e-6, "batch: {err:e}");
}

#[test]
fn unequal_chunks_cannot_cross_axis_0() {
    let gpu = chunky_gpu();
    let rows = row_ranges(13, 5);
    assert!(ChunkedFft::new(gpu, &[13, 6], &[0, 1], Transform::RealForward, Norm::Backward, &rows).is_err());
    assert!(ChunkedFft::new(gpu, &[12, 6], &[0], Transform::RealForward, Norm::Backward, &row_ranges(12, 4)).is_err());
    // A fused product is for inverses, and its plan is recorded with the second operand only.
    let rows = row_ranges(12, 4);
    assert!(ChunkedFft::inverse_of_product(gpu, &[12, 6], &[0, 1], Transform::Forward, Norm::Backward, &rows, false).is_err());
    let plan = ChunkedFft::inverse_of_product(gpu, &[12, 6], &[0, 1], Transform::Inverse, Norm::Backward, &rows, true).unwrap();
    let mut rec = Recording::new(gpu);
    let parts = rows.iter().map(|r| rec.temp(&[r.len(), 6], lucent::gpu::Dtype::C32).unwrap()).collect();
    let x = Chunked::from_parts(&rec, parts).unwrap();
    assert!(plan.record(&mut rec, &x).is_err());
    assert!(plan.record_with(&mut rec, &x, &x).is_ok());
}

/// The fused product: ifftn(X · conj(H)) across chunks equals the f64 reference.
#[test]
fn inverse_of_a_product_across_chunks() {
    let gpu = chunky_gpu();
    let (k, m, full) = (3, 7, [21usize, 10]);
    let rows = row_ranges(k * m, m);
    let (a, b) = (random_c(&full), random_c(&full));
    let plan = ChunkedFft::inverse_of_product(gpu, &full, &[0, 1], Transform::Inverse, Norm::Backward, &rows, true).unwrap();
    let mut rec = Recording::new(gpu);
    let mut up = |z: &ArrayD<Complex32>| {
        let parts = rows.iter().map(|r| rec.upload_c32(&z.slice_axis(Axis(0), r.clone().into())).unwrap()).collect();
        Chunked::from_parts(&rec, parts).unwrap()
    };
    let (xa, xb) = (up(&a), up(&b));
    let y = plan.record_with(&mut rec, &xa, &xb).unwrap();
    let downloads: Vec<_> = y.parts.iter().map(|&p| rec.download(p)).collect();
    let r = rec.run().unwrap();
    let parts: Vec<ArrayD<Complex32>> = downloads.into_iter().map(|d| r.c32(d).unwrap()).collect();
    let views: Vec<_> = parts.iter().map(|p| p.view()).collect();
    let got = ndarray::concatenate(Axis(0), &views).unwrap();
    // The input is a decimated spectrum: undo the order, multiply, invert in f64.
    let product = ndarray::Zip::from(&a).and(&b).map_collect(|x, y| Complex64::new(x.re as f64, x.im as f64) * Complex64::new(y.re as f64, -y.im as f64));
    let mut natural = product.clone();
    for k1 in 0..k {
        for k2 in 0..m {
            natural.index_axis_mut(Axis(0), k1 + k * k2).assign(&product.index_axis(Axis(0), k1 * m + k2));
        }
    }
    let want = cpu::c2c(&natural, &[0, 1], true, Norm::Backward);
    let err = max_err(got.as_slice().unwrap(), &want);
    assert!(err < 3e-6, "inverse of a product: {err:e}");
}

/// numpy.fft's one-calls on arrays beyond one buffer: in numpy's order, through chunks.
#[test]
fn one_calls_beyond_a_buffer_match_numpy_order() {
    let capped = open(GpuOptions { poison: true, max_buffer_bytes: Some(8 << 10), ..GpuOptions::from_env().unwrap() });
    let x = rand_array(&[30, 12, 14]);
    let x64 = to64(&x);
    for axes in [vec![0, 1, 2], vec![1, 2], vec![0, 2]] {
        let got = lucent::fft::rfftn(&capped, &x, Some(&axes), Norm::Backward).unwrap();
        let want = cpu::r2c(&x64, &axes, Norm::Backward);
        let err = max_err(got.as_slice().unwrap(), &want);
        assert!(err < 3e-6, "rfftn axes {axes:?}: {err:e}");
        let len = x.shape()[*axes.last().unwrap()];
        let back = lucent::fft::irfftn(&capped, &got, Some(&axes), Some(len), Norm::Backward).unwrap();
        let err = back.iter().zip(x.iter()).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
        assert!(err < 2e-6, "irfftn axes {axes:?}: {err:e}");
    }
    let z = random_c(&[21, 10, 6]);
    let z64 = z.mapv(|v| Complex64::new(v.re as f64, v.im as f64));
    let got = lucent::fft::fftn(&capped, &z, None, Norm::Ortho).unwrap();
    let err = max_err(got.as_slice().unwrap(), &cpu::c2c(&z64, &[0, 1, 2], false, Norm::Ortho));
    assert!(err < 3e-6, "fftn: {err:e}");
    let got = lucent::fft::ifftn(&capped, &z, Some(&[0, 1]), Norm::Backward).unwrap();
    let err = max_err(got.as_slice().unwrap(), &cpu::c2c(&z64, &[0, 1], true, Norm::Backward));
    assert!(err < 3e-6, "ifftn: {err:e}");
    // A prime length along a transformed axis 0 has no equal chunks: a clear error.
    let p = rand_array(&[127, 8, 8]);
    assert!(matches!(lucent::fft::rfftn(&capped, &p, None, Norm::Backward), Err(lucent::Error::TooLarge { .. })));
}
