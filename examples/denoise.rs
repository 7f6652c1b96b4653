//! Denoising a noisy moving edge (16 frames of 32×48×48, σ = 0.25): true 4D adaptive filtering
//! over 3 axes (each frame alone) and over all 4 together, and block matching (BM4D) frame by
//! frame and across neighbouring frames, with the PSNR of each; then one frame with noise
//! correlated along x, denoised with its power spectral density and as if it were white.
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
    // Correlated noise: the first frame's white noise through [1, 0.8] along x (circularly), and
    // its PSD in bm4d's convention (N · σ² · |DFT of the filter|², here in closed form).
    let frame = clean.index_axis(ndarray::Axis(0), 0).to_owned();
    let white = dynamic::noisy(&clean, 0.2, 2).index_axis(ndarray::Axis(0), 0).to_owned() - &frame;
    let n = frame.dim().2;
    let noise = ndarray::Array3::from_shape_fn(frame.dim(), |(z, y, x)| white[[z, y, x]] + 0.8 * white[[z, y, (x + n - 1) % n]]);
    let noisy = (&frame + &noise).mapv(|v| v as f32);
    let size = frame.len() as f64;
    let psd = ndarray::Array3::from_shape_fn(frame.dim(), |(_, _, f)| {
        let w = 2.0 * std::f64::consts::PI * f as f64 / n as f64;
        (size * 0.04 * (1.64 + 1.6 * w.cos())) as f32
    });
    let psnr3 = |x: &ndarray::Array3<f32>| dynamic::psnr(&x.mapv(f64::from).into_dyn().view(), &frame.view().into_dyn());
    let std = (noise.iter().map(|v| v * v).sum::<f64>() / size).sqrt();
    let with_psd = bm4d(&gpu, &noisy, &Bm4dNoise::Psd(psd.view().into_dyn()), None, Bm4dStage::All)?;
    let as_white = bm4d(&gpu, &noisy, &Bm4dNoise::Sigma(std), None, Bm4dStage::All)?;
    println!("correlated noise: {:.2} dB noisy, block matching with its PSD {:.2} dB, as white {:.2} dB", psnr3(&noisy), psnr3(&with_psd), psnr3(&as_white));
    Ok(())
}
