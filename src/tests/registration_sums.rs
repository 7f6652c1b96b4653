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
            let x = SumsInputs { fixed: b[0], values: b[1], gradients: &g, support: b[2], previous: compare.then_some((b[3], b[4])) };
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
            };
            let want = registration_sums::cpu(mode, &dims, &centre, shifts, &host);
            assert!(want[0] > 0.0, "{dims:?} {mode:?}: no point counted");
            for (k, (a, b)) in got.iter().zip(&want).enumerate() {
                assert!((a - b).abs() <= 1e-5 * b.abs(), "{dims:?} {mode:?} sum {k}: {a} vs {b}");
            }
        }
    }
}
