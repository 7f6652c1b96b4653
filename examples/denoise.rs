//! Denoising a noisy moving edge (16 frames of 32×48×48, σ = 0.25): true 4D adaptive filtering
//! over 3 axes (each frame alone) and over all 4 together, and block matching (BM4D) frame by
//! frame and across neighbouring frames, with the PSNR of each.
//!
//! ```sh
//! cargo run --release --example denoise
//! ```

use lucent::denoise::{adaptive_filter, bm4d, Bm4dNoise, Bm4dProfile, Bm4dStage, Options};
use lucent::phantom::dynamic;

fn main() -> Result<(), lucent::Error> {
    let gpu = lucent::Gpu::new()?;
    let clean = dynamic::moving_edge([16, 32, 48, 48], 0.5);
    let noisy = dynamic::noisy(&clean, 0.25, 1).mapv(|v| v as f32);
    let psnr = |x: &ndarray::Array4<f32>| dynamic::psnr(&x.mapv(f64::from).into_dyn().view(), &clean.view().into_dyn());
    println!("noisy: {:.2} dB", psnr(&noisy));
    for dims in [3, 4] {
        let denoised = adaptive_filter(&gpu, &noisy, &Options { dims: Some(dims), ..Options::default() })?;
        println!("adaptive filtering over {dims} axes: {:.2} dB", psnr(&denoised));
    }
    // Block matching with the noise's σ known: groups from each frame alone, then from the
    // frames either side too.
    for time_window in [0, 1] {
        let profile = Bm4dProfile { search_window_time: time_window, ..Bm4dProfile::volume() };
        let denoised = bm4d(&gpu, &noisy, &Bm4dNoise::Sigma(0.25), Some(&profile), Bm4dStage::All)?;
        println!("block matching, ±{time_window} frames: {:.2} dB", psnr(&denoised));
    }
    Ok(())
}
