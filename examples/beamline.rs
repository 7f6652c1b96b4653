//! The beamline pipeline: a synthetic scan of raw 16-bit counts with flat and dark fields and
//! detector columns whose gain the flats miss (rings), reconstructed slice by slice with
//! TomoPy's preprocessing on the GPU: without ring removal and with Vo's sorting method, each
//! volume's error against the phantom printed, the rotation centre found by Vo's method. "Rings left" is the distance to the reconstruction of the same
//! scan without the gain errors.
//!
//! ```sh
//! cargo run --release --example beamline
//! ```

use lucent::phantom::shepp_logan;
use lucent::tomography::{radon, reconstruct_array, ArrayScan, Center, Geometry, ReconstructOptions, Samples, Stripe};
use ndarray::{Array3, Axis};

fn main() -> Result<(), lucent::Error> {
    let gpu = lucent::Gpu::new()?;
    let (n, angles, rows) = (256, 384, 4);
    // Each detector row sees the phantom (line integrals up to ~2); every 37th column's gain
    // is off by 3%.
    // Seen through a detector of finite resolution: edges a pixel or two wide.
    let sharp = shepp_logan::image(n).mapv(|v| (v * 4.0 / n as f64) as f32);
    let phantom = lucent::ndimage::gaussian_filter(&gpu, &sharp, &[1.5, 1.5], lucent::ndimage::Boundary::Nearest)?;
    let sinogram = radon(&gpu, &phantom, &Geometry::new(n, Geometry::equally_spaced(angles), None, None)?)?;
    let counts = |gain: &dyn Fn(usize) -> f64| {
        Array3::from_shape_fn((angles, rows, n), |(a, _, c)| (20000.0 * gain(c) * (-sinogram[[a, c]] as f64).exp() + 100.0).round() as u16)
    };
    let flat = Array3::from_elem((5, rows, n), 20100u16);
    let dark = Array3::from_elem((3, rows, n), 100u16);
    let scan = |data| ArrayScan::new(Samples::U16(data), Some(Samples::U16(flat.clone())), Some(Samples::U16(dark.clone())), None);
    let ringed = scan(counts(&|c| if c % 37 == 5 { 1.03 } else { 1.0 }))?;
    // The same scan without the gain errors: what the ring removal should come close to.
    let at = |stripe| ReconstructOptions { stripe, center: Center::Auto, ..ReconstructOptions::default() };
    let clean = reconstruct_array(&gpu, &scan(counts(&|_| 1.0))?, &at(Stripe::None), &mut |_| {})?.0;
    let norm = clean.mapv(|v| (v as f64).powi(2)).sum().sqrt();
    let truth = phantom.mapv(f64::from);
    // (Vo's large-stripe method and Münch's Fourier-wavelet one, for wide or strong stripes,
    // take more of this object than its narrow rings weigh.)
    for (name, stripe) in [("no ring removal", Stripe::None), ("sorting (Vo)", Stripe::Sorting { size: 5, dim: 1 })] {
        let (volume, report) = reconstruct_array(&gpu, &ringed, &at(stripe), &mut |_| {})?;
        let rings = (&volume - &clean).mapv(|d| (d as f64).powi(2)).sum().sqrt() / norm;
        let slice = volume.index_axis(Axis(0), 1).mapv(f64::from);
        let error = ((&slice - &truth).mapv(|d| d * d).sum() / truth.mapv(|t| t * t).sum()).sqrt();
        println!("{name:24} centre {:.2}, rings left {rings:.4}, error to the phantom {error:.4}, {:.0} ms on the device", report.center, report.device_ms);
    }
    Ok(())
}
