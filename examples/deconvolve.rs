//! Richardson-Lucy in one call: a synthetic 3D specimen blurred by a Gaussian PSF, restored.
//!
//! ```sh
//! cargo run --release --example deconvolve
//! ```

use lucent::restoration::{richardson_lucy, RlOptions};
use ndarray::Array3;

fn main() -> Result<(), lucent::Error> {
    let gpu = lucent::Gpu::new()?;
    // Three beads in a 32×96×96 volume, blurred by a Gaussian PSF (σ 2 along z, 1.5 in y and x).
    let mut truth = Array3::<f32>::from_elem((32, 96, 96), 0.05);
    for &(z, y, x) in &[(10, 30, 30), (16, 48, 60), (22, 70, 40)] {
        truth[[z, y, x]] = 100.0;
    }
    let psf = Array3::from_shape_fn((9, 11, 11), |(z, y, x)| {
        let (z, y, x) = (z as f32 - 4.0, y as f32 - 5.0, x as f32 - 5.0);
        (-(z * z) / 8.0 - (y * y + x * x) / 4.5).exp()
    });
    let blurred = lucent::signal::fftconvolve(&gpu, &truth, &(&psf / psf.sum()), lucent::signal::Mode::Same)?;

    let restored = richardson_lucy(&gpu, &blurred, &psf, 30, &RlOptions::default())?;
    let peak = |a: &Array3<f32>| a.iter().copied().fold(f32::MIN, f32::max);
    println!("bead peak: truth {:.1}, blurred {:.1}, restored after 30 iterations {:.1}", peak(&truth), peak(&blurred), peak(&restored));
    Ok(())
}
