//! The registration sums' kernel (intensity-based registration) against its f64 CPU twin, every
//! mode, 2D and 3D, awkward shapes, masks and partial supports, temporaries poisoned. The data
//! keep every term positive (m > f, gradients > 0, points beyond the centre) so that each sum
//! bounds its own rounding: f32 partials within 1e-5 relative.

use crate::tests::common;
use common::*;

use lucent::kernels::registration_sums::{self, HostInputs, SumsInputs, SumsMode};
use lucent::{GpuArray, Recording};
use ndarray::{ArrayD, IxDyn};
use rand::Rng;

fn uniform(n: usize, lo: f32, hi: f32) -> Vec<f32> {
    let mut rng = rand::rng();
    (0..n).map(|_| rng.random_range(lo..hi)).collect()
}

#[test]
fn gpu_sums_equal_the_cpu_twin() {
    let gpu = poisoned_gpu();
    let mut rng = rand::rng();
    for dims in [vec![37usize, 53], vec![301, 299], vec![11, 17, 23], vec![5, 64, 129]] {
        let n: usize = dims.iter().product();
        let d = dims.len();
        let fixed = uniform(n, 0.0, 0.5);
        let mask: Vec<bool> = (0..n).map(|_| rng.random::<f32>() < 0.9).collect();
        let values = uniform(n, 0.5, 1.0);
        let previous = uniform(n, 0.5, 1.0);
        let gradients: Vec<Vec<f32>> = (0..d).map(|_| uniform(n, 0.1, 1.1)).collect();
        // Whole, partial (left out) and a few just below the threshold.
        let support: Vec<f32> = (0..n).map(|_| [1.0, 1.0, 1.0, 0.5, 0.9985][rng.random_range(0..5)]).collect();
        let previous_support: Vec<f32> = (0..n).map(|_| [1.0, 1.0, 0.0][rng.random_range(0..3)]).collect();
        let centre = vec![-1.25; d];
        let shifts = [0.0, 0.0];
        let up = |x: &[f32]| GpuArray::upload_f32(gpu, &ArrayD::from_shape_vec(IxDyn(&[x.len()]), x.to_vec()).unwrap().view()).unwrap();
        let pairs: Vec<f32> = fixed.iter().zip(&mask).flat_map(|(&v, &m)| [v, f32::from(u8::from(m))]).collect();
        let device = [up(&pairs), up(&values), up(&support), up(&previous), up(&previous_support)];
        let device_gradients: Vec<GpuArray> = gradients.iter().map(|g| up(g)).collect();
        for mode in [SumsMode::MeanSquares, SumsMode::Correlation, SumsMode::Compare] {
            let compare = mode == SumsMode::Compare;
            let mut rec = Recording::new(gpu);
            let b: Vec<_> = device.iter().map(|a| rec.input(a)).collect();
            let g: Vec<_> = device_gradients.iter().map(|a| rec.input(a)).collect();
            let x = SumsInputs { fixed: b[0], values: b[1], gradients: &g, support: b[2], previous: compare.then_some((b[3], b[4])), log_ratios: None };
            let partials = registration_sums::record(&mut rec, mode, &dims, &centre, shifts, &x).unwrap();
            let out = rec.output(partials);
            let results = rec.run().unwrap();
            let width = mode.width(d);
            let p = results.array(out);
            let groups = p.len() / width;
            let p = GpuArray::download_joined::<f32>(gpu, &[p], &[groups, width]).unwrap().into_raw_vec_and_offset().0;
            let got: Vec<f64> = (0..width).map(|k| p.iter().skip(k).step_by(width).map(|&v| v as f64).sum()).collect();
            let host = HostInputs {
                fixed: &fixed,
                mask: &mask,
                values: &values,
                gradients: &gradients,
                support: &support,
                previous: compare.then_some((&previous[..], &previous_support[..])),
                log_ratios: None,
            };
            let want = registration_sums::cpu(mode, &dims, &centre, shifts, &host);
            assert!(want[0] > 0.0, "{dims:?} {mode:?}: no point counted");
            for (k, (a, b)) in got.iter().zip(&want).enumerate() {
                assert!((a - b).abs() <= 1e-5 * b.abs(), "{dims:?} {mode:?} sum {k}: {a} vs {b}");
            }
        }
    }
}

/// Mutual information's joint histogram (fixed point in shared atomics) and its gradient sums
/// against the CPU twins: the histogram within the fixed point's rounding (2^-17 a weight), the
/// sums (terms of both signs: the log ratios) within 1e-4 of their magnitude.
#[test]
fn gpu_histograms_and_mutual_information_sums_equal_the_cpu_twins() {
    use lucent::kernels::registration_histogram::{self, Bins};
    let gpu = poisoned_gpu();
    let mut rng = rand::rng();
    for (dims, bins) in [(vec![37usize, 53], 20usize), (vec![301, 299], 50), (vec![11, 17, 23], 64), (vec![5, 64, 129], 7)] {
        let n: usize = dims.iter().product();
        let d = dims.len();
        // Fixed values well inside their bins (or far outside the range: clamped), so that f32 and
        // f64 put each in the same bin; the moving windows are continuous in the value.
        let w = (bins - 4) as f64;
        let fixed: Vec<f32> = (0..n)
            .map(|_| match rng.random_range(0..10) {
                0 => -0.6,
                1 => 1.9,
                _ => (-0.2 + (rng.random_range(0..bins - 4) as f64 + 0.5 + rng.random_range(-0.3..0.3)) * 1.5 / w) as f32,
            })
            .collect();
        let mask: Vec<bool> = (0..n).map(|_| rng.random::<f32>() < 0.9).collect();
        // Values beyond the bins' range too (cubic sampling overshoots): clamped windows.
        let values = uniform(n, -0.1, 1.1);
        let gradients: Vec<Vec<f32>> = (0..d).map(|_| uniform(n, -1.0, 1.0)).collect();
        let support: Vec<f32> = (0..n).map(|_| [1.0, 1.0, 1.0, 0.5][rng.random_range(0..4)]).collect();
        let other: Vec<f32> = (0..n).map(|_| [1.0, 1.0, 0.0][rng.random_range(0..3)]).collect();
        let b = Bins { bins, fixed_min: -0.2, fixed_width: 1.5 / w, moving_min: 0.0, moving_width: 1.0 / w };
        let up = |x: &[f32]| GpuArray::upload_f32(gpu, &ArrayD::from_shape_vec(IxDyn(&[x.len()]), x.to_vec()).unwrap().view()).unwrap();
        let pairs: Vec<f32> = fixed.iter().zip(&mask).flat_map(|(&v, &m)| [v, f32::from(u8::from(m))]).collect();
        let device = [up(&pairs), up(&values), up(&support), up(&other)];
        let down = |a: GpuArray| GpuArray::download_joined::<f32>(gpu, &[a], &[bins * bins]).unwrap().iter().map(|&v| v as f64).collect::<Vec<f64>>();
        for common in [false, true] {
            let mut rec = Recording::new(gpu);
            let x: Vec<_> = device.iter().map(|a| rec.input(a)).collect();
            let h = registration_histogram::record(&mut rec, &b, n, x[0], x[1], x[2], common.then_some(x[3])).unwrap();
            let out = rec.output(h);
            let got = down(rec.run().unwrap().array(out));
            let want = registration_histogram::cpu(&b, &fixed, &mask, &values, &support, common.then_some(&other[..]));
            let total: f64 = want.iter().sum();
            assert!(total > 100.0, "{dims:?}");
            for (k, (a, w)) in got.iter().zip(&want).enumerate() {
                // Each point's four weights round by at most 2^-17; a bin's sum by its points'.
                assert!((a - w).abs() <= total * 2f64.powi(-17) / bins as f64 + 1e-3, "{dims:?} bin {k}: {a} vs {w}");
            }
            assert!((got.iter().sum::<f64>() - total).abs() <= 4.0 * total * 2f64.powi(-17), "{dims:?}");
        }
        let ratios: Vec<f64> = (0..bins * bins).map(|_| rng.random_range(-3.0..1.0)).collect();
        let l = up(&ratios.iter().map(|&v| v as f32).collect::<Vec<_>>());
        let device_gradients: Vec<GpuArray> = gradients.iter().map(|g| up(g)).collect();
        let centre = vec![3.5; d];
        let mut rec = Recording::new(gpu);
        let x: Vec<_> = device.iter().map(|a| rec.input(a)).collect();
        let g: Vec<_> = device_gradients.iter().map(|a| rec.input(a)).collect();
        let lb = rec.input(&l);
        let inputs = SumsInputs { fixed: x[0], values: x[1], gradients: &g, support: x[2], previous: None, log_ratios: Some((lb, b)) };
        let partials = registration_sums::record(&mut rec, SumsMode::MutualInformation, &dims, &centre, [0.0; 2], &inputs).unwrap();
        let out = rec.output(partials);
        let p = rec.run().unwrap().array(out);
        let width = SumsMode::MutualInformation.width(d);
        let len = p.len();
        let p = GpuArray::download_joined::<f32>(gpu, &[p], &[len]).unwrap().into_raw_vec_and_offset().0;
        let got: Vec<f64> = (0..width).map(|k| p.iter().skip(k).step_by(width).map(|&v| v as f64).sum()).collect();
        let ratios32: Vec<f64> = ratios.iter().map(|&v| v as f32 as f64).collect();
        let host = HostInputs {
            fixed: &fixed,
            mask: &mask,
            values: &values,
            gradients: &gradients,
            support: &support,
            previous: None,
            log_ratios: Some((&ratios32, b)),
        };
        let want = registration_sums::cpu(SumsMode::MutualInformation, &dims, &centre, [0.0; 2], &host);
        // The magnitude: the same sums with |w u| (an upper bound on any partial's size).
        let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1.0);
        for (k, (a, w)) in got.iter().zip(&want).enumerate() {
            assert!((a - w).abs() <= 1e-4 * scale * (n as f64).sqrt(), "{dims:?} sum {k}: {a} vs {w}");
        }
    }
}
