//! The f64 path of the spatial filters (lucent::ndimage on f64 arrays: the kernels' f64 twins on
//! devices with SHADER_F64) against the f64 references: fresh random inputs of awkward shapes in
//! every mode, outputs poisoned, errors at f64's level (an f32 computation errs by ~1e-7 and
//! fails every bound here); the chunked and slab paths; the f32 fallback where f64 is off.

use crate::common;
use common::*;
use lucent::ndimage::{self, cpu, Boundary, GaussianFilter};
use lucent::GpuOptions;
use ndarray::{ArrayD, Dimension, IxDyn};
use rand::Rng;

const MODES: [Boundary; 5] = [Boundary::Constant(0.25), Boundary::Nearest, Boundary::Reflect, Boundary::Mirror, Boundary::Wrap];

/// f64 errors: sums of at most a few hundred taps, each product rounded once (~1e-16).
const F64_TOL: f64 = 1e-12;

fn rand64(dims: &[usize]) -> ArrayD<f64> {
    let mut rng = rand::rng();
    ArrayD::from_shape_fn(IxDyn(dims), |_| rng.random::<f64>() - 0.5)
}

fn rel(got: &ArrayD<f64>, want: &ArrayD<f64>) -> f64 {
    assert_eq!(got.shape(), want.shape());
    if got.iter().any(|v| !v.is_finite()) {
        return f64::INFINITY;
    }
    let num: f64 = got.iter().zip(want).map(|(g, w)| (g - w).powi(2)).sum();
    let den: f64 = want.iter().map(|w| w * w).sum();
    (num / den.max(f64::MIN_POSITIVE)).sqrt()
}

fn f64_gpu() -> &'static lucent::Gpu {
    let gpu = poisoned_gpu();
    assert!(gpu.has_f64(), "these tests need an adapter with SHADER_F64 (lavapipe, NVIDIA and AMD Vulkan have it)");
    gpu
}

#[test]
fn gaussian_and_uniform_filters_in_f64() {
    let gpu = f64_gpu();
    for dims in [&[13][..], &[7, 11], &[5, 6, 9], &[2, 3, 5, 7]] {
        let x = rand64(dims);
        for mode in MODES {
            let sigma: Vec<f32> = (0..dims.len()).map(|a| [0.7, 1.9, 3.1, 1.2][a]).collect();
            let got = ndimage::gaussian_filter(gpu, &x, &sigma, mode).unwrap();
            let want = cpu::separable(&x, &ndimage::gaussian_passes(&sigma, dims, mode).unwrap(), mode);
            let e = rel(&got, &want);
            assert!(e < F64_TOL, "gaussian_filter {dims:?} {mode:?}: {e:.2e}");

            let size: Vec<usize> = (0..dims.len()).map(|a| [3, 4, 7, 2][a]).collect();
            let got = ndimage::uniform_filter(gpu, &x, &size, mode).unwrap();
            let want = cpu::separable(&x, &ndimage::uniform_passes(&size, dims, mode).unwrap(), mode);
            let e = rel(&got, &want);
            assert!(e < F64_TOL, "uniform_filter {dims:?} {mode:?}: {e:.2e}");
        }
    }
}

/// Both direct kernels: one thread per output (small weights) and tiled (planes of ≥ 9 taps).
#[test]
fn correlate_and_convolve_in_f64() {
    let gpu = f64_gpu();
    for (dims, kdims) in [(&[29][..], &[4][..]), (&[17, 23], &[5, 6]), (&[6, 9, 31], &[2, 3, 4]), (&[3, 4, 5, 11], &[1, 2, 3, 5])] {
        let x = rand64(dims);
        let w = rand64(kdims);
        for mode in MODES {
            let got = ndimage::correlate(gpu, &x, &w, mode).unwrap();
            let e = rel(&got, &cpu::correlate(&x, &w, mode));
            assert!(e < F64_TOL, "correlate {dims:?} ⋆ {kdims:?} {mode:?}: {e:.2e}");
            let got = ndimage::convolve(gpu, &x, &w, mode).unwrap();
            let e = rel(&got, &cpu::convolve(&x, &w, mode));
            assert!(e < F64_TOL, "convolve {dims:?} ⋆ {kdims:?} {mode:?}: {e:.2e}");
        }
    }
}

/// Sums of filter chains on the device: the f64 twins of the pointwise kernels too.
#[test]
fn derivative_filters_in_f64() {
    let gpu = f64_gpu();
    for dims in [&[19][..], &[9, 14], &[4, 7, 10]] {
        let x = rand64(dims);
        let g = GaussianFilter::new(&[1.3]);
        for mode in [Boundary::Reflect, Boundary::Constant(-1.5), Boundary::Wrap] {
            let cases = [
                (
                    "gaussian_gradient_magnitude",
                    ndimage::gradient_magnitude_terms(&g, dims, mode).unwrap(),
                    ndimage::gaussian_gradient_magnitude(gpu, &x, &g, mode).unwrap(),
                ),
                ("gaussian_laplace", ndimage::laplace_of_gaussian_terms(&g, dims, mode).unwrap(), ndimage::gaussian_laplace(gpu, &x, &g, mode).unwrap()),
                ("sobel", ndimage::edge_terms(dims, -1, [1.0, 2.0, 1.0], mode).unwrap(), ndimage::sobel(gpu, &x, -1, mode).unwrap()),
                ("laplace", ndimage::laplace_terms(dims, mode).unwrap(), ndimage::laplace(gpu, &x, mode).unwrap()),
            ];
            for (name, terms, got) in cases {
                let e = rel(&got, &cpu::filter_terms(&x, &terms, mode));
                assert!(e < F64_TOL, "{name} {dims:?} {mode:?}: {e:.2e}");
            }
        }
    }
}

/// Arrays beyond one buffer: chunks on the device, then slabs through the host, equal to the
/// whole-array f64 result.
#[test]
fn chunked_and_slab_paths_in_f64() {
    let x = rand64(&[23, 8, 9]);
    let sigma = [1.5f32, 0.8, 2.0];
    let want = cpu::separable(&x, &ndimage::gaussian_passes(&sigma, x.shape(), Boundary::Mirror).unwrap(), Boundary::Mirror);
    let base = GpuOptions { poison: true, ..GpuOptions::from_env().unwrap() };
    // 16 planes of f64 per buffer (the kernel has 13 rows): chunks; then a device budget below
    // two copies: slabs.
    for options in [
        GpuOptions { max_buffer_bytes: Some(16 * 8 * 9 * 8), ..base.clone() },
        GpuOptions { max_buffer_bytes: Some(16 * 8 * 9 * 8), device_memory_bytes: Some(2 * 23 * 8 * 9 * 8 - 8), ..base.clone() },
    ] {
        let gpu = open(options);
        let got = ndimage::gaussian_filter(&gpu, &x, &sigma, Boundary::Mirror).unwrap();
        let e = rel(&got, &want);
        assert!(e < F64_TOL, "gaussian_filter beyond one buffer: {e:.2e}");
    }
}

/// With f64 off (as on Metal), f64 data is computed in f32: the f32 result, widened.
#[test]
fn f64_data_without_f64_is_computed_in_f32() {
    let gpu = open(GpuOptions { no_f64: true, ..GpuOptions::from_env().unwrap() });
    assert!(!gpu.has_f64());
    let x = rand64(&[6, 17]);
    let x32 = x.mapv(|v| v as f32);
    for mode in MODES {
        let got = ndimage::gaussian_filter(&gpu, &x, &[1.2], mode).unwrap();
        let want = ndimage::gaussian_filter(&gpu, &x32, &[1.2], mode).unwrap().mapv(|v| v as f64);
        assert_eq!(got, want, "{mode:?}");
        let got = ndimage::gaussian_gradient_magnitude(&gpu, &x, &GaussianFilter::new(&[0.9]), mode).unwrap();
        let want = ndimage::gaussian_gradient_magnitude(&gpu, &x32, &GaussianFilter::new(&[0.9]), mode).unwrap().mapv(|v| v as f64);
        assert_eq!(got, want, "{mode:?}");
    }
    // The engine refuses f64 arrays there, saying why.
    let e = lucent::GpuArray::upload_real(&gpu, &x.view()).unwrap_err().to_string();
    assert!(e.contains("f64"), "{e}");
}

/// Selections (rank, median, minimum, maximum, grey morphology) of f64 data return input values
/// exactly: integers beyond f32's 2^24 and values f32 would round, equal to the reference bit
/// for bit; both rank paths (the sorting network up to 32 taps, the selection beyond).
#[test]
fn selections_in_f64_are_exact() {
    use ndimage::Footprint;
    let gpu = f64_gpu();
    let mut rng = rand::rng();
    for dims in [&[31][..], &[9, 12], &[5, 6, 7]] {
        // Distinct f64 values f32 cannot hold: 2^40 + small integers, plus random fractions.
        let x = ArrayD::from_shape_fn(IxDyn(dims), |_| (1u64 << 40) as f64 + rng.random_range(0..1000) as f64 + rng.random::<f64>() * 1e-3);
        for size in [3usize, 5] {
            let fp = ArrayD::from_elem(IxDyn(&vec![size; dims.len()]), true);
            let f = Footprint::new(&fp.view(), None, &[]).unwrap();
            for mode in MODES {
                let taps = f.offsets.len();
                for rank in [0, taps / 2, taps - 1] {
                    let got = ndimage::rank_filter(gpu, &x, rank as i64, &fp.view(), &[], mode).unwrap();
                    assert_eq!(got, cpu::footprint_rank(&x, &f, rank, mode), "rank {rank} of {taps} {dims:?} {mode:?}");
                }
                assert_eq!(ndimage::minimum_filter(gpu, &x, &fp.view(), &[], mode).unwrap(), cpu::footprint_extreme(&x, &f, false, mode), "{dims:?} {mode:?}");
                assert_eq!(ndimage::maximum_filter(gpu, &x, &fp.view(), &[], mode).unwrap(), cpu::footprint_extreme(&x, &f, true, mode), "{dims:?} {mode:?}");
                let structure = ArrayD::from_shape_fn(fp.raw_dim(), |_| rng.random::<f64>());
                let got = ndimage::grey_dilation(gpu, &x, &fp.view(), Some(&structure.view()), &[], mode).unwrap();
                let want = cpu::footprint_extreme(&x, &Footprint::reflected(&fp.view(), Some(&structure.view()), &[]).unwrap(), true, mode);
                assert_eq!(got, want, "grey_dilation {dims:?} {mode:?}");
            }
        }
    }
}

/// The B-spline prefilter of orders 2-5 in f64 (its halos long enough for f64's precision) in
/// every mode, along every axis, against the f64 reference.
#[test]
fn spline_filter_in_f64() {
    use ndimage::SplineMode;
    let gpu = f64_gpu();
    for dims in [&[37][..], &[9, 70], &[5, 6, 41]] {
        let x = rand64(dims);
        for mode in [SplineMode::Mirror, SplineMode::Reflect, SplineMode::GridWrap, SplineMode::Constant, SplineMode::Nearest] {
            for order in 2..=5 {
                let got = ndimage::spline_filter(gpu, &x, order, mode).unwrap();
                let e = rel(&got, &cpu::spline_filter(&x, order, mode));
                assert!(e < F64_TOL, "spline_filter order {order} {dims:?} {mode:?}: {e:.2e}");
            }
        }
    }
}

/// Interpolation of f64 data in f64 (the prefilter, the samplers of orders 0-5, the affine
/// maps' coefficients to ~2^-48): map_coordinates, shift, zoom, rotate and affine_transform
/// against the f64 reference in every mode. The coordinates' last bits (the map's f32 pair)
/// leave errors of ~1e-13 here, where f32 leaves ~1e-6.
#[test]
fn interpolation_in_f64() {
    use ndimage::{coordinates, Sampling, SplineMode};
    const TOL: f64 = 1e-11;
    let gpu = f64_gpu();
    let mut rng = rand::rng();
    let modes =
        [SplineMode::Mirror, SplineMode::Reflect, SplineMode::Nearest, SplineMode::Wrap, SplineMode::GridWrap, SplineMode::Constant, SplineMode::GridConstant];
    for dims in [&[29][..], &[6, 7, 9]] {
        let x = rand64(dims);
        let rank = dims.len();
        // Every mode with three orders, odd and even ones (each pair compiles its own pipelines):
        // modes 0, 2, 4, 6 with orders 0, 3, 4, the others with 1, 2, 5.
        for order in 0..=5u32 {
            for &mode in modes.iter().skip((order / 2 + order) as usize % 2).step_by(2) {
                let how = Sampling { order, mode, cval: -0.5, ..Sampling::default() };
                // Points inside and beyond the edges.
                let points = 23;
                let c = ArrayD::from_shape_fn(IxDyn(&[rank, points]), |i| (rng.random::<f64>() * 1.4 - 0.2) * dims[i[0]] as f64);
                let got = ndimage::map_coordinates(gpu, &x, &c, &how).unwrap();
                let e = rel(&got, &cpu::map_coordinates(&x, &c, &how));
                assert!(e < TOL, "map_coordinates order {order} {dims:?} {mode:?}: {e:.2e}");

                let shift: Vec<f64> = (0..rank).map(|a| [0.37, -1.61, 2.2][a]).collect();
                let (map, out) = ndimage::shift_map(dims, &shift).unwrap();
                let got = ndimage::shift(gpu, &x, &shift, &how).unwrap();
                let e = rel(&got.into_dyn(), &cpu::map_coordinates(&x, &coordinates(&map, &out), &how));
                assert!(e < TOL, "shift order {order} {dims:?} {mode:?}: {e:.2e}");

                if rank >= 2 {
                    let (map, out) = ndimage::rotate_map(dims, 23.0, [-1, -2], true).unwrap();
                    let got = ndimage::rotate(gpu, &x, 23.0, [-1, -2], true, &how).unwrap();
                    let e = rel(&got.into_dyn(), &cpu::map_coordinates(&x, &coordinates(&map, &out), &how));
                    assert!(e < TOL, "rotate order {order} {dims:?} {mode:?}: {e:.2e}");
                }
                // zoom's grid lands on halves (3.5 = 6 · 28/48), where order 0's pick turns on the
                // coordinate's last bit, and its last point on n − 1, where constant (cval beyond)
                // and wrap (period n − 1) jump: the f64 twin's coordinates are the reference's.
                let zoom: Vec<f64> = (0..rank).map(|a| [1.7, 0.6, 1.3][a]).collect();
                let (map, out) = ndimage::zoom_map(dims, &zoom, false).unwrap();
                let got = ndimage::zoom(gpu, &x, &zoom, false, &how).unwrap();
                let e = rel(&got.into_dyn(), &cpu::map_coordinates(&x, &coordinates(&map, &out), &how));
                assert!(e < TOL, "zoom order {order} {dims:?} {mode:?}: {e:.2e}");
            }
        }
    }
}

/// f64 arrays come back bit for bit through each way out of a recording: a download (its 4-byte
/// words copied into f64s, whatever their alignment), an output read by `download_joined`, and
/// a filter whose weights leave the input as it is (one tap of 1).
#[test]
fn f64_arrays_round_trip() {
    let gpu = f64_gpu();
    for n in [1usize, 3, 1025] {
        let x = rand64(&[n]);
        let mut rec = lucent::Recording::new(gpu);
        let a = rec.upload_real(&x.view()).unwrap();
        let b = ndimage::record_correlate1d(&mut rec, a, &[1.0f64], 0, Boundary::Wrap).unwrap();
        let (da, db) = (rec.download(a), rec.download(b));
        let o = rec.output(b);
        let mut results = rec.run().unwrap();
        assert_eq!(results.take_real::<f64>(da).unwrap(), x);
        assert_eq!(results.take_real::<f64>(db).unwrap(), x);
        assert_eq!(lucent::GpuArray::download_joined::<f64>(gpu, &[results.array(o)], &[n]).unwrap(), x);
    }
}

/// The distance transform of f64 input in f64, with a spacing f32 cannot hold, against the
/// distances computed by brute force in f64.
#[test]
fn distance_transform_in_f64() {
    let gpu = f64_gpu();
    let mut rng = rand::rng();
    for (dims, sampling) in [(&[37][..], &[0.3][..]), (&[9, 14], &[0.3, 1.7]), (&[5, 6, 7], &[1.1, 0.3, 2.9])] {
        let x = ArrayD::from_shape_fn(IxDyn(dims), |_| f64::from(rng.random::<f64>() > 0.15));
        let mut x = x;
        x[IxDyn(&vec![0; dims.len()])] = 0.0; // at least one zero
        let got = ndimage::distance_transform_edt(gpu, &x, sampling).unwrap();
        let zeros: Vec<Vec<usize>> = x.indexed_iter().filter(|(_, &v)| v == 0.0).map(|(i, _)| i.slice().to_vec()).collect();
        let want = ArrayD::from_shape_fn(IxDyn(dims), |i| {
            zeros.iter().map(|z| (0..dims.len()).map(|a| ((i[a] as f64 - z[a] as f64) * sampling[a]).powi(2)).sum::<f64>()).fold(f64::INFINITY, f64::min).sqrt()
        });
        let e = rel(&got, &want);
        assert!(e < F64_TOL, "distance_transform_edt {dims:?} {sampling:?}: {e:.2e}");
    }
}

/// The feature transform (scipy's return_indices): every element's indices name a zero element
/// at exactly its distance (ties may pick another zero than scipy), in f32 and f64, 1-3 axes,
/// the last axis's pass on the swapped array too.
#[test]
fn feature_transform_names_a_nearest_zero() {
    let gpu = f64_gpu();
    let mut rng = rand::rng();
    for (dims, sampling) in [(&[41][..], &[1.0][..]), (&[13, 17], &[0.7, 1.3]), (&[5, 9, 11], &[1.0, 2.0, 0.5])] {
        let mut x = ArrayD::from_shape_fn(IxDyn(dims), |_| f64::from(rng.random::<f64>() > 0.1));
        x[IxDyn(&vec![dims[0] - 1; 1].into_iter().chain(vec![0; dims.len() - 1]).collect::<Vec<_>>())] = 0.0;
        let (d64, i64) = ndimage::distance_transform_edt_with_indices(gpu, &x, sampling).unwrap();
        let (d32, i32) = ndimage::distance_transform_edt_with_indices(gpu, &x.mapv(|v| v as f32), sampling).unwrap();
        assert_eq!(d64, ndimage::distance_transform_edt(gpu, &x, sampling).unwrap());
        for (d, idx, tol) in [(d64, i64, 1e-12), (d32.mapv(f64::from), i32, 1e-6)] {
            assert_eq!(idx.shape()[0], dims.len());
            assert_eq!(&idx.shape()[1..], dims);
            for (at, &dist) in d.indexed_iter() {
                let z: Vec<usize> = (0..dims.len()).map(|a| idx[IxDyn(&[&[a][..], at.slice()].concat())] as usize).collect();
                assert_eq!(x[IxDyn(&z)], 0.0, "{dims:?} at {at:?}: {z:?} is not a zero");
                let to = (0..dims.len()).map(|a| ((at[a] as f64 - z[a] as f64) * sampling[a]).powi(2)).sum::<f64>().sqrt();
                assert!((to - dist).abs() <= tol * (1.0 + dist), "{dims:?} at {at:?}: {z:?} at {to}, distance {dist}");
            }
        }
    }
}
