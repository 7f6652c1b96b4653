//! Arrays held in chunks along axis 0 (`graph::Chunked`): placing a host array into a larger
//! chunked one, cropping a window across chunk boundaries, and streaming chunks back whole or
//! cropped on the host. Buffers are capped at 4 KiB, so the arrays span many chunks and the
//! downloads many staging pieces (two staging buffers used in turn). Copies only: every result
//! equals the ndarray reference bit for bit. Fresh random inputs; temporaries poisoned.

use crate::tests::common;
use common::*;

use lucent::gpu::GpuOptions;
use lucent::graph::{row_ranges, Recording};
use lucent::ops::layout::{chunks, cpu};
use lucent::{Gpu, GpuArray};
use ndarray::{s, ArrayD, Axis, IxDyn, Slice};

const LIMIT: u64 = 4096;

fn capped() -> Gpu {
    open(GpuOptions { max_buffer_bytes: Some(LIMIT), poison: true, ..GpuOptions::from_env().unwrap() })
}

#[test]
fn chunks_place_crop_and_stream_back() {
    let gpu = capped();
    // (array, padded shape, offset, rows per chunk): prime and odd sizes, chunk edges inside
    // the data and inside the padding, 1-4 axes.
    type Case<'a> = (&'a [usize], &'a [usize], &'a [usize], usize);
    let cases: &[Case] = &[
        (&[29, 7, 5], &[37, 11, 6], &[3, 2, 1], 5),
        (&[1999], &[2003], &[3], 389),
        (&[5, 4, 3, 7], &[11, 5, 3, 8], &[5, 1, 0, 1], 2),
        (&[13, 17], &[13, 19], &[0, 1], 3),
    ];
    for &(dims, padded, offset, per_chunk) in cases {
        let x = rand_array(dims);
        let mut want = ArrayD::<f32>::zeros(IxDyn(padded));
        want.slice_each_axis_mut(|a| Slice::from(offset[a.axis.index()]..offset[a.axis.index()] + dims[a.axis.index()])).assign(&x);
        let rows = row_ranges(padded[0], per_chunk);
        let mut rec = Recording::new(&gpu);
        let placed = chunks::place(&mut rec, &x.view(), padded, offset, &rows).unwrap();
        assert_eq!(placed.len(), rows.len());
        // A window across chunk boundaries: from the middle of the first chunk to the last row.
        let start: Vec<usize> = padded.iter().map(|&n| n / 3).collect();
        let size: Vec<usize> = padded.iter().zip(&start).map(|(&n, &s)| n - s).collect();
        let cropped = chunks::crop(&mut rec, &placed, &start, &size).unwrap();
        let (placed_out, cropped_out): (Vec<_>, Vec<_>) =
            (placed.parts.iter().map(|&p| rec.output(p)).collect(), cropped.parts.iter().map(|&p| rec.output(p)).collect());
        let results = rec.run().unwrap();
        let placed: Vec<GpuArray> = placed_out.iter().map(|&o| results.array(o)).collect();
        let cropped: Vec<GpuArray> = cropped_out.iter().map(|&o| results.array(o)).collect();
        let what = format!("{dims:?} in {padded:?} at {offset:?}, chunks of {per_chunk}");
        assert_eq!(GpuArray::download_joined_f32(&gpu, &placed, padded).unwrap(), want, "joined {what}");
        let window = cpu::crop(&want, &start, &size);
        assert_eq!(GpuArray::download_joined_f32(&gpu, &cropped, &size).unwrap(), window, "cropped on the device {what}");
        assert_eq!(GpuArray::download_window_f32(&gpu, &placed, &start, &size).unwrap(), window, "cropped on the host {what}");
        // The data's own window, which the FFT convolution and RL return.
        assert_eq!(GpuArray::download_window_f32(&gpu, &placed, offset, dims).unwrap(), x, "the data back {what}");
    }
}

#[test]
fn windows_outside_the_chunks_are_refused() {
    let gpu = capped();
    let x = rand_array(&[12, 9]);
    let parts: Vec<GpuArray> =
        row_ranges(12, 5).into_iter().map(|r| GpuArray::upload_f32(&gpu, &x.slice_axis(Axis(0), Slice::from(r)).into_dyn()).unwrap()).collect();
    assert!(GpuArray::download_window_f32(&gpu, &parts, &[3, 2], &[10, 2]).is_err());
    assert!(GpuArray::download_window_f32(&gpu, &parts, &[0, 8], &[1, 2]).is_err());
    assert!(GpuArray::download_window_f32(&gpu, &parts, &[0], &[12]).is_err());
    assert_eq!(GpuArray::download_window_f32(&gpu, &parts, &[11, 0], &[1, 9]).unwrap(), x.slice(s![11..12, ..]).into_dyn());
}
