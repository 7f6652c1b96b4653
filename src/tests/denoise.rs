//! True 4D adaptive filtering (ops::denoise) on the GPU: every stage against the f64 reference
//! on fresh random data of awkward shapes (2D, 3D, 4D, batches), by FFT and by direct sums, slabs against the whole
//! volume, the moving-edge phantom's PSNR in 2D, 3D and 4D and its edge kept, and bad input.
//! Outputs poisoned.

use crate::tests::common;
use common::*;

use lucent::denoise::{adaptive_filter, adaptive_filter_with, Options};
use lucent::ops::denoise::{cpu, gpu as dgpu, tensor_components, Method};
use lucent::phantom::dynamic;
use lucent::Error;
use ndarray::{ArrayD, IxDyn};

/// Smooth random data (noise through a small Gaussian, plus noise): both structure and noise.
fn textured(dims: &[usize]) -> ArrayD<f32> {
    let noise = to64(&rand_array(dims));
    let sigmas = vec![1.5; dims.len()];
    let smooth = lucent::ops::filter::cpu::gaussian_filter(&noise, &sigmas, lucent::kernels::boundary::Boundary::Mirror);
    (smooth * 8.0 + to64(&rand_array(dims)) * 0.3).mapv(|v| v as f32)
}

fn rel(got: &ArrayD<f32>, want: &ArrayD<f64>) -> f64 {
    rel_l2(got.as_standard_layout().as_slice().unwrap(), want.as_standard_layout().as_slice().unwrap())
}

#[test]
fn every_stage_matches_the_f64_reference() {
    let g = poisoned_gpu();
    for (dims, method) in [
        (vec![37usize, 29], Method::Fft),
        (vec![37, 29], Method::Spatial),
        (vec![13, 17, 11], Method::Fft),
        (vec![13, 17, 11], Method::Spatial),
        (vec![6, 9, 10, 7], Method::Fft),
        (vec![6, 9, 10, 7], Method::Spatial),
    ] {
        let d = dims.len();
        let x = textured(&dims);
        let o = Options { method, ..Options::default() };
        let want = cpu::stages(&to64(&x), d, &o);
        let (first, slabs) = (dgpu::plan(g, &dims, d, &o, dgpu::Pass::Structure).unwrap(), dgpu::plan(g, &dims, d, &o, dgpu::Pass::Reconstruction).unwrap());
        let mut report = dgpu::Report::default();
        let (tensor, largest) = dgpu::structure(g, &x.view(), d, &o, &first, &mut report, &mut |_| {}).unwrap();
        for (c, (i, j)) in tensor_components(d).into_iter().enumerate() {
            let e = rel(&tensor[c], &want.tensor[c]);
            assert!(e < 1e-5, "{dims:?} {method:?} T[{i}{j}]: {e}");
        }
        assert!((largest - want.largest).abs() < 1e-5 * want.largest, "{dims:?}: largest {largest} vs {}", want.largest);
        let y = dgpu::reconstruction(g, &x.view(), d, &tensor, largest, &o, &slabs, &mut report, &mut |_| {}).unwrap();
        let e = rel(&y, &want.output);
        assert!(e < 1e-5, "{dims:?} {method:?} output: {e}");
        // The result differs from the data: the filter did something.
        assert!(rel(&y, &to64(&x)) > 1e-2);
    }
}

#[test]
fn batches_are_denoised_item_by_item_against_the_batch_s_largest_structure() {
    // 4D data over 3 axes and 3D data over 2: each item on its own, the magnitude mapping
    // relative to the whole batch's largest tensor norm, as the reference does; as one array
    // (direct sums) and item by item (FFT).
    for (dims, d, method) in [
        (vec![3usize, 9, 12, 11], 3, Method::Fft),
        (vec![3, 9, 12, 11], 3, Method::Spatial),
        (vec![5, 13, 17], 2, Method::Auto),
        (vec![2, 3, 11, 10], 2, Method::Fft),
    ] {
        let x = textured(&dims);
        // Items of different strength: a batch-wide and a per-item scale would differ.
        let x = ArrayD::from_shape_fn(x.raw_dim(), |i| x[&i] * (1.0 + i[0] as f32));
        let o = Options { dims: Some(d), method, ..Options::default() };
        let y = adaptive_filter(poisoned_gpu(), &x, &o).unwrap();
        let want = cpu::adaptive_filter(&to64(&x), &o).unwrap();
        let e = rel(&y, &want);
        assert!(e < 1e-5, "{dims:?} over {d} axes, {method:?}: {e}");
    }
}

#[test]
fn slabs_give_the_whole_volume_result() {
    let g = poisoned_gpu();
    for (dims, slab, method) in
        // (Slabs of 3 rows: thinner than the reconstruction's halo of 5, whose windows are
        // padded where they meet the volume's ends.)
        [
            (vec![41usize, 12, 10], 8, Method::Fft),
            (vec![5, 30, 9, 8], 6, Method::Fft),
            (vec![35, 16], 7, Method::Auto),
            (vec![4, 22, 9, 8], 6, Method::Spatial),
            (vec![20, 13, 11], 3, Method::Fft),
        ]
    {
        let x = textured(&dims);
        let whole = Options { method, ..Options::default() };
        let (y, report) = adaptive_filter_with(g, &x.view(), &whole, &mut |_| {}).unwrap();
        assert_eq!(report.slabs, 1);
        let sliced = Options { slab_len: Some(slab), ..whole.clone() };
        let mut seen = 0;
        let (z, report) = adaptive_filter_with(g, &x.view(), &sliced, &mut |p| {
            seen += 1;
            assert!(p.stage == "structure" || p.stage == "reconstruction");
            assert!(p.total > 1);
        })
        .unwrap();
        assert!(report.slabs > 2, "{dims:?}: {} slabs", report.slabs);
        assert_eq!(report.structure_slabs, report.slabs, "{dims:?}: one slab length for both passes");
        assert_eq!(seen, report.structure_slabs + report.slabs);
        let e = rel(&z, &to64(&y));
        assert!(e < 2e-6, "{dims:?} in slabs of {slab}: {e}");
    }
}

#[test]
fn each_pass_takes_the_longest_slabs_its_buffers_allow() {
    // A buffer limit that cuts the reconstruction into more slabs than the structure pass (its
    // buffers, at half resolution, are smaller): both passes' slabs still give the whole result.
    let (dims, d) = (vec![44usize, 13, 12], 3);
    let x = textured(&dims);
    let o = Options { method: Method::Fft, ..Options::default() };
    let (whole, report) = adaptive_filter_with(poisoned_gpu(), &x.view(), &o, &mut |_| {}).unwrap();
    assert_eq!((report.structure_slabs, report.slabs), (1, 1));
    let mut small = open(lucent::gpu::GpuOptions { poison: true, ..lucent::gpu::GpuOptions::from_env().unwrap() });
    let mut cap = 64 << 20;
    let counts = loop {
        small.lower_max_buffer_bytes(cap);
        let count = |pass| dgpu::plan(&small, &dims, d, &o, pass).map(|s| s.ranges.len());
        if let (Ok(first), Ok(second)) = (count(dgpu::Pass::Structure), count(dgpu::Pass::Reconstruction)) {
            if second > 2 && first < second {
                break (first, second);
            }
        }
        cap = cap * 15 / 16;
        assert!(cap > 1 << 12, "no buffer limit gave the passes different slabs");
    };
    let (sliced, report) = adaptive_filter_with(&small, &x.view(), &o, &mut |_| {}).unwrap();
    assert_eq!((report.structure_slabs, report.slabs), counts);
    let e = rel(&sliced, &to64(&whole));
    assert!(e < 2e-6, "{counts:?} slabs at {cap} bytes a buffer: {e}");
}

/// The PSNR of `x` against `truth`.
fn psnr(x: &ArrayD<f32>, truth: &ArrayD<f64>) -> f64 {
    dynamic::psnr(&to64(x).view(), &truth.view())
}

#[test]
fn the_moving_edge_phantom_gains_over_10_db_4d_beats_3d_beats_2d_and_fast_motion_favours_3d() {
    // σ = 0.25 noise on 12 frames of 40×40×24, the edge moving 0.5 voxel per frame.
    let shape = [12, 24, 40, 40];
    let clean = dynamic::moving_edge(shape, 0.5).into_dyn();
    let noisy = dynamic::noisy(&clean.clone().into_dimensionality().unwrap(), 0.25, 11).into_dyn().mapv(|v| v as f32);
    let g = gpu();
    let before = psnr(&noisy, &clean);
    let mut after = Vec::new();
    for d in [2, 3, 4] {
        // (By FFT: on lavapipe the faster path here; both paths agree, see above.)
        let y = adaptive_filter(g, &noisy, &Options { dims: Some(d), method: Method::Fft, ..Options::default() }).unwrap();
        after.push(psnr(&y, &clean));
        if d == 4 {
            edge_stays_put(&y, &clean, shape, 0.5);
        }
    }
    println!("PSNR noisy {before:.2} dB, 2D {:.2}, 3D {:.2}, 4D {:.2}", after[0], after[1], after[2]);
    assert!(after[2] > before + 10.0, "4D gains {:.2} dB", after[2] - before);
    assert!(after[2] > after[1] && after[1] > after[0], "{after:?}");
    // With fast motion (3 voxels per frame) the frames no longer share structure along time:
    // 3D wins, as the paper's argument expects.
    let clean = dynamic::moving_edge(shape, 3.0).into_dyn();
    let noisy = dynamic::noisy(&clean.clone().into_dimensionality().unwrap(), 0.25, 11).into_dyn().mapv(|v| v as f32);
    let fast: Vec<f64> = [3, 4]
        .iter()
        .map(|&d| psnr(&adaptive_filter(g, &noisy, &Options { dims: Some(d), method: Method::Fft, ..Options::default() }).unwrap(), &clean))
        .collect();
    println!("fast motion: 3D {:.2} dB, 4D {:.2}", fast[0], fast[1]);
    assert!(fast[0] > fast[1] && fast[1] > psnr(&noisy, &clean) + 10.0, "{fast:?}");
}

/// Along y, away from the tube, the denoised step crosses its middle within one voxel of the
/// true edge (on average over the lines, and on nine lines in ten).
fn edge_stays_put(y: &ArrayD<f32>, clean: &ArrayD<f64>, shape: [usize; 4], speed: f64) {
    let [nt, nz, ny, nx] = shape;
    let (mut total, mut lines, mut far) = (0.0, 0, 0);
    for t in 0..nt {
        for z in 0..nz {
            for x in (2..nx - 2).filter(|&x| (x as f64 - nx as f64 / 3.0).abs() > 5.0) {
                let edge = ny as f64 / 3.0 + speed * t as f64 + 0.15 * (z as f64 - nz as f64 / 2.0) + 0.1 * (x as f64 - nx as f64 / 2.0);
                if !(4.0..ny as f64 / 2.0).contains(&edge) {
                    continue;
                }
                // The step's middle: the ramp's value plus ½.
                let level = clean[[t, z, 0, x]] + 0.5;
                let line: Vec<f64> = (0..ny).map(|r| y[[t, z, r, x]] as f64).collect();
                let k = (1..ny / 2 + 4).find(|&r| line[r] >= level && line[r - 1] < level);
                let Some(k) = k else {
                    far += 1;
                    lines += 1;
                    continue;
                };
                let found = k as f64 - 1.0 + (level - line[k - 1]) / (line[k] - line[k - 1]);
                // The partial-volume step's middle sits at edge_at exactly.
                let error = (found - edge).abs();
                total += error;
                if error > 1.0 {
                    far += 1;
                }
                lines += 1;
            }
        }
    }
    let mean = total / lines as f64;
    assert!(mean < 1.0 && far * 10 < lines, "edge off by {mean:.2} voxels on average, more than one on {far} of {lines} lines");
}

#[test]
fn bad_input_is_refused_and_constant_data_kept() {
    let g = gpu();
    let x = rand_array(&[12, 10]);
    assert!(matches!(adaptive_filter(g, &x, &Options { dims: Some(3), ..Options::default() }), Err(Error::Shape(_))));
    assert!(matches!(adaptive_filter(g, &x, &Options { dims: Some(5), ..Options::default() }), Err(Error::Invalid(_))));
    assert!(matches!(adaptive_filter(g, &x, &Options { sigma: 0.0, ..Options::default() }), Err(Error::Invalid(_))));
    assert!(matches!(adaptive_filter(g, &x, &Options { sigma: -1.0, ..Options::default() }), Err(Error::Invalid(_))));
    assert!(matches!(adaptive_filter(g, &x, &Options { structure_taps: 6, ..Options::default() }), Err(Error::Invalid(_))));
    assert!(matches!(adaptive_filter(g, &x, &Options { isotropy_alpha: 1.0, ..Options::default() }), Err(Error::Invalid(_))));
    let mut nan = x.clone();
    nan[[3, 4]] = f32::NAN;
    assert!(matches!(adaptive_filter(g, &nan, &Options::default()), Err(Error::NonFinite(_))));
    assert!(adaptive_filter(g, &ArrayD::<f32>::zeros(IxDyn(&[0, 5])), &Options::default()).is_err());
    let one = ArrayD::<f32>::zeros(IxDyn(&[7]));
    assert!(matches!(adaptive_filter(g, &one, &Options::default()), Err(Error::Invalid(_))));
    // Constant data has no structure: it comes back unchanged.
    let flat = ArrayD::from_elem(IxDyn(&[9, 14, 11]), 2.5f32);
    let y = adaptive_filter(g, &flat, &Options::default()).unwrap();
    assert!(y.iter().all(|&v| (v - 2.5).abs() < 1e-5), "{:?}", y.iter().fold(0.0f32, |m, v| m.max((v - 2.5).abs())));
}

/// Adaptive filtering is scale-equivariant: data far from 1 (×1e11, ×1e-10, near f32's limit)
/// is filtered near 1 and scaled back, and equals the filtered data times the scale (it was all
/// NaN, or 5% off, before).
#[test]
fn data_of_any_magnitude_is_filtered_as_data_near_one() {
    let g = gpu();
    let x = textured(&[23, 20, 17]);
    let o = Options { dims: Some(3), ..Options::default() };
    let y = adaptive_filter(g, &x, &o).unwrap();
    for factor in [1e11f64, 1e-10, 3e37] {
        let big = x.mapv(|v| (v as f64 * factor) as f32);
        let got = adaptive_filter(g, &big, &o).unwrap();
        assert!(got.iter().all(|v| v.is_finite()), "×{factor}: non-finite values");
        let e = rel(&got.mapv(|v| (v as f64 / factor) as f32), &to64(&y));
        assert!(e < 1e-5, "×{factor}: relative L2 {e:e} from the filtered data");
    }
}
