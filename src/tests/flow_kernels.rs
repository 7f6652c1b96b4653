//! The optical-flow kernels (ilk_terms, ilk_solve, tvl1_step's four stages) against their f64
//! CPU twins on fresh random inputs of awkward shapes, 2D and 3D, temporaries poisoned: f32
//! arithmetic within 1e-4 of the values' scale. The solve is given diagonally dominant systems
//! (well conditioned: Cramer's rule in f32 and elimination in f64 agree there); each TV-L1
//! stage's twin starts from the GPU's previous stage, so a branch taken at a threshold is the
//! same on both.

use crate::tests::common;
use common::*;

use lucent::kernels::tvl1_step::{cpu as tvl1, Tvl1};
use lucent::kernels::{ilk_solve, ilk_terms};
use lucent::{GpuArray, Recording};
use ndarray::{ArrayD, IxDyn};

fn up(gpu: &lucent::Gpu, dims: &[usize], x: &[f32]) -> GpuArray {
    GpuArray::upload_f32(gpu, &ArrayD::from_shape_vec(IxDyn(dims), x.to_vec()).unwrap().view()).unwrap()
}

fn wide(x: &[f32]) -> Vec<f64> {
    x.iter().map(|&v| v as f64).collect()
}

fn close(got: &[f32], want: &[f64], what: &str) {
    let scale = want.iter().fold(1e-3f64, |m, v| m.max(v.abs()));
    for (k, (a, b)) in got.iter().zip(want).enumerate() {
        assert!((*a as f64 - b).abs() <= 1e-4 * scale, "{what} at {k}: {a} vs {b}");
    }
}

#[test]
fn flow_kernels_equal_their_cpu_twins() {
    let gpu = poisoned_gpu();
    for dims in [vec![23usize, 37], vec![5, 64, 31], vec![2, 3]] {
        let nd = dims.len();
        let n: usize = dims.iter().product();
        let (warped, reference) = (random(n), random(n));
        let flow = random(nd * n);
        let fdims: Vec<usize> = std::iter::once(nd).chain(dims.iter().copied()).collect();
        let down = |a: GpuArray| {
            let len = a.len();
            GpuArray::download_joined::<f32>(gpu, &[a], &[len]).unwrap().into_raw_vec_and_offset().0
        };
        // ILK's terms, then its solve of a well-conditioned system per point (A diagonally dominant).
        let mut rec = Recording::new(gpu);
        let (w, r, f) = (rec.input(&up(gpu, &dims, &warped)), rec.input(&up(gpu, &dims, &reference)), rec.input(&up(gpu, &fdims, &flow)));
        let t = ilk_terms::record_terms(&mut rec, w, r, f).unwrap();
        let o = rec.output(t);
        close(&down(rec.run().unwrap().array(o)), &ilk_terms::cpu(&dims, &wide(&warped), &wide(&reference), &wide(&flow)), "ilk_terms");
        let k = ilk_terms::terms(nd);
        let mut terms = random(k * n);
        let mut q = 0;
        for a in 0..nd {
            for b in a..nd {
                if a == b {
                    terms[q * n..(q + 1) * n].iter_mut().for_each(|v| *v = 2.0 + v.abs());
                }
                q += 1;
            }
        }
        let tdims: Vec<usize> = std::iter::once(k).chain(dims.iter().copied()).collect();
        let mut rec = Recording::new(gpu);
        let x = rec.input(&up(gpu, &tdims, &terms));
        let s = ilk_solve::record_solve(&mut rec, x).unwrap();
        let o = rec.output(s);
        close(&down(rec.run().unwrap().array(o)), &ilk_solve::cpu(nd, n, &wide(&terms)), "ilk_solve");
        // TV-L1's stages, one after another, each against its twin from the same inputs.
        let c = Tvl1 { dims: dims.clone(), f0: 0.45, f1: 0.8, dt: 0.5 / nd as f32 };
        let proj = random(nd * nd * n);
        let mut rec = Recording::new(gpu);
        let (w, r, f) = (rec.input(&up(gpu, &dims, &warped)), rec.input(&up(gpu, &dims, &reference)), rec.input(&up(gpu, &fdims, &flow)));
        let prepared = c.prepare(&mut rec, w, r, f).unwrap();
        let aux = c.data(&mut rec, prepared, f).unwrap();
        let p = rec.temp(&[nd * nd, n], lucent::Dtype::F32).unwrap();
        let p_in = rec.input(&up(gpu, &[nd * nd, n], &proj));
        lucent::engine::copy_vec4::record(&mut rec, p_in, p).unwrap();
        c.dual(&mut rec, f, p);
        let next = rec.temp(&c.planes(nd), lucent::Dtype::F32).unwrap();
        lucent::engine::copy_vec4::record(&mut rec, f, next).unwrap();
        c.primal(&mut rec, p, aux, next);
        let outs = [rec.output(prepared), rec.output(aux), rec.output(p), rec.output(next)];
        let results = rec.run().unwrap();
        let got: Vec<Vec<f32>> = outs.iter().map(|&o| down(results.array(o))).collect();
        let want_prepared = tvl1::prepare(&dims, &wide(&warped), &wide(&reference), &wide(&flow));
        close(&got[0], &want_prepared, "tvl1 prepare");
        let want_aux = tvl1::data(nd, n, 0.45, &wide(&got[0]), &wide(&flow));
        close(&got[1], &want_aux, "tvl1 data");
        let mut want_proj = wide(&proj);
        tvl1::dual(&dims, c.dt as f64, 0.8, &wide(&flow), &mut want_proj);
        close(&got[2], &want_proj, "tvl1 dual");
        close(&got[3], &tvl1::primal(&dims, &wide(&got[2]), &wide(&got[1])), "tvl1 primal");
    }
}
