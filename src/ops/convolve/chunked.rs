//! The FFT convolution of host arrays whose padded arrays exceed one buffer but fit the device:
//! every array in chunks along axis 0, the transforms across chunks on the device
//! ([`ChunkedFft`]), the result the whole-array computation's (no parts folded on the host).

use ndarray::{ArrayD, ArrayViewD, IxDyn};

use super::{cpu, Geometry, Mode};
use crate::error::{Error, Result};
use crate::fft::plan::smooth_at_least;
use crate::fft::{first_fitting, least_chunks, real_and_spectrum_bytes, ChunkedFft, Norm, Transform};
use crate::gpu::{Gpu, GpuArray};
use crate::graph::{row_ranges, Output, Recording};
use crate::ops::layout::chunks;

/// scipy.signal.fftconvolve(a, k, mode) (or the correlation) with the arrays in the fewest
/// chunks the device's buffers allow; returns the result and the chunk count. `TooLarge` when
/// the arrays do not fit the device's memory (or a 1D array, whose only axis is the real one).
pub fn convolve(gpu: &Gpu, a: &ArrayViewD<f32>, k: &ArrayViewD<f32>, mode: Mode, correlate: bool) -> Result<(ArrayD<f32>, usize)> {
    let g = Geometry::new(a.shape(), k.shape(), mode)?;
    let kernel = if correlate { cpu::reverse(&k.to_owned()) } else { k.to_owned() };
    let mut y = ArrayD::from_shape_vec(IxDyn(&g.out), crate::host::zeroed_vec(g.out.iter().product())).expect("the output's size");
    let chunks = convolve_into(gpu, a, &kernel.view(), &g, y.as_slice_mut().expect("a new array"))?;
    Ok((y, chunks))
}

/// The window `g` describes ([`Geometry::window`]) of the convolution of `a` with `k`, in
/// chunks, written into `out` (its size); returns the chunk count.
pub fn convolve_into(gpu: &Gpu, a: &ArrayViewD<f32>, k: &ArrayViewD<f32>, g: &Geometry, out: &mut [f32]) -> Result<usize> {
    if g.padded.len() == 1 {
        return Err(Error::TooLarge { what: format!("a 1D convolution of {:?} in chunks", g.image), bytes: 0, limit: 0 });
    }
    // (One chunk is the whole path, tried before this one.)
    first_fitting(gpu, least_chunks(gpu, &g.padded).max(2), |parts| in_chunks(gpu, a, k, g, parts, out).map(|()| parts))
}

fn in_chunks(gpu: &Gpu, a: &ArrayViewD<f32>, k: &ArrayViewD<f32>, g: &Geometry, parts: usize, out: &mut [f32]) -> Result<()> {
    let rows_per = smooth_at_least(g.least_len(0).div_ceil(parts));
    let mut padded = g.padded.clone();
    padded[0] = rows_per * parts;
    check_memory(gpu, &padded, g)?;
    let rows = row_ranges(padded[0], rows_per);
    let axes: Vec<usize> = (0..padded.len()).collect();
    let forward = ChunkedFft::new(gpu, &padded, &axes, Transform::RealForward, Norm::Backward, &rows)?;
    let len = *padded.last().unwrap();
    let inverse =
        ChunkedFft::inverse_of_product(gpu, forward.output_dims(), &axes, Transform::RealInverse { len }, Norm::Backward, forward.output_rows(), false)?;

    let mut rec = Recording::new(gpu);
    let origin = vec![0; padded.len()];
    let x = chunks::place(&mut rec, a, &padded, &origin, &rows)?;
    let h = chunks::place(&mut rec, k, &padded, &origin, &rows)?;
    let (sx, sh) = (forward.record(&mut rec, &x)?, forward.record(&mut rec, &h)?);
    let y = inverse.record_with(&mut rec, &sx, &sh)?;
    let outputs: Vec<Output> = y.parts.iter().map(|&p| rec.output(p)).collect();
    let results = rec.run()?;
    let arrays: Vec<GpuArray> = outputs.iter().map(|&o| results.array(o)).collect();
    GpuArray::download_window_into_f32(gpu, &arrays, &g.start, &g.out, out)
}

/// `TooLarge` beyond the device memory budget: the two padded inputs, their spectra, the
/// product's inverse and the window, counted before anything is allocated.
fn check_memory(gpu: &Gpu, padded: &[usize], g: &Geometry) -> Result<()> {
    let needed = bytes_in_core(padded);
    let budget = gpu.memory_budget_bytes();
    if needed > budget {
        let what =
            format!("the convolution of {:?} with {:?} in core (padded {padded:?}; device memory budget, LUCENT_DEVICE_MEMORY_BYTES)", g.image, g.kernel);
        return Err(Error::TooLarge { what, bytes: needed, limit: budget });
    }
    Ok(())
}

/// Device memory an in-core convolution at FFT lengths `padded` holds at most.
pub fn bytes_in_core(padded: &[usize]) -> u64 {
    let (real, complex) = real_and_spectrum_bytes(padded);
    real.saturating_add(complex).saturating_mul(3)
}
