//! numpy.fft on the GPU: the spectrum of a 2D signal, its peak, and the way back.
//!
//! ```sh
//! cargo run --release --example fft
//! ```

use lucent::fft::{irfftn, rfftn, Norm};
use ndarray::Array2;

fn main() -> Result<(), lucent::Error> {
    let gpu = lucent::Gpu::new()?;
    // A plane wave with 5 cycles along y and 12 along x over a 480×640 image.
    let (ny, nx) = (480, 640);
    let image = Array2::from_shape_fn((ny, nx), |(y, x)| (2.0 * std::f32::consts::PI * (5.0 * y as f32 / ny as f32 + 12.0 * x as f32 / nx as f32)).cos());
    let spectrum = rfftn(&gpu, &image, None, Norm::Backward)?; // shape (480, 321), like numpy
    let (peak, _) = spectrum.indexed_iter().max_by(|a, b| a.1.norm().total_cmp(&b.1.norm())).unwrap();
    println!("rfftn {:?} -> {:?}; strongest frequency (ky, kx) = {peak:?}", image.dim(), spectrum.dim());

    let back = irfftn(&gpu, &spectrum, None, Some(nx), Norm::Backward)?;
    let err = (&back - &image).iter().fold(0f32, |m, d| m.max(d.abs()));
    println!("irfftn round trip: max error {err:.1e}");
    Ok(())
}
