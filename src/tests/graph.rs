//! The executor: random recordings of pointwise ops with many temporaries, run on the GPU with
//! pooled buffers and on the CPU, must agree exactly; compiled recordings re-run; big dispatches
//! fold into 2D grids; errors come back as `Error`.

use crate::tests::common;
use common::*;

use lucent::kernels::binary::{self, BinaryOp};
use lucent::kernels::unary::{self, UnaryOp};
use lucent::kernels::{copy_vec4, fill};
use lucent::{Buf, Dtype, GpuArray, Recording};
use ndarray::{ArrayD, IxDyn};
use rand::Rng;

/// Exactly rounded ops only, so GPU and CPU must agree bit for bit.
const UNARY: [UnaryOp; 5] = [UnaryOp::Abs, UnaryOp::Scale(0.5), UnaryOp::Offset(0.25), UnaryOp::Clamp { lo: -1.0, hi: 1.0 }, UnaryOp::MaxScalar(-0.1)];
const BINARY: [BinaryOp; 5] = [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Max, BinaryOp::Min];

#[test]
fn random_recordings_match_cpu_exactly() {
    let mut rng = rand::rng();
    for trial in 0..12 {
        let dims: Vec<usize> = match trial % 3 {
            0 => vec![rng.random_range(1..3000)],
            1 => vec![rng.random_range(1..40), rng.random_range(1..70)],
            _ => vec![rng.random_range(1..5), rng.random_range(1..6), rng.random_range(1..9), rng.random_range(1..11)],
        };
        let n: usize = dims.iter().product();
        let mut rec = Recording::new(gpu());
        rec.set_poison(true);
        let mut gpu_vals: Vec<Buf> = Vec::new();
        let mut cpu_vals: Vec<Vec<f32>> = Vec::new();
        for _ in 0..3 {
            let v = random(n);
            gpu_vals.push(rec.upload_f32(&ArrayD::from_shape_vec(IxDyn(&dims), v.clone()).unwrap().view()).unwrap());
            cpu_vals.push(v);
        }
        let steps = rng.random_range(20..80);
        let mut downloads = Vec::new();
        for _ in 0..steps {
            // Mostly recent operands, so most temporaries die young and their buffers get reused.
            let pick = |rng: &mut rand::rngs::ThreadRng| gpu_vals.len() - 1 - rng.random_range(0..gpu_vals.len().min(4));
            let (g, c) = if rng.random_bool(0.5) {
                let op = UNARY[rng.random_range(0..UNARY.len())];
                let i = pick(&mut rng);
                (unary::record(&mut rec, op, gpu_vals[i]).unwrap(), unary::cpu(op, &cpu_vals[i]))
            } else {
                let op = BINARY[rng.random_range(0..BINARY.len())];
                let (i, j) = (pick(&mut rng), pick(&mut rng));
                (binary::record(&mut rec, op, gpu_vals[i], gpu_vals[j]).unwrap(), binary::cpu(op, &cpu_vals[i], &cpu_vals[j]))
            };
            gpu_vals.push(g);
            cpu_vals.push(c);
            if rng.random_bool(0.1) {
                downloads.push((rec.download(g), cpu_vals.len() - 1));
            }
        }
        downloads.push((rec.download(*gpu_vals.last().unwrap()), cpu_vals.len() - 1));
        let values = gpu_vals.len();
        let compiled = rec.compile().unwrap();
        // Reuse happened: far fewer buffers than values (downloaded ones are kept to the end).
        assert!(compiled.buffers() <= downloads.len() + 3 + 8, "{} buffers for {values} values", compiled.buffers());
        for _run in 0..2 {
            let results = compiled.run(gpu()).unwrap();
            for &(d, k) in &downloads {
                let got = results.f32(d).unwrap();
                let want = &cpu_vals[k];
                for (idx, (g, w)) in got.iter().zip(want).enumerate() {
                    // Bit for bit, except the sign of a zero: max/min of +0 and -0 may return
                    // either (IEEE 754 and WGSL leave it open), and Sub(x, x) makes zeros.
                    assert!(g.to_bits() == w.to_bits() || (*g == 0.0 && *w == 0.0), "trial {trial} {dims:?} value {k} element {idx}: gpu {g} cpu {w}");
                }
            }
        }
    }
}

#[test]
fn compiled_recording_iterates_on_resident_arrays() {
    // x <- 0.5 x + 1, ten times, entirely on the device.
    let n = 1001;
    let x0 = random(n);
    let x = GpuArray::upload_f32(gpu(), &ArrayD::from_shape_vec(IxDyn(&[n]), x0.clone()).unwrap().view()).unwrap();
    let mut rec = Recording::new(gpu());
    let xb = rec.input(&x);
    let t = unary::record(&mut rec, UnaryOp::Scale(0.5), xb).unwrap();
    let u = unary::record(&mut rec, UnaryOp::Offset(1.0), t).unwrap();
    copy_vec4::record(&mut rec, u, xb).unwrap();
    let step = rec.compile().unwrap();
    for _ in 0..10 {
        step.run(gpu()).unwrap();
    }
    let got = x.download_f32(gpu()).unwrap();
    let mut want = x0;
    for _ in 0..10 {
        want = want.iter().map(|v| v * 0.5 + 1.0).collect();
    }
    assert_eq!(got.as_slice().unwrap(), want.as_slice());
}

#[test]
fn profiled_runs_time_every_dispatch_beyond_one_query_set() {
    // 2 * 2100 timestamps: more than one query set holds (4096).
    let n = 257;
    let x0 = random(n);
    let mut rec = Recording::new(gpu());
    rec.set_profile(true);
    let mut y = rec.upload_f32(&ArrayD::from_shape_vec(IxDyn(&[n]), x0.clone()).unwrap().view()).unwrap();
    for _ in 0..2100 {
        y = unary::record(&mut rec, UnaryOp::Offset(1.0), y).unwrap();
    }
    let d = rec.download(y);
    let results = rec.run().unwrap();
    let want: Vec<f32> = x0.iter().map(|&v| (0..2100).fold(v, |v, _| v + 1.0)).collect();
    assert_eq!(results.f32(d).unwrap().as_slice().unwrap(), want.as_slice());
    if gpu().has_timestamps() {
        let nodes = &results.report.nodes;
        assert_eq!(nodes.len(), 2100);
        assert!(nodes.iter().all(|t| t.ms.is_finite() && t.ms >= 0.0));
    }
}

#[test]
fn dispatches_beyond_one_grid_dimension_fold() {
    // 65,535 workgroups of 256 threads cover 16.7M words; 20M words need a folded 2D grid.
    let words = 20_000_000usize;
    if (words as u64) * 4 > gpu().max_buffer_bytes() {
        panic!("test needs an 80 MB buffer; the adapter allows {}", gpu().max_buffer_bytes());
    }
    let mut rec = Recording::new(gpu());
    rec.set_poison(true);
    let x = rec.temp(&[words], Dtype::F32).unwrap();
    fill::record(&mut rec, x, 3.0);
    let y = unary::record(&mut rec, UnaryOp::Offset(1.0), x).unwrap();
    let d = rec.download(y);
    let got = rec.run().unwrap().f32(d).unwrap();
    let bad = got.iter().position(|&v| v != 4.0);
    assert_eq!(bad, None, "element {:?} not written", bad);
}

#[test]
fn outputs_stay_on_the_device() {
    let n = 37;
    let v = random(n);
    let mut rec = Recording::new(gpu());
    let x = rec.upload_f32(&ArrayD::from_shape_vec(IxDyn(&[n]), v.clone()).unwrap().view()).unwrap();
    let y = unary::record(&mut rec, UnaryOp::Abs, x).unwrap();
    let o = rec.output(y);
    let arr = rec.run().unwrap().array(o);
    assert_eq!(arr.dims(), &[n]);
    let got = arr.download_f32(gpu()).unwrap();
    assert_eq!(got.as_slice().unwrap(), unary::cpu(UnaryOp::Abs, &v).as_slice());
}

#[test]
fn upload_download_round_trip_and_poison() {
    let dims = [3, 1, 7, 2];
    let v = random(42);
    let a = GpuArray::upload_f32(gpu(), &ArrayD::from_shape_vec(IxDyn(&dims), v.clone()).unwrap().view()).unwrap();
    assert_eq!(a.download_f32(gpu()).unwrap().as_slice().unwrap(), v.as_slice());
    a.poison(gpu());
    assert!(a.download_f32(gpu()).unwrap().iter().all(|x| x.is_nan()));
    assert!(matches!(a.download_c32(gpu()), Err(lucent::Error::Dtype(_))));
}

#[test]
fn views_share_their_buffer_and_lifetime() {
    // t (f32, 2n) is read only through its complex view, after other temporaries came and went:
    // its buffer must stay reserved until the view's last use.
    let n = 501;
    let v = random(2 * n);
    let mut rec = Recording::new(gpu());
    rec.set_poison(true);
    let x = rec.upload_f32(&ArrayD::from_shape_vec(IxDyn(&[2 * n]), v.clone()).unwrap().view()).unwrap();
    let t = unary::record(&mut rec, UnaryOp::Scale(2.0), x).unwrap();
    let view = rec.reinterpret(t, &[n], Dtype::C32).unwrap();
    let mut other = unary::record(&mut rec, UnaryOp::Abs, x).unwrap();
    for _ in 0..4 {
        other = unary::record(&mut rec, UnaryOp::Offset(1.0), other).unwrap();
    }
    let z = binary::record(&mut rec, BinaryOp::ComplexMul, view, view).unwrap();
    let back = rec.reinterpret(z, &[2 * n], Dtype::F32).unwrap();
    let d = rec.download(back);
    let o = rec.download(other);
    let results = rec.run().unwrap();
    let got = results.f32(d).unwrap();
    for k in 0..n {
        let c = num_complex::Complex32::new(2.0 * v[2 * k], 2.0 * v[2 * k + 1]);
        let w = c * c;
        assert!((got[2 * k] - w.re).abs() <= 1e-6 && (got[2 * k + 1] - w.im).abs() <= 1e-6, "element {k}");
    }
    assert!(results.f32(o).unwrap().iter().zip(&v).all(|(g, x)| *g == x.abs() + 1.0 + 1.0 + 1.0 + 1.0));
    assert!(matches!(rec_view_error(), Err(lucent::Error::Shape(_))));
}

fn rec_view_error() -> lucent::Result<Buf> {
    let mut rec = Recording::new(gpu());
    let t = rec.temp(&[5], Dtype::F32)?;
    rec.reinterpret(t, &[3], Dtype::C32)
}
