//! The denoising panel of `lucent demo`: the moving-edge series (an intensity ramp, a step
//! moving half a voxel per frame, a thin tube) with Gaussian noise, denoised over 3 axes (each
//! frame alone) and over all 4 together, with the PSNR of each.

use std::path::Path;
use std::time::Instant;

use lucent::denoise::Options;
use lucent::phantom::dynamic;
use lucent::{io, Error, Gpu};
use ndarray::{s, Array2, ArrayD};
use serde_json::{json, Value};

use crate::report::ms_since;

/// The series' shape (t, z, y, x), the noise and the edge's speed (voxels per frame).
const SHAPE: [usize; 4] = [16, 32, 48, 48];
const SIGMA: f64 = 0.25;
const SPEED: f64 = 0.5;

/// Denoises the series both ways, writes the panel into `dir` and returns the report's section.
pub fn run(gpu: Option<&Gpu>, dir: &Path, seed: u64) -> Result<Value, Error> {
    let start = Instant::now();
    let clean = dynamic::moving_edge(SHAPE, SPEED);
    let noisy = dynamic::noisy(&clean, SIGMA, seed ^ 0xDE_0153).mapv(|v| v as f32).into_dyn();
    let clean = clean.into_dyn();
    let mut denoised = Vec::new();
    let mut times = Vec::new();
    for dims in [3, 4] {
        let o = Options { dims: Some(dims), ..Options::default() };
        let t = Instant::now();
        let y = match gpu {
            Some(gpu) => lucent::denoise::adaptive_filter(gpu, &noisy, &o)?,
            None => lucent::denoise::cpu::adaptive_filter(&noisy.mapv(f64::from), &o)?.mapv(|v| v as f32),
        };
        times.push(ms_since(t));
        denoised.push(y);
    }
    let psnr = |x: &ArrayD<f32>| dynamic::psnr(&x.mapv(f64::from).view(), &clean.view());
    let slice = |x: &ArrayD<f32>| -> Array2<f32> { x.slice(s![SHAPE[0] / 2, SHAPE[1] / 2, .., ..]).to_owned() };
    let clean32 = clean.mapv(|v| v as f32);
    let panel = crate::demo::montage(&[slice(&noisy), slice(&denoised[0]), slice(&denoised[1]), slice(&clean32)]);
    let mut files = vec!["denoise.png".to_string()];
    io::write_real(dir.join("denoise.png"), &panel.into_dyn().view())?;
    for (name, x) in [("series_noisy.npy", &noisy), ("series_denoised_3d.npy", &denoised[0]), ("series_denoised_4d.npy", &denoised[1])] {
        io::write_real(dir.join(name), &x.view())?;
        files.push(name.to_string());
    }
    Ok(json!({
        "shape": SHAPE,
        "sigma": SIGMA,
        "speed_voxels_per_frame": SPEED,
        "psnr_db": { "noisy": psnr(&noisy), "denoised_3d": psnr(&denoised[0]), "denoised_4d": psnr(&denoised[1]) },
        "ms": { "total": ms_since(start), "denoise_3d": times[0], "denoise_4d": times[1] },
        "files": files,
        "panels": "denoise.png: the middle slice of the middle frame, noisy | denoised over 3 axes | over 4 axes | clean",
    }))
}
