//! Gridding FBP (gridrec; Marone and Stampanoni 2012, tomocupy's fourierrec): each filtered
//! projection's spectrum is a line of the image's 2-D spectrum (the Fourier slice theorem); the
//! lines' samples are gathered onto an oversampled Cartesian grid with the "exponential of
//! semicircle" kernel (Barnett et al. 2019), one inverse 2-D transform makes the image, and
//! dividing by the kernel's transform undoes its taper. The result is FBP with the filtered
//! projections interpolated band-limited (sinc) rather than linearly; [`reference`] is that sum
//! computed directly, in f64. Angles equally spaced over [0, π).

use num_complex::Complex64;

use super::{cpu, padded_length, Filter, Geometry};
use crate::error::{Error, Result};
use crate::fft::{record_transform, Norm, Transform};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};
use crate::kernels::boundary::Boundary;
use crate::kernels::broadcast::{self, BroadcastOp};
use crate::kernels::{gridrec_gather, multiply_lines};
use crate::ops::layout;

/// The kernel's width in grid cells and its shape parameter (2.30 per cell at 2× oversampling:
/// about 1e-5 relative error at a width of 6).
pub const WIDTH: f64 = 6.0;
pub const BETA: f64 = 2.30 * WIDTH;

fn check(g: &Geometry) -> Result<()> {
    let even = Geometry::equally_spaced(g.angles.len());
    if g.angles.iter().zip(&even).any(|(a, b)| (a - b).abs() > 1e-9) {
        return Err(Error::Invalid("gridrec takes angles equally spaced over [0, π) (iπ/count)".into()));
    }
    Ok(())
}

/// The half-pixel offset of the image's centre from the grid's: (N − 1)/2 − ⌊N/2⌋... as
/// x = X + s, y = −R − s with X = c − ⌊N/2⌋, R = r − ⌊N/2⌋.
fn offset(n: usize) -> f64 {
    (n / 2) as f64 - (n as f64 - 1.0) / 2.0
}

/// c[a, k]: FBP's scale π/(2A), the inverse transform's 1/P, the filter, the centre's phase and
/// the half-pixel offset's, per angle and frequency (FFT order).
fn factors(g: &Geometry, filter: Filter, padded: usize) -> ndarray::Array2<Complex64> {
    let response = cpu::filter_response(filter, padded);
    let (a_count, s) = (g.angles.len(), offset(g.size));
    let scale = std::f64::consts::PI / (2.0 * a_count as f64) / padded as f64;
    ndarray::Array2::from_shape_fn((a_count, padded), |(a, k)| {
        let kk = if k < padded / 2 { k as f64 } else { k as f64 - padded as f64 };
        let h = response[kk.abs() as usize];
        let (sin, cos) = g.angles[a].sin_cos();
        let (xi_x, xi_y) = (kk / padded as f64 * cos, kk / padded as f64 * sin);
        let phase = 2.0 * std::f64::consts::PI * (kk * g.center / padded as f64 + s * (xi_x - xi_y));
        Complex64::from_polar(scale * h, phase)
    })
}

/// The kernel's transform at pixel offsets X on a grid of M (f64 quadrature).
fn taper(x: f64, m: usize) -> f64 {
    let steps = 4000;
    let h = WIDTH / steps as f64;
    (0..=steps)
        .map(|i| {
            let d = -WIDTH / 2.0 + i as f64 * h;
            let z = 2.0 * d / WIDTH;
            let phi = (BETA * ((1.0 - z * z).max(0.0).sqrt() - 1.0)).exp();
            let w = if i == 0 || i == steps {
                1.0
            } else if i % 2 == 1 {
                4.0
            } else {
                2.0
            };
            w * phi * (2.0 * std::f64::consts::PI * d * x / m as f64).cos()
        })
        .sum::<f64>()
        * h
        / 3.0
}

/// A geometry's tables on the device, made once and kept on the `Gpu` (per slice they cost
/// ~150 ms of host work at 2048²): the weights c[a, k], the angles' cos and sin, the taper's
/// reciprocal (N, N).
struct Tables {
    factors: crate::gpu::GpuArray,
    trig: crate::gpu::GpuArray,
    taper: crate::gpu::GpuArray,
}

fn tables(gpu: &crate::gpu::Gpu, g: &Geometry, filter: Filter) -> Result<std::sync::Arc<Tables>> {
    let key = format!("gridrec {} {} {} {:.12} {filter:?}", g.size, g.angles.len(), g.detectors, g.center);
    gpu.cached(&key, || {
        let (n, padded, angles) = (g.size, padded_length(g.detectors), g.angles.len());
        let f = factors(g, filter, padded).mapv(|c| num_complex::Complex32::new(c.re as f32, c.im as f32)).into_dyn();
        let trig: Vec<f32> = g.angles.iter().flat_map(|t| [t.cos() as f32, t.sin() as f32]).collect();
        let trig = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[angles, 2]), trig).expect("two per angle");
        let t: Vec<f64> = (0..n).map(|i| taper(i as f64 - (n / 2) as f64, 2 * n)).collect();
        let taper = ndarray::Array2::from_shape_fn((n, n), |(r, c)| (1.0 / (t[r] * t[c])) as f32).into_dyn();
        let bytes = (8 * angles * padded + 8 * angles + 4 * n * n) as u64;
        let tables = Tables {
            factors: crate::gpu::GpuArray::upload_c32(gpu, &f.view())?,
            trig: crate::gpu::GpuArray::upload_f32(gpu, &trig.view())?,
            taper: crate::gpu::GpuArray::upload_f32(gpu, &taper.view())?,
        };
        Ok((tables, bytes))
    })
}

/// Gridding FBP of sinograms (slices, angles, detectors): images (slices, N, N). Two slices go
/// through as one complex sinogram (the first the real part, the second the imaginary): every
/// step is linear and makes a real image of a real sinogram, so the complex image's parts are
/// the two slices.
pub fn record_fbp(rec: &mut Recording, sinograms: Buf, g: &Geometry, filter: Filter) -> Result<Buf> {
    check(g)?;
    let &[slices, angles, detectors] = rec.dims(sinograms) else {
        return Err(Error::Shape(format!("sinograms {:?}: (slices, angles, detectors)", rec.dims(sinograms))));
    };
    if angles != g.angles.len() || detectors != g.detectors {
        return Err(Error::Shape(format!("sinograms {:?} for {} angles of {} detectors", rec.dims(sinograms), g.angles.len(), g.detectors)));
    }
    let (n, padded, pairs) = (g.size, padded_length(detectors), slices.div_ceil(2));
    let m = 2 * n;
    let x = layout::pad(rec, sinograms, &[(0, 2 * pairs - slices), (0, 0), (0, padded - detectors)], Boundary::Constant(0.0))?;
    let x = rec.reinterpret(x, &[pairs, 2, angles * padded], Dtype::F32)?;
    let x = layout::permute(rec, x, &[0, 2, 1])?;
    let complex = rec.reinterpret(x, &[pairs, angles, padded], Dtype::C32)?;
    let spectra = record_transform(rec, complex, Some(&[2]), Transform::Forward, Norm::Backward)?;
    let t = tables(rec.gpu(), g, filter)?;
    let f = rec.input(&t.factors);
    let weighted = multiply_lines::record(rec, spectra, f)?;
    let trig = rec.input(&t.trig);
    let grid = gridrec_gather::record(rec, trig, weighted, m, WIDTH, BETA)?;
    let image = record_transform(rec, grid, Some(&[1, 2]), Transform::Inverse, Norm::Forward)?;
    let start = m / 2 - n / 2;
    let cropped = layout::crop(rec, image, &[0, start, start], &[pairs, n, n])?;
    let parts = rec.reinterpret(cropped, &[pairs, n * n, 2], Dtype::F32)?;
    let parts = layout::permute(rec, parts, &[0, 2, 1])?;
    let mut real = rec.reinterpret(parts, &[2 * pairs, n, n], Dtype::F32)?;
    if 2 * pairs != slices {
        real = layout::crop(rec, real, &[0, 0, 0], &[slices, n, n])?;
    }
    let taper = rec.input(&t.taper);
    broadcast::record(rec, BroadcastOp::Multiply, real, taper)
}

/// The sum gridrec approximates, directly in f64: (π / 2A) Σ_a q_a(x cos θ_a + y sin θ_a), with
/// q_a the filtered projection's band-limited interpolant (1/P) Σ_k Q_a[k] H[|k|] e^{2πi k (t +
/// centre)/P}, k over −P/2 < k < P/2. A sinogram (angles, detectors) to an image (N, N).
pub fn reference(sinogram: &ndarray::ArrayView2<f64>, g: &Geometry, filter: Filter) -> ndarray::Array2<f64> {
    let (angles, detectors) = sinogram.dim();
    let padded = padded_length(detectors);
    let response = cpu::filter_response(filter, padded);
    let mut planner = rustfft::FftPlanner::<f64>::new();
    let fft = planner.plan_fft_forward(padded);
    let spectra: Vec<Vec<Complex64>> = (0..angles)
        .map(|a| {
            let mut line: Vec<Complex64> = (0..padded).map(|j| Complex64::new(if j < detectors { sinogram[(a, j)] } else { 0.0 }, 0.0)).collect();
            fft.process(&mut line);
            line
        })
        .collect();
    let n = g.size;
    ndarray::Array2::from_shape_fn((n, n), |(r, c)| {
        let (x, y) = g.pixel_centre(r, c);
        let mut sum = 0.0;
        for (a, spectrum) in spectra.iter().enumerate() {
            let t = x * g.angles[a].cos() + y * g.angles[a].sin();
            // The Nyquist bin (no partner: see gridrec_gather.wgsl) left out.
            for (k, q) in spectrum.iter().enumerate().filter(|&(k, _)| k != padded / 2) {
                let kk = if k < padded / 2 { k as f64 } else { k as f64 - padded as f64 };
                let h = response[kk.abs() as usize];
                let e = Complex64::from_polar(1.0, 2.0 * std::f64::consts::PI * kk * (t + g.center) / padded as f64);
                sum += (q * h * e).re;
            }
        }
        sum * std::f64::consts::PI / (2.0 * angles as f64) / padded as f64
    })
}
