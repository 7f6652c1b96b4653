//! True 4D adaptive filtering: a noisy moving edge (16 frames of 32×48×48, σ = 0.25) denoised
//! over 3 axes (each frame alone) and over all 4 together, with the PSNR of each.
//!
//! ```sh
//! cargo run --release --example denoise
//! ```

use lucent::denoise::{adaptive_filter, Options};
use lucent::phantom::dynamic;

fn main() -> Result<(), lucent::Error> {
    let gpu = lucent::Gpu::new()?;
    let clean = dynamic::moving_edge([16, 32, 48, 48], 0.5);
    let noisy = dynamic::noisy(&clean, 0.25, 1).mapv(|v| v as f32);
    let psnr = |x: &ndarray::Array4<f32>| dynamic::psnr(&x.mapv(f64::from).into_dyn().view(), &clean.view().into_dyn());
    println!("noisy: {:.2} dB", psnr(&noisy));
    for dims in [3, 4] {
        let denoised = adaptive_filter(&gpu, &noisy, &Options { dims: Some(dims), ..Options::default() })?;
        println!("denoised over {dims} axes: {:.2} dB", psnr(&denoised));
    }
    Ok(())
}
