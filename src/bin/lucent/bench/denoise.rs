//! The denoising suite of `lucent bench`: the adaptive filter (lucent::denoise, FFT path) on
//! the moving-edge phantom (σ = 0.25 noise, 16 × 32 × 48 × 48) over 2, 3 and 4 axes by FFT and
//! by direct sums with the PSNR of each, and with `--filter denoise_paper` on the paper's data
//! size (20 × 445 × 512 × 512, the same phantom scaled up, synthetic) the default way (and by direct
//! sums too with `--filter denoise_paper_spatial`); `--filter denoise_mid` runs 16 × 64 × 256 × 256
//! both ways. Host wall clock of the one-call, transfers
//! included, after one warm-up run (the paper's size: cold, one run); the stages' times, slabs
//! and peak device memory on stderr, with the throughput as
//! the GFLOP/s direct 4D filtering would need for the same result.

use std::time::Instant;

use lucent::denoise::{adaptive_filter_with, Method, Options};
use lucent::phantom::{dynamic, Rng};
use lucent::{Error, Gpu};
use ndarray::{Array4, ArrayD};
use rayon::prelude::*;

use super::{Args, Row};
use crate::report::ms_since;
use crate::Global;

/// The moving-edge phantom plus Gaussian noise, in f32, made plane by plane in parallel.
fn noisy_phantom(shape: [usize; 4], sigma: f64) -> (Array4<f32>, Option<Array4<f64>>) {
    let [_, nz, ny, nx] = shape;
    let mut x = Array4::<f32>::zeros(shape);
    x.as_slice_mut().expect("standard layout").par_chunks_mut(ny * nx).enumerate().for_each(|(plane, values)| {
        let mut rng = Rng::new(0x5DEECE66D ^ plane as u64);
        let (t, z) = (plane / nz, plane % nz);
        for (i, v) in values.iter_mut().enumerate() {
            *v = (dynamic::moving_edge_at(shape, 0.5, [t, z, i / nx, i % nx]) + sigma * rng.normal()) as f32;
        }
    });
    let small = shape.iter().product::<usize>() < 1 << 24;
    (x, small.then(|| dynamic::moving_edge(shape, 0.5)))
}

/// Multiply-adds of direct filtering with the same kernels, as GFLOP (2 per tap).
fn direct_gflop(shape: &[usize], d: usize, o: &Options) -> f64 {
    let count: f64 = shape.iter().map(|&n| n as f64).product();
    let low: f64 = count / o.factors(d).iter().product::<usize>() as f64;
    let components = (d * (d + 1) / 2) as f64;
    let structure = low * (o.structure_taps as f64).powi(d as i32) * (d as f64 + components);
    let reconstruction = count * (o.reconstruction_taps as f64).powi(d as i32) * (components + 1.0);
    2.0 * (structure + reconstruction) / 1e9
}

pub fn suite(gpu: &Gpu, args: &Args, global: &Global) -> Result<Vec<Row>, Error> {
    let named = |name: &str| args.filter.as_deref().is_some_and(|f| f.contains(name));
    let (paper, mid) = (named("paper"), named("mid"));
    let shape = if paper {
        [20, 445, 512, 512]
    } else if mid {
        [16, 64, 256, 256]
    } else {
        [16, 32, 48, 48]
    };
    let started = Instant::now();
    let (x, clean) = noisy_phantom(shape, 0.25);
    eprintln!("denoise: made {shape:?} in {:.1} s", started.elapsed().as_secs_f64());
    let x: ArrayD<f32> = x.into_dyn();
    let mut rows = Vec::new();
    let spatial_too = !paper || args.filter.as_deref().is_some_and(|f| f.contains("spatial"));
    let methods: &[Method] = match (paper, spatial_too) {
        (false, _) => &[Method::Fft, Method::Spatial, Method::Auto],
        (true, true) => &[Method::Auto, Method::Spatial],
        (true, false) => &[Method::Auto],
    };
    let cases: Vec<(usize, Method)> = (if paper { 4..=4 } else { 2..=4 }).flat_map(|d| methods.iter().map(move |&m| (d, m))).collect();
    for (d, method) in cases {
        let case = format!(
            "denoise_{}_{d}d_{}",
            if paper {
                "paper"
            } else if mid {
                "mid"
            } else {
                "phantom"
            },
            match method {
                Method::Fft => "fft",
                Method::Spatial => "spatial",
                Method::Auto => "auto",
            }
        );
        let o = Options { dims: Some(d), method, ..Options::default() };
        // Warm-up: the same run (FFT kernels and pipelines compiled for these shapes); the
        // paper's size runs once, cold, as a command would.
        if !paper {
            adaptive_filter_with(gpu, &x.view(), &o, &mut |_| {})?;
        }
        let t = Instant::now();
        let (y, report) = adaptive_filter_with(gpu, &x.view(), &o, &mut |p| {
            if paper && !global.quiet {
                eprintln!("  {} {}/{} at {:.1} s", p.stage, p.done, p.total, t.elapsed().as_secs_f64());
            }
        })?;
        let ms = ms_since(t);
        let psnr = clean.as_ref().map(|c| {
            let c = c.clone().into_dyn();
            (dynamic::psnr(&x.mapv(f64::from).view(), &c.view()), dynamic::psnr(&y.mapv(f64::from).view(), &c.view()))
        });
        let gflops = direct_gflop(&shape, d, &o) / (ms / 1e3);
        eprintln!(
            "{case:<28} {ms:>10.1} ms  structure {:.2} s, reconstruction {:.2} s, {} / {} slab(s) along axis {}, peak {:.2} GiB, {gflops:.0} GFLOP/s direct-equivalent{}",
            report.structure_s,
            report.reconstruction_s,
            report.structure_slabs,
            report.slabs,
            report.axis,
            report.peak_bytes as f64 / (1u64 << 30) as f64,
            psnr.map_or(String::new(), |(a, b)| format!(", PSNR {a:.2} → {b:.2} dB"))
        );
        let mib = (x.len() * 4) as u64 >> 20;
        rows.push(Row { case, shape: shape.to_vec(), mib, ms, gb_per_s: (x.len() * 8) as f64 / ms / 1e6, percent_of_copy: 0.0, timer: "wall" });
    }
    Ok(rows)
}
