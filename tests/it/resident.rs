//! Work on arrays that stay on the device (`engine::resident`, Python's `lucent.Array`): the
//! broadcasting elementwise kernel and the finiteness test against their CPU twins, and the
//! resident forms of Richardson-Lucy, phase correlation and the FFT against the host paths.

use lucent::engine::broadcast::{self, BroadcastOp};
use lucent::engine::{count_nonfinite, layout, resident, Recording};
use lucent::fft::{Norm, Transform};
use lucent::registration::{PhaseCorrelation, PhaseCorrelator};
use lucent::restoration::{richardson_lucy, richardson_lucy_resident, RlBoundary, RlOptions};
use lucent::{Dtype, GpuArray};
use ndarray::{ArrayD, IxDyn};

use crate::common::{poisoned_gpu, rand_array, random_positive};

const OPS: [BroadcastOp; 12] = [
    BroadcastOp::Add,
    BroadcastOp::Subtract,
    BroadcastOp::Multiply,
    BroadcastOp::Divide,
    BroadcastOp::Maximum,
    BroadcastOp::Minimum,
    BroadcastOp::Less,
    BroadcastOp::LessEqual,
    BroadcastOp::Greater,
    BroadcastOp::GreaterEqual,
    BroadcastOp::Equal,
    BroadcastOp::NotEqual,
];

/// Shapes that broadcast every way: a scalar, axes of 1 on either side, fewer axes, four axes.
const SHAPES: [(&[usize], &[usize]); 5] = [(&[7, 1, 5], &[3, 1]), (&[13], &[1]), (&[2, 3, 4, 5], &[5]), (&[1, 9], &[4, 1]), (&[6, 11], &[6, 11])];

/// Values on a coarse grid, so that the comparisons meet equal values too.
fn coarse(dims: &[usize]) -> ArrayD<f32> {
    rand_array(dims).mapv(|v| (v * 8.0).round() / 4.0 + 3.0)
}

#[test]
fn broadcast_ops_match_their_twin_in_f32_and_f64() {
    let gpu = poisoned_gpu();
    for (a, b) in SHAPES {
        let (x, y) = (coarse(a), coarse(b));
        let (x64, y64) = (x.mapv(|v| v as f64), y.mapv(|v| v as f64));
        for op in OPS {
            let (want, dims) = broadcast::cpu(op, x64.as_slice().unwrap(), a, y64.as_slice().unwrap(), b).unwrap();
            let got32 = resident::run(
                gpu,
                &[(&GpuArray::upload_f32(gpu, &x.view()).unwrap(), "x"), (&GpuArray::upload_f32(gpu, &y.view()).unwrap(), "y")],
                |rec, v| Ok(vec![broadcast::record(rec, op, v[0], v[1])?]),
            )
            .unwrap();
            let got = got32[0].download_f32(gpu).unwrap();
            assert_eq!(got.shape(), dims.as_slice(), "{op:?} {a:?} {b:?}");
            for (g, w) in got.iter().zip(&want) {
                // The f32 kernel rounds the exact result once (divide); the rest are exact here.
                assert!((*g as f64 - w).abs() <= w.abs() * 6e-8, "{op:?} {a:?} {b:?}: {g} vs {w}");
            }
            if gpu.has_f64() {
                let (xd, yd) = (GpuArray::upload_real(gpu, &x64.view()).unwrap(), GpuArray::upload_real(gpu, &y64.view()).unwrap());
                let z = resident::run(gpu, &[(&xd, "x"), (&yd, "y")], |rec, v| Ok(vec![broadcast::record(rec, op, v[0], v[1])?])).unwrap();
                let got = GpuArray::download_joined::<f64>(gpu, &z, &dims).unwrap();
                assert_eq!(got.as_slice().unwrap(), want.as_slice(), "{op:?} f64 {a:?} {b:?}");
            }
        }
    }
    let mut rec = Recording::new(gpu);
    let (x, y) = (rec.temp(&[3, 4], Dtype::F32).unwrap(), rec.temp(&[5], Dtype::F32).unwrap());
    assert!(broadcast::record(&mut rec, BroadcastOp::Add, x, y).unwrap_err().to_string().contains("broadcast"));
}

#[test]
fn nonfinite_values_are_found_in_every_type() {
    let gpu = poisoned_gpu();
    for n in [1usize, 7, 1023, 4099] {
        for bad in [None, Some(f64::NAN), Some(f64::INFINITY), Some(f64::NEG_INFINITY), Some(f64::MAX)] {
            let mut x = ArrayD::from_shape_vec(IxDyn(&[n]), random_positive(n).into_iter().map(|v| v as f64).collect()).unwrap();
            if let Some(v) = bad {
                x[[n - 1 - n / 3]] = v;
            }
            let want = x.iter().any(|v| !(*v as f32).is_finite());
            let flag = |a: &GpuArray| {
                let mut rec = Recording::new(gpu);
                let b = rec.input(a);
                let f = count_nonfinite::record(&mut rec, b).unwrap();
                let d = rec.download(f);
                rec.run().unwrap().u32(d).unwrap()[[0]] != 0
            };
            // f32 (f64::MAX overflows to infinity there), and in f64 where it stays finite.
            assert_eq!(flag(&GpuArray::upload_f32(gpu, &x.mapv(|v| v as f32).view()).unwrap()), want, "f32 n={n} {bad:?}");
            let c = x.mapv(|v| num_complex::Complex32::new(1.0, v as f32));
            assert_eq!(flag(&GpuArray::upload_c32(gpu, &c.view()).unwrap()), want, "c32 n={n} {bad:?}");
            if gpu.has_f64() {
                let want64 = x.iter().any(|v| !v.is_finite());
                assert_eq!(flag(&GpuArray::upload_real(gpu, &x.view()).unwrap()), want64, "f64 n={n} {bad:?}");
            }
        }
    }
    let mut x = rand_array(&[5, 6]);
    x[[2, 3]] = f32::NAN;
    let a = GpuArray::upload_f32(gpu, &x.view()).unwrap();
    let e = resident::apply(gpu, &a, "the image", |rec, b| layout::crop(rec, b, &[0, 0], &[2, 2])).unwrap_err();
    assert!(e.to_string().contains("the image holds NaN"), "{e}");
}

#[test]
fn richardson_lucy_resident_equals_the_host_path() {
    let gpu = poisoned_gpu();
    let image = rand_array(&[11, 23, 19]).mapv(|v| v + 0.5);
    let psf = rand_array(&[3, 5, 4]).mapv(|v| v + 0.5);
    let device = GpuArray::upload_f32(gpu, &image.view()).unwrap();
    for opts in [
        RlOptions::default(),
        RlOptions { boundary: RlBoundary::Periodic, accelerate: true, ..Default::default() },
        RlOptions { boundary: RlBoundary::Extended, tv: Some(0.002), ..Default::default() },
    ] {
        let want = richardson_lucy(gpu, &image, &psf, 6, &opts).unwrap();
        let got = richardson_lucy_resident(gpu, &device, &psf, 6, &opts).unwrap();
        assert_eq!(got.dims(), image.shape());
        let got = got.download_f32(gpu).unwrap();
        let err = crate::common::rel_l2(got.as_slice().unwrap(), &want.iter().map(|&v| v as f64).collect::<Vec<_>>());
        assert!(err < 1e-6, "{opts:?}: {err}");
    }
    let negative = GpuArray::upload_f32(gpu, &image.mapv(|v| v - 1.0).view()).unwrap();
    let opts = RlOptions { allow_negative: false, ..Default::default() };
    let e = richardson_lucy_resident(gpu, &negative, &psf, 3, &opts).unwrap_err();
    assert!(e.to_string().contains("non-negative"), "{e}");
}

#[test]
fn phase_correlation_and_fft_resident_equal_the_host_paths() {
    let gpu = poisoned_gpu();
    let reference = rand_array(&[20, 27, 18]);
    let mut moving = reference.clone();
    moving.as_slice_mut().unwrap().rotate_right(18 * 2 + 1);
    for upsample_factor in [1.0, 8.0] {
        let how = PhaseCorrelation { upsample_factor, ..Default::default() };
        let want = lucent::registration::phase_cross_correlation(gpu, &reference, &moving, &how).unwrap();
        let (r, m) = (GpuArray::upload_f32(gpu, &reference.view()).unwrap(), GpuArray::upload_f32(gpu, &moving.view()).unwrap());
        let got = PhaseCorrelator::new_resident(gpu, &r, &how).unwrap().register_resident(&m).unwrap();
        assert_eq!(got.shift, want.shift);
        assert!((got.error.unwrap() - want.error.unwrap()).abs() < 1e-6);
    }
    let x = rand_array(&[6, 15, 22]);
    let want = lucent::fft::rfftn(gpu, &x, Some(&[0, 2]), Norm::Ortho).unwrap();
    let a = GpuArray::upload_f32(gpu, &x.view()).unwrap();
    let got = resident::apply(gpu, &a, "x", |rec, b| lucent::fft::record_transform(rec, b, Some(&[0, 2]), Transform::RealForward, Norm::Ortho)).unwrap();
    assert_eq!(got.download_c32(gpu).unwrap(), want);
    let e = resident::apply(gpu, &a, "x", |rec, b| lucent::fft::record_transform(rec, b, None, Transform::Forward, Norm::Backward)).unwrap_err();
    assert!(e.to_string().contains("complex"), "{e}");
}

#[test]
fn concatenate_joins_chunks_along_axis_0() {
    let gpu = poisoned_gpu();
    let parts = [rand_array(&[3, 4, 5]), rand_array(&[1, 4, 5]), rand_array(&[6, 4, 5])];
    let arrays: Vec<GpuArray> = parts.iter().map(|p| GpuArray::upload_f32(gpu, &p.view()).unwrap()).collect();
    let mut rec = Recording::new(gpu);
    let bufs: Vec<_> = arrays.iter().map(|a| rec.input(a)).collect();
    let joined = layout::concatenate(&mut rec, &bufs).unwrap();
    let d = rec.download(joined);
    let got = rec.run().unwrap().f32(d).unwrap();
    let views: Vec<_> = parts.iter().map(|p| p.view()).collect();
    assert_eq!(got, ndarray::concatenate(ndarray::Axis(0), &views).unwrap());
    let mut rec = Recording::new(gpu);
    let (a, b) = (rec.temp(&[2, 3], Dtype::F32).unwrap(), rec.temp(&[2, 4], Dtype::F32).unwrap());
    assert!(layout::concatenate(&mut rec, &[a, b]).is_err());
}

#[test]
fn slices_read_what_numpy_reads() {
    let gpu = poisoned_gpu();
    let x = rand_array(&[5, 7, 6]);
    let a = GpuArray::upload_f32(gpu, &x.view()).unwrap();
    // (start, step, len) per axis, as Python's slice.indices gives them.
    for axes in [vec![(0, 1, 5), (0, 1, 7), (0, 1, 6)], vec![(4, -2, 3), (1, 3, 2), (5, -1, 6)], vec![(2, 1, 1), (6, -6, 2), (0, 5, 2)]] {
        let got = resident::apply(gpu, &a, "x", |rec, b| layout::slice(rec, b, &axes)).unwrap().download_f32(gpu).unwrap();
        let want = x.slice_each_axis(|ax| {
            let (start, step, len) = axes[ax.axis.index()];
            let end = start as isize + step as isize * (len as isize - 1);
            let (lo, hi) = if step > 0 { (start as isize, end + 1) } else { (end, start as isize + 1) };
            ndarray::Slice::new(lo, Some(hi), step as isize)
        });
        assert_eq!(got, want, "{axes:?}");
    }
    let e = resident::apply(gpu, &a, "x", |rec, b| layout::slice(rec, b, &[(0, 1, 5), (6, 1, 2), (0, 1, 6)])).unwrap_err();
    assert!(e.to_string().contains("leaves axis 1"), "{e}");
}
