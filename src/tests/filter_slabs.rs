//! Direct filters on volumes larger than one buffer (`ops::filter::slabs`), with buffers capped
//! at 4 KiB so volumes of a few thousand elements span several chunks: in core (the array in
//! chunks on the device, each slab's halo gathered there across chunk boundaries) and, when the
//! device memory budget refuses that, slab by slab through the host. Against the f64 references
//! (`cpu::correlate`, `cpu::convolve`, `cpu::separable`), every boundary, and the same filter on
//! the whole volume with the default limit. Fresh random inputs; temporaries poisoned.
//!
//! Tolerance: as tests/filter_tiled.rs, the error relative to Σ|w||x| stays about u = 6e-8 for
//! random data; 1e-6 of it leaves a margin of ~10.

use crate::tests::common;
use common::*;

use std::ops::Range;
use std::sync::OnceLock;

use lucent::gpu::GpuOptions;
use lucent::graph::{row_ranges, Chunked, Recording};
use lucent::kernels::boundary::Boundary;
use lucent::ops::filter::{cpu, gaussian_passes, slabs, uniform_passes};
use lucent::ops::layout::chunks;
use lucent::{Error, Gpu, GpuArray};
use ndarray::{ArrayD, IxDyn};

const LIMIT: u64 = 4096;
const TOL: f64 = 1e-6;

const BOUNDARIES: [Boundary; 6] = [Boundary::Constant(0.0), Boundary::Constant(0.7), Boundary::Nearest, Boundary::Reflect, Boundary::Mirror, Boundary::Wrap];

/// Buffers of at most `LIMIT` bytes, temporaries poisoned; with `memory`, that device budget.
fn capped(memory: Option<u64>) -> Gpu {
    open(GpuOptions { max_buffer_bytes: Some(LIMIT), device_memory_bytes: memory, poison: true, ..GpuOptions::from_env().unwrap() })
}

/// In core on chunks.
fn chunky() -> &'static Gpu {
    static GPU: OnceLock<Gpu> = OnceLock::new();
    GPU.get_or_init(|| capped(None))
}

/// A device budget below any of these volumes in core: slabs through the host.
fn streamed() -> &'static Gpu {
    static GPU: OnceLock<Gpu> = OnceLock::new();
    GPU.get_or_init(|| capped(Some(LIMIT)))
}

fn check(got: &ArrayD<f32>, want: &ArrayD<f64>, magnitude: &ArrayD<f64>, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    assert!(got.iter().all(|v| v.is_finite()), "{what}: non-finite output");
    let err: f64 = got.iter().zip(want).map(|(&g, &w)| (g as f64 - w).powi(2)).sum::<f64>().sqrt();
    let scale: f64 = magnitude.iter().map(|m| m * m).sum::<f64>().sqrt();
    assert!(err <= TOL * scale, "{what}: error {:e} relative to Σ|w||x|", err / scale);
}

// (volume, kernel): several slabs each (the first needs 3 slabs of 3 rows and more), a kernel
// longer along axis 0 than a slab's output, 1-4D, even kernel rows.
const CASES: &[(&[usize], &[usize])] = &[(&[37, 9, 11], &[5, 3, 4]), (&[4000], &[9]), (&[9, 7, 5, 6], &[4, 3, 3, 3]), (&[23, 40], &[6, 7])];

#[test]
fn slabs_match_the_reference_and_the_whole_volume() {
    for &(xd, kd) in CASES {
        let plane_bytes = xd[1..].iter().product::<usize>() as u64 * 4;
        let rows = slabs::slab_rows(xd, kd[0], LIMIT, 4).unwrap();
        assert!(rows < xd[0] && (rows + kd[0] - 1) as u64 * plane_bytes <= LIMIT, "{xd:?}: {rows} rows per slab");
        let (x, k) = (rand_array(xd), rand_array(kd));
        let (x64, k64) = (x.mapv(|v| v as f64), k.mapv(|v| v as f64));
        let (xa, ka) = (x64.mapv(f64::abs), k64.mapv(f64::abs));
        for b in BOUNDARIES {
            let magnitude = cpu::correlate(&xa, &ka, abs_boundary(b));
            let whole = slabs::correlate_host(gpu(), &x.view(), &k.view(), b).unwrap();
            for (gpu, path) in [(chunky(), "in core"), (streamed(), "through the host")] {
                let what = format!("{path} {xd:?} {kd:?} {b:?}");
                let got = slabs::correlate_host(gpu, &x.view(), &k.view(), b).unwrap();
                check(&got, &cpu::correlate(&x64, &k64, b), &magnitude, &format!("correlate {what}"));
                check(&got, &whole.mapv(|v| v as f64), &magnitude, &format!("slabs vs whole {what}"));
                let got = slabs::convolve_host(gpu, &x.view(), &k.view(), b).unwrap();
                check(&got, &cpu::convolve(&x64, &k64, b), &cpu::convolve(&xa, &ka, abs_boundary(b)), &format!("convolve {what}"));
            }
        }
    }
}

#[test]
fn separable_filters_span_chunks() {
    // Gaussians and uniform filters along every axis, one longer than axis 0 (folded onto it).
    let cases: &[(&[usize], &[f32], &[usize])] =
        &[(&[41, 7, 5], &[1.5, 0.8, 2.0], &[5, 2, 3]), (&[9, 40], &[5.0, 1.0], &[12, 3]), (&[29, 5, 3, 4], &[1.6, 0.0, 1.0, 0.7], &[4, 1, 3, 2])];
    for &(dims, sigma, size) in cases {
        let x = rand_array(dims);
        let (x64, xa) = (x.mapv(|v| v as f64), x.mapv(|v| v.abs() as f64));
        for b in BOUNDARIES {
            for passes in [gaussian_passes(sigma, dims, b).unwrap(), uniform_passes(size, dims, b).unwrap()] {
                let abs_passes: Vec<(usize, Vec<f64>)> = passes.iter().map(|(a, w)| (*a, w.iter().map(|v| v.abs()).collect())).collect();
                let (want, magnitude) = (cpu::separable(&x64, &passes, b), cpu::separable(&xa, &abs_passes, abs_boundary(b)));
                for (gpu, path) in [(chunky(), "in core"), (streamed(), "through the host")] {
                    let got = slabs::separable_host(gpu, &x.view(), &passes, b).unwrap();
                    check(&got, &want, &magnitude, &format!("{path} {dims:?} {:?} {b:?}", passes.iter().map(|p| p.1.len()).collect::<Vec<_>>()));
                }
            }
        }
    }
}

/// Uploads `x` in chunks of `rows`, runs `f` on them and downloads its chunks joined.
fn on_chunks(x: &ArrayD<f32>, rows: &[Range<usize>], f: impl FnOnce(&mut Recording, &Chunked) -> Chunked) -> ArrayD<f32> {
    let gpu = chunky();
    let mut rec = Recording::new(gpu);
    let c = chunks::place(&mut rec, &x.view(), x.shape(), &vec![0; x.ndim()], rows).unwrap();
    let y = f(&mut rec, &c);
    assert!(y.len() > 1);
    let outputs: Vec<_> = y.parts.iter().map(|&p| rec.output(p)).collect();
    let results = rec.run().unwrap();
    let arrays: Vec<GpuArray> = outputs.iter().map(|&o| results.array(o)).collect();
    GpuArray::download_joined_f32(gpu, &arrays, &y.dims).unwrap()
}

#[test]
fn recorded_passes_read_across_chunk_boundaries() {
    // The input in chunks of 7 rows (the last of 2), the output in slabs of 3 (halo 6): every
    // slab's rows and halo come from two or three input chunks.
    let dims = [37, 9, 11];
    let (x, k) = (rand_array(&dims), rand_array(&[7, 2, 3]));
    let (x64, k64) = (x.mapv(|v| v as f64), k.mapv(|v| v as f64));
    let ka = k64.mapv(f64::abs);
    for b in BOUNDARIES {
        let pass = slabs::Pass::correlate(&k.view());
        let got = on_chunks(&x, &row_ranges(37, 7), |rec, c| slabs::filter_chunks(rec, c, &pass, b, &row_ranges(37, 3)).unwrap());
        check(&got, &cpu::correlate(&x64, &k64, b), &cpu::correlate(&x64.mapv(f64::abs), &ka, abs_boundary(b)), &format!("{b:?}"));
        let passes = gaussian_passes(&[0.7, 1.0, 0.5], &dims, b).unwrap();
        let got = on_chunks(&x, &row_ranges(37, 4), |rec, c| slabs::separable_chunks(rec, c, &passes, b).unwrap());
        let abs_passes: Vec<(usize, Vec<f64>)> = passes.iter().map(|(a, w)| (*a, w.iter().map(|v| v.abs()).collect())).collect();
        check(&got, &cpu::separable(&x64, &passes, b), &cpu::separable(&x64.mapv(f64::abs), &abs_passes, abs_boundary(b)), &format!("gaussian {b:?}"));
    }
}

#[test]
fn bad_input_is_reported() {
    // Not even one slab fits: the kernel's rows of a 1000-element plane exceed 4 KiB.
    let x = rand_array(&[6, 1000]);
    let k = rand_array(&[2, 3]);
    assert!(matches!(slabs::correlate_host(chunky(), &x.view(), &k.view(), Boundary::Reflect), Err(Error::TooLarge { .. })));
    let x = rand_array(&[30, 10]);
    let mut nan = rand_array(&[3, 3]);
    nan[[2, 2]] = f32::NAN;
    assert!(matches!(slabs::correlate_host(chunky(), &x.view(), &nan.view(), Boundary::Reflect), Err(Error::NonFinite(_))));
    assert!(matches!(slabs::correlate_host(chunky(), &nan.view(), &x.view(), Boundary::Reflect), Err(Error::NonFinite(_))));
    let line = rand_array(&[3]);
    assert!(matches!(slabs::convolve_host(chunky(), &x.view(), &line.view(), Boundary::Wrap), Err(Error::Shape(_))));
    let empty = ArrayD::<f32>::zeros(IxDyn(&[0, 10]));
    assert!(matches!(slabs::convolve_host(chunky(), &empty.view(), &k.view(), Boundary::Wrap), Err(Error::Empty(_))));
}
