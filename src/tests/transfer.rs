//! Host-device transfers in many staging pieces (a piece of a few KiB instead of 128 MiB): uploads
//! through `GpuArray::upload_f32` and a recording's upload, read back whole, as a cropped window
//! and joined from chunks, all bit-exact; a size that is no multiple of the piece; strided views.

use crate::tests::common;
use common::*;

use lucent::gpu::GpuOptions;
use lucent::{Gpu, GpuArray, Recording};
use ndarray::{ArrayD, Axis, IxDyn, Slice};

fn small_pieces() -> Gpu {
    open(GpuOptions { stream_piece_bytes: 4096 + 12, ..GpuOptions::from_env().unwrap() })
}

#[test]
fn uploads_and_downloads_in_many_pieces_are_exact() {
    let gpu = small_pieces();
    let dims = [37, 29, 23]; // 98 KB: 24 pieces, the last one short
    let a = ArrayD::from_shape_vec(IxDyn(&dims), random(dims.iter().product())).unwrap();
    let up = GpuArray::upload_f32(&gpu, &a.view()).unwrap();
    assert_eq!(up.download_f32(&gpu).unwrap(), a);
    let mut window = vec![f32::NAN; 20 * 7 * 11];
    GpuArray::download_window_into_f32(&gpu, std::slice::from_ref(&up), &[5, 3, 9], &[20, 7, 11], &mut window).unwrap();
    let want = a.slice_axis(Axis(0), Slice::from(5..25)).slice_axis(Axis(1), Slice::from(3..10)).slice_axis(Axis(2), Slice::from(9..20)).to_owned();
    assert_eq!(window, want.iter().copied().collect::<Vec<_>>());

    // A recording's upload, doubled on the device, downloaded.
    let mut rec = Recording::new(&gpu);
    let x = rec.upload_f32(&a.view()).unwrap();
    let y = lucent::kernels::binary::record(&mut rec, lucent::kernels::binary::BinaryOp::Add, x, x).unwrap();
    let d = rec.download(y);
    let got = rec.run().unwrap().into_f32(d).unwrap();
    assert_eq!(got, a.mapv(|v| v + v));

    // Chunks joined on the way back.
    let (top, bottom) = (a.slice_axis(Axis(0), Slice::from(..17)), a.slice_axis(Axis(0), Slice::from(17..)));
    let chunks = [GpuArray::upload_f32(&gpu, &top).unwrap(), GpuArray::upload_f32(&gpu, &bottom).unwrap()];
    assert_eq!(GpuArray::download_joined_f32(&gpu, &chunks, &dims).unwrap(), a);
}

/// Views that are not contiguous (a window, a transpose, a reversed step, complex values) go up
/// in row-major order, bit-exact.
#[test]
fn strided_views_upload_in_row_major_order() {
    let gpu = gpu();
    let dims = [13, 17, 11];
    let a = ArrayD::from_shape_vec(IxDyn(&dims), random(dims.iter().product())).unwrap();
    let window = a.slice_axis(Axis(1), Slice::from(2..15));
    let transposed = a.view().permuted_axes(IxDyn(&[2, 0, 1]));
    let stepped = a.slice_axis(Axis(2), Slice::new(0, None, -3));
    for (what, v) in [("window", window), ("transpose", transposed), ("reversed step", stepped)] {
        assert!(v.as_slice().is_none(), "{what} is a strided view");
        let got = GpuArray::upload_f32(gpu, &v).unwrap().download_f32(gpu).unwrap();
        assert_eq!(got, v.to_owned(), "{what}");
    }
    let z = a.mapv(|v| num_complex::Complex32::new(v, -2.0 * v));
    let zt = z.view().permuted_axes(IxDyn(&[1, 2, 0]));
    assert_eq!(GpuArray::upload_c32(gpu, &zt).unwrap().download_c32(gpu).unwrap(), zt.to_owned());
}
