//! scipy.ndimage on the GPU: Gaussian and uniform filters of a volume, with scipy's boundary modes.
//!
//! ```sh
//! cargo run --release --example filter
//! ```

use lucent::ndimage::{gaussian_filter, uniform_filter, Boundary};
use ndarray::Array3;

fn main() -> Result<(), lucent::Error> {
    let gpu = lucent::Gpu::new()?;
    let volume = Array3::from_shape_fn((40, 128, 160), |(z, y, x)| ((x ^ y ^ z) & 1) as f32);
    let smooth = gaussian_filter(&gpu, &volume, &[1.0, 2.0, 2.0], Boundary::Reflect)?;
    let mean = uniform_filter(&gpu, &volume, &[3], Boundary::Constant(0.0))?;
    let range = |a: &Array3<f32>| a.iter().fold((f32::MAX, f32::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    println!("checkerboard {:?}: values {:?}", volume.dim(), range(&volume));
    println!("gaussian_filter σ (1, 2, 2), reflect: values {:?}", range(&smooth));
    println!("uniform_filter 3³, constant 0: values {:?}", range(&mean));
    Ok(())
}
